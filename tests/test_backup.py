"""`cortex backup` / `cortex restore`: the whole store through SQLite's online backup, movable to a
clone at another path, never clobbering a store without --force, keeping a copy of what it replaces."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .conftest import Repo, git
from .install_helpers import cortex


def test_a_backup_moves_to_a_clone_elsewhere_and_restore_keeps_what_it_replaces(
    repo: Repo, isolated_home: Path, tmp_path: Path
) -> None:
    """Back up in one clone, restore in another at another path: the notes are found there (scope keys follow the
    repository); a second restore is refused without --force and, with it, keeps the replaced store beside it."""
    assert cortex(repo.path, "note", "--kind", "decision", "--subject", "queue", "use kafka for the queue").code == 0
    backup = tmp_path / "cortex-backup.db"
    made = cortex(repo.path, "backup", str(backup), "--json")
    assert made.code == 0 and made.data()["notes"] == 1, made.err
    again = cortex(repo.path, "backup", str(backup))
    assert again.code == 1 and again.err.startswith("cortex: ") and "--force" in again.err

    clone = tmp_path / "elsewhere" / "clone"
    git(tmp_path, "clone", "-q", str(repo.path), str(clone))
    restored = cortex(clone, "restore", str(backup), "--json")
    assert restored.code == 0, restored.err
    assert restored.data()["kept"] is None and restored.data()["rekeyed"] >= 1
    assert "use kafka for the queue" in cortex(clone, "recall", "queue").out

    assert cortex(clone, "note", "--kind", "insight", "the broker needs java 17").code == 0
    refused = cortex(clone, "restore", str(backup))
    assert refused.code == 1 and "already exists" in refused.err and "--force" in refused.err
    assert "java 17" in cortex(clone, "recall", "broker java").out  # nothing was changed
    forced = cortex(clone, "restore", str(backup), "--force", "--json").data()
    kept = Path(str(forced["kept"]))
    conn = sqlite3.connect(kept)
    try:
        assert conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0] == 2  # the replaced store, whole
    finally:
        conn.close()
    assert "java 17" not in cortex(clone, "recall", "broker java").out

    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    bad = cortex(clone, "restore", str(junk), "--force")
    assert bad.code == 1 and "not a Cortex store" in bad.err
