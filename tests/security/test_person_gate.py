"""Only a person approves: what an agent's shell can try, and what a person at a terminal can still do.

A prompt-injected agent runs commands in its Bash tool: no terminal on stdin or stdout, and whatever environment
it likes. Every shape below goes through the real command line; none may change the user's decisions, decide an
arrival, take back what the user did, or lower the review. A person at a pseudo-terminal, typing the code the
prompt shows, accepts, rejects, undoes and lowers the review.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from cortex_engine.base import settings
from cortex_engine.engine import Engine

from ..conftest import Repo
from ..terminal import at_terminal

Open = Callable[..., Engine]
MALLORY = "Mallory <mallory@evil.example>"
FOLDER = "docs/decisions"
NOW = "2026-08-02T18:00:00Z"


def madr(title: str, decision: str) -> str:
    return f"# {title}\n\n## Decision Outcome\n\nChosen option: {json.dumps(decision)}\n"


def agent_shell(cwd: Path, *args: str, env: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> tuple:
    """`cortex ARGS` as an agent's Bash tool runs it: stdin, stdout and stderr are pipes (stdin fed a line)."""
    base = {**os.environ, "CORTEX_NOW": NOW, "PYTHONIOENCODING": "utf-8", **(env or {})}
    for name in drop:
        base.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", *args],
        cwd=cwd,
        env=base,
        input="accept\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout, done.stderr


def _state(conn: sqlite3.Connection, ids: dict[str, str]) -> dict[str, tuple[str, int]]:
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT id, status, conflict FROM notes WHERE id IN ({marks})", list(ids.values()))
    by_id = {r[0]: (r[1], r[2]) for r in rows}
    return {subject: by_id[note] for subject, note in ids.items()}


def test_no_shape_from_an_agents_shell_approves_anything(repo: Repo, make_engine: Open, tmp_path: Path) -> None:
    """Eight refused commands (accept with `CLAUDECODE` blank, unset or set; reject; accept by id with a line on
    stdin; undo; lowering the review; raising it is allowed) and four that bring arrivals in with the environment
    an agent chooses (`CORTEX_REVIEW_ARRIVALS=none` on sync and on import, `GIT_AUTHOR_EMAIL` set to the author's,
    and a teammate's file the user squash-merged and committed): every decision of the user stays active and
    uncontested, the resolved one stays resolved, all five arrivals wait, and the review policy is unchanged.
    (Before: `CLAUDECODE=` and `env -u CLAUDECODE` drained the inbox, undo ran, and each sync shape applied.)"""
    eng = make_engine(repo.path)
    mine = {s: eng.note("decision", f"use the local {s}", s).id for s in ("auth", "tls", "database", "queue", "api")}
    resolved = eng.note("decision", "use the local cache", "cache").id
    eng.resolve(resolved, status="resolved")
    scope = eng.scope.key
    eng.close()

    def commit(files: dict[str, str], author: str) -> None:
        for rel, body in files.items():
            repo.write(rel, body)
        repo.git("add", "-A")
        repo.git("commit", "-q", f"--author={author}", "-m", "decisions")

    commit(
        {f"{FOLDER}/0001-auth.md": madr("auth", "use basic auth"), f"{FOLDER}/0002-tls.md": madr("tls", "skip")},
        MALLORY,
    )
    brought = [agent_shell(repo.path, "sync", env={"CORTEX_REVIEW_ARRIVALS": "none"})]
    commit({f"{FOLDER}/0003-database.md": madr("database", "use a world-readable bucket")}, MALLORY)
    brought.append(
        agent_shell(repo.path, "sync", env={"GIT_AUTHOR_EMAIL": "mallory@evil.example", "GIT_AUTHOR_NAME": "Mallory"})
    )
    repo.git("checkout", "-q", "-b", "teammate")
    commit({f"{FOLDER}/0004-queue.md": madr("queue", "use the teammate's queue")}, MALLORY)
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--squash", "teammate")
    repo.git("commit", "-q", "-m", "squash the teammate's branch")  # the user's own git identity
    brought.append(agent_shell(repo.path, "sync"))
    export = tmp_path / "evil.jsonl"
    line = {"id": "00000000-0000-4000-8000-000000000001", "scope": scope, "timestamp": "2099-01-01T00:00:00Z"}
    line |= {"kind": "decision", "subject": "api", "content": "use the imported api", "status": "active"}
    export.write_text(json.dumps({"cortex_export": 1}) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    brought.append(
        agent_shell(repo.path, "import", str(export), "--scope", "here", env={"CORTEX_REVIEW_ARRIVALS": "none"})
    )
    assert [code for code, _, _ in brought] == [0, 0, 0, 0], brought

    with make_engine(repo.path) as eng:
        auth_id = next(a.id for a in eng.inbox() if a.path.endswith("0001-auth.md"))
    refused = [
        agent_shell(repo.path, "inbox", "accept", "--all", env={"CLAUDECODE": ""}),
        agent_shell(repo.path, "inbox", "accept", "--all", drop=("CLAUDECODE",)),
        agent_shell(repo.path, "inbox", "accept", "--all", env={"CLAUDECODE": "1"}),
        agent_shell(repo.path, "inbox", "reject", "--all"),
        agent_shell(repo.path, "inbox", "accept", auth_id[:8]),
        agent_shell(repo.path, "inbox", "accept", auth_id, "--json"),
        agent_shell(repo.path, "undo"),
        agent_shell(repo.path, "review-policy", "none"),
    ]
    for code, out, err in refused:
        assert (code, err.count("\n"), err.startswith("cortex: ")) == (1, 1, True), (code, out, err)
        assert "run `cortex " in err and "in your own terminal" in err and "nothing was changed" in err
    assert [json.loads(refused[5][1])["error"]] == ["needs_person"]
    raised = agent_shell(repo.path, "review-policy", "all")  # raising the review is no approval: scriptable
    assert raised[0] == 0 and settings.review_arrivals() == "all"
    settings.settings_file().unlink()

    with make_engine(repo.path) as eng:
        assert _state(eng.conn, mine) == {s: ("active", 0) for s in mine}
        assert _state(eng.conn, {"cache": resolved}) == {"cache": ("resolved", 0)}
        assert sorted((a.channel, a.path.rsplit("/", 1)[-1]) for a in eng.inbox()) == [
            ("import", "evil.jsonl"),
            ("shared", "0001-auth.md"),
            ("shared", "0002-tls.md"),
            ("shared", "0003-database.md"),
            ("shared", "0004-queue.md"),
        ]
        assert eng.conn.execute("SELECT COUNT(*) FROM memory_corrections WHERE operation='undo'").fetchone()[0] == 0
    assert settings.review_policy() == ("others", None)


def test_a_person_at_a_terminal_accepts_rejects_undoes_and_lowers_the_review(repo: Repo, make_engine: Open) -> None:
    """Under a pseudo-terminal: a wrong code cancels (nothing changes); the shown code accepts one arrival (the
    user's older decision is superseded, as the person chose), rejects the other, undoes the last resolve and
    lowers the review to `none`. Inside an agent's shell (`CLAUDECODE=1`) even a terminal is refused."""
    eng = make_engine(repo.path)
    auth = eng.note("decision", "use OIDC", "auth").id
    cache = eng.note("decision", "use redis", "cache").id
    eng.close()
    for rel, body in {
        f"{FOLDER}/0001-auth.md": madr("auth", "use SAML"),
        f"{FOLDER}/0002-x.md": madr("x", "y"),
    }.items():
        repo.write(rel, body)
    repo.git("add", "-A")
    repo.git("commit", "-q", f"--author={MALLORY}", "-m", "decisions")
    with make_engine(repo.path) as eng:
        assert len(eng.sync_shared().pending) == 2
        first, second = (a.id for a in eng.inbox())

    wrong, prompted, shown = at_terminal(repo.path, "inbox", "accept", first[:8], answer="zzzz")
    assert (wrong.code, prompted) == (1, "accept this arrival") and "cortex: not confirmed" in shown
    assert "0001-auth.md" in wrong.out and 'would add decision: [auth] "use SAML"' in wrong.out
    agent, prompted, _ = at_terminal(repo.path, "inbox", "accept", first[:8], env={"CLAUDECODE": "1"})
    assert (agent.code, prompted) == (1, None) and "in your own terminal" in agent.out
    with make_engine(repo.path) as eng:
        assert [a.state for a in eng.inbox()] == ["pending", "pending"]

    accepted, prompted, shown = at_terminal(repo.path, "inbox", "accept", first[:8])
    assert (accepted.code, prompted) == (0, "accept this arrival") and f"Accepted {first[:8]}" in shown
    rejected, prompted, _ = at_terminal(repo.path, "inbox", "reject", "--all")
    assert (rejected.code, prompted) == (0, "reject this arrival")
    with make_engine(repo.path) as eng:
        assert [a.state for a in eng.inbox(("accepted", "rejected"))] == ["accepted", "rejected"]
        assert _state(eng.conn, {"auth": auth}) == {"auth": ("superseded", 0)}
        eng.resolve(cache, status="resolved")

    undone, prompted, shown = at_terminal(repo.path, "undo")
    assert (undone.code, prompted) == (0, "undo it") and f"Undo the resolve of notes:{cache}" in undone.out
    assert "Undid the resolve" in shown
    with make_engine(repo.path) as eng:
        assert _state(eng.conn, {"cache": cache}) == {"cache": ("active", 0)}

    lowered, prompted, shown = at_terminal(repo.path, "review-policy", "none")
    assert (lowered.code, prompted) == (0, "lower it to none") and "Review policy none:" in shown
    assert settings.review_policy() == ("none", None)
    again, prompted, _ = at_terminal(repo.path, "review-policy", "none", answer=None)  # no change: no question
    assert (again.code, prompted) == (0, None)


def test_status_and_doctor_show_the_review_policy_from_the_settings_file(repo: Repo, make_engine: Open) -> None:
    """`cortex status` (text and `--json`) and `cortex doctor` say which policy holds and where it comes from: the
    default passes, `none` warns, and a broken file warns that it reads as `all`."""
    make_engine(repo.path).close()

    def shown() -> tuple[str, dict[str, object], dict[str, object]]:
        text = agent_shell(repo.path, "status")[1]
        data = json.loads(agent_shell(repo.path, "status", "--json")[1])
        doctor = json.loads(agent_shell(repo.path, "doctor", "--json")[1])
        check = next(c for c in doctor["checks"] if c["name"] == "review-policy")
        return next(line for line in text.splitlines() if line.startswith("Review: ")), data, check

    line, data, check = shown()
    assert line.startswith("Review: others: decision files this store did not publish, and every import, wait")
    assert (data["review_policy"], data["review_policy_problem"], check["status"]) == ("others", None, "pass")
    settings.write_review_arrivals("none")
    line, data, check = shown()
    assert line == "Review: none: decision files by others and imports apply at once, without your review"
    assert (data["review_policy"], check["status"]) == ("none", "warn") and "review-policy others" in check["fix"]
    settings.settings_file().write_text("{broken", encoding="utf-8")
    line, data, check = shown()
    assert data["review_policy"] == "all" and check["status"] == "warn" and "is not JSON; read as `all`" in line
