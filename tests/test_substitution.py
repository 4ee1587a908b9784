"""Verified read substitution: opt-in, byte-identical only, once per turn, credited only with evidence."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cortex_engine.capture.flush import SPOOL, runtime_dir
from cortex_engine.engine import Engine

from .conftest import Repo

HOOKS = Path(__file__).resolve().parent.parent / "hooks"
HOST = "claude-1"


def read_entry(repo: Repo, rel: str, *, t: float, limit: int | None = None, host: str = HOST) -> dict:
    body = (repo.path / rel).read_text()
    tool_input = {"file_path": str(repo.path / rel)}
    lines = body.count("\n")
    if limit:
        tool_input["limit"] = limit
    return {
        "v": 1,
        "t": t,
        "p": {
            "session_id": host,
            "cwd": str(repo.path),
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "tool_use_id": f"r{t}",
            "tool_input": tool_input,
            "tool_response": {
                "type": "text",
                "file": {
                    "filePath": str(repo.path / rel),
                    "content": body,
                    "numLines": min(lines, limit or lines),
                    "startLine": 1,
                    "totalLines": lines,
                },
            },
        },
    }


def bash_entry(repo: Repo, command: str, *, t: float) -> dict:
    return {
        "v": 1,
        "t": t,
        "p": {
            "session_id": HOST,
            "cwd": str(repo.path),
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_use_id": f"b{t}",
            "tool_input": {"command": command},
            "tool_response": {"stdout": "", "stderr": ""},
        },
    }


def pre_read(repo: Repo, rel: str, *, host: str = HOST, tool_use: str = "pre-1", **extra: object) -> str:
    payload = {
        "session_id": host,
        "cwd": str(repo.path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_use_id": tool_use,
        "tool_input": {"file_path": str(repo.path / rel), **extra},
    }
    done = subprocess.run(
        [shutil.which("bash"), str(HOOKS / "cortex-substitute.sh")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "HOME": os.environ["HOME"]},
    )
    assert (done.returncode, done.stderr) == (0, "")
    return done.stdout


def turn(engine: Engine, repo: Repo, *entries: dict) -> None:
    """One turn's spool, flushed as the Stop hook does."""
    (runtime_dir(repo.path) / SPOOL).write_text("".join(json.dumps(e) + "\n" for e in entries))
    engine.flush_spool(turn_end=True)
    marker = runtime_dir(repo.path) / "turn-reads"
    if marker.exists():
        marker.write_text("")


@pytest.fixture
def live(repo: Repo, make_engine) -> Engine:
    repo.write("src/store.py", "def open_store():\n    return None\n" * 20)
    repo.commit("store")
    engine = make_engine(repo.path)
    engine.start_session(HOST)
    return engine


def test_off_by_default(live: Engine, repo: Repo) -> None:
    """Without `substitution on`, a re-read is never touched."""
    turn(live, repo, read_entry(repo, "src/store.py", t=1785700000))
    assert live.substitution("status") == "off"
    assert pre_read(repo, "src/store.py") == ""


def test_substitutes_a_byte_identical_reread_once_per_turn_and_credits_it(live: Engine, repo: Repo) -> None:
    """The second read of an unchanged file is one line; reading it again in the turn gets the real bytes."""
    assert live.substitution("on") == "on"
    turn(live, repo, read_entry(repo, "src/store.py", t=1785700000))
    out = json.loads(pre_read(repo, "src/store.py"))["hookSpecificOutput"]
    size = (repo.path / "src/store.py").stat().st_size
    assert out["permissionDecision"] == "deny"
    assert out["permissionDecisionReason"] == (
        f"[cortex] substituted: {repo.path / 'src/store.py'} is byte-identical to the copy already in this session's "
        "context (verified by sha256 just now). Full content "
        f"~{(size + 3) // 4} tokens. Read it again to get the real text."
    )
    assert pre_read(repo, "src/store.py", tool_use="pre-2") == ""
    live.flush_spool(turn_end=True)
    rows = live.conn.execute(
        "SELECT direction, tokens, evidence_kind, evidence_ref, evidence_size FROM token_ledger "
        "WHERE channel='substitution' ORDER BY direction"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        ("injected", (len(out["permissionDecisionReason"]) + 3) // 4, "read", "src/store.py", size),
        ("saved", (size + 3) // 4, "read", "src/store.py", size),
    ]
    report = live.stats()
    assert report["scope"]["saved"] == (size + 3) // 4


@pytest.mark.parametrize("change", ["same_size", "grown"])
def test_a_changed_file_is_never_substituted(live: Engine, repo: Repo, change: str) -> None:
    """Size and content are re-checked at that moment; any difference lets the Read run."""
    live.substitution("on")
    turn(live, repo, read_entry(repo, "src/store.py", t=1785700000))
    path = repo.path / "src/store.py"
    body = path.read_text()
    path.write_text(body.replace("None", "Nope") if change == "same_size" else body + "# more\n")
    assert pre_read(repo, "src/store.py") == ""


def test_a_command_after_the_read_in_its_turn_forfeits_the_refund(live: Engine, repo: Repo) -> None:
    """A command may rewrite files invisibly, so a read followed by one is not certified."""
    live.substitution("on")
    turn(live, repo, read_entry(repo, "src/store.py", t=1785700000), bash_entry(repo, "make fmt", t=1785700001))
    assert pre_read(repo, "src/store.py") == ""
    turn(live, repo, read_entry(repo, "src/store.py", t=1785700100))
    assert pre_read(repo, "src/store.py") != ""


def test_other_sessions_partial_reads_and_ranged_requests_pass_through(live: Engine, repo: Repo) -> None:
    """Another session never read it; a partial read is not the whole file; a ranged Read is never answered."""
    live.substitution("on")
    turn(live, repo, read_entry(repo, "src/store.py", t=1785700000))
    assert pre_read(repo, "src/store.py", host="claude-9") == ""
    assert pre_read(repo, "src/store.py", offset=10) == ""
    turn(live, repo, read_entry(repo, "src/store.py", t=1785700200, limit=5))
    assert pre_read(repo, "src/store.py") == ""


def test_a_new_session_start_ends_the_old_context(live: Engine, repo: Repo) -> None:
    """After SessionStart (including after a compaction), earlier reads are no longer in context."""
    live.substitution("on")
    turn(live, repo, read_entry(repo, "src/store.py", t=1785700000))
    live.start_session(HOST)
    assert pre_read(repo, "src/store.py") == ""
