"""Inspection and correction: list, inspect, edit and delete memory, every correction audited."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field

from . import anchors, history
from .errors import InvalidInput, NotFound, Refused
from .freshness import AnchorVerdict, Validator
from .memory import KIND_WEIGHTS, STATES, alternatives_list, collapse, is_contested, is_superseded
from .notes import extract_item_references, item_id_for, sync_note_item
from .redact import redact
from .render import item_labels, label_tag, short_kind
from .scope import Scope
from .store import transaction

LIST_DEFAULT = 20
LIST_MAX = 200
ORDER_TEXT = "newest first (created_at DESC, rowid DESC)"
_SAFE_ARG = re.compile(r"^[A-Za-z0-9,._:@/+-]+$")
_TRAILER_START = re.compile(r"^(subject|alternatives|conflict|status):", re.IGNORECASE)


def not_found(item_id: str) -> NotFound:
    """The error for an id that names nothing (adapters add how to list ids in their own words)."""
    return NotFound(f'no memory item found for id "{item_id}"', code="not_found", id=item_id)


def find_item(conn: sqlite3.Connection, item_or_note_id: str) -> sqlite3.Row:
    """A memory item by its own id, the id of the note behind it, or a unique prefix of either (≥ 8 characters).

    Raises:
        NotFound: nothing matches.
        InvalidInput: the prefix matches more than one item.
    """
    from .ids import resolve_prefix

    raw = item_or_note_id.strip()
    row = conn.execute("SELECT rowid, * FROM memory_items WHERE id=?", (raw,)).fetchone()
    if row is None:
        row = conn.execute("SELECT rowid, * FROM memory_items WHERE id=?", (item_id_for(raw),)).fetchone()
    if row is None:
        full = resolve_prefix(conn, "memory_items", raw, what="memory item")
        row = conn.execute("SELECT rowid, * FROM memory_items WHERE id=?", (full,)).fetchone() if full else None
    if row is None:
        raise not_found(raw)
    return row


ITEM_KINDS = tuple(KIND_WEIGHTS)
"""Every kind of memory item, by its stored name (`note:decision`, `episode:command_failure`, `command_run`, …)."""


def short_kind_name(kind: str) -> str:
    """The short name a person types for a kind: `note:decision` → `decision`, `command_run` stays."""
    return kind.split(":", 1)[1] if ":" in kind else kind


def normalize_kinds(kinds: list[str] | None) -> list[str] | None:
    """Stored kind names for what a person typed: a full name or its short name (`decision`, `command_failure`).

    Raises:
        InvalidInput: a name that is no kind (the message lists the valid ones).
    """
    if not kinds:
        return None
    by_name = {**{short_kind_name(k): k for k in ITEM_KINDS}, **{k: k for k in ITEM_KINDS}}
    out = []
    for kind in kinds:
        full = by_name.get(kind.strip().lower())
        if full is None:
            valid = ", ".join(short_kind_name(k) for k in ITEM_KINDS)
            raise InvalidInput(f"unknown kind {kind!r}; valid kinds: {valid} (or their full names, e.g. note:decision)",
                               code="bad_kind", kinds=[short_kind_name(k) for k in ITEM_KINDS])
        if full not in out:
            out.append(full)
    return out


def scope_label(key: str) -> str:
    """A scope key as a person reads it: the branch, `detached@abc1234`, or `project`.

    Git forbids `:` in ref names, so a branch is whatever follows the key's last colon.
    """
    kind, _, rest = key.partition(":")
    if kind == "branch":
        return rest.rsplit(":", 1)[-1]
    if kind == "detached":
        return f"detached@{rest.rsplit(':', 1)[-1][:7]}"
    return "project"


@dataclass
class Page:
    """One page of list-memory."""

    total: int
    offset: int
    limit: int
    items: list[dict[str, object]]
    filters: dict[str, list[str]]

    def to_dict(self) -> dict[str, object]:
        """The `list-memory --json` shape."""
        return {
            "total": self.total, "offset": self.offset, "limit": self.limit, "order": ORDER_TEXT,
            "filters": self.filters, "items": self.items,
        }


LABEL_FILTERS = ("contested", "stale", "drifted", "superseded")
"""The labels a listing can be narrowed to (an item is listed when it carries any of those asked for)."""
SORTS = ("created", "kind", "state", "subject", "scope")
"""Columns a listing can be ordered by; each has a natural direction (created: newest first; state: pinned first;
the others A→Z) that `reverse` flips. Ties are always newest first."""
_SORT_SQL = {
    "kind": "CASE kind " + " ".join(f"WHEN '{k}' THEN {n}" for n, k in enumerate(sorted(ITEM_KINDS, key=short_kind)))
            + f" ELSE {len(ITEM_KINDS)} END",  # by the short name the operator reads (`failure`, not `episode:…`)
    "scope": "scope_key", "subject": "COALESCE(subject, '') COLLATE NOCASE",
    "state": "CASE state " + " ".join(f"WHEN '{s}' THEN {n}" for n, s in enumerate(STATES)) + f" ELSE {len(STATES)} END",
}
_LABEL_CANDIDATES = {
    "contested": "(kind LIKE 'note:%' AND instr(text, char(10) || 'Conflict: ') > 0)",
    "superseded": "(kind LIKE 'note:%' AND instr(text, char(10) || 'Status: ') > 0)",
    "stale": "(id IN (SELECT memory_item_id FROM memory_references) OR id IN (SELECT memory_item_id FROM memory_anchors))",
    "drifted": "id IN (SELECT memory_item_id FROM memory_anchors)",
}
"""A cheap SQL superset of the items that can carry each label; `render.item_labels` decides."""


def _order_by(sort: str, reverse: bool) -> str:
    if sort not in SORTS:
        raise InvalidInput(f"unknown sort {sort!r}; use {', '.join(SORTS)}", code="bad_sort")
    if sort == "created":
        way = "ASC" if reverse else "DESC"
        return f"created_at {way}, rowid {way}"
    way = " DESC" if reverse else ""
    last = "COALESCE(subject, '') = '', " if sort == "subject" else ""  # items without a subject last, either way
    return f"{last}{_SORT_SQL[sort]}{way}, created_at DESC, rowid DESC"


def _filter_clause(
    scopes: list[str] | None, kinds: list[str] | None, states: list[str] | None, text: str | None,
    labels: list[str] | None,
) -> tuple[str, list[object]]:
    where: list[str] = []
    args: list[object] = []
    for column, values in (("scope_key", scopes), ("kind", kinds), ("state", states)):
        if values:
            where.append(f"{column} IN ({','.join('?' * len(values))})")
            args.extend(values)
    if text:
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        where.append("(COALESCE(subject, '') LIKE ? ESCAPE '\\' OR text LIKE ? ESCAPE '\\')")
        args.extend([pattern, pattern])
    if labels:
        where.append("(" + " OR ".join(_LABEL_CANDIDATES[label] for label in labels) + ")")
    return (f" WHERE {' AND '.join(where)}" if where else ""), args


def normalize_labels(labels: list[str] | None) -> list[str] | None:
    """The label filters asked for, checked against `LABEL_FILTERS`.

    Raises:
        InvalidInput: a name that is not one of them.
    """
    if not labels:
        return None
    out: list[str] = []
    for label in labels:
        name = label.strip().lower()
        if name not in LABEL_FILTERS:
            raise InvalidInput(f"unknown label {label!r}; use {', '.join(LABEL_FILTERS)}", code="bad_label")
        if name not in out:
            out.append(name)
    return out


def list_memory(
    conn: sqlite3.Connection,
    *,
    scopes: list[str] | None = None,
    kinds: list[str] | None = None,
    states: list[str] | None = None,
    text: str | None = None,
    labels: list[str] | None = None,
    validator: Validator | None = None,
    sort: str = "created",
    reverse: bool = False,
    limit: int | None = None,
    offset: int = 0,
) -> Page:
    """Every memory item, newest first, with no default filters (archived and other scopes included).

    Args:
        text: only items whose subject or text contains this, case-insensitively (a plain substring, not a query).
        labels: only items carrying any of these `LABEL_FILTERS`, as `render.item_labels` labels them; stale and
            drifted are judged against the checkout by `validator` (required for them).
        sort: one of `SORTS` (default: created, newest first); `reverse` flips its direction.

    Raises:
        InvalidInput: an unknown kind, state, label or sort, or a negative offset.
    """
    kinds = normalize_kinds(kinds)
    labels = normalize_labels(labels)
    for state in states or []:
        if state not in STATES:
            raise InvalidInput(f"unknown state {state!r}; use {', '.join(STATES)}", code="bad_state")
    if offset < 0:
        raise InvalidInput("offset must be 0 or more", code="bad_args")
    if offset >= 2**63:  # SQLite's integers are 64-bit: a larger offset would escape as an OverflowError
        raise InvalidInput("offset is too large", code="bad_args")
    limit = LIST_DEFAULT if limit is None or limit <= 0 else min(limit, LIST_MAX)
    order = _order_by(sort, reverse)
    clause, args = _filter_clause(scopes, kinds, states, text, labels)
    if labels:
        ids = _labelled(conn, clause, args, order, labels, validator)
        total = len(ids)
        chosen = ids[offset:offset + limit]
        found = {r["id"]: r for r in conn.execute(
            "SELECT rowid, * FROM memory_items WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(chosen),))}
        rows = [found[item_id] for item_id in chosen if item_id in found]
    else:
        total = conn.execute(f"SELECT COUNT(*) FROM memory_items{clause}", args).fetchone()[0]
        rows = conn.execute(
            f"SELECT rowid, * FROM memory_items{clause} ORDER BY {order} LIMIT ? OFFSET ?", (*args, limit, offset),
        ).fetchall()
    items = [
        {
            "id": r["id"], "note_id": r["source_id"] if r["source_table"] == "notes" else None, "kind": r["kind"],
            "subject": r["subject"], "state": r["state"], "scope_key": r["scope_key"], "scope": scope_label(r["scope_key"]),
            "created_at": r["created_at"],
            "access_count": r["access_count"], "text": r["text"],
        }
        for r in rows
    ]
    filters: dict[str, list[str]] = {
        k: v for k, v in (("scope", scopes or []), ("kind", kinds or []), ("state", states or []),
                          ("label", labels or []), ("text", [text] if text else [])) if v}
    return Page(total, offset, limit, items, filters)


def _labelled(conn: sqlite3.Connection, clause: str, args: list[object], order: str, labels: list[str],
              validator: Validator | None) -> list[str]:
    """The ids, in listing order, of the candidates that carry one of `labels` (the one label rule decides)."""
    rows = conn.execute(f"SELECT id, kind, text, scope_key FROM memory_items{clause} ORDER BY {order}", args).fetchall()
    judged = {}
    if validator is not None and ("stale" in labels or "drifted" in labels):
        judged = validator.validate_many([(str(r["id"]), str(r["scope_key"])) for r in rows])
    wanted = set(labels)
    return [str(r["id"]) for r in rows
            if wanted.intersection(label_tag(label) for label in item_labels(str(r["kind"]), str(r["text"]),
                                                                             judged.get(str(r["id"]))))]


def memory_position(
    conn: sqlite3.Connection,
    item_id: str,
    *,
    scopes: list[str] | None = None,
    kinds: list[str] | None = None,
    states: list[str] | None = None,
) -> int | None:
    """Where an item sits in `list_memory`'s order under the same filters (0 is the newest); None if not listed.

    Lets a caller open the page that holds an item (a search hit, a deep link) whatever its age.
    """
    row = conn.execute("SELECT rowid, created_at, scope_key, kind, state FROM memory_items WHERE id=?",
                       (item_id,)).fetchone()
    if row is None:
        return None
    for column, values in (("scope_key", scopes), ("kind", kinds), ("state", states)):
        if values and row[column] not in values:
            return None
    where, args = ["(created_at > ? OR (created_at = ? AND rowid > ?))"], [row["created_at"], row["created_at"], row["rowid"]]
    for column, values in (("scope_key", scopes), ("kind", kinds), ("state", states)):
        if values:
            where.append(f"{column} IN ({','.join('?' * len(values))})")
            args.extend(values)
    return int(conn.execute(f"SELECT COUNT(*) FROM memory_items WHERE {' AND '.join(where)}", args).fetchone()[0])


def quote_arg(value: str) -> str:
    """Quote a value for a printed command line unless it is plainly safe."""
    return value if _SAFE_ARG.match(value) else json.dumps(value, ensure_ascii=False)


@dataclass
class Inspection:
    """Everything Cortex holds about one memory item."""

    item: dict[str, object]
    trust: str
    conflict: dict[str, object]
    references: list[dict[str, object]]
    access: dict[str, object]
    corrections: list[dict[str, object]] = field(default_factory=list)
    anchors: list[dict[str, object]] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        """The `inspect-memory --json` shape (byte-faithful text)."""
        return {
            **self.item, "trust": self.trust, "conflict": self.conflict, "references": self.references,
            "anchors": self.anchors, "access": self.access, "corrections": self.corrections,
        }


def inspect_memory(conn: sqlite3.Connection, scope: Scope, item_or_note_id: str) -> Inspection:
    """Inspect one item; reads only (no session, no access-count change).

    Raises:
        NotFound: no such item or note.
    """
    row = find_item(conn, item_or_note_id)
    validation = Validator(conn, scope).validate(row["id"], row["scope_key"])
    item = {k: row[k] for k in row.keys() if k != "rowid"}
    conflict: dict[str, object]
    if row["source_table"] != "notes":
        conflict = {"state": "n/a", "counterparts": []}
    else:
        note = conn.execute("SELECT * FROM notes WHERE id=?", (row["source_id"],)).fetchone()
        if note is None:
            conflict = {"state": "unknown", "counterparts": [], "orphan": True}
        else:
            counterparts = []
            if note["conflict"] and note["subject"]:
                counterparts = [
                    {"id": c["id"], "kind": c["kind"], "timestamp": c["timestamp"]}
                    for c in conn.execute(
                        "SELECT id, kind, timestamp FROM notes WHERE scope_key=? AND subject=? AND conflict=1 "
                        "AND status='active' AND id != ? ORDER BY timestamp",
                        (note["scope_key"], note["subject"], note["id"]),
                    )
                ]
            text_contested = is_contested(row["kind"], row["text"])
            text_superseded = is_superseded(row["kind"], row["text"])
            disagrees = text_contested != bool(note["conflict"]) or text_superseded != (note["status"] == "superseded")
            conflict = {
                "state": "contested" if note["conflict"] else "none",
                "status": note["status"],
                "note_id": note["id"],
                "counterparts": counterparts,
                "alternatives": alternatives_list(note["alternatives"]),
                "source": note["source"],
                "projection_disagrees": disagrees,
                "projection": {"contested": text_contested, "superseded": text_superseded},
            }
    references = [
        {**r.verdict, "type": r.type, "status": r.status, "moved_to": r.moved_to} for r in validation.refs
    ]
    log = conn.execute(
        "SELECT created_at, topic, result_ids_json FROM retrieval_log WHERE result_ids_json LIKE ? "
        "ORDER BY created_at DESC, id DESC LIMIT 10",
        (f'%"{row["id"]}"%',),
    ).fetchall()
    access = {
        "count": row["access_count"], "last": row["last_accessed_at"],
        "recent": [{"at": r["created_at"], "topic": r["topic"]} for r in log],
    }
    corrections = [
        {"at": c["created_at"], "operation": c["operation"], "prior_text": c["prior_text"], "new_text": c["new_text"]}
        for c in conn.execute(
            "SELECT * FROM memory_corrections WHERE memory_item_id=? ORDER BY created_at, id", (row["id"],)
        )
    ]
    shown = [anchor_entry(scope.worktree, a) for a in validation.anchors]
    return Inspection(item, validation.validity, conflict, references, access, corrections, shown)


DIFF_LINES = 12
"""At most this many lines of a drifted span's diff are shown."""


def anchor_entry(worktree: str, anchor: AnchorVerdict) -> dict[str, object]:
    """One anchor as inspect-memory shows it: recorded and current place and hash, and for a drifted span the
    commit that changed it (when `git log -L` says) and a short diff against the recorded content."""
    entry: dict[str, object] = {
        "anchor": anchor.name, "status": anchor.status, "symbol": anchor.symbol,
        "recorded": {"path": anchor.recorded_path, "start": anchor.recorded_start, "end": anchor.recorded_end,
                     "hash": anchor.recorded_hash, "head": anchor.head_oid},
        "current": {"path": anchor.path, "start": anchor.start, "end": anchor.end, "hash": anchor.current_hash},
        "changed_in": None, "diff": [],
    }
    if anchor.status != "drifted" or anchor.start is None or anchor.end is None:
        return entry
    source = anchors.read_source(worktree, anchor.path)
    if source is None:
        return entry
    now = source.lines[anchor.start - 1:anchor.end]
    then = _recorded_span(worktree, anchor)
    if then is not None:
        entry["diff"] = anchors.short_diff(then, now, DIFF_LINES)
    if anchor.head_oid:
        out = history.git(worktree, "log", "-1", "--no-patch", "--format=%h %s", "-L",
                          f"{anchor.start},{anchor.end}:{anchor.path}", f"{anchor.head_oid}..HEAD")
        entry["changed_in"] = collapse(out.strip())[:120] if out and out.strip() else None
    return entry


def _recorded_span(worktree: str, anchor: AnchorVerdict) -> list[str] | None:
    """The span's lines at the HEAD it was recorded on, when that commit holds exactly the recorded content."""
    if not anchor.head_oid:
        return None
    blob = history.git(worktree, "show", f"{anchor.head_oid}:{anchor.recorded_path}")
    if blob is None or len(blob) > anchors.MAX_FILE_BYTES:
        return None
    then = anchors.source_of(anchor.recorded_path, blob)
    if anchors.span_digest(then.lines, anchor.recorded_start, anchor.recorded_end) != anchor.recorded_hash:
        return None  # the note was written on uncommitted code: the recorded content is not in git
    return then.lines[anchor.recorded_start - 1:anchor.recorded_end]


@dataclass(frozen=True)
class Reanchor:
    """What `cortex reanchor` moved: each drifted anchor's name and its new lines."""

    id: str
    anchors: list[dict[str, object]]


def reanchor_memory(conn: sqlite3.Connection, scope: Scope, item_or_note_id: str, head: str | None,
                    now: str) -> Reanchor:
    """Re-anchor an item's drifted anchors to the code as it is now (the caller checked the note still holds); audited.

    Raises:
        NotFound: no such item. Refused: the item has no drifted anchor.
    """
    row = find_item(conn, item_or_note_id)
    validation = Validator(conn, scope).validate(row["id"], row["scope_key"])
    drifted = [a for a in validation.anchors if a.status == "drifted" and a.start is not None and a.current_hash]
    if not drifted:
        raise Refused(f"{row['id']} has no drifted anchor to re-anchor")
    moved = []
    with transaction(conn):
        for a in drifted:
            conn.execute(
                "UPDATE memory_anchors SET path=?, start_line=?, end_line=?, content_hash=?, head_oid=?, anchored_at=? "
                "WHERE id=?",
                (a.path, a.start, a.end, a.current_hash, head, now, a.anchor_id),
            )
            conn.execute(
                "INSERT INTO memory_corrections(memory_item_id, source_table, source_id, scope_key, operation, prior_text, "
                "new_text, prior_subject, created_at) VALUES (?,?,?,?, 'reanchor', ?,?,?,?)",
                (row["id"], row["source_table"], row["source_id"], row["scope_key"],
                 f"{a.name} lines {a.recorded_start}-{a.recorded_end} hash {a.recorded_hash}",
                 f"{a.name} lines {a.start}-{a.end} hash {a.current_hash}", row["subject"], now),
            )
            moved.append({"anchor": a.name, "start": a.start, "end": a.end, "hash": a.current_hash})
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
    row = find_item(conn, item_or_note_id)
    with transaction(conn):
        if row["source_table"] == "notes":
            note = conn.execute("SELECT * FROM notes WHERE id=?", (row["source_id"],)).fetchone()
            if note is None:
                raise not_found(item_or_note_id)
            prior = note["content"]
            new = " ".join(text.split()) if "\n" not in text.strip() else text.strip()
            conn.execute("UPDATE notes SET content=? WHERE id=?", (new, note["id"]))
            note = conn.execute("SELECT * FROM notes WHERE id=?", (note["id"],)).fetchone()
            sync_note_item(conn, note, row["scope_type"])
        else:
            prior = row["text"]
            new = text
            conn.execute("UPDATE memory_items SET text=? WHERE id=?", (new, row["id"]))
            extract_item_references(conn, row["id"], row["subject"], new)
        count = conn.execute("SELECT COUNT(*) FROM memory_references WHERE memory_item_id=?", (row["id"],)).fetchone()[0]
        conn.execute(
            "INSERT INTO memory_corrections(memory_item_id, source_table, source_id, scope_key, operation, prior_text, "
            "new_text, prior_subject, created_at) VALUES (?,?,?,?, 'edit', ?,?,?,?)",
            (row["id"], row["source_table"], row["source_id"], row["scope_key"], prior, new, row["subject"], now),
        )
    return Edit(row["id"], count, prior, new)


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
        note = conn.execute("SELECT * FROM notes WHERE id=?", (row["source_id"],)).fetchone()
    contested = bool(note is not None and note["conflict"])
    source = f"{row['source_table']}/{row['source_id']}" if row["source_table"] else None
    preview = Deletion(row["id"], row["kind"], row["subject"], row["scope_key"], source, refs, contested, row["text"], False)
    if not yes:
        return preview
    with transaction(conn):
        conn.execute(
            "INSERT INTO memory_corrections(memory_item_id, source_table, source_id, scope_key, operation, prior_text, "
            "new_text, prior_subject, created_at) VALUES (?,?,?,?, 'delete', ?, NULL, ?, ?)",
            (row["id"], row["source_table"], row["source_id"], row["scope_key"],
             note["content"] if note is not None else row["text"], row["subject"], now),
        )
        if note is not None:
            if contested and note["subject"]:
                others = conn.execute(
                    "SELECT * FROM notes WHERE scope_key=? AND subject=? AND conflict=1 AND id != ?",
                    (note["scope_key"], note["subject"], note["id"]),
                ).fetchall()
                conn.execute(
                    "UPDATE notes SET conflict=0 WHERE scope_key=? AND subject=? AND conflict=1",
                    (note["scope_key"], note["subject"]),
                )
                for other in others:
                    fresh = conn.execute("SELECT * FROM notes WHERE id=?", (other["id"],)).fetchone()
                    sync_note_item(conn, fresh, row["scope_type"])
            conn.execute("DELETE FROM notes WHERE id=?", (note["id"],))
            _forget_focus(conn, note)
        if row["source_table"] == "command_runs" or (
            row["source_table"] == "episodes" and row["kind"] != "episode:session_summary"
        ):
            # The source goes too, or the next `(seen Nx)` of the same failure would re-project the item. A session
            # summary's episode stays (without its item): it marks the session as summarised, so the summary is not
            # written again at the next SessionStart.
            conn.execute(f"DELETE FROM {row['source_table']} WHERE id=?", (row["source_id"],))
        conn.execute("DELETE FROM memory_items WHERE id=?", (row["id"],))
    return Deletion(**{**preview.__dict__, "deleted": True})


def _forget_focus(conn: sqlite3.Connection, note: sqlite3.Row) -> None:
    """A deleted focus or intent note takes the session focus it set with it.

    Each session whose focus came from this note falls back to the newest remaining focus (then intent) note
    of that session, or to none. Called inside the delete's transaction, after the note row is gone.
    """
    if note["kind"] not in ("focus", "intent") or not note["subject"]:
        return
    for session in conn.execute("SELECT id FROM sessions WHERE scope_key=? AND focus=?",
                                (note["scope_key"], note["subject"])).fetchall():
        fallback = conn.execute(
            "SELECT subject FROM notes WHERE session_id=? AND kind IN ('focus', 'intent') AND subject IS NOT NULL "
            "AND status='active' ORDER BY kind='focus' DESC, timestamp DESC, rowid DESC LIMIT 1",
            (session["id"],),
        ).fetchone()
        conn.execute("UPDATE sessions SET focus=? WHERE id=?", (fallback["subject"] if fallback else None, session["id"]))


def summarize_text(text: str, limit: int = 160) -> str:
    """One collapsed line of at most `limit` characters."""
    flat = collapse(text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"

