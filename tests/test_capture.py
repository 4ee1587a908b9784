"""Capture end to end: the real hook scripts under bash (no jq), the spool, flush, sessions, ledgers."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cortex_engine.capture.flush import CLAIMS, SPOOL, runtime_dir
from cortex_engine.engine import Engine

from .conftest import Repo, tool_path

HOOKS = Path(__file__).resolve().parent.parent / "hooks"


@pytest.fixture
def nojq_path(tmp_path: Path) -> str:
    """A PATH holding only the few tools the hooks may use: jq is deliberately absent."""
    return tool_path(tmp_path / "bin")


def run_hook(
    script: str, payload: dict | str, path_env: str, *, extra_env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run a hook template under bash exactly as the host would: payload on stdin."""
    body = payload if isinstance(payload, str) else json.dumps(payload)
    env = {"PATH": path_env, "HOME": os.environ["HOME"], **(extra_env or {})}
    return subprocess.run(
        [shutil.which("bash") or "/bin/bash", str(HOOKS / script)],
        input=body.encode(),
        env=env,
        capture_output=True,
        timeout=30,
    )


def read_payload(
    repo: Repo,
    rel: str,
    content: str | None,
    *,
    session: str = "host-1",
    cwd: Path | None = None,
    tool_use: str = "t-read",
    agent: tuple[str, str] | None = None,
) -> dict:
    """A Claude Code PostToolUse payload for a Read."""
    payload = {
        "session_id": session,
        "transcript_path": "/dev/null",
        "cwd": str(cwd or repo.path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_use_id": tool_use,
        "tool_input": {"file_path": str(repo.path / rel)},
        "tool_response": {
            "type": "text",
            "file": {
                "filePath": str(repo.path / rel),
                "content": content,
                "numLines": 1,
                "startLine": 1,
                "totalLines": 1,
            },
        },
    }
    if agent:
        payload["agent_id"], payload["agent_type"] = agent
    return payload


def bash_payload(
    repo: Repo, command: str, *, failed: bool = False, tool_use: str = "t-cmd", error: str = "", stdout: str = ""
) -> dict:
    """A PostToolUse (or PostToolUseFailure) payload for a Bash call."""
    payload = {
        "session_id": "host-1",
        "cwd": str(repo.path),
        "hook_event_name": "PostToolUseFailure" if failed else "PostToolUse",
        "tool_name": "Bash",
        "tool_use_id": tool_use,
        "tool_input": {"command": command},
    }
    if failed:
        payload.update(error=error or "Command exited with non-zero status code 1", is_interrupt=False)
    else:
        payload["tool_response"] = {"stdout": stdout, "stderr": "", "interrupted": False}
    return payload


def test_engage_creates_a_self_ignoring_runtime_folder(live: Engine, repo: Repo) -> None:
    """The runtime folder ignores itself, so git status stays clean and no user file is edited."""
    folder = runtime_dir(repo.path)
    assert (folder / "engaged").is_file()
    assert repo.git("status", "--porcelain").strip() == ""


def test_capture_without_jq_from_a_subdirectory(live: Engine, repo: Repo, nojq_path: str) -> None:
    """The hook needs no jq and finds the runtime folder from a subdirectory cwd."""
    repo.write("src/app/main.py", "print('hi')\n")
    sub = repo.path / "src" / "app"
    assert shutil.which("jq", path=nojq_path) is None
    done = run_hook("cortex-capture.sh", read_payload(repo, "src/app/main.py", "print('hi')\n", cwd=sub), nojq_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert (runtime_dir(repo.path) / SPOOL).stat().st_size > 0
    result = live.flush_spool()
    assert (result.processed, result.skipped) == (1, 0)
    [verdict] = live.read_ledger(["src/app/main.py"])
    assert (verdict.path, verdict.verdict, verdict.recorded_by) == ("src/app/main.py", "unchanged-since", "you")


def test_hooks_do_nothing_unless_engaged(repo: Repo, nojq_path: str) -> None:
    """An unengaged worktree gets no runtime folder and no spool."""
    done = run_hook("cortex-capture.sh", read_payload(repo, "README.md", "# test\n"), nojq_path)
    assert done.returncode == 0
    assert not runtime_dir(repo.path).exists()


@pytest.mark.parametrize("garbage", ["", "not json at all", '{"cwd": 42}', '{"cwd":"relative/dir"}', "\x00\x01"])
def test_hooks_exit_zero_silently_on_garbage(live: Engine, nojq_path: str, garbage: str) -> None:
    """Bad input never breaks the agent: exit 0, nothing printed."""
    for script in ("cortex-capture.sh", "cortex-end-of-turn.sh"):
        done = run_hook(script, garbage, nojq_path)
        assert (script, done.returncode, done.stdout, done.stderr) == (script, 0, b"", b"")


def test_32_concurrent_captures_lose_nothing(live: Engine, repo: Repo, nojq_path: str) -> None:
    """32 hooks at once, some with large payloads, all land whole and replay once each."""
    payloads = []
    for n in range(32):
        repo.write(f"src/f{n}.py", f"# {n}\n")
        content = f"# {n}\n" + ("x" * 5000 if n % 3 == 0 else "")
        payloads.append(read_payload(repo, f"src/f{n}.py", content, tool_use=f"t-{n}"))
    with ThreadPoolExecutor(max_workers=32) as pool:
        codes = list(pool.map(lambda p: run_hook("cortex-capture.sh", p, nojq_path).returncode, payloads))
    assert codes == [0] * 32
    result = live.flush_spool()
    assert (result.processed, result.skipped, result.duplicates) == (32, 0, 0)
    assert live.conn.execute("SELECT COUNT(*) FROM events WHERE type='read'").fetchone()[0] == 32
    assert list((runtime_dir(repo.path) / "blobs").iterdir()) == []


def test_torn_and_invalid_lines_are_skipped_not_fatal(live: Engine, repo: Repo) -> None:
    """A torn or invalid line is skipped; the lines around it are kept."""
    good = [
        json.dumps({"v": 1, "t": 1785700000, "p": bash_payload(repo, f"echo {n}", tool_use=f"t{n}")}) for n in range(3)
    ]
    spool = runtime_dir(repo.path) / SPOOL
    spool.write_text(good[0] + '\n{"v":1,"t":17857\n' + "[1,2,3]\n" + good[1] + "\n" + good[2] + "\n" + good[2][:40])
    result = live.flush_spool()
    assert (result.processed, result.skipped) == (3, 3)
    assert not spool.exists()


def test_replaying_a_claim_twice_books_nothing_twice(live: Engine, repo: Repo) -> None:
    """A claim replayed again (crash between commit and unlink) is idempotent."""
    line = json.dumps({"v": 1, "t": 1785700000, "p": bash_payload(repo, "pytest -q", failed=True)}) + "\n"
    (runtime_dir(repo.path) / SPOOL).write_text(line)
    assert live.flush_spool().processed == 1
    (runtime_dir(repo.path) / CLAIMS / "00000000000000000001-1.jsonl").write_text(line)
    again = live.flush_spool()
    assert (again.processed, again.duplicates) == (0, 1)
    counts = [
        live.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("events", "command_runs", "episodes")
    ]
    assert counts == [1, 1, 1]


def test_orphaned_claim_is_finished_by_the_next_flush(live: Engine, repo: Repo) -> None:
    """A claim left behind by a crashed flush is processed next time."""
    claims = runtime_dir(repo.path) / CLAIMS
    (claims / "00000000000000000001-999.jsonl").write_text(
        json.dumps({"v": 1, "t": 1785700000, "p": bash_payload(repo, "git status")}) + "\n"
    )
    result = live.flush_spool()
    assert (result.processed, result.claims) == (1, 1)
    assert list(claims.iterdir()) == []


def test_failure_event_becomes_an_episode_with_seen_count(live: Engine, repo: Repo, nojq_path: str) -> None:
    """PostToolUseFailure for a test run is a failure episode; the same failure again bumps `(seen 2x)`."""
    for n in range(2):
        run_hook(
            "cortex-capture.sh",
            bash_payload(repo, "python -m pytest tests/test_api.py", failed=True, tool_use=f"fail-{n}"),
            nojq_path,
        )
    run_hook(
        "cortex-capture.sh",
        bash_payload(
            repo, "npm test", failed=True, tool_use="npm-1", error="Command exited with non-zero status code 2"
        ),
        nojq_path,
    )
    live.flush_spool()
    summaries = sorted(r[0] for r in live.conn.execute("SELECT summary FROM episodes"))
    assert summaries == [
        "test failed: npm test (exit 2)",
        "test failed: python -m pytest tests/test_api.py (exit 1) (seen 2x)",
    ]
    assert "Command failure: [tests/test_api.py] test failed: python -m pytest" in live.recall("pytest test_api").text


def test_a_failure_repeated_in_one_flush_is_indexed_once_as_it_ends(live: Engine, repo: Repo, nojq_path: str) -> None:
    """A failure seen again only bumps its episode's `(seen Nx)`; its memory item is written once
    per flush, as the last repeat leaves it, not re-indexed (full text and references) for every repeat."""
    for n in range(6):
        run_hook(
            "cortex-capture.sh",
            bash_payload(repo, "python -m pytest tests/test_api.py", failed=True, tool_use=f"again-{n}"),
            nojq_path,
        )
    statements: list[str] = []
    live.conn.set_trace_callback(statements.append)
    try:
        assert live.flush_spool().processed == 6
    finally:
        live.conn.set_trace_callback(None)
    # SQLite's trace repeats a statement for each trigger program it runs: distinct texts are distinct writes.
    inserts = {s for s in statements if s.startswith("INSERT INTO memory_items(") and "'episodes:command_failure:" in s}
    updates = [
        s for s in statements if s.startswith("UPDATE memory_items SET text") and "'episodes:command_failure:" in s
    ]
    assert (len(inserts), updates) == (1, [])
    text = live.conn.execute("SELECT text FROM memory_items WHERE kind='episode:command_failure'").fetchone()["text"]
    assert text.startswith("test failed: python -m pytest tests/test_api.py (exit 1) (seen 6x)")


def test_a_failure_repeated_in_one_flush_reads_and_writes_its_episode_once(live: Engine, repo: Repo) -> None:
    """The repeats of a failure in one batch are counted in memory; its episode row is looked
    up once and written once, and a repeat more than 24 hours after the last one still starts a new episode."""
    base = 1_785_700_000
    hours = (0, 1, 2, 27, 28)  # three within a day, then two more a day later
    lines = [
        json.dumps(
            {
                "v": 1,
                "t": base + 3600 * h,
                "p": bash_payload(repo, "python -m pytest tests/test_api.py", failed=True, tool_use=f"day-{h}"),
            }
        )
        for h in hours
    ]
    (runtime_dir(repo.path) / "spool.jsonl").write_text("\n".join(lines) + "\n")
    statements: list[str] = []
    live.conn.set_trace_callback(statements.append)
    try:
        assert live.flush_spool().processed == len(hours)
    finally:
        live.conn.set_trace_callback(None)
    lookups = [s for s in statements if s.lstrip().startswith("SELECT id, metadata_json")]
    updates = {s for s in statements if s.startswith("UPDATE episodes SET summary")}
    assert (len(lookups), len(updates)) == (1, 2)  # one per episode, however often it was seen
    rows = live.conn.execute(
        "SELECT summary, metadata_json FROM episodes WHERE kind='command_failure' ORDER BY created_at"
    ).fetchall()
    assert [r["summary"] for r in rows] == [
        "test failed: python -m pytest tests/test_api.py (exit 1) (seen 3x)",
        "test failed: python -m pytest tests/test_api.py (exit 1) (seen 2x)",
    ]
    assert [json.loads(r["metadata_json"])["occurrences"] for r in rows] == [3, 2]


def test_a_failure_finds_its_earlier_self_among_many_through_episodes_failure(engine: Engine) -> None:
    """The `(seen Nx)` lookup walks episodes_failure (schema 14) by summary, not every failure of the
    session newest first; a summary that only shares the failure's prefix is never bumped in its place."""
    for n in range(30):
        engine.log_event("cmd", command=f"pytest tests/test_{n}.py", exit_code=1, stderr="boom")
    statements: list[str] = []
    engine.conn.set_trace_callback(statements.append)
    try:
        for command in ("pytest tests/test_1.py", "pytest tests/test_1.py", "pytest tests/test_1.py -x"):
            engine.log_event("cmd", command=command, exit_code=1, stderr="boom")
    finally:
        engine.conn.set_trace_callback(None)
    summaries = {r[0] for r in engine.conn.execute("SELECT summary FROM episodes WHERE summary LIKE '%test_1.py%'")}
    assert summaries == {
        "test failed: pytest tests/test_1.py (exit 1) (seen 3x)",
        "test failed: pytest tests/test_1.py -x (exit 1)",
    }
    lookups = [s for s in statements if s.lstrip().startswith("SELECT id, metadata_json")]
    plans = [d for s in lookups for *_, d in engine.conn.execute("EXPLAIN QUERY PLAN " + s)]
    assert len(lookups) == 3 and plans and all("episodes_failure" in d for d in plans if "episodes" in d)


def test_secrets_are_redacted_before_storage(live: Engine, repo: Repo, nojq_path: str) -> None:
    """Tokens in commands and outputs never reach the store."""
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"
    run_hook(
        "cortex-capture.sh",
        bash_payload(
            repo,
            f"GITHUB_TOKEN={secret} git push --token sk-ant-abcdefghijklmnop0123",
            failed=True,
            error=f"fatal: auth failed for {secret}\nexit status 128",
        ),
        nojq_path,
    )
    live.flush_spool()
    dump = "\n".join(live.conn.iterdump())
    assert secret not in dump and "sk-ant-abcdefghijklmnop0123" not in dump
    assert "[REDACTED]" in dump


def test_subagent_activity_lands_in_a_child_session(live: Engine, repo: Repo, nojq_path: str) -> None:
    """A payload carrying agent_id files under its own session, parented, and never rotates the primary."""
    repo.write("docs/plan.md", "plan\n")
    primary = live.current_session()["id"]
    run_hook(
        "cortex-capture.sh",
        read_payload(repo, "docs/plan.md", "plan\n", agent=("agent-7", "general-purpose"), cwd=repo.path / "docs"),
        nojq_path,
    )
    live.flush_spool()
    child = live.conn.execute("SELECT * FROM sessions WHERE agent_id='agent-7'").fetchone()
    assert (child["parent_session_id"], child["agent_type"], child["scope_key"]) == (
        primary,
        "general-purpose",
        live.scope.key,
    )
    assert live.current_session()["id"] == primary
    [verdict] = live.read_ledger(["docs/plan.md"])
    assert (verdict.verdict, verdict.recorded_by) == ("unchanged-since", "read by subagent general-purpose")
    assert "(read by subagent general-purpose)" in verdict.line()


def test_scope_change_rotates_the_primary(live: Engine, repo: Repo, tmp_path: Path) -> None:
    """The same host session working in another worktree gets a new primary; the old one ends."""
    other = tmp_path / "wt2"
    repo.git("worktree", "add", "-q", "-b", "side", str(other))
    first = live.current_session()["id"]
    (runtime_dir(repo.path) / SPOOL).write_text(
        json.dumps({"v": 1, "t": 1785700000, "p": {**bash_payload(repo, "ls"), "cwd": str(other)}}) + "\n"
    )
    live.flush_spool()
    rows = live.conn.execute("SELECT id, status, scope_key FROM sessions WHERE parent_session_id IS NULL").fetchall()
    assert {r["id"]: r["status"] for r in rows}[first] == "ended"
    assert [r["scope_key"].endswith(":side") for r in rows if r["status"] == "active"] == [True]


def test_read_ledger_verdicts(live: Engine, repo: Repo) -> None:
    """Four verdicts, decided by re-hashing: never by mtime, and uncertainty is always a miss."""
    files = {
        "same.py": "a\n",
        "touched.py": "b\n",
        "changed.py": "c\n",
        "gone.py": "d\n",
        "mine.py": "e\n",
        "dir.py": "f\n",
    }
    for rel, body in files.items():
        repo.write(rel, body)
    lines = [
        json.dumps({"v": 1, "t": 1785700000, "p": read_payload(repo, rel, body, tool_use=f"r-{rel}")})
        for rel, body in files.items()
    ]
    edit = {
        "session_id": "host-1",
        "cwd": str(repo.path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_use_id": "e-1",
        "tool_input": {"file_path": str(repo.path / "mine.py")},
    }
    lines.append(json.dumps({"v": 1, "t": 1785700005, "p": edit}))
    (runtime_dir(repo.path) / SPOOL).write_text("\n".join(lines) + "\n")
    live.flush_spool()
    os.utime(repo.path / "touched.py", (1, 1))
    (repo.path / "changed.py").write_text("C\n")
    (repo.path / "gone.py").unlink()
    (repo.path / "mine.py").write_text("E\n")
    (repo.path / "dir.py").unlink()
    (repo.path / "dir.py").mkdir()
    verdicts = {
        v.path: (v.verdict, v.detail)
        for v in live.read_ledger(["same.py", "touched.py", "changed.py", "gone.py", "mine.py", "dir.py", "never.py"])
    }
    assert verdicts == {
        "same.py": ("unchanged-since", None),
        "touched.py": ("unchanged-since", None),
        "changed.py": ("changed-since", None),
        "gone.py": ("changed-since", "missing"),
        "mine.py": ("edited-by-you-since", None),
        "dir.py": ("changed-since", "unverifiable"),
        "never.py": ("missing", None),  # never read and not there (not `unread`)
    }


def test_payload_content_closes_the_flush_window(live: Engine, repo: Repo) -> None:
    """A file changed between the read and the flush is judged against what the read returned."""
    repo.write("cfg.py", "NEW = 2\n")
    (runtime_dir(repo.path) / SPOOL).write_text(
        json.dumps({"v": 1, "t": 1785700000, "p": read_payload(repo, "cfg.py", "OLD = 1\n")}) + "\n"
    )
    live.flush_spool()
    assert live.read_ledger(["cfg.py"])[0].verdict == "changed-since"


def test_partial_read_hashes_the_file(live: Engine, repo: Repo) -> None:
    """A read of a slice carries no whole content: the file's bytes are digested instead."""
    repo.write("big.py", "line\n" * 10)
    payload = read_payload(repo, "big.py", "line\n" * 3)
    payload["tool_input"]["limit"] = 3
    payload["tool_response"]["file"].update(numLines=3, totalLines=10)
    (runtime_dir(repo.path) / SPOOL).write_text(json.dumps({"v": 1, "t": 1785700000, "p": payload}) + "\n")
    live.flush_spool()
    row = live.conn.execute("SELECT source FROM content_digests WHERE path='big.py'").fetchone()
    assert row["source"] == "file"
    assert live.read_ledger(["big.py"])[0].verdict == "unchanged-since"


def test_stop_hook_flushes_through_the_cli(live: Engine, repo: Repo, nojq_path: str, tmp_path: Path) -> None:
    """The Stop hook runs `cortex flush-spool` in the worktree; the spool is empty afterwards."""
    run_hook("cortex-capture.sh", bash_payload(repo, "git status"), nojq_path)
    wrapper = tmp_path / "cortex-bin"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m cortex_engine.adapters.cli "$@"\n')
    wrapper.chmod(0o755)
    env = {
        "CORTEX_BIN": str(wrapper),
        "CORTEX_HOME": os.environ["CORTEX_HOME"],
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }
    done = run_hook(
        "cortex-end-of-turn.sh",
        {"session_id": "host-1", "cwd": str(repo.path), "hook_event_name": "Stop"},
        nojq_path + os.pathsep + "/usr/bin:/bin",
        extra_env=env,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    assert not (runtime_dir(repo.path) / SPOOL).exists()
    conn = sqlite3.connect(live.identity.db_path)
    assert conn.execute("SELECT COUNT(*) FROM command_runs").fetchone()[0] == 1
    conn.close()


def test_inject_header_cold_start_then_brief(repo: Repo, make_engine) -> None:
    """SessionStart on a new repository prints nothing and engages; with memory it prints the brief."""
    env = {**os.environ, "CORTEX_NOW": "2026-08-02T18:05:00Z"}
    cmd = [sys.executable, "-m", "cortex_engine.adapters.cli", "inject-header", "--quiet"]
    payload = json.dumps({"session_id": "host-9", "cwd": str(repo.path), "hook_event_name": "SessionStart"})
    cold = subprocess.run(cmd, input=payload, capture_output=True, text=True, env=env, cwd="/")
    assert (cold.returncode, cold.stdout) == (0, "")
    assert (runtime_dir(repo.path) / "engaged").is_file()
    repo.write("src/store.py", "S = 1\n")
    make_engine(repo.path).note("decision", "open the store with WAL", "store")
    (runtime_dir(repo.path) / SPOOL).write_text(
        json.dumps({"v": 1, "t": 1785700000, "p": read_payload(repo, "src/store.py", "S = 1\n", session="host-9")})
        + "\n"
    )
    warm = subprocess.run(cmd, input=payload, capture_output=True, text=True, env=env, cwd="/")
    assert warm.returncode == 0
    lines = warm.stdout.strip().split("\n")
    assert lines[0] == "Cortex memory (main):"
    assert lines[1].endswith("decision: [store] open the store with WAL")
    assert lines[2] == "- resume: Read src/store.py"
    assert lines[3] == "- read in this scope, still unchanged: src/store.py"
    assert lines[-1] == "More: cortex_recall(topic)."


def test_cortex_log_captures_through_the_same_replay(live: Engine, repo: Repo) -> None:
    """`cortex log cmd` files a failing test run as a failure episode, like the hooks do."""
    assert live.log_event("cmd", command="pytest tests/test_x.py", exit_code=2, stderr="E assert 1 == 2")
    assert (
        live.conn.execute("SELECT summary FROM episodes").fetchone()[0]
        == "test failed: pytest tests/test_x.py (exit 2)"
    )
    with pytest.raises(Exception, match="needs --desc"):
        live.log_event("agent")


def test_project_state_outside_git_folds_older_sessions(tmp_path: Path, make_engine, clock) -> None:
    """Outside git, more than five summarised sessions fold into one project-state item."""
    plain = tmp_path / "plain"
    plain.mkdir()
    engine = make_engine(plain)
    for n in range(7):
        engine.start_session(f"host-{n}")
        engine.note("insight", f"observation number {n} about the parser")
        clock.advance(hours=1)
    engine.start_session("host-last")
    text = engine.conn.execute("SELECT text FROM memory_items WHERE kind='project_snapshot'").fetchone()[0]
    assert text.startswith("Earlier sessions:\n- Noted insight")
    assert "Active notes:\n- insight: observation number 6 about the parser" in text


def test_transcript_fallback_records_a_failure_the_host_did_not_send(live: Engine, repo: Repo, tmp_path: Path) -> None:
    """Without PostToolUseFailure, the turn's transcript still turns a failed test run into a failure episode,
    once; a failure the spool already recorded is not recorded again."""
    from cortex_engine.adapters.hookentry import run

    transcript = tmp_path / "transcript.jsonl"
    rows = []
    for n, command in enumerate(("python -m pytest tests/test_api.py", "npm test")):
        rows.append(
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": command}}
                    ],
                },
            }
        )
        rows.append(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"toolu_{n}",
                            "is_error": True,
                            "content": "Exit code 1\nFAILED",
                        }
                    ],
                },
            }
        )
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (runtime_dir(repo.path) / SPOOL).write_text(
        json.dumps({"v": 1, "t": 1785700000, "p": {**bash_payload(repo, "npm test", failed=True, tool_use="toolu_1")}})
        + "\n"
    )
    stop = {
        "session_id": "host-1",
        "cwd": str(repo.path),
        "hook_event_name": "Stop",
        "transcript_path": str(transcript),
        "stop_hook_active": False,
    }
    run("end-of-turn", stop)
    run("end-of-turn", stop)
    summaries = sorted(r[0] for r in live.conn.execute("SELECT summary FROM episodes WHERE kind='command_failure'"))
    assert summaries == ["test failed: npm test (exit 1)", "test failed: python -m pytest tests/test_api.py (exit 1)"]
    assert live.conn.execute("SELECT COUNT(*) FROM command_runs").fetchone()[0] == 2


def test_deleting_a_failure_item_deletes_its_episode(live: Engine, repo: Repo) -> None:
    """A deleted failure does not come back at its next occurrence as `(seen 2x)`: the episode goes with it."""
    live.log_event("cmd", command="pytest tests/test_x.py", exit_code=1)
    item = live.conn.execute("SELECT id FROM memory_items WHERE kind='episode:command_failure'").fetchone()["id"]
    assert live.delete_memory(item, yes=True).deleted
    live.log_event("cmd", command="pytest tests/test_x.py", exit_code=1)
    assert [r[0] for r in live.conn.execute("SELECT summary FROM episodes")] == [
        "test failed: pytest tests/test_x.py (exit 1)"
    ]
