"""`cortex backup FILE` and `cortex restore FILE`: the whole store as one SQLite file, through SQLite's online
backup API (consistent while hooks, the MCP server or the TUI have the store open). Standard library only.

A backup can move to another machine or another clone: `restore` puts it where this repository's store lives and,
when the backup was taken in a repository at another path, rewrites its scope keys (which hold the repository's
paths) to this repository's, so what it holds is found here. Restore never clobbers a store silently: without
`--force` an existing store is refused, and with it the store it replaces is first copied beside it.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from cortex_engine.base.errors import CortexError, InvalidInput, Refused
from cortex_engine.engine import describe_store, open_engine


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
        conn.execute("SELECT COUNT(*) FROM memory_items").fetchone()[0],
    )


def _copy(source: sqlite3.Connection, target: Path) -> None:
    """Copy a whole database into a new file at `target` (a temp file renamed into place)."""
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    try:
        out = sqlite3.connect(tmp)
        try:
            source.backup(out)
        finally:
            out.close()
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _open_cortex_file(path: Path, *, what: str) -> sqlite3.Connection:
    """A read-only connection to a Cortex store file.

    Raises:
        InvalidInput: the file is missing, not SQLite, or not a Cortex store.
    """
    if not path.is_file():
        raise InvalidInput(f"{path} is not a file; nothing was {what}", code="bad_file")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            raise sqlite3.DatabaseError("no schema version")
    except sqlite3.Error as exc:
        raise InvalidInput(f"{path} is not a Cortex store ({exc}); nothing was {what}", code="bad_file") from exc
    return conn


def backup(cwd: str, dest: str, *, force: bool = False) -> BackupResult:
    """Copy this directory's store, whole and consistent, to `dest`.

    Raises:
        InvalidInput: there is no store here, or `dest` exists (without `force`) or is a directory.
        CortexError: the copy could not be written.
    """
    info = describe_store(cwd)
    if not info.exists:
        raise InvalidInput(
            f"there is no Cortex store for {cwd} (see `cortex store`); nothing to back up", code="no_store"
        )
    target = Path(dest).expanduser().resolve()
    if target.is_dir():
        raise InvalidInput(f"{dest} is a directory; give a file name", code="bad_file")
    if target.exists() and not force:
        raise InvalidInput(f"{dest} exists; pass --force to replace it", code="exists")
    source = _open_cortex_file(Path(info.path), what="backed up")
    try:
        notes, items = _counts(source)
        _copy(source, target)
    except OSError as exc:
        raise CortexError(f"cannot write {dest}: {exc.strerror or exc}", code="write_failed") from exc
    finally:
        source.close()
    return BackupResult("backup", str(target), info.path, notes, items)


def _kept_name(store: Path) -> Path:
    """A free name beside the store for the copy a restore keeps: `cortex.db.before-restore`, then `.1`, `.2`, …"""
    kept = store.with_name(store.name + ".before-restore")
    number = 0
    while kept.exists():
        number += 1
        kept = store.with_name(f"{store.name}.before-restore.{number}")
    return kept


def restore(cwd: str, source_file: str, *, force: bool = False) -> BackupResult:
    """Put a backup in place as this directory's store; rewrite its scope keys when it was taken elsewhere.

    Raises:
        InvalidInput: the file is not a Cortex store.
        Refused: a store exists here and `force` was not given (nothing was changed).
        StoreRefused: the backup was written by a newer Cortex (the restored file is put back as it was).
    """
    info = describe_store(cwd)
    store = Path(info.path)
    source = _open_cortex_file(Path(source_file).expanduser(), what="restored")
    kept: Path | None = None
    try:
        if store.exists():
            current = _open_cortex_file(store, what="restored")
            try:
                notes, items = _counts(current)
                if not force:
                    raise Refused(
                        f"a store already exists here ({notes} note(s), {items} memory item(s)); pass --force "
                        "to replace it (a copy of it is kept beside it)",
                        code="store_exists",
                    )
                kept = _kept_name(store)
                _copy(current, kept)
            finally:
                current.close()
        store.parent.mkdir(parents=True, exist_ok=True)
        for sidecar in ("-wal", "-shm"):
            Path(f"{store}{sidecar}").unlink(missing_ok=True)
        _copy(source, store)
    finally:
        source.close()
    rekeyed = _rekey(store, os.path.realpath(cwd))
    with open_engine(cwd, create=False) as engine:  # migrates a backup of an older schema forward, refuses a newer
        notes, items = _counts(engine.conn)
    return BackupResult(
        "restore",
        str(Path(source_file).expanduser().resolve()),
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
