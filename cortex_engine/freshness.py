"""Freshness: the checkout's file inventory, the git rename map, and per-reference verdicts.

Every surface judges references against the checkout as it is at that moment: existence is a
stat on disk (so an uncommitted delete counts), while the inventory used for basename moves and
the rename map are rebuilt only when HEAD or the git index changed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field

from .scope import Scope, read_head
from .store import rollback

RENAME_HOPS = 5
_SKIP_BASENAMES = (".cortex.db", ".cortex.db-shm", ".cortex.db-wal", ".cortex.db-journal")


@dataclass(frozen=True)
class RefVerdict:
    """One reference and what the checkout says about it."""

    path: str
    type: str
    status: str  # exists | missing | moved | unknown
    moved_to: str | None = None


@dataclass(frozen=True)
class Validation:
    """All references of one memory item, judged together."""

    refs: tuple[RefVerdict, ...] = ()

    def count(self, status: str) -> int:
        """How many references have `status`."""
        return sum(1 for r in self.refs if r.status == status)

    @property
    def stale(self) -> bool:
        """True when any reference is missing."""
        return self.count("missing") > 0

    @property
    def all_missing(self) -> bool:
        """True when there are references and every one is missing."""
        return bool(self.refs) and all(r.status == "missing" for r in self.refs)

    @property
    def label(self) -> str | None:
        """`stale: missing …` and/or `moved: a → b`, joined by `; `; None when neither applies."""
        parts = []
        missing = [r.path for r in self.refs if r.status == "missing"]
        if missing:
            more = f", +{len(missing) - 3} more" if len(missing) > 3 else ""
            parts.append("stale: missing " + ", ".join(missing[:3]) + more)
        moved = [f"{r.path} → {r.moved_to}" for r in self.refs if r.status == "moved"]
        if moved:
            more = f", +{len(moved) - 2} more" if len(moved) > 2 else ""
            parts.append("moved: " + ", ".join(moved[:2]) + more)
        return "; ".join(parts) or None

    @property
    def validity(self) -> str:
        """The one-word trust summary used in lead lines and inspection."""
        if not self.refs:
            return "no file refs"
        if self.count("missing"):
            return "stale refs"
        if self.count("moved"):
            return "refs moved"
        if self.count("exists"):
            return "refs OK"
        return "refs unverified"

    def ranking_score(self, historical: bool) -> float:
        """The graduated, capped "current truth" term of the rerank."""
        missing = self.count("missing")
        if not self.refs or missing == 0:
            return 3.0 if self.count("exists") + self.count("moved") > 0 else 0.0
        if historical:
            return -1.5 * missing
        return max(-8.0, -4.0 - missing)


def _git(worktree: str, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", worktree, *args],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def checkout_signature(scope: Scope) -> str | None:
    """HEAD plus the git index's stat: unchanged means the inventory need not be rebuilt."""
    if scope.git_dir is None or scope.git_root is None:
        return None
    _, oid = read_head(scope.git_dir, scope.git_root)
    try:
        st = os.stat(os.path.join(scope.git_dir, "index"))
        index_sig = f"{st.st_mtime_ns}:{st.st_size}"
    except OSError:
        index_sig = "noindex"
    return f"{oid or 'unborn'}|{index_sig}|{scope.worktree}"


def list_files(worktree: str) -> list[str]:
    """The checkout's inventory: tracked and untracked-not-ignored files that exist on disk."""
    out = _git(worktree, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if out is None:
        return []
    files = set()
    for raw in out.split("\0"):
        if not raw or os.path.basename(raw) in _SKIP_BASENAMES:
            continue
        if os.path.isfile(os.path.join(worktree, raw)):
            files.add(raw.replace("\\", "/").removeprefix("./"))
    return sorted(files)


RESCAN_SECONDS = 10.0
_rescans: dict[str, tuple[float, frozenset[str]]] = {}


def rescan(worktree: str) -> frozenset[str]:
    """The live inventory for the untracked-move check, reused for a few seconds within one process."""
    now = time.monotonic()
    hit = _rescans.get(worktree)
    if hit is not None and now - hit[0] < RESCAN_SECONDS:
        return hit[1]
    files = frozenset(list_files(worktree))
    _rescans[worktree] = (now, files)
    return files


def refresh_app_graph(conn: sqlite3.Connection, scope: Scope, now: str) -> None:
    """Rebuild the scope's inventory and rename map when HEAD or the index moved; else do nothing."""
    signature = checkout_signature(scope)
    if signature is None:
        return
    row = conn.execute("SELECT head_oid, signature FROM current_app_graphs WHERE scope_key=?", (scope.key,)).fetchone()
    if row is not None and row["signature"] == signature:
        return
    _, head = read_head(scope.git_dir or "", scope.git_root or "")
    files = list_files(scope.worktree)
    renames: list[tuple[str, str]] = []
    old_head = row["head_oid"] if row is not None else None
    if old_head and head:
        out = _git(scope.worktree, "diff", "--cached", "--name-status", "-M70", "-z", old_head)
        renames = _parse_renames(out or "")
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "INSERT INTO current_app_graphs(scope_key, worktree_path, head_oid, signature, files_json, file_count, updated_at) "
            "VALUES (?,?,?,?,?,?,?) ON CONFLICT(scope_key) DO UPDATE SET worktree_path=excluded.worktree_path, "
            "head_oid=excluded.head_oid, signature=excluded.signature, files_json=excluded.files_json, "
            "file_count=excluded.file_count, updated_at=excluded.updated_at",
            (scope.key, scope.worktree, head, signature, json.dumps(files), len(files), now),
        )
        for old, new in renames:
            conn.execute(
                "INSERT INTO file_renames(scope_key, old_path, new_path, head_oid, detected_at) VALUES (?,?,?,?,?) "
                "ON CONFLICT(scope_key, old_path) DO UPDATE SET new_path=excluded.new_path, "
                "head_oid=excluded.head_oid, detected_at=excluded.detected_at",
                (scope.key, old, new, head, now),
            )
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def _parse_renames(out: str) -> list[tuple[str, str]]:
    fields = out.split("\0")
    pairs, i = [], 0
    while i < len(fields):
        status = fields[i]
        if status.startswith("R") and i + 2 < len(fields):
            pairs.append((fields[i + 1], fields[i + 2]))
            i += 3
        elif status.startswith("C") and i + 2 < len(fields):
            i += 3
        elif status:
            i += 2
        else:
            i += 1
    return pairs


@dataclass
class _ScopeView:
    worktree: str | None
    files: frozenset[str] | None
    live: bool
    renames: dict[str, str]
    by_basename: dict[str, list[str]] = field(default_factory=dict)
    rescanned: bool = False


class Validator:
    """Judges references for one retrieval pass, memoized per scope and per path."""

    def __init__(self, conn: sqlite3.Connection, current: Scope, home: str | None = None) -> None:
        """Bind to the store and the scope whose worktree is the live checkout."""
        self._conn = conn
        self._current = current
        self._home = home if home is not None else os.path.expanduser("~")
        self._views: dict[str, _ScopeView] = {}
        self._memo: dict[tuple[str, str], RefVerdict] = {}

    def _view(self, scope_key: str) -> _ScopeView:
        view = self._views.get(scope_key)
        if view is not None:
            return view
        graph = self._conn.execute(
            "SELECT worktree_path, files_json FROM current_app_graphs WHERE scope_key=?", (scope_key,)
        ).fetchone()
        renames = {
            r["old_path"]: r["new_path"]
            for r in self._conn.execute("SELECT old_path, new_path FROM file_renames WHERE scope_key=?", (scope_key,))
        }
        files = frozenset(json.loads(graph["files_json"])) if graph is not None else None
        live = scope_key == self._current.key
        worktree = self._current.worktree if live else (graph["worktree_path"] if graph is not None else None)
        view = _ScopeView(worktree, files, live, renames)
        for f in files or ():
            view.by_basename.setdefault(os.path.basename(f), []).append(f)
        self._views[scope_key] = view
        return view

    def _present(self, view: _ScopeView, path: str) -> bool:
        if view.live and view.worktree:
            return os.path.isfile(os.path.join(view.worktree, path))
        return view.files is not None and path in view.files

    def judge(self, scope_key: str, path: str, ref_type: str) -> RefVerdict:
        """Decide exists / missing / moved / unknown for one reference of an item in `scope_key`."""
        key = (scope_key, path)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        verdict = self._judge(scope_key, path, ref_type)
        self._memo[key] = verdict
        return verdict

    def _judge(self, scope_key: str, path: str, ref_type: str) -> RefVerdict:
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
        target, hops = path, 0
        while target in view.renames and hops < RENAME_HOPS:
            target, hops = view.renames[target], hops + 1
        if hops and target != path and self._present(view, target):
            return RefVerdict(path, ref_type, "moved", target)
        moved = self._basename_move(view, path)
        if moved is None and view.live and not view.rescanned and view.worktree:
            # The cached inventory only moves with HEAD and the index; an untracked move does neither,
            # so before calling a reference missing, look at the checkout as it is now (once per pass,
            # and at most every RESCAN_SECONDS in a long-lived process: meanwhile the answer is "missing").
            view.rescanned = True
            view.files = rescan(view.worktree)
            view.by_basename = {}
            for f in view.files:
                view.by_basename.setdefault(os.path.basename(f), []).append(f)
            moved = self._basename_move(view, path)
        if moved is not None:
            return RefVerdict(path, ref_type, "moved", moved)
        return RefVerdict(path, ref_type, "missing")

    def _basename_move(self, view: _ScopeView, path: str) -> str | None:
        """The one file elsewhere with this basename, or None when there is none or several."""
        candidates = [f for f in view.by_basename.get(os.path.basename(path), []) if f != path]
        if len(candidates) == 1 and self._present(view, candidates[0]):
            return candidates[0]
        return None

    def validate(self, item_id: str, scope_key: str) -> Validation:
        """Judge every stored reference of one item."""
        return self.validate_many([(item_id, scope_key)])[item_id]

    def validate_many(self, items: list[tuple[str, str]]) -> dict[str, Validation]:
        """Judge the references of many items with one query."""
        if not items:
            return {}
        scopes = dict(items)
        refs: dict[str, list[RefVerdict]] = {item_id: [] for item_id, _ in items}
        ids = list(scopes)
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT memory_item_id, normalized_path, reference_type FROM memory_references "
                f"WHERE memory_item_id IN ({marks}) ORDER BY id",
                chunk,
            )
            for row in rows:
                item_id = row["memory_item_id"]
                refs[item_id].append(self.judge(scopes[item_id], row["normalized_path"], row["reference_type"]))
        return {item_id: Validation(tuple(v)) for item_id, v in refs.items()}

