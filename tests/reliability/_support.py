"""Helpers shared by the reliability tests: hook runs under bash, worker processes, spool lines, store checks."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import Repo, git, tool_path

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ROOT / "hooks"
HOOK_TIMEOUT = 60
"""Claude Code's own hook timeout: a hook still running then is killed (here: the test fails). Not a speed
check: tests assert what a hook did, and its speed is a figure in bench/."""
COUNTED_TABLES = (
    "notes",
    "memory_items",
    "events",
    "command_runs",
    "episodes",
    "token_ledger",
    "content_digests",
    "spool_seen",
    "sessions",
)


def hook_path(tmp: Path) -> str:
    """A PATH with only what the hooks may use (cat, tr, du, mkdir, date, nohup): no jq, no python."""
    return tool_path(tmp / "hook-bin")


@dataclass
class HookRun:
    """One hook run: exit code, output and how long it took."""

    code: int
    stdout: bytes
    stderr: bytes
    seconds: float


def run_hook(
    script: str,
    body: bytes | str | dict,
    path_env: str,
    *,
    args: tuple[str, ...] = (),
    extra_env: dict[str, str] | None = None,
) -> HookRun:
    """Run a hook template under bash exactly as the host does: the payload on stdin."""
    data = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode()
    env = {"PATH": path_env, "HOME": os.environ["HOME"], **(extra_env or {})}
    started = time.monotonic()
    done = subprocess.run(
        [shutil.which("bash") or "/bin/bash", str(HOOKS / script), *args],
        input=data,
        env=env,
        capture_output=True,
        timeout=HOOK_TIMEOUT,
    )
    return HookRun(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def spool_line(payload: object, t: object = 1785700000.5) -> str:
    """A spool line as the capture hook writes it: `{"v":1,"t":<epoch>,"p":<payload>}`."""
    return json.dumps({"v": 1, "t": t, "p": payload})


def worker(role: str, spec: dict, *, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start `python -m tests.reliability.workers <role>` with the spec on stdin (stdout/stderr captured)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.reliability.workers", role],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(spec).encode())
    proc.stdin.close()
    proc.stdin = None  # delivered and closed: finish()'s communicate() must not touch it again
    return proc


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, object, str]:
    """Wait for a worker (bounded): its exit code, its JSON result (None if it printed none) and its stderr.

    communicate() drains both pipes while waiting (a worker that prints past the pipe buffer cannot block)
    and closes them, so no file handle outlives the worker.
    """
    try:
        raw_out, raw_err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    out, err = raw_out.decode(), raw_err.decode()
    lines = [line for line in out.splitlines() if line.strip()]
    return proc.returncode, (json.loads(lines[-1]) if lines else None), err


def counts(db: Path) -> dict[str, int]:
    """Row counts of the tables that must never double-book."""
    conn = sqlite3.connect(db)
    try:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in COUNTED_TABLES}
    finally:
        conn.close()


def assert_intact(db: Path) -> None:
    """`PRAGMA integrity_check` is ok, no foreign key dangles, and the FTS index matches its table."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("INSERT INTO memory_items_fts(memory_items_fts) VALUES ('integrity-check')")
    finally:
        conn.close()


def add_worktree(repo: Repo, path: Path, branch: str) -> Path:
    """A second worktree of `repo` on a new branch."""
    git(repo.path, "worktree", "add", "-q", "-b", branch, str(path))
    return path


__all__ = [
    "ROOT",
    "HOOKS",
    "HOOK_TIMEOUT",
    "HookRun",
    "add_worktree",
    "assert_intact",
    "counts",
    "finish",
    "hook_path",
    "run_hook",
    "spool_line",
    "worker",
]
