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
from collections.abc import Sequence
from dataclasses import dataclass

from cortex_engine.base.errors import NotFound, Refused
from cortex_engine.memory.corrections import restore_anchors
from cortex_engine.memory.notes import _scope_type_of, item_id_for, sync_note_item
from cortex_engine.store.database import transaction

UNDOABLE = ("resolve", "delete", "edit", "rewrite-moved")
"""The audited operations undo can take back (reanchor and shared-decision syncs are not operator text changes)."""


@dataclass(frozen=True)
class Undo:
    """What an undo took back."""

    correction: int
    operation: str
    item_id: str
    subject: str | None
    detail: str

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape."""
        return {
            "correction": self.correction,
            "operation": self.operation,
            "id": self.item_id,
            "subject": self.subject,
            "detail": self.detail,
        }

    def render(self) -> str:
        """The text report."""
        about = f" [{self.subject}]" if self.subject else ""
        return f"Undid the {self.operation} of {self.item_id}{about}: {self.detail}"


def _changed(what: str) -> Refused:
    return Refused(
        f"{what} changed since that action; nothing was undone (look at it with `cortex inspect-memory`)",
        code="changed_since",
    )


def undo_last(conn: sqlite3.Connection, scope_keys: Sequence[str], scope_type: str, now: str) -> Undo:
    """Undo the newest audited operator action of these scopes that was not undone yet.

    Raises:
        NotFound: nothing to undo.
        Refused: what the action changed has changed since (`changed_since`); nothing is written.
    """
    with transaction(conn):
        row = conn.execute(
            f"SELECT * FROM memory_corrections WHERE scope_key IN ({','.join('?' * len(scope_keys))}) "
            f"AND operation IN ({','.join('?' * len(UNDOABLE))}) AND undone_by IS NULL ORDER BY id DESC LIMIT 1",
            (*scope_keys, *UNDOABLE),
        ).fetchone()
        if row is None:
            raise NotFound(
                "nothing to undo in this scope (resolve, delete, edit and path rewrites are undoable)",
                code="nothing_to_undo",
            )
        operation = row["operation"]
        if operation == "resolve":
            detail = _undo_resolve(conn, row, scope_type)
        elif operation == "delete":
            detail = _undo_delete(conn, row, scope_type)
        else:
            detail = _undo_text(conn, row, scope_type)
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
                json.dumps({"undid": row["id"], "operation": operation}),
            ),
        )
        conn.execute("UPDATE memory_corrections SET undone_by=? WHERE id=?", (undo.lastrowid, row["id"]))
    return Undo(row["id"], operation, row["memory_item_id"], row["prior_subject"], detail)


def _resync(conn: sqlite3.Connection, note_id: str, scope_type: str) -> None:
    """Re-project a note into memory_items after its row changed (its own scope's type decides the layer)."""
    note = conn.execute("SELECT * FROM scoped_notes WHERE id=?", (note_id,)).fetchone()
    if note is not None:
        sync_note_item(conn, note, _scope_type_of(note["scope_key"], scope_type))


def _undo_text(conn: sqlite3.Connection, row: sqlite3.Row, scope_type: str) -> str:
    """An edit or a path rewrite: the text goes back when it is still what the action wrote."""
    if row["source_table"] == "notes":
        note = conn.execute("SELECT content FROM scoped_notes WHERE id=?", (row["source_id"],)).fetchone()
        if note is None or note["content"] != row["new_text"]:
            raise _changed(f"the note {row['source_id'][:8]}")
        conn.execute("UPDATE notes SET content=? WHERE id=?", (row["prior_text"], row["source_id"]))
        _resync(conn, row["source_id"], scope_type)
    else:
        item = conn.execute("SELECT text FROM memory_items WHERE id=?", (row["memory_item_id"],)).fetchone()
        if item is None or item["text"] != row["new_text"]:
            raise _changed(f"the memory {row['memory_item_id']}")
        from cortex_engine.memory.notes import extract_item_references

        conn.execute("UPDATE memory_items SET text=? WHERE id=?", (row["prior_text"], row["memory_item_id"]))
        extract_item_references(conn, row["memory_item_id"], row["prior_subject"], row["prior_text"])
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
    if conn.execute("SELECT 1 FROM notes WHERE id=?", (note["id"],)).fetchone() is not None:
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
    for note_id in (note["id"], *sides):
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
        conn.execute("DELETE FROM memory_items WHERE id=?", (item_id_for(replacement),))
        conn.execute("DELETE FROM notes WHERE id=?", (replacement,))
    for note_id, (status, conflict) in before.items():
        conn.execute("UPDATE notes SET status=?, conflict=? WHERE id=?", (status, conflict, note_id))
        _resync(conn, note_id, scope_type)
    return "its status is back" + (" and its replacement is withdrawn" if replacement else "")
