"""The inbox: what arrives from outside waits here until a person accepts or rejects it.

An arrival is a decision file someone else committed (`sharing.sync`) or a note read from an imported file
(`transfer`). It is not a note: no surface ranks it, no contradiction or supersession rule runs against it, and
the agent is told at most one line, that N arrivals wait for the user's review (`pending_line`). Only a person
turns one into a note (`cortex inbox accept`, the TUI's Inbox screen); no MCP tool and no hook calls
`inbox.accept`. Which arrivals wait is `needs_review`'s rule, under the user's review policy (the settings file
beside the stores, `settings.review_policy`; never the environment of the process that asks).

Every field is stored through the cleaning connection (controls, secrets); where it came from (file path,
commit, author and date as git records them) is author text, defused wherever it is shown.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence

from cortex_engine.base.errors import InvalidInput, NotFound
from cortex_engine.base.ids import MIN_PREFIX, new_id
from cortex_engine.base.records import record
from cortex_engine.store.database import in_scopes, scope_id

CHANNELS = ("shared", "import")
ARRIVAL_STATES = ("pending", "accepted", "rejected", "withdrawn")


@record(frozen=True)
class Arrival:
    """One arrival as the inbox lists it."""

    id: str
    channel: str
    scope_key: str
    path: str
    commit: str | None
    author: str | None
    authored_at: str | None
    kind: str
    subject: str | None
    content: str
    alternatives: tuple[str, ...]
    timestamp: str
    state: str
    arrived_at: str
    note_id: str | None = None
    result_note_id: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape."""
        return {
            "id": self.id,
            "channel": self.channel,
            "scope": self.scope_key,
            "path": self.path,
            "commit": self.commit,
            "author": self.author,
            "authored_at": self.authored_at,
            "kind": self.kind,
            "subject": self.subject,
            "content": self.content,
            "alternatives": list(self.alternatives),
            "timestamp": self.timestamp,
            "state": self.state,
            "arrived_at": self.arrived_at,
            "note_id": self.result_note_id,
        }


def needs_review(channel: str, mode: str, *, own: bool = False) -> bool:
    """Whether an arrival waits for a person under the review policy `mode` (`settings.review_policy`).

    - `others` (the default): a decision file waits unless this store published it (`own`: its content digest is
      one `publish` recorded); an import always waits (the file may have been edited since it left).
    - `all`: every decision file and every import waits.
    - `none`: nothing waits (a team that trusts its repository); the other checks still run.
    Anything else is read as `all`.
    """
    if mode == "none":
        return False
    if mode == "others" and channel == "shared":
        return not own
    return True


_SELECT = "SELECT a.*, s.key AS scope_key FROM arrivals a JOIN scopes s ON s.id = a.scope_id"


def from_row(row: sqlite3.Row) -> Arrival:
    """An arrival row (with its `scope_key`) as the inbox lists it."""
    alts = tuple(json.loads(row["alternatives"])) if row["alternatives"] else ()
    return Arrival(
        row["id"],
        row["channel"],
        row["scope_key"],
        row["path"],
        row["commit_oid"],
        row["author"],
        row["authored_at"],
        row["kind"],
        row["subject"],
        row["content"],
        alts,
        row["timestamp"],
        row["state"],
        row["arrived_at"],
        row["note_id"],
        row["result_note_id"],
    )


def add(
    conn: sqlite3.Connection,
    scope_key: str,
    channel: str,
    path: str,
    *,
    kind: str,
    subject: str | None,
    content: str,
    alternatives: Sequence[str],
    timestamp: str,
    now: str,
    status: str = "active",
    blob_oid: str | None = None,
    commit: str | None = None,
    author: str | None = None,
    authored_at: str | None = None,
    note_id: str | None = None,
    source: str | None = None,
    seq: int = 0,
) -> str:
    """Store one pending arrival (inside the caller's transaction); returns its id."""
    arrival_id = new_id()
    conn.execute(
        "INSERT INTO arrivals(id, scope_id, channel, path, blob_oid, commit_oid, author, authored_at, note_id, kind, "
        "subject, content, alternatives, timestamp, status, source, seq, arrived_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            arrival_id,
            scope_id(conn, scope_key),
            channel,
            path,
            blob_oid,
            commit,
            author,
            authored_at,
            note_id,
            kind,
            subject,
            content,
            json.dumps(list(alternatives)) if alternatives else None,
            timestamp,
            status,
            source,
            seq,
            now,
        ),
    )
    return arrival_id


def known_files(conn: sqlite3.Connection, scope_key: str) -> set[tuple[str, str]]:
    """(path, blob id) of every decision file this scope's inbox has held, whatever its state (offered once)."""
    return {
        (r[0], r[1])
        for r in conn.execute(
            f"SELECT path, blob_oid FROM arrivals WHERE channel='shared' AND {in_scopes(1, indexed=False)}",
            (scope_key,),
        )
    }


def withdraw_files(conn: sqlite3.Connection, scope_key: str, keep: dict[str, str], now: str) -> int:
    """Withdraw this scope's pending decision-file arrivals whose file is gone or changed at HEAD (`keep`: path →
    blob id at HEAD); inside the caller's transaction. Returns how many."""
    rows = conn.execute(
        f"SELECT id, path, blob_oid FROM arrivals WHERE channel='shared' AND state='pending' AND {in_scopes(1)}",
        (scope_key,),
    ).fetchall()
    gone = [r["id"] for r in rows if keep.get(r["path"]) != r["blob_oid"]]
    conn.executemany("UPDATE arrivals SET state='withdrawn', decided_at=? WHERE id=?", [(now, i) for i in gone])
    return len(gone)


def pending_count(conn: sqlite3.Connection, scope_keys: Sequence[str]) -> int:
    """How many arrivals of these scopes wait for review (0 on a store from before schema 10)."""
    if not scope_keys:
        return 0
    try:
        row = conn.execute(
            f"SELECT COUNT(*) FROM arrivals WHERE state='pending' AND {in_scopes(len(scope_keys))}", list(scope_keys)
        )
    except sqlite3.OperationalError:
        return 0
    return int(row.fetchone()[0])


def pending_line(count: int) -> str | None:
    """The one line an agent is told about the inbox: a count, never what the arrivals say."""
    if count <= 0:
        return None
    noun, verb = ("arrival", "waits") if count == 1 else ("arrivals", "wait")
    return f"- inbox: {count} {noun} from outside {verb} for the user's review; not memory until the user accepts"


def listing(
    conn: sqlite3.Connection, scope_keys: Sequence[str] | None, states: Iterable[str] = ("pending",)
) -> list[Arrival]:
    """The arrivals of these scopes (None: of every scope) in the given states, in the order they arrived."""
    wanted = [s for s in states if s in ARRIVAL_STATES]
    if scope_keys is not None and not scope_keys or not wanted:
        return []
    marks = ",".join("?" * len(wanted))
    where = "" if scope_keys is None else f" AND {in_scopes(len(scope_keys), 'a.')}"
    rows = conn.execute(
        f"{_SELECT} WHERE a.state IN ({marks}){where} ORDER BY a.arrived_at, a.seq, a.rowid",
        [*wanted, *(scope_keys or [])],
    ).fetchall()
    return [from_row(r) for r in rows]


def find(conn: sqlite3.Connection, raw: str) -> sqlite3.Row:
    """One arrival by its id or a unique prefix of it (at least 8 characters), with its scope key.

    Raises:
        NotFound: nothing carries that id.
        InvalidInput: the prefix is too short or matches more than one arrival.
    """
    value = raw.strip()
    if len(value) < MIN_PREFIX:
        raise InvalidInput(f'"{value}" is too short an id; give at least {MIN_PREFIX} characters', code="bad_id")
    rows: list[sqlite3.Row] = conn.execute(
        f"{_SELECT} WHERE substr(a.id, 1, ?) = ? ORDER BY a.id LIMIT 6", (len(value), value)
    ).fetchall()
    if len(rows) > 1:
        shown = ", ".join(r["id"] for r in rows[:5])
        raise InvalidInput(
            f'id prefix "{value}" matches more than one arrival: {shown}; give more characters',
            code="ambiguous_id",
            candidates=[r["id"] for r in rows[:5]],
        )
    if not rows:
        raise NotFound(f'no arrival found for id "{value}"; list them with: cortex inbox', id=value)
    return rows[0]


def mark(conn: sqlite3.Connection, arrival_id: str, state: str, now: str, note_id: str | None = None) -> None:
    """Record a person's verdict on an arrival (inside the caller's transaction)."""
    conn.execute(
        "UPDATE arrivals SET state=?, decided_at=?, result_note_id=? WHERE id=?", (state, now, note_id, arrival_id)
    )


def describe_arrival(arrival: Arrival) -> list[str]:
    """An arrival as the person reviewing it reads it: where it came from, then what it says (author text,
    defused and quoted, never presented as a decision)."""
    from cortex_engine.memory.items import collapse, defuse_labels

    def clean(text: str | None) -> str:
        return defuse_labels(collapse(text or ""))

    where = clean(arrival.path)
    if arrival.commit:
        where += f" @ {arrival.commit[:10]}"
    by = ", ".join(x for x in (clean(arrival.author), clean(arrival.authored_at)) if x)
    head = f"{arrival.id[:8]}  {arrival.state}  {arrival.channel}: {where}" + (f" (by {by})" if by else "")
    subject = f"[{clean(arrival.subject)}] " if arrival.subject else ""
    lines = [head, f'    would add {arrival.kind}: {subject}"{clean(arrival.content)}"']
    if arrival.alternatives:
        lines.append("    rejected alternatives: " + "; ".join(clean(a) for a in arrival.alternatives))
    return lines
