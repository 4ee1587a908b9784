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
import re
import sqlite3
import time
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
    from cortex_engine.scope import anchors, follow  # regex- and ast-heavy: imported only when an item has anchors
else:
    anchors = LazyModule("scope.anchors")  # regex- and ast-heavy: imported only when an item has anchors
    follow = LazyModule("scope.follow")  # only a symbol gone from its file is followed


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
        said = {(a.recorded_path, a.path) for a in self.anchors if a.status == "moved"}
        moved = [f"{quote_path(a.name)} → {quote_path(a.moved_to or '')}" for a in self.anchors if a.status == "moved"]
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
        self._uncommitted: dict[str, frozenset[str]] = {}
        self._defined: dict[str, list[str]] = {}
        self._pending_indexed = False
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
        """The files changed since the commit of every anchor that will look for a moved symbol, listed by one git
        process per checkout (`git diff-tree --stdin`) instead of one `git diff` each (`_changed_since` reads them)."""
        wanted: dict[tuple[str, str], list[str]] = {}
        searching: list[tuple[_ScopeView, str, str]] = []
        gone_rows = []
        for row in rows:
            oid = row["head_oid"]
            if not row["symbol"] or not oid or not _OID.fullmatch(oid):
                continue
            looked = self._look(scopes[row["memory_item_id"]], refs[row["memory_item_id"]], row)
            self._looked[row["id"]] = looked
            if looked[4] and looked[0].head:
                gone_rows.append(row)
        self._fetch_recorded([(self._looked[row["id"]][0], row) for row in gone_rows])
        for row in gone_rows:
            oid = row["head_oid"]
            view, where, _, source, gone = self._looked[row["id"]]
            if source is not None and follow.renamed_in_place(
                source,
                where,
                str(row["symbol"]),
                row["start_line"],
                str(row["content_hash"]),
                self._recorded_lines(view, row),
            ):
                continue  # (kept with the file: `_follow` asks it again for nothing)
            searching.append((view, oid, str(row["symbol"]).rsplit(".", 1)[-1]))
            if (view.worktree or "", oid, view.head) not in _committed_changes:
                wanted.setdefault((view.worktree or "", view.head or ""), []).append(oid)
        for (worktree, head), oids in wanted.items():
            oids = list(dict.fromkeys(oids))
            if len(oids) < 2:
                continue  # one `git diff` as `_changed_since` runs it
            # Each line `commit head` is diffed as a commit against that one parent: its header (`--always`: even
            # when nothing changed) is the commit's id, then the files, in the order asked.
            stdin = "".join(f"{oid} {head}\n" for oid in oids)
            out = history.git(
                worktree, "diff-tree", "--stdin", "--always", "-r", "--name-only", "--no-renames", "-z", stdin=stdin
            )
            if out is None:
                continue  # a commit git lost: each is asked alone
            fields = out.split("\0")
            at = 0
            for n, oid in enumerate(oids):
                if at >= len(fields) or fields[at] != oid:
                    break  # not what was asked: the rest are asked alone
                nxt = oids[n + 1] if n + 1 < len(oids) else None
                end = at + 1
                while end < len(fields) and fields[end] and fields[end] != nxt:
                    end += 1
                _remember_changes((worktree, oid, head), frozenset(fields[at + 1 : end]))
                at = end
        # Every name to look for, over the files changed since its anchor's commit: one `git grep` per checkout.
        names: dict[tuple[str, str], list[tuple[str, str, frozenset[str]]]] = {}
        for view, oid, short in searching:
            names.setdefault((view.worktree or "", view.head or ""), []).append(
                (short, oid, self._changed_since(view, oid)[0])
            )
        for (worktree, head), asked in names.items():
            self._narrow(worktree, head, asked)

    def _check_anchor(self, scope_key: str, refs: list[RefVerdict], row: sqlite3.Row) -> AnchorVerdict:
        """Judge one anchor: in its file as it is now (following the file's move), by content or symbol."""
        path = row["path"]
        looked = self._looked.pop(row["id"], None)
        view, where, found, source, gone = looked if looked is not None else self._look(scope_key, refs, row)
        if gone:
            # Gone from the file git follows it to (or with it): renamed in place, or moved to another file?
            followed = self._follow(view, row, where, source)
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

    def _follow(
        self, view: _ScopeView, row: sqlite3.Row, where: str, source: anchors.Source | None
    ) -> anchors.Located | None:
        """A symbol gone from `where` (its file, as git followed it; `source` None when the file is gone too): the
        same text under another name in that file, else the same qualified name, alike, in a file changed since the
        anchor's commit (never a walk of the checkout: git names those files)."""
        symbol, digest = str(row["symbol"]), str(row["content_hash"])
        if source is not None:
            renamed = follow.renamed_in_place(source, where, symbol, row["start_line"], digest)
            if renamed is not None:
                return renamed
        oid = row["head_oid"]
        worktree = view.worktree or ""
        if not oid or not view.head or not _OID.fullmatch(oid):
            return None
        language = anchors.language_of(where)
        short = symbol.rsplit(".", 1)[-1]
        committed, pending = self._changed_since(view, oid)
        # Which changed file defines which name: the committed files that mention it (`_narrow`: once per process
        # and HEAD, their text only changes by an edit, which makes them pending too), the pending ones once a pass.
        index = self._narrow(worktree, view.head or "", [(short, oid, committed)])
        if not self._pending_indexed:
            self._pending_indexed = True
            for path in pending:
                self._index_file(worktree, path, self._defined)
        names = [*index.get(short, ()), *self._defined.get(short, ())]
        candidates = [
            (path, other)
            for path in dict.fromkeys(names)
            if path != where
            and (path in committed or path in pending)
            and anchors.language_of(path) == language
            and (other := self._source(worktree, path)) is not None
        ]
        if not candidates:
            return None
        return follow.moved_to(candidates, symbol, digest, self._recorded_lines(view, row))

    def _narrow(self, worktree: str, head: str, asked: list[tuple[str, str, frozenset[str]]]) -> dict[str, list[str]]:
        """Index (`_index_file`) the committed files among `asked` ((short name, anchor's commit, the files changed
        since)) that could define a wanted name, and return the index of (worktree, head). A file that defines a
        name holds it as a word, so one `git grep -l -w -F` of every wanted name over the files not yet searched for
        it names a superset of the files to read: a note on years-old code has most of the tree changed since, and
        reading each for its names cost more than the rest of the check. Each (name, file) is searched once per
        process and HEAD; when git cannot answer every file not yet searched is read, as before."""
        if len(_name_index) >= 64:
            _name_index.clear()
        done, searched, indexed, index = _name_index.setdefault((worktree, head), (set(), {}, set(), {}))
        todo: dict[str, set[str]] = {}
        for name, oid, files in asked:
            if (name, oid) not in done:  # (a later check: one lookup, not a set difference per name)
                done.add((name, oid))
                todo.setdefault(name, set()).update(files - searched.setdefault(name, set()))
        todo = {name: unseen for name, unseen in todo.items() if unseen}
        if not todo:
            return index
        paths = sorted(p for p in set().union(*todo.values()) - indexed if anchors.language_of(p))
        hits: list[str] | None = []
        if paths:
            patterns = [arg for name in sorted(todo) for arg in ("-e", name)]
            out = history.git(
                worktree,
                "--literal-pathspecs",
                "grep",
                "-l",
                "-z",
                "-w",
                "-F",
                "--full-name",
                "--no-color",
                *patterns,
                "--",
                *paths,
                ok=(0, 1),  # 1: no file mentions any of them
            )
            hits = [p for p in out.split("\0") if p] if out is not None else None
        for path in sorted(set(paths) if hits is None else set(hits) & set(paths)):
            self._index_file(worktree, path, index)
            indexed.add(path)
        for name, unseen in todo.items():
            searched[name] |= unseen
        return index

    def _index_file(self, worktree: str, path: str, index: dict[str, list[str]]) -> None:
        other = self._source(worktree, path) if anchors.language_of(path) else None
        for name in other.short_names() if other is not None else ():
            index.setdefault(name, []).append(path)

    def _changed_since(self, view: _ScopeView, oid: str) -> tuple[frozenset[str], frozenset[str]]:
        """The files changed between commit `oid` and the checkout as it is now: committed since (`git diff oid HEAD`,
        kept for the process), then not committed yet (modified, staged or untracked: `_uncommitted_files`)."""
        worktree = view.worktree or ""
        key = (worktree, oid, view.head or "")
        committed = _committed_changes.get(key)
        if committed is None:
            out = history.git(worktree, "diff", "--name-only", "--no-renames", "-z", oid, view.head or "HEAD", "--")
            committed = frozenset(p for p in (out or "").split("\0") if p)  # a commit git lost: nothing changed
            _remember_changes(key, committed)
        pending = self._uncommitted.get(worktree)
        if pending is None:
            pending = self._uncommitted[worktree] = _uncommitted_files(worktree, view.head or "")
        return committed, pending

    def _fetch_recorded(self, rows: list[tuple[_ScopeView, sqlite3.Row]]) -> None:
        """The files at their anchors' commits (`_recorded_lines` reads them), for every anchor still to follow, by
        one `git cat-file --batch` per checkout instead of one `git show` each."""
        asked: dict[str, list[tuple[str, str, str]]] = {}
        for view, row in rows:
            key = (view.repo or "", str(row["head_oid"]), str(row["path"]))
            if key not in _recorded_blobs and "\n" not in key[2]:
                asked.setdefault(view.worktree or "", []).append(key)
        for worktree, keys in asked.items():
            keys = list(dict.fromkeys(keys))
            if len(keys) < 2:
                continue  # one `git show` as `_recorded_lines` runs it
            repos = {(oid, path): repo for repo, oid, path in keys}
            for (oid, path), text in history.show_many(worktree, list(repos)).items():
                if len(_recorded_blobs) >= 256:
                    _recorded_blobs.clear()
                _recorded_blobs[(repos[oid, path], oid, path)] = text if len(text) <= anchors.MAX_FILE_BYTES else None

    def _recorded_lines(self, view: _ScopeView, row: sqlite3.Row) -> list[str] | None:
        """The anchored span's lines at the commit it was recorded on, when that commit holds exactly that content
        (a note written on uncommitted code has none: only an exact copy can then be called moved)."""
        span_key = (view.repo or "", str(row["head_oid"]), str(row["path"]), row["start_line"], row["end_line"])
        if span_key + (str(row["content_hash"]),) in _recorded_spans:
            return _recorded_spans[span_key + (str(row["content_hash"]),)]
        key = (view.repo or "", str(row["head_oid"]), str(row["path"]))
        if key not in _recorded_blobs:
            blob = history.git(view.worktree or "", "show", f"{row['head_oid']}:{row['path']}")
            if len(_recorded_blobs) >= 256:
                _recorded_blobs.clear()
            _recorded_blobs[key] = blob if blob is not None and len(blob) <= anchors.MAX_FILE_BYTES else None
        blob = _recorded_blobs[key]
        found = None
        if blob is not None:
            lines = blob.splitlines(keepends=True)
            start, end = row["start_line"], row["end_line"]
            if anchors.digest_matches(lines, start, end, row["content_hash"]):
                found = lines[start - 1 : end]
        if len(_recorded_spans) >= 4096:
            _recorded_spans.clear()
        _recorded_spans[span_key + (str(row["content_hash"]),)] = found
        return found


_OID = re.compile(r"[0-9a-f]{7,64}")
_name_index: dict[
    tuple[str, str], tuple[set[tuple[str, str]], dict[str, set[str]], set[str], dict[str, list[str]]]
] = {}
"""Per (worktree, HEAD): the (name, commit) pairs searched, each name and the committed files already searched for it
(`_narrow`), the files read for their names, and which of those defines which name."""
_pending: dict[str, tuple[float, str, frozenset[str]]] = {}
"""The files not committed yet (modified, staged, untracked) per worktree, with when and at which HEAD they were
listed: reused for `inventory.RESCAN_SECONDS` within one process, as the untracked-move rescan is."""


def _uncommitted_files(worktree: str, head: str) -> frozenset[str]:
    """The files of `worktree` that differ from HEAD or are untracked (one `git status`, reused a few seconds)."""
    now = time.monotonic()
    hit = _pending.get(worktree)
    if hit is not None and hit[1] == head and now - hit[0] < inventory.RESCAN_SECONDS:
        return hit[2]
    out = history.git(worktree, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames") or ""
    # Each entry is `XY path`; with --no-renames no entry carries a second path.
    files = frozenset(entry[3:] for entry in out.split("\0") if len(entry) > 3)
    _pending[worktree] = (now, head, files)
    return files


_committed_changes: dict[tuple[str, str, str], frozenset[str]] = {}
"""The files changed between two commits, per (worktree, from, to): what git says never changes."""


def _remember_changes(key: tuple[str, str, str], files: frozenset[str]) -> None:
    if len(_committed_changes) >= 512:
        _committed_changes.clear()
    _committed_changes[key] = files


_recorded_blobs: dict[tuple[str, str, str], str | None] = {}
_recorded_spans: dict[tuple[str, str, str, int, int, str], list[str] | None] = {}
"""An anchor's recorded lines (None: the commit does not hold them), per its place and digest: never changes."""
"""A file at a commit, per (repository, commit, path), for the text of an anchor that left its file."""


def _followed_refs(refs: list[RefVerdict], pinned: tuple[AnchorVerdict, ...] | list[AnchorVerdict]) -> list[RefVerdict]:
    """A missing file whose anchored symbol was found in another file moved with it: the reference reads moved there."""
    out = []
    for ref in refs:
        if ref.status == "missing":
            went = next((a.path for a in pinned if a.status == "moved" and a.recorded_path == ref.path), None)
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
