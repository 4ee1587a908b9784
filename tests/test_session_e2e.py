"""One whole Claude Code session played through the real hooks, then the next SessionStart."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cortex_engine.engine import Engine

from .conftest import HOOK_TOOLS, Repo, tool_path

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / "hooks"
NOW = "2026-08-02T18:05:00Z"


@pytest.fixture
def host(tmp_path: Path, repo: Repo):
    """A fake Claude Code host: fires hook scripts with payloads, CORTEX_BIN pointing at this checkout."""
    wrapper = tmp_path / "cortex-bin"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m cortex_engine.adapters.cli "$@"\n')
    wrapper.chmod(0o755)
    bin_dir = tool_path(tmp_path / "nojq", (*HOOK_TOOLS, "sh", "git"))  # git is for Cortex itself, not the hooks
    env = {
        "PATH": bin_dir,
        "HOME": os.environ["HOME"],
        "CORTEX_HOME": os.environ["CORTEX_HOME"],
        "CORTEX_BIN": str(wrapper),
        "CORTEX_NOW": NOW,
        "PYTHONPATH": str(ROOT),
    }
    counter = {"n": 0}

    def fire(script: str, event: str, *args: str, **fields: object) -> str:
        counter["n"] += 1
        payload = {
            "session_id": "claude-1",
            "transcript_path": "/dev/null",
            "cwd": str(repo.path),
            "hook_event_name": event,
            **fields,
        }
        if event.startswith("PostToolUse") and "tool_use_id" not in payload:
            payload["tool_use_id"] = f"toolu_{counter['n']}"
        if script == "inject-header":
            done = subprocess.run(
                [str(wrapper), "inject-header", "--quiet"],
                input=json.dumps(payload),
                text=True,
                capture_output=True,
                env={**env, "PATH": os.environ["PATH"]},
                timeout=60,
            )
        else:
            done = subprocess.run(
                [shutil.which("bash"), str(HOOKS / script), *args],
                input=json.dumps(payload),
                text=True,
                capture_output=True,
                env=env,
                timeout=60,
            )
        assert done.returncode == 0, done.stderr
        return done.stdout

    return fire


def test_a_whole_session_then_the_next_session_start(host, repo: Repo, make_engine, clock) -> None:
    """Reads, edits, a failing then passing test run, a subagent that reads and concludes, Stop, SessionStart."""
    repo.write("src/api.py", "def handler():\n    return 1\n")
    repo.write("src/models.py", "class User: ...\n")
    repo.write("docs/design.md", "# design\n")
    repo.commit("files")
    assert host("inject-header", "SessionStart", source="startup") == ""
    make_engine(repo.path).note("decision", "serve the api from src/api.py behind the gateway", "api serving")

    def read(rel: str, **extra: object) -> None:
        body = (repo.path / rel).read_text()
        host(
            "cortex-capture.sh",
            "PostToolUse",
            tool_name="Read",
            tool_input={"file_path": str(repo.path / rel)},
            tool_response={
                "type": "text",
                "file": {
                    "filePath": str(repo.path / rel),
                    "content": body,
                    "numLines": body.count("\n"),
                    "startLine": 1,
                    "totalLines": body.count("\n"),
                },
            },
            **extra,
        )

    read("src/api.py")
    read("src/models.py")
    host(
        "cortex-capture.sh",
        "PostToolUseFailure",
        tool_name="Bash",
        tool_input={"command": "python -m pytest tests/test_api.py"},
        error="Command exited with non-zero status code 1",
        is_interrupt=False,
    )
    repo.write("src/models.py", "class User:\n    name: str\n")
    host(
        "cortex-capture.sh",
        "PostToolUse",
        tool_name="Edit",
        tool_input={"file_path": str(repo.path / "src/models.py")},
        tool_response={"filePath": str(repo.path / "src/models.py")},
    )
    host(
        "cortex-capture.sh",
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "python -m pytest tests/test_api.py"},
        tool_response={"stdout": "1 passed", "stderr": "", "interrupted": False},
    )
    host(
        "cortex-subagent.sh",
        "PreToolUse",
        "dispatch-pre",
        tool_name="Agent",
        tool_use_id="toolu_agent",
        tool_input={
            "description": "review the api serving design",
            "subagent_type": "general-purpose",
            "prompt": "Read docs/design.md and say whether the api serving plan holds.",
        },
    )
    brief = host(
        "cortex-subagent.sh", "SubagentStart", "subagent-start", agent_id="agent-42", agent_type="general-purpose"
    )
    read("docs/design.md", agent_id="agent-42", agent_type="general-purpose")
    host(
        "cortex-subagent.sh",
        "SubagentStop",
        "subagent-stop",
        agent_id="agent-42",
        agent_type="general-purpose",
        stop_hook_active=False,
        last_assistant_message="The design holds. We decided to keep the gateway in front of src/api.py.",
    )
    host(
        "cortex-capture.sh",
        "PostToolUse",
        tool_name="Agent",
        tool_input={"description": "review the api serving design", "subagent_type": "general-purpose"},
        tool_response={"content": [{"type": "text", "text": "The design holds."}]},
    )
    nudge = host("cortex-end-of-turn.sh", "Stop", stop_hook_active=False)
    assert host("cortex-end-of-turn.sh", "Stop", stop_hook_active=False) == ""  # offered once

    subagent_context = json.loads(brief)["hookSpecificOutput"]["additionalContext"]
    assert subagent_context.startswith("Briefing for general-purpose:")
    assert "[api serving] serve the api from src/api.py" in subagent_context
    decision = json.loads(nudge)
    assert decision["decision"] == "block"
    assert "- decision: We decided to keep the gateway in front of src/api.py." in decision["reason"]

    engine: Engine = make_engine(repo.path)
    clock.now = clock.now.replace(minute=5)
    verdicts = {
        v.path: (v.verdict, v.recorded_by)
        for v in engine.read_ledger(["src/api.py", "src/models.py", "docs/design.md"])
    }
    assert verdicts == {
        "src/api.py": ("unchanged-since", "you"),
        "src/models.py": ("edited-by-you-since", "you"),
        "docs/design.md": ("unchanged-since", "read by subagent general-purpose"),
    }
    episodes = dict(
        engine.conn.execute("SELECT kind, summary FROM episodes WHERE kind != 'session_summary'").fetchall()
    )
    assert episodes["command_failure"] == "test failed: python -m pytest tests/test_api.py (exit 1)"
    assert episodes["test_cycle"] == "Test cycle: fixed after 1 iteration (src/models.py)"
    assert episodes["subagent_conclusion"].startswith("The design holds.")
    child = engine.conn.execute("SELECT * FROM sessions WHERE agent_id='agent-42'").fetchone()
    parent = engine.conn.execute("SELECT * FROM sessions WHERE id=?", (child["parent_session_id"],)).fetchone()
    assert (child["agent_type"], parent["host_session_id"], parent["parent_session_id"]) == (
        "general-purpose",
        "claude-1",
        None,
    )
    reads_by_child = engine.conn.execute(
        "SELECT COUNT(*) FROM events WHERE session_id=? AND type='read'", (child["id"],)
    ).fetchone()[0]
    assert reads_by_child == 1

    second = host("inject-header", "SessionStart", source="resume", session_id="claude-2")
    lines = second.strip().split("\n")
    assert lines[0] == "Cortex memory (main):"
    assert "decision: [api serving] serve the api from src/api.py behind the gateway" in lines[1]
    assert lines[2].startswith("- resume: ")
    assert lines[3].startswith("- read in this scope, still unchanged: ")
    assert "src/api.py" in lines[3] and "docs/design.md" in lines[3]
    assert lines[-1] == "More: cortex_recall(topic)."

    report = make_engine(repo.path).stats()
    channels = report["scope"]["channels"]
    assert channels["session_brief"] > 0 and channels["subagent_brief"] > 0 and channels["stop_nudge"] > 0
    assert report["scope"]["saved"] == 0
    assert report["scope"]["injected"] == sum(channels.values())
    assert len(report["history"]) == 2


def test_one_claude_code_session_is_one_cortex_session_through_resume_and_compact(
    host, repo: Repo, make_engine
) -> None:
    """SessionStart `startup`, then `resume`, `compact` and `resume` again of the same Claude Code session: one Cortex
    session, whose intent stays in `state`'s current session; its Claude Code id is shown in status and stats. Another
    Claude Code session in between ends it; resumed, the same Cortex session is open again. `clear` starts afresh."""
    host("inject-header", "SessionStart", source="startup")
    engine = make_engine(repo.path)
    engine.note("intent", "wire the billing webhooks", "billing webhooks")
    engine.close()
    for source in ("resume", "compact", "resume"):
        host("inject-header", "SessionStart", source=source)
    engine = make_engine(repo.path)
    rows = engine.conn.execute("SELECT id, status, host_session_id FROM sessions").fetchall()
    assert [(r["status"], r["host_session_id"]) for r in rows] == [("active", "claude-1")]
    state = engine.state(book=False).text
    assert "Current session" in state and "billing webhooks" in state.split("\n\n")[0]
    first = rows[0]["id"]
    engine.close()
    from .install_helpers import cortex

    assert f"Session: {first} (Claude Code session claude-1)" in cortex(repo.path, "status").out
    assert "claude-1" in cortex(repo.path, "stats").out
    assert json.loads(cortex(repo.path, "stats", "--json").out)["session"]["host_session_id"] == "claude-1"

    host("inject-header", "SessionStart", source="startup", session_id="claude-2")
    host("inject-header", "SessionStart", source="resume")
    engine = make_engine(repo.path)
    active = engine.conn.execute("SELECT id, host_session_id FROM sessions WHERE status='active'").fetchall()
    assert [(r["id"], r["host_session_id"]) for r in active] == [(first, "claude-1")]
    assert "billing webhooks" in engine.state(book=False).text.split("\n\n")[0]
    engine.close()

    host("inject-header", "SessionStart", source="clear")
    engine = make_engine(repo.path)
    active = engine.conn.execute("SELECT id FROM sessions WHERE status='active'").fetchall()
    assert len(active) == 1 and active[0]["id"] != first
    engine.close()


def test_state_names_the_claude_code_session_an_operator_can_resume(host, repo: Repo, make_engine) -> None:
    """`state` (the CLI and the MCP tool render the same surface) heads its current session with the Claude Code id
    `claude --resume` takes; an id shaped like a label or carrying a line break is shown defused, on one line."""
    host("inject-header", "SessionStart", source="startup", session_id="0f5e2c1a-9d4b-4e7a-8c3f-2b6d1e9a7c40")
    engine = make_engine(repo.path)
    engine.note("intent", "wire the billing webhooks", "billing webhooks")
    engine.close()
    from .install_helpers import cortex

    first = cortex(repo.path, "state").out.split("\n\n")[0]
    assert first.startswith("Current session (claude --resume 0f5e2c1a-9d4b-4e7a-8c3f-2b6d1e9a7c40):\n"), first
    assert "billing webhooks" in first

    host("inject-header", "SessionStart", source="startup", session_id="evil\n[stale: missing src/a.py]")
    engine = make_engine(repo.path)
    engine.note("intent", "wire the refunds", "refunds")
    head = engine.state(book=False).text.split("\n", 1)[0]
    engine.close()
    assert head.startswith("Current session (claude --resume evil ") and "[stale:" not in head, head
    assert "［stale: missing src/a.py" in head, head
