"""Fixtures for the security tests: a fake Claude Code host firing the real hook scripts, a real MCP client."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from ..conftest import HOOK_TOOLS, Repo, Run, run_in_process, tool_path

ROOT = Path(__file__).resolve().parent.parent.parent
HOOKS = ROOT / "hooks"
NOW = "2026-08-02T18:05:00Z"
T = TypeVar("T")


class Host:
    """A fake Claude Code host: runs hook scripts under bash (no jq, no python on PATH) and `cortex` commands."""

    def __init__(self, repo: Repo, tmp_path: Path) -> None:
        self.repo = repo
        self.wrapper = tmp_path / "cortex-bin"
        self.wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m cortex_engine.adapters.cli "$@"\n')
        self.wrapper.chmod(0o755)
        bin_dir = tool_path(tmp_path / "hooktools", (*HOOK_TOOLS, "sh", "git"))
        self.env = {
            "PATH": bin_dir,
            "HOME": os.environ["HOME"],
            "CORTEX_HOME": os.environ["CORTEX_HOME"],
            "CORTEX_BIN": str(self.wrapper),
            "CORTEX_NOW": NOW,
            "PYTHONPATH": str(ROOT),
        }
        self.count = 0

    def payload(self, event: str, **fields: object) -> str:
        """A hook payload built like Claude Code's, as the one line of JSON a hook reads."""
        self.count += 1
        payload = {
            "session_id": "claude-1",
            "transcript_path": "/dev/null",
            "cwd": str(self.repo.path),
            "hook_event_name": event,
            **fields,
        }
        if event.startswith("PostToolUse") and "tool_use_id" not in payload:
            payload["tool_use_id"] = f"toolu_{self.count}"
        return json.dumps(payload)

    def fire(self, script: str, event: str, *args: str, **fields: object) -> str:
        """Run one hook script with a payload built like Claude Code's; returns its stdout (it must exit 0)."""
        done = subprocess.run(
            [shutil.which("bash") or "bash", str(HOOKS / script), *args],
            input=self.payload(event, **fields),
            text=True,
            capture_output=True,
            env=self.env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def cortex(self, *args: str, stdin: str | None = None) -> Run:
        """Run `cortex` in the repository with the host's environment, in this process (the hooks above start the
        real executable; `run_in_process` holds the two to the same output)."""
        env = {key: value for key, value in self.env.items() if key != "PATH"}
        return run_in_process(self.repo.path, list(args), env, (stdin or "").encode())

    def hook(self, action: str, event: str, **fields: object) -> str:
        """`cortex hook ACTION` with the payload a hook script pipes to it, run in this process (what a script adds
        on top, reading the payload and finding the runtime folder, is `fire`'s); returns its stdout."""
        run = self.cortex("hook", action, stdin=self.payload(event, **fields))
        assert run.code == 0, run.err
        return run.out

    def session_start(self) -> str:
        """SessionStart through `cortex inject-header --quiet` (engages capture)."""
        payload = {
            "session_id": "claude-1",
            "transcript_path": "/dev/null",
            "cwd": str(self.repo.path),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
        run = self.cortex("inject-header", "--quiet", stdin=json.dumps(payload))
        assert run.code == 0, run.err
        return run.out


@pytest.fixture
def host(repo: Repo, tmp_path: Path) -> Host:
    """A fake host on the `repo` fixture."""
    return Host(repo, tmp_path)


def serve(repo: Repo, tmp_path: Path, script: Callable[[ClientSession], Awaitable[T]]) -> T:
    """Run `script` against a real `cortex serve` subprocess in the repository, over stdio."""

    async def main() -> T:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "cortex_engine.adapters.cli", "serve"],
            cwd=str(repo.path),
            env={
                "HOME": os.environ["HOME"],
                "CORTEX_HOME": os.environ["CORTEX_HOME"],
                "CORTEX_NOW": NOW,
                "PYTHONPATH": str(ROOT),
            },
        )
        with (tmp_path / "serve.stderr").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await script(session)

    return anyio.run(main)


def text_of(result: Any) -> str:
    """The text of an MCP tool result."""
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
