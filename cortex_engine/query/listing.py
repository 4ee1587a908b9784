"""Listing memory: every item of the store, filtered and paged in a stable order (`cortex list-memory`, the TUI's
memory table). Reads only.

In: a connection, filters a person typed (scopes, kinds by full or short name, states, a substring, labels), a
sort, and a page (an offset or a key). Out: a `Page` of items with one freshness verdict per referenced path
(judged by the caller's `Validator`), plus the filters and paging it applied.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field

from cortex_engine.base.errors import InvalidInput
from cortex_engine.base.ids import abbreviate
from cortex_engine.base.untrusted import quote_path
from cortex_engine.memory.items import KIND_WEIGHTS, STATES
from cortex_engine.query.render import item_labels, label_tag, short_kind
from cortex_engine.scope.freshness import Validator
from cortex_engine.store.database import in_scopes

LIST_DEFAULT = 20
LIST_MAX = 200
ORDER_TEXT = "newest first (created_at DESC, rowid DESC)"


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
            raise InvalidInput(
                f"unknown kind {kind!r}; valid kinds: {valid} (or their full names, e.g. note:decision)",
                code="bad_kind",
                kinds=[short_kind_name(k) for k in ITEM_KINDS],
            )
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
            "total": self.total,
            "offset": self.offset,
            "limit": self.limit,
            "order": ORDER_TEXT,
            "filters": self.filters,
            "items": self.items,
        }


_KEY_ORDER = {"desc": "created_at DESC, rowid DESC", "asc": "created_at ASC, rowid ASC"}
_OLDER = "(created_at < ? OR (created_at = ? AND rowid < ?))"
_NEWER = "(created_at > ? OR (created_at = ? AND rowid > ?))"


LABEL_FILTERS = ("contested", "stale", "moved", "drifted", "superseded")
"""The labels a listing can be narrowed to (an item is listed when it carries any of those asked for)."""
SORTS = ("created", "kind", "state", "subject", "scope")
"""Columns a listing can be ordered by; each has a natural direction (created: newest first; state: pinned first;
the others A→Z) that `reverse` flips. Ties are always newest first."""
_SORT_SQL = {
    "kind": "CASE kind "
    + " ".join(f"WHEN '{k}' THEN {n}" for n, k in enumerate(sorted(ITEM_KINDS, key=short_kind)))
    + f" ELSE {len(ITEM_KINDS)} END",  # by the short name the operator reads (`failure`, not `episode:…`)
    "scope": "scope_key",
    "subject": "COALESCE(subject, '') COLLATE NOCASE",
    "state": "CASE state "
    + " ".join(f"WHEN '{s}' THEN {n}" for n, s in enumerate(STATES))
    + f" ELSE {len(STATES)} END",
}
_LABEL_CANDIDATES = {
    "contested": "(kind LIKE 'note:%' AND instr(text, char(10) || 'Conflict: ') > 0)",
    "superseded": "(kind LIKE 'note:%' AND instr(text, char(10) || 'Status: ') > 0)",
    "stale": "(id IN (SELECT memory_item_id FROM memory_references) "
    "OR id IN (SELECT memory_item_id FROM memory_anchors))",
    "moved": "id IN (SELECT memory_item_id FROM memory_references)",
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
    scopes: list[str] | None,
    kinds: list[str] | None,
    states: list[str] | None,
    text: str | None,
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
        labels: only items carrying any of these `LABEL_FILTERS`, as `render.item_labels` labels them; stale,
            moved and drifted are judged against the checkout by `validator` (required for them).
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
        rows, following, total, offset = _ordered_page(
            conn, clause, args, order, labels, validator, limit, offset, start or before, before is not None, oldest
        )
    else:
        total = conn.execute(f"SELECT COUNT(*) FROM memory_items{clause}", args).fetchone()[0]

        def select(
            extra: str | None, extra_args: list[object], way: str, count: int, skip: int = 0
        ) -> list[sqlite3.Row]:
            terms = [*where, extra] if extra else where
            sql = f"SELECT * FROM scoped_items{' WHERE ' + ' AND '.join(terms) if terms else ''}"
            return conn.execute(
                f"{sql} ORDER BY {_KEY_ORDER[way]} LIMIT ? OFFSET ?", (*args, *extra_args, count, skip)
            ).fetchall()

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
            offset = conn.execute(
                f"SELECT COUNT(*) FROM memory_items{newer}", (*args, *_key_args(_key(rows[0])))
            ).fetchone()[0]
    shorts = abbreviate(conn, [str(r["id"]) for r in rows])
    items = [
        {
            "id": r["id"],
            "short_id": shorts[str(r["id"])],
            "note_id": r["source_id"] if r["source_table"] == "notes" else None,
            "kind": r["kind"],
            "subject": r["subject"],
            "state": r["state"],
            "scope_key": r["scope_key"],
            "scope": scope_label(r["scope_key"]),
            "created_at": r["created_at"],
            "access_count": r["access_count"],
            "text": r["text"],
        }
        for r in rows
    ]
    filters: dict[str, list[str]] = {
        k: v
        for k, v in (
            ("scope", scopes or []),
            ("kind", kinds or []),
            ("state", states or []),
            ("label", labels or []),
            ("text", [text] if text else []),
        )
        if v
    }
    return Page(
        total, offset, limit, items, filters, [_key(r) for r in rows], _key(following[0]) if following else None
    )


def _ordered_page(
    conn: sqlite3.Connection,
    clause: str,
    args: list[object],
    order: str,
    labels: list[str] | None,
    validator: Validator | None,
    limit: int,
    offset: int,
    key: PageKey | None,
    before: bool,
    oldest: bool,
) -> tuple[list[sqlite3.Row], list[sqlite3.Row], int, int]:
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
    chosen = ids[offset : offset + limit + 1]
    found_rows = {
        r["id"]: r
        for r in conn.execute(
            "SELECT * FROM scoped_items WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(chosen),)
        )
    }
    rows = [found_rows[item_id] for item_id in chosen if item_id in found_rows]
    return rows[:limit], rows[limit:], total, offset


def _labelled(
    conn: sqlite3.Connection,
    clause: str,
    args: list[object],
    order: str,
    labels: list[str],
    validator: Validator | None,
) -> list[str]:
    """The ids, in listing order, of the candidates that carry one of `labels` (the one label rule decides)."""
    rows = conn.execute(f"SELECT id, kind, text, scope_key FROM scoped_items{clause} ORDER BY {order}", args).fetchall()
    judged = {}
    if validator is not None and {"stale", "moved", "drifted"} & set(labels):
        judged = validator.validate_many([(str(r["id"]), str(r["scope_key"])) for r in rows])
    wanted = set(labels)
    return [
        str(r["id"])
        for r in rows
        if wanted.intersection(
            label_tag(label) for label in item_labels(str(r["kind"]), str(r["text"]), judged.get(str(r["id"])))
        )
    ]


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
    row = conn.execute(
        "SELECT rowid, created_at, scope_key, kind, state FROM scoped_items WHERE id=?", (item_id,)
    ).fetchone()
    if row is None:
        return None
    for column, values in (("scope_key", scopes), ("kind", normalize_kinds(kinds)), ("state", states)):
        if values and row[column] not in values:
            return None
    return _key(row)


def label(page: Page, validator: Validator) -> Page:
    """Give each item of a page its trust labels and one freshness verdict per referenced path, judged by
    `validator` (the checkout as it is now); returns the page."""
    found = validator.validate_many([(str(i["id"]), str(i["scope_key"])) for i in page.items])
    for item in page.items:
        validation = found[str(item["id"])]
        item["labels"] = item_labels(str(item["kind"]), str(item["text"]), validation)
        item["references"] = validation.verdicts
    return page
