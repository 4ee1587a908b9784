"""Freshness: per-reference verdicts, judged against the checkout as it is now.

Every surface judges references against the checkout as it is at that moment: existence is a
stat on disk (so an uncommitted delete counts). A reference that is gone is followed through
every commit from the HEAD its memory was written on to the current HEAD (`history.chains`),
cached per (recorded HEAD, current HEAD) in `rename_chains`; moves not yet committed (staged
or plain `mv`) are found from the index and a unique basename. The inventory and the chains
are kept by `inventory`, rebuilt only when HEAD or the git index changed.
"""

from __future__ import annotations

import json
import os
import sqlite3
from functools import cached_property
from typing import TYPE_CHECKING

from cortex_engine.base.lazy import LazyModule
from cortex_engine.base.records import record
from cortex_engine.base.untrusted import quote_path
from cortex_engine.scope import history, inventory
from cortex_engine.scope.identity import (
    BRANCH_TAG,
    Scope,
    branch_tips,
    detect_scope,
    list_worktrees,
    project_scope_key,
    read_head,
    scope_key_branch,
    scope_key_oid,
)

# Where callers found them before the inventory had its own module (engine.py, memory/notes.py):
from cortex_engine.scope.inventory import GitPaths as GitPaths
from cortex_engine.scope.inventory import checkout_signature as checkout_signature
from cortex_engine.scope.inventory import refresh_app_graph as refresh_app_graph
from cortex_engine.scope.inventory import repository_for as repository_for
from cortex_engine.store.queries import JudgedRows, meta_value

RENAME_HOPS = 5
if TYPE_CHECKING:  # the real modules, so that mypy checks every call through a lazy handle
    from cortex_engine.scope import anchors, seek  # regex- and ast-heavy: imported only when an item has anchors
else:
    anchors = LazyModule("scope.anchors")  # regex- and ast-heavy: imported only when an item has anchors
    seek = LazyModule("scope.seek")  # only a symbol gone from its file is followed


@record(frozen=True)
class RefVerdict:
    """One reference and what the checkout says about it."""

    path: str
    type: str
    status: str  # exists | missing | moved | unknown
    moved_to: str | None = None
    by_symbol: bool = False
    """Moved only because a symbol it anchors was found in `moved_to` (the file itself is gone, git says nowhere)."""

    @property
    def verdict(self) -> dict[str, str | None]:
        """The per-path verdict every `--json` carries: exists | moved (with `to`) | missing | unverified."""
        word = "unverified" if self.status == "unknown" else self.status
        return {
            "path": quote_path(self.path),
            "verdict": word,
            "to": quote_path(self.moved_to) if self.moved_to else None,
        }


@record(frozen=True)
class AnchorVerdict:
    """One anchor of an item (a symbol or line range in a referenced file) and what the checkout says about it.

    `status` is fresh | drifted | moved | missing | unknown; `path` is where the file is now (it follows renames),
    `start`/`end` where the span is now (None when it is not found). A symbol gone from its file but found renamed
    in place or in another file is `moved`: `path` and `current_symbol` say where, `changed` whether its text
    changed beyond whitespace on the way (then it is drifted too).
    """

    anchor_id: int
    name: str
    recorded_path: str
    path: str
    symbol: str | None
    recorded_start: int
    recorded_end: int
    recorded_hash: str
    head_oid: str | None
    status: str
    start: int | None = None
    end: int | None = None
    current_hash: str | None = None
    current_symbol: str | None = None
    changed: bool = False

    @property
    def moved_to(self) -> str | None:
        """Where a moved symbol is now (`file:symbol`), else None."""
        return f"{self.path}:{self.current_symbol}" if self.status == "moved" else None

    @property
    def drifted(self) -> bool:
        """Its content changed beyond whitespace (where it is now, when it moved)."""
        return self.status == "drifted" or (self.status == "moved" and self.changed)

    @property
    def verdict(self) -> dict[str, str | None]:
        """The per-path verdict of a drifted, moved or gone anchor (`path` is `file:symbol` or `file:lines`)."""
        to = self.moved_to
        return {"path": quote_path(self.name), "verdict": self.status, "to": quote_path(to) if to else None}


@record(frozen=True)
class Validation:
    """All references of one memory item, judged together, with the anchors inside them."""

    refs: tuple[RefVerdict, ...] = ()
    anchors: tuple[AnchorVerdict, ...] = ()

    def count(self, status: str) -> int:
        """How many references have `status` (a drifted, moved or missing anchor counts as one more)."""
        found = sum(1 for r in self.refs if r.status == status)
        if status == "drifted":
            found += sum(1 for a in self.anchors if a.drifted)
        elif status in ("moved", "missing"):
            found += sum(1 for a in self.anchors if a.status == status)
        return found

    @property
    def drifted(self) -> bool:
        """True when a symbol or line range this item names changed since it was written (where it is now)."""
        return any(a.drifted for a in self.anchors)

    @property
    def stale(self) -> bool:
        """True when any reference is missing."""
        return self.count("missing") > 0

    @property
    def all_missing(self) -> bool:
        """True when there are references and every one is missing."""
        return bool(self.refs) and all(r.status == "missing" for r in self.refs)

    @cached_property
    def label(self) -> str | None:
        """`stale: missing …` and/or `moved: a → b`, joined by `; `; None when neither applies.

        Read once per validation (a verdict never changes): a recall line, its labels and its surface item each
        ask for it."""
        parts = []
        missing = [quote_path(r.path) for r in self.refs if r.status == "missing"]
        missing += [quote_path(a.name) for a in self.anchors if a.status == "missing"]
        if missing:
            more = f", +{len(missing) - 3} more" if len(missing) > 3 else ""
            parts.append("stale: missing " + ", ".join(missing[:3]) + more)
        # A symbol that moved names its file's move too: the file's own `a → b` is left out when a symbol says it.
        went = [a for a in self.anchors if a.status == "moved"]
        said = {(a.recorded_path, a.path) for a in went}
        moved = [f"{quote_path(a.name)} → {quote_path(a.moved_to or '')}" for a in went]
        moved += [
            f"{quote_path(r.path)} → {quote_path(r.moved_to or '')}"
            for r in self.refs
            if r.status == "moved" and (r.path, r.moved_to) not in said
        ]
        if moved:
            more = f", +{len(moved) - 2} more" if len(moved) > 2 else ""
            parts.append("moved: " + ", ".join(moved[:2]) + more)
        drifted = [f"{quote_path(a.moved_to or a.name)} changed" for a in self.anchors if a.drifted]
        if drifted:
            more = f", +{len(drifted) - 2} more" if len(drifted) > 2 else ""
            parts.append("drifted: " + ", ".join(drifted[:2]) + more)
        return "; ".join(parts) or None

    @property
    def verdicts(self) -> list[dict[str, str | None]]:
        """One verdict per referenced path, never cut short (the label may say `+N more`; this does not)."""
        return [r.verdict for r in self.refs] + [
            a.verdict for a in self.anchors if a.status in ("drifted", "moved", "missing")
        ]

    @property
    def validity(self) -> str:
        """The one-word trust summary used in lead lines and inspection."""
        if not self.refs:
            return "no file refs"
        if self.count("missing"):
            return "stale refs"
        if self.drifted:
            return "code drifted"
        if self.count("unknown"):
            return "refs unverified"
        if self.count("moved"):
            return "refs moved"
        return "refs OK"

    def ranking_score(self, historical: bool) -> float:
        """The graduated, capped "current truth" term of the rerank."""
        missing = self.count("missing")
        drifted = self.count("drifted")
        if self.refs and missing == 0 and drifted:
            # Between fresh (+3) and one missing (-5 at most): the file is there, the code it names changed.
            return max(-1.0, -0.5 * drifted) if historical else max(-3.0, 1.0 - 2.0 * drifted)
        if not self.refs or missing == 0:
            return 3.0 if self.count("exists") + self.count("moved") > 0 else 0.0
        if historical:
            return -1.5 * missing
        return max(-8.0, -4.0 - missing)


_staged: dict[str, tuple[tuple[object, ...], dict[str, str]]] = {}
"""Renames staged in a worktree's index, by worktree, with the HEAD and index file identity they were read at."""


@record
class _ScopeView:
    """One scope's checkout as a pass sees it; what only a gone path needs is loaded on first need."""

    scope_key: str
    worktree: str | None
    files: frozenset[str] | None
    live: bool
    head: str | None = None
    repo: str | None = None
    renames: dict[str, str] | None = None
    by_basename: dict[str, list[str]] | None = None
    rescanned: bool = False
    staged: dict[str, str] | None = None


class Validator:
    """Judges references for one retrieval pass, memoized per scope and per path.

    `at_commit` judges the `current` scope against that commit's tree (read from git objects) instead of
    a working tree: a branch that no worktree has checked out is checked against its tip.
    """

    def __init__(
        self, conn: sqlite3.Connection, current: Scope, home: str | None = None, *, at_commit: str | None = None
    ) -> None:
        """Bind to the store and the scope whose worktree (or `at_commit`) is the live checkout."""
        self._conn = conn
        self._current = current
        self._home = home if home is not None else os.path.expanduser("~")
        self._at_commit = at_commit
        self._views: dict[str, _ScopeView] = {}
        self._memo: dict[tuple[str, str, str | None], RefVerdict] = {}
        self._pending: dict[tuple[str, str], set[str]] = {}
        self._sources: dict[tuple[str, str], anchors.Source | None] = {}
        self._seeker: seek.Seeker | None = None
        self._looked: dict[int, tuple[_ScopeView, str, anchors.Located, anchors.Source | None, bool]] = {}
        self._rows = JudgedRows(conn)
        self.expect = self._rows.expect
        """Tell the pass which items its next batches come from (`JudgedRows`): their rows are read at once."""
        self.upgrades: list[tuple[int, str, int, int, str]] = []
        """Anchors of the span format before decorators counted whose body still holds: (id, old digest, start,
        end, digest) as the current format reads them, for the caller to store (`queries.upgrade_anchors`)."""

    def _view(self, scope_key: str) -> _ScopeView:
        view = self._views.get(scope_key)
        if view is not None:
            return view
        current = scope_key == self._current.key
        if not current and scope_key == project_scope_key(meta_value(self._conn, "root_path")):
            # The project layer has no checkout of its own: it is judged against the current one (`checkouts`).
            view = self._view(self._current.key)
        elif current and self._at_commit is not None:
            repo = self._current.git_root or self._current.worktree
            listing = history.git(repo, "ls-tree", "-r", "-z", "--name-only", self._at_commit)
            files = frozenset(p for p in (listing or "").split("\0") if p) if listing is not None else None
            # Its rename map is the scope's own, as when a worktree has it checked out (`_renames`, read on need).
            view = _ScopeView(scope_key, None, files, False, self._at_commit, repo)
        elif current:
            # The live checkout is judged by stat; its stored inventory is read only for a basename move.
            head = (
                read_head(self._current.git_dir, self._current.git_root)[1]
                if (self._current.git_dir and self._current.git_root)
                else None
            )
            view = _ScopeView(scope_key, self._current.worktree, None, True, head, self._current.worktree)
        else:
            graph = self._conn.execute(
                "SELECT worktree_path, files_json, head_oid FROM current_app_graphs WHERE scope_key=?", (scope_key,)
            ).fetchone()
            files = frozenset(json.loads(graph["files_json"])) if graph is not None else None
            worktree = graph["worktree_path"] if graph is not None else None
            view = _ScopeView(
                scope_key, worktree, files, False, graph["head_oid"] if graph is not None else None, worktree
            )
        self._views[scope_key] = view
        return view

    def _renames(self, view: _ScopeView) -> dict[str, str]:
        if view.renames is None:
            view.renames = {
                r["old_path"]: r["new_path"]
                for r in self._conn.execute(
                    "SELECT old_path, new_path FROM file_renames WHERE scope_key=?", (view.scope_key,)
                )
            }
        return view.renames

    def _by_basename(self, view: _ScopeView) -> dict[str, list[str]]:
        if view.by_basename is None:
            if view.files is None and view.live:
                graph = self._conn.execute(
                    "SELECT files_json FROM current_app_graphs WHERE scope_key=?", (view.scope_key,)
                ).fetchone()
                view.files = frozenset(json.loads(graph["files_json"])) if graph is not None else frozenset()
            view.by_basename = {}
            for f in view.files or ():
                view.by_basename.setdefault(os.path.basename(f), []).append(f)
        return view.by_basename

    def _present(self, view: _ScopeView, path: str) -> bool:
        if view.live and view.worktree:
            return os.path.isfile(os.path.join(view.worktree, path))
        return view.files is not None and path in view.files

    def _chain(self, view: _ScopeView, recorded: str) -> history.Chain:
        """The history chain from `recorded` to the view's HEAD: this process's cache, the store's, else git."""
        head = view.head or ""
        key = (recorded, head)
        chain = inventory.chain_cache.get(key)
        if chain is not None:
            return chain
        # Every recorded HEAD this pass will need towards this head is loaded (or walked) at once: one
        # query, and at most one `git log` over the union of their ranges.
        wanted = [
            r
            for r in {recorded, *self._pending.get((view.repo or "", head), ())}
            if (r, head) not in inventory.chain_cache
        ]
        marks = ",".join("?" * len(wanted))
        for row in self._conn.execute(
            f"SELECT from_oid, start_oid, moves_json FROM rename_chains WHERE to_oid=? AND from_oid IN ({marks})",
            (head, *wanted),
        ):
            inventory.remember_chain(
                row["from_oid"], head, history.Chain(row["start_oid"], json.loads(row["moves_json"]))
            )
        walk = [r for r in wanted if (r, head) not in inventory.chain_cache]
        if walk and view.repo and head:
            walked = history.chains(view.repo, walk, head)
            for oid, found in walked.items():
                inventory.remember_chain(oid, head, found)
            inventory.store_chains(self._conn, head, walked)
        for oid in walk:
            if (oid, head) not in inventory.chain_cache:
                inventory.remember_chain(oid, head, history.Chain(None))
        self._pending.pop((view.repo or "", head), None)
        return inventory.chain_cache[key]

    def judge(self, scope_key: str, path: str, ref_type: str, recorded: str | None = None) -> RefVerdict:
        """Decide exists / missing / moved / unknown for one reference of an item in `scope_key`.

        `recorded` is the HEAD the reference was written on; without it (references stored before it was
        recorded) a gone path is looked up in the scope's rename map and by a unique basename.
        """
        key = (scope_key, path, recorded)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        verdict = self._judge(scope_key, path, ref_type, recorded)
        self._memo[key] = verdict
        return verdict

    def _judge(self, scope_key: str, path: str, ref_type: str, recorded: str | None) -> RefVerdict:
        if ref_type == "absolute_path":
            full = path
            if path.startswith("~/"):
                if not self._home:
                    return RefVerdict(path, ref_type, "unknown")
                full = os.path.join(self._home, path[2:])
            return RefVerdict(path, ref_type, "exists" if os.path.exists(full) else "missing")
        view = self._view(scope_key)
        if not view.live and view.files is None:
            return RefVerdict(path, ref_type, "unknown")
        if view.live and not (view.worktree and os.path.isdir(view.worktree)):
            return RefVerdict(path, ref_type, "unknown")
        if self._present(view, path):
            return RefVerdict(path, ref_type, "exists")
        if recorded is None or not view.head:
            return self._legacy(view, path, ref_type)
        target = path
        if recorded != view.head:
            chain = self._chain(view, recorded)
            if chain.start is None:
                return RefVerdict(path, ref_type, "unknown")
            followed = chain.follow(path)
            if followed is None:
                return RefVerdict(path, ref_type, "missing")
            target = followed
            if target != path and self._present(view, target):
                return RefVerdict(path, ref_type, "moved", target)
        # Gone from the checkout without a commit saying where: a staged rename, else a plain `mv`.
        moved = self._uncommitted_move(view, target)
        if moved is not None and moved != path:
            return RefVerdict(path, ref_type, "moved", moved)
        return RefVerdict(path, ref_type, "missing")

    def _uncommitted_move(self, view: _ScopeView, path: str) -> str | None:
        """Where a path went since HEAD: a rename staged in the index (another worktree's too, read there), else the
        one file of its basename."""
        if not view.worktree:
            return None
        if view.staged is None:
            view.staged = self._staged_renames(view)
        staged = view.staged.get(path)
        if staged is not None and self._present(view, staged):
            return staged
        return self._rescanned_basename_move(view, path)

    def _staged_renames(self, view: _ScopeView) -> dict[str, str]:
        """The renames staged in the view's checkout's index (`git diff --cached` there).

        Asking git costs a process, and every recall whose results name a missing file asked (a recall on a path topic
        spent most of its time there). Staging rewrites the index file, so within a process the answer
        is reused while HEAD and the index file (inode, size, mtime) are the ones it was read at.
        """
        worktree = view.worktree or ""
        key: tuple[object, ...] | None = None
        git_dir = self._current.git_dir if worktree == self._current.worktree else None
        if git_dir:
            try:
                st = os.stat(os.path.join(git_dir, "index"))
                key = (view.head, st.st_ino, st.st_size, st.st_mtime_ns)
            except OSError:
                key = (view.head, None)
            hit = _staged.get(worktree)
            if hit is not None and hit[0] == key:
                return hit[1]
        out = history.git(worktree, "diff", "--cached", "--name-status", "-M", "-z", "HEAD")
        staged = dict(inventory.parse_renames(out or ""))
        if key is not None and out is not None:
            _staged[worktree] = (key, staged)
        return staged

    def _legacy(self, view: _ScopeView, path: str, ref_type: str) -> RefVerdict:
        """A reference with no recorded HEAD: the scope's accumulated rename map, then a unique basename."""
        target, hops = path, 0
        renames = self._renames(view)
        while target in renames and hops < RENAME_HOPS:
            target, hops = renames[target], hops + 1
        if hops and target != path and self._present(view, target):
            return RefVerdict(path, ref_type, "moved", target)
        moved = self._basename_move(view, path)
        if moved is None:
            moved = self._rescanned_basename_move(view, path)
        if moved is not None:
            return RefVerdict(path, ref_type, "moved", moved)
        return RefVerdict(path, ref_type, "missing")

    def _rescanned_basename_move(self, view: _ScopeView, path: str) -> str | None:
        if not view.live or view.rescanned or not view.worktree:
            return self._basename_move(view, path) if view.rescanned else None
        # The cached inventory only moves with HEAD and the index; an untracked move does neither,
        # so before calling a reference missing, look at the checkout as it is now (once per pass,
        # and at most every RESCAN_SECONDS in a long-lived process: meanwhile the answer is "missing").
        view.rescanned = True
        view.files = inventory.rescan(view.worktree)
        view.by_basename = None
        return self._basename_move(view, path)

    def _basename_move(self, view: _ScopeView, path: str) -> str | None:
        """The one file elsewhere with this basename, or None when there is none or several."""
        candidates = [f for f in self._by_basename(view).get(os.path.basename(path), []) if f != path]
        if len(candidates) == 1 and self._present(view, candidates[0]):
            return candidates[0]
        return None

    def validate(self, item_id: str, scope_key: str) -> Validation:
        """Judge every stored reference of one item."""
        return self.validate_many([(item_id, scope_key)])[item_id]

    def validate_many(self, items: list[tuple[str, str]]) -> dict[str, Validation]:
        """Judge the references of many items with one query (none when `expect` read them already)."""
        if not items:
            return {}
        scopes = dict(items)
        refs: dict[str, list[RefVerdict]] = {item_id: [] for item_id, _ in items}
        pinned: dict[str, list[AnchorVerdict]] = {}
        ids = list(scopes)
        for start in range(0, len(ids), 500):
            rows, anchor_rows = self._rows.read(ids[start : start + 500])
            for row in rows:
                if row["head_oid"]:
                    view = self._view(scopes[row["memory_item_id"]])
                    self._pending.setdefault((view.repo or "", view.head or ""), set()).add(row["head_oid"])
            for row in rows:
                item_id = row["memory_item_id"]
                refs[item_id].append(
                    self.judge(scopes[item_id], row["normalized_path"], row["reference_type"], row["head_oid"])
                )
            self._list_changes(anchor_rows, scopes, refs)
            for row in anchor_rows:
                item_id = row["memory_item_id"]
                pinned.setdefault(item_id, []).append(self._check_anchor(scopes[item_id], refs[item_id], row))
        return {
            item_id: Validation(tuple(_followed_refs(v, pinned.get(item_id, ()))), tuple(pinned.get(item_id, ())))
            for item_id, v in refs.items()
        }

    def _look(
        self, scope_key: str, refs: list[RefVerdict], row: sqlite3.Row
    ) -> tuple[_ScopeView, str, anchors.Located, anchors.Source | None, bool]:
        """An anchor in its file as it is now (following the file's move): (view, where, what was found there, the
        file, whether the symbol is gone from it and is to be followed)."""
        path = row["path"]
        ref = next((r for r in refs if r.path == path), None)
        if ref is None:
            ref = self.judge(scope_key, path, "file", row["head_oid"])
        where = ref.moved_to if ref.status == "moved" and ref.moved_to else path
        view = self._view(scope_key)
        found = anchors.Located("unknown")
        source = None
        if ref.status in ("exists", "moved") and view.worktree and self._at_commit is None:
            source = self._source(view.worktree, where)
            found = anchors.locate(source, row["symbol"], row["start_line"], row["end_line"], row["content_hash"])
        gone = bool(
            row["symbol"]
            and view.worktree
            and self._at_commit is None
            and (found.status == "missing" or ref.status == "missing")
        )
        return view, where, found, source, gone

    def _list_changes(self, rows: list[sqlite3.Row], scopes: dict[str, str], refs: dict[str, list[RefVerdict]]) -> None:
        """Look at every anchor with a symbol and a commit in its file now (`_look`); those whose symbol is gone are
        prepared for following all at once (`seek.Seeker.prepare`: one git process per question and checkout)."""
        gone: list[seek.Gone] = []
        for row in rows:
            oid = row["head_oid"]
            if not row["symbol"] or not oid or not history.OID.fullmatch(oid):
                continue
            looked = self._look(scopes[row["memory_item_id"]], refs[row["memory_item_id"]], row)
            self._looked[row["id"]] = looked
            if looked[4] and looked[0].head:
                gone.append((looked[0], looked[1], looked[3], row))
        if gone:
            self._seek().prepare(gone)

    def _check_anchor(self, scope_key: str, refs: list[RefVerdict], row: sqlite3.Row) -> AnchorVerdict:
        """Judge one anchor: in its file as it is now (following the file's move), by content or symbol."""
        path = row["path"]
        looked = self._looked.pop(row["id"], None)
        view, where, found, source, gone = looked if looked is not None else self._look(scope_key, refs, row)
        if gone:
            # Gone from the file git follows it to (or with it): renamed in place, or moved to another file?
            followed = self._seek().follow(view, row, where, source)
            if followed is not None:
                found = followed
        elif found.status == "fresh" and row["symbol"] and found.digest != row["content_hash"] and found.digest:
            self.upgrades.append((row["id"], row["content_hash"], found.start or 0, found.end or 0, found.digest))
        recorded = anchors.Anchor(where, row["symbol"], row["start_line"], row["end_line"], row["content_hash"])
        return AnchorVerdict(
            row["id"],
            recorded.name,
            path,
            found.path or where,
            row["symbol"],
            row["start_line"],
            row["end_line"],
            row["content_hash"],
            row["head_oid"],
            found.status,
            found.start,
            found.end,
            found.digest,
            found.symbol or row["symbol"],
            found.changed,
        )

    def _source(self, worktree: str, path: str) -> anchors.Source | None:
        key = (worktree, path)
        if key not in self._sources:  # one stat per file per pass
            self._sources[key] = anchors.read_source(worktree, path)
        return self._sources[key]

    def _seek(self) -> seek.Seeker:
        if self._seeker is None:
            self._seeker = seek.Seeker(self._source)
        return self._seeker


def _followed_refs(refs: list[RefVerdict], pinned: tuple[AnchorVerdict, ...] | list[AnchorVerdict]) -> list[RefVerdict]:
    """A missing file whose anchored symbol was found in another file moved with it: the reference reads moved there
    (the first such symbol's file)."""
    moved: dict[str, str] = {}
    for a in pinned:
        if a.status == "moved":
            moved.setdefault(a.recorded_path, a.path)
    if not moved:
        return refs
    out = []
    for ref in refs:
        if ref.status == "missing":
            went = moved.get(ref.path)
            if went is not None and went != ref.path:
                ref = RefVerdict(ref.path, ref.type, "moved", went, by_symbol=True)
        out.append(ref)
    return out


@record(frozen=True)
class Checkout:
    """What one scope's memories are checked against, or why they cannot be (`validator` None)."""

    scope_key: str
    against: str  # worktree | branch tip | commit | unchecked
    where: str | None
    validator: Validator | None
    reason: str | None = None


def checkouts(conn: sqlite3.Connection, current: Scope, project_key: str, keys: list[str], now: str) -> list[Checkout]:
    """For each scope key, its own checkout state: the worktree on that branch, else the branch tip (git objects).

    The project layer and a store outside git are checked against the current checkout; a branch that no
    longer exists, a detached commit git no longer has, or a scope of another worktree's repository cannot
    be checked, and say why.
    """
    found: list[Checkout] = []
    if current.git_root is None:
        for key in keys:
            if key in (current.key, project_key):
                found.append(Checkout(key, "worktree", current.worktree, Validator(conn, current)))
            else:
                found.append(Checkout(key, "unchecked", None, None, "not in a git repository"))
        return found
    live: dict[str, Scope] = {current.key: current}
    for tree in list_worktrees(current.worktree):
        if os.path.isdir(tree.path):
            other = detect_scope(tree.path)
            live.setdefault(other.key, other)
    for key in keys:
        scope = live.get(key)
        if key == project_key:
            scope = current
        if scope is not None:
            if scope is not current:
                refresh_app_graph(conn, scope, now)
            found.append(Checkout(key, "worktree", scope.worktree, Validator(conn, scope)))
            continue
        branch, oid = scope_key_branch(key), scope_key_oid(key)
        if branch is not None and BRANCH_TAG in branch:  # a name storing would change: found by its key
            tip = (branch_tips(current.git_root) or {}).get(branch)
        else:
            ref = f"refs/heads/{branch}" if branch else oid
            tip = (
                history.git(current.git_root, "rev-parse", "--verify", "-q", "--end-of-options", f"{ref}^{{commit}}")
                if ref
                else None
            )
        if not tip or not tip.strip():
            why = (
                f"branch {quote_path(branch)} no longer exists"
                if branch
                else f"commit {oid[:12]} is no longer in the repository"
                if oid
                else "no checkout of this scope"
            )
            found.append(Checkout(key, "unchecked", None, None, why))
            continue
        tip = tip.strip()
        at = Scope("branch" if branch else "detached", key, current.worktree, current.git_root, branch, tip, None)
        found.append(Checkout(key, "branch tip" if branch else "commit", tip, Validator(conn, at, at_commit=tip)))
    return found
