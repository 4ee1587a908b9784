"""Memory follows merges: merged branches' notes come home, labelled, with the note rules applied.

Real git repositories throughout; `promote` and `branches` also through the real `cortex` command line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex_engine.base import settings
from cortex_engine.base.errors import InvalidInput, NotFound
from cortex_engine.engine import Engine
from cortex_engine.memory import merges
from cortex_engine.scope.identity import Scope

from .conftest import GIT_ENV, Clock, Repo
from .test_cli import cortex
from .test_sharing import FOLDER, commit_as, decision

Open = Callable[..., Engine]


def on(repo: Repo, make_engine: Open, branch: str, *, create: bool = False, at: str | None = None) -> Engine:
    """Check out `branch` (creating it, at `at` if given) and open an engine on it."""
    repo.git("checkout", "-q", *(["-b"] if create else []), branch, *([at] if at else []))
    return make_engine(repo.path)


def feature_with(repo: Repo, make_engine: Open, clock: Clock, *notes: tuple[str, str, str], commits: int = 1) -> None:
    """Branch feature/auth off main, write (kind, subject, text) notes there, commit, and go back to main."""
    eng = on(repo, make_engine, "feature/auth", create=True)
    for kind, subject, text in notes:
        clock.advance(minutes=1)
        eng.note(kind, text, subject)
    for n in range(commits):
        repo.write(f"auth{n}.py", f"token = {n}\n")
        repo.commit(f"auth step {n}")
    make_engine(repo.path).flush_spool()  # the Stop hook's flush: the branch's HEAD is recorded
    repo.git("checkout", "-q", "main")


def active(eng: Engine, subject: str) -> list[tuple[str, str, int, str | None]]:
    """(content, status, conflict, origin) of this scope's notes on a subject, oldest first."""
    rows = eng.conn.execute(
        "SELECT content, status, conflict, origin FROM scoped_notes "
        "WHERE scope_key=? AND subject=? ORDER BY timestamp, rowid",
        (eng.scope.key, subject),
    ).fetchall()
    return [tuple(r) for r in rows]


def test_a_branch_scope_git_cannot_place_is_never_checked(repo: Repo, make_engine: Open) -> None:
    """Without a HEAD, or without the repository it lives in, a branch scope has nothing to compare: the check does
    not run (nothing recorded), even when forced."""
    eng = make_engine(repo.path)
    assert eng.scope.type == "branch" and eng.scope.head_oid and eng.scope.git_root
    s = eng.scope
    no_root = Scope(s.type, s.key, s.worktree, None, s.branch, s.head_oid, s.git_dir)
    assert merges.check(eng.conn, no_root, eng.now(), force=True) == merges.MergeCheck(False, eng.scope.head_oid)
    unborn = Scope(s.type, s.key, s.worktree, s.git_root, s.branch, None, s.git_dir)
    assert merges.check(eng.conn, unborn, eng.now(), force=True) == merges.MergeCheck(False, None)
    assert eng.conn.execute("SELECT count(*) FROM scope_heads").fetchone()[0] == 0


def test_merge_commit_brings_notes_home_labelled(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """A --no-ff merge: the branch's decision shows on main with `(from feature/auth)` in text and --json labels."""
    feature_with(repo, make_engine, clock, ("decision", "auth", "use jwt tokens for the api"))
    main = make_engine(repo.path)
    assert main.check_merges().promoted == ()
    repo.git("merge", "-q", "--no-ff", "feature/auth", "-m", "merge auth")
    main = make_engine(repo.path)
    done = main.check_merges()
    assert done.merged == {"feature/auth": "ancestor"} and len(done.promoted) == 1
    surface = main.recall("jwt tokens")
    assert "use jwt tokens for the api (from feature/auth)" in surface.text
    assert surface.to_dict()["items"][0]["labels"] == ["from feature/auth"]
    assert "(from feature/auth)" in main.state().text


def test_fast_forward_merge(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """A fast-forward merge makes the tip HEAD itself: promoted at the next flush."""
    feature_with(repo, make_engine, clock, ("insight", None, "the token cache expires hourly"))
    repo.git("merge", "-q", "--ff-only", "feature/auth")
    main = make_engine(repo.path)
    main.flush_spool()
    assert "(from feature/auth)" in main.recall("token cache expires").text


def test_unmerged_branch_is_never_promoted(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """HEAD moved on main, but feature/auth was not merged: nothing comes over."""
    feature_with(repo, make_engine, clock, ("decision", "auth", "use jwt tokens for the api"))
    repo.write("other.py")
    repo.commit("unrelated")
    main = make_engine(repo.path)
    done = main.check_merges()
    assert done.ran and done.promoted == () and done.merged == {}
    assert main.recall("jwt tokens").items == []


def test_squash_merge_of_one_commit_is_detected_by_git_cherry(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """`git merge --squash` of a one-commit branch leaves no ancestry, but `git cherry` sees the patch upstream."""
    feature_with(repo, make_engine, clock, ("decision", "auth", "use jwt tokens for the api"))
    repo.git("merge", "-q", "--squash", "feature/auth")
    repo.commit("squashed auth")
    main = make_engine(repo.path)
    done = main.check_merges()
    assert done.merged == {"feature/auth": "cherry"}
    assert [n[0] for n in active(main, "auth")] == ["use jwt tokens for the api"]


def test_squash_merge_promoted_by_hand_through_the_cli(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """A multi-commit squash is invisible to git: `cortex promote --from` does it, --dry-run writes nothing."""
    feature_with(repo, make_engine, clock, ("decision", "auth", "use jwt tokens for the api"), commits=2)
    repo.git("merge", "-q", "--squash", "feature/auth")
    repo.commit("squashed auth")
    main = make_engine(repo.path)
    assert main.check_merges().promoted == ()
    dry = cortex(repo.path, "promote", "--from", "feature/auth", "--dry-run", "--json")
    assert dry.code == 0, dry.err
    assert [p["content"] for p in dry.data()["promoted"]] == ["use jwt tokens for the api"]
    assert dry.data()["promoted"][0]["note_id"] is None
    assert active(main, "auth") == []
    run = cortex(repo.path, "promote", "--from", "feature/auth")
    assert run.code == 0 and "Promoted 1 note from feature/auth" in run.out
    assert active(main, "auth") == [("use jwt tokens for the api", "active", 0, "from feature/auth")]
    again = cortex(repo.path, "promote", "--from", "feature/auth")
    assert again.code == 0 and "Nothing to promote" in again.out
    assert len(active(main, "auth")) == 1
    missing = cortex(repo.path, "promote", "--from", "no-such-branch")
    assert missing.code == 1 and missing.err.startswith("cortex: No memory of branch")
    usage = cortex(repo.path, "promote")
    assert usage.code == 2


def test_rebased_feature_branch_then_merged(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """The branch is rebased onto a moved main, then fast-forwarded (its recorded HEAD is pre-rebase)."""
    feature_with(repo, make_engine, clock, ("decision", "auth", "use jwt tokens for the api"), commits=2)
    repo.write("main.py")
    repo.commit("main moves on")
    repo.git("checkout", "-q", "feature/auth")
    repo.git("rebase", "-q", "main")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--ff-only", "feature/auth")
    repo.git("branch", "-q", "-D", "feature/auth")  # only the pre-rebase HEAD recorded for its scope is left
    main = make_engine(repo.path)
    done = main.check_merges()
    assert done.merged == {"feature/auth": "cherry"}
    assert len(active(main, "auth")) == 1


def test_merged_decision_contests_one_on_main(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """Opposing decisions on one subject: both `[contested]` on main after the merge, nothing retired."""
    main = make_engine(repo.path)
    main.note("decision", "use redis for the session cache", "cache")
    feature_with(repo, make_engine, clock, ("decision", "cache", "do not use redis for the session cache"))
    repo.git("merge", "-q", "--no-ff", "feature/auth", "-m", "merge")
    main = make_engine(repo.path)
    main.check_merges()
    assert [(n[1], n[2]) for n in active(main, "cache")] == [("active", 1), ("active", 1)]
    text = main.recall("redis session cache").text
    assert "use redis for the session cache [contested]" in text
    assert "do not use redis for the session cache [contested] (from feature/auth)" in text
    assert main.contests()[0]["subject"] == "cache"


def test_newer_merged_decision_supersedes_older_on_main(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """Timestamp order: a newer merged decision supersedes main's; an older one arrives superseded."""
    main = make_engine(repo.path)
    main.note("decision", "store sessions in sqlite", "sessions")
    feature_with(
        repo,
        make_engine,
        clock,
        ("decision", "sessions", "store sessions in postgres"),
        ("decision", "queue", "run the queue on celery"),
    )
    clock.advance(minutes=5)
    make_engine(repo.path).note("decision", "run the queue on rq", "queue")
    repo.git("merge", "-q", "--no-ff", "feature/auth", "-m", "merge")
    main = make_engine(repo.path)
    main.check_merges()
    assert [(n[0], n[1]) for n in active(main, "sessions")] == [
        ("store sessions in sqlite", "superseded"),
        ("store sessions in postgres", "active"),
    ]
    assert [(n[0], n[1]) for n in active(main, "queue")] == [
        ("run the queue on celery", "superseded"),
        ("run the queue on rq", "active"),
    ]
    assert "store sessions in sqlite (superseded)" in main.recall("store sessions sqlite postgres").text


def test_rerunning_the_check_is_idempotent(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """A forced re-check, a later HEAD move and a second merge of the same notes copy nothing twice."""
    feature_with(repo, make_engine, clock, ("decision", "auth", "use jwt tokens for the api"))
    repo.git("merge", "-q", "--no-ff", "feature/auth", "-m", "merge")
    main = make_engine(repo.path)
    assert len(main.check_merges().promoted) == 1
    assert main.check_merges().ran is False
    assert main.check_merges(force=True).promoted == ()
    repo.write("later.py")
    repo.commit("later")
    assert make_engine(repo.path).check_merges().promoted == ()
    assert len(active(main, "auth")) == 1
    assert main.conn.execute("SELECT COUNT(*) FROM promotions").fetchone()[0] == 1


def test_chain_of_merges_promotes_each_note_once(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """feature/b merged into feature/auth, both into main: b's note arrives once, still labelled with b."""
    main = make_engine(repo.path)
    repo.git("checkout", "-q", "-b", "feature/b")
    make_engine(repo.path).note("insight", "the b service retries twice")
    repo.commit("b")
    feature_with(repo, make_engine, clock, ("insight", None, "the auth service retries thrice"))
    repo.git("checkout", "-q", "feature/auth")
    repo.git("merge", "-q", "--no-ff", "feature/b", "-m", "b into auth")
    make_engine(repo.path).check_merges()
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "feature/auth", "-m", "auth into main")
    main = make_engine(repo.path)
    main.check_merges()
    rows = main.conn.execute(
        "SELECT content, origin FROM scoped_notes WHERE scope_key=? ORDER BY content", (main.scope.key,)
    )
    assert [tuple(r) for r in rows] == [
        ("the auth service retries thrice", "from feature/auth"),
        ("the b service retries twice", "from feature/b"),
    ]


def test_deleted_branch_memory_reachable_but_never_injected(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """An abandoned, deleted branch: not in main's brief or recall; reachable by --scope and the all-scopes list."""
    main = make_engine(repo.path)
    main.note("decision", "use postgres for storage", "storage")
    feature_with(repo, make_engine, clock, ("decision", "spike", "try the zeppelin rendering engine"))
    repo.git("branch", "-q", "-D", "feature/auth")
    repo.write("x.py")
    repo.commit("main moves")
    main = make_engine(repo.path)
    main.start_session()
    assert "zeppelin" not in main.session_brief(book=False).text
    assert main.recall("zeppelin rendering engine").items == []
    run = cortex(repo.path, "recall", "zeppelin", "rendering", "--scope", "feature/auth")
    assert run.code == 0, run.err
    assert run.out.startswith("From scope feature/auth (not this branch; read only when asked):")
    assert "try the zeppelin rendering engine" in run.out
    everything = main.list_memory(scopes=None, kinds=["note:decision"])
    assert any("zeppelin" in str(i["text"]) for i in everything.items)
    listed = cortex(repo.path, "branches", "--json")
    assert listed.code == 0, listed.err
    by_label = {s["label"]: s for s in listed.data()["scopes"]}
    assert by_label["feature/auth"]["exists_in_git"] is False
    assert by_label["feature/auth"]["notes"] == 1 and by_label["feature/auth"]["merged_into"] == []
    assert by_label["main"]["current"] is True and by_label["main"]["exists_in_git"] is True
    assert cortex(repo.path, "recall", "x", "--scope", "nowhere").code == 1


def test_branches_lists_contests_and_merged_into(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """`cortex branches` (text): the merged branch says where it went; main counts its open contest."""
    make_engine(repo.path).note("decision", "use redis for the session cache", "cache")
    feature_with(repo, make_engine, clock, ("decision", "cache", "do not use redis for the session cache"))
    repo.git("merge", "-q", "--no-ff", "feature/auth", "-m", "merge")
    make_engine(repo.path).check_merges()
    run = cortex(repo.path, "branches")
    assert run.code == 0, run.err
    lines = {line.split()[1] if line.startswith("*") else line.split()[0]: line for line in run.out.splitlines()[1:]}
    assert lines["feature/auth"].split()[1:3] == ["1", "0"] and lines["feature/auth"].rstrip().endswith("main")
    assert lines["main"].split()[2:4] == ["2", "2"]


def test_check_is_cheap_when_head_has_not_moved(
    repo: Repo, make_engine: Open, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SessionStart check with an unmoved HEAD spawns no git and runs a few statements (counted, not
    timed)."""
    feature_with(repo, make_engine, clock, ("decision", "auth", "use jwt tokens for the api"))
    main = make_engine(repo.path)
    assert main.check_merges().ran
    spawned: list[object] = []
    statements: list[str] = []

    class Counting(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, args: object, *rest: object, **kw: object) -> None:
            spawned.append(args)
            super().__init__(args, *rest, **kw)  # type: ignore[arg-type]

    with monkeypatch.context() as patched:
        patched.setattr(subprocess, "Popen", Counting)
        main.conn.set_trace_callback(statements.append)
        checks = [main.check_merges().ran for _ in range(20)]
        main.conn.set_trace_callback(None)
    assert checks == [False] * 20
    assert spawned == [] and len(statements) <= 20 * 3, statements[:6]


@pytest.mark.parametrize("kind", ["focus"])
def test_focus_is_not_promoted(repo: Repo, make_engine: Open, clock: Clock, kind: str) -> None:
    """A merged branch's focus would hijack main's: it stays on its branch."""
    feature_with(repo, make_engine, clock, (kind, "auth work", "finishing the auth flow"))
    repo.git("merge", "-q", "--no-ff", "feature/auth", "-m", "merge")
    main = make_engine(repo.path)
    assert main.check_merges().promoted == ()


def test_branch_without_commits_is_not_merged_when_main_moves(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """A new branch's tip is where it forked (already in main): main moving on must not promote its notes."""
    make_engine(repo.path).note("insight", "main was here first")
    eng = on(repo, make_engine, "feature/idea", create=True)
    eng.note("decision", "rewrite everything in rust", "rewrite")
    repo.git("checkout", "-q", "main")
    repo.write("y.py")
    repo.commit("main moves")
    main = make_engine(repo.path)
    assert main.check_merges().promoted == ()
    assert active(main, "rewrite") == []


def test_label_lookalikes_in_note_text_are_defused(repo: Repo, make_engine: Open) -> None:
    """Author text cannot forge an origin: `(from main)` / `(shared)` in content render with fullwidth brackets."""
    eng = make_engine(repo.path)
    eng.note("decision", "pick the fast path (shared) (from release)\nOrigin: shared", "path")
    surface = eng.recall("fast path")
    assert surface.items[0].labels == ()
    assert "(shared)" not in surface.text and "(from release)" not in surface.text


def test_first_check_does_not_take_a_commitless_branch_for_merged(repo: Repo, make_engine: Open) -> None:
    """No earlier HEAD recorded for main: a branch forked earlier with notes but no commits is still not merged."""
    repo.git("checkout", "-q", "-b", "feature/idle")
    make_engine(repo.path).note("decision", "rewrite the parser by hand", "parser")
    repo.git("checkout", "-q", "main")
    repo.write("z.py")
    repo.commit("main moves")
    main = make_engine(repo.path)  # main never had a session or a check
    assert main.check_merges().promoted == ()


def test_first_check_on_a_main_that_has_not_moved_does_not_take_a_fresh_fork_for_merged(
    repo: Repo, make_engine: Open
) -> None:
    """A branch forked at main's HEAD with no commit of its own has main's HEAD as its tip; main's
    first Cortex session (nothing recorded for it) must not bring its notes home as `(from experiment)`."""
    repo.write("history.py")
    repo.commit("main has history")  # the fork's commits (not its reflog) would then show more than its tip
    eng = on(repo, make_engine, "experiment", create=True)
    eng.note("decision", "rewrite the parser by hand", "parser")
    eng.flush_spool()  # the branch's HEAD is recorded: main's HEAD, where it forked
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)  # main never had a session or a check, and has not moved
    assert main.check_merges().promoted == ()
    assert active(main, "parser") == []
    assert "(from experiment)" not in main.recall("parser by hand").text


def test_a_cherry_picked_hotfix_does_not_merge_the_branch_it_came_from(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """The branch's hotfix commit was cherry-picked to main, its work-in-progress commit was not: one patch-id
    upstream is not a merge, so nothing comes home (treating any match as a merge passed)."""
    feature_with(repo, make_engine, clock, ("decision", "auth", "use jwt tokens for the api"), commits=2)
    repo.write("main.py")
    repo.commit("main moves on")
    repo.git("cherry-pick", repo.git("rev-parse", "feature/auth~1").strip())
    assert repo.git("cherry", "HEAD", "feature/auth").split() == [
        "-",
        repo.git("rev-parse", "feature/auth~1").strip(),
        "+",
        repo.git("rev-parse", "feature/auth").strip(),
    ]
    main = make_engine(repo.path)
    done = main.check_merges()
    assert (done.merged, done.promoted) == ({}, ())
    assert active(main, "auth") == []


def test_first_check_takes_a_fast_forward_for_merged_by_the_branch_reflog(repo: Repo, make_engine: Open) -> None:
    """The branch's only session saw its tip (the note came after the commit), so nothing the store recorded
    tells a fast-forward from a fresh fork: the branch's reflog does (it was created at main, then committed)."""
    repo.git("checkout", "-q", "-b", "feature/ff")
    repo.write("ff.py")
    repo.commit("ff work")
    eng = make_engine(repo.path)
    eng.note("decision", "serve the ff endpoint over http2", "ff endpoint")
    eng.flush_spool()
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--ff-only", "feature/ff")
    main = make_engine(repo.path)  # main's first check, HEAD is the branch's tip
    assert main.check_merges().merged == {"feature/ff": "ancestor"}
    assert [n[3] for n in active(main, "ff endpoint")] == ["from feature/ff"]


# -- the same rules in process, on histories shaped so that each git argument matters ----------------------------------


def head(repo: Repo, rev: str = "HEAD") -> str:
    return repo.git("rev-parse", rev).strip()


def origins(eng: Engine) -> list[tuple[str, str | None]]:
    """(content, origin) of every note of this scope, oldest first."""
    rows = eng.conn.execute(
        "SELECT content, origin FROM scoped_notes WHERE scope_key=? ORDER BY timestamp, rowid", (eng.scope.key,)
    )
    return [(r[0], r[1]) for r in rows]


def branch_note(
    repo: Repo,
    make_engine: Open,
    clock: Clock,
    branch: str,
    text: str,
    *,
    create: bool = True,
    at: str | None = None,
    flush: bool = True,
    alternatives: list[str] | None = None,
) -> Engine:
    """On `branch`, one decision (subject = the branch) and, with `flush`, its HEAD recorded; stays there."""
    eng = on(repo, make_engine, branch, create=create, at=at)
    clock.advance(minutes=1)
    eng.note("decision", text, branch, alternatives)
    if flush:
        eng.flush_spool()
    return eng


def noted_worked_merged(repo: Repo, make_engine: Open, clock: Clock, branch: str, text: str) -> None:
    """A decision on `branch`, then a commit of its own there, then `branch` merged into main (--no-ff); on main."""
    branch_note(repo, make_engine, clock, branch, text)
    name = branch.rsplit("/", 1)[-1]
    repo.write(f"{name}.py")
    repo.commit(f"{name} work")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", branch, "-m", f"merge {name}")


def main_merged_into_feature(repo: Repo, make_engine: Open, clock: Clock) -> merges.MergeCheck:
    """A note and a commit on `feature` (checked there), then a decision and a commit on main, then main merged
    into feature (--no-ff); on feature. Returns feature's check before the merge."""
    branch_note(repo, make_engine, clock, "feature", "feature's own idea", flush=False)
    repo.write("feature.py")
    repo.commit("feature work")
    checked = make_engine(repo.path).check_merges()
    repo.git("checkout", "-q", "main")
    clock.advance(minutes=1)
    make_engine(repo.path).note("decision", "main's own rule", "rules")
    repo.write("main.py")
    repo.commit("main work")
    repo.git("checkout", "-q", "feature")
    repo.git("merge", "-q", "--no-ff", "main", "-m", "main into feature")
    return checked


def empty_commits(repo: Repo, count: int, ref: str = "refs/heads/main") -> None:
    """`count` empty commits on top of `ref`, through one `git fast-import` (thousands in a second)."""
    start = int(time.time()) + 60
    stream = [f"reset {ref}\nfrom {head(repo, ref)}\n"]
    for n in range(count):
        stream.append(f"commit {ref}\ncommitter Test <test@example.invalid> {start + n} +0000\ndata 5\nempty\n\n")
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=repo.path,
        input="".join(stream),
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )


def fake_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    """A `git` first on PATH running `body` (sh) with `$REAL` set to the real git; returns its log file."""
    real = shutil.which("git")
    assert real is not None
    fake = tmp_path / "fakebin"
    fake.mkdir()
    log = tmp_path / "git.log"
    (fake / "git").write_text(f'#!/bin/sh\nREAL="{real}"\nLOG="{log}"\n{body}\n')
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    return log


# -- which commits `git cherry` weighs ---------------------------------------------------------------------------


def test_a_branch_whose_commit_picked_an_old_main_commit_is_not_merged_when_main_moves_on(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """Only the upstream commits since main's last check can have merged a branch: a branch whose one commit is a
    cherry-pick of a hotfix main had long before is not merged by it when main later moves on."""
    fork = head(repo)
    main = make_engine(repo.path)
    main.check_merges()
    repo.write("hotfix.py", "fixed = True\n")
    repo.commit("hotfix")
    hotfix = head(repo)
    assert make_engine(repo.path).check_merges().merged == {}
    eng = branch_note(repo, make_engine, clock, "backport", "ship the backport on friday", at=fork, flush=False)
    repo.git("cherry-pick", "-x", hotfix)
    eng.flush_spool()
    repo.git("checkout", "-q", "main")
    repo.write("later.py")
    repo.commit("main moves on")
    done = make_engine(repo.path).check_merges()
    assert (done.ran, done.merged, done.promoted) == (True, {}, ())


def test_a_branch_whose_tip_alone_was_cherry_picked_is_not_merged(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """Every commit of the branch back to where it forked must be upstream, not only its tip."""
    branch_note(repo, make_engine, clock, "feature/two", "split the parser in two", flush=False)
    repo.write("one.py")
    repo.commit("first step")
    repo.write("two.py")
    repo.commit("second step")
    make_engine(repo.path).flush_spool()
    tip = head(repo)
    repo.git("checkout", "-q", "main")
    repo.git("cherry-pick", "-x", tip)
    done = make_engine(repo.path).check_merges()
    assert (done.merged, done.promoted) == ({}, ())


@pytest.mark.parametrize(("newer", "merged"), [(4999, {"feature/old": "cherry"}), (5000, {})])
def test_a_first_check_looks_for_a_branch_s_patches_in_the_newest_5000_upstream_commits(
    repo: Repo, make_engine: Open, clock: Clock, newer: int, merged: dict[str, str]
) -> None:
    """On a first check the upstream commits the branches lack are read newest first, at most UPSTREAM_COMMITS:
    a pick that is the 5000th of them is found, the 5001st is not."""
    fork = head(repo)
    branch_note(repo, make_engine, clock, "feature/old", "keep the old importer", flush=False)
    repo.write("old.py", "importer = 'old'\n")
    repo.commit("old importer")
    make_engine(repo.path).flush_spool()
    picked = head(repo)
    repo.git("checkout", "-q", "main")
    repo.git("cherry-pick", "-x", picked)
    empty_commits(repo, newer)
    assert fork != head(repo) and merges.UPSTREAM_COMMITS == 5000
    assert make_engine(repo.path).check_merges().merged == merged


def test_a_user_s_git_config_does_not_change_what_merge_detection_reads(
    repo: Repo, make_engine: Open, clock: Clock, isolated_home: Path
) -> None:
    """`format.pretty`, `log.decorate`, `log.abbrevCommit`, `color.ui=always` and `diff.noprefix` in the user's
    config change what a plain `git log` prints; a squash merge after other work on main is still recognised."""
    branch_note(repo, make_engine, clock, "feature/sq", "squash this feature", flush=False)
    repo.write("sq.py", "squashed = 1\n")
    repo.commit("sq work")
    make_engine(repo.path).flush_spool()
    repo.git("checkout", "-q", "main")
    make_engine(repo.path).check_merges()
    repo.write("unrelated.py")
    repo.commit("unrelated work first")  # upstream since the check: the squash and, before it, this
    repo.git("merge", "-q", "--squash", "feature/sq")
    repo.commit("squashed sq")
    (isolated_home / ".gitconfig").write_text(
        "[format]\n\tpretty = format:%s\n[log]\n\tdecorate = full\n\tabbrevCommit = true\n\tshowSignature = true\n"
        "[color]\n\tui = always\n[diff]\n\tnoprefix = true\n\tmnemonicPrefix = true\n",
        encoding="utf-8",
    )
    assert repo.git("log", "-1").strip() == "squashed sq"  # the config is read
    done = make_engine(repo.path).check_merges()
    assert done.merged == {"feature/sq": "cherry"}
    assert [p.content for p in done.promoted] == ["squash this feature"]
    assert [r[0] for r in make_engine(repo.path).conn.execute("SELECT how FROM promotions")] == ["cherry"]


# -- which tip a branch is judged by ------------------------------------------------------------------------------


def test_a_live_branch_is_judged_by_its_tip_not_by_the_head_recorded_before_it_moved(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """The branch's HEAD was recorded where it forked, then it committed without a session: merged, it is found
    by its live tip (the recorded one is main's old HEAD, which proves nothing)."""
    make_engine(repo.path).check_merges()
    noted_worked_merged(repo, make_engine, clock, "feature/late", "commit after the note")
    main = make_engine(repo.path)
    done = main.check_merges()
    assert done.merged == {"feature/late": "ancestor"}
    assert [r[0] for r in main.conn.execute("SELECT how FROM promotions")] == ["ancestor"]


def test_a_branch_deleted_after_its_merge_is_judged_by_the_tip_an_earlier_check_saw(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """A check remembers each live candidate's tip: once the merged branch is deleted, that tip (not the older
    HEAD its session recorded) shows it merged."""
    make_engine(repo.path).check_merges()
    branch_note(repo, make_engine, clock, "feature/gone", "remember the tip")
    repo.write("gone.py")
    repo.commit("gone work")
    repo.git("checkout", "-q", "main")
    repo.write("main.py")
    repo.commit("main moves")
    assert make_engine(repo.path).check_merges().merged == {}  # not merged yet: its live tip is remembered
    repo.git("merge", "-q", "--no-ff", "feature/gone", "-m", "merge gone")
    repo.git("branch", "-q", "-D", "feature/gone")
    done = make_engine(repo.path).check_merges()
    assert done.merged == {"feature/gone": "ancestor"}
    assert origins(make_engine(repo.path))[-1] == ("remember the tip", "from feature/gone")


def test_a_recorded_tip_git_has_pruned_is_no_merge_and_the_others_are_still_judged(
    repo: Repo,
    make_engine: Open,
    clock: Clock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """One deleted branch's recorded tip is gone from the object store (pruned): the batched ancestry read fails,
    each tip is asked alone, the merged deleted branch is still found, the pruned one neither merged nor a crash."""
    make_engine(repo.path).check_merges()
    branch_note(repo, make_engine, clock, "spike", "try the pruned idea")
    repo.write("spike.py")
    repo.commit("spike work")
    make_engine(repo.path).flush_spool()
    repo.git("checkout", "-q", "main")
    branch_note(repo, make_engine, clock, "kept", "keep the merged idea")
    repo.write("kept.py")
    repo.commit("kept work")
    make_engine(repo.path).flush_spool()
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "kept", "-m", "merge kept")
    repo.git("branch", "-q", "-D", "spike", "kept")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    main = make_engine(repo.path)
    spike = main.conn.execute("SELECT head_oid FROM scope_heads WHERE branch='spike'").fetchone()[0]
    assert subprocess.run(["git", "cat-file", "-e", spike], cwd=repo.path).returncode != 0
    log = fake_git(tmp_path, monkeypatch, 'printf "%s|%s\\n" "$GIT_OPTIONAL_LOCKS" "$*" >> "$LOG"\nexec "$REAL" "$@"')
    monkeypatch.delenv("GIT_OPTIONAL_LOCKS", raising=False)
    capfd.readouterr()
    done = main.check_merges()
    assert capfd.readouterr() == ("", "")  # git's complaint about the pruned tip stays out of the user's terminal
    assert done.merged == {"kept": "ancestor"}
    assert [p.content for p in done.promoted] == ["keep the merged idea"]
    asked = [line.split("|", 1) for line in log.read_text().splitlines() if "merge-base" in line]
    assert sorted(args.split()[-2] for _, args in asked) == sorted(
        [spike, *(oid for b, oid in main.conn.execute("SELECT branch, head_oid FROM scope_heads") if b == "kept")]
    )
    assert {locks for locks, _ in asked} == {"0"}  # each alone, without optional locks


# -- a branch with no commit of its own -------------------------------------------------------------------------


def test_a_forced_check_at_an_unmoved_head_takes_no_fresh_fork_for_merged(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """`check_merges(force=True)` with HEAD where the last check left it: a branch forked at HEAD since has HEAD
    as its tip, and HEAD before the check held it already: nothing is merged."""
    repo.write("history.py")
    repo.commit("main has history")
    make_engine(repo.path).check_merges()
    branch_note(repo, make_engine, clock, "fresh", "a fresh fork's idea")
    repo.git("checkout", "-q", "main")
    done = make_engine(repo.path).check_merges(force=True)
    assert (done.ran, done.merged, done.promoted) == (True, {}, ())


def test_a_fresh_fork_of_a_one_commit_repository_is_not_merged_by_a_first_check(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """HEAD is the repository's only commit, so it has no first parent to stand in for the HEAD before: the fork
    at HEAD is an ancestor of it all the same, and having no commit of its own it is not merged."""
    assert repo.git("rev-list", "--count", "HEAD").strip() == "1"
    branch_note(repo, make_engine, clock, "fork", "an idea on a fresh fork")
    repo.git("checkout", "-q", "main")
    done = make_engine(repo.path).check_merges()  # main's first check
    assert (done.ran, done.merged, done.promoted) == (True, {}, ())


def test_a_deleted_fresh_fork_is_not_merged_by_a_first_check(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """A branch forked at main's HEAD, its HEAD recorded there, then deleted: it has no reflog left to show a
    commit of its own, and its session saw only HEAD, so main's first check does not take it for merged."""
    repo.write("history.py")
    repo.commit("main has history")
    branch_note(repo, make_engine, clock, "throwaway", "an idea thrown away")
    repo.git("checkout", "-q", "main")
    repo.git("branch", "-q", "-D", "throwaway")
    done = make_engine(repo.path).check_merges()  # main's first check
    assert (done.merged, done.promoted) == ({}, ())


def test_a_branch_s_reflog_is_read_even_when_a_file_is_named_like_its_ref(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """The repository tracks a file at `refs/heads/feature/ff`: the reflog read must not take the ref for a path
    (git refuses an ambiguous argument), so a fast-forward on main's first check is still a merge."""
    repo.git("checkout", "-q", "-b", "feature/ff")
    repo.write("refs/heads/feature/ff", "a fixture named like a ref\n")
    repo.commit("ff work")
    eng = make_engine(repo.path)
    eng.note("decision", "serve the ff endpoint over http2", "ff endpoint")
    eng.flush_spool()
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--ff-only", "feature/ff")
    done = make_engine(repo.path).check_merges()
    assert done.merged == {"feature/ff": "ancestor"}


# -- promoting by hand ---------------------------------------------------------------------------------------------


def note_id(eng: Engine, content: str) -> str:
    return str(eng.conn.execute("SELECT id FROM scoped_notes WHERE content=?", (content,)).fetchone()[0])


def stamp(eng: Engine, content: str) -> str:
    return str(eng.conn.execute("SELECT timestamp FROM scoped_notes WHERE content=?", (content,)).fetchone()[0])


def test_promote_takes_a_branch_as_typed_with_blanks_or_as_its_full_ref(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """`cortex promote --from` strips the name and a `refs/heads/` before it; a dry run says what would come over
    (no note id yet) and writes nothing."""
    branch_note(repo, make_engine, clock, "feature/other", "an unrelated branch's note", at="main")
    branch_note(
        repo,
        make_engine,
        clock,
        "feature/auth",
        "use jwt tokens for the api",
        at="main",
        alternatives=["session cookies", "api keys"],
    )
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)
    source = note_id(main, "use jwt tokens for the api")
    expected: list[dict[str, object]] = [
        {
            "source_note_id": source,
            "note_id": None,
            "from": "feature/auth",
            "kind": "decision",
            "subject": "feature/auth",
            "content": "use jwt tokens for the api",
            "timestamp": stamp(main, "use jwt tokens for the api"),
            "contests": [],
            "supersedes": [],
        }
    ]
    for name in ("feature/auth", "  feature/auth\n", "refs/heads/feature/auth"):
        assert [p.to_dict() for p in main.promote(name, dry_run=True)] == expected
    assert origins(main) == []
    done = main.promote("refs/heads/feature/auth")
    new = done[0].note_id
    kept = main.conn.execute("SELECT alternatives FROM scoped_notes WHERE id=?", (new,)).fetchone()[0]
    assert json.loads(kept) == ["session cookies", "api keys"]  # the considered options come over too
    assert new is not None and new != source
    assert [p.to_dict() for p in done] == [{**expected[0], "note_id": new}]
    assert origins(main) == [("use jwt tokens for the api", "from feature/auth")]
    assert [
        tuple(r)
        for r in main.conn.execute("SELECT source_note_id, target_scope_key, note_id, how, promoted_at FROM promotions")
    ] == [(source, main.scope.key, new, "manual", main.now())]
    assert main.promote("feature/auth") == []


def test_promote_finds_a_branch_whose_name_is_stored_as_its_digest(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """A branch name holding an invisible character is keyed by its cleaned form and digest: it is found by the
    name git has and by the key `cortex branches` showed."""
    name = "fix/token\u200bcache"
    branch_note(repo, make_engine, clock, name, "cache the token for an hour")
    key = make_engine(repo.path).scope.key.rsplit(":", 1)[1]
    assert key != name and "~" in key
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)
    for typed in (name, key):
        assert [p.content for p in main.promote(typed, dry_run=True)] == ["cache the token for an hour"]


def test_promote_refuses_what_it_cannot_promote_from_or_into(
    repo: Repo, make_engine: Open, clock: Clock, tmp_path: Path
) -> None:
    """Each refusal with its code and message: not on a branch (detached, outside git), the branch checked out
    here, a name the store has no memory of (a branch whose name only ends like it does not count)."""
    branch_note(repo, make_engine, clock, "feature/auth", "use jwt tokens for the api")
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)
    for same in ("main", " refs/heads/main "):
        with pytest.raises(InvalidInput) as refused:
            main.promote(same)
        assert (refused.value.code, str(refused.value)) == (
            "same_branch",
            "main is the branch checked out here; name the branch to promote from",
        )
    for unknown in ("auth", "feature", "feature/auth2", "eature/auth"):
        with pytest.raises(NotFound) as missing:
            main.promote(unknown)
        assert (missing.value.code, str(missing.value), missing.value.details) == (
            "not_found",
            f'No memory of branch "{unknown}" in this store; list scopes with: cortex branches',
            {"branch": unknown},
        )
    repo.git("checkout", "-q", "--detach")
    plain = tmp_path / "plain"
    plain.mkdir()
    for eng in (make_engine(repo.path), make_engine(plain)):
        with pytest.raises(InvalidInput) as refused:
            eng.promote("feature/auth")
        assert (refused.value.code, str(refused.value)) == (
            "not_a_branch",
            "promote needs a checked-out branch to promote into",
        )


def test_a_dry_run_predicts_what_the_promotion_then_contests_and_supersedes(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """What `promote --dry-run` says each note would contest and supersede is what promoting it does: an opposing
    decision is contested, not superseded; an older decision or intent of the kind is superseded, a newer one,
    a contested one, another kind's or another subject's is not; an insight or a note without subject neither."""
    main = make_engine(repo.path)
    main.note("decision", "use redis for the session cache", "cache")
    main.note("intent", "move the queue to rq", "queue")
    main.note("decision", "log in json", "logging")
    main.note("insight", "the login page is slow", "login")
    main.note("decision", "use tabs", "style")
    main.note("decision", "do not use tabs", "style")  # a contest on main: neither side is superseded
    main.note("decision", "deploy on tuesdays", "deploy")
    main.note("decision", "release on mondays", "release")
    eng = on(repo, make_engine, "feature/x", create=True)
    eng.note("decision", "release on fridays", "release")  # at the very time of main's: replaced all the same
    clock.advance(minutes=5)
    eng.note("decision", "do not use redis for the session cache", "cache")
    eng.note("intent", "move the queue to celery", "queue")
    eng.note("insight", "the login page is slow on mobile", "login")
    eng.note("decision", "use spaces", "style")
    eng.note("insight", "nobody reads the changelog")
    eng.note("decision", "ship logs to loki", "shipping")
    eng.note("decision", "log in plain text", "logging")
    eng.note("decision", "deploy on thursdays", "deploy")
    repo.git("checkout", "-q", "main")
    clock.advance(minutes=5)
    main = make_engine(repo.path)
    main.note("decision", "log in logfmt", "logging")  # newer than anything on feature/x: not superseded
    ids = {
        content: note_id(main, content)
        for content in (
            "use redis for the session cache",
            "move the queue to rq",
            "deploy on tuesdays",
            "release on mondays",
        )
    }
    predicted = {p.content: (p.contests, p.supersedes) for p in main.promote("feature/x", dry_run=True)}
    assert predicted == {
        "do not use redis for the session cache": ((ids["use redis for the session cache"],), ()),
        "move the queue to celery": ((), (ids["move the queue to rq"],)),
        "the login page is slow on mobile": ((), ()),
        "use spaces": ((), ()),
        "nobody reads the changelog": ((), ()),
        "ship logs to loki": ((), ()),
        "log in plain text": ((), ()),
        "deploy on thursdays": ((), (ids["deploy on tuesdays"],)),
        "release on fridays": ((), (ids["release on mondays"],)),
    }
    assert stamp(main, "release on fridays") == stamp(main, "release on mondays")
    done = {p.content: (p.contests, p.supersedes) for p in main.promote("feature/x")}
    assert done == predicted


# -- the scopes of the store, and the scope a recall names ----------------------------------------------------------


def test_branches_lists_every_scope_with_its_counts_where_it_went_and_whether_git_has_it(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """Active notes and open contests per scope (superseded ones not counted), the newest activity first, the
    branches each was merged into (sorted), whether the branch still exists, a detached scope and the current."""
    main = make_engine(repo.path)
    main.note("decision", "use redis for the session cache", "cache")
    main.note("decision", "do not use redis for the session cache", "cache")
    main.note("decision", "log in json", "logging")
    clock.advance(minutes=1)
    main.note("decision", "log in logfmt", "logging")
    branch_note(repo, make_engine, clock, "feature/auth", "use jwt tokens for the api")
    repo.write("auth.py")
    repo.commit("auth")
    branch_note(repo, make_engine, clock, "release", "freeze on fridays", at="main")
    repo.git("merge", "-q", "--no-ff", "feature/auth", "-m", "auth into release")
    make_engine(repo.path).check_merges()
    branch_note(repo, make_engine, clock, "spike", "try the zeppelin engine", at="main")
    on(repo, make_engine, "idle", create=True, at="main").start_session()  # a session, never a note
    repo.git("checkout", "-q", "--detach", "main")
    clock.advance(minutes=1)
    detached = make_engine(repo.path)
    detached.note("insight", "a detached look at main")
    repo.git("checkout", "-q", "main")
    repo.git("branch", "-q", "-D", "spike")
    repo.git("merge", "-q", "--no-ff", "feature/auth", "-m", "auth into main")
    clock.advance(minutes=1)
    main = make_engine(repo.path)
    main.check_merges()
    scopes = [s.to_dict() for s in main.branches()]
    prefix = merges.branch_prefix(main.scope)
    assert prefix is not None
    tree = main.scope.key[len(prefix) :].rsplit(":", 1)[0]
    head_oid = detached.scope.head_oid or ""
    last = {s["label"]: s["last_activity"] for s in scopes}
    assert [s["label"] for s in scopes] == sorted(last, key=lambda label: str(last[label]), reverse=True)
    assert {s["label"]: {k: v for k, v in s.items() if k != "last_activity"} for s in scopes} == {
        "main": {
            "scope_key": main.scope.key,
            "label": "main",
            "notes": 4,
            "open_contests": 2,
            "merged_into": [],
            "exists_in_git": True,
            "current": True,
        },
        "feature/auth": {
            "scope_key": f"{prefix}{tree}:feature/auth",
            "label": "feature/auth",
            "notes": 1,
            "open_contests": 0,
            "merged_into": ["main", "release"],
            "exists_in_git": True,
            "current": False,
        },
        "release": {
            "scope_key": f"{prefix}{tree}:release",
            "label": "release",
            "notes": 2,
            "open_contests": 0,
            "merged_into": [],
            "exists_in_git": True,
            "current": False,
        },
        "spike": {
            "scope_key": f"{prefix}{tree}:spike",
            "label": "spike",
            "notes": 1,
            "open_contests": 0,
            "merged_into": [],
            "exists_in_git": False,
            "current": False,
        },
        "idle": {
            "scope_key": f"{prefix}{tree}:idle",
            "label": "idle",
            "notes": 0,
            "open_contests": 0,
            "merged_into": [],
            "exists_in_git": True,
            "current": False,
        },
        f"detached@{head_oid[:7]}": {
            "scope_key": detached.scope.key,
            "label": f"detached@{head_oid[:7]}",
            "notes": 1,
            "open_contests": 0,
            "merged_into": [],
            "exists_in_git": None,
            "current": False,
        },
    }
    assert last["main"] == stamp(main, "use jwt tokens for the api")  # the promoted note keeps its time
    assert last["spike"] == stamp(main, "try the zeppelin engine")


def test_when_git_cannot_list_the_branches_whether_each_exists_is_unknown(
    repo: Repo, make_engine: Open, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    branch_note(repo, make_engine, clock, "feature/auth", "use jwt tokens for the api")
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)
    fake_git(tmp_path, monkeypatch, '[ "$1" = for-each-ref ] && exit 128\nexec "$REAL" "$@"')
    assert [(s.label, s.notes, s.exists_in_git) for s in main.branches()] == [("feature/auth", 1, None)]


def test_a_check_runs_only_on_a_branch_with_a_commit(repo: Repo, make_engine: Open, tmp_path: Path) -> None:
    """Detached, unborn or outside git, a check does nothing and says which HEAD it saw."""
    repo.git("checkout", "-q", "--detach")
    assert make_engine(repo.path).check_merges() == merges.MergeCheck(False, head(repo))
    unborn = tmp_path / "unborn"
    unborn.mkdir()
    Repo(unborn).git("init", "-q", "-b", "main")
    assert make_engine(unborn).check_merges() == merges.MergeCheck(False, None)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert make_engine(plain).check_merges() == merges.MergeCheck(False, None)


def test_branches_outside_git_lists_the_folder_s_scope_without_a_git_answer(make_engine: Open, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    eng = make_engine(plain)
    eng.note("decision", "keep notes in plain folders", "folders")
    assert [s.to_dict() for s in eng.branches()] == [
        {
            "scope_key": eng.scope.key,
            "label": "project",
            "notes": 1,
            "open_contests": 0,
            "last_activity": stamp(eng, "keep notes in plain folders"),
            "merged_into": [],
            "exists_in_git": None,
            "current": True,
        }
    ]


def test_a_scope_is_named_by_its_full_key_or_by_its_branch_in_every_worktree(
    repo: Repo, make_engine: Open, clock: Clock, tmp_path: Path
) -> None:
    """`recall --scope feature/auth` reads the branch's scopes of every worktree; a full key reads that scope;
    a name that only ends like a branch names nothing."""
    first = branch_note(repo, make_engine, clock, "feature/auth", "use jwt tokens for the api")
    repo.git("checkout", "-q", "main")
    other = tmp_path / "other"
    repo.git("worktree", "add", "-q", str(other), "feature/auth")
    clock.advance(minutes=1)
    second = make_engine(other)
    second.note("insight", "jwt tokens expire hourly")
    main = make_engine(repo.path)
    assert first.scope.key != second.scope.key
    assert sorted(merges.scope_keys_for(main.conn, main.scope, " feature/auth ")) == sorted(
        [first.scope.key, second.scope.key]
    )
    assert merges.scope_keys_for(main.conn, main.scope, f" {second.scope.key} ") == [second.scope.key]
    text = main.recall("jwt tokens", scope="feature/auth").text
    assert "use jwt tokens for the api" in text and "jwt tokens expire hourly" in text
    for name in ("auth", "eature/auth", "feature/aut"):
        with pytest.raises(NotFound) as missing:
            merges.scope_keys_for(main.conn, main.scope, name)
        assert (str(missing.value), missing.value.details) == (
            f'No memory under scope "{name}"; list scopes with: cortex branches',
            {"scope": name},
        )


# -- how git is asked ---------------------------------------------------------------------------------------------


def test_a_deleted_branch_that_never_flushed_is_judged_by_its_session_s_head(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """No HEAD was recorded for the branch (it never flushed, no check saw it live): its newest session's HEAD is
    its tip once it is deleted, and shows it merged."""
    make_engine(repo.path).check_merges()
    repo.git("checkout", "-q", "-b", "feature/quiet")
    repo.write("quiet.py")
    repo.commit("quiet work")
    eng = make_engine(repo.path)
    eng.note("decision", "keep the quiet mode", "quiet")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "feature/quiet", "-m", "merge quiet")
    repo.git("branch", "-q", "-D", "feature/quiet")
    main = make_engine(repo.path)
    assert main.conn.execute("SELECT COUNT(*) FROM scope_heads WHERE branch='feature/quiet'").fetchone()[0] == 0
    done = main.check_merges()
    assert done.merged == {"feature/quiet": "ancestor"}
    assert [p.content for p in done.promoted] == ["keep the quiet mode"]


def squash_merged(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """feature/sq, one commit and a note, squash-merged into main (checked out), main checked before."""
    make_engine(repo.path).check_merges()
    branch_note(repo, make_engine, clock, "feature/sq", "squash this feature", flush=False)
    repo.write("sq.py", "squashed = 1\n")
    repo.commit("sq work")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--squash", "feature/sq")
    repo.commit("squashed sq")


def test_a_merge_check_asks_git_without_optional_locks_in_the_c_locale(
    repo: Repo, make_engine: Open, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every git call of a check runs with GIT_OPTIONAL_LOCKS=0 (a check must not take the index lock a user's
    git wants) and LC_ALL=C (git's messages and dates are read as git prints them in C)."""
    squash_merged(repo, make_engine, clock)
    main = make_engine(repo.path)
    log = fake_git(
        tmp_path, monkeypatch, 'printf "%s|%s|%s\\n" "$GIT_OPTIONAL_LOCKS" "$LC_ALL" "$1" >> "$LOG"\nexec "$REAL" "$@"'
    )
    monkeypatch.delenv("GIT_OPTIONAL_LOCKS", raising=False)
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    assert main.check_merges().merged == {"feature/sq": "cherry"}
    calls = log.read_text().splitlines()
    assert {c.rsplit("|", 1)[1] for c in calls} == {"for-each-ref", "rev-list", "log", "patch-id"}
    assert {c.rsplit("|", 1)[0] for c in calls} == {"0|C"}


def test_a_git_that_hangs_is_given_up_on_and_the_check_completes(
    repo: Repo, make_engine: Open, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `git log` slower than GIT_TIMEOUT_S is killed and read as a failure: the check ends, finds nothing merged
    by patch (the answer git would have given late is a squash merge), and records that it ran."""
    squash_merged(repo, make_engine, clock)
    main = make_engine(repo.path)
    fake_git(tmp_path, monkeypatch, '[ "$1" = log ] && sleep 4\nexec "$REAL" "$@"')
    monkeypatch.setattr(merges, "GIT_TIMEOUT_S", 1)
    done = main.check_merges()
    assert (done.ran, done.merged) == (True, {})
    assert main.check_merges().ran is False


SLOW_MERGE_BASE = '[ "$1" = rev-list ] && exit 1\n[ "$1" = merge-base ] && sleep 4\nexec "$REAL" "$@"'
"""A git whose batched ancestry read fails and whose `merge-base` answers only after 4 seconds."""


def test_a_merged_tip_asked_alone_of_a_git_too_slow_to_answer_is_not_merged(
    repo: Repo, make_engine: Open, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batched ancestry read fails and `merge-base` answers only after GIT_TIMEOUT_S: it is killed and read as
    "not an ancestor", though git would have said the branch was merged."""
    make_engine(repo.path).check_merges()
    noted_worked_merged(repo, make_engine, clock, "feature/slow", "merged but slow to tell")
    main = make_engine(repo.path)
    fake_git(tmp_path, monkeypatch, SLOW_MERGE_BASE)
    monkeypatch.setattr(merges, "GIT_TIMEOUT_S", 1)
    assert main.check_merges().merged == {}


def test_an_unmerged_tip_asked_alone_of_a_git_too_slow_to_answer_is_not_merged(
    repo: Repo, make_engine: Open, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batched ancestry read fails, and `merge-base` answers too late for the tip asked alone: a git that
    times out says "not an ancestor", never "merged". (HEAD is the only commit: no earlier HEAD stands in to take
    back a wrong answer.)"""
    branch_note(repo, make_engine, clock, "feature/wip", "work in progress")
    repo.write("wip.py")
    repo.commit("wip")
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)
    fake_git(tmp_path, monkeypatch, SLOW_MERGE_BASE)
    monkeypatch.setattr(merges, "GIT_TIMEOUT_S", 1)
    done = main.check_merges()
    assert (done.ran, done.merged, done.promoted) == (True, {}, ())


def test_a_ref_named_like_anything_does_not_stand_in_for_a_root_commit_s_missing_parent(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """HEAD is the repository's root commit, so a first check has no first parent to weigh the branches against:
    none is taken away. `feature` committed once and was then reset to the root: its tip is HEAD and its reflog
    shows a commit of its own, so the first check counts it merged (a fast-forward), whatever refs the repository
    has: a tag named `XXXX` at HEAD must not stand in for the missing parent and take the merge back."""
    root = head(repo)
    branch_note(repo, make_engine, clock, "feature", "keep the reset branch's idea")
    repo.write("feature.py")
    repo.commit("feature work")
    repo.git("checkout", "-q", "main")
    repo.git("branch", "-q", "-f", "feature", root)
    repo.git("tag", "XXXX", root)
    assert head(repo, "feature") == root == head(repo) and repo.git("rev-list", "--count", "HEAD").strip() == "1"
    done = make_engine(repo.path).check_merges()  # main's first check
    assert done.merged == {"feature": "ancestor"}
    assert [p.content for p in done.promoted] == ["keep the reset branch's idea"]


# -- the HEAD a scope had before it moved -------------------------------------------------------------------------


def test_a_forced_check_at_an_unmoved_head_keeps_the_time_that_head_was_first_seen(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """A scope's recorded HEAD carries the time it was first seen there (a deleted branch's tip is its newest
    recorded HEAD across worktrees): a forced check at the same HEAD does not make it newer; a moved HEAD does."""
    main = make_engine(repo.path)
    main.check_merges()
    first = main.conn.execute(
        "SELECT head_oid, seen_at FROM scope_heads WHERE scope_key=?", (main.scope.key,)
    ).fetchone()
    assert tuple(first) == (head(repo), main.now())
    clock.advance(hours=1)
    assert make_engine(repo.path).check_merges(force=True).ran
    again = main.conn.execute(
        "SELECT head_oid, seen_at FROM scope_heads WHERE scope_key=?", (main.scope.key,)
    ).fetchone()
    assert tuple(again) == tuple(first)
    repo.write("moved.py")
    repo.commit("main moves")
    moved = make_engine(repo.path)
    moved.check_merges()
    row = main.conn.execute("SELECT head_oid, seen_at FROM scope_heads WHERE scope_key=?", (main.scope.key,)).fetchone()
    assert tuple(row) == (head(repo), moved.now()) != tuple(first)


def test_a_first_check_weighs_branches_against_the_head_another_check_recorded_for_the_scope(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """main's check remembered feature's live tip T; feature then moved on without a check of its own. feature's
    first check takes T (not the older HEAD its session saw when the note was written) as its HEAD before: a
    branch forked from feature at T with no commit of its own is held by T already, so it is not merged."""
    repo.write("history.py")
    repo.commit("main has history")
    feature = branch_note(repo, make_engine, clock, "feature", "feature's own idea", flush=False)
    noted_at = feature.conn.execute("SELECT head_oid FROM sessions WHERE scope_key=?", (feature.scope.key,)).fetchone()[
        0
    ]
    repo.write("feature.py")
    repo.commit("feature work")
    tip = head(repo)
    branch_note(repo, make_engine, clock, "helper", "a helper forked from feature", flush=False)
    repo.git("checkout", "-q", "main")
    assert make_engine(repo.path).check_merges().merged == {}  # remembers feature's and helper's live tips
    repo.git("checkout", "-q", "feature")
    repo.write("more.py")
    repo.commit("feature moves on")
    eng = make_engine(repo.path)
    recorded = eng.conn.execute("SELECT head_oid FROM scope_heads WHERE scope_key=?", (eng.scope.key,)).fetchone()[0]
    assert recorded == tip != noted_at and head(repo, "helper") == tip
    done = eng.check_merges()  # feature's first check
    assert (done.merged, done.promoted) == ({}, ())


def test_a_first_check_weighs_branches_against_the_head_the_scope_s_session_saw(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """No check ever ran on main and none recorded its HEAD, but a session on main saw HEAD S. feature was merged
    since, then main moved on once more: weighed against S, feature is merged; against HEAD's first parent (the
    merge commit, which holds it) it would not be."""
    main = make_engine(repo.path)
    main.note("insight", "main has a session")
    seen = main.conn.execute("SELECT head_oid FROM sessions WHERE scope_key=?", (main.scope.key,)).fetchone()[0]
    assert seen == head(repo)
    branch_note(repo, make_engine, clock, "feature", "merged two commits ago", flush=False)
    repo.write("feature.py")
    repo.commit("feature work")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "feature", "-m", "merge feature")
    repo.write("after.py")
    repo.commit("main moves on")
    eng = make_engine(repo.path)
    assert eng.conn.execute("SELECT COUNT(*) FROM scope_heads WHERE scope_key=?", (eng.scope.key,)).fetchone()[0] == 0
    done = eng.check_merges()  # main's first check
    assert done.merged == {"feature": "ancestor"}
    assert [p.content for p in done.promoted] == ["merged two commits ago"]


# -- which notes are candidates -------------------------------------------------------------------------------------


def test_a_note_that_went_out_through_a_merge_never_comes_back_into_its_own_scope(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """main's decision reached feature when feature merged main; when feature is merged back into main, only
    feature's own note arrives: the copy of main's decision started in main's scope, so it never comes back."""
    main_merged_into_feature(repo, make_engine, clock)
    into_feature = make_engine(repo.path).check_merges()
    assert [(p.content, p.branch) for p in into_feature.promoted] == [("main's own rule", "main")]
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "feature", "-m", "feature into main")
    main = make_engine(repo.path)
    done = main.check_merges()
    assert done.merged == {"feature": "ancestor"}
    assert [p.content for p in done.promoted] == ["feature's own idea"]
    assert origins(main) == [("feature's own idea", "from feature"), ("main's own rule", None)]


def test_a_branch_s_notes_in_another_worktree_are_not_merged_into_it(
    repo: Repo, make_engine: Open, clock: Clock, tmp_path: Path
) -> None:
    """feature was worked on in the main worktree, then checked out in a second one: its notes from the first are
    the same branch's, never a merge into it, however far the branch has moved."""
    branch_note(repo, make_engine, clock, "feature", "feature's idea from the first worktree", flush=False)
    repo.write("feature.py")
    repo.commit("feature work")
    repo.git("checkout", "-q", "main")
    other = tmp_path / "other"
    repo.git("worktree", "add", "-q", str(other), "feature")
    second = make_engine(other)
    done = second.check_merges()  # the second worktree's first check
    assert (done.ran, done.merged, done.promoted) == (True, {}, ())
    assert origins(second) == []


def test_a_check_reports_the_head_it_saw_whether_it_ran_or_not(repo: Repo, make_engine: Open) -> None:
    main = make_engine(repo.path)
    assert main.check_merges() == merges.MergeCheck(True, head(repo))
    assert main.check_merges() == merges.MergeCheck(False, head(repo))


def test_a_check_weighs_branches_against_the_head_it_last_checked_not_a_tip_remembered_since(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """feature merged main after its last check, then main's check remembered feature's tip (the merge); feature
    moved on. feature's next check weighs main against the HEAD it last checked, which lacked main's commit: main
    is merged into feature (against the remembered tip, which holds it, it would not be)."""
    assert main_merged_into_feature(repo, make_engine, clock).ran
    merge = head(repo)
    repo.git("checkout", "-q", "main")
    assert make_engine(repo.path).check_merges().merged == {}  # remembers feature's tip: the merge
    repo.git("checkout", "-q", "feature")
    repo.write("more.py")
    repo.commit("feature moves on")
    eng = make_engine(repo.path)
    assert (
        eng.conn.execute("SELECT head_oid FROM scope_heads WHERE scope_key=?", (eng.scope.key,)).fetchone()[0] == merge
    )
    done = eng.check_merges()
    assert done.merged == {"main": "ancestor"}
    assert [p.content for p in done.promoted] == ["main's own rule"]


def test_a_branch_merged_again_brings_only_its_new_notes(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """feature's first note came home with its first merge; merged a second time, it brings the note written
    since, passing over the one promoted already."""
    branch_note(repo, make_engine, clock, "feature", "the first idea", flush=False)
    repo.write("one.py")
    repo.commit("first step")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "feature", "-m", "first merge")
    assert [p.content for p in make_engine(repo.path).check_merges().promoted] == ["the first idea"]
    eng = on(repo, make_engine, "feature")
    clock.advance(minutes=1)
    eng.note("insight", "the second idea")
    repo.write("two.py")
    repo.commit("second step")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "feature", "-m", "second merge")
    main = make_engine(repo.path)
    assert [p.content for p in main.check_merges().promoted] == ["the second idea"]
    assert origins(main) == [("the first idea", "from feature"), ("the second idea", "from feature")]


def test_a_note_that_reached_a_branch_through_a_merge_arrives_once_when_both_are_merged(
    repo: Repo, make_engine: Open, clock: Clock
) -> None:
    """feature/b was merged into feature/auth (its note copied there), then feature/auth into main: main finds both
    branches merged, and b's note, present in both, arrives once, from the branch it was written on."""
    branch_note(repo, make_engine, clock, "feature/b", "the b service retries twice", flush=False)
    repo.write("b.py")
    repo.commit("b work")
    repo.git("checkout", "-q", "main")
    branch_note(repo, make_engine, clock, "feature/auth", "the auth service retries thrice", at="main", flush=False)
    repo.write("auth.py")
    repo.commit("auth work")
    assert make_engine(repo.path).check_merges().ran
    repo.git("merge", "-q", "--no-ff", "feature/b", "-m", "b into auth")
    assert [p.content for p in make_engine(repo.path).check_merges().promoted] == ["the b service retries twice"]
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "feature/auth", "-m", "auth into main")
    main = make_engine(repo.path)
    done = main.check_merges()
    assert done.merged == {"feature/b": "ancestor", "feature/auth": "ancestor"}
    assert origins(main) == [
        ("the b service retries twice", "from feature/b"),
        ("the auth service retries thrice", "from feature/auth"),
    ]


# -- what letter case a promotion's quoted values keep: SQLite compares them byte for byte -----------------------------


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
