"""`cortex undo`: take back the last operator action (resolve, delete, edit, path rewrite) from its audit row.

Each of those actions writes a `memory_corrections` row with what it changed: the text before and after (edit,
`rewrite-moved`), a deleted note's whole row (delete), the status and conflict of every note a resolve touched
and the replacement it wrote (resolve). Undo reads the newest such row of this scope not undone yet, checks that
what it changed is still as it left it (a later edit, resolve or capture wins: the undo is refused, nothing is
written), puts the before-state back, and is itself audited (operation `undo`, pointing at the row it undid).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cortex_engine.base.errors import NotFound, Refused
from cortex_engine.memory.corrections import restore_anchors
from cortex_engine.memory.notes import _scope_type_of, item_id_for, sync_note_item
from cortex_engine.store import queries
from cortex_engine.store.database import transaction

UNDOABLE = ("resolve", "delete", "edit", "rewrite-moved")
"""The audited operations undo can take back (reanchor and shared-decision syncs are not operator text changes)."""


@dataclass(frozen=True)
class Undo:
    """What an undo took back, and the newer actions it passed over because they can no longer be undone."""

    correction: int
    operation: str
    item_id: str
    subject: str | None
    detail: str
    skipped: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape."""
        return {
            "correction": self.correction,
            "operation": self.operation,
            "id": self.item_id,
            "subject": self.subject,
            "detail": self.detail,
            "skipped": list(self.skipped),
        }

    def render(self) -> str:
        """The text report: a line per action passed over, then what was undone."""
        about = f" [{self.subject}]" if self.subject else ""
        return "\n".join([*self.skipped, f"Undid the {self.operation} of {self.item_id}{about}: {self.detail}"])


def _changed(what: str) -> Refused:
    return Refused(
        f"{what} changed since that action; nothing was undone (look at it with `cortex inspect-memory`)",
        code="changed_since",
    )


@dataclass(frozen=True)
class Pending:
    """The action an undo would take back now (shown to a person before they confirm), and the newer ones it would
    pass over because they can no longer be undone."""

    correction: int
    operation: str
    item_id: str
    subject: str | None
    created_at: str
    skipped: tuple[str, ...] = ()

    def render(self) -> str:
        """The lines passed over, then one line: what would be undone."""
        about = f" [{self.subject}]" if self.subject else ""
        when = self.created_at[:16].replace("T", " ")
        return "\n".join([*self.skipped, f"Undo the {self.operation} of {self.item_id}{about} (done {when})"])


def _undoable_rows(conn: sqlite3.Connection, scope_keys: Sequence[str]) -> list[sqlite3.Row]:
    rows: list[sqlite3.Row] = conn.execute(
        f"SELECT * FROM memory_corrections WHERE scope_key IN ({','.join('?' * len(scope_keys))}) "
        f"AND operation IN ({','.join('?' * len(UNDOABLE))}) AND undone_by IS NULL ORDER BY id DESC",
        (*scope_keys, *UNDOABLE),
    ).fetchall()
    if not rows:
        raise NotFound(
            "nothing to undo in this scope (resolve, delete, edit and path rewrites are undoable)",
            code="nothing_to_undo",
        )
    return rows


def _walk(conn: sqlite3.Connection, rows: list[sqlite3.Row], scope_type: str) -> tuple[sqlite3.Row, str, list[str]]:
    """Take back the newest of `rows` that still can be, passing over (and naming) those that cannot.

    Raises:
        Refused: none of them can be undone (the newest one's reason); nothing is written.
    """
    refusals: list[Refused] = []
    skipped: list[str] = []
    for row in rows:
        try:
            return row, _undo_one(conn, row, scope_type), skipped
        except Refused as refused:
            refusals.append(refused)
            about = f" [{row['prior_subject']}]" if row["prior_subject"] else ""
            skipped.append(
                f"Passed over the {row['operation']} of {row['memory_item_id']}{about}: it cannot be undone "
                f"({str(refused).split(';')[0]})"
            )
    first = refusals[0]
    more = len(refusals) - 1
    if more:
        raise Refused(
            f"{first}; the {more} older action{'s' if more > 1 else ''} not undone yet cannot be undone either",
            code=first.code,
        )
    raise first


def pending(conn: sqlite3.Connection, scope_keys: Sequence[str], scope_type: str) -> Pending:
    """The action `undo_last` would take back now (the walk tried and rolled back: nothing is written).

    Raises:
        NotFound: nothing to undo. Refused: no action left can be undone.
    """
    conn.execute("SAVEPOINT undo_preview")
    try:
        row, _, skipped = _walk(conn, _undoable_rows(conn, scope_keys), scope_type)
    finally:
        conn.execute("ROLLBACK TO undo_preview")
        conn.execute("RELEASE undo_preview")
    return Pending(
        row["id"], row["operation"], row["memory_item_id"], row["prior_subject"], row["created_at"], tuple(skipped)
    )


def undo_last(
    conn: sqlite3.Connection, scope_keys: Sequence[str], scope_type: str, now: str, *, expected: int | None = None
) -> Undo:
    """Undo the newest audited operator action of these scopes that was not undone yet and still can be (with
    `expected`: only when that is still the action a person was shown, `pending`'s correction).

    An action whose effect has changed since (a later edit, resolve or capture won) cannot be undone; it is passed
    over, named in `Undo.skipped`, and the action before it is taken back: one refused action never blocks the
    older ones. It stays on the record as not undone (it is checked again by the next undo).

    Raises:
        NotFound: nothing to undo.
        Refused: no action left can be undone (the newest one's reason, `changed_since` or `not_undoable`), or the
            action it would take back is not the one the person was shown (`changed_since`); nothing is written.
    """
    with transaction(conn):
        row, detail, skipped = _walk(conn, _undoable_rows(conn, scope_keys), scope_type)
        if expected is not None and row["id"] != expected:
            raise _changed("The newest action")
        undo = conn.execute(
            "INSERT INTO memory_corrections(memory_item_id, source_table, source_id, scope_key, operation, prior_text, "
            "new_text, prior_subject, created_at, before_state) VALUES (?,?,?,?, 'undo', ?, ?, ?, ?, ?)",
            (
                row["memory_item_id"],
                row["source_table"],
                row["source_id"],
                row["scope_key"],
                row["new_text"] or "",
                row["prior_text"],
                row["prior_subject"],
                now,
                json.dumps({"undid": row["id"], "operation": row["operation"]}),
            ),
        )
        conn.execute("UPDATE memory_corrections SET undone_by=? WHERE id=?", (undo.lastrowid, row["id"]))
    return Undo(row["id"], row["operation"], row["memory_item_id"], row["prior_subject"], detail, tuple(skipped))


def _undo_one(conn: sqlite3.Connection, row: sqlite3.Row, scope_type: str) -> str:
    """Take back one audited action inside a savepoint: a refusal leaves nothing of it written."""
    conn.execute("SAVEPOINT undo_one")
    try:
        operation = row["operation"]
        if operation == "resolve":
            detail = _undo_resolve(conn, row, scope_type)
        elif operation == "delete":
            detail = _undo_delete(conn, row, scope_type)
        else:
            detail = _undo_text(conn, row, scope_type)
    except Refused:
        conn.execute("ROLLBACK TO undo_one")
        conn.execute("RELEASE undo_one")
        raise
    conn.execute("RELEASE undo_one")
    return detail


def _resync(conn: sqlite3.Connection, note_id: str, scope_type: str, prior: Mapping[str, Any] | None = None) -> None:
    """Re-project a note into memory_items after its row changed (its own scope's type decides the layer); `prior`:
    what its references were recorded against before the action (kept in the audit row)."""
    note = queries.note_row(conn, note_id)
    if note is not None:
        sync_note_item(conn, note, _scope_type_of(note["scope_key"], scope_type), prior=prior)


def _recorded(row: sqlite3.Row) -> dict[str, Any] | None:
    """What the item's references were recorded against before the audited action (None: not kept then)."""
    before = json.loads(row["before_state"]) if row["before_state"] else {}
    found = before.get("references") if isinstance(before, dict) else None
    return found if isinstance(found, dict) else None


def _undo_text(conn: sqlite3.Connection, row: sqlite3.Row, scope_type: str) -> str:
    """An edit or a path rewrite: the text goes back when it is still what the action wrote."""
    if row["source_table"] == "notes":
        if queries.note_content(conn, row["source_id"]) != row["new_text"]:
            raise _changed(f"the note {row['source_id'][:8]}")
        queries.set_note_content(conn, row["source_id"], row["prior_text"])
        _resync(conn, row["source_id"], scope_type, _recorded(row))
    else:
        if queries.item_text(conn, row["memory_item_id"]) != row["new_text"]:
            raise _changed(f"the memory {row['memory_item_id']}")
        from cortex_engine.memory.notes import extract_item_references

        queries.set_item_text(conn, row["memory_item_id"], row["prior_text"])
        extract_item_references(
            conn, row["memory_item_id"], row["prior_subject"], row["prior_text"], prior=_recorded(row)
        )
    before = json.loads(row["before_state"]) if row["before_state"] else {}
    if isinstance(before, dict) and isinstance(before.get("anchors"), list):
        # A path rewrite keeps the anchors it replaced: they come back as they were, not made anew from the old text
        # (whose symbols may be in another file by now).
        restore_anchors(conn, row["memory_item_id"], before["anchors"])
    return "its text is back as it was"


def _undo_delete(conn: sqlite3.Connection, row: sqlite3.Row, scope_type: str) -> str:
    """A deleted note comes back (same id, kind, subject, status, time), its contest reopened if the sides stand."""
    before = json.loads(row["before_state"]) if row["before_state"] else None
    if not before or "note" not in before:
        raise Refused(
            "only a deleted note can be restored (this delete removed a captured item, or it was made "
            "before undo was recorded); nothing was undone",
            code="not_undoable",
        )
    note = before["note"]
    if queries.note_exists(conn, note["id"]):
        raise _changed(f"the note {note['id'][:8]}")
    sides = (
        [
            r["id"]
            for r in conn.execute(
                f"SELECT id FROM notes WHERE id IN ({','.join('?' * len(before['contest']))}) AND status='active'",
                before["contest"],
            )
        ]
        if before["contest"]
        else []
    )
    columns = list(note)
    conn.execute(
        f"INSERT INTO notes({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", [note[c] for c in columns]
    )
    if sides and note.get("status") == "active":
        conn.execute(
            f"UPDATE notes SET conflict=1 WHERE id IN ({','.join('?' * (len(sides) + 1))})", (*sides, note["id"])
        )
    _resync(conn, note["id"], scope_type, _recorded(row))
    for note_id in sides:
        _resync(conn, note_id, scope_type)
    return "the note is back" + (" and its contest is open again" if sides else "")


def _undo_resolve(conn: sqlite3.Connection, row: sqlite3.Row, scope_type: str) -> str:
    """Every note the resolve touched gets its status and conflict back; the replacement it wrote is taken out."""
    before = json.loads(row["before_state"] or "{}").get("notes", {})
    after = json.loads(row["after_state"] or "{}")
    now = (
        {
            r["id"]: [r["status"], r["conflict"]]
            for r in conn.execute(
                f"SELECT id, status, conflict FROM notes WHERE id IN ({','.join('?' * len(after.get('notes', {})))})",
                list(after.get("notes", {})),
            )
        }
        if after.get("notes")
        else {}
    )
    if not before or now != after.get("notes"):
        raise _changed(f'the notes on "{row["prior_subject"] or row["source_id"][:8]}"')
    replacement = after.get("replacement")
    if replacement:
        queries.delete_item(conn, item_id_for(replacement))
        queries.delete_note(conn, replacement)
    for note_id, (status, conflict) in before.items():
        conn.execute("UPDATE notes SET status=?, conflict=? WHERE id=?", (status, conflict, note_id))
        _resync(conn, note_id, scope_type)
    return "its status is back" + (" and its replacement is withdrawn" if replacement else "")
