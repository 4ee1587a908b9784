"""Audited corrections of memory: edit an item's text, rewrite its renamed file references, re-anchor its drifted
spans, delete it. Each writes its change and a `memory_corrections` row in one transaction (what `cortex undo`
takes back), so every correction a person makes is on the record.

In: a connection, an item id (or its note's id, or a unique prefix), the scope for judging references, an ISO
time. Reading an item (`find_item`) lives here too: the read stage's inspection and listing sit above it.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from cortex_engine.base.errors import InvalidInput, NotFound, Refused
from cortex_engine.base.untrusted import quote_path
from cortex_engine.memory.notes import (
    extract_item_references,
    leave_contest,
    recorded_references,
    sync_note_item,
)
from cortex_engine.scope import references as paths
from cortex_engine.scope.freshness import AnchorVerdict, Validator
from cortex_engine.scope.identity import Scope, read_head
from cortex_engine.store import queries
from cortex_engine.store.database import IN_SCOPE, transaction
from cortex_engine.store.redact import redact

_TRAILER_START = re.compile(r"^(subject|alternatives|conflict|status):", re.IGNORECASE)


def not_found(item_id: str) -> NotFound:
    """The error for an id that names nothing (adapters add how to list ids in their own words)."""
    return NotFound(f'no memory item found for id "{item_id}"', id=item_id)


def find_item(conn: sqlite3.Connection, item_or_note_id: str) -> sqlite3.Row:
    """A memory item by its own id, the id of the note behind it, its handle, or a unique prefix (≥ 8 characters)
    of them (`base/ids.resolve_item`, the one resolver).

    Raises:
        NotFound: nothing matches.
        InvalidInput: the prefix matches more than one item.
    """
    from cortex_engine.base.ids import resolve_item

    raw = item_or_note_id.strip()
    full = resolve_item(conn, raw)
    row: sqlite3.Row | None = (
        conn.execute("SELECT * FROM scoped_items WHERE id=?", (full,)).fetchone() if full else None
    )
    if row is None:
        raise not_found(raw)
    return row


@dataclass(frozen=True)
class Reanchor:
    """What `cortex reanchor` moved: each drifted anchor's name and its new lines."""

    id: str
    anchors: list[dict[str, object]]


def reanchor_memory(conn: sqlite3.Connection, scope: Scope, item_or_note_id: str, now: str) -> Reanchor:
    """Re-anchor an item's drifted and moved anchors to the code as it is now, where it is now (a symbol renamed in
    place or moved to another file is anchored under its new name, in its new file); the caller checked the note
    still holds. Audited. Each anchor records the HEAD it was re-anchored on (None outside git).

    Raises:
        NotFound: no such item. Refused: the item has no drifted or moved anchor, or a moved one
            left a file that is gone while the text still names it (`rewrite_first`: `rewrite-moved` follows it).
    """
    row = find_item(conn, item_or_note_id)
    validation = Validator(conn, scope).validate(row["id"], row["scope_key"])
    drifted = [
        a for a in validation.anchors if a.status in ("drifted", "moved") and a.start is not None and a.current_hash
    ]
    if not drifted:
        raise Refused(f"{row['id']} has no drifted anchor to re-anchor")
    gone = [r.path for r in validation.refs if r.by_symbol]
    if gone:
        raise Refused(
            f"{row['id']} names {', '.join(quote_path(p) for p in gone)}, which is gone; run `cortex rewrite-moved "
            f"{row['id']}` first so its text follows the code (nothing was re-anchored)",
            code="rewrite_first",
            id=row["id"],
        )
    head = read_head(scope.git_dir, scope.git_root)[1] if scope.git_dir and scope.git_root else None
    moved: list[dict[str, object]] = []
    with transaction(conn):
        for a in drifted:
            conn.execute(
                "UPDATE memory_anchors SET path=?, symbol=?, start_line=?, end_line=?, content_hash=?, head_oid=?, "
                "anchored_at=? WHERE id=?",
                (a.path, a.current_symbol, a.start, a.end, a.current_hash, head, now, a.anchor_id),
            )
            conn.execute(
                "INSERT INTO memory_corrections(memory_item_id, "
                "source_table, source_id, scope_key, operation, prior_text, "
                "new_text, prior_subject, created_at) VALUES (?,?,?,?, 'reanchor', ?,?,?,?)",
                (
                    row["id"],
                    row["source_table"],
                    row["source_id"],
                    row["scope_key"],
                    f"{a.name} lines {a.recorded_start}-{a.recorded_end} hash {a.recorded_hash}",
                    f"{a.moved_to or a.name} lines {a.start}-{a.end} hash {a.current_hash}",
                    row["subject"],
                    now,
                ),
            )
            moved.append(
                {"anchor": quote_path(a.moved_to or a.name), "start": a.start, "end": a.end, "hash": a.current_hash}
            )
    return Reanchor(row["id"], moved)


def check_edit_text(text: str) -> str:
    """Accept an edit's text: BOM stripped, not blank, no spoofed trailer line.

    Raises:
        InvalidInput: blank text (`empty_text`) or a trailer-shaped last line (`spoofed_trailer`).
    """
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise InvalidInput("the new text is empty; nothing was changed", code="empty_text")
    last = [line for line in text.split("\n") if line.strip()][-1].strip()
    if _TRAILER_START.match(last):
        raise InvalidInput(
            f"the last line {last[:40]!r} looks like a Cortex trailer (Subject:/Alternatives:/Conflict:/Status:); "
            "trailers are derived from the note, not edited — reword that line",
            code="spoofed_trailer",
        )
    return text


@dataclass(frozen=True)
class Edit:
    """What an edit changed."""

    id: str
    references: int
    prior_text: str
    new_text: str


def edit_memory(conn: sqlite3.Connection, item_or_note_id: str, text: str, now: str) -> Edit:
    """Replace a memory's editable text (a note's content, else the item text), audited; state kept.

    Raises:
        NotFound: no such item. InvalidInput: empty or spoofed text.
    """
    text = redact(check_edit_text(text))  # stored redacted, like captured text
    return _replace_text(conn, find_item(conn, item_or_note_id), text, "edit", now)


def _replace_text(
    conn: sqlite3.Connection,
    row: sqlite3.Row,
    text: str,
    operation: str,
    now: str,
    *,
    expected: str | None = None,
    before: str | None = None,
    then: Callable[[], None] | None = None,
) -> Edit:
    """Write an item's new editable text and its audit row in one transaction (edit and every fix go through here).

    With `expected`, the item's stored text is compared inside the write transaction and a difference refuses
    (someone changed the memory since the caller read it). `before` is kept with the audit row (what undo puts
    back beyond the text); `then` runs inside the transaction once the text is written.
    """
    with transaction(conn):
        if expected is not None:
            now_text = queries.item_text(conn, row["id"])
            if now_text is None:
                raise not_found(str(row["id"]))
            if now_text != expected:
                raise Refused(
                    f"{row['id']} changed since it was read; nothing was rewritten (look again, then retry)",
                    code="changed",
                    id=row["id"],
                )
        # What the references were recorded against goes with the audit row (beside what the caller keeps there):
        # an undo records them back so.
        kept = json.loads(before) if before else {}
        before = json.dumps({"references": recorded_references(conn, row["id"]), **kept})
        if row["source_table"] == "notes":
            note = queries.note_row(conn, row["source_id"])
            if note is None:
                raise not_found(str(row["id"]))
            prior = note["content"]
            new = " ".join(text.split()) if "\n" not in text.strip() else text.strip()
            queries.set_note_content(conn, note["id"], new)
            note = queries.note_row(conn, note["id"])
            assert note is not None  # rewritten just now, in this transaction
            sync_note_item(conn, note, row["scope_type"])
        else:
            prior = row["text"]
            new = text
            queries.set_item_text(conn, row["id"], new)
            extract_item_references(conn, row["id"], row["subject"], new)
        count = conn.execute("SELECT COUNT(*) FROM memory_references WHERE memory_item_id=?", (row["id"],)).fetchone()[
            0
        ]
        if then is not None:
            then()
        conn.execute(
            "INSERT INTO memory_corrections(memory_item_id, source_table, source_id, scope_key, operation, prior_text, "
            "new_text, prior_subject, created_at, before_state) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                row["id"],
                row["source_table"],
                row["source_id"],
                row["scope_key"],
                operation,
                prior,
                new,
                row["subject"],
                now,
                before,
            ),
        )
    return Edit(row["id"], count, prior, new)


_ANCHOR_COLUMNS = ("path", "symbol", "start_line", "end_line", "content_hash", "head_oid", "anchored_at")


def saved_anchors(conn: sqlite3.Connection, item_id: str) -> list[dict[str, object]]:
    """An item's anchors as rows to put back (`restore_anchors`)."""
    return [
        dict(r)
        for r in conn.execute(
            f"SELECT {', '.join(_ANCHOR_COLUMNS)} FROM memory_anchors WHERE memory_item_id=? ORDER BY id", (item_id,)
        )
    ]


def restore_anchors(conn: sqlite3.Connection, item_id: str, rows: list[dict[str, object]]) -> None:
    """Put an item's anchors back as `saved_anchors` read them (undoing a rewrite re-anchors nothing anew)."""
    queries.drop_anchors(conn, item_id)
    conn.executemany(
        f"INSERT INTO memory_anchors(memory_item_id, {', '.join(_ANCHOR_COLUMNS)}) VALUES (?,?,?,?,?,?,?,?)",
        [(item_id, *(r.get(c) for c in _ANCHOR_COLUMNS)) for r in rows],
    )


@dataclass(frozen=True)
class MovedRewrite:
    """What `rewrite_moved_references` changed: each moved path, where it went, and the audited edit."""

    id: str
    moves: list[dict[str, object]]
    """`{"from", "to", "count"}` per moved reference rewritten in the text."""
    edit: Edit


def rewrite_moved_references(
    conn: sqlite3.Connection, scope: Scope, item_or_note_id: str, now: str, *, expected_text: str | None = None
) -> MovedRewrite:
    """Rewrite each reference git reports as renamed (`[moved: a → b]`) to its new path in the memory's text; audited.

    The moves are re-checked against the checkout now, not taken from the caller. Only the text is rewritten
    (a subject is the note's identity and stays). Recorded like an edit, as operation `rewrite-moved`.

    Args:
        expected_text: the item's text as the caller showed it; if it changed since, nothing is written.

    Raises:
        NotFound: no such item. Refused: the item changed since it was shown (`changed`), has no moved reference
            (`nothing_moved`), or names the moved path only in its subject (`subject_only`).
    """
    row = find_item(conn, item_or_note_id)
    expected = row["text"] if expected_text is None else expected_text
    if row["text"] != expected:
        raise Refused(
            f"{row['id']} changed since it was shown; nothing was rewritten (look again, then retry)",
            code="changed",
            id=row["id"],
        )
    validation = Validator(conn, scope).validate(row["id"], row["scope_key"])
    moved = [(ref.path, ref.moved_to) for ref in validation.refs if ref.status == "moved" and ref.moved_to]
    renamed = _renamed_symbols(validation.anchors)
    # A symbol moved out of a file that is still there takes the file's mention along only when no other anchor of
    # the memory stays in that file (a note about f and g in a.py, where only f left, keeps naming a.py).
    stays = {a.recorded_path for a in validation.anchors if a.status in ("fresh", "drifted")}
    for a in validation.anchors:
        if a.status == "moved" and a.path != a.recorded_path and a.recorded_path not in stays:
            if all(old != a.recorded_path for old, _ in moved):
                moved.append((a.recorded_path, a.path))
    if not moved and not renamed:
        raise Refused(f"{row['id']} has no moved reference to rewrite", code="nothing_moved", id=row["id"])
    moved += renamed
    # A name from git is author text: one that is not a plain path (a control, an invisible character, a `]` or a
    # newline) is never copied into the memory; it is named, quoted, and left for a person to edit.
    hostile = [(old, new) for old, new in moved if quote_path(new) != new]
    moved = [(old, new) for old, new in moved if quote_path(new) == new]
    if not moved:
        named = ", ".join(f"{quote_path(old)} → {quote_path(new)}" for old, new in hostile)
        raise Refused(
            f"{row['id']}: git renamed to a name that is not a plain path ({named}); nothing was "
            "rewritten (edit the memory instead)",
            code="unsafe_name",
            id=row["id"],
        )
    text = row["text"]
    if row["source_table"] == "notes":
        content = queries.note_content(conn, row["source_id"])
        if content is None:
            raise not_found(str(row["id"]))
        text = content
    done: list[dict[str, object]] = []
    for old, new in moved:
        text, replaced = _rewrite_name(text, old, new) if (old, new) in renamed else paths.rewrite_path(text, old, new)
        if replaced:
            done.append({"from": old, "to": new, "count": replaced})
    if not done:
        named = ", ".join(old for old, _ in moved)
        raise Refused(
            f"{row['id']} names {named} only in its subject, which is not rewritten; edit the memory instead",
            code="subject_only",
            id=row["id"],
        )
    # The anchors made from the new text read the code as it is now: one that had drifted keeps the digest it was
    # written with, so following the code to its new place never accepts a change on the way (`reanchor` does).
    kept = {(a.path, a.current_symbol): (a.recorded_hash, a.head_oid) for a in validation.anchors if a.drifted}

    def keep_drift() -> None:
        for (path, symbol), (digest, head) in kept.items():
            conn.execute(
                "UPDATE memory_anchors SET content_hash=?, head_oid=? "
                "WHERE memory_item_id=? AND path=? AND symbol IS ?",
                (digest, head, row["id"], path, symbol),
            )

    before = json.dumps({"anchors": saved_anchors(conn, row["id"])})
    edit = _replace_text(
        conn, row, redact(text), "rewrite-moved", now, expected=expected, before=before, then=keep_drift
    )
    return MovedRewrite(row["id"], done, edit)


def _renamed_symbols(found: tuple[AnchorVerdict, ...]) -> list[tuple[str, str]]:
    """(old, new) of each anchored symbol found under another name, both plain names."""
    out = []
    for a in found:
        if a.status == "moved" and a.symbol and a.current_symbol and a.current_symbol != a.symbol:
            pair = (a.symbol, a.current_symbol)
            if pair not in out:
                out.append(pair)
    return out


def _rewrite_name(text: str, old: str, new: str) -> tuple[str, int]:
    """`text` with the symbol `old` (qualified or by its last part) named `new`; how many were replaced. A longer
    name, a path or a file name that merely contains it is left as it is."""
    count = 0
    if "." in old:
        text, count = re.subn(rf"(?<![\w$./-]){re.escape(old)}(?![\w$/-]|\.\w)", new, text)
    short, new_short = old.rsplit(".", 1)[-1], new.rsplit(".", 1)[-1]
    text, more = re.subn(rf"(?<![\w$./-]){re.escape(short)}(?![\w$/-]|\.\w)", new_short, text)
    return text, count + more


@dataclass(frozen=True)
class Deletion:
    """A delete preview, or what a confirmed delete removed."""

    id: str
    kind: str
    subject: str | None
    scope_key: str
    source: str | None
    references: int
    contested: bool
    text: str
    deleted: bool


def delete_memory(conn: sqlite3.Connection, item_or_note_id: str, now: str, *, yes: bool = False) -> Deletion:
    """Preview a delete, or with `yes` delete the item and its source row in one audited transaction.

    Raises:
        NotFound: no such item.
    """
    row = find_item(conn, item_or_note_id)
    refs = conn.execute("SELECT COUNT(*) FROM memory_references WHERE memory_item_id=?", (row["id"],)).fetchone()[0]
    note = None
    if row["source_table"] == "notes":
        note = queries.note_row(conn, row["source_id"])
    contested = bool(note is not None and note["conflict"])
    source = f"{row['source_table']}/{row['source_id']}" if row["source_table"] else None
    preview = Deletion(
        row["id"], row["kind"], row["subject"], row["scope_key"], source, refs, contested, row["text"], False
    )
    if not yes:
        return preview
    with transaction(conn):
        # A deleted note's whole row is kept with the audit, and the sides whose contest the delete closes: what
        # `cortex undo` puts back.
        before = None
        if note is not None:
            stored = conn.execute("SELECT * FROM notes WHERE id=?", (note["id"],)).fetchone()
            sides = (
                [
                    r["id"]
                    for r in conn.execute(
                        f"SELECT id FROM notes WHERE {IN_SCOPE} AND subject=? AND conflict=1 AND id != ?",
                        (note["scope_key"], note["subject"], note["id"]),
                    )
                ]
                if contested and note["subject"]
                else []
            )
            # The stored row may hold no content (schema 11 keeps it in the item): the row as the view reads it.
            before = json.dumps(
                {
                    "note": {**dict(stored), "content": note["content"]},
                    "contest": sides,
                    "references": recorded_references(conn, row["id"]),
                }
            )
        conn.execute(
            "INSERT INTO memory_corrections(memory_item_id, source_table, source_id, scope_key, operation, prior_text, "
            "new_text, prior_subject, created_at, before_state) VALUES (?,?,?,?, 'delete', ?, NULL, ?, ?, ?)",
            (
                row["id"],
                row["source_table"],
                row["source_id"],
                row["scope_key"],
                note["content"] if note is not None else row["text"],
                row["subject"],
                now,
                before,
            ),
        )
        if note is not None:
            # A deleted side leaves its contest as a resolved one does: two sides left stay contested.
            leave_contest(conn, note["id"])
            queries.delete_note(conn, note["id"])
            _forget_focus(conn, note)
        if row["source_table"] == "command_runs" or (
            row["source_table"] == "episodes" and row["kind"] != "episode:session_summary"
        ):
            # The source goes too, or the next `(seen Nx)` of the same failure would re-project the item. A session
            # summary's episode stays (without its item): it marks the session as summarised, so the summary is not
            # written again at the next SessionStart.
            conn.execute(f"DELETE FROM {row['source_table']} WHERE id=?", (row["source_id"],))
        queries.delete_item(conn, row["id"])
    return Deletion(**{**preview.__dict__, "deleted": True})


def _forget_focus(conn: sqlite3.Connection, note: sqlite3.Row) -> None:
    """A deleted focus or intent note takes the session focus it set with it.

    Each session whose focus came from this note falls back to the newest remaining focus (then intent) note
    of that session, or to none. Called inside the delete's transaction, after the note row is gone.
    """
    if note["kind"] not in ("focus", "intent") or not note["subject"]:
        return
    for session in conn.execute(
        "SELECT id FROM sessions WHERE scope_key=? AND focus=?", (note["scope_key"], note["subject"])
    ).fetchall():
        fallback = conn.execute(
            "SELECT subject FROM notes WHERE session=(SELECT rowid FROM sessions "
            "WHERE id=?) AND kind IN ('focus', 'intent') AND subject IS NOT NULL "
            "AND status='active' ORDER BY kind='focus' DESC, timestamp DESC, rowid DESC LIMIT 1",
            (session["id"],),
        ).fetchone()
        conn.execute(
            "UPDATE sessions SET focus=? WHERE id=?", (fallback["subject"] if fallback else None, session["id"])
        )
