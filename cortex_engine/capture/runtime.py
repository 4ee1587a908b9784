"""The worktree runtime folder `.cortex/`: the one place that opens, writes, lists and unlinks inside it.

Everything in a repository is untrusted input, and git checks out whatever a repository commits, symlinks
included. So the folder is only used when it is trustworthy, and then only through descriptors that never
follow a link:

- trusted: the folder is a real directory (not a link), owned by this user, closed to others (mode 0700, as
  Cortex creates it), and git tracks no file in it (`git ls-files -- .cortex`);
- every file is opened relative to the folder's descriptor with `O_NOFOLLOW` and must be a regular file owned
  by this user; every name is a plain basename; writes go to a fresh 0600 file renamed into place;
- blob and claim names must have the shape Cortex itself creates;
- the `engaged` marker carries this machine's key (kept in Cortex's home, where no repository can put it), so
  the bash hooks, which cannot run git on every tool call, only ever write into a folder this machine's Cortex
  checked and engaged. Spool lines are therefore only ever written by this machine's hooks.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

from cortex_engine.base.errors import RuntimeUntrusted

RUNTIME = ".cortex"
ENGAGED = "engaged"
KEY_FILE = "runtime.key"
IGNORE = ".gitignore"
IGNORE_TEXT = "# Cortex runtime files; this folder ignores itself.\n*\n"
BLOB_NAME = re.compile(r"[0-9]{1,20}(?:\.[0-9]{1,9})?-[0-9]{1,10}-[0-9]{1,10}\.json")
"""What the capture hook names a blob: `<epoch>-<pid>-<random>.json`."""
CLAIM_NAME = re.compile(r"[0-9]{1,20}-[0-9]{1,10}\.jsonl")
"""What a flush names a claimed spool: `<time_ns>-<pid>.jsonl`."""
FIX = (
    "remove the folder (`rm -rf .cortex`; if git tracks it, `git rm -r --cached .cortex` and commit first); "
    "the next session recreates it safely"
)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _euid() -> int | None:
    return os.geteuid() if hasattr(os, "geteuid") else None


# git's answer per (worktree, index file and its stat): `git ls-files` reads only the index, so an unchanged
# index gives the same answer, and a session start asks four times.
_TRACKED: dict[tuple[object, ...], list[str]] = {}


def _index_stamp(worktree: str) -> tuple[object, ...] | None:
    """Where the worktree's git index is and its stat, None when that cannot be told without git."""
    dotgit = os.path.join(worktree, ".git")
    try:
        if os.path.isdir(dotgit):
            index = os.path.join(dotgit, "index")
        else:
            with open(dotgit, encoding="utf-8") as pointer:
                line = pointer.read(4096).strip()
            if not line.startswith("gitdir:") or "\n" in line:
                return None
            index = os.path.join(worktree, line[len("gitdir:") :].strip(), "index")
        info = os.stat(index)
    except (OSError, UnicodeDecodeError):
        return None
    return worktree, os.path.realpath(index), info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size


def tracked_files(worktree: str | os.PathLike[str]) -> list[str]:
    """The files under the runtime folder git tracks ([] outside git, or when git cannot answer).

    Asked of git once per state of the index (see `_TRACKED`); environment overrides of git's
    directories (GIT_DIR, GIT_INDEX_FILE) always ask git.
    """
    stamp = None
    if "GIT_DIR" not in os.environ and "GIT_INDEX_FILE" not in os.environ:
        stamp = _index_stamp(os.path.realpath(os.fspath(worktree)))
    if stamp is not None and stamp in _TRACKED:
        return list(_TRACKED[stamp])
    files = _ask_tracked(worktree)
    if stamp is not None:
        _TRACKED.clear()  # one worktree per process in practice: keep only the newest answer
        _TRACKED[stamp] = files
    return list(files)


def _ask_tracked(worktree: str | os.PathLike[str]) -> list[str]:
    """`git ls-files` of the runtime folder."""
    try:
        done = subprocess.run(
            ["git", "-C", str(worktree), "ls-files", "-z", "--", RUNTIME], capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    return [name for name in done.stdout.decode("utf-8", "replace").split("\0") if name]


def untrusted_reason(folder: Path, *, tracked: bool = True) -> str | None:
    """Why the runtime folder must not be used, or None when it is trustworthy (or absent).

    Args:
        tracked: also ask git whether it tracks any file in the folder (a subprocess).
    """
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{folder} cannot be inspected ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return f"{folder} is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a directory"
    if _euid() is not None and info.st_uid != _euid():
        return f"{folder} belongs to another user (uid {info.st_uid})"
    if tracked:
        files = tracked_files(folder.parent)
        if files:
            more = f" and {len(files) - 1} more" if len(files) > 1 else ""
            return f"git tracks files in {folder} ({files[0]}{more}): it came with the repository"
    if info.st_mode & 0o077:
        return f"{folder} is open to other users (mode {stat.S_IMODE(info.st_mode):04o}; Cortex creates it 0700)"
    return None


def problem(folder: Path, *, tracked: bool = True) -> str | None:
    """`untrusted_reason` as the one line users see: what is wrong, what it means, what to do."""
    reason = untrusted_reason(folder, tracked=tracked)
    return (
        None if reason is None else f"the runtime folder is not trusted: {reason}; hooks capture nothing here — {FIX}"
    )


def home_key(home: Path, *, create: bool = True) -> str | None:
    """This machine's runtime key (created 0600 in Cortex's home on first use; None when absent and not created)."""
    path = home / KEY_FILE
    try:
        existing = _read_plain(path)
    except OSError:
        existing = None
    if existing is not None:
        key = existing.decode("ascii", "replace").strip()
        if re.fullmatch(r"[0-9a-f]{32}", key):
            return key
    if not create:
        return None
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = os.urandom(16).hex()
    temp = home / f"{KEY_FILE}.tmp-{os.getpid()}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key + "\n")
    os.replace(temp, path)
    return key


def _read_plain(path: Path) -> bytes | None:
    """A regular file's bytes, never through a link; None when absent."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return handle.read()


def marker_text(key: str) -> str:
    """The `engaged` marker's contents; the hooks compare its first line with the key file."""
    return f"engaged={key}\n"


class Runtime:
    """An open, trusted runtime folder: every operation is relative to its descriptor and never follows a link."""

    def __init__(self, folder: Path, fd: int) -> None:
        """Wrap an already checked folder descriptor (use `Runtime.open`)."""
        self.folder = folder
        self.fd = fd
        self._subs: dict[str, int] = {}

    @classmethod
    def open(cls, folder: Path, *, create: bool = False, tracked: bool = True) -> Runtime:
        """Open the runtime folder, refusing it unless it is trustworthy.

        Args:
            create: make the folder (mode 0700) when it does not exist.
            tracked: also refuse a folder git tracks files in.

        Raises:
            RuntimeUntrusted: a link, not a directory, someone else's, open to others, or tracked by git.
            FileNotFoundError: absent and not created.
        """
        if create:
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                pass
        message = problem(folder, tracked=tracked)
        if message is not None:
            raise RuntimeUntrusted(message)
        fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
        info = os.fstat(fd)
        if not stat.S_ISDIR(info.st_mode) or (_euid() is not None and info.st_uid != _euid()) or info.st_mode & 0o077:
            os.close(fd)  # swapped between the check and the open
            raise RuntimeUntrusted(f"the runtime folder is not trusted: {folder} changed while it was opened — {FIX}")
        return cls(folder, fd)

    def close(self) -> None:
        """Release every descriptor."""
        for fd in self._subs.values():
            os.close(fd)
        self._subs.clear()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- descriptors -------------------------------------------------------------------------------

    def _dir(self, sub: str | None, *, create: bool = False) -> int | None:
        """The descriptor of the folder or one of its sub-folders (None when absent or not a real directory)."""
        if sub is None:
            return self.fd
        if sub in self._subs:
            return self._subs[sub]
        _plain(sub)
        if create:
            try:
                os.mkdir(sub, 0o700, dir_fd=self.fd)
            except FileExistsError:
                pass
        try:
            fd = os.open(sub, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=self.fd)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError:
            return None  # a link (ELOOP) or anything else that is not our directory
        info = os.fstat(fd)
        if _euid() is not None and info.st_uid != _euid():
            os.close(fd)
            return None
        self._subs[sub] = fd
        return fd

    def mkdir(self, sub: str) -> bool:
        """Create a sub-folder (0700) if needed; False when the name is taken by something that is not one."""
        return self._dir(sub, create=True) is not None

    # -- files -------------------------------------------------------------------------------------

    def lstat(self, name: str, sub: str | None = None) -> os.stat_result | None:
        """The entry itself (a link is not followed); None when absent."""
        fd = self._dir(sub)
        if fd is None:
            return None
        try:
            return os.stat(_plain(name), dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def is_file(self, name: str, sub: str | None = None) -> bool:
        """Whether `name` is a regular file (a link never counts)."""
        info = self.lstat(name, sub)
        return info is not None and stat.S_ISREG(info.st_mode)

    def read(self, name: str, sub: str | None = None) -> bytes | None:
        """A regular file's bytes; None when absent.

        Raises:
            OSError: a link, not a regular file, or someone else's file.
        """
        fd = self._dir(sub)
        if fd is None:
            return None
        try:
            handle = os.open(_plain(name), os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=fd)
        except FileNotFoundError:
            return None
        with os.fdopen(handle, "rb") as stream:
            info = os.fstat(handle)
            if not stat.S_ISREG(info.st_mode) or (_euid() is not None and info.st_uid != _euid()):
                raise OSError(f"{name} in {self.folder} is not a regular file of this user")
            return stream.read()

    def write(self, name: str, data: bytes | str, sub: str | None = None) -> None:
        """Replace `name` with `data` atomically: a fresh 0600 file renamed over it (a link there is replaced, not
        followed)."""
        fd = self._dir(sub, create=sub is not None)
        if fd is None:
            raise OSError(f"{sub} in {self.folder} is not a directory")
        raw = data.encode("utf-8") if isinstance(data, str) else data
        temp = f".{_plain(name)}.tmp-{os.getpid()}-{os.urandom(4).hex()}"
        handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=fd)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(raw)
            os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            self.unlink(temp, sub)
            raise

    def append(self, name: str, data: bytes, sub: str | None = None) -> None:
        """Append to a regular file (created 0600), never through a link."""
        fd = self._dir(sub, create=sub is not None)
        if fd is None:
            raise OSError(f"{sub} in {self.folder} is not a directory")
        handle = os.open(
            _plain(name), os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o600, dir_fd=fd
        )
        with os.fdopen(handle, "ab") as stream:
            if not stat.S_ISREG(os.fstat(handle).st_mode):
                raise OSError(f"{name} in {self.folder} is not a regular file")
            stream.write(data)

    def unlink(self, name: str, sub: str | None = None) -> bool:
        """Remove the entry itself (a link is removed, never its target); False when absent or not removable."""
        fd = self._dir(sub)
        if fd is None:
            return False
        try:
            os.unlink(_plain(name), dir_fd=fd)
        except (FileNotFoundError, IsADirectoryError, PermissionError, NotADirectoryError):
            return False
        return True

    def rename(self, name: str, sub: str | None, new: str, new_sub: str | None) -> bool:
        """Move an entry within the folder (the entry itself, never a link's target); False when it is absent."""
        src, dst = self._dir(sub), self._dir(new_sub, create=new_sub is not None)
        if src is None or dst is None:
            return False
        try:
            os.rename(_plain(name), _plain(new), src_dir_fd=src, dst_dir_fd=dst)
        except FileNotFoundError:
            return False
        return True

    def names(self, sub: str | None = None) -> list[str]:
        """The entries of the folder or a sub-folder, sorted ([] when absent)."""
        fd = self._dir(sub)
        if fd is None:
            return []
        return sorted(os.listdir(fd))

    def size(self) -> int:
        """Bytes held by the folder and its sub-folders (links count as themselves)."""
        total = 0
        for sub in (None, *(n for n in self.names() if (i := self.lstat(n)) is not None and stat.S_ISDIR(i.st_mode))):
            for name in self.names(sub):
                info = self.lstat(name, sub)
                if info is not None and not stat.S_ISDIR(info.st_mode):
                    total += info.st_size
        return total


def _plain(name: str) -> str:
    """A plain basename, or ValueError (no separators, no `.`/`..`, no NUL)."""
    if not name or name in (".", "..") or "/" in name or "\0" in name or (os.sep != "/" and os.sep in name):
        raise ValueError(f"not a plain file name: {name!r}")
    return name


def adopt(folder: Path, keep: tuple[str, ...], subs: tuple[str, ...]) -> bool:
    """Close a folder of this user's that is open to others (an older Cortex made it 0755): drop what it holds, 0700.

    Nothing in such a folder can be vouched for, so every pending file (spool, claims, blobs, markers) is removed
    (the entries themselves, never a link's target) except `keep`; then the folder is closed to others. A folder
    that is a link, someone else's, or tracked by git is left alone (and stays refused). Returns whether it acted.
    """
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    if (
        not stat.S_ISDIR(info.st_mode)
        or not info.st_mode & 0o077
        or (_euid() is not None and info.st_uid != _euid())
        or tracked_files(folder.parent)
    ):
        return False
    fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    try:
        rt = Runtime(folder, fd)
        for sub in subs:
            for name in rt.names(sub):
                rt.unlink(name, sub)
        for name in rt.names():
            if name not in keep and name not in subs:
                rt.unlink(name)
        os.fchmod(fd, 0o700)
        rt.fd = -1
        rt.close()
    finally:
        os.close(fd)
    return True
