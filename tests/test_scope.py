"""Scope keys from git: branch, detached HEAD, worktrees, unborn repositories, no git at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cortex_engine.scope.identity import detect_scope, normalize_scope_path, scope_key_oid
from cortex_engine.store.redact import clean_text

from .conftest import Repo, git


def test_branch_scope(repo: Repo) -> None:
    """On a branch the key carries the common dir, the worktree and the branch ref."""
    scope = detect_scope(str(repo.path))
    root = normalize_scope_path(str(repo.path / ".git"))
    assert scope.type == "branch"
    assert scope.key == f"branch:{root}:{normalize_scope_path(str(repo.path))}:main"
    assert scope.label == "main"
    assert scope.head_oid == repo.git("rev-parse", "HEAD").strip()


def test_branch_with_slash_and_subdirectory(repo: Repo) -> None:
    """A subdirectory has its worktree's scope; branch names keep their slashes and case."""
    repo.git("checkout", "-q", "-b", "Feature/Auth")
    sub = repo.write("src/a/b.py").parent
    scope = detect_scope(str(sub))
    assert scope.key.endswith(":Feature/Auth")
    assert scope.worktree == str(repo.path.resolve())


def test_detached_head(repo: Repo) -> None:
    """A detached HEAD is keyed by its full object id."""
    oid = repo.git("rev-parse", "HEAD").strip()
    repo.git("checkout", "-q", "--detach")
    scope = detect_scope(str(repo.path))
    assert scope.type == "detached"
    assert scope.key.endswith(f":{oid}")
    assert scope.label == f"detached@{oid[:7]}"


def test_linked_worktree_has_its_own_key(repo: Repo, tmp_path: Path) -> None:
    """Two worktrees of one repository share the common dir but not the scope key."""
    linked = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "feature", str(linked))
    main, other = detect_scope(str(repo.path)), detect_scope(str(linked))
    assert main.git_root == other.git_root
    assert main.key != other.key
    assert other.key.endswith(":feature")


def test_packed_ref_head_resolves(repo: Repo) -> None:
    """HEAD resolves through packed-refs after `git pack-refs`."""
    repo.git("pack-refs", "--all")
    assert detect_scope(str(repo.path)).head_oid == repo.git("rev-parse", "HEAD").strip()


def test_outside_git_is_project_scope(tmp_path: Path) -> None:
    """No repository → project scope keyed by the directory."""
    plain = tmp_path / "Plain Dir"
    plain.mkdir()
    scope = detect_scope(str(plain))
    assert scope.type == "project"
    assert scope.key == f"project:{normalize_scope_path(str(plain))}"


def test_unborn_branch_is_branch_scope(tmp_path: Path) -> None:
    """A repository with no commits but a branch name is scoped to that branch."""
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "trunk")
    scope = detect_scope(str(fresh))
    assert scope.type == "branch"
    assert scope.branch == "trunk"
    assert scope.head_oid is None


def test_branches_storing_would_confuse_keep_their_own_scopes(repo: Repo, make_engine: Any) -> None:
    """`featx` never sees `feat\\u200bx`'s notes, nor `fix/token=bbbb…` those of `fix/token=aaaa…`
    (storing cleans both pairs to one string); a plain branch's key is the one old stores hold."""
    main = detect_scope(str(repo.path))
    assert (
        main.key
        == f"branch:{normalize_scope_path(str(repo.path / '.git'))}:{normalize_scope_path(str(repo.path))}:main"
    )
    pairs = [("feat\u200bx", "featx"), ("fix/token=" + "a" * 24, "fix/token=" + "b" * 24)]
    keys = set()
    for first, second in pairs:
        for branch in (first, second):  # each forks main with a commit of its own: neither holds the other merged
            git(repo.path, "checkout", "-q", "main")
            git(repo.path, "checkout", "-q", "-b", branch)
            repo.write(f"own_{len(keys)}_{branch == first}.txt")
            repo.commit("own")
        git(repo.path, "checkout", "-q", first)
        make_engine(repo.path).note("decision", f"walrus plan for {first[:3]} is secret", f"plan {first[:3]}")
        git(repo.path, "checkout", "-q", second)
        engine = make_engine(repo.path)
        assert "walrus plan for" not in engine.recall("walrus plan").text, (first, second)
        keys |= {engine.scope.key, detect_scope(str(repo.path)).key}
        git(repo.path, "checkout", "-q", first)
        keys.add(detect_scope(str(repo.path)).key)
        assert f"walrus plan for {first[:3]}" in make_engine(repo.path).recall("walrus plan").text
    assert len(keys) == 4 and all(clean_text(k) == k for k in keys), keys


def test_a_detached_key_that_is_not_a_commit_id_names_no_commit() -> None:
    """An imported scope `detached:…:--output=/x` never reaches git as an option."""
    assert scope_key_oid("detached:/r/.git:/r:--output=/tmp/x") is None
    assert scope_key_oid("detached:/r/.git:/r:" + "ab" * 20) == "ab" * 20
