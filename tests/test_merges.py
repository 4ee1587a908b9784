"""Memory follows merges: merged branches' notes come home, labelled, with the note rules applied.

Real git repositories throughout; `promote` and `branches` also through the real `cortex` command line.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from cortex_engine.engine import Engine

from .conftest import Clock, Repo
from .test_cli import cortex

Open = Callable[..., Engine]


def on(repo: Repo, make_engine: Open, branch: str, *, create: bool = False) -> Engine:
    """Check out `branch` (creating it) and open an engine on it."""
    repo.git("checkout", "-q", *(["-b"] if create else []), branch)
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
