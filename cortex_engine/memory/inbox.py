"""A person's verdict on the inbox: accept an arrival (it becomes a note, under the usual rules) or reject it.

The only callers are the CLI's `cortex inbox accept|reject` and the TUI's Inbox screen: no MCP tool and no hook
reaches these functions (a test walks every adapter to keep it so), and the CLI runs them only for a person at a
terminal who typed the code its prompt showed (`adapters/handlers/person.py`), on exactly the arrivals `preview` showed.
Accepting applies the arrival exactly as a trusted arrival would have been applied: a
decision file through `sharing` (labelled `shared`, replacing the file's earlier version), an imported note
through `transfer` (its date no later than when it arrived, its contests computed from the notes).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from cortex_engine.base.errors import InvalidInput, Refused
from cortex_engine.base.records import record
from cortex_engine.memory import arrivals, sharing, transfer
from cortex_engine.scope.identity import Scope
from cortex_engine.store.database import transaction


@record(frozen=True)
class Verdict:
    """What a person's verdict did to one arrival."""

    id: str
    channel: str
    path: str
    state: str
    note_id: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape."""
        return {"id": self.id, "channel": self.channel, "path": self.path, "state": self.state, "note_id": self.note_id}


def _chosen(conn: sqlite3.Connection, ids: Sequence[str], every: bool, scope: Scope) -> list[sqlite3.Row]:
    """The arrivals named (or, with `every`, every pending import and every pending decision file of this scope)."""
    if every == bool(ids):
        raise InvalidInput("name the arrivals by id, or give --all", code="bad_args")
    if every:
        return [
            arrivals.find(conn, a.id)
            for a in arrivals.listing(conn, None)
            if a.channel == "import" or a.scope_key == scope.key
        ]
    rows = [arrivals.find(conn, raw) for raw in ids]
    for row in rows:
        if row["state"] != "pending":
            raise Refused(
                f"arrival {row['id'][:8]} is already {row['state']}; nothing was changed",
                code="not_pending",
                id=row["id"],
                state=row["state"],
            )
    return list({r["id"]: r for r in rows}.values())


def _other_scope(rows: list[sqlite3.Row], scope: Scope) -> None:
    for row in rows:
        if row["channel"] == "shared" and row["scope_key"] != scope.key:
            raise Refused(
                f"arrival {row['id'][:8]} is a decision file of another branch's scope; accept it with that "
                "branch checked out; nothing was changed",
                code="other_scope",
                id=row["id"],
            )


def preview(
    conn: sqlite3.Connection, scope: Scope, ids: Sequence[str], *, every: bool = False, accepting: bool = True
) -> list[arrivals.Arrival]:
    """The arrivals a verdict on these ids (or `every`) would take, refused as the verdict would be; reads only.

    Raises:
        The errors `accept` (with `accepting`) or `reject` raise before writing anything.
    """
    rows = _chosen(conn, ids, every, scope)
    if accepting:
        _other_scope(rows, scope)
    return [arrivals.from_row(r) for r in rows]


def accept(
    conn: sqlite3.Connection, scope: Scope, ids: Sequence[str], now: str, *, every: bool = False
) -> list[Verdict]:
    """Accept arrivals (by id or prefix, or `every` pending import and decision file of this scope): each becomes a
    note.

    Raises:
        NotFound: an id names no arrival.
        InvalidInput: neither ids nor `every`, or an ambiguous prefix.
        Refused: an arrival is no longer pending, or a decision file arrived on another branch than this one.
    """
    rows = _chosen(conn, ids, every, scope)
    _other_scope(rows, scope)
    done: list[Verdict] = []
    for row in [r for r in rows if r["channel"] == "shared"]:
        note_id = sharing.accept_arrival(conn, scope, row, now)
        with transaction(conn):
            arrivals.mark(conn, row["id"], "accepted", now, note_id)
        done.append(Verdict(row["id"], "shared", row["path"], "accepted", note_id))
    imported = sorted((r for r in rows if r["channel"] == "import"), key=lambda r: (r["timestamp"], r["seq"]))
    if imported:
        result = transfer.ImportResult(imported[0]["path"], "jsonl", len(imported))

        def mark_all(c: sqlite3.Connection) -> None:
            for row in imported:
                arrivals.mark(c, row["id"], "accepted", now, row["note_id"] if row["note_id"] in result.added else None)

        transfer.import_notes(conn, result, [transfer.from_arrival(r) for r in imported], inside=mark_all)
        done += [
            Verdict(r["id"], "import", r["path"], "accepted", r["note_id"] if r["note_id"] in result.added else None)
            for r in imported
        ]
    return done


def reject(
    conn: sqlite3.Connection, scope: Scope, ids: Sequence[str], now: str, *, every: bool = False
) -> list[Verdict]:
    """Reject arrivals: they stay out of memory, and the same decision file is not offered again.

    Raises:
        NotFound: an id names no arrival.
        InvalidInput: neither ids nor `every`, or an ambiguous prefix.
        Refused: an arrival is no longer pending.
    """
    rows = _chosen(conn, ids, every, scope)
    with transaction(conn):
        for row in rows:
            arrivals.mark(conn, row["id"], "rejected", now)
    return [Verdict(r["id"], r["channel"], r["path"], "rejected") for r in rows]
