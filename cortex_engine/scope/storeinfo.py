"""Where a working directory's store is and how its identity was derived, read without opening the store."""

from __future__ import annotations

import os
from pathlib import Path

from cortex_engine.base.records import record
from cortex_engine.scope.identity import detect_scope, locate_git, shown_scope_key, store_identity


@record(frozen=True)
class StoreInfo:
    """Where the store is, how its identity was derived, and whether it exists."""

    path: str
    store_id: str
    derived: str
    degraded: bool
    degraded_reason: str | None
    exists: bool
    scope_key: str
    scope_label: str
    scope_key_shown: str
    """The scope key with the repository's paths in their real case (the stored key lowercases them)."""

    def to_dict(self) -> dict[str, object]:
        """The `store --json` shape."""
        return dict(self.__dict__)


def describe_store(cwd: str | os.PathLike[str] = ".", home: Path | None = None) -> StoreInfo:
    """Describe the store for `cwd` without opening or creating it."""
    real = os.path.realpath(os.fspath(cwd))
    location = locate_git(real)
    ident = store_identity(real, home, location)
    scope = detect_scope(real, location)
    derived = (
        f"working directory (degraded — {ident.degraded_reason})"
        if ident.degraded_reason
        else f"git common dir {ident.identifying_path}"
    )
    return StoreInfo(
        str(ident.db_path),
        ident.store_id,
        derived,
        ident.degraded_reason is not None,
        ident.degraded_reason,
        ident.db_path.exists(),
        scope.key,
        scope.label,
        shown_scope_key(scope.key, ident.identifying_path, ident.root),
    )


def file_id(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a file, None when it does not exist: tells a replaced or deleted file apart."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
