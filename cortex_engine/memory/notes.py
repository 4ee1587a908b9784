"""Notes: writing with contradiction and supersession, resolving, and projecting into memory_items."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cortex_engine.base.errors import InvalidInput, NotFound, Refused
from cortex_engine.base.ids import new_id
from cortex_engine.base.lazy import LazyModule
from cortex_engine.base.records import record
from cortex_engine.memory.items import (
    IMPORTANCE,
    NOTE_KINDS,
    alternatives_list,
    demote,
    fresh_note_state,
    project_note_text,
)
from cortex_engine.scope.identity import Scope
from cortex_engine.store import queries
from cortex_engine.store.database import IN_SCOPE, scope_id, transaction

# Regex-heavy; imported on the first write, never by a read-only hook path.
if TYPE_CHECKING:  # the real modules, so that mypy checks every call through a lazy handle
    from cortex_engine.memory import contradiction
    from cortex_engine.scope import anchors, freshness, references
    from cortex_engine.store import redact as redaction
else:
    contradiction = LazyModule("memory.contradiction")
    references = LazyModule("scope.references")
    freshness = LazyModule("scope.freshness")
    anchors = LazyModule("scope.anchors")
    redaction = LazyModule("store.redact")


def clean_text(text: str) -> str:
    """Note text as stored: invisible characters removed and secrets redacted (`redact.clean_text`).

    The store's connection applies the same rule to every string it is given; a note applies it before
    anything is derived from its text (length checks, the normalized subject, contradiction signals).
    """
    return redaction.clean_text(text)


MAX_CONTENT_CHARS = 20_000
MAX_ALTERNATIVES_CHARS = 2_000
MAX_SUBJECT_CHARS = 200  # a subject names a topic in a few words; every surface prints it on one line


@record(frozen=True)
class Conflict:
    """An active decision the new note contradicts."""

    id: str
    subject: str | None
    timestamp: str
    content: str
    signal: str
    trigger: str


@record(frozen=True)
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
    value = " ".join(clean_text(subject).split()).lower()
    return value or None


def validate_note(kind: str, content: str, subject: str | None, alternatives: list[str] | None) -> None:
    """Refuse a note the store should not hold, before anything is written."""
    if kind not in NOTE_KINDS:
        raise InvalidInput(f"unknown note kind {kind!r}; use one of {', '.join(NOTE_KINDS)}", code="bad_kind")
    if not content.strip():
        raise InvalidInput("note text is empty", code="empty_text")
    if len(content) > MAX_CONTENT_CHARS and len(clean_text(content)) > MAX_CONTENT_CHARS:
        raise InvalidInput(f"note text is over {MAX_CONTENT_CHARS} characters", code="too_long")
    normalized = normalize_subject(subject)
    if kind != "insight" and normalized is None:
        raise InvalidInput(f"Subject is required for {kind} notes", code="subject_required")
    if normalized is not None and len(normalized) > MAX_SUBJECT_CHARS:
        raise InvalidInput(
            f"subject is {len(normalized)} characters; the limit is {MAX_SUBJECT_CHARS} "
            "(name the topic in a few words, put the detail in the note text)",
            code="too_long",
        )
    if alternatives and sum(len(clean_text(a)) for a in alternatives) > MAX_ALTERNATIVES_CHARS:
        raise InvalidInput(f"alternatives are over {MAX_ALTERNATIVES_CHARS} characters", code="too_long")


def item_id_for(note_id: str) -> str:
    """The memory-item id a note projects to."""
    return f"notes:{note_id}"


def _note_text(note: sqlite3.Row | Mapping[str, Any]) -> str:
    """The item text a note (a row or its values) projects to."""
    return project_note_text(
        note["kind"],
        note["content"],
        note["subject"],
        alternatives_list(note["alternatives"]),
        bool(note["conflict"]),
        note["status"],
        note["origin"] if "origin" in note.keys() else None,
    )


def sync_note_item(
    conn: sqlite3.Connection,
    note: sqlite3.Row | Mapping[str, Any],
    scope_type: str,
    *,
    demote_tier: bool = False,
    fresh: bool = False,
    prior: Mapping[str, Any] | None = None,
) -> None:
    """Project a note into memory_items (insert, or re-project keeping tier and access history); `fresh`: the note
    was just written, so it has no item yet. `prior`: what its references were recorded against before an action
    an undo takes back (`recorded_references`)."""
    text = _note_text(note)
    item_id = item_id_for(note["id"])
    row = (
        None
        if fresh
        else conn.execute("SELECT state, text, subject FROM memory_items WHERE id=?", (item_id,)).fetchone()
    )
    if row is None:
        conn.execute(
            "INSERT INTO memory_items(id, session, scope_type, scope_id, kind, subject, text, state, importance, "
            "created_at) VALUES (?,(SELECT rowid FROM sessions WHERE id=?),?,?,?,?,?,?,?,?)",
            (
                item_id,
                note["session_id"],
                scope_type,
                scope_id(conn, note["scope_key"]),
                f"note:{note['kind']}",
                note["subject"],
                text,
                fresh_note_state(note["kind"], note["status"]),
                IMPORTANCE.get(note["kind"], 0.5),
                note["timestamp"],
            ),
        )
    else:
        state = row["state"]
        if note["status"] == "resolved":
            state = "cold"
        elif demote_tier:
            state = demote(state)
        if row["text"] != text or row["subject"] != note["subject"]:
            conn.execute(
                "UPDATE memory_items SET text=?, subject=?, state=? WHERE id=?", (text, note["subject"], state, item_id)
            )
        elif state != row["state"]:
            queries.set_item_states(conn, [(state, item_id)])
        if row["text"] == text and row["subject"] == note["subject"] and prior is None:
            return
    extract_item_references(
        conn,
        item_id,
        note["subject"],
        text,
        fresh=row is None,
        anchor=True,
        scope_key=note["scope_key"] if row is None else None,
        prior=prior,
    )


def recorded_references(conn: sqlite3.Connection, item_id: str) -> dict[str, Any]:
    """What an item's references were recorded against, as JSON-able data: each path's HEAD and every anchor row.

    A write that changes the text keeps it in its audit row, so that an undo puts the references back recorded as
    they were (`extract_item_references(prior=...)`), not as if the old text had been written now.
    """
    heads = {
        str(r["normalized_path"]): r["head_oid"]
        for r in conn.execute(
            "SELECT normalized_path, head_oid FROM memory_references WHERE memory_item_id=? ORDER BY id", (item_id,)
        )
    }
    pinned = [
        dict(r)
        for r in conn.execute(
            "SELECT path, symbol, start_line, end_line, content_hash, head_oid, anchored_at FROM memory_anchors "
            "WHERE memory_item_id=? ORDER BY id",
            (item_id,),
        )
    ]
    return {"heads": heads, "anchors": pinned}


def extract_item_references(
    conn: sqlite3.Connection,
    item_id: str,
    subject: str | None,
    text: str,
    *,
    fresh: bool = False,
    anchor: bool = False,
    scope_key: str | None = None,
    prior: Mapping[str, Any] | None = None,
) -> int:
    """Replace an item's stored references with those extracted from its subject and text (`fresh`: it has none).

    Every write that re-records an item's references passes here (a note's edit, a contest opened or resolved, an
    undo, a captured item re-projected), and a path the item already referenced keeps the HEAD it was recorded on,
    with its anchors: a file renamed in a commit since still reads `moved`, never `stale: missing` because the text
    was re-recorded after the rename. `prior` (`recorded_references` as an audit row kept it) is what the
    references were recorded against before an action an undo takes back; it wins over what is stored now. A path
    new to the item is recorded at the current HEAD.

    With `anchor` (a note: a claim someone wrote) each new file reference is also anchored to the symbols and line
    ranges the text names; captured activity (command output, stack traces) is not, which keeps the flush
    from reading every file a traceback mentions.
    """
    before: dict[str, Any] = {"heads": {}, "anchors": []} if fresh else recorded_references(conn, item_id)
    heads: dict[str, str | None] = {**before["heads"], **(prior or {}).get("heads", {})}
    known_anchors: list[dict[str, Any]] = [*(prior or {}).get("anchors", []), *before["anchors"]]
    if not fresh:
        queries.drop_references(conn, item_id)
    if scope_key is None:
        scope = conn.execute("SELECT scope_key FROM scoped_items WHERE id=?", (item_id,)).fetchone()
        scope_key = scope[0] if scope is not None else None
    repo, head = freshness.repository_for(conn, scope_key) if scope_key is not None else (None, None)
    refs = references.extract_references(subject, text, repo)
    by_head: dict[str | None, list[tuple[str, str, str]]] = {}
    for r in refs:
        by_head.setdefault(heads.get(r.normalized, head), []).append((r.type, r.raw, r.normalized))
    for recorded, group in by_head.items():
        queries.add_references(conn, item_id, group, recorded)
    if not fresh:
        queries.drop_anchors(conn, item_id)
    kept_paths = {r.normalized for r in refs if r.type == "file" and r.normalized in heads}
    kept: list[dict[str, Any]] = []
    seen: set[tuple[object, ...]] = set()
    joined = text if subject is None else f"{subject}\n{text}"
    for a in known_anchors:
        key = (a["path"], a["symbol"], a["start_line"] if a["symbol"] is None else None)
        if a["path"] in kept_paths and key not in seen and _still_claimed(a, joined):
            seen.add(key)
            kept.append(a)
    conn.executemany(
        "INSERT INTO memory_anchors(memory_item_id, path, symbol, start_line, end_line, content_hash, head_oid, "
        "anchored_at) VALUES (?,?,?,?,?,?,?,?)",
        [
            (item_id, a["path"], a["symbol"], a["start_line"], a["end_line"], a["content_hash"], a["head_oid"])
            + (a.get("anchored_at"),)
            for a in kept
        ],
    )
    files = [r.normalized for r in refs if r.type == "file"] if anchor else []
    if repo is not None and files:
        found = [
            a
            for a in anchors.find_anchors(repo.worktree, files, joined)
            if (a.path, a.symbol, a.start if a.symbol is None else None) not in seen
        ]
        write_anchors(conn, item_id, found, head, None)
    return len(refs)


def _still_claimed(anchor: Mapping[str, Any], text: str) -> bool:
    """Whether the text still names what a kept anchor holds: its symbol (the last part of a qualified name, as a
    whole word) or its first line. A claim the text no longer makes is not kept (a rewritten name is anchored
    anew from the text)."""
    name = str(anchor["symbol"]).rpartition(".")[2] if anchor["symbol"] else str(anchor["start_line"])
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) is not None


def write_anchors(
    conn: sqlite3.Connection, item_id: str, found: list[anchors.Anchor], head: str | None, now: str | None
) -> None:
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
    origin: str | None = None,
    record: Callable[[sqlite3.Connection, str], None] | None = None,
) -> NoteWrite:
    """Insert a note in one IMMEDIATE transaction: detect contests, supersede priors, project.

    `now` is the note's timestamp. A write with an origin (a merged branch's note, a shared decision) is dated
    and may be older than notes already in the scope: the contradiction check still meets those, but only
    older notes are superseded by it, and a newer active note of the same kind and subject supersedes it on
    arrival. `origin` labels a note not written in its scope (`from <branch>`, `shared`). `record(conn, note_id)`
    runs inside the same transaction (a promotion or a shared file is recorded with its note, or neither is).

    Raises:
        InvalidInput: the kind, text, subject or alternatives are not acceptable (nothing is written).
    """
    validate_note(kind, content, subject, alternatives)
    subject_n = normalize_subject(subject)
    content = clean_text(content.strip())
    alts = [clean_text(a) for a in (alternatives or []) if a.strip()]
    note_id = new_id()
    conflicts: list[Conflict] = []
    superseded: list[str] = []
    with transaction(conn):
        priors = []
        if subject_n is not None:
            priors = queries.active_decision_peers(conn, scope.key, subject_n, kind)
        # Only a dated write (one with an origin) is placed among newer notes; a note written now has none, and
        # a local write keeps superseding whatever came before it.
        newer = [p for p in priors if p["timestamp"] > now] if origin else []
        priors = [p for p in priors if p["timestamp"] <= now] if origin else priors
        if detect:
            for prior in [*priors, *newer]:
                if prior["kind"] != "decision":
                    continue
                verdict = contradiction.compare(prior["content"], content)
                if verdict is not None:
                    conflicts.append(
                        Conflict(
                            prior["id"],
                            prior["subject"],
                            prior["timestamp"],
                            prior["content"],
                            verdict.signal,
                            verdict.trigger,
                        )
                    )
        veto = {c.id for c in conflicts} | {p["id"] for p in priors if p["conflict"]}
        status = "active"
        if kind in ("decision", "intent") and subject_n is not None:
            superseded = [p["id"] for p in priors if p["kind"] == kind and p["id"] not in veto]
            if any(p["kind"] == kind and p["id"] not in veto and not p["conflict"] for p in newer):
                status = "superseded"
                conflicts = []  # a note replaced on arrival is no side of a contest (`leave_contest`)
        supersede(conn, superseded)
        for conflict in conflicts:
            queries.mark_contested(conn, conflict.id)
        # The row is written already shared with its item (content NULL, its length kept) when the item's text
        # will begin `<kind>: <content>`, compared as stored, as the sharing trigger would: it then has nothing
        # to rewrite, and the item is projected from these values instead of from the row read back.
        note = {
            "id": note_id,
            "session_id": session_id,
            "scope_key": scope.key,
            "timestamp": now,
            "kind": kind,
            "subject": subject_n,  # cleaned by `normalize_subject`
            "content": content,
            "alternatives": json.dumps(alts) if alts else None,
            "status": status,
            "conflict": int(bool(conflicts)),
            "origin": clean_text(origin) if origin else None,
        }
        text = _note_text(note)
        conn.execute(
            "INSERT INTO notes(id, session, scope_id, timestamp, "
            "kind, subject, content, alternatives, status, conflict, "
            "origin, content_chars) SELECT ?1,(SELECT rowid FROM sessions WHERE id=?2),?3,?4,?5,?6, "
            "CASE WHEN shared THEN NULL ELSE ?7 END,?8,?9,?10,?11, CASE WHEN shared THEN length(?7) END "
            "FROM (SELECT substr(?12, 1, length(?5) + 2 + length(?7)) = ?5 || ': ' || ?7 AS shared)",
            (
                note_id,
                session_id,
                scope_id(conn, scope.key),
                now,
                kind,
                subject_n,
                content,
                note["alternatives"],
                status,
                note["conflict"],
                note["origin"],
                text,
            ),
        )
        if session_id and subject_n and (kind == "focus" or kind == "intent"):
            column = "focus=?" if kind == "focus" else "focus=COALESCE(focus, ?)"
            conn.execute(f"UPDATE sessions SET {column} WHERE id=?", (subject_n, session_id))
        for conflict in conflicts:
            _resync(conn, conflict.id, scope.type)
        sync_note_item(conn, note, scope.type, fresh=True)
        if record is not None:
            record(conn, note_id)
    return NoteWrite(note_id, item_id_for(note_id), kind, subject_n, content, now, tuple(conflicts), tuple(superseded))


def _resync(conn: sqlite3.Connection, note_id: str, scope_type: str, *, demote_tier: bool = False) -> None:
    note = queries.note_row(conn, note_id)
    if note is not None:
        sync_note_item(conn, note, _scope_type_of(note["scope_key"], scope_type), demote_tier=demote_tier)


def _scope_type_of(scope_key: str, fallback: str) -> str:
    head = scope_key.split(":", 1)[0]
    return head if head in ("branch", "detached", "project") else fallback


@record(frozen=True)
class Resolution:
    """What resolving a note did."""

    id: str
    kind: str
    subject: str | None
    status: str
    cleared_contest: bool
    replacement_id: str | None
    superseded: tuple[str, ...] = ()
    """Other active notes on the subject that the replacement superseded (the other sides of a contest)."""


def find_note(conn: sqlite3.Connection, note_or_item_id: str) -> sqlite3.Row:
    """Find a note by its id, its memory-item id, or a unique prefix of either (at least 8 characters).

    Raises:
        NotFound: nothing carries that id.
        InvalidInput: the prefix is shorter than 8 characters or matches more than one note.
    """
    from cortex_engine.base.ids import resolve_prefix

    raw = note_or_item_id.strip()
    note_id = raw[len("notes:") :] if raw.startswith("notes:") else raw
    note: sqlite3.Row | None = queries.note_row(conn, note_id)
    if note is None:
        full = resolve_prefix(conn, "notes", note_id, what="note")
        note = queries.note_row(conn, full) if full else None
    if note is None:
        raise NotFound(f'no note found for id "{raw}"', id=raw)
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
    expected_sides: Sequence[str] | None = None,
) -> Resolution:
    """Resolve or supersede a note by id, or by subject in this scope; optionally write its replacement.

    The rules (README "Resolving and superseding" says the same):

    - One side of a contest, by id, without a replacement: that side takes `status`. The sides still
      active keep standing; when one is left it is no longer contested (the contest is closed and it is the
      one active decision on the subject); when two or more are left they stay contested with each other.
    - Any note (a side of a contest or not), by id or by subject, with a replacement: the note takes
      `status`, the replacement is written as an active note of the same kind and subject, and every other
      active note of that kind on the subject in that scope is superseded (one tier cooler). The contest,
      if any, is closed: exactly one active note of that kind remains on the subject, the replacement.
    - By subject without a replacement: the newest active note on the subject in this scope takes
      `status`. Refused while a contest is open on the subject (it would have to guess the side).
    - By subject with a replacement on a contested subject: every side is superseded by the replacement.

    Args:
        expected_sides: the note ids of the contest as the caller saw it; checked inside the write transaction,
            so a contest resolved or joined by another process since is refused rather than acted on blindly.

    Raises:
        InvalidInput: neither or both of id and subject, an unknown status, an empty replacement, or an
            ambiguous id prefix.
        NotFound: no such note, or no active note on the subject.
        Refused: resolving by subject, without a replacement, while a contest is open on it; or the contest is
            not the one the caller saw (`expected_sides`).
    """
    if status not in ("resolved", "superseded"):
        raise InvalidInput(f"unknown status {status!r}; use resolved or superseded", code="bad_status")
    if (note_id is None) == (subject is None):
        raise InvalidInput("give exactly one of a note id or a subject", code="id_or_subject")
    if replacement is not None and not replacement.strip():
        raise InvalidInput("replacement text is empty", code="empty_text")
    if note_id is not None:
        note = find_note(conn, note_id)
    else:
        subject_n = normalize_subject(subject)
        if subject_n is None:
            raise InvalidInput("subject is empty", code="bad_args")
        active = conn.execute(
            f"SELECT * FROM scoped_notes WHERE {IN_SCOPE} AND subject=? "
            "AND status='active' ORDER BY timestamp DESC, rowid DESC",
            (scope.key, subject_n),
        ).fetchall()
        contested = [n for n in active if n["conflict"]]
        if len(contested) > 1 and replacement is None:
            ids = ", ".join(n["id"] for n in contested)
            raise Refused(
                f'"{subject_n}" has an open contest between {ids}; resolve one side by id, or give a replacement '
                "(resolving by subject would have to guess which side you meant)",
                code="contested_subject",
                ids=[n["id"] for n in contested],
            )
        if not active:
            raise NotFound(f'no active note on subject "{subject_n}" in this scope', subject=subject_n)
        note = contested[0] if contested else active[0]
    if replacement is not None:
        validate_note(note["kind"], replacement, note["subject"], None)
    replacement_id = None
    others: list[str] = []
    with transaction(conn):
        if expected_sides is not None:
            check_contest(conn, note["id"], expected_sides)
        touched = note_states(conn, note)
        if replacement is not None:
            replacement_id = _insert_replacement(conn, note, session_id, replacement, now)
            if note["subject"]:
                others = [
                    r["id"]
                    for r in conn.execute(
                        f"SELECT id FROM notes WHERE {IN_SCOPE} AND subject=? "
                        "AND kind=? AND status='active' AND id NOT IN (?, ?)",
                        (note["scope_key"], note["subject"], note["kind"], note["id"], replacement_id),
                    )
                ]
            supersede(conn, others)
        retire(conn, note["id"], status)
        cleared = bool(note["conflict"] and note["subject"]) and not contest_sides(
            conn, note["scope_key"], note["subject"]
        )
        # Audited with what it changed, so `cortex undo` can put every touched note back (and take the replacement out).
        after = {**note_states(conn, note), "replacement": replacement_id}
        conn.execute(
            "INSERT INTO memory_corrections(memory_item_id, source_table, source_id, scope_key, operation, prior_text, "
            "new_text, prior_subject, created_at, before_state, after_state) VALUES (?,?,?,?, 'resolve', ?,?,?,?,?,?)",
            (
                item_id_for(note["id"]),
                "notes",
                note["id"],
                note["scope_key"],
                note["content"],
                status,
                note["subject"],
                now,
                json.dumps(touched),
                json.dumps(after),
            ),
        )
    return Resolution(note["id"], note["kind"], note["subject"], status, cleared, replacement_id, tuple(others))


def note_states(conn: sqlite3.Connection, note: sqlite3.Row) -> dict[str, object]:
    """`{"notes": {id: [status, conflict]}}` for a note and every note on its subject in its scope: what a resolve
    may change, recorded before and after it (the audit an undo reads)."""
    if note["subject"]:
        rows = conn.execute(
            f"SELECT id, status, conflict FROM notes WHERE {IN_SCOPE} AND subject=?",
            (note["scope_key"], note["subject"]),
        ).fetchall()
    else:
        rows = conn.execute("SELECT id, status, conflict FROM notes WHERE id=?", (note["id"],)).fetchall()
    return {"notes": {r["id"]: [r["status"], r["conflict"]] for r in rows}}


# -- the write rules: every path that retires a note or replaces one goes through these two -----------------


def contest_sides(conn: sqlite3.Connection, scope_key: str, subject: str) -> list[str]:
    """The open sides of the contest on `subject` in a scope: its active notes flagged contested, oldest first."""
    return [
        row["id"]
        for row in conn.execute(
            f"SELECT id FROM notes WHERE {IN_SCOPE} AND subject=? AND "
            "conflict=1 AND status='active' ORDER BY timestamp, rowid",
            (scope_key, subject),
        )
    ]


def leave_contest(conn: sqlite3.Connection, note_id: str) -> None:
    """This side leaves the contest on its subject (it was resolved, superseded, withdrawn or is being deleted).

    Its own flag drops. The sides still active keep standing: two or more stay contested with each other; when
    one is left, the contest is closed and that one is the decision on the subject (its flag drops too). Every
    other note whose flag changed is re-projected; the caller re-projects (or deletes) the note itself. Call it
    inside the write transaction, after the note's status changed (before its row is deleted).
    """
    note = conn.execute("SELECT scope_key, subject, conflict FROM scoped_notes WHERE id=?", (note_id,)).fetchone()
    if note is None or not note["conflict"]:
        return
    conn.execute("UPDATE notes SET conflict=0 WHERE id=?", (note_id,))
    if not note["subject"] or len(contest_sides(conn, note["scope_key"], note["subject"])) > 1:
        return
    # The last side standing is the decision; a flag left on a retired note (a store written before) goes too.
    flagged = [
        row["id"]
        for row in conn.execute(
            f"SELECT id FROM notes WHERE {IN_SCOPE} AND subject=? AND conflict=1", (note["scope_key"], note["subject"])
        )
    ]
    for other_id in flagged:
        conn.execute("UPDATE notes SET conflict=0 WHERE id=?", (other_id,))
        _resync(conn, other_id, "branch")


def retire(conn: sqlite3.Connection, note_id: str, status: str) -> None:
    """The note takes `status` (resolved, superseded) and leaves any contest; re-projected, one tier cooler when
    newly superseded (a resolved note goes cold)."""
    before = conn.execute("SELECT status FROM notes WHERE id=?", (note_id,)).fetchone()
    conn.execute("UPDATE notes SET status=? WHERE id=?", (status, note_id))
    leave_contest(conn, note_id)
    _resync(
        conn,
        note_id,
        "branch",
        demote_tier=status == "superseded" and before is not None and before["status"] != "superseded",
    )


def supersede(conn: sqlite3.Connection, note_ids: Sequence[str]) -> None:
    """This replaces that: each of `note_ids` is superseded (`retire`), leaving any contest it was a side of.

    The one rule a new note on a subject, a replacement written by `resolve`, a merged, shared or imported note
    and a retired decision file all apply to what they replace. Call it inside the write transaction.
    """
    for note_id in note_ids:
        retire(conn, note_id, "superseded")


def check_contest(conn: sqlite3.Connection, note_id: str, expected_sides: Sequence[str]) -> None:
    """Refuse unless `note_id` is a side of an open contest whose sides are exactly `expected_sides`.

    Call it inside the write transaction that acts on the contest (the check and the act see one state).

    Raises:
        Refused: code `contest_changed`, naming what the contest is now.
    """
    note = conn.execute("SELECT scope_key, subject FROM scoped_notes WHERE id=?", (note_id,)).fetchone()
    current = contest_sides(conn, note["scope_key"], note["subject"]) if note is not None and note["subject"] else []
    if note_id in current and set(current) == set(expected_sides):
        return
    subject = note["subject"] if note is not None else None
    now = f"its open sides are now {', '.join(i[:8] for i in current)}" if current else "it is no longer open"
    raise Refused(
        f'the contest on "{subject or note_id}" changed since it was shown: {now}; nothing was changed',
        code="contest_changed",
        expected=list(expected_sides),
        current=current,
    )


def _insert_replacement(
    conn: sqlite3.Connection, note: sqlite3.Row, session_id: str | None, text: str, now: str
) -> str:
    """Insert the replacement note (same kind and subject, no contest detection, no auto-supersede)."""
    replacement_id = new_id()
    conn.execute(
        "INSERT INTO notes(id, session, scope_id, timestamp, kind, subject, content, alternatives, status, conflict) "
        "VALUES (?,(SELECT rowid FROM sessions WHERE id=?),?,?,?,?,?,NULL,'active',0)",
        (
            replacement_id,
            session_id,
            scope_id(conn, note["scope_key"]),
            now,
            note["kind"],
            note["subject"],
            clean_text(text.strip()),
        ),
    )
    _resync(conn, replacement_id, _scope_type_of(note["scope_key"], "branch"))
    return replacement_id
