"""`cortex backup` / `cortex restore`: the whole store through SQLite's online backup, movable to a
clone at another path, never clobbering a store without --force, keeping a copy of what it replaces."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

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


def _store_bytes(repo: Repo) -> dict[str, bytes]:
    """Every file of this repository's store (the database and its sidecars), as bytes."""
    store = Path(cortex(repo.path, "store", "--json").data()["path"])
    return {p.name: p.read_bytes() for p in sorted(store.parent.iterdir()) if p.name.startswith(store.name)}


def _tampered(tmp_path: Path, backup: Path, name: str, *sql: str) -> Path:
    """A copy of `backup` with `sql` run on it (what a hostile or a newer Cortex's backup holds)."""
    copy = tmp_path / f"{name}.db"
    copy.write_bytes(backup.read_bytes())
    conn = sqlite3.connect(copy)
    try:
        for statement in sql:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()
    return copy


@pytest.fixture
def backed_up(repo: Repo, tmp_path: Path) -> Path:
    """A repository whose store holds one note, and a backup of it taken with a second note added after."""
    assert cortex(repo.path, "note", "--kind", "decision", "--subject", "queue", "use kafka for the queue").code == 0
    backup = tmp_path / "cortex-backup.db"
    assert cortex(repo.path, "backup", str(backup)).code == 0
    assert cortex(repo.path, "note", "--kind", "insight", "the broker needs java 17").code == 0
    return backup


@pytest.mark.parametrize(
    ("shape", "sql"),
    [
        ("newer schema", ("UPDATE meta SET value='999' WHERE key='schema_version'",)),
        ("corrupt schema version", ("UPDATE meta SET value='16x' WHERE key='schema_version'",)),
        ("zero schema version", ("UPDATE meta SET value='0' WHERE key='schema_version'",)),
        (
            "extra trigger",
            ("CREATE TRIGGER evil AFTER INSERT ON notes BEGIN SELECT no_such_function(new.id); END",),
        ),
        ("extra view", ("CREATE VIEW everything AS SELECT * FROM notes",)),
        ("extra table", ("CREATE TABLE stash(x)",)),
        ("extra index", ("CREATE INDEX stash_idx ON notes(timestamp)",)),
        ("missing index", ("DROP INDEX " + "{index}",)),
        ("missing trigger", ("DROP TRIGGER " + "{trigger}",)),
        ("changed table", ("ALTER TABLE notes ADD COLUMN extra TEXT",)),
    ],
)
def test_restore_refuses_a_backup_this_version_does_not_create_and_leaves_the_store_untouched(
    repo: Repo, tmp_path: Path, backed_up: Path, shape: str, sql: tuple[str, ...]
) -> None:
    """Integrity, a readable schema version and exactly this version's schema objects are checked before anything
    is replaced: on any failure, even with --force, the current store is byte for byte as it was, no copy is made,
    the message says the store is untouched, and every later command still works."""
    conn = sqlite3.connect(backed_up)
    try:
        index = conn.execute("SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL").fetchone()[0]
        trigger = conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'").fetchone()[0]
    finally:
        conn.close()
    hostile = _tampered(
        tmp_path, backed_up, shape.replace(" ", "-"), *(s.format(index=index, trigger=trigger) for s in sql)
    )
    before = _store_bytes(repo)
    refused = cortex(repo.path, "restore", str(hostile), "--force")
    assert refused.code != 0 and refused.err.startswith("cortex: ") and refused.err.count("\n") == 1, refused.err
    assert "untouched" in refused.err
    assert _store_bytes(repo) == before
    assert "java 17" in cortex(repo.path, "recall", "broker java").out
    assert cortex(repo.path, "note", "--kind", "insight", "still writable after the refusal").code == 0


def test_restore_refuses_a_damaged_backup(repo: Repo, tmp_path: Path, backed_up: Path) -> None:
    """A backup whose pages fail SQLite's integrity check is refused before the store is touched."""
    damaged = tmp_path / "damaged.db"
    conn = sqlite3.connect(backed_up)
    try:
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name='notes_subject'").fetchone()[0]
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()
    data = bytearray(backed_up.read_bytes())
    data[(root - 1) * page : root * page] = bytes(page)  # the index's root page zeroed: its entries are gone
    damaged.write_bytes(bytes(data))
    before = _store_bytes(repo)
    refused = cortex(repo.path, "restore", str(damaged), "--force")
    assert refused.code != 0 and "untouched" in refused.err, refused.err
    assert _store_bytes(repo) == before


def test_every_forced_restore_keeps_what_it_replaced_and_never_a_kept_copy(
    repo: Repo, tmp_path: Path, backed_up: Path
) -> None:
    """Two forced restores in a row: each keeps the store it replaced under its own name, the first copy is not
    overwritten by the second, and every copy (backup, kept) has the store's mode 0600."""
    first = cortex(repo.path, "restore", str(backed_up), "--force", "--json")
    assert first.code == 0, first.err
    kept_first = Path(str(first.data()["kept"]))
    first_bytes = kept_first.read_bytes()
    assert cortex(repo.path, "note", "--kind", "insight", "written between the two restores").code == 0
    second = cortex(repo.path, "restore", str(backed_up), "--force", "--json")
    assert second.code == 0, second.err
    kept_second = Path(str(second.data()["kept"]))
    assert kept_second != kept_first
    assert kept_first.read_bytes() == first_bytes
    for kept, text in ((kept_first, "java 17"), (kept_second, "between the two restores")):
        conn = sqlite3.connect(kept)
        try:
            bodies = " ".join(str(r[0]) for r in conn.execute("SELECT text FROM memory_items"))
        finally:
            conn.close()
        assert text in bodies
    store = Path(cortex(repo.path, "store", "--json").data()["path"])
    assert oct(store.stat().st_mode & 0o777) == "0o600"
    assert oct(kept_first.stat().st_mode & 0o777) == oct(kept_second.stat().st_mode & 0o777) == "0o600"
    assert oct(backed_up.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("dangling", [True, False])
def test_backup_refuses_a_link_at_the_target(repo: Repo, tmp_path: Path, dangling: bool) -> None:
    """`cortex backup FILE` never writes through a link, dangling or not, with or without --force."""
    assert cortex(repo.path, "note", "--kind", "insight", "something to back up").code == 0
    aim = tmp_path / "home" / ".ssh" / "authorized_keys"
    aim.parent.mkdir(parents=True)
    if not dangling:
        aim.write_bytes(b"ssh-ed25519 AAAA mine\n")
    link = tmp_path / "out.db"
    link.symlink_to(aim)
    for extra in ((), ("--force",)):
        refused = cortex(repo.path, "backup", str(link), *extra)
        assert refused.code != 0 and refused.err.startswith("cortex: ") and "link" in refused.err, refused.err
        assert str(aim) in refused.err
    assert link.is_symlink()
    assert aim.exists() is not dangling
    if not dangling:
        assert aim.read_bytes() == b"ssh-ed25519 AAAA mine\n"


def test_a_backup_of_an_older_schema_is_checked_at_its_version_and_migrated(repo: Repo, tmp_path: Path) -> None:
    """A backup an older Cortex wrote holds that version's schema objects: it is restored and migrated forward."""
    from cortex_engine.store.schema import MIGRATIONS, spool_digest, statements

    old = tmp_path / "old.db"
    conn = sqlite3.connect(old, isolation_level=None)
    try:
        conn.create_function("cortex_spool_digest", 1, spool_digest)
        for script in MIGRATIONS[:10]:
            for statement in statements(script):
                conn.execute(statement)
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('schema_version', '10'), ('root_path', ?)", (str(repo.path),)
        )
    finally:
        conn.close()
    restored = cortex(repo.path, "restore", str(old), "--json")
    assert restored.code == 0, restored.err
    assert cortex(repo.path, "note", "--kind", "insight", "the old store takes notes again").code == 0
    assert "takes notes again" in cortex(repo.path, "recall", "old store notes").out


def test_a_damaged_store_is_replaced_by_a_forced_restore_and_kept_byte_for_byte(
    repo: Repo, tmp_path: Path, backed_up: Path
) -> None:
    """The store a restore is most often for, one SQLite cannot read, is replaced and kept whole, as it was."""
    store = Path(cortex(repo.path, "store", "--json").data()["path"])
    for sidecar in ("-wal", "-shm"):
        Path(f"{store}{sidecar}").unlink(missing_ok=True)
    store.write_bytes(b"this store was damaged " * 200)
    restored = cortex(repo.path, "restore", str(backed_up), "--force", "--json")
    assert restored.code == 0, restored.err
    assert Path(str(restored.data()["kept"])).read_bytes() == b"this store was damaged " * 200
    assert "use kafka" in cortex(repo.path, "recall", "queue kafka").out
