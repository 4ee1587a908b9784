"""Inspection and correction: list, inspect, edit and delete memory, every correction audited."""

from __future__ import annotations

import difflib
import json
import os
import re
import sqlite3
from dataclasses import dataclass, field

from cortex_engine.base.errors import InvalidInput, NotFound, Refused
from cortex_engine.base.untrusted import quote_path
from cortex_engine.memory.items import KIND_WEIGHTS, STATES, alternatives_list, collapse, is_contested, is_superseded
from cortex_engine.memory.notes import extract_item_references, item_id_for, leave_contest, sync_note_item
from cortex_engine.query.render import item_labels, label_tag, short_kind
from cortex_engine.scope import anchors, history, references as paths
from cortex_engine.scope.freshness import AnchorVerdict, Validator
from cortex_engine.scope.identity import Scope
from cortex_engine.store.database import IN_SCOPE, in_scopes, transaction
from cortex_engine.store.redact import redact

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
    from cortex_engine.base.ids import resolve_prefix

    raw = item_or_note_id.strip()
    row = conn.execute("SELECT * FROM scoped_items WHERE id=?", (raw,)).fetchone()
    if row is None:
        row = conn.execute("SELECT * FROM scoped_items WHERE id=?", (item_id_for(raw),)).fetchone()
    if row is None:
        full = resolve_prefix(conn, "memory_items", raw, what="memory item")
        row = conn.execute("SELECT * FROM scoped_items WHERE id=?", (full,)).fetchone() if full else None
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
        return quote_path(rest.rsplit(":", 1)[-1])
    if kind == "detached":
        return f"detached@{rest.rsplit(':', 1)[-1][:7]}"
    return "project"


@dataclass(frozen=True)
class PageKey:
    """Where an item sits in list order (newest first): its creation time, then its rowid (the tie-breaker)."""

    created_at: str
    rowid: int


@dataclass
class Page:
    """One page of list-memory."""

    total: int
    offset: int
    """The position of the page's first item in list order (0 is the newest)."""
    limit: int
    items: list[dict[str, object]]
    filters: dict[str, list[str]]
    keys: list[PageKey] = field(default_factory=list)
    """Each item's place in list order (for keyset paging; not part of the JSON shape)."""
    next: PageKey | None = None
    """Where the next (older) page starts; None on the last page."""

    def to_dict(self) -> dict[str, object]:
        """The `list-memory --json` shape."""
        return {
            "total": self.total, "offset": self.offset, "limit": self.limit, "order": ORDER_TEXT,
            "filters": self.filters, "items": self.items,
        }


_KEY_ORDER = {"desc": "created_at DESC, rowid DESC", "asc": "created_at ASC, rowid ASC"}
_OLDER = "(created_at < ? OR (created_at = ? AND rowid < ?))"
_NEWER = "(created_at > ? OR (created_at = ? AND rowid > ?))"


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


def _filter_terms(
    scopes: list[str] | None, kinds: list[str] | None, states: list[str] | None, text: str | None,
    labels: list[str] | None,
) -> tuple[list[str], list[object]]:
    """WHERE terms and arguments for list-memory's filters (a label's terms are a superset; the label rule decides)."""
    where: list[str] = []
    args: list[object] = []
    if scopes:
        where.append(in_scopes(len(scopes)))  # the store's one scope condition
        args.extend(scopes)
    for column, values in (("kind", kinds), ("state", states)):
        if values:
            where.append(f"{column} IN ({','.join('?' * len(values))})")
            args.extend(values)
    if text:
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        where.append("(COALESCE(subject, '') LIKE ? ESCAPE '\\' OR text LIKE ? ESCAPE '\\')")
        args.extend([pattern, pattern])
    if labels:
        where.append("(" + " OR ".join(_LABEL_CANDIDATES[label] for label in labels) + ")")
    return where, args


def _key_args(key: PageKey) -> list[object]:
    return [key.created_at, key.created_at, key.rowid]


def _key(row: sqlite3.Row) -> PageKey:
    return PageKey(str(row["created_at"]), int(row["rowid"]))


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
    start: PageKey | None = None,
    before: PageKey | None = None,
    oldest: bool = False,
) -> Page:
    """Every memory item, newest first, with no default filters (archived and other scopes included).

    Args:
        text: only items whose subject or text contains this, case-insensitively (a plain substring, not a query).
        labels: only items carrying any of these `LABEL_FILTERS`, as `render.item_labels` labels them; stale and
            drifted are judged against the checkout by `validator` (required for them).
        sort: one of `SORTS` (default: created, newest first); `reverse` flips its direction.

    Pages are found by offset (the CLI's `--offset`) or, for a browser, by key. In the default order (newest
    first, no label filter) a key costs the same on any page: `start` lists from that item (inclusive) towards
    older ones; `before` lists the page just newer than that item (the first page when fewer than a page are
    newer); `oldest` lists the last page; a key whose item was deleted since still places the page (keys are
    compared, not looked up). In any other order, or with a label filter, a key is placed by its item's position
    in that order, and an item deleted since places the first page.

    Raises:
        InvalidInput: an unknown kind, state, label or sort, a negative offset, or an offset combined with a key.
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
    if offset and (start or before or oldest) or sum(map(bool, (start, before, oldest))) > 1:
        raise InvalidInput("list by one of offset, start, before or oldest", code="bad_args")
    limit = LIST_DEFAULT if limit is None or limit <= 0 else min(limit, LIST_MAX)
    order = _order_by(sort, reverse)
    where, args = _filter_terms(scopes, kinds, states, text, labels)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    following: list[sqlite3.Row] = []
    if sort != "created" or reverse or labels:
        rows, following, total, offset = _ordered_page(conn, clause, args, order, labels, validator, limit, offset,
                                                       start or before, before is not None, oldest)
    else:
        total = conn.execute(f"SELECT COUNT(*) FROM memory_items{clause}", args).fetchone()[0]

        def select(extra: str | None, extra_args: list[object], way: str, count: int, skip: int = 0) -> list[sqlite3.Row]:
            terms = [*where, extra] if extra else where
            sql = f"SELECT * FROM scoped_items{' WHERE ' + ' AND '.join(terms) if terms else ''}"
            return conn.execute(f"{sql} ORDER BY {_KEY_ORDER[way]} LIMIT ? OFFSET ?",
                                (*args, *extra_args, count, skip)).fetchall()

        rows = []
        if before is not None:
            rows = select(_NEWER, _key_args(before), "asc", limit)[::-1]
            if len(rows) < limit:  # fewer than a page are newer: that is the first page
                before, rows = None, []
        if oldest:
            rows = select(None, [], "asc", limit)[::-1]
            offset = max(0, total - len(rows))
        elif before is None:
            inclusive = [start.created_at, start.created_at, start.rowid + 1] if start else []  # rowids are integers
            rows = select(_OLDER if start else None, inclusive, "desc", limit + 1, offset)
        rows, following = rows[:limit], rows[limit:]
        if before is not None and rows:
            following = select(_OLDER, _key_args(_key(rows[-1])), "desc", 1)
        if rows and (start is not None or before is not None):
            newer = f" WHERE {' AND '.join([*where, _NEWER])}"
            offset = conn.execute(f"SELECT COUNT(*) FROM memory_items{newer}",
                                  (*args, *_key_args(_key(rows[0])))).fetchone()[0]
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
    return Page(total, offset, limit, items, filters, [_key(r) for r in rows], _key(following[0]) if following else None)


def _ordered_page(conn: sqlite3.Connection, clause: str, args: list[object], order: str, labels: list[str] | None,
                  validator: Validator | None, limit: int, offset: int, key: PageKey | None, before: bool,
                  oldest: bool) -> tuple[list[sqlite3.Row], list[sqlite3.Row], int, int]:
    """A page of a sorted or label-filtered listing: its rows, the row after it, the total and the page's offset.

    The listing's ids are read in order (labels judged by the one label rule), so a key is placed by position."""
    if labels:
        ids = _labelled(conn, clause, args, order, labels, validator)
    else:
        ids = [str(r["id"]) for r in conn.execute(f"SELECT id FROM memory_items{clause} ORDER BY {order}", args)]
    total = len(ids)
    if oldest:
        offset = max(0, total - limit)
    elif key is not None:
        found = conn.execute("SELECT id FROM memory_items WHERE rowid=?", (key.rowid,)).fetchone()
        position = ids.index(found["id"]) if found is not None and found["id"] in ids else 0
        offset = max(0, position - limit) if before else position
    chosen = ids[offset:offset + limit + 1]
    found_rows = {r["id"]: r for r in conn.execute(
        "SELECT * FROM scoped_items WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(chosen),))}
    rows = [found_rows[item_id] for item_id in chosen if item_id in found_rows]
    return rows[:limit], rows[limit:], total, offset


def _labelled(conn: sqlite3.Connection, clause: str, args: list[object], order: str, labels: list[str],
              validator: Validator | None) -> list[str]:
    """The ids, in listing order, of the candidates that carry one of `labels` (the one label rule decides)."""
    rows = conn.execute(f"SELECT id, kind, text, scope_key FROM scoped_items{clause} ORDER BY {order}", args).fetchall()
    judged = {}
    if validator is not None and ("stale" in labels or "drifted" in labels):
        judged = validator.validate_many([(str(r["id"]), str(r["scope_key"])) for r in rows])
    wanted = set(labels)
    return [str(r["id"]) for r in rows
            if wanted.intersection(label_tag(label) for label in item_labels(str(r["kind"]), str(r["text"]),
                                                                             judged.get(str(r["id"]))))]


def memory_key(
    conn: sqlite3.Connection,
    item_id: str,
    *,
    scopes: list[str] | None = None,
    kinds: list[str] | None = None,
    states: list[str] | None = None,
) -> PageKey | None:
    """Where an item sits in `list_memory`'s order, if these filters list it (None when they do not, or it is gone).

    Lets a caller open a page at an item (a search hit, a deep link) whatever its age: `list_memory(start=key)`.
    """
    row = conn.execute("SELECT rowid, created_at, scope_key, kind, state FROM scoped_items WHERE id=?",
                       (item_id,)).fetchone()
    if row is None:
        return None
    for column, values in (("scope_key", scopes), ("kind", normalize_kinds(kinds)), ("state", states)):
        if values and row[column] not in values:
            return None
    return _key(row)


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
        note = conn.execute("SELECT * FROM scoped_notes WHERE id=?", (row["source_id"],)).fetchone()
        if note is None:
            conflict = {"state": "unknown", "counterparts": [], "orphan": True}
        else:
            counterparts = []
            if note["conflict"] and note["subject"]:
                counterparts = [
                    {"id": c["id"], "kind": c["kind"], "timestamp": c["timestamp"]}
                    for c in conn.execute(
                        f"SELECT id, kind, timestamp FROM notes WHERE {IN_SCOPE} AND subject=? AND conflict=1 "
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
    references: list[dict[str, object]] = [
        {**r.verdict, "type": r.type, "status": r.status, "moved_to": r.verdict["to"]} for r in validation.refs
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
        {"at": c["created_at"], "operation": c["operation"], "prior_text": c["prior_text"], "new_text": c["new_text"],
         "diff": [list(part) for part in text_diff(c["prior_text"], c["new_text"], context=DIFF_CONTEXT)]
         if c["prior_text"] is not None and c["new_text"] is not None else []}
        for c in conn.execute(
            "SELECT * FROM memory_corrections WHERE memory_item_id=? ORDER BY created_at, id", (row["id"],)
        )
    ]
    shown: list[dict[str, object]] = [anchor_entry(scope.worktree, a) for a in validation.anchors]
    return Inspection(item, validation.validity, conflict, references, access, corrections, shown)


DIFF_LINES = 12
"""At most this many lines of a drifted span's diff are shown."""


def anchor_entry(worktree: str, anchor: AnchorVerdict) -> dict[str, object]:
    """One anchor as inspect-memory shows it: recorded and current place and hash, and for a drifted span the
    commit that changed it (when `git log -L` says) and a short diff against the recorded content."""
    entry: dict[str, object] = {
        "anchor": quote_path(anchor.name), "status": anchor.status, "symbol": anchor.symbol,
        "recorded": {"path": quote_path(anchor.recorded_path), "start": anchor.recorded_start, "end": anchor.recorded_end,
                     "hash": anchor.recorded_hash, "head": anchor.head_oid},
        "current": {"path": quote_path(anchor.path), "start": anchor.start, "end": anchor.end, "hash": anchor.current_hash},
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
    moved: list[dict[str, object]] = []
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


@dataclass(frozen=True)
class Location:
    """Where to look at what a memory refers to: a file of the checkout, and the line a span starts on."""

    id: str
    path: str
    """Relative to the worktree, as the memory's labels name it."""
    absolute: str
    """The file on disk (inside the worktree)."""
    line: int | None
    """The first line of the anchored span (a drifted symbol or a range), when there is one."""
    end: int | None
    reason: str
    """`drifted`, `moved`, `missing` (the symbol is gone, the file is not) or `exists`."""


def locate_reference(conn: sqlite3.Connection, scope: Scope, item_or_note_id: str) -> Location:
    """The file (and line) a person should open to check a memory, judged against the checkout now.

    In order: a drifted span where it is now; a renamed file where it went (at its anchored line when one
    follows it); the file of a symbol that is gone; any referenced file that exists. Only files inside the
    worktree are offered (a reference is author text).

    Raises:
        NotFound: no such item, or none of the files it names is in the checkout (`file_missing`).
    """
    row = find_item(conn, item_or_note_id)
    validation = Validator(conn, scope).validate(row["id"], row["scope_key"])
    spans = {a.path: a for a in validation.anchors if a.start is not None}
    picks: list[tuple[str, int | None, int | None, str]] = []
    picks += [(a.path, a.start, a.end, "drifted") for a in validation.anchors if a.status == "drifted"]
    for ref in validation.refs:
        if ref.status == "moved" and ref.moved_to:
            span = spans.get(ref.moved_to)
            picks.append((ref.moved_to, span.start if span else None, span.end if span else None, "moved"))
    picks += [(a.path, None, None, "missing") for a in validation.anchors if a.status == "missing"]
    for ref in validation.refs:
        if ref.status == "exists" and ref.type == "file":
            span = spans.get(ref.path)
            picks.append((ref.path, span.start if span else None, span.end if span else None, "exists"))
    root = os.path.realpath(scope.worktree) if scope.worktree else None
    for path, line, end, reason in picks:
        if root is None:
            break
        absolute = os.path.realpath(os.path.join(root, path))
        if os.path.commonpath([root, absolute]) == root and os.path.isfile(absolute):
            return Location(row["id"], path, absolute, line, end, reason)
    gone = [ref.path for ref in validation.refs if ref.status == "missing"]
    if gone:
        raise NotFound(f"{', '.join(gone)} {'is' if len(gone) == 1 else 'are'} gone from the checkout (deleted, or "
                       "renamed where git cannot follow); nothing to open", code="file_missing", id=row["id"])
    raise NotFound(f"{row['id']} names no file of this checkout; nothing to open", code="file_missing", id=row["id"])


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


def _replace_text(conn: sqlite3.Connection, row: sqlite3.Row, text: str, operation: str, now: str, *,
                  expected: str | None = None) -> Edit:
    """Write an item's new editable text and its audit row in one transaction (edit and every fix go through here).

    With `expected`, the item's stored text is compared inside the write transaction and a difference refuses
    (someone changed the memory since the caller read it).
    """
    with transaction(conn):
        if expected is not None:
            now_text = conn.execute("SELECT text FROM memory_items WHERE id=?", (row["id"],)).fetchone()
            if now_text is None:
                raise not_found(str(row["id"]))
            if now_text["text"] != expected:
                raise Refused(f"{row['id']} changed since it was read; nothing was rewritten (look again, then retry)",
                              code="changed", id=row["id"])
        if row["source_table"] == "notes":
            note = conn.execute("SELECT * FROM scoped_notes WHERE id=?", (row["source_id"],)).fetchone()
            if note is None:
                raise not_found(str(row["id"]))
            prior = note["content"]
            new = " ".join(text.split()) if "\n" not in text.strip() else text.strip()
            conn.execute("UPDATE notes SET content=? WHERE id=?", (new, note["id"]))
            note = conn.execute("SELECT * FROM scoped_notes WHERE id=?", (note["id"],)).fetchone()
            sync_note_item(conn, note, row["scope_type"])
        else:
            prior = row["text"]
            new = text
            conn.execute("UPDATE memory_items SET text=? WHERE id=?", (new, row["id"]))
            extract_item_references(conn, row["id"], row["subject"], new)
        count = conn.execute("SELECT COUNT(*) FROM memory_references WHERE memory_item_id=?", (row["id"],)).fetchone()[0]
        conn.execute(
            "INSERT INTO memory_corrections(memory_item_id, source_table, source_id, scope_key, operation, prior_text, "
            "new_text, prior_subject, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (row["id"], row["source_table"], row["source_id"], row["scope_key"], operation, prior, new, row["subject"],
             now),
        )
    return Edit(row["id"], count, prior, new)


@dataclass(frozen=True)
class MovedRewrite:
    """What `rewrite_moved_references` changed: each moved path, where it went, and the audited edit."""

    id: str
    moves: list[dict[str, object]]
    """`{"from", "to", "count"}` per moved reference rewritten in the text."""
    edit: Edit


def rewrite_moved_references(conn: sqlite3.Connection, scope: Scope, item_or_note_id: str, now: str, *,
                             expected_text: str | None = None) -> MovedRewrite:
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
        raise Refused(f"{row['id']} changed since it was shown; nothing was rewritten (look again, then retry)",
                      code="changed", id=row["id"])
    validation = Validator(conn, scope).validate(row["id"], row["scope_key"])
    moved = [(ref.path, ref.moved_to) for ref in validation.refs if ref.status == "moved" and ref.moved_to]
    if not moved:
        raise Refused(f"{row['id']} has no moved reference to rewrite", code="nothing_moved", id=row["id"])
    # A name from git is author text: one that is not a plain path (a control, an invisible character, a `]` or a
    # newline) is never copied into the memory; it is named, quoted, and left for a person to edit.
    hostile = [(old, new) for old, new in moved if quote_path(new) != new]
    moved = [(old, new) for old, new in moved if quote_path(new) == new]
    if not moved:
        named = ", ".join(f"{quote_path(old)} → {quote_path(new)}" for old, new in hostile)
        raise Refused(f"{row['id']}: git renamed to a name that is not a plain path ({named}); nothing was "
                      "rewritten (edit the memory instead)", code="unsafe_name", id=row["id"])
    text = row["text"]
    if row["source_table"] == "notes":
        note = conn.execute("SELECT content FROM scoped_notes WHERE id=?", (row["source_id"],)).fetchone()
        if note is None:
            raise not_found(str(row["id"]))
        text = note["content"]
    done: list[dict[str, object]] = []
    for old, new in moved:
        text, replaced = paths.rewrite_path(text, old, new)
        if replaced:
            done.append({"from": old, "to": new, "count": replaced})
    if not done:
        named = ", ".join(old for old, _ in moved)
        raise Refused(f"{row['id']} names {named} only in its subject, which is not rewritten; edit the memory instead",
                      code="subject_only", id=row["id"])
    edit = _replace_text(conn, row, redact(text), "rewrite-moved", now, expected=expected)
    return MovedRewrite(row["id"], done, edit)


DIFF_CONTEXT = 40
"""In inspect-memory, an unchanged stretch of a correction's diff keeps this many characters each side."""
_TOKENS = re.compile(r"\s+|\S+")
"""A diff's words: runs of non-space, as `git diff --word-diff` splits them (a path is one word)."""


def text_diff(prior: str, new: str, *, context: int | None = None) -> list[tuple[str, str]]:
    """A word-level diff of two texts as `(op, text)` runs: `=` unchanged, `-` removed, `+` added.

    Whitespace is kept as it was; a changed word is replaced whole (`src/a.py` → `src/b.py`, not `a` → `b`).

    Removed text comes before what replaced it. With `context`, an unchanged run longer than twice that many
    characters is cut to its ends around `…` (its start or end alone where it opens or closes the text).
    """
    old_tokens, new_tokens = _TOKENS.findall(prior), _TOKENS.findall(new)
    runs: list[tuple[str, str]] = []

    def add(op: str, text: str) -> None:
        if not text:
            return
        if runs and runs[-1][0] == op:
            runs[-1] = (op, runs[-1][1] + text)
        else:
            runs.append((op, text))

    matcher = difflib.SequenceMatcher(None, old_tokens, new_tokens, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add("=", "".join(old_tokens[i1:i2]))
            continue
        add("-", "".join(old_tokens[i1:i2]))
        add("+", "".join(new_tokens[j1:j2]))
    if context is None:
        return runs
    cut: list[tuple[str, str]] = []
    for index, (op, text) in enumerate(runs):
        if op == "=" and len(text) > 2 * context:
            first, last = index == 0, index == len(runs) - 1
            text = ("…" + text[-context:] if first else text[:context] + "…" if last
                    else text[:context] + " … " + text[-context:])
        cut.append((op, text))
    return cut


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
        note = conn.execute("SELECT * FROM scoped_notes WHERE id=?", (row["source_id"],)).fetchone()
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
            # A deleted side leaves its contest as a resolved one does: two sides left stay contested.
            leave_contest(conn, note["id"])
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
            "SELECT subject FROM notes WHERE session=(SELECT rowid FROM sessions WHERE id=?) AND kind IN ('focus', 'intent') AND subject IS NOT NULL "
            "AND status='active' ORDER BY kind='focus' DESC, timestamp DESC, rowid DESC LIMIT 1",
            (session["id"],),
        ).fetchone()
        conn.execute("UPDATE sessions SET focus=? WHERE id=?", (fallback["subject"] if fallback else None, session["id"]))


def summarize_text(text: str, limit: int = 160) -> str:
    """One collapsed line of at most `limit` characters."""
    flat = collapse(text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"

