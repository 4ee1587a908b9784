"""Inspecting memory: everything Cortex holds about one item, where to look to check it, and the word diffs that
show its corrections. Reads only (no session, no access count, no write): the audited corrections are
`memory.corrections`, the listing `query.listing`.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sqlite3
from dataclasses import dataclass, field

from cortex_engine.base.errors import NotFound
from cortex_engine.base.untrusted import quote_path
from cortex_engine.memory.corrections import find_item
from cortex_engine.memory.items import alternatives_list, collapse, is_contested, is_superseded
from cortex_engine.query.listing import LABEL_FILTERS, SORTS
from cortex_engine.scope import anchors, history
from cortex_engine.scope.freshness import AnchorVerdict, Validator
from cortex_engine.scope.identity import Scope
from cortex_engine.store import queries
from cortex_engine.store.database import IN_SCOPE

__all__ = [
    "DIFF_CONTEXT",
    "DIFF_LINES",
    "LABEL_FILTERS",
    "SORTS",
    "Inspection",
    "Location",
    "anchor_entry",
    "find_item",
    "inspect_memory",
    "locate_reference",
    "quote_arg",
    "summarize_text",
    "text_diff",
]
"""`LABEL_FILTERS` and `SORTS` are the listing's; the CLI's parser names them here (`lazy("query.inspection", …)`)."""

_SAFE_ARG = re.compile(r"^[A-Za-z0-9,._:@/+-]+$")


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
            **self.item,
            "trust": self.trust,
            "conflict": self.conflict,
            "references": self.references,
            "anchors": self.anchors,
            "access": self.access,
            "corrections": self.corrections,
        }


def inspect_memory(conn: sqlite3.Connection, scope: Scope, item_or_note_id: str) -> Inspection:
    """Inspect one item; reads only (no session, no access-count change).

    Raises:
        NotFound: no such item or note.
    """
    row = find_item(conn, item_or_note_id)
    validation = Validator(conn, scope).validate(row["id"], row["scope_key"])
    item = {k: row[k] for k in row.keys() if k != "rowid"}
    # Claude Code's id: what `claude --resume` takes
    item["host_session_id"] = (
        queries.host_session_of(conn, row["session_id"]) if row["session_id"] else None
    )  # Claude Code's id: what `claude --resume` takes
    conflict: dict[str, object]
    if row["source_table"] != "notes":
        conflict = {"state": "n/a", "counterparts": []}
    else:
        note = queries.note_row(conn, row["source_id"])
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
        "count": row["access_count"],
        "last": row["last_accessed_at"],
        "recent": [{"at": r["created_at"], "topic": r["topic"]} for r in log],
    }
    corrections = [
        {
            "at": c["created_at"],
            "operation": c["operation"],
            "prior_text": c["prior_text"],
            "new_text": c["new_text"],
            "diff": [list(part) for part in text_diff(c["prior_text"], c["new_text"], context=DIFF_CONTEXT)]
            if c["prior_text"] is not None and c["new_text"] is not None
            else [],
        }
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
        "anchor": quote_path(anchor.name),
        "status": anchor.status,
        "symbol": anchor.symbol,
        "recorded": {
            "path": quote_path(anchor.recorded_path),
            "start": anchor.recorded_start,
            "end": anchor.recorded_end,
            "hash": anchor.recorded_hash,
            "head": anchor.head_oid,
        },
        "current": {
            "path": quote_path(anchor.path),
            "start": anchor.start,
            "end": anchor.end,
            "hash": anchor.current_hash,
        },
        "moved_to": quote_path(anchor.moved_to) if anchor.moved_to else None,
        "changed_in": None,
        "diff": [],
    }
    if not anchor.drifted or anchor.start is None or anchor.end is None:
        return entry
    source = anchors.read_source(worktree, anchor.path)
    if source is None:
        return entry
    now = source.lines[anchor.start - 1 : anchor.end]
    then = _recorded_span(worktree, anchor)
    if then is not None:
        entry["diff"] = anchors.short_diff(then, now, DIFF_LINES)
    if anchor.head_oid:
        out = history.git(
            worktree,
            "log",
            "-1",
            "--no-patch",
            "--format=%h %s",
            "-L",
            f"{anchor.start},{anchor.end}:{anchor.path}",
            f"{anchor.head_oid}..HEAD",
        )
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
    if not anchors.digest_matches(then.lines, anchor.recorded_start, anchor.recorded_end, anchor.recorded_hash):
        return None  # the note was written on uncommitted code: the recorded content is not in git
    return then.lines[anchor.recorded_start - 1 : anchor.recorded_end]


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
        raise NotFound(
            f"{', '.join(gone)} {'is' if len(gone) == 1 else 'are'} gone from the checkout (deleted, or "
            "renamed where git cannot follow); nothing to open",
            code="file_missing",
            id=row["id"],
        )
    raise NotFound(f"{row['id']} names no file of this checkout; nothing to open", code="file_missing", id=row["id"])


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
            text = (
                "…" + text[-context:]
                if first
                else text[:context] + "…"
                if last
                else text[:context] + " … " + text[-context:]
            )
        cut.append((op, text))
    return cut


def summarize_text(text: str, limit: int = 160) -> str:
    """One collapsed line of at most `limit` characters."""
    flat = collapse(text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
