"""The checkout's inventory and where its files went, kept per scope in the store for `freshness` to judge against.

The inventory (`git ls-files`: tracked and untracked-not-ignored files on disk), the scope's rename map and
the history chains from every recorded HEAD to the current one are rebuilt only when HEAD or the git index
changed (`refresh_app_graph`). `GitPaths` answers what reference extraction asks of a repository.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time

from cortex_engine.scope import history
from cortex_engine.scope.identity import Scope, read_head
from cortex_engine.store.database import in_scopes, transaction, waiting_at_most

_SKIP_BASENAMES = (".cortex.db", ".cortex.db-shm", ".cortex.db-wal", ".cortex.db-journal")


def _git(worktree: str, *args: str) -> str | None:
    return history.git(worktree, *args)


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
    """Rebuild the scope's inventory, rename map and history chains when HEAD or the index moved; else do nothing."""
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
        out = _git(scope.worktree, "diff", "--cached", "--name-status", "-M", "-z", old_head)
        renames = parse_renames(out or "")
    chains = _advance_chains(conn, scope, old_head, head) if head and head != old_head else {}
    with transaction(conn):
        conn.execute(
            "INSERT INTO current_app_graphs(scope_key, worktree_path, "
            "head_oid, signature, files_json, file_count, updated_at) "
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
        if chains:
            conn.executemany(
                "INSERT OR REPLACE INTO rename_chains(from_oid, to_oid, "
                "start_oid, moves_json, computed_at) VALUES (?,?,?,?,?)",
                [(oid, head, chain.start, json.dumps(dict(chain.moves)), now) for oid, chain in chains.items()],
            )
        # A chain is only ever read towards a HEAD some checkout is on.
        conn.execute(
            "DELETE FROM rename_chains WHERE to_oid NOT IN (SELECT "
            "head_oid FROM current_app_graphs WHERE head_oid IS NOT NULL)"
        )
    for oid, chain in chains.items():
        remember_chain(oid, head or "", chain)


def _advance_chains(
    conn: sqlite3.Connection, scope: Scope, old_head: str | None, head: str
) -> dict[str, history.Chain]:
    """The chains from every HEAD this scope's references were recorded on to `head`.

    When the checkout moved forward, the chains already known towards the old HEAD are extended by the
    few commits in between; only recorded HEADs never followed before cost a walk over their range.
    """
    recorded = [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT r.head_oid FROM memory_references r JOIN memory_items m ON m.id = r.memory_item_id "
            f"WHERE {in_scopes(1, 'm.')} AND r.head_oid IS NOT NULL AND r.head_oid != ?",
            (scope.key, head),
        )
    ]
    if not recorded:
        return {}
    repo = scope.worktree
    known = (
        {
            r["from_oid"]: r
            for r in conn.execute(
                "SELECT from_oid, start_oid, moves_json FROM rename_chains WHERE to_oid=?", (old_head,)
            )
        }
        if old_head
        else {}
    )
    done: dict[str, history.Chain] = {}
    if known and old_head and history.is_ancestor(repo, old_head, head):
        step = history.chains(repo, [old_head], head)[old_head]
        for oid in recorded:
            row = known.get(oid)
            if row is not None and row["start_oid"] and step.start is not None:
                done[oid] = history.compose(history.Chain(row["start_oid"], json.loads(row["moves_json"])), step)
            elif oid == old_head:
                done[oid] = step
    rest = [oid for oid in recorded if oid not in done]
    already = (
        {
            r[0]
            for r in conn.execute(
                f"SELECT from_oid FROM rename_chains WHERE to_oid=? AND from_oid IN ({','.join('?' * len(rest))})",
                (head, *rest),
            )
        }
        if rest
        else set()
    )
    rest = [oid for oid in rest if oid not in already]
    if rest:
        done.update(history.chains(repo, rest, head))
    return done


def store_chains(conn: sqlite3.Connection, head: str, walked: dict[str, history.Chain]) -> None:
    """Keep chains a read path walked for the next process, if the store takes the write at once (else skip)."""
    if not walked or conn.in_transaction:
        return
    try:
        with waiting_at_most(conn), transaction(conn):
            conn.executemany(
                "INSERT OR REPLACE INTO rename_chains(from_oid, to_oid, start_oid, moves_json) VALUES (?,?,?,?)",
                [(oid, head, chain.start, json.dumps(dict(chain.moves))) for oid, chain in walked.items()],
            )
    except sqlite3.Error as exc:  # busy or read-only: the chain is walked again next time, nothing is lost
        import logging  # here, not at import: only this rare path logs

        logging.getLogger(__name__).debug("rename chains not stored: %s", exc)


CHAIN_CACHE_SIZE = 512
chain_cache: dict[tuple[str, str], history.Chain] = {}
"""This process's history chains by (recorded HEAD, current HEAD), filled by `remember_chain`."""


def remember_chain(recorded: str, head: str, chain: history.Chain) -> None:
    """Keep a chain for this process (bounded: the oldest entries go first)."""
    if len(chain_cache) >= CHAIN_CACHE_SIZE:
        for key in list(chain_cache)[: CHAIN_CACHE_SIZE // 4]:
            del chain_cache[key]
    chain_cache[(recorded, head)] = chain


def parse_renames(out: str) -> list[tuple[str, str]]:
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


HISTORY_LOOKUPS = 32
"""How many new ref-shaped candidates one extraction asks git's history about (each is a `git log --all`)."""


class GitPaths:
    """What extraction asks of a repository (`references.Repository`), answered from git at one HEAD.

    Each answer costs at most one git call, made on first need and kept for the life of the object.
    """

    def __init__(self, repo: str, head: str | None, inventory: frozenset[str] = frozenset()) -> None:
        """Answer for the repository at `repo` (a worktree), at commit `head`, with the checkout's inventory."""
        self._repo = repo
        self._head = head
        self._inventory = inventory
        self._root: frozenset[str] | None = None
        self._refs: frozenset[str] | None = None
        self._remotes: frozenset[str] | None = None
        self._ever: dict[str, bool] = {}
        self._lookups_left = HISTORY_LOOKUPS

    @property
    def worktree(self) -> str:
        """The worktree these answers are for (where a note's anchors are read)."""
        return self._repo

    def begin(self) -> GitPaths:
        """Start one extraction: it may ask git's history about up to HISTORY_LOOKUPS new paths."""
        self._lookups_left = HISTORY_LOOKUPS
        return self

    def tracked_root_file(self, name: str) -> bool:
        """Whether a file called `name` is tracked at the root at HEAD, or is in the checkout's inventory."""
        if self._root is None:
            names = {f for f in self._inventory if "/" not in f}
            if self._head:
                out = _git(self._repo, "ls-tree", "-z", self._head)
                for entry in (out or "").split("\0"):
                    meta, _, name_ = entry.partition("\t")
                    if name_ and meta.split(" ")[1:2] == ["blob"]:
                        names.add(name_)
            self._root = frozenset(names)
        return name in self._root

    def names_ref(self, path: str) -> bool:
        """Whether `path` is a branch, tag or remote-branch short name, or starts with a remote's name."""
        if self._refs is None:
            out = _git(self._repo, "for-each-ref", "--format=%(refname)")
            refs = set()
            for ref in (out or "").splitlines():
                for prefix in ("refs/heads/", "refs/remotes/", "refs/tags/"):
                    if ref.startswith(prefix):
                        refs.add(ref[len(prefix) :])
            self._refs = frozenset(refs)
            self._remotes = frozenset((_git(self._repo, "remote") or "").split())
        return path in self._refs or path.split("/", 1)[0] in (self._remotes or ())

    def ever_tracked(self, path: str) -> bool:
        """Whether `path` is in the checkout, or some commit of any ref ever had it."""
        if path in self._inventory:
            return True
        hit = self._ever.get(path)
        if hit is None and self._lookups_left <= 0:
            return False  # a text naming many ref-shaped paths gets no more git walks: they read as refs
        if hit is None:
            self._lookups_left -= 1
            out = _git(self._repo, "--literal-pathspecs", "log", "--all", "-1", "--format=%H", "--", path)
            hit = bool(out and out.strip()) or os.path.exists(os.path.join(self._repo, path))
            self._ever[path] = hit
        return hit


def repository_for(conn: sqlite3.Connection, scope_key: str) -> tuple[GitPaths | None, str | None]:
    """The repository a memory of `scope_key` is written in, and its HEAD, as the last refresh saw them."""
    row = conn.execute(
        "SELECT worktree_path, head_oid FROM current_app_graphs WHERE scope_key=?", (scope_key,)
    ).fetchone()
    if row is None or not row["worktree_path"] or not row["head_oid"]:
        return None, None
    key = (row["worktree_path"], row["head_oid"])
    paths = _repositories.get(key)
    if paths is None:
        # The file inventory (a large JSON text) is read only for a checkout not seen yet: a flush asks this for
        # every item it projects.
        files = conn.execute(
            "SELECT files_json FROM current_app_graphs WHERE scope_key=? AND worktree_path=? AND head_oid=?",
            (scope_key, *key),
        ).fetchone()
        if files is None:  # refreshed by another process in between: as if it had been read first
            return repository_for(conn, scope_key)
        paths = GitPaths(row["worktree_path"], row["head_oid"], frozenset(json.loads(files["files_json"])))
        _repositories.clear()
        _repositories[key] = paths
    return paths.begin(), row["head_oid"]


_repositories: dict[tuple[str, str], GitPaths] = {}
