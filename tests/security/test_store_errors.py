"""A store SQLite cannot use (newer, full, read-only, damaged) is reported in one `cortex:` line and left intact.

Every case runs the real command line. Disk full is SQLite's own SQLITE_FULL, produced by capping the store
with `PRAGMA max_page_count` from a launcher that wraps `sqlite3.connect` before running the CLI module. The
read-only cases need file permissions to bite, which they never do for root: when the tests run as root every
command runs under `setpriv` with the capabilities that override file permissions (dac_override,
dac_read_search, fowner) dropped from its bounding set, so a mode of 444 or 555 binds exactly as for a user.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from cortex_engine.engine import describe_store
from cortex_engine.store.database import SCHEMA_VERSION

from ..conftest import Repo, Run

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-08-02T18:00:00Z"

# Runs the real CLI module with every store connection capped at TEST_MAX_PAGES pages, so a write that needs
# more pages fails inside SQLite with SQLITE_FULL exactly as on a full disk.
LAUNCHER = """\
import os, runpy, sqlite3
_connect = sqlite3.connect
def _capped(*args, **kwargs):
    conn = _connect(*args, **kwargs)
    conn.execute("PRAGMA max_page_count=" + str(int(os.environ["TEST_MAX_PAGES"])))
    return conn
sqlite3.connect = _capped
runpy.run_module("cortex_engine.adapters.cli", run_name="__main__", alter_sys=True)
"""


def _unprivileged() -> list[str]:
    """The command prefix under which file permissions bind (empty unless running as root)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file permissions cannot be made to bind")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner"]


@dataclass
class Site:
    """A repository with its HOME and CORTEX_HOME, and the real CLI run in it."""

    repo: Path
    env: dict[str, str]
    prefix: list[str]

    def cortex(self, *args: str, launcher: Path | None = None, extra_env: dict[str, str] | None = None) -> Run:
        """Run the real command line in the repository (under the unprivileged prefix)."""
        head = [str(launcher)] if launcher else ["-m", "cortex_engine.adapters.cli"]
        done = subprocess.run(
            [*self.prefix, sys.executable, *head, *args],
            cwd=self.repo,
            env={**self.env, **(extra_env or {})},
            capture_output=True,
            timeout=60,
        )
        return Run(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))

    def store(self) -> Path:
        """The repository's store file."""
        return Path(describe_store(self.repo, home=Path(self.env["CORTEX_HOME"])).path)


@pytest.fixture
def site(repo: Repo) -> Site:
    """The test's repository, its temp HOME and CORTEX_HOME, a pinned clock, permissions that bind."""
    env = {**os.environ, "CORTEX_NOW": NOW, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    return Site(repo.path, env, _unprivileged())


def _one_cortex_line(run: Run) -> str:
    """The single stderr line of a failed command, checked to be a `cortex:` line and no traceback."""
    assert run.code == 1, (run.code, run.err)
    assert "Traceback" not in run.err
    lines = run.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cortex: "), run.err
    return lines[0]


def _notes(db: Path) -> list[tuple[str, str]]:
    """(kind, content) of every note, read straight from the file (immutable: no `-wal`/`-shm` is created)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return [tuple(r) for r in conn.execute("SELECT kind, content FROM scoped_notes ORDER BY timestamp, id")]
    finally:
        conn.close()


def _note_rows(db: Path) -> list[tuple[str, str]]:
    """(id, kind) of every note, read straight from the notes table (immutable)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return [tuple(r) for r in conn.execute("SELECT id, kind FROM notes ORDER BY timestamp, id")]
    finally:
        conn.close()


def _seed(site: Site) -> Path:
    """Two notes written through the CLI; returns the store, closed and checkpointed (no -wal left)."""
    for text in ("the queue uses kafka for ordering", "retries back off exponentially in the worker"):
        run = site.cortex("note", "--kind", "insight", text)
        assert run.code == 0, run.err
    db = site.store()
    assert not db.with_name(db.name + "-wal").exists()
    return db


def test_newer_store_is_refused_without_changing_a_byte(site: Site) -> None:
    """A store from a newer version (here in rollback-journal mode) is refused before anything opens it for writing."""
    db = _seed(site)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    before, listing = db.read_bytes(), sorted(p.name for p in db.parent.iterdir())
    line = _one_cortex_line(site.cortex("recall", "queue"))
    assert "newer Cortex" in line and "nothing was written" in line
    assert db.read_bytes() == before
    assert sorted(p.name for p in db.parent.iterdir()) == listing


def test_disk_full_is_one_line_and_loses_nothing(site: Site, tmp_path: Path) -> None:
    """SQLITE_FULL in a write is reported as a full disk, not as the failed rollback after it; old notes stay."""
    db = _seed(site)
    before = _notes(db)
    conn = sqlite3.connect(db)
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    launcher = tmp_path / "capped_cli.py"
    launcher.write_text(LAUNCHER)
    big = " ".join(f"word{i}" for i in range(1_900))
    run = site.cortex("note", "--kind", "insight", big, launcher=launcher, extra_env={"TEST_MAX_PAGES": str(pages + 2)})
    line = _one_cortex_line(run)
    assert "full" in line and "no transaction" not in line
    assert "free some disk space" in line
    assert _notes(db) == before
    again = site.cortex("recall", "kafka queue")
    assert again.code == 0, again.err
    assert "kafka" in again.out


def _damage_table(db: Path, table: str) -> None:
    """Overwrite the header of `table`'s root page with garbage (a copy of what a bad sector does)."""
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()[0]
    conn.close()
    with db.open("r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\xff" * 12)


def test_damaged_page_is_one_line_and_the_rest_stays_readable(site: Site) -> None:
    """A damaged table page gives one line saying the store is damaged and what to do; other tables still read.

    (Since schema 11 a note's text is stored once, in its memory item: the note rows around it stay readable.)
    """
    db = _seed(site)
    before = _note_rows(db)
    _damage_table(db, "memory_items")
    line = _one_cortex_line(site.cortex("recall", "queue"))
    assert "damaged" in line and ".recover" in line
    assert db.exists()
    assert _note_rows(db) == before and len(before) == 2


def test_read_only_store_file_is_one_line_and_reads_still_work(site: Site) -> None:
    """A store file without write permission: a write says it is read-only and how to fix it; nothing is lost."""
    db = _seed(site)
    before = _notes(db)
    db.chmod(0o444)
    line = _one_cortex_line(site.cortex("note", "--kind", "insight", "one more fact about kafka"))
    assert "read-only" in line and "chmod u+w" in line
    assert _notes(db) == before
    fix = line.split("(chmod u+w ")[1].split(")")[0].split()
    assert str(db) in fix
    subprocess.run(["chmod", "u+w", *fix], check=True)  # the fix the line gives is enough to write again
    assert site.cortex("note", "--kind", "insight", "one more fact about kafka").code == 0


def test_read_only_store_folder_is_not_called_unreadable(site: Site) -> None:
    """A healthy store in a folder without write permission is described as read-only, never as one to move aside."""
    db = _seed(site)
    before = _notes(db)
    db.parent.chmod(0o555)
    assert sorted(p.name for p in db.parent.iterdir()) == [db.name]  # SQLite must create its -wal and -shm
    line = _one_cortex_line(site.cortex("recall", "kafka"))
    assert "read-only" in line and str(db.parent) in line
    assert "move it aside" not in line and "not a readable" not in line
    db.parent.chmod(0o755)
    assert _notes(db) == before
    assert site.cortex("recall", "kafka").code == 0


def test_a_store_folder_that_cannot_be_created_is_one_line(site: Site, tmp_path: Path) -> None:
    """CORTEX_HOME under a regular file: the store folder cannot exist, and a write's line says where to point it
    (a read creates no store, so `recall` answers as an empty store would)."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file\n")
    assert site.cortex("recall", "kafka", extra_env={"CORTEX_HOME": str(blocker / "cortex")}).code == 0
    run = site.cortex(
        "note", "--kind", "insight", "kafka is the queue", extra_env={"CORTEX_HOME": str(blocker / "cortex")}
    )
    line = _one_cortex_line(run)
    assert "cannot create the store folder" in line and "CORTEX_HOME" in line
    assert blocker.read_text() == "a file\n"
