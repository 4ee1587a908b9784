"""Store identity, pragmas, schema version guard and forward migration."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cortex_engine.base.errors import StoreRefused
from cortex_engine.engine import Engine, describe_store
from cortex_engine.scope.identity import store_identity
from cortex_engine.store.database import SCHEMA_VERSION, connect

from .conftest import Repo, git


def test_worktrees_share_one_store_and_clones_do_not(repo: Repo, tmp_path: Path) -> None:
    """Every worktree of a repository resolves to the same store; a clone gets its own."""
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "feature", str(linked))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo.path), str(clone))
    main_id = store_identity(str(repo.path))
    sub = repo.write("src/pkg/mod.py").parent
    assert store_identity(str(linked)).db_path == main_id.db_path
    assert store_identity(str(sub)).db_path == main_id.db_path
    assert store_identity(str(clone)).db_path != main_id.db_path
    assert main_id.store_dir.name == f"repo-{main_id.store_id}"
    assert len(main_id.store_id) == 16


def test_store_path_honours_cortex_home(repo: Repo, isolated_home: Path) -> None:
    """The store lives under $CORTEX_HOME/projects."""
    info = describe_store(repo.path)
    assert Path(info.path).is_relative_to(isolated_home / ".cortex" / "projects")
    assert info.exists is False
    assert info.degraded is False


def test_degraded_identity_outside_git(tmp_path: Path) -> None:
    """Outside git the identity falls back to the directory and says so."""
    plain = tmp_path / "plain"
    plain.mkdir()
    info = describe_store(plain)
    assert info.degraded is True
    assert "not a git repository" in (info.degraded_reason or "")
    assert "degraded" in info.derived
    assert info.scope_key.startswith("project:")


def test_describe_store_creates_nothing(repo: Repo) -> None:
    """`cortex store` reports without creating the store."""
    info = describe_store(repo.path)
    assert not Path(info.path).exists()


def test_pragmas_and_version(engine: Engine) -> None:
    """WAL, foreign keys and the current schema version are in force."""
    assert engine.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert engine.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert engine.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    version = engine.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    assert version == str(SCHEMA_VERSION)


def _set_version(db: Path, value: str) -> None:
    conn = connect(db)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (value,))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


@pytest.mark.parametrize(
    ("value", "code", "words"),
    [(str(SCHEMA_VERSION + 1), "newer_schema", "newer Cortex"), ("seven", "corrupt_schema_version", "corrupt")],
)
def test_newer_or_corrupt_store_is_refused_and_untouched(repo: Repo, clock, value: str, code: str, words: str) -> None:
    """A store from a newer version, or with a corrupt version, is refused and not written to."""
    engine = Engine(repo.path, clock=clock)
    engine.note("decision", "use kafka for the queue", "queue")
    db = engine.identity.db_path
    engine.close()
    _set_version(db, value)
    before = db.read_bytes()
    with pytest.raises(StoreRefused) as caught:
        Engine(repo.path, clock=clock)
    assert caught.value.code == code
    assert words in caught.value.message
    assert "\n" not in caught.value.message
    assert db.read_bytes() == before
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0] == 1
    conn.close()


def test_garbage_file_is_refused(repo: Repo, clock) -> None:
    """A file that is not SQLite at all is refused with a one-line message and left as it was."""
    db = store_identity(str(repo.path)).db_path
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreRefused) as caught:
        Engine(repo.path, clock=clock)
    assert caught.value.code == "unreadable_store"
    assert db.read_bytes() == b"this is not a database" * 100


def test_migration_runs_forward_from_an_empty_versioned_store(repo: Repo, clock) -> None:
    """A store whose meta says version 0 is migrated to the current version on open."""
    db = store_identity(str(repo.path)).db_path
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '0')")
    conn.commit()
    conn.close()
    engine = Engine(repo.path, clock=clock)
    assert engine.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert engine.note("insight", "migration leaves a usable store").id
    engine.close()


def test_every_transaction_goes_through_the_store_helper() -> None:
    """Only store.py opens, commits or rolls back a transaction; every other module uses `store.transaction`
    (a savepoint inside one is fine). Hand-rolled copies drifted: one rolled back with a bare ROLLBACK that
    masks the real error after SQLITE_FULL."""
    import re

    statement = re.compile(r"""execute\(\s*f?["'](?:BEGIN|COMMIT|END|ROLLBACK(?!\s+TO))\b""", re.IGNORECASE)
    root = Path(__file__).resolve().parent.parent
    sources = [p for package in ("cortex_engine", "cortex_tui") for p in sorted((root / package).rglob("*.py"))]
    assert len(sources) > 40
    found = [f"{p.relative_to(root)}:{n}" for p in sources if p.name != "database.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if statement.search(line)]
    assert found == []


@pytest.mark.parametrize("module", ["capture/agents", "capture/reflex", "operator", "capture/gc"])
def test_rule_modules_ask_named_queries_instead_of_running_sql(module: str) -> None:
    """The subagent, reflex, operator and retention modules hold rules; their SQL lives in the store layer
    (`queries`), so a schema change is made there and nowhere else."""
    import ast

    path = Path(__file__).resolve().parent.parent / "cortex_engine" / f"{module}.py"
    calls = [f"{module}.py:{node.lineno}" for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr in ("execute", "executemany", "executescript")]
    assert calls == []
