"""Store identity and scope keys, derived from git for a working directory.

One store per repository (every worktree shares it), partitioned inside by a scope key that
carries the worktree and the branch (or detached HEAD), or the project root outside git.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path
from typing import Literal

from cortex_engine.base import settings
from cortex_engine.base.records import record
from cortex_engine.base.untrusted import quote_path

ScopeType = Literal["branch", "detached", "project"]

GIT_TIMEOUT_S: float = 10
"""How long a git asked about a directory may take; a git slower than this (a hung filesystem, a huge repository)
is not waited for: the directory is taken as outside git and branch tips as unknown. Read at each call."""


@record(frozen=True)
class Scope:
    """Where a memory lives inside a store: the key every read and write carries."""

    type: ScopeType
    key: str
    worktree: str
    git_root: str | None
    branch: str | None
    head_oid: str | None
    git_dir: str | None

    @property
    def label(self) -> str:
        """A short human label: the branch (quoted when it is not a plain name), `detached@abc1234`, or the
        worktree's name."""
        if self.type == "branch" and self.branch:
            return quote_path(self.branch)
        if self.type == "detached" and self.head_oid:
            return f"detached@{self.head_oid[:7]}"
        return quote_path(os.path.basename(self.worktree.rstrip("/")) or "project")


@record(frozen=True)
class StoreIdentity:
    """Which store a working directory belongs to, and how that was decided."""

    store_id: str
    label: str
    identifying_path: str
    store_dir: Path
    db_path: Path
    degraded_reason: str | None
    root: str


def cortex_home() -> Path:
    """`$CORTEX_HOME` when set and non-blank, else `~/.cortex`."""
    return settings.home()


def normalize_scope_path(path: str) -> str:
    """Resolve, forward-slash, collapse repeated slashes, drop a trailing slash, lowercase."""
    resolved = os.path.abspath(path).replace("\\", "/")
    resolved = re.sub(r"/+", "/", resolved)
    if len(resolved) > 1:
        resolved = resolved.rstrip("/")
    return resolved.lower()


def shown_scope_key(key: str, *paths: str | None) -> str:
    """A scope key for a person to read: each of `paths` (the repository's real paths) that the key holds
    lowercased is shown in its real case. The key itself stays as stored; only its display changes."""
    for path in sorted((p for p in paths if p), key=len, reverse=True):
        stored = normalize_scope_path(path)
        real = re.sub(r"/+", "/", os.path.abspath(path).replace("\\", "/"))
        real = real.rstrip("/") if len(real) > 1 else real
        if stored != real and real.lower() == stored:
            key = key.replace(stored, real)
    return key


_SANITIZE = re.compile(r"[^A-Za-z0-9._-]+")


def sanitize_label(raw: str) -> str:
    """Make a cosmetic, filesystem-safe store label (never parsed)."""
    label = _SANITIZE.sub("-", raw).lstrip("-._").rstrip("-._")
    label = label[:32].rstrip("-._")
    return label or "project"


def _git(cwd: str, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout


@record(frozen=True)
class GitLocation:
    """What git says about a working directory (None fields when not in a repository)."""

    worktree: str
    common_dir: str
    git_dir: str


def locate_git(cwd: str) -> GitLocation | None:
    """Ask git once for the worktree, common dir and per-worktree git dir of `cwd`."""
    out = _git(cwd, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir", "--git-dir")
    if out is None:
        return None
    lines = out.splitlines()
    if len(lines) < 3:
        return None
    worktree, common, git_dir = (os.path.realpath(os.path.join(cwd, line)) for line in lines[:3])
    return GitLocation(worktree=worktree, common_dir=common, git_dir=git_dir)


def read_head(git_dir: str, common_dir: str) -> tuple[str | None, str | None]:
    """Return (branch, oid) from HEAD without spawning git; oid may be None on an unborn branch.

    The branch is the exact name git holds (bytes that are not UTF-8 kept as surrogate escapes).
    """
    try:
        head = Path(git_dir, "HEAD").read_bytes().decode("utf-8", "surrogateescape").strip()
    except OSError:
        return None, None
    if head.startswith("ref:"):
        ref = head[4:].strip()
        branch = ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref
        return branch, _resolve_ref(ref, git_dir, common_dir)
    if re.fullmatch(r"[0-9a-fA-F]{40,64}", head):
        return None, head.lower()
    return None, None


def _resolve_ref(ref: str, git_dir: str, common_dir: str) -> str | None:
    for base in (git_dir, common_dir):
        try:
            value = Path(base, ref).read_bytes().decode("utf-8", "surrogateescape").strip()
        except OSError:
            continue
        if re.fullmatch(r"[0-9a-fA-F]{40,64}", value):
            return value.lower()
    try:
        packed = Path(common_dir, "packed-refs").read_bytes().decode("utf-8", "surrogateescape")
    except OSError:
        return None
    for line in packed.splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and parts[1].strip() == ref:
            return parts[0].lower()
    return None


_UNSET = GitLocation("", "", "")


def detect_scope(cwd: str, loc: GitLocation | None = _UNSET) -> Scope:
    """Derive the scope of a working directory: branch, detached HEAD, or project."""
    real = os.path.realpath(cwd)
    if loc is _UNSET:
        loc = locate_git(real)
    if loc is None:
        return Scope("project", f"project:{normalize_scope_path(real)}", real, None, None, None, None)
    branch, oid = read_head(loc.git_dir, loc.common_dir)
    root, tree = normalize_scope_path(loc.common_dir), normalize_scope_path(loc.worktree)
    if branch:
        return Scope(
            "branch",
            f"branch:{root}:{tree}:{branch_key(branch)}",
            loc.worktree,
            loc.common_dir,
            branch,
            oid,
            loc.git_dir,
        )
    if oid:
        return Scope("detached", f"detached:{root}:{tree}:{oid}", loc.worktree, loc.common_dir, None, oid, loc.git_dir)
    return Scope("project", f"project:{tree}", loc.worktree, loc.common_dir, None, None, loc.git_dir)


BRANCH_TAG = "~"
"""Separates a cleaned branch name from the digest of its exact bytes in a scope key; git forbids it in ref names."""


def branch_key(branch: str) -> str:
    """A branch's part of its scope key: the name itself when storing it changes nothing, else its cleaned form
    and `~` and the first 16 hex of sha256 of the exact bytes git reports.

    Every stored string is cleaned (`store/redact.clean_text`: invisible characters removed, secrets redacted),
    so a key holding `feat\u200bx` would be stored as `featx`'s, and two branches `fix/token=aaaa…` and
    `fix/token=bbbb…` as one `fix/token=[REDACTED]`. The digest keeps them apart, and git forbids `~` in a
    ref name, so no plain branch's key can equal a tagged one. A plain name's key is the name, as before.
    """
    from cortex_engine.store.redact import clean_text  # only a branch that needs it pays for the redaction rules

    if branch.isascii() and branch.isprintable() and len(branch) < 6:
        return branch  # nothing shorter than the shortest secret is redacted, nothing printable ASCII is stripped
    cleaned = clean_text(branch)
    if cleaned == branch:
        return branch
    raw = branch.encode("utf-8", "surrogateescape")
    shown = clean_text(raw.decode("utf-8", "replace"))
    tagged = f"{shown}{BRANCH_TAG}{hashlib.sha256(raw).hexdigest()[:16]}"
    return tagged if clean_text(tagged) == tagged else f"{BRANCH_TAG}{hashlib.sha256(raw).hexdigest()[:16]}"


def branch_tips(cwd: str) -> dict[str, str] | None:
    """Every local branch's tip, keyed by its `branch_key`, in one git call; None when git cannot say."""
    try:
        done = subprocess.run(
            ["git", "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/"],
            cwd=cwd,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    tips = {}
    for line in done.stdout.decode("utf-8", "surrogateescape").splitlines():
        oid, _, ref = line.partition(" ")
        if ref.startswith("refs/heads/"):
            tips[branch_key(ref[len("refs/heads/") :])] = oid
    return tips


def project_scope_key(root: str | None) -> str:
    """The project-layer scope key of a store rooted at `root`."""
    return f"project:{normalize_scope_path(root)}" if root else "project:default"


def store_identity(cwd: str, home: Path | None = None, loc: GitLocation | None = _UNSET) -> StoreIdentity:
    """Find the store for `cwd`: keyed by realpath(git common dir), or the cwd when outside git."""
    real = os.path.realpath(cwd)
    if loc is _UNSET:
        loc = locate_git(real)
    if loc is not None:
        ident = loc.common_dir
        base = os.path.basename(ident)
        if base == ".git":
            label = sanitize_label(os.path.basename(os.path.dirname(ident)))
        else:
            label = sanitize_label(base[:-4] if base.endswith(".git") else base)
        reason = None
        root = loc.worktree
    else:
        ident = real
        label = sanitize_label(os.path.basename(real))
        reason = f"not a git repository; identity falls back to the working directory realpath ({real})"
        root = real
    store_id = hashlib.sha256(ident.encode("utf-8")).hexdigest()[:16]
    store_dir = (home or cortex_home()) / "projects" / f"{label}-{store_id}"
    return StoreIdentity(store_id, label, ident, store_dir, store_dir / "cortex.db", reason, root)


@record(frozen=True)
class Worktree:
    """One checkout of a repository as `git worktree list` reports it."""

    path: str
    head: str | None
    branch: str | None


def list_worktrees(cwd: str) -> list[Worktree]:
    """Every worktree of the repository `cwd` is in (the main one first); empty outside git."""
    out = _git(cwd, "worktree", "list", "--porcelain", "-z")
    if out is None:
        return []
    found: list[Worktree] = []
    for block in out.split("\0\0"):
        fields = dict((line.split(" ", 1) + [""])[:2] for line in block.split("\0"))
        if "worktree" not in fields or "prunable" in fields:
            continue
        branch = fields.get("branch", "")
        found.append(
            Worktree(
                fields["worktree"],
                fields.get("HEAD") or None,
                branch[len("refs/heads/") :] if branch.startswith("refs/heads/") else None,
            )
        )
    return found


def scope_key_branch(key: str) -> str | None:
    """The branch a `branch:` scope key names (git forbids `:` in branch names, so it follows the last one)."""
    return key.rsplit(":", 1)[1] if key.startswith("branch:") and key.count(":") >= 3 else None


def scope_key_oid(key: str) -> str | None:
    """The commit a `detached:` scope key names, when it is a hex object id (a key from an import is author text:
    `detached:…:--output=/x` names none)."""
    oid = key.rsplit(":", 1)[1] if key.startswith("detached:") and key.count(":") >= 3 else None
    return oid if oid is not None and re.fullmatch(r"[0-9a-fA-F]{4,64}", oid) else None
