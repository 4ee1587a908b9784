"""Notes: writing with contradiction and supersession, resolving, and projecting into memory_items."""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from dataclasses import dataclass

from .errors import InvalidInput, NotFound, Refused
from .memory import (
    IMPORTANCE,
    NOTE_KINDS,
    alternatives_list,
    demote,
    fresh_note_state,
    project_note_text,
)
from .lazy import LazyModule
from .scope import Scope
from .store import rollback

# Regex-heavy; imported on the first write, never by a read-only hook path.
contradiction = LazyModule("contradiction")
references = LazyModule("references")
freshness = LazyModule("freshness")
anchors = LazyModule("anchors")
redaction = LazyModule("redact")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def clean_text(text: str) -> str:
    """Note text as stored: secrets redacted and terminal control characters removed (tabs and newlines kept).

    A note is the author's words, but a token pasted into a decision would otherwise be injected into every
    later brief; the redaction that capture applies applies here too.
    """
    return _CONTROL.sub("", redaction.redact(text))

MAX_CONTENT_CHARS = 20_000
MAX_ALTERNATIVES_CHARS = 2_000


@dataclass(frozen=True)
class Conflict:
    """An active decision the new note contradicts."""

    id: str
    subject: str | None
    timestamp: str
    content: str
    signal: str
    trigger: str


@dataclass(frozen=True)
class NoteWrite:
    """What writing a note did."""

    id: str
    item_id: str
    kind: str
    subject: str | None
    content: str
    timestamp: str
    conflicts: tuple[Conflict, ...]
    superseded: tuple[str, ...]


def normalize_subject(subject: str | None) -> str | None:
    """Subjects are stored trimmed, whitespace-collapsed and lowercased; blank means none."""
    if subject is None:
        return None
    value = " ".join(_CONTROL.sub("", redaction.redact(subject)).split()).lower()
    return value or None


def validate_note(kind: str, content: str, subject: str | None, alternatives: list[str] | None) -> None:
    """Refuse a note the store should not hold, before anything is written."""
    if kind not in NOTE_KINDS:
        raise InvalidInput(f"unknown note kind {kind!r}; use one of {', '.join(NOTE_KINDS)}", code="bad_kind")
    if not content.strip():
        raise InvalidInput("note text is empty", code="empty_text")
    if len(content) > MAX_CONTENT_CHARS and len(clean_text(content)) > MAX_CONTENT_CHARS:
        raise InvalidInput(f"note text is over {MAX_CONTENT_CHARS} characters", code="too_long")
    if kind != "insight" and normalize_subject(subject) is None:
        raise InvalidInput(f"Subject is required for {kind} notes", code="subject_required")
    if alternatives and sum(len(clean_text(a)) for a in alternatives) > MAX_ALTERNATIVES_CHARS:
        raise InvalidInput(f"alternatives are over {MAX_ALTERNATIVES_CHARS} characters", code="too_long")


def item_id_for(note_id: str) -> str:
    """The memory-item id a note projects to."""
    return f"notes:{note_id}"


def sync_note_item(conn: sqlite3.Connection, note: sqlite3.Row, scope_type: str, *, demote_tier: bool = False) -> None:
    """Project a note into memory_items (insert, or re-project keeping tier and access history)."""
    alternatives = alternatives_list(note["alternatives"])
    text = project_note_text(
        note["kind"], note["content"], note["subject"], alternatives, bool(note["conflict"]), note["status"]
    )
    item_id = item_id_for(note["id"])
    row = conn.execute("SELECT state, text, subject FROM memory_items WHERE id=?", (item_id,)).fetchone()
    if row is None:
        conn.execute(
            "INSERT INTO memory_items(id, session_id, scope_type, scope_key, kind, source_table, source_id, subject, "
            "text, state, importance, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                item_id, note["session_id"], scope_type, note["scope_key"], f"note:{note['kind']}", "notes",
                note["id"], note["subject"], text, fresh_note_state(note["kind"], note["status"]),
                IMPORTANCE.get(note["kind"], 0.5), note["timestamp"],
            ),
        )
    else:
        state = row["state"]
        if note["status"] == "resolved":
            state = "cold"
        elif demote_tier:
            state = demote(state)
        if row["text"] != text or row["subject"] != note["subject"]:
            conn.execute("UPDATE memory_items SET text=?, subject=?, state=? WHERE id=?", (text, note["subject"], state, item_id))
        elif state != row["state"]:
            conn.execute("UPDATE memory_items SET state=? WHERE id=?", (state, item_id))
        if row["text"] == text and row["subject"] == note["subject"]:
            return
    extract_item_references(conn, item_id, note["subject"], text, fresh=row is None, anchor=True)


def extract_item_references(conn: sqlite3.Connection, item_id: str, subject: str | None, text: str, *,
                            fresh: bool = False, anchor: bool = False) -> int:
    """Replace an item's stored references with those extracted from its subject and text (`fresh`: it has none).

    With `anchor` (a note: a claim someone wrote) each file reference is also anchored to the symbols and line
    ranges the text names; captured activity (command output, stack traces) is not, which keeps the flush
    from reading every file a traceback mentions.
    """
    if not fresh:
        conn.execute("DELETE FROM memory_references WHERE memory_item_id=?", (item_id,))
    scope = conn.execute("SELECT scope_key FROM memory_items WHERE id=?", (item_id,)).fetchone()
    repo, head = freshness.repository_for(conn, scope[0]) if scope is not None else (None, None)
    refs = references.extract_references(subject, text, repo)
    conn.executemany(
        "INSERT INTO memory_references(memory_item_id, reference_type, raw_reference, normalized_path, head_oid) "
        "VALUES (?,?,?,?,?)",
        [(item_id, r.type, r.raw, r.normalized, head) for r in refs],
    )
    if not fresh:
        conn.execute("DELETE FROM memory_anchors WHERE memory_item_id=?", (item_id,))
    files = [r.normalized for r in refs if r.type == "file"] if anchor else []
    if repo is not None and files:
        joined = text if subject is None else f"{subject}\n{text}"
        write_anchors(conn, item_id, anchors.find_anchors(repo.worktree, files, joined), head, None)
    return len(refs)


def write_anchors(conn: sqlite3.Connection, item_id: str, found: list, head: str | None, now: str | None) -> None:
    """Store an item's anchors (`anchors.Anchor`), recorded at `head`."""
    conn.executemany(
        "INSERT INTO memory_anchors(memory_item_id, path, symbol, start_line, end_line, content_hash, head_oid, "
        "anchored_at) VALUES (?,?,?,?,?,?,?,?)",
        [(item_id, a.path, a.symbol, a.start, a.end, a.digest, head, now) for a in found],
    )


def write_note(
    conn: sqlite3.Connection,
    scope: Scope,
    session_id: str | None,
    kind: str,
    content: str,
    subject: str | None,
    alternatives: list[str] | None,
    now: str,
    *,
    detect: bool = True,
) -> NoteWrite:
    """Insert a note in one IMMEDIATE transaction: detect contests, supersede priors, project.

    Raises:
        InvalidInput: the kind, text, subject or alternatives are not acceptable (nothing is written).
    """
    validate_note(kind, content, subject, alternatives)
    subject_n = normalize_subject(subject)
    content = clean_text(content.strip())
    alts = [clean_text(a) for a in (alternatives or []) if a.strip()]
    note_id = str(uuid.uuid4())
    conflicts: list[Conflict] = []
    superseded: list[str] = []
    conn.execute("BEGIN IMMEDIATE")
    try:
        priors = []
        if subject_n is not None:
            priors = conn.execute(
                "SELECT * FROM notes WHERE scope_key=? AND subject=? AND status='active' AND (kind='decision' OR kind=?) "
                "ORDER BY timestamp, rowid",
                (scope.key, subject_n, kind),
            ).fetchall()
        if detect:
            for prior in priors:
                if prior["kind"] != "decision":
                    continue
                verdict = contradiction.compare(prior["content"], content)
                if verdict is not None:
                    conflicts.append(
                        Conflict(prior["id"], prior["subject"], prior["timestamp"], prior["content"], verdict.signal, verdict.trigger)
                    )
        veto = {c.id for c in conflicts} | {p["id"] for p in priors if p["conflict"]}
        if kind in ("decision", "intent") and subject_n is not None:
            superseded = [p["id"] for p in priors if p["kind"] == kind and p["id"] not in veto]
        for prior_id in superseded:
            conn.execute("UPDATE notes SET status='superseded' WHERE id=?", (prior_id,))
        for conflict in conflicts:
            conn.execute("UPDATE notes SET conflict=1 WHERE id=?", (conflict.id,))
        conn.execute(
            "INSERT INTO notes(id, session_id, scope_key, timestamp, kind, subject, content, alternatives, status, conflict) "
            "VALUES (?,?,?,?,?,?,?,?, 'active', ?)",
            (note_id, session_id, scope.key, now, kind, subject_n, content, json.dumps(alts) if alts else None, int(bool(conflicts))),
        )
        if session_id and subject_n and (kind == "focus" or kind == "intent"):
            column = "focus=?" if kind == "focus" else "focus=COALESCE(focus, ?)"
            conn.execute(f"UPDATE sessions SET {column} WHERE id=?", (subject_n, session_id))
        for prior_id in superseded:
            _resync(conn, prior_id, scope.type, demote_tier=True)
        for conflict in conflicts:
            _resync(conn, conflict.id, scope.type)
        _resync(conn, note_id, scope.type)
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return NoteWrite(note_id, item_id_for(note_id), kind, subject_n, content, now, tuple(conflicts), tuple(superseded))


def _resync(conn: sqlite3.Connection, note_id: str, scope_type: str, *, demote_tier: bool = False) -> None:
    note = conn.execute("SELECT * FROM notes WHERE id=?", (note_id,)).fetchone()
    if note is not None:
        sync_note_item(conn, note, _scope_type_of(note["scope_key"], scope_type), demote_tier=demote_tier)


def _scope_type_of(scope_key: str, fallback: str) -> str:
    head = scope_key.split(":", 1)[0]
    return head if head in ("branch", "detached", "project") else fallback


@dataclass(frozen=True)
class Resolution:
    """What resolving a note did."""

    id: str
    kind: str
    subject: str | None
    status: str
    cleared_contest: bool
    replacement_id: str | None


def find_note(conn: sqlite3.Connection, note_or_item_id: str) -> sqlite3.Row:
    """Find a note by its id or its memory-item id.

    Raises:
        NotFound: nothing carries that id.
    """
    raw = note_or_item_id.strip()
    note_id = raw[len("notes:"):] if raw.startswith("notes:") else raw
    note = conn.execute("SELECT * FROM notes WHERE id=?", (note_id,)).fetchone()
    if note is None:
        raise NotFound(f'No note found for id "{raw}". List ids with: cortex list-memory', id=raw)
    return note


def resolve_note(
    conn: sqlite3.Connection,
    scope: Scope,
    session_id: str | None,
    now: str,
    *,
    note_id: str | None = None,
    subject: str | None = None,
    status: str = "resolved",
    replacement: str | None = None,
) -> Resolution:
    """Resolve or supersede a note by id, or by subject in this scope; optionally write its replacement.

    Raises:
        InvalidInput: neither or both of id and subject, or an unknown status.
        NotFound: no such note, or no active note on the subject.
        Refused: resolving by subject while a contest is open on it.
    """
    if status not in ("resolved", "superseded"):
        raise InvalidInput(f"unknown status {status!r}; use resolved or superseded", code="bad_status")
    if (note_id is None) == (subject is None):
        raise InvalidInput("give exactly one of a note id or --subject", code="bad_args")
    if replacement is not None and not replacement.strip():
        raise InvalidInput("replacement text is empty", code="empty_text")
    if note_id is not None:
        note = find_note(conn, note_id)
    else:
        subject_n = normalize_subject(subject)
        if subject_n is None:
            raise InvalidInput("subject is empty", code="bad_args")
        active = conn.execute(
            "SELECT * FROM notes WHERE scope_key=? AND subject=? AND status='active' ORDER BY timestamp DESC, rowid DESC",
            (scope.key, subject_n),
        ).fetchall()
        contested = [n for n in active if n["conflict"]]
        if len(contested) > 1:
            ids = ", ".join(n["id"] for n in contested)
            raise Refused(
                f'"{subject_n}" has an open contest between {ids}; resolve one side by id '
                "(resolving by subject would have to guess which side you meant)",
                code="contested_subject",
                ids=[n["id"] for n in contested],
            )
        if not active:
            raise NotFound(f'No active note on subject "{subject_n}" in this scope', subject=subject_n)
        note = active[0]
    if replacement is not None:
        validate_note(note["kind"], replacement, note["subject"], None)
    replacement_id = None
    conn.execute("BEGIN IMMEDIATE")
    try:
        if replacement is not None:
            replacement_id = _insert_replacement(conn, note, session_id, replacement, now)
        before = note["status"]
        conn.execute("UPDATE notes SET status=? WHERE id=?", (status, note["id"]))
        cleared = False
        if note["conflict"] and note["subject"]:
            conn.execute(
                "UPDATE notes SET conflict=0 WHERE scope_key=? AND subject=? AND conflict=1", (note["scope_key"], note["subject"])
            )
            cleared = True
            for other in conn.execute(
                "SELECT id FROM notes WHERE scope_key=? AND subject=? AND id != ?", (note["scope_key"], note["subject"], note["id"])
            ).fetchall():
                _resync(conn, other["id"], scope.type)
        _resync(conn, note["id"], scope.type, demote_tier=(status == "superseded" and before != "superseded"))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return Resolution(note["id"], note["kind"], note["subject"], status, cleared, replacement_id)


def _insert_replacement(conn: sqlite3.Connection, note: sqlite3.Row, session_id: str | None, text: str, now: str) -> str:
    """Insert the replacement note (same kind and subject, no contest detection, no auto-supersede)."""
    new_id = str(uuid.uuid4())
    conn.execute(
        "INSERT INTO notes(id, session_id, scope_key, timestamp, kind, subject, content, alternatives, status, conflict) "
        "VALUES (?,?,?,?,?,?,?,NULL,'active',0)",
        (new_id, session_id, note["scope_key"], now, note["kind"], note["subject"], clean_text(text.strip())),
    )
    _resync(conn, new_id, "branch")
    return new_id
