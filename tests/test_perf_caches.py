"""Caches that save one-shot commands work must never serve a stale answer."""

from __future__ import annotations

from cortex_engine.capture import runtime

from .conftest import Repo


def test_tracked_runtime_files_follow_the_index_within_one_process(repo: Repo) -> None:
    """The git-tracked check of `.cortex/` is asked once per index state: staging a file there is seen at once."""
    assert runtime.tracked_files(repo.path) == []
    assert runtime.tracked_files(repo.path) == []
    repo.write(".cortex/planted.txt", "from the repository\n")
    repo.git("add", "-f", ".cortex/planted.txt")
    assert runtime.tracked_files(repo.path) == [".cortex/planted.txt"]
    repo.git("rm", "-q", "--cached", ".cortex/planted.txt")
    assert runtime.tracked_files(repo.path) == []


def test_the_warm_mcp_engine_is_reopened_when_another_process_changes_the_schema(repo: Repo) -> None:
    """One engine serves call after call; a schema change made elsewhere (a newer Cortex migrating the store)
    makes the next call open a fresh engine, which checks the store's version again."""
    import sqlite3

    from cortex_engine.adapters.mcp_server import CortexTools
    from cortex_engine.engine import open_engine

    opened = []

    def opener(cwd: str):  # noqa: ANN202 - an Engine
        opened.append(cwd)
        return open_engine(cwd)

    tools = CortexTools(str(repo.path), opener)
    try:
        for _ in range(3):
            with tools.engine() as engine:
                db = engine.identity.db_path
                engine.current_session()
        assert len(opened) == 1
        other = sqlite3.connect(db)
        other.execute("CREATE TABLE elsewhere(x)")
        other.close()
        with tools.engine() as engine:
            engine.current_session()
        assert len(opened) == 2
    finally:
        tools.close()
