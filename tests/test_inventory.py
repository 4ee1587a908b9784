"""The checkout's inventory (`scope/inventory.py`): what is a file, when it is listed again, what a rename follows.

Each test reaches its rule through the engine (a note's references, `validate-memory`) or the inventory's public
functions on a real git repository.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cortex_engine.engine import Engine
from cortex_engine.scope import history, inventory
from cortex_engine.scope.references import extract_references

from .conftest import Repo


def _refs(engine: Engine, item_id: str) -> list[tuple[object, object]]:
    """An item's references as `inspect-memory` shows them: (path, status)."""
    return [(r["path"], r["status"]) for r in engine.inspect_memory(item_id).references]


def test_a_bare_root_name_is_a_file_when_head_tracks_it_or_it_is_on_disk_untracked(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """A name without a slash counts as a file reference only when it is a file at the root: tracked at the HEAD
    the last refresh saw (even if deleted on disk since), or in the checkout's inventory (untracked, not ignored)."""
    repo.write("build.sh")
    repo.commit("make")
    (repo.path / "build.sh").unlink()
    repo.write("plan.txt")
    engine = make_engine(repo.path)
    item = engine.note("decision", "build with build.sh and follow plan.txt, not deploy.sh", "build").item_id
    assert _refs(engine, item) == [("build.sh", "missing"), ("plan.txt", "exists")]


class _Racing(sqlite3.Connection):
    """A connection another process writes through between two of its reads (`before_files` runs once, just
    before the inventory is read)."""

    before_files: Callable[[], object] | None = None

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        """Run `sql`, first letting the other process write if it is the inventory's read."""
        if self.before_files is not None and sql.startswith("SELECT files_json FROM current_app_graphs"):
            write, self.before_files = self.before_files, None
            write()
        return super().execute(sql, *args)


def test_a_refresh_between_the_two_reads_is_answered_as_if_it_had_come_first(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """`repository_for` reads the checkout's row, then its inventory (a large text) only for a checkout it has not
    seen: when another process refreshed the row in between, the answer is the new checkout's, whole."""
    engine = make_engine(repo.path)
    engine.refresh()
    repo.write("next.py")
    repo.commit("next")
    head = repo.git("rev-parse", "HEAD").strip()
    racing = sqlite3.connect(engine.identity.db_path, factory=_Racing)
    racing.row_factory = sqlite3.Row
    try:
        racing.before_files = engine.refresh
        paths, at = inventory.repository_for(racing, engine.scope.key)
        assert racing.before_files is None  # the other write did come in between
        assert at == head and paths is not None and paths.ever_tracked("next.py")
    finally:
        racing.close()


def test_staging_a_file_rebuilds_the_inventory_and_a_moved_head_alone_is_seen_too(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """The inventory is rebuilt when the git index changes (a file staged since the last refresh is a root file
    at once) or HEAD moves, even when the other stays as it was."""
    engine = make_engine(repo.path)
    engine.refresh()
    repo.write("plan.txt")
    repo.git("add", "plan.txt")
    item = engine.note("decision", "follow plan.txt from now on", "plan").item_id
    assert _refs(engine, item) == [("plan.txt", "exists")]
    head = repo.git("rev-parse", "HEAD").strip()
    again = repo.git("commit-tree", f"{head}^{{tree}}", "-p", head, "-m", "same tree").strip()
    repo.git("update-ref", "refs/heads/main", again)  # HEAD moves; the index file is not touched
    engine.refresh()
    assert inventory.repository_for(engine.conn, engine.scope.key)[1] == again != head


LINES = "".join(f"line_{n:02d} = {n} * {n}  # value number {n}\n" for n in range(20))


def _verdicts(engine: Engine) -> dict[str, tuple[str, str | None]]:
    """Every referenced path of the scope's memories: (status, moved_to), from `validate-memory`."""
    report = engine.validate_memory(persist=False)
    return {
        ref["path"]: (ref["status"], ref["moved_to"])
        for item in report["items"]  # type: ignore[attr-defined]
        for ref in item["references"]
    }


def _noted_then_moved(repo: Repo, make_engine: Callable[..., Engine], dest: str, message: str) -> tuple[Engine, str]:
    """A decision noted on `a/x.py`, then the file renamed to `dest` (a new folder) in a commit, and a refresh:
    the engine, and the HEAD the note was recorded at."""
    repo.write("a/x.py", LINES)
    repo.commit("x")
    recorded = repo.git("rev-parse", "HEAD").strip()
    engine = make_engine(repo.path)
    engine.note("decision", "a/x.py holds the values", "values")
    (repo.path / dest).parent.mkdir()
    repo.git("mv", "a/x.py", dest)
    repo.commit(message)
    engine.refresh()
    return engine, recorded


def test_the_rename_map_takes_renames_from_the_index_whatever_the_file_became_since(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """A reference stored before its HEAD was recorded follows the scope's rename map, which each refresh extends
    with the renames between the last HEAD and the index: a staged rename counts whatever the working file became
    after it was staged."""
    repo.write("a/one.py", LINES)
    repo.commit("x")
    engine = make_engine(repo.path)
    engine.note("decision", "a/one.py holds the values", "values")
    engine.conn.execute("UPDATE item_refs SET head=NULL")  # as an older version stored it
    (repo.path / "lib").mkdir()
    repo.git("mv", "a/one.py", "lib/uno.py")
    repo.commit("moved")
    repo.write("lib/uno.py", "nothing like it was\n")  # changed on disk after the rename was staged
    engine.refresh()
    assert _verdicts(engine) == {"a/one.py": ("moved", "lib/uno.py")}


def test_a_refresh_walks_history_only_when_head_moved_and_then_no_read_walks_it_again(
    repo: Repo, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chains from each recorded HEAD are brought to the new HEAD by the refresh that sees HEAD move, so the
    reads after it walk no history; a refresh for a changed index alone walks none either."""
    engine, _ = _noted_then_moved(repo, make_engine, "b/x.py", "moved")

    def walk(*args: object) -> object:
        raise AssertionError("history walked after the refresh")

    monkeypatch.setattr(history, "chains", walk)
    assert _verdicts(engine) == {"a/x.py": ("moved", "b/x.py")}
    repo.write("new.txt")
    repo.git("add", "new.txt")
    engine.refresh()
    paths, _ = inventory.repository_for(engine.conn, engine.scope.key)
    assert paths is not None and paths.tracked_root_file("new.txt")  # the refresh did run


def test_a_refresh_after_head_moved_forward_walks_only_the_commits_since_the_last_head(
    repo: Repo, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chain from a recorded HEAD to the last one is extended by the commits since (one short walk), not
    walked again from where the reference was recorded; that short walk is also the chain of a reference recorded
    at the last HEAD itself. The process that refreshed keeps the chains: its next reads ask neither git nor the
    store."""
    engine, recorded = _noted_then_moved(repo, make_engine, "b/x.py", "moved once")
    last = repo.git("rev-parse", "HEAD").strip()
    engine.note("decision", "b/x.py holds them now", "values again")  # recorded at the last HEAD itself
    (repo.path / "c").mkdir()
    repo.git("mv", "b/x.py", "c/x.py")
    repo.commit("moved twice")
    walked: list[list[str]] = []
    real = history.chains

    def chains(repo_path: str, starts: list[str], head: str) -> dict[str, history.Chain]:
        walked.append(list(starts))
        return real(repo_path, starts, head)

    monkeypatch.setattr(history, "chains", chains)
    engine.refresh()
    assert walked == [[last]] and recorded != last
    statements: list[str] = []
    engine.conn.set_trace_callback(statements.append)
    try:
        found = _verdicts(engine)
    finally:
        engine.conn.set_trace_callback(None)
    assert found == {"a/x.py": ("moved", "c/x.py"), "b/x.py": ("moved", "c/x.py")}
    assert walked == [[last]]
    assert statements and not [s for s in statements if "rename_chains" in s]  # this process kept what it walked


def test_the_inventory_is_not_listed_again_while_head_and_the_index_stay(
    repo: Repo, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What else git writes in its directory (its config here) does not make a refresh list the checkout again;
    staging a file does."""
    engine = make_engine(repo.path)
    engine.refresh()
    listed: list[str] = []
    real = inventory.list_files

    def list_files(worktree: str) -> list[str]:
        listed.append(worktree)
        return real(worktree)

    monkeypatch.setattr(inventory, "list_files", list_files)
    repo.git("config", "cortex.test", "1")
    engine.refresh()
    assert listed == []
    repo.write("x.txt")
    repo.git("add", "x.txt")
    engine.refresh()
    assert listed == [engine.scope.worktree]


def test_after_history_was_rewritten_the_chains_are_walked_again_from_each_recorded_head(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """When the new HEAD does not descend from the last one (a reset or a rebase), the chains known towards the
    last HEAD are not extended: each recorded HEAD is followed to the new one on its own."""
    engine, recorded = _noted_then_moved(repo, make_engine, "b/y.py", "moved one way")
    assert _verdicts(engine) == {"a/x.py": ("moved", "b/y.py")}
    repo.git("reset", "-q", "--hard", recorded)
    (repo.path / "c").mkdir()
    repo.git("mv", "a/x.py", "c/z.py")
    repo.commit("moved the other way")
    engine.refresh()
    assert _verdicts(engine) == {"a/x.py": ("moved", "c/z.py")}


# --- `list_files`' separators, a remote's name before a branch's path ---------------------------


def test_a_file_named_with_backslashes_is_listed_as_the_path_a_note_writes_it_as(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """A note's `.\\release\\7.x` is read as `release/7.x` (backslashes are separators, a leading `./` goes), and
    the inventory lists a file git names with backslashes the same way: so such a file counts as tracked, and a
    branch-shaped path naming it (its version-like tail) is still a reference."""
    (repo.path / ".\\release\\7.x").write_text("x\n", encoding="utf-8")
    (repo.path / "web\\app.js").write_text("x\n", encoding="utf-8")
    repo.commit("files named the Windows way")
    assert inventory.list_files(str(repo.path)) == ["README.md", "release/7.x", "web/app.js"]
    engine = make_engine(repo.path)
    item = engine.note("insight", "cut .\\release\\7.x after hotfix\\8.x", "release").item_id
    assert [path for path, _ in _refs(engine, item)] == ["release/7.x"]  # `hotfix/8.x` was never a file: a branch


def test_a_path_that_starts_with_a_remote_s_name_is_a_branch_however_deep(repo: Repo) -> None:
    """`origin/team/fix.py` names a branch of the remote `origin` (the first part is the remote), so it is not taken
    for a file path; `src/team/fix.py` is one."""
    repo.git("remote", "add", "origin", "https://example.invalid/repo.git")
    head = repo.git("rev-parse", "HEAD").strip()
    paths = inventory.GitPaths(str(repo.path), head)
    assert paths.names_ref("origin/team/fix.py") and paths.names_ref("origin/fix.py")
    assert not paths.names_ref("src/team/fix.py")
    found = extract_references(None, "rebased on origin/team/fix.py, then edited src/team/fix.py", paths.begin())
    assert [r.normalized for r in found] == ["src/team/fix.py"]


def test_an_old_reference_follows_a_rename_git_scores_at_sixty_percent_as_a_recorded_one_does(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """Git's default threshold is 50 % (`test_move_at_sixty_percent_similarity_is_moved`): the rename map a refresh
    keeps for references stored before HEADs were recorded takes the same renames as the history chains, so such a
    reference reads `moved` too, not `missing` (the new name has another basename: only the map can tell)."""
    body = "".join(f"keep_{n} = {n}\n" for n in range(10))
    repo.write("app/handlers.py", body)
    repo.commit("handlers")
    engine = make_engine(repo.path)
    item = engine.note("decision", "requests are routed in app/handlers.py", "routing").item_id
    engine.conn.execute("UPDATE item_refs SET head=NULL")  # as an older version stored it
    repo.git("mv", "app/handlers.py", "app/routes.py")
    repo.write(
        "app/routes.py", "".join(body.splitlines(keepends=True)[:6]) + "".join(f"new_{n} = {n}\n" for n in range(4))
    )
    repo.commit("rename and rework")
    assert repo.git("log", "-1", "-M", "--name-status", "--format=").split()[0] == "R060"
    engine.refresh()
    assert [(r["path"], r["status"], r["moved_to"]) for r in engine.inspect_memory(item).references] == [
        ("app/handlers.py", "moved", "app/routes.py")
    ]


def test_a_note_is_written_before_the_repository_s_first_commit(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    """Before the first commit the checkout has no HEAD to read a repository at: extraction goes without one."""
    unborn = tmp_path / "unborn"
    unborn.mkdir()
    Repo(unborn).git("init", "-q", "-b", "main")
    (unborn / "src").mkdir()
    (unborn / "src" / "app.py").write_text("x = 1\n", encoding="utf-8")
    engine = make_engine(unborn)
    engine.refresh()
    item = engine.note("decision", "the app starts in src/app.py", "start").item_id
    assert _refs(engine, item) == [("src/app.py", "exists")]


def test_when_git_cannot_answer_no_path_is_taken_for_a_ref(tmp_path: Path) -> None:
    """A directory git cannot read (here: none at all) names no branch, tag or remote, whatever the path."""
    paths = inventory.GitPaths(str(tmp_path / "gone"), None)
    assert not any(paths.names_ref(p) for p in ("XXXX/a.py", "XXXX", "main", "origin/x.py"))


def test_chains_the_store_is_too_busy_to_take_are_skipped_and_the_cause_logged(
    repo: Repo, make_engine: Callable[..., Engine], caplog: pytest.LogCaptureFixture
) -> None:
    """Another process holding the store's write lock: the walked chains are not kept (walked again next time), and
    why is logged at debug level by this module's logger."""
    engine = make_engine(repo.path)
    other = sqlite3.connect(engine.conn.execute("PRAGMA database_list").fetchone()[2])
    other.execute("BEGIN IMMEDIATE")
    try:
        with caplog.at_level("DEBUG", logger="cortex_engine.scope.inventory"):
            inventory.store_chains(engine.conn, "h" * 40, {"r" * 40: history.Chain("r" * 40, {"a.py": "b.py"})})
    finally:
        other.rollback()
        other.close()
    assert engine.conn.execute("SELECT COUNT(*) FROM rename_chains").fetchone()[0] == 0
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("cortex_engine.scope.inventory", "DEBUG", "rename chains not stored: database is locked")
    ]


def test_the_rename_map_takes_renames_under_a_user_s_diff_renames_false(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """A user's `diff.renames=false` turns off git's rename detection in `git diff`: the refresh asks for it
    (`-M`), so an old reference still follows its file to another basename."""
    repo.write("app/handlers.py", LINES)
    repo.commit("handlers")
    repo.git("config", "diff.renames", "false")
    engine = make_engine(repo.path)
    item = engine.note("decision", "requests are routed in app/handlers.py", "routing").item_id
    engine.conn.execute("UPDATE item_refs SET head=NULL")  # as an older version stored it
    repo.git("mv", "app/handlers.py", "app/routes.py")
    repo.commit("rename")
    engine.refresh()
    assert [(r["path"], r["status"], r["moved_to"]) for r in engine.inspect_memory(item).references] == [
        ("app/handlers.py", "moved", "app/routes.py")
    ]
