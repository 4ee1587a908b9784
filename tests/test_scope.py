"""Scope keys from git: branch, detached HEAD, worktrees, unborn repositories, no git at all."""

from __future__ import annotations

from pathlib import Path

from cortex_engine.scope.identity import detect_scope, normalize_scope_path

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
