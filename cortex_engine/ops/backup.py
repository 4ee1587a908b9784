"""`cortex backup FILE` and `cortex restore FILE`: the whole store as one SQLite file, through SQLite's online
backup API (consistent while hooks, the MCP server or the TUI have the store open). Standard library only.

A backup can move to another machine or another clone: `restore` puts it where this repository's store lives and,
when the backup was taken in a repository at another path, rewrites its scope keys (which hold the repository's
paths) to this repository's, so what it holds is found here. Restore never clobbers a store silently: without
`--force` an existing store is refused, and with it the store it replaces is first copied beside it, under a
name no earlier copy holds. A backup is checked (integrity, schema version, exactly this build's schema objects)
and migrated beside the store before the store is replaced: a refused backup leaves the store untouched.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from cortex_engine.base.errors import CortexError, InvalidInput, Refused, StoreRefused
from cortex_engine.engine import describe_store, open_engine
from cortex_engine.store import queries
from cortex_engine.store.database import SCHEMA_VERSION, open_store, schema_differences, stored_version


@dataclass(frozen=True)
class BackupResult:
    """What `backup` or `restore` did: the files involved and what the store holds."""

    action: str
    path: str
    store: str
    notes: int
    items: int
    kept: str | None = None
    """Restore only: where the store it replaced was copied (None when there was none)."""
    rekeyed: int = 0
    """Restore only: scope keys rewritten from the backup's repository path to this one's."""

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape."""
        return {
            "action": self.action,
            "path": self.path,
            "store": self.store,
            "notes": self.notes,
            "items": self.items,
            "kept": self.kept,
            "rekeyed": self.rekeyed,
        }

    def render(self) -> str:
        """The text report."""
        held = f"{self.notes} note(s), {self.items} memory item(s)"
        if self.action == "backup":
            return f"Backed up the store ({held}) to {self.path}."
        lines = [f"Restored {self.path} into {self.store} ({held})."]
        if self.kept:
            lines.append(f"The store it replaced is kept as {self.kept}.")
        if self.rekeyed:
            lines.append(f"{self.rekeyed} scope key(s) from the backup's repository path now name this repository.")
        return "\n".join(lines)


def _counts(conn: sqlite3.Connection) -> tuple[int, int]:
    return (
        conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0],
        queries.item_count(conn),
    )


def _copy(source: sqlite3.Connection, target: Path, mode: int = 0o600) -> None:
    """Copy a whole database into a new file at `target` (a temp file renamed into place) with `mode` (the store's:
    a copy holds everything the store does, so it is as private)."""
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, mode))
        os.chmod(tmp, mode)
        out = sqlite3.connect(tmp)
        try:
            source.backup(out)
        finally:
            out.close()
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _mode_of(path: Path) -> int:
    """The permission bits of the store file (0600 as Cortex makes it; owner bits only ever kept)."""
    try:
        return stat.S_IMODE(path.stat().st_mode) & 0o700 or 0o600
    except OSError:
        return 0o600


def _open_cortex_file(path: Path, *, what: str, after: str = "") -> sqlite3.Connection:
    """A read-only connection to a Cortex store file.

    Raises:
        InvalidInput: the file is missing, not SQLite, or not a Cortex store.
    """
    if not path.is_file():
        raise InvalidInput(f"{path} is not a file; nothing was {what}{after}", code="bad_file")
    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            raise sqlite3.DatabaseError("no schema version")
    except sqlite3.Error as exc:
        raise InvalidInput(f"{path} is not a Cortex store ({exc}); nothing was {what}{after}", code="bad_file") from exc
    return conn


def _refuse_link(dest: str) -> None:
    """Refuse a backup target that is a link (dangling included): the copy would land wherever it points.

    Raises:
        InvalidInput: `dest` is a link.
    """
    path = Path(dest).expanduser()
    if path.is_symlink():
        raise InvalidInput(
            f"{dest} is a link to {os.readlink(path)}; a backup is never written through a link — "
            "give the path of a plain file (nothing was written)",
            code="link_target",
        )


def backup(cwd: str, dest: str, *, force: bool = False) -> BackupResult:
    """Copy this directory's store, whole and consistent, to `dest` (with the store's mode).

    Raises:
        InvalidInput: there is no store here, `dest` is a link, exists (without `force`) or is a directory.
        CortexError: the copy could not be written.
    """
    info = describe_store(cwd)
    if not info.exists:
        raise InvalidInput(
            f"there is no Cortex store for {cwd} (see `cortex store`); nothing to back up", code="no_store"
        )
    _refuse_link(dest)
    target = Path(dest).expanduser().resolve()
    if target.is_dir():
        raise InvalidInput(f"{dest} is a directory; give a file name", code="bad_file")
    if target.exists() and not force:
        raise InvalidInput(f"{dest} exists; pass --force to replace it", code="exists")
    source = _open_cortex_file(Path(info.path), what="backed up")
    try:
        notes, items = _counts(source)
        _copy(source, target, _mode_of(Path(info.path)))
    except OSError as exc:
        raise CortexError(f"cannot write {dest}: {exc.strerror or exc}", code="write_failed") from exc
    finally:
        source.close()
    return BackupResult("backup", str(target), info.path, notes, items)


def _kept_name(store: Path) -> Path:
    """A free name beside the store for the copy a restore keeps: `cortex.db.before-restore`, then `.1`, `.2`, …

    A name that exists in any form (a file, a link, a dangling link) is taken: no kept store is ever replaced.
    """
    kept = store.with_name(store.name + ".before-restore")
    number = 0
    while os.path.lexists(kept):
        number += 1
        kept = store.with_name(f"{store.name}.before-restore.{number}")
    return kept


UNTOUCHED = "the store here is untouched"


def _unrestorable(path: Path, why: str) -> InvalidInput:
    return InvalidInput(f"{path} cannot be restored: {why}; {UNTOUCHED}", code="bad_backup")


def _check_backup(conn: sqlite3.Connection, path: Path, *, version: int | None = None) -> int:
    """Check a backup before anything is replaced: a schema version this build reads, exactly the schema objects
    this build creates at that version (no extra or changed trigger, view, table or index: a trigger runs on every
    later write), and SQLite's integrity check. Returns the backup's schema version.

    Raises:
        InvalidInput: any check failed (what and why; the store here is untouched).
    """
    try:
        found = version if version is not None else stored_version(conn)
        if found < 1:
            raise _unrestorable(path, "it holds no schema version")
        differences = schema_differences(conn, found)
        if differences:
            shown = ", ".join(differences[:3]) + (f" and {len(differences) - 3} more" if len(differences) > 3 else "")
            raise _unrestorable(
                path,
                f"its schema is not the one Cortex creates at version {found} ({shown}), so it was not made "
                "by `cortex backup` or was changed since",
            )
        problems = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(3)")]
        if problems != ["ok"]:
            raise _unrestorable(path, f"SQLite's integrity check fails ({'; '.join(problems)[:200]})")
    except StoreRefused as exc:
        why = exc.message.split(";", 1)[0]
        raise _unrestorable(path, why) from exc
    except sqlite3.Error as exc:
        raise _unrestorable(path, f"SQLite cannot read it ({exc})") from exc
    return found


def _stage(source: sqlite3.Connection, source_path: Path, staged: Path, mode: int, cwd: str) -> int:
    """Copy the checked backup to `staged` beside the store, rewrite its scope keys, migrate it to this build's
    schema and check the result again; returns how many scope keys were rewritten. The store is not touched.

    Raises:
        InvalidInput: the migrated copy is not this build's schema (the staged copy is removed).
    """
    from cortex_engine.base.clock import clock_from_env, iso

    try:
        _copy(source, staged, mode)
        rekeyed = _rekey(staged, os.path.realpath(cwd))
        conn = open_store(staged, root=os.path.realpath(cwd), now=iso(clock_from_env()()))
        try:
            conn.execute("PRAGMA journal_mode=DELETE")  # folds the WAL in: the file alone is the whole store
            _check_backup(conn, source_path, version=SCHEMA_VERSION)
        finally:
            conn.close()
    except BaseException as exc:
        for leftover in (staged, Path(f"{staged}-wal"), Path(f"{staged}-shm")):
            leftover.unlink(missing_ok=True)
        if isinstance(exc, sqlite3.Error):
            raise _unrestorable(source_path, f"SQLite cannot migrate it ({exc})") from exc
        if isinstance(exc, StoreRefused):
            raise _unrestorable(source_path, exc.message.split(";", 1)[0]) from exc
        raise
    return rekeyed


def _keep(store: Path, kept: Path, mode: int) -> None:
    """Copy the store a restore replaces to `kept`: through SQLite's backup when it opens (consistent, its WAL
    folded in), else byte for byte with its `-wal` (a damaged store is what a restore is often for: it is kept too).
    """
    try:
        current = _open_cortex_file(store, what="restored")
    except InvalidInput:
        current = None
    if current is not None:
        try:
            _copy(current, kept, mode)
            return
        except sqlite3.Error:
            kept.unlink(missing_ok=True)
        finally:
            current.close()
    for suffix in ("", "-wal"):
        source = Path(f"{store}{suffix}")
        if source.is_file():
            fd = os.open(f"{kept}{suffix}", os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, mode)
            with os.fdopen(fd, "wb") as out, open(source, "rb") as data:
                shutil.copyfileobj(data, out)


def restore(cwd: str, source_file: str, *, force: bool = False) -> BackupResult:
    """Put a backup in place as this directory's store; rewrite its scope keys when it was taken elsewhere.

    Everything that can fail is done before the store is replaced: the backup is checked (`_check_backup`),
    copied beside the store, rekeyed, migrated and checked again; only then is the store (when there is one, and
    with `force`) copied to a free `.before-restore` name with its mode, and the staged copy renamed into place.

    Raises:
        InvalidInput: the file is not a Cortex store this build can restore (the store here is untouched).
        Refused: a store exists here and `force` was not given (nothing was changed).
    """
    info = describe_store(cwd)
    store = Path(info.path)
    source_path = Path(source_file).expanduser()
    source = _open_cortex_file(source_path, what="restored", after=f" and {UNTOUCHED}")
    kept: Path | None = None
    try:
        _check_backup(source, source_path)
        if store.exists() and not force:
            current = _open_cortex_file(store, what="restored")
            try:
                notes, items = _counts(current)
            finally:
                current.close()
            raise Refused(
                f"a store already exists here ({notes} note(s), {items} memory item(s)); pass --force "
                "to replace it (a copy of it is kept beside it)",
                code="store_exists",
            )
        store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        mode = _mode_of(store)
        staged = store.with_name(f".{store.name}.restore-{os.getpid()}")
        rekeyed = _stage(source, source_path, staged, mode, cwd)
    finally:
        source.close()
    try:
        if store.exists():
            kept = _kept_name(store)
            _keep(store, kept, mode)
        for sidecar in ("-wal", "-shm"):
            Path(f"{store}{sidecar}").unlink(missing_ok=True)
        os.replace(staged, store)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    with open_engine(cwd, create=False) as engine:
        notes, items = _counts(engine.conn)
    return BackupResult(
        "restore",
        str(source_path.resolve()),
        str(store),
        notes,
        items,
        str(kept) if kept else None,
        rekeyed,
    )


def _rekey(store: Path, worktree: str) -> int:
    """Rewrite the scope keys of a backup taken in a repository at another path to name this one; returns how many.

    Keys carry the repository's git directory and worktree (`branch:<git dir>:<worktree>:<branch>`, `project:<root>`,
    lowercased): the backup's own root (`meta.root_path`) and git directory give the old spelling, `worktree` and
    its git directory the new one. Another worktree's keys keep their worktree part.
    """
    from cortex_engine.scope.identity import locate_git, normalize_scope_path
    from cortex_engine.store.database import connect, transaction
    from cortex_engine.store.queries import rename_scope_keys

    location = locate_git(worktree)
    if location is None:
        return 0
    conn = connect(store)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='root_path'").fetchone()
        if row is None or normalize_scope_path(row[0]) == normalize_scope_path(location.worktree):
            return 0
        old_tree, new_tree = normalize_scope_path(row[0]), normalize_scope_path(location.worktree)
        new_git = normalize_scope_path(location.common_dir)
        keys = [r[0] for r in conn.execute("SELECT key FROM scopes")]
        old_git = next(
            (
                key.split(":", 1)[1][: key.split(":", 1)[1].index(f":{old_tree}:")]
                for key in keys
                if key.startswith(("branch:", "detached:")) and f":{old_tree}:" in key
            ),
            None,
        )

        def rename(key: str) -> str:
            if key == f"project:{old_tree}":
                return f"project:{new_tree}"
            for kind in ("branch", "detached"):
                if old_git and key.startswith(f"{kind}:{old_git}:"):
                    rest = key[len(f"{kind}:{old_git}:") :]
                    rest = new_tree + rest[len(old_tree) :] if rest.startswith(f"{old_tree}:") else rest
                    return f"{kind}:{new_git}:{rest}"
            return key

        with transaction(conn):
            changed = rename_scope_keys(conn, rename)
            conn.execute("UPDATE meta SET value=? WHERE key='root_path'", (location.worktree,))
        return changed
    finally:
        conn.close()
