"""Freshness verdicts that mutation testing of `scope/freshness.py` found untested.

Each test reaches its rule through the engine or a `Validator` on a real git repository; MUTATION.md names
the mutants each one kills.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex_engine.engine import Engine
from cortex_engine.scope import inventory
from cortex_engine.scope.freshness import RefVerdict, Validator
from cortex_engine.scope.identity import detect_scope

from .conftest import Repo


def _project_note(repo: Repo, engine: Engine, text: str) -> str:
    """An insight of the project layer (imported from a CLAUDE.md and accepted), as its item id."""
    claude = repo.write("CLAUDE.md", f"# Layout\n\n{text}\n")
    engine.import_file(str(claude))
    engine.accept_arrivals([], every=True)
    row = engine.conn.execute("SELECT id, scope_key FROM scoped_notes").fetchone()
    assert row["scope_key"] == engine.project_key != engine.scope.key
    return f"notes:{row['id']}"


def test_a_project_layer_memory_is_judged_against_the_current_checkout(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """Inside git the project layer's key is not the branch's, yet its references are checked against the
    checkout the engine stands in (as `checkouts` says): a gone file is stale, not unverified."""
    repo.write("src/app.py", "x = 1\n" * 5)
    repo.commit("app")
    engine = make_engine(repo.path)
    item = _project_note(repo, engine, "The work happens in src/app.py and src/gone.py always.")
    found = engine.inspect_memory(item)
    assert [(r["path"], r["status"]) for r in found.references] == [
        ("src/app.py", "exists"),
        ("src/gone.py", "missing"),
    ]
    assert "[stale: missing src/gone.py]" in engine.recall("work happens", book=False).text
    # Another store's project layer has no checkout here: it stays unknown.
    validator = Validator(engine.conn, engine.scope)
    assert validator.judge("project:/elsewhere", "src/app.py", "file").status == "unknown"
    assert validator.judge(engine.project_key, "src/app.py", "file").status == "exists"
    # An absolute path is judged on disk whatever the scope, and its verdict names it.
    assert validator.judge(engine.scope.key, str(repo.path / "src/app.py"), "absolute_path") == RefVerdict(
        str(repo.path / "src/app.py"), "absolute_path", "exists"
    )


LINES = "".join(f"line_{n:02d} = {n} * {n}  # value number {n}\n" for n in range(20))


def _by_subject(engine: Engine) -> dict[str, list[tuple[str, str, str | None]]]:
    """`validate-memory --all-scopes`: every memory's references as (path, verdict, to), by subject."""
    report = engine.validate_memory(all_scopes=True, persist=False)
    return {
        item["subject"]: [(r["path"], r["verdict"], r["to"]) for r in item["references"]] for item in report["items"]
    }  # type: ignore[attr-defined]


def test_a_branch_without_a_worktree_follows_its_references_through_its_own_commits_to_its_tip(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """A memory of a branch no worktree has checked out is judged at the branch's tip, and a reference recorded
    at an older commit of it follows the renames between (even to another basename), as in a worktree."""
    repo.write("a/x.py", LINES)
    repo.commit("x")
    repo.git("checkout", "-q", "-b", "side")
    make_engine(repo.path).note("decision", "side keeps a/x.py", "side x")
    (repo.path / "b").mkdir()
    repo.git("mv", "a/x.py", "b/y.py")
    repo.commit("side renames x")
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)
    main.note("decision", "main keeps a/x.py", "main x")
    assert _by_subject(main) == {"main x": [("a/x.py", "exists", None)], "side x": [("a/x.py", "moved", "b/y.py")]}


def test_a_commit_git_cannot_read_leaves_every_reference_unverified_and_an_empty_tree_has_no_file(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """Judged at a commit: the files are that commit's tree; a commit git cannot list says nothing (unknown),
    and a commit whose tree is empty holds no file at all."""
    engine = make_engine(repo.path)
    item = engine.note("decision", "the title lives in README.md", "title").item_id
    head = repo.git("rev-parse", "HEAD").strip()
    empty = repo.git(
        "commit-tree", repo.git("hash-object", "-t", "tree", "-w", "/dev/null").strip(), "-m", "empty"
    ).strip()

    def at(commit: str, path: str = "README.md") -> str:
        return Validator(engine.conn, engine.scope, at_commit=commit).judge(engine.scope.key, path, "file").status

    assert [at(head), at("0" * 40), at(empty), at(empty, "XXXX")] == ["exists", "unknown", "missing", "missing"]
    unread = Validator(engine.conn, engine.scope, at_commit="0" * 40).validate(item, engine.scope.key)
    assert (unread.validity, unread.label, unread.refs) == (
        "refs unverified",
        None,
        (RefVerdict("README.md", "file", "unknown"),),
    )


def test_more_items_than_one_query_binds_are_each_judged_once(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """`validate_many` reads references 500 items at a time: the 501st item is judged, and only once."""
    engine = make_engine(repo.path)
    item = engine.note("decision", "the title lives in README.md", "title").item_id
    others = [(f"notes:none-{n}", engine.scope.key) for n in range(500)]
    for items in (others + [(item, engine.scope.key)], [(item, engine.scope.key)] + others):
        found = Validator(engine.conn, engine.scope).validate_many(items)
        assert len(found) == 501 and [r.status for r in found[item].refs] == ["exists"]
        assert sum(len(v.refs) for v in found.values()) == 1


def test_a_checkout_whose_directory_is_gone_says_nothing_about_its_files(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """A long-lived process (the MCP server) whose worktree was deleted under it cannot see any file: its
    references are unknown, never missing."""
    other = tmp_path / "wt-feat"
    repo.git("worktree", "add", "-q", "-b", "feat", str(other))
    scope = detect_scope(str(other))
    engine = make_engine(repo.path)
    live = Validator(engine.conn, scope)
    assert live.judge(scope.key, "README.md", "file", scope.head_oid).status == "exists"
    shutil.rmtree(other)
    gone = Validator(engine.conn, scope)
    assert [gone.judge(scope.key, p, "file", scope.head_oid) for p in ("README.md", "a/b.py")] == [
        RefVerdict("README.md", "file", "unknown"),
        RefVerdict("a/b.py", "file", "unknown"),
    ]
    assert gone.judge(scope.key, "a/b.py", "file") == RefVerdict("a/b.py", "file", "unknown")


SESSION = "import os\n\n\ndef refresh_token(x):\n    y = x + 1\n    return y\n\n\ndef other(a):\n    return a * 2\n"


def test_another_worktree_s_memory_has_its_anchors_read_in_that_worktree(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """A memory of another worktree, judged from here by its stored inventory, has its anchors read in the files
    of that worktree: a function changed there (and not here) is drifted."""
    repo.write("src/auth/session.py", SESSION)
    repo.commit("session")
    feat = tmp_path / "wt-feat"
    repo.git("worktree", "add", "-q", "-b", "feat", str(feat))
    there = make_engine(feat)
    item = there.note("decision", "refresh_token() in src/auth/session.py adds one", "tokens").item_id
    (feat / "src/auth/session.py").write_text(SESSION.replace("+ 1", "+ 2"), encoding="utf-8")
    here = make_engine(repo.path)
    found = Validator(here.conn, here.scope).validate(item, there.scope.key)
    assert [r.status for r in found.refs] == ["exists"]
    assert [(a.status, a.path) for a in found.anchors] == [("drifted", "src/auth/session.py")]


def _noted_in_feat(repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path) -> tuple[Path, Engine, str]:
    """A worktree `feat` of `repo`, its engine, and a decision noted there on `a/one.py` (committed in `repo`)."""
    repo.write("a/one.py", "one = 1\n" * 8)
    repo.commit("one")
    feat = tmp_path / "wt-feat"
    repo.git("worktree", "add", "-q", "-b", "feat", str(feat))
    there = make_engine(feat)
    return feat, there, there.note("decision", "a/one.py holds one", "one").item_id


def _moved_in_feat(feat: Path, there: Engine) -> None:
    """`a/one.py` renamed to `lib/uno.py` in a commit of `feat`, which its engine then refreshes."""
    (feat / "lib").mkdir()
    Repo(feat).git("mv", "a/one.py", "lib/uno.py")
    Repo(feat).commit("moved there")
    there.refresh()


def test_another_worktree_s_old_reference_follows_that_worktree_s_rename_map(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """A reference stored before HEADs were recorded, of another worktree's memory, follows the rename map that
    worktree's refreshes kept, not this one's."""
    feat, there, item = _noted_in_feat(repo, make_engine, tmp_path)
    there.conn.execute("UPDATE item_refs SET head=NULL")  # as an older version stored it
    _moved_in_feat(feat, there)
    here = make_engine(repo.path)
    found = Validator(here.conn, here.scope).validate(item, there.scope.key)
    assert [(r.status, r.moved_to) for r in found.refs] == [("moved", "lib/uno.py")]
    assert [(r.status, r.moved_to) for r in Validator(here.conn, here.scope).validate(item, here.scope.key).refs] == [
        ("exists", None)
    ]


def test_another_worktree_s_chain_missing_from_the_store_is_walked_in_its_repository(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """When the store holds no chain for another worktree's recorded HEAD (a store from before chains were kept),
    the chain is walked in that worktree's repository, not given up as unverified."""
    feat, there, item = _noted_in_feat(repo, make_engine, tmp_path)
    _moved_in_feat(feat, there)
    there.conn.execute("DELETE FROM rename_chains")
    inventory.chain_cache.clear()  # another process
    here = make_engine(repo.path)
    found = Validator(here.conn, here.scope).validate(item, there.scope.key)
    assert [(r.status, r.moved_to) for r in found.refs] == [("moved", "lib/uno.py")]


def test_a_branch_s_old_reference_reads_the_same_once_its_worktree_is_gone(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """A reference stored before HEADs were recorded follows the rename map its branch's refreshes kept, whether
    the branch is judged in its worktree or, that worktree removed, at the branch's tip: `moved` both times (the
    file went to another basename, so only the map can tell)."""
    feat, there, item = _noted_in_feat(repo, make_engine, tmp_path)
    there.conn.execute("UPDATE item_refs SET head=NULL")  # as an older version stored it
    _moved_in_feat(feat, there)
    here = make_engine(repo.path)
    assert _by_subject(here)["one"] == [("a/one.py", "moved", "lib/uno.py")]
    there.close()
    repo.git("worktree", "remove", "--force", str(feat))
    assert _by_subject(make_engine(repo.path))["one"] == [("a/one.py", "moved", "lib/uno.py")]


def test_another_worktree_s_staged_rename_reads_the_same_from_here_as_from_there(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """A rename staged (not committed) in another worktree is that worktree's checkout: its memory's reference
    reads `moved` judged from here, as it does judged there."""
    feat, there, item = _noted_in_feat(repo, make_engine, tmp_path)
    (feat / "lib").mkdir()
    Repo(feat).git("mv", "a/one.py", "lib/uno.py")
    there.refresh()
    assert [
        (r.status, r.moved_to) for r in Validator(there.conn, there.scope).validate(item, there.scope.key).refs
    ] == [("moved", "lib/uno.py")]
    here = make_engine(repo.path)
    found = Validator(here.conn, here.scope).validate(item, there.scope.key)
    assert [(r.status, r.moved_to) for r in found.refs] == [("moved", "lib/uno.py")]


def test_an_anchor_is_looked_for_only_in_a_file_its_reference_found(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """Another worktree is judged from here by its stored inventory: a file it no longer lists (untracked there and
    ignored) reads `missing`, and its anchor stays `unknown` though a file of that name could still be read: the
    anchor does not say `fresh` about a file its own reference did not find."""
    repo.write("a/one.py", LINES)
    repo.commit("one")
    feat = tmp_path / "wt-feat"
    repo.git("worktree", "add", "-q", "-b", "feat", str(feat))
    there = make_engine(feat)
    item = there.note("decision", "a/one.py:3-5 holds the squares", "one").item_id
    Repo(feat).git("rm", "-q", "--cached", "a/one.py")
    (repo.path / ".git" / "info" / "exclude").write_text("a/one.py\n", encoding="utf-8")
    there.refresh()
    here = make_engine(repo.path)
    found = Validator(here.conn, here.scope).validate(item, there.scope.key)
    assert [r.status for r in found.refs] == ["missing"]
    assert [(a.name, a.status) for a in found.anchors] == [("a/one.py:3-5", "unknown")]


def test_another_worktree_s_staging_is_read_again_when_it_changes_there(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """The staged renames kept between passes are keyed by the current worktree's index: another worktree's are
    read from that worktree every pass, so a second rename staged there (this index untouched) is seen."""
    feat, there, item = _noted_in_feat(repo, make_engine, tmp_path)
    (feat / "lib").mkdir()
    Repo(feat).git("mv", "a/one.py", "lib/uno.py")
    there.refresh()
    here = make_engine(repo.path)

    def from_here() -> list[tuple[str, str | None]]:
        return [(r.status, r.moved_to) for r in Validator(here.conn, here.scope).validate(item, there.scope.key).refs]

    assert from_here() == [("moved", "lib/uno.py")]
    Repo(feat).git("mv", "lib/uno.py", "lib/dos.py")
    there.refresh()
    assert from_here() == [("moved", "lib/dos.py")]


def test_a_pass_judges_each_reference_once_however_many_items_name_it(
    repo: Repo, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within one pass a (scope, path, recorded HEAD) is judged once and the verdict reused for every item naming
    it: two memories of `src/app.py` cost one look at the file."""
    repo.write("src/app.py", "x = 1\n")
    repo.commit("app")
    engine = make_engine(repo.path)
    items = [engine.note("decision", f"the app starts in src/app.py, reason {n}", f"start {n}").item_id for n in (1, 2)]
    looked: list[str] = []
    real_isfile = os.path.isfile

    def isfile(path: str) -> bool:
        looked.append(path)
        return real_isfile(path)

    monkeypatch.setattr(os.path, "isfile", isfile)
    found = Validator(engine.conn, engine.scope).validate_many([(item, engine.scope.key) for item in items])
    assert [[r.status for r in found[item].refs] for item in items] == [["exists"], ["exists"]]
    assert [p for p in looked if p.endswith("app.py")] == [os.path.join(engine.scope.worktree, "src/app.py")]
