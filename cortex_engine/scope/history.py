"""Follow paths through git history, commit by commit, between the HEAD a note was written on and now.

Comparing only the two end points loses a file that was moved in one commit and rewritten in the next
(across the gap git sees a delete and an add). Instead every commit of the range is read with git's own
rename detection (`git log -M --name-status`, default 50 % similarity) and each path is chained through
every rename and delete in topological order. A `Chain` is the result for one (start, head) pair: the
paths that were renamed or deleted, mapped to where they are at `head` (None: deleted).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Mapping

from cortex_engine.base.records import field, record

__all__ = ["OID", "Chain", "chains", "compose", "is_ancestor", "git", "git_bytes", "blobs"]

OID = re.compile(r"[0-9a-f]{7,64}")
"""A commit id as the store records it; anything else is never handed to git as a revision."""

_GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
_TIMEOUT = 120


def git(repo: str, *args: str, stdin: str | None = None, ok: tuple[int, ...] = (0,)) -> str | None:
    """Run git read-only in `repo` (a worktree or a git directory); its stdout, or None on any failure (an exit code
    not in `ok`: `git grep` says "nothing found" with 1)."""
    try:
        done = subprocess.run(
            ["git", "-C", repo, "-c", "core.quotepath=off", *args],
            input=stdin,
            capture_output=True,
            encoding="utf-8",  # text mode: an encoding alone makes subprocess decode
            errors="surrogateescape",
            timeout=_TIMEOUT,
            env={**os.environ, **_GIT_ENV},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode in ok else None


def git_bytes(repo: str, *args: str, ok: tuple[int, ...] = (0,)) -> bytes | None:
    """`git` with its stdout as git wrote it (no decoding, no newline translation: a `\\r` in a file's line stays in
    it), or None on any failure."""
    try:
        done = subprocess.run(
            ["git", "-C", repo, *args], capture_output=True, timeout=_TIMEOUT, env={**os.environ, **_GIT_ENV}
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode in ok else None


def blobs(repo: str, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], bytes]:
    """Files at commits, `(commit, path)` each, read by one `git cat-file --batch`, as git stores them (the caller
    decodes what it reads: `scope/seek._span_lines`); one git cannot read is left out."""
    try:
        done = subprocess.run(
            ["git", "-C", repo, "cat-file", "--batch"],
            input="".join(f"{oid}:{path}\n" for oid, path in wanted).encode("utf-8", "surrogateescape"),
            capture_output=True,
            timeout=_TIMEOUT,
            env={**os.environ, **_GIT_ENV},
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    out = done.stdout if done.returncode == 0 else b""
    found: dict[tuple[str, str], bytes] = {}
    at = 0
    for key in wanted if out else ():
        end = out.find(b"\n", at)
        head = out[at:end].split(b" ")
        if end >= 0 and head[-1] == b"missing":
            at = end + 1
            continue
        if end < 0 or len(head) != 3 or head[1] != b"blob" or not head[2].isdigit():
            break  # not what was asked: the rest are left out
        size = int(head[2])
        found[key] = out[end + 1 : end + 1 + size]
        at = end + 2 + size
    return found


@record(frozen=True)
class Chain:
    """Where each path at `start` is at the head it was followed to.

    `start` is the commit the walk began at: the recorded HEAD, or its merge base with the head when the
    recorded HEAD is no longer an ancestor (rebased away); None when neither is known to git, in which case
    nothing can be said about a path that is gone (`refs unverified`).
    """

    start: str | None
    moves: Mapping[str, str | None] = field(default_factory=dict)

    def follow(self, path: str) -> str | None:
        """The path at the head (itself when untouched), or None when it was deleted."""
        return self.moves.get(path, path)


def is_ancestor(repo: str, older: str, newer: str) -> bool:
    """Whether commit `older` is an ancestor of (or equal to) `newer`."""
    if older == newer:
        return True
    return git(repo, "merge-base", "--is-ancestor", older, newer) is not None


def compose(first: Chain, then: Chain) -> Chain:
    """The chain start → h2 from start → h1 and h1 → h2 (h1 an ancestor of h2)."""
    moves: dict[str, str | None] = {}
    for origin, current in first.moves.items():
        moves[origin] = None if current is None else then.follow(current)
    for path, current in then.moves.items():
        # A path at h1 that is not an origin of the first chain was the same path at the start.
        if path not in first.moves:
            moves[path] = current
    return Chain(first.start, moves)


def chains(repo: str, recorded: Iterable[str], head: str) -> dict[str, Chain]:
    """Follow every path from each recorded HEAD to `head`, with one `git log` over the union of the ranges.

    A recorded HEAD that is an ancestor of `head` starts the walk itself; one that is not (rebased away) starts
    it from its merge base with `head`; one git does not know gets `Chain(None)`.
    """
    result: dict[str, Chain] = {}
    todo = [oid for oid in dict.fromkeys(recorded) if oid != head]
    if len(todo) < len(set(recorded)):
        result[head] = Chain(head)
    known = _commits(repo, todo)
    for oid in todo:
        if oid not in known:
            result[oid] = Chain(None)
    todo = [oid for oid in todo if oid in known]
    if not todo:
        return result
    base = git(repo, "merge-base", "--octopus", head, *todo)
    base = base.strip() if base else ""
    commits = _log(repo, head, base)
    if commits is None:
        result.update({oid: Chain(None) for oid in todo})
        return result
    order = [c[0] for c in commits]
    parents = {c[0]: c[1] for c in commits}
    events = {c[0]: c[2] for c in commits}
    starts: dict[str, str] = {}
    for oid in todo:
        if oid in parents or oid == base:
            starts[oid] = oid
            continue
        fork = git(repo, "merge-base", oid, head)
        if fork and fork.strip():
            starts[oid] = fork.strip()
        else:
            result[oid] = Chain(None)
    eventful = [oid for oid in order if events[oid]]
    per_start: dict[str, Chain] = {}
    for start in set(starts.values()):
        excluded = ancestors_within(start, parents)
        moves: dict[str, str | None] = {}
        current: dict[str, set[str]] = {}
        for oid in eventful:
            if oid not in excluded:
                _apply(events[oid], moves, current)
        per_start[start] = Chain(start, moves)
    for oid, start in starts.items():
        result[oid] = per_start[start]
    return result


def _commits(repo: str, oids: list[str]) -> set[str]:
    """Which of `oids` name commits git has (one `cat-file --batch-check`)."""
    if not oids:
        return set()
    out = git(repo, "cat-file", "--batch-check=%(objectname) %(objecttype)", stdin="".join(f"{o}\n" for o in oids))
    found = set()
    for line in (out or "").splitlines():
        name, _, kind = line.partition(" ")
        if kind == "commit":
            found.add(name)
    return found & set(oids)


Event = tuple[str, str, str]  # (status letter, old path, new path or "")


def _log(repo: str, head: str, base: str) -> list[tuple[str, list[str], list[Event]]] | None:
    """Every commit reachable from `head` and not from `base` (all of them without one), oldest first.

    Only renames and deletes (and the adds of a commit that has both, for `_apply`'s folder rule) are kept.
    """
    exclude = ["^" + base] if base else []
    out = git(
        repo,
        "log",
        "--no-color",
        "--no-ext-diff",
        "--no-show-signature",
        "--reverse",
        "--topo-order",
        "-M",
        "--name-status",
        "-z",
        "--format=%x01%H %P",
        head,
        *exclude,
        "--",
    )
    if out is None:
        return None
    # One NUL-separated stream: a commit's header (`\x01` + its ids), then status and name fields. Names are author
    # text and may hold `\x01` (never NUL): a field is read as a header only where a status stands, never where a
    # name does, so a file named `a\x01b.py` cannot cut its commit in two (it did when the text was split on `\x01`).
    commits: list[tuple[str, list[str], list[Event]]] = []
    found: list[Event] | None = None  # the current commit's events; None before a header or after one without ids
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        status = fields[i].strip()
        if "\x01" in status:  # no status holds it: a header (after whatever a user's config printed before it)
            oids = status[status.rindex("\x01") + 1 :].split()
            found = None
            if oids:
                found = []
                commits.append((oids[0], oids[1:], found))
            i += 1
            continue
        if not status:
            i += 1
            continue
        letter = status[0]
        if letter in "RC" and i + 2 < len(fields):
            if found is not None:
                found.append(("R", fields[i + 1], fields[i + 2]) if letter == "R" else ("A", fields[i + 2], ""))
            i += 3
        elif i + 1 < len(fields):
            if found is not None and letter in "AD":
                found.append((letter, fields[i + 1], ""))
            i += 2
        else:
            i += 1
    for _, _, events in commits:
        if not any(letter in "RD" for letter, _, _ in events):
            events.clear()
    return commits


def ancestors_within(start: str, parents: Mapping[str, list[str]]) -> set[str]:
    """`start` and its ancestors among the logged commits (those outside the log are excluded anyway)."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        oid = stack.pop()
        if oid in seen or oid not in parents:
            continue
        seen.add(oid)
        stack.extend(parents[oid])
    return seen


def _apply(found: list[Event], moves: dict[str, str | None], current: dict[str, set[str]]) -> None:
    """Advance every followed path through one commit's renames and deletes (applied simultaneously)."""
    renames = {old: new for letter, old, new in found if letter == "R"}
    deleted = [old for letter, old, _ in found if letter == "D"]
    added = {old for letter, old, _ in found if letter == "A"}
    if deleted and added and renames:
        # Git never pairs a file it cannot score (an emptied `__init__.py`, a tiny marker file), but when
        # its siblings moved from one folder to another in the same commit, a same-named file appearing
        # in the new folder as this one vanished from the old is the same file moving along.
        folders: dict[str, str | None] = {}
        for old, new in renames.items():
            src, dst = os.path.dirname(old), os.path.dirname(new)
            folders[src] = dst if folders.get(src, dst) == dst else None
        for old in list(deleted):
            folder = folders.get(os.path.dirname(old))
            guess = f"{folder}/{os.path.basename(old)}" if folder else os.path.basename(old)
            if folder is not None and guess in added:
                renames[old] = guess
                deleted.remove(old)
                added.discard(guess)
    targets: dict[str, str | None] = {old: new for old, new in renames.items()}
    targets.update({old: None for old in deleted})
    moved: list[tuple[set[str], str | None]] = []
    origins: set[str]
    for source, dest in targets.items():
        if source in current:
            origins = current.pop(source)
        elif source not in moves:
            origins = {source}
        else:
            continue  # a later file that took a followed path's old name: not what the note meant
        moved.append((origins, dest))
    for followed, target in moved:
        for origin in followed:
            moves[origin] = target
        if target is not None:
            current.setdefault(target, set()).update(followed)
