"""Tiers and reinforcement: hot/warm/cold follow an item's age and use; a read that counts as a use re-heats it.

In: a connection, the scope keys read, the clock. `refresh` re-derives the tiers that can have changed since the
last refresh (`items.derive_state` is the rule); `reinforce` books a use of what an agent-facing surface showed.
Writes of `reinforce` run inside the caller's `store.transaction`; `refresh` opens its own.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

from cortex_engine.base.clock import iso, parse_iso
from cortex_engine.memory.items import ACCESS_STEPS, AGE_STEPS, ItemFacts, derive_state
from cortex_engine.store import queries
from cortex_engine.store.database import in_scopes, transaction

REFRESH_SECONDS = 600
"""Within this many seconds of the last refresh of a scope, a refresh does nothing unless forced."""
BACKFILL_ITEMS = 2000
"""Rows past the last one derived that a refresh takes: new items, or an older store catching up."""
CHUNK = 500
"""Ids bound per `IN (...)` list: well under SQLite's variable limit."""

_ITEM_COLUMNS = "SELECT id, kind, text, state, importance, access_count, last_accessed_at, created_at FROM scoped_items"


class Shown(Protocol):
    """What `reinforce` reads of an item a surface showed (`query.surfaces.SurfaceItem` is one)."""

    @property
    def id(self) -> str: ...  # noqa: D102

    @property
    def labels(self) -> tuple[str, ...]: ...  # noqa: D102


def _facts(row: sqlite3.Row) -> ItemFacts:
    return ItemFacts(
        row["kind"],
        row["text"],
        row["state"],
        row["importance"],
        row["access_count"],
        row["last_accessed_at"],
        row["created_at"],
    )


def refresh(conn: sqlite3.Connection, scope_key: str, scope_keys: Sequence[str], now: datetime, *, force: bool) -> int:
    """Re-derive hot/warm/cold for every item of `scope_keys` whose tier can have changed; returns how many did.

    A tier is a function of an item's columns and the clock, and the clock alone changes it only when the item's
    age or time since last access crosses a step of `hotness` (AGE_STEPS, ACCESS_STEPS). So a refresh re-derives
    the items whose age or last access (the retrieval log records every read that reinforces) crossed a step since
    the last refresh, plus up to BACKFILL_ITEMS rows past the last rowid it derived: items written since, and
    on a store older than this rule all of them over a few refreshes. Tiers follow the data, not which items
    happened to be the newest 500 when a refresh ran. The bookkeeping is kept per `scope_key` (the reader's own).
    Within REFRESH_SECONDS of the last refresh nothing runs unless `force`.
    """
    keys = list(scope_keys)
    key, backfill_key = f"tiers_derived:{scope_key}", f"tiers_backfill:{scope_key}"
    stored = dict(conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (key, backfill_key)).fetchall())
    last = parse_iso(stored[key]) if key in stored else None
    if not force and last is not None and 0 <= (now - last).total_seconds() < REFRESH_SECONDS:
        return 0
    in_mine = in_scopes(len(keys))
    ids: set[str] = set()
    if last is not None and last <= now:
        for days in AGE_STEPS:
            window = (iso(last - timedelta(days=days)), iso(now - timedelta(days=days)))
            ids.update(
                r[0]
                for r in conn.execute(
                    f"SELECT id FROM memory_items WHERE {in_mine} AND created_at > ? AND created_at <= ?",
                    (*keys, *window),
                )
            )
        for days in ACCESS_STEPS:
            window = (iso(last - timedelta(days=days)), iso(now - timedelta(days=days)))
            for (shown,) in conn.execute(
                "SELECT result_ids_json FROM retrieval_log WHERE created_at > ? AND created_at <= ?", window
            ):
                ids.update(i for i in json.loads(shown) if isinstance(i, str))
    cursor = int(stored.get(backfill_key, 0))
    walked = [
        r[0]
        for r in conn.execute(
            f"SELECT rowid FROM memory_items WHERE {in_mine} AND rowid > ? ORDER BY rowid LIMIT ?",
            (*keys, cursor, BACKFILL_ITEMS),
        )
    ]
    wanted = sorted(ids)
    rows = [
        row
        for start in range(0, len(wanted), CHUNK)
        for row in conn.execute(
            f"{_ITEM_COLUMNS} WHERE id IN ({','.join('?' * len(wanted[start : start + CHUNK]))}) AND {in_mine}",
            (*wanted[start : start + CHUNK], *keys),
        )
    ]
    if walked:
        rows += conn.execute(
            f"{_ITEM_COLUMNS} WHERE {in_mine} AND rowid > ? AND rowid <= ?", (*keys, cursor, walked[-1])
        ).fetchall()
    changes = {row["id"]: new for row in rows if (new := derive_state(_facts(row), now)) != row["state"]}
    with transaction(conn):
        if changes:
            queries.set_item_states(conn, [(v, k) for k, v in changes.items()])
        queries.set_meta(conn, key, iso(now))
        queries.set_meta(conn, backfill_key, str(walked[-1] if walked else cursor))
    return len(changes)


def reinforce(conn: sqlite3.Connection, items: Sequence[Shown], now: str) -> None:
    """Reads reinforce: access count, last access, and the tier the read earns — for live items only.

    What counts as a use (README "What counts as a use"): an agent-facing surface that was injected (the
    recall, brief and state an agent asked for). A person looking (`--peek`, `session-brief`, the TUI) is
    not a use. Being shown is never a use of a superseded, resolved or stale item (a missing reference,
    as judged for the surface just shown): its access count, last access and tier stay as they were, so a
    read can never re-heat what the surface itself marks as no longer holding.
    """
    if not items:
        return
    marks = ",".join("?" * len(items))
    # A note's status is read from the notes table, never from its text: content may say "status: resolved".
    rows = {
        r["id"]: r
        for r in conn.execute(
            f"SELECT m.id, m.state, n.status AS note_status FROM memory_items m "
            f"LEFT JOIN notes n ON m.source_table='notes' AND n.id=m.source_id WHERE m.id IN ({marks})",
            [i.id for i in items],
        )
    }
    updates = []
    for item in items:
        row = rows.get(item.id)
        if row is None:
            continue
        stale = any(label.startswith("stale:") for label in item.labels)
        if stale or row["note_status"] in ("superseded", "resolved"):
            continue
        state = row["state"] if row["state"] in ("pinned", "archived") else "hot"
        updates.append((now, state, item.id))
    conn.executemany(
        "UPDATE memory_items SET access_count=access_count+1, last_accessed_at=?, state=? WHERE id=?", updates
    )
