"""Freshness against real checkouts: deletions, renames (committed, staged, chained), basename moves."""

from __future__ import annotations

from cortex_engine.engine import Engine

from .conftest import Repo


def _labels(engine: Engine, topic: str) -> list[str]:
    surface = engine.recall(topic)
    assert surface.items, surface.text
    return list(surface.items[0].labels)


def test_existing_reference_is_ok(repo: Repo, make_engine) -> None:
    """A reference to a file that exists carries no label and reads `refs OK`."""
    repo.write("src/db/store.py")
    repo.commit()
    engine = make_engine(repo.path)
    engine.note("decision", "open the store in src/db/store.py with WAL", "store open")
    surface = engine.recall("store open")
    assert surface.items[0].labels == ()
    assert "refs OK" in surface.text.split("\n")[0]


def test_uncommitted_delete_is_stale(repo: Repo, make_engine) -> None:
    """A file removed from the working tree (not committed) is `[stale: missing …]` at once."""
    target = repo.write("src/legacy/login_old.py")
    repo.commit()
    engine = make_engine(repo.path)
    engine.note("blocker", "src/legacy/login_old.py still signs with the old key", "legacy login")
    assert _labels(engine, "legacy login") == []
    target.unlink()
    assert _labels(engine, "legacy login") == ["stale: missing src/legacy/login_old.py"]
    assert "[stale: missing src/legacy/login_old.py]" in engine.recall("legacy login").text


def test_committed_rename_is_moved(repo: Repo, make_engine) -> None:
    """`git mv` + commit resolves through the rename map to `[moved: a → b]`."""
    repo.write("src/db/store_reads.py", "def read():\n    return 1\n" * 5)
    repo.commit()
    engine = make_engine(repo.path)
    engine.note("decision", "keep reads in src/db/store_reads.py", "reads")
    repo.git("mv", "src/db/store_reads.py", "src/db/queries.py")
    repo.commit("move")
    assert _labels(engine, "reads") == ["moved: src/db/store_reads.py → src/db/queries.py"]


def test_staged_rename_is_moved(repo: Repo, make_engine) -> None:
    """A rename staged with `git mv` but not committed is already followed."""
    repo.write("src/a/config_loader.py", "LOAD = 1\n" * 10)
    repo.commit()
    engine = make_engine(repo.path)
    engine.note("decision", "parse settings in src/a/config_loader.py", "settings")
    (repo.path / "src/b").mkdir()
    repo.git("mv", "src/a/config_loader.py", "src/b/settings.py")
    assert _labels(engine, "settings") == ["moved: src/a/config_loader.py → src/b/settings.py"]


def test_chained_renames_resolve_to_the_last(repo: Repo, make_engine) -> None:
    """a → b then b → c reads `[moved: a → c]`."""
    repo.write("src/one.py", "ONE = 1\n" * 10)
    repo.commit()
    engine = make_engine(repo.path)
    engine.note("decision", "the entry point is src/one.py", "entry")
    engine.recall("entry")
    repo.git("mv", "src/one.py", "src/two.py")
    repo.commit("to two")
    engine.recall("entry")
    (repo.path / "lib").mkdir()
    repo.git("mv", "src/two.py", "lib/three.py")
    repo.commit("to three")
    assert _labels(engine, "entry") == ["moved: src/one.py → lib/three.py"]


def test_unique_basename_move_without_git_history(repo: Repo, make_engine) -> None:
    """A file moved by plain mv (no git) is found by a unique basename elsewhere."""
    repo.write("src/util/hashing.py")
    repo.commit()
    engine = make_engine(repo.path)
    engine.note("insight", "digests are computed in src/util/hashing.py")
    (repo.path / "lib").mkdir()
    (repo.path / "src/util/hashing.py").rename(repo.path / "lib/hashing.py")
    assert _labels(engine, "digests computed") == ["moved: src/util/hashing.py → lib/hashing.py"]


def test_ambiguous_basename_is_missing_not_guessed(repo: Repo, make_engine) -> None:
    """Two candidates with the same basename: uncertainty resolves to missing, never a guess."""
    repo.write("src/util/hashing.py")
    repo.commit()
    engine = make_engine(repo.path)
    engine.note("insight", "digests are computed in src/util/hashing.py")
    (repo.path / "src/util/hashing.py").unlink()
    repo.write("a/hashing.py")
    repo.write("b/hashing.py")
    assert _labels(engine, "digests computed") == ["stale: missing src/util/hashing.py"]


def test_stale_is_penalised_but_reachable_and_history_keeps_it(repo: Repo, make_engine) -> None:
    """A stale memory ranks below a current one, yet stays reachable and labelled."""
    repo.write("src/auth/new_login.py")
    repo.write("src/auth/old_login.py")
    repo.commit()
    engine = make_engine(repo.path)
    engine.note("insight", "login tokens are minted in src/auth/old_login.py")
    engine.note("insight", "login tokens are minted in src/auth/new_login.py")
    (repo.path / "src/auth/old_login.py").unlink()
    current = engine.recall("login tokens minted")
    assert current.items[0].labels == ()
    assert current.items[1].labels == ("stale: missing src/auth/old_login.py",)
    assert "[stale: missing src/auth/old_login.py]" in current.text


def test_other_branch_items_judged_by_their_recorded_inventory(repo: Repo, make_engine) -> None:
    """Switching branches does not judge a branch's memory against another checkout."""
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("src/feature_only.py")
    repo.commit("feature file")
    feature = make_engine(repo.path)
    note = feature.note("decision", "feature flags live in src/feature_only.py", "flags")
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)
    assert not (repo.path / "src/feature_only.py").exists()
    inspection = main.inspect_memory(note.id)
    assert [r["status"] for r in inspection.references] == ["exists"]
    assert main.recall("flags").items == []


def test_validate_memory_reports_and_persists(repo: Repo, make_engine) -> None:
    """validate-memory counts verdicts and records them on the references."""
    repo.write("src/keep.py")
    repo.write("src/gone.py")
    repo.commit()
    engine = make_engine(repo.path)
    engine.note("insight", "see src/keep.py and src/gone.py")
    (repo.path / "src/gone.py").unlink()
    report = engine.validate_memory()
    assert report["references"] == {"exists": 1, "missing": 1, "moved": 0, "unknown": 0}
    assert report["stale"] == 1
    statuses = dict(engine.conn.execute("SELECT normalized_path, status FROM memory_references").fetchall())
    assert statuses == {"src/keep.py": "exists", "src/gone.py": "missing"}


def test_unchanged_checkout_does_not_rebuild_inventory(repo: Repo, make_engine) -> None:
    """The inventory is cached by HEAD and index; an unchanged checkout costs no rebuild."""
    engine = make_engine(repo.path)
    engine.refresh()
    stamp = engine.conn.execute("SELECT updated_at FROM current_app_graphs").fetchone()[0]
    engine.conn.execute("UPDATE current_app_graphs SET updated_at='sentinel'")
    engine.refresh()
    assert engine.conn.execute("SELECT updated_at FROM current_app_graphs").fetchone()[0] == "sentinel"
    repo.write("new.py")
    repo.commit()
    engine.refresh()
    assert engine.conn.execute("SELECT updated_at FROM current_app_graphs").fetchone()[0] == stamp


def test_recalling_a_missing_file_again_spawns_no_git_until_the_index_changes(
    repo: Repo, make_engine, monkeypatch
) -> None:
    """A result naming a missing file asks git for renames staged in the index. A warm engine asks once per
    index state, not once per recall (the path topic spent most of its time spawning that git);
    staging a rename changes the index, and the next recall follows it."""
    from cortex_engine.scope import history

    asked: list[tuple[str, ...]] = []
    real = history.git
    monkeypatch.setattr(history, "git", lambda cwd, *args, **kw: asked.append(args) or real(cwd, *args, **kw))
    repo.write("src/db/pool.py", "POOL = 1\n" * 10)
    repo.write("src/db/gone.py", "GONE = 1\n")
    repo.commit()
    engine = make_engine(repo.path)
    engine.note("insight", "the pool timeout is set in src/db/pool.py and src/db/gone.py", "pool timeout")
    (repo.path / "src/db/gone.py").unlink()
    engine.recall("pool timeout")
    first = len(asked)
    for _ in range(3):
        assert "stale: missing src/db/gone.py" in _labels(engine, "pool timeout")
    assert first >= 1 and len(asked) == first
    (repo.path / "src/lib").mkdir()
    repo.git("mv", "src/db/pool.py", "src/lib/pool.py")
    assert "moved: src/db/pool.py → src/lib/pool.py" in _labels(engine, "pool timeout")
    assert len(asked) > first
