"""What a Read put in the agent's context: file keys relative to the worktree, and the digest of the bytes read.

The spool replay (`flush`) records a digest per file read; the read ledger (`ledger`) compares the file on disk
with it later ("unchanged since you read it"), and a substitution is refunded only against a recorded digest.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
import stat
from typing import Any

from cortex_engine.scope.identity import Scope

DIGEST_CEILING = 2 * 1024 * 1024
"""Files past this size are recorded as oversize, without a digest."""

Json = dict[str, Any]


def absolute_path(path: str, cwd: str) -> str:
    """`path` as given when absolute, else joined to the directory the tool ran in."""
    return path if os.path.isabs(path) else os.path.join(cwd, path)


@functools.lru_cache(maxsize=4096)
def relative_path(path: str, worktree: str) -> str:
    """A file key relative to the worktree when inside it, else the absolute path (memoized: realpath is a stat
    walk)."""
    normalized = os.path.normpath(path.replace("\\", "/"))
    if not os.path.isabs(normalized):
        return normalized
    real = _real_file(normalized)
    root = _real_root(worktree)
    if real == root or not real.startswith(root + os.sep):
        return real
    # Both are real, normalized paths and `real` lies under `root`: the rest of it is what relpath would give.
    return real[len(root) + 1 :].replace(os.sep, "/")


def _real_file(path: str) -> str:
    """`os.path.realpath` of a normalized absolute path, its folder resolved once for all the files in it: only the
    last component is looked at per file (a symlink there is resolved whole, as realpath would)."""
    folder, leaf = os.path.split(path)
    if not leaf:
        return os.path.realpath(path)
    try:
        linked = stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        linked = False  # realpath keeps a missing last component as it is
    except OSError:
        return os.path.realpath(path)
    return os.path.realpath(path) if linked else os.path.join(_real_folder(folder), leaf)


@functools.lru_cache(maxsize=1024)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


@functools.lru_cache(maxsize=64)
def _real_root(worktree: str) -> str:
    """A worktree's real path: one stat walk per worktree, not one per file it holds."""
    return os.path.realpath(worktree)


def read_content(tool_input: Json, response: object) -> str | None:
    """The whole text a Read returned, when the payload proves it was complete; else None."""
    if not isinstance(response, dict):
        return None
    file = found if isinstance(found := response.get("file"), dict) else response
    content = file.get("content")
    if not isinstance(content, str):
        return None
    start = file.get("startLine", 1)
    num, total = file.get("numLines"), file.get("totalLines")
    if start not in (1, None) or tool_input.get("offset") not in (None, 0, 1):
        return None
    if isinstance(num, int) and isinstance(total, int) and num < total:
        return None
    if tool_input.get("limit") is not None and not (isinstance(num, int) and isinstance(total, int)):
        return None
    return content


def digest_file(path: str) -> tuple[str | None, int | None, bool]:
    """sha256 and size of a file; (None, size, True) past the 2 MiB ceiling; (None, None, False) if unreadable.

    One open, one fstat of what was opened and one read (a flush digests every file its Reads name: 4,508 at 10k
    lines; 12 microseconds a file against 18 to 32 for open() and two stats), so the size, the kind and the bytes
    are all of the same file.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None, None, False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, None, False
        if info.st_size > DIGEST_CEILING:
            return None, info.st_size, True
        # One read when the size is right (a regular file's read returns all it holds up to the size asked); a file
        # whose size says less than it holds (/proc reports 0) or that grew since the fstat is read to its end.
        data = os.read(fd, info.st_size + 1)
        if len(data) > info.st_size:
            whole = bytearray(data)
            while chunk := os.read(fd, 65536):
                whole += chunk
            data = bytes(whole)
        return hashlib.sha256(data).hexdigest(), info.st_size, False
    except OSError:
        return None, None, False
    finally:
        os.close(fd)


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
"""Opening a FIFO a Read named must not block the flush (no O_NONBLOCK where the platform has none)."""


def _size_of(path: str) -> int | None:
    """A file's size, or None when it is missing or unreadable."""
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def record_digest(
    conn: sqlite3.Connection,
    scope: Scope,
    session: str,
    agent_id: str | None,
    rel: str,
    abs_path: str,
    content: str | None,
    at: str,
    *,
    refund_eligible: bool = False,
) -> None:
    """Record what a read returned: the payload's content when complete, else the file's bytes now.

    A read is refund-eligible (may later be substituted) only when nothing in its batch could have changed
    files after it: a command rewrites files invisibly, and an edit makes the context differ from the disk.
    """
    sha: str | None
    size: int | None
    if content is not None:
        data = content.encode("utf-8")
        oversize = len(data) > DIGEST_CEILING
        sha, size, source = (None if oversize else hashlib.sha256(data).hexdigest()), len(data), "payload"
        if sha is not None:
            # The host may drop a final newline; when the bytes on disk are exactly what was returned (with or
            # without it), record their digest. When they differ, the file changed after the read: keep the
            # returned content's digest, so the ledger later answers changed-since rather than a wrong unchanged.
            # Only a file one byte longer than the content can be it plus that newline: no other file is read.
            if _size_of(abs_path) == len(data) + 1:
                file_sha, file_size, _ = digest_file(abs_path)
                if file_sha is not None and file_sha == hashlib.sha256(data + b"\n").hexdigest():
                    sha, size = file_sha, file_size
    else:
        sha, size, oversize = digest_file(abs_path)
        source = "file"
        if sha is None and not oversize:
            return
    conn.execute(
        "INSERT INTO content_digests(scope_key, path, sha256, "
        "byte_size, session_id, agent_id, oversize, read_count, source, "
        "refund_eligible, recorded_at) VALUES (?,?,?,?,?,?,?,1,?,?,?) ON CONFLICT(scope_key, path) DO UPDATE SET "
        "sha256=excluded.sha256, byte_size=excluded.byte_size, "
        "session_id=excluded.session_id, agent_id=excluded.agent_id, "
        "oversize=excluded.oversize, read_count=content_digests.read_count+1, source=excluded.source, "
        "refund_eligible=excluded.refund_eligible, recorded_at=excluded.recorded_at",
        (scope.key, rel, sha, size, session, agent_id, int(oversize), source, int(refund_eligible), at),
    )
