"""Caches that save one-shot commands work must never serve a stale answer."""

from __future__ import annotations

from cortex_engine import runtime

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
