"""Memory follows merges: a merged branch's active notes come home to the branch it was merged into.

When a branch's tip (or, for a deleted branch, the last HEAD recorded for its scope) is an ancestor of the
current HEAD, or `git cherry` finds a patch-equivalent upstream for every commit of it (a rebase-and-merge or
a one-commit squash), its active notes are written into the current branch's scope through
`notes.write_note`, in timestamp order and at their own timestamps, labelled `from <branch>`: the contradiction
and supersession rules run between them and the notes already there. The `promotions` table records what was
promoted where (keyed by the note a chain of promotions started from), so a check never copies twice.

The check runs at SessionStart and after a flush, only when HEAD moved since the last check of the scope.
Git is asked a fixed number of times whatever the number of branches: one `for-each-ref` for every branch
tip, one or two `rev-list` for the ancestry of every candidate tip, and a batched `git cherry` (two `log -p`
and one `patch-id`). A scope with nothing left to promote costs one query and no git call.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from typing import TYPE_CHECKING

from cortex_engine.base.errors import InvalidInput, NotFound
from cortex_engine.base.lazy import LazyModule
from cortex_engine.base.records import field, record
from cortex_engine.base.untrusted import quote_path
from cortex_engine.memory import notes as notes_mod
from cortex_engine.memory.items import alternatives_list
from cortex_engine.scope import history
from cortex_engine.scope.identity import (
    BRANCH_TAG,
    Scope,
    branch_key,
    branch_tips,
    normalize_scope_path,
    scope_key_branch,
)
from cortex_engine.store import queries
from cortex_engine.store.database import IN_SCOPE, transaction

if TYPE_CHECKING:  # the real modules, so that mypy checks every call through a lazy handle
    from cortex_engine.memory import contradiction
else:
    contradiction = LazyModule("memory.contradiction")

# Focus is the session's "what I am doing now": a merged branch's focus would hijack the target's.
PROMOTED_KINDS = ("decision", "intent", "insight", "blocker")
GIT_TIMEOUT_S = 10


@record(frozen=True)
class Promotion:
    """One note promoted (or, in a dry run, that would be) into the target scope."""

    source_note_id: str
    note_id: str | None
    branch: str
    kind: str
    subject: str | None
    content: str
    timestamp: str
    contests: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape."""
        return {
            "source_note_id": self.source_note_id,
            "note_id": self.note_id,
            "from": self.branch,
            "kind": self.kind,
            "subject": self.subject,
            "content": self.content,
            "timestamp": self.timestamp,
            "contests": list(self.contests),
            "supersedes": list(self.supersedes),
        }


@record(frozen=True)
class MergeCheck:
    """What a merge check did: whether it ran (HEAD moved), which branches it found merged and how."""

    ran: bool
    head: str | None
    merged: dict[str, str] = field(default_factory=dict)
    promoted: tuple[Promotion, ...] = ()


def _git(cwd: str, *args: str, stdin: str | None = None) -> str | None:
    """Run git read-only (no optional locks); None when it fails or is missing."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def branch_prefix(scope: Scope) -> str | None:
    """The scope-key prefix every branch scope of this repository starts with (any worktree)."""
    if not scope.git_root:
        return None
    return f"branch:{normalize_scope_path(scope.git_root)}:"


def branch_of(key: str) -> str | None:
    """The branch name of a branch scope key (git forbids `:` in ref names, so it is the last field)."""
    if not key.startswith("branch:"):
        return None
    return key.rsplit(":", 1)[1] or None


def record_head(conn: sqlite3.Connection, scope: Scope, now: str) -> None:
    """Remember the HEAD last seen for this scope, so a deleted branch still has a tip to test for ancestry."""
    if scope.type != "branch" or not scope.head_oid:
        return
    row = conn.execute("SELECT head_oid FROM scope_heads WHERE scope_key=?", (scope.key,)).fetchone()
    if row is not None and row["head_oid"] == scope.head_oid:
        return
    with transaction(conn):
        conn.execute(
            "INSERT INTO scope_heads(scope_key, branch, head_oid, seen_at) VALUES (?,?,?,?) ON CONFLICT(scope_key) "
            "DO UPDATE SET head_oid=excluded.head_oid, branch=excluded.branch, seen_at=excluded.seen_at",
            (scope.key, scope_key_branch(scope.key), scope.head_oid, now),
        )


def _candidates(conn: sqlite3.Connection, scope: Scope, branch: str | None = None) -> list[sqlite3.Row]:
    """Active notes of this repository's other branches not yet promoted here, oldest first.

    A note that is itself a promotion counts as the note its chain started from: promoted once per target,
    and never back into the scope it started in.
    """
    prefix = branch_prefix(scope)
    if prefix is None:
        return []
    marks = ",".join("?" * len(PROMOTED_KINDS))
    rows = conn.execute(
        "SELECT n.*, COALESCE(p.source_note_id, n.id) AS root_id, "
        "COALESCE(p.source_scope_key, n.scope_key) AS root_scope "
        "FROM scoped_notes n LEFT JOIN promotions p ON p.note_id = n.id "
        f"WHERE substr(n.scope_key, 1, ?) = ? AND n.scope_key != ? AND n.status = 'active' AND n.kind IN ({marks}) "
        "AND n.origin IS NOT 'shared' "  # a shared decision reaches every branch from the repository itself
        "ORDER BY n.timestamp, n.rowid",
        (len(prefix), prefix, scope.key, *PROMOTED_KINDS),
    ).fetchall()
    done = {r[0] for r in conn.execute("SELECT source_note_id FROM promotions WHERE target_scope_key=?", (scope.key,))}
    out, seen = [], set()
    for row in rows:
        name = branch_of(row["scope_key"])
        if name is None or name == scope_key_branch(scope.key) or (branch is not None and name != branch):
            continue
        if row["root_id"] in done or row["root_id"] in seen or row["root_scope"] == scope.key:
            continue
        seen.add(row["root_id"])
        out.append(row)
    return out


def _recorded_tip(conn: sqlite3.Connection, prefix: str, branch: str) -> str | None:
    """The newest HEAD recorded for a branch's scopes (any worktree), else its newest session's HEAD."""
    for sql in (
        "SELECT head_oid FROM scope_heads WHERE substr(scope_key,1,?)=? AND branch=? ORDER BY seen_at DESC LIMIT 1",
        "SELECT head_oid FROM sessions WHERE substr(scope_key,1,?)=? AND branch_ref=? AND head_oid IS NOT NULL "
        "ORDER BY started_at DESC LIMIT 1",
    ):
        row = conn.execute(sql, (len(prefix), prefix, branch)).fetchone()
        if row is not None and row[0]:
            return str(row[0])
    return None


def _remember_tips(conn: sqlite3.Connection, prefix: str, tips: dict[str, str], now: str) -> None:
    """Record live branch tips against their scopes, so each still has a tip once the branch is deleted."""
    if not tips:
        return
    rows = conn.execute(
        "SELECT DISTINCT scope_key FROM scoped_notes WHERE substr(scope_key,1,?)=?", (len(prefix), prefix)
    ).fetchall()
    updates = [(key, branch_of(key), tips[branch_of(key) or ""], now) for (key,) in rows if branch_of(key) in tips]
    with transaction(conn):
        conn.executemany(
            "INSERT INTO scope_heads(scope_key, branch, head_oid, seen_at) VALUES (?,?,?,?) ON CONFLICT(scope_key) "
            "DO UPDATE SET head_oid=excluded.head_oid, seen_at=excluded.seen_at WHERE head_oid != excluded.head_oid",
            updates,
        )


def _merged_by_ancestry(cwd: str, head: str, tips: dict[str, str]) -> set[str]:
    """The branches whose tip HEAD contains: one `rev-list` lists what the tips hold that HEAD lacks."""
    if not tips:
        return set()
    out = _git(cwd, "rev-list", "--stdin", stdin="\n".join([*sorted(set(tips.values())), f"^{head}"]) + "\n")
    if out is None:
        # An unknown oid (a recorded tip gc'd away) fails the whole call: ask per tip instead.
        return {b for b, oid in tips.items() if _is_ancestor(cwd, oid, head)}
    unmerged = set(out.split())
    return {b for b, oid in tips.items() if oid not in unmerged}


def _is_ancestor(cwd: str, oid: str, head: str) -> bool:
    try:
        done = subprocess.run(
            ["git", "merge-base", "--is-ancestor", oid, head],
            cwd=cwd,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


UPSTREAM_COMMITS = 5000


def patch_merged(cwd: str, head: str, before: str | None, tips: dict[str, str]) -> set[str]:
    """The branches every commit of which has a patch-equivalent upstream: `git cherry`, batched.

    `git cherry HEAD <tip>` per branch costs one process each (seconds at 100 branches), so this asks git three
    times for all of them: the branches' own commits with their patches, the upstream commits that arrived since
    HEAD was last checked (or, on a first check, those the branches lack, at most UPSTREAM_COMMITS), and one
    `git patch-id --stable` over both. A branch whose commits (merges and empty commits aside) all have their
    patch-id upstream was squash-, rebase- or cherry-pick-merged.
    """
    if not tips:
        return set()
    # `--no-color`: a user's `color.ui=always` colours the diffs, and `git patch-id` finds no patch in them
    ours = _git(
        cwd,
        "log",
        "-p",
        "--no-color",
        "--format=commit %H %P",
        "--stdin",
        stdin="\n".join([*sorted(set(tips.values())), f"^{head}"]) + "\n",
    )
    upstream_range = [head, f"^{before}"] if before and before != head else [head, *(f"^{t}" for t in tips.values())]
    theirs = _git(
        cwd,
        "log",
        "-p",
        "--no-color",
        "--no-merges",
        "--format=commit %H",
        f"--max-count={UPSTREAM_COMMITS}",
        "--stdin",
        stdin="\n".join(upstream_range) + "\n",
    )
    if ours is None or theirs is None:
        return set()
    parents: dict[str, list[str]] = {}
    for line in ours.splitlines():
        if line.startswith("commit "):
            oid, *rest = line[7:].split()
            parents[oid] = rest
    ids = _git(cwd, "patch-id", "--stable", stdin=ours + "\n" + theirs)
    if ids is None:
        return set()
    patch_of: dict[str, str] = {}
    for line in ids.splitlines():
        pid, _, oid = line.partition(" ")
        patch_of[oid.strip()] = pid
    upstream = {patch_of[oid] for oid in patch_of if oid not in parents}
    merged = set()
    for name, tip in tips.items():
        own = history.ancestors_within(tip, parents)
        patched = [patch_of[oid] for oid in own if oid in patch_of]
        if patched and all(pid in upstream for pid in patched):
            merged.add(name)
    return merged


def _head_key(scope: Scope) -> str:
    return f"merge_checked:{scope.key}"


def check(conn: sqlite3.Connection, scope: Scope, now: str, *, force: bool) -> MergeCheck:
    """Promote every merged branch's notes into this branch's scope, when HEAD moved since the last check."""
    if scope.type != "branch" or not scope.head_oid or not scope.git_root:
        return MergeCheck(False, scope.head_oid)
    key = _head_key(scope)
    last = queries.meta_value(conn, key)
    if not force and last == scope.head_oid:
        return MergeCheck(False, scope.head_oid)
    before = _previous_head(conn, scope, last)
    record_head(conn, scope, now)
    pending = _candidates(conn, scope)
    merged: dict[str, str] = {}
    promoted: list[Promotion] = []
    if pending:
        # the branches the candidates were written on (`_candidates` keeps only notes of a named branch)
        branches = {name for note in pending if (name := branch_of(note["scope_key"]))}
        merged = _merged_branches(conn, scope, branches, before, now)
        chosen = [n for n in pending if branch_of(n["scope_key"]) in merged]
        promoted = _promote(conn, scope, chosen, merged, now)
    with transaction(conn):
        queries.set_meta(conn, key, scope.head_oid)
    return MergeCheck(True, scope.head_oid, merged, tuple(promoted))


def _previous_head(conn: sqlite3.Connection, scope: Scope, checked: str | None) -> str | None:
    """This scope's HEAD before it moved: the last checked, else the last recorded, else its newest session's."""
    if checked:
        return checked
    row = conn.execute("SELECT head_oid FROM scope_heads WHERE scope_key=?", (scope.key,)).fetchone()
    if row is None:
        row = conn.execute(
            "SELECT head_oid FROM sessions WHERE scope_key=? AND head_oid IS NOT NULL ORDER BY started_at DESC LIMIT 1",
            (scope.key,),
        ).fetchone()
    return str(row[0]) if row is not None and row[0] else None


def _merged_branches(
    conn: sqlite3.Connection, scope: Scope, branches: set[str], before: str | None, now: str
) -> dict[str, str]:
    """Which of `branches` HEAD has newly merged, and how: `ancestor` (merge, fast-forward) or `cherry` (squash).

    A tip HEAD already held before it moved (`before`) proves nothing: a branch with no commits of its own (its
    tip, or its only recorded HEAD, is where it forked) would otherwise look merged the moment it exists.
    """
    prefix = branch_prefix(scope) or ""
    live = branch_tips(scope.worktree) or {}
    tips: dict[str, str] = {}
    for name in branches:
        tip = live.get(name) or _recorded_tip(conn, prefix, name)
        if tip:
            tips[name] = tip
    _remember_tips(conn, prefix, {name: live[name] for name in branches if name in live}, now)
    head = str(scope.head_oid)
    ancestors = _merged_by_ancestry(scope.worktree, head, tips)
    # With no earlier HEAD on record (a scope's first check), HEAD's first parent stands in: a merge made by the
    # newest commit still counts, a branch that never had a commit of its own does not.
    base = before or (_git(scope.worktree, "rev-parse", "-q", "--verify", f"{head}^1^{{commit}}") or "").strip() or None
    if base and base != head and ancestors:
        ancestors -= _merged_by_ancestry(scope.worktree, base, {n: tips[n] for n in ancestors})
    elif base == head:
        ancestors = set()
    if before is None:
        # A tip that IS HEAD on a first check is a fast-forward merge only if the branch ever pointed elsewhere:
        # a branch forked here with no commit of its own has HEAD as its tip too.
        ancestors = {n for n in ancestors if tips[n] != head or _had_own_commit(conn, scope.worktree, prefix, n, head)}
    merged = {name: "ancestor" for name in ancestors}
    rest = {name: tips[name] for name in tips if name not in ancestors}
    for name in patch_merged(scope.worktree, head, before, rest):
        merged[name] = "cherry"
    return merged


def _had_own_commit(conn: sqlite3.Connection, cwd: str, prefix: str, name: str, tip: str) -> bool:
    """Whether branch `name` ever pointed anywhere but `tip`: its reflog, else the HEADs its sessions recorded.

    Without either (no reflog, no session that saw another HEAD) the answer is no: nothing proves a merge, and
    `cortex promote` brings the notes over by hand.
    """
    logged = _git(cwd, "log", "-g", "--format=%H", f"refs/heads/{name}", "--") or ""
    if any(oid != tip for oid in logged.split()):
        return True
    return (
        conn.execute(
            "SELECT 1 FROM sessions WHERE substr(scope_key,1,?)=? AND "
            "branch_ref=? AND head_oid IS NOT NULL AND head_oid != ? "
            "LIMIT 1",
            (len(prefix), prefix, name, tip),
        ).fetchone()
        is not None
    )


def _promote(
    conn: sqlite3.Connection,
    scope: Scope,
    chosen: list[sqlite3.Row],
    how: dict[str, str],
    now: str,
    *,
    dry_run: bool = False,
) -> list[Promotion]:
    """Write each chosen note into `scope` at its own timestamp, oldest first, recording the promotion."""
    done: list[Promotion] = []
    for note in chosen:
        name = branch_of(note["scope_key"]) or ""
        origin = note["origin"] or f"from {name}"
        alternatives = alternatives_list(note["alternatives"])
        if dry_run:
            contests, supersedes = _predict(conn, scope, note)
            done.append(
                Promotion(
                    note["root_id"],
                    None,
                    name,
                    note["kind"],
                    note["subject"],
                    note["content"],
                    note["timestamp"],
                    contests,
                    supersedes,
                )
            )
            continue

        def record_promotion(c: sqlite3.Connection, new_id: str, note: sqlite3.Row = note, name: str = name) -> None:
            c.execute(
                "INSERT OR IGNORE INTO promotions(source_note_id, target_scope_key, source_scope_key, note_id, how, "
                "promoted_at) VALUES (?,?,?,?,?,?)",
                (note["root_id"], scope.key, note["root_scope"], new_id, how.get(name, "manual"), now),
            )

        wrote = notes_mod.write_note(
            conn,
            scope,
            None,
            note["kind"],
            note["content"],
            note["subject"],
            alternatives,
            note["timestamp"],
            origin=origin,
            record=record_promotion,
        )
        done.append(
            Promotion(
                note["root_id"],
                wrote.id,
                name,
                note["kind"],
                wrote.subject,
                wrote.content,
                note["timestamp"],
                tuple(c.id for c in wrote.conflicts),
                wrote.superseded,
            )
        )
    return done


def _predict(conn: sqlite3.Connection, scope: Scope, note: sqlite3.Row) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What promoting `note` would contest and supersede among the target's active notes (a dry run)."""
    if not note["subject"]:
        return (), ()
    rows = conn.execute(
        f"SELECT * FROM scoped_notes WHERE {IN_SCOPE} AND subject=? "
        "AND status='active' AND (kind='decision' OR kind=?)",
        (scope.key, note["subject"], note["kind"]),
    ).fetchall()
    contests = tuple(
        r["id"] for r in rows if r["kind"] == "decision" and contradiction.compare(r["content"], note["content"])
    )
    supersedes = tuple(
        r["id"]
        for r in rows
        if note["kind"] in ("decision", "intent")
        and r["kind"] == note["kind"]
        and r["id"] not in contests
        and not r["conflict"]
        and r["timestamp"] <= note["timestamp"]
    )
    return contests, supersedes


def promote(conn: sqlite3.Connection, scope: Scope, branch: str, now: str, *, dry_run: bool = False) -> list[Promotion]:
    """Promote a branch's active notes into `scope` by hand (a squash merge git cannot recognise).

    Raises:
        InvalidInput: the current scope is not a branch, or is the branch named.
        NotFound: the store holds no scope for that branch.
    """
    branch = branch.strip()
    if branch.startswith("refs/heads/"):
        branch = branch[len("refs/heads/") :]
    branch = branch if BRANCH_TAG in branch else branch_key(branch)  # its key, or a key `cortex branches` showed
    if scope.type != "branch" or branch_prefix(scope) is None:
        raise InvalidInput("promote needs a checked-out branch to promote into", code="not_a_branch")
    if branch == scope_key_branch(scope.key):
        raise InvalidInput(
            f"{branch} is the branch checked out here; name the branch to promote from", code="same_branch"
        )
    prefix = branch_prefix(scope) or ""
    known = conn.execute(
        "SELECT 1 FROM scoped_notes WHERE substr(scope_key,1,?)=? AND substr(scope_key, -?) = ? LIMIT 1",
        (len(prefix), prefix, len(branch) + 1, f":{branch}"),
    ).fetchone()
    if known is None:
        raise NotFound(
            f'No memory of branch "{branch}" in this store; list scopes with: cortex branches', branch=branch
        )
    chosen = _candidates(conn, scope, branch)
    return _promote(conn, scope, chosen, {branch: "manual"}, now, dry_run=dry_run)


@record(frozen=True)
class BranchScope:
    """One scope of the store, as `cortex branches` lists it."""

    scope_key: str
    label: str
    notes: int
    open_contests: int
    last_activity: str | None
    merged_into: tuple[str, ...]
    exists_in_git: bool | None
    current: bool

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape."""
        return {
            "scope_key": self.scope_key,
            "label": self.label,
            "notes": self.notes,
            "open_contests": self.open_contests,
            "last_activity": self.last_activity,
            "merged_into": list(self.merged_into),
            "exists_in_git": self.exists_in_git,
            "current": self.current,
        }


def list_scopes(conn: sqlite3.Connection, scope: Scope) -> list[BranchScope]:
    """Every scope of the store: active notes, open contests, last activity, merged into, exists in git."""
    rows = conn.execute(
        "SELECT scope_key, SUM(notes) AS notes, SUM(contests) AS contests, MAX(last) AS last FROM ("
        " SELECT scope_key, SUM(status='active') AS notes, SUM(status='active' AND conflict=1) AS contests, "
        "  MAX(timestamp) AS last FROM scoped_notes GROUP BY scope_key"
        " UNION ALL SELECT scope_key, 0, 0, MAX(COALESCE(ended_at, started_at)) FROM sessions GROUP BY scope_key"
        " UNION ALL SELECT scope_key, 0, 0, MAX(created_at) FROM scoped_items GROUP BY scope_key"
        ") GROUP BY scope_key ORDER BY last DESC, scope_key"
    ).fetchall()
    merged: dict[str, set[str]] = {}
    for source, target in conn.execute("SELECT DISTINCT source_scope_key, target_scope_key FROM promotions"):
        merged.setdefault(source, set()).add(branch_of(target) or target)
    prefix = branch_prefix(scope)
    live = branch_tips(scope.worktree) if prefix else None
    out = []
    for row in rows:
        key = row["scope_key"]
        name = branch_of(key)
        exists: bool | None = None
        if name is not None and prefix is not None and key.startswith(prefix) and live is not None:
            exists = name in live
        label = (
            quote_path(name)
            if name
            else (f"detached@{key.rsplit(':', 1)[1][:7]}" if key.startswith("detached:") else "project")
        )
        out.append(
            BranchScope(
                key,
                label,
                int(row["notes"] or 0),
                int(row["contests"] or 0),
                row["last"],
                tuple(sorted(merged.get(key, ()))),
                exists,
                key == scope.key,
            )
        )
    return out


def scope_keys_for(conn: sqlite3.Connection, scope: Scope, name: str) -> list[str]:
    """The scope keys a `--scope` argument names: a full key, or a branch name of this repository.

    Raises:
        NotFound: the store holds nothing under that name.
    """
    name = name.strip()
    exists = conn.execute(f"SELECT 1 FROM memory_items WHERE {IN_SCOPE} LIMIT 1", (name,)).fetchone()
    if exists is not None:
        return [name]
    prefix = branch_prefix(scope) or "branch:"
    keys = [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT scope_key FROM scoped_items WHERE substr(scope_key,1,?)=? AND substr(scope_key, -?) = ?",
            (len(prefix), prefix, len(name) + 1, f":{name}"),
        )
    ]
    if not keys:
        raise NotFound(f'No memory under scope "{name}"; list scopes with: cortex branches', scope=name)
    return keys
