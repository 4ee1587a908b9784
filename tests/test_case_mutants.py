"""The case-only mutants the runner's old SQL rule excused: the behaviours no other test reached.

The old rule counted any mutant that only changed a string's case as equivalent when its line held an SQL word;
a quoted value inside a statement is not case-free (SQLite compares it byte for byte). Each test here failed
against the mutant it names.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex_engine.base import settings
from cortex_engine.engine import Engine

from .conftest import GIT_ENV, Clock, Repo
from .test_sharing import FOLDER, commit_as, decision

Open = Callable[..., Engine]


def test_a_shared_decision_synced_on_a_branch_is_not_promoted_from_it(
    repo: Repo, make_engine: Open, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`merges._candidates`: a decision file reaches every branch from the repository itself, so the copy a
    branch synced is no candidate for promotion (`origin IS NOT 'shared'`, a quoted value: case matters)."""
    settings.write_review_arrivals("none")
    repo.git("checkout", "-q", "-b", "feature/x")
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq")})
    feature = make_engine(repo.path)
    assert feature.sync_shared().added == (f"{FOLDER}/0001-q.md",)
    clock.advance(minutes=1)
    feature.note("decision", "cache the tokens", "feature/x")
    feature.flush_spool()
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)
    assert [p.content for p in main.promote("feature/x", dry_run=True)] == ["cache the tokens"]


def test_a_note_promoted_out_of_a_branch_is_never_promoted_back_into_it(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """`merges._candidates`: a promotion's copy counts as the note its chain started from, and never goes back
    into the scope it started in, even when nothing else marks it as seen."""
    main = make_engine(repo.path)
    main.note("decision", "use jwt tokens for the api", "auth")
    main.flush_spool()
    repo.git("checkout", "-q", "-b", "feature/a")
    clock.advance(minutes=1)
    feature = make_engine(repo.path)
    assert [p.content for p in feature.promote("main")] == ["use jwt tokens for the api"]
    repo.git("checkout", "-q", "main")
    assert make_engine(repo.path).promote("feature/a", dry_run=True) == []


def test_a_promotion_skips_what_came_over_already_and_still_takes_what_follows(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """`merges._candidates`: a note already promoted is passed over, not the end of the branch's notes."""
    repo.git("checkout", "-q", "-b", "feature/a")
    feature = make_engine(repo.path)
    feature.note("decision", "use jwt tokens for the api", "auth")
    feature.flush_spool()
    repo.git("checkout", "-q", "main")
    assert [p.content for p in make_engine(repo.path).promote("feature/a")] == ["use jwt tokens for the api"]
    repo.git("checkout", "-q", "feature/a")
    clock.advance(minutes=1)
    feature = make_engine(repo.path)
    feature.note("decision", "keep the sessions in redis", "sessions")
    feature.flush_spool()
    repo.git("checkout", "-q", "main")
    assert [p.content for p in make_engine(repo.path).promote("feature/a", dry_run=True)] == [
        "keep the sessions in redis"
    ]


def test_a_merge_check_takes_nothing_from_its_own_branch_s_scope_in_another_worktree(
    repo: Repo, make_engine: Open, clock: Clock, tmp_path: Path
) -> None:
    """`merges._candidates`: the notes another worktree wrote on this same branch are this branch's already
    (a recall of the branch reads them); a merge check does not promote them as a merged branch's."""
    other = tmp_path / "other"
    repo.git("checkout", "-q", "-b", "side")
    repo.git("worktree", "add", "-q", str(other), "main")
    there = make_engine(other)
    there.note("decision", "use jwt tokens for the api", "auth")
    there.flush_spool()
    subprocess.run(["git", "-C", str(other), "checkout", "-q", "--detach"], check=True, env=GIT_ENV)
    repo.git("checkout", "-q", "main")
    clock.advance(minutes=1)
    here = make_engine(repo.path)
    assert here.scope.key != there.scope.key
    assert here.check_merges(force=True).promoted == ()
    repo.write("next.py", "x = 1\n")  # HEAD moves on: the branch's own tip is then newly "merged" into it
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "next")
    clock.advance(minutes=1)
    moved = make_engine(repo.path)
    check = moved.check_merges()
    assert (check.ran, check.promoted) == (True, ())


def test_a_merge_of_two_branches_that_hold_one_note_and_its_promoted_copy_brings_it_once(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """`merges._candidates`: a note and the copy a promotion made of it on another branch are one candidate."""
    main = make_engine(repo.path)
    assert main.check_merges(force=True).promoted == ()
    repo.git("checkout", "-q", "-b", "feature/b")
    repo.write("b.py", "b = 1\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "b")
    clock.advance(minutes=1)
    b = make_engine(repo.path)
    b.note("decision", "use jwt tokens for the api", "auth")
    b.flush_spool()
    repo.git("checkout", "-q", "-b", "feature/a")
    repo.write("a.py", "a = 1\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "a")
    clock.advance(minutes=1)
    a = make_engine(repo.path)
    assert [p.content for p in a.promote("feature/b")] == ["use jwt tokens for the api"]
    a.flush_spool()
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge a", "feature/a")
    clock.advance(minutes=1)
    check = make_engine(repo.path).check_merges()
    assert [p.content for p in check.promoted] == ["use jwt tokens for the api"]
