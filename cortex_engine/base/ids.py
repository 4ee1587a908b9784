"""Ids: making new ones, and reading the ones people type.

New ids are random RFC 4122 version-4 UUIDs made without the `uuid` module (it imports `platform` at import
time, a cost every one-shot command and hook would pay for one call to `uuid4`); `seeded` makes them
deterministic for a while (the demo and the TUI snapshots), in this one place.

Typed ids are a full id, a memory-item id (`notes:<id>`), or a unique prefix of at least 8 characters: the
one place every id-taking command (CLI, MCP, TUI) turns what it was given into a stored id, so a prefix that
the TUI shows (8 characters) works everywhere and an ambiguous one is refused the same way everywhere.

A memory item is read and typed by its handle (`item_handle`): a note's or a command run's own id, else (an
episode, whose id repeats its command run's or its session's, a branch snapshot, keyed by its scope) a hex digest
of the item id. Handles are shown abbreviated like git's (`abbreviate`): 8 characters, more where another item's
handle shares them, so every id shown is one `resolve_item` takes back to the one item.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from cortex_engine.base.errors import InvalidInput

_draw: Callable[[], bytes] | None = None  # a seeded source of 16 bytes while `seeded` is active


def new_id() -> str:
    """A random RFC 4122 version-4 UUID in its usual text form, as `str(uuid.uuid4())` gives."""
    raw = bytearray(_draw() if _draw is not None else os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Draw ids from a generator seeded with `seed` inside the block (the same ids as
    `uuid.UUID(int=random.Random(seed).getrandbits(128), version=4)` would give), then randomly again."""
    import random

    global _draw
    rng = random.Random(seed)
    previous, _draw = _draw, lambda: rng.getrandbits(128).to_bytes(16, "big")
    try:
        yield
    finally:
        _draw = previous


MIN_PREFIX = 8
"""The shortest prefix accepted (the TUI and `list-memory` show 8 characters)."""
MAX_CANDIDATES = 5
"""How many candidates an ambiguous-prefix error lists."""

_QUERIES = {
    # A note's id, or the note part of its memory-item id.
    "notes": "SELECT id FROM notes WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT ?",
    # A memory item's own id (`<table>:<source id>`) or the source id behind it.
    "memory_items": (
        "SELECT id FROM memory_items WHERE substr(id, 1, ?1) = ?2 OR substr(source_id, 1, ?1) = ?2 ORDER BY id LIMIT ?3"
    ),
}


def resolve_prefix(conn: sqlite3.Connection, table: str, prefix: str, *, what: str) -> str | None:
    """The one stored id in `table` that starts with `prefix`, or None when none does.

    Args:
        table: `notes` or `memory_items`.
        what: how the error names the thing (`note`, `memory item`).

    Raises:
        InvalidInput: the prefix is shorter than `MIN_PREFIX` characters (`short_id`), or it matches more than
            one id (`ambiguous_id`, the error lists them).
    """
    raw = prefix.strip()
    if len(raw) < MIN_PREFIX:
        raise InvalidInput(
            f'id "{raw[:40]}" is too short: give the whole id or a prefix of at least {MIN_PREFIX} characters',
            code="short_id",
        )
    found = [str(r[0]) for r in conn.execute(_QUERIES[table], (len(raw), raw, MAX_CANDIDATES + 1))]
    if len(found) > 1:
        shown = ", ".join(found[:MAX_CANDIDATES]) + (", …" if len(found) > MAX_CANDIDATES else "")
        raise InvalidInput(
            f'id prefix "{raw}" matches more than one {what}: {shown}; give more characters',
            code="ambiguous_id",
            candidates=found[:MAX_CANDIDATES],
        )
    return found[0] if found else None


OWN_ID_TABLES = ("notes", "command_runs")
"""Memory items whose id after the table is their own (a note's, a command run's): that is their handle."""


def item_handle(item_id: str) -> str:
    """The id a person reads and types for a memory item: a note's or a command run's own id, else a hex digest
    of the item id (an episode's id repeats its command run's or its session's; a snapshot's is its scope key)."""
    table, _, rest = item_id.partition(":")
    if table in OWN_ID_TABLES and rest:
        return rest
    return hashlib.sha1(item_id.encode("utf-8")).hexdigest()


_DIGESTS: weakref.WeakKeyDictionary[sqlite3.Connection, tuple[tuple[int, int], dict[str, list[tuple[str, str]]]]]
_DIGESTS = weakref.WeakKeyDictionary()
"""Each connection's digest index (`_digested`) and the store's change mark it was read at."""


def _digested(conn: sqlite3.Connection) -> dict[str, list[tuple[str, str]]]:
    """(handle, id) of every item whose handle is a digest, by the handle's first `MIN_PREFIX` characters: read by
    key ranges that leave out notes and command runs (most of a store), so only episodes and snapshots are hashed,
    in one pass with no sort. Kept per connection until the store changes (its own writes or another's), so a
    session that pages or resolves again (the TUI, `cortex serve`) hashes once."""
    mark = (conn.total_changes, conn.execute("PRAGMA data_version").fetchone()[0])
    try:
        held = _DIGESTS.get(conn)
    except TypeError:  # a connection that takes no weak reference (a plain `sqlite3.Connection`) is not kept
        held = None
    if held is not None and held[0] == mark:
        return held[1]
    bounds = sorted(f"{table}{edge}" for table in OWN_ID_TABLES for edge in (":", ";"))
    rows = conn.execute("SELECT id FROM memory_items WHERE id < ? OR (id >= ? AND id < ?) OR id >= ?", bounds)
    sha1 = hashlib.sha1
    index: dict[str, list[tuple[str, str]]] = {}
    for (item_id,) in rows:  # none is a note's or a command run's: each handle is the id's digest (`item_handle`)
        handle = sha1(item_id.encode("utf-8")).hexdigest()
        index.setdefault(handle[:MIN_PREFIX], []).append((handle, item_id))
    try:
        _DIGESTS[conn] = (mark, index)
    except TypeError:
        pass
    return index


def _own_handles(conn: sqlite3.Connection, prefix: str) -> list[tuple[str, str]]:
    """(handle, id) of the notes and command runs whose own id starts with `prefix` (a primary-key range each)."""
    found: list[tuple[str, str]] = []
    for table in OWN_ID_TABLES:
        low = f"{table}:{prefix}"
        found += [
            (str(r[0])[len(table) + 1 :], str(r[0]))
            for r in conn.execute("SELECT id FROM memory_items WHERE id >= ? AND id < ?", (low, low + "\U0010ffff"))
        ]
    return found


def abbreviate(conn: sqlite3.Connection, item_ids: list[str]) -> dict[str, str]:
    """Each item's handle cut to the fewest characters (at least `MIN_PREFIX`) that no other item's handle
    starts with, as git abbreviates a commit: what `list-memory` shows and `resolve_item` takes back."""
    digests = _digested(conn)
    found: dict[str, str] = {}
    for item_id in item_ids:
        handle = item_handle(item_id)
        others = [h for h, other in _own_handles(conn, handle[:MIN_PREFIX]) if other != item_id]
        others += [h for h, other in digests.get(handle[:MIN_PREFIX], ()) if other != item_id]
        shared = max((len(os.path.commonprefix([handle, other])) for other in others), default=0)
        found[item_id] = handle[: max(MIN_PREFIX, shared + 1)]
    return found


def resolve_item(conn: sqlite3.Connection, typed: str) -> str | None:
    """The one memory item `typed` names: its id, its note's id, its handle, or a unique prefix (≥ 8 characters)
    of its id, its handle or its source id; None when nothing matches.

    Raises:
        InvalidInput: the prefix is shorter than `MIN_PREFIX` characters (`short_id`), or it names more than one
            item (`ambiguous_id`, the error lists the candidates as their handles).
    """
    raw = typed.strip()
    for exact in (raw, f"notes:{raw}"):
        if conn.execute("SELECT 1 FROM memory_items WHERE id=?", (exact,)).fetchone() is not None:
            return exact
    if len(raw) < MIN_PREFIX:
        raise InvalidInput(
            f'id "{raw[:40]}" is too short: give the whole id or a prefix of at least {MIN_PREFIX} characters',
            code="short_id",
        )
    found = {
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM memory_items WHERE substr(id, 1, ?1) = ?2 OR substr(source_id, 1, ?1) = ?2 "
            "ORDER BY id LIMIT ?3",
            (len(raw), raw, MAX_CANDIDATES + 1),
        )
    }
    found.update(item_id for _, item_id in _own_handles(conn, raw))
    if all(c in "0123456789abcdef" for c in raw.lower()):
        typed = raw.lower()
        found.update(
            item_id for handle, item_id in _digested(conn).get(typed[:MIN_PREFIX], ()) if handle.startswith(typed)
        )
    if len(found) > 1:
        names = sorted(abbreviate(conn, sorted(found)).items())
        shown = [f"{short} ({item_id.partition(':')[0]})" for item_id, short in names[:MAX_CANDIDATES]]
        raise InvalidInput(
            f'id prefix "{raw}" matches more than one memory item: {", ".join(shown)}'
            + (", …" if len(found) > MAX_CANDIDATES else "")
            + "; give more characters",
            code="ambiguous_id",
            candidates=[item_id for item_id, _ in names[:MAX_CANDIDATES]],
        )
    return next(iter(found)) if found else None
