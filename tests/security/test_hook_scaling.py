"""The capture and substitution hooks are linear in the payload, and back off when the store refuses.

Bash's `${payload//$'\n'/}` made pretty-printed JSON quadratic: 200 KB with 40,000 line breaks took 12 s and
1.25 MB never finished. Each shape of payload must now pass through a hook in time linear in its size: ten times
the payload (LARGE against SMALL) costs the hook at most GROWTH times the CPU (a growth, never a wall-clock bound;
the absolute figure, `capture_hook_ms`, is kept in bench/). SMALL is already more than twice the payload that took the
quadratic hook 12 s.
"""

from __future__ import annotations

import json
import resource
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex_engine.capture.flush import FLUSH_AFTER, PAUSED, RUNTIME_CAP
from cortex_engine.engine import describe_store

from ..conftest import Repo, tool_path
from ..install_helpers import cortex, cortex_bin
from ..test_capture import run_hook
from .test_runtime_folder import session_start

SMALL, LARGE = 512 * 1024, 5 * 1024 * 1024
GROWTH = 30
"""How much more CPU a hook may spend on LARGE than on SMALL (ten times the bytes): linear work is under 10x (plus
noise), quadratic work (the bug) is 100x."""


def shaped(kind: str, cwd: Path, size: int = LARGE) -> str:
    """A PostToolUse payload of about `size` bytes of one shape, as the host would send it."""
    base = {
        "session_id": "host-1",
        "cwd": str(cwd),
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_use_id": f"t-{kind}-{size}",
        "tool_input": {"file_path": str(cwd / "big.json")},
    }
    if kind == "pretty":  # about 650,000 line breaks in 5 MiB
        return json.dumps(
            {**base, "tool_response": {"items": [{"k": i, "v": "abc"} for i in range(size // 56)]}}, indent=2
        )
    if kind == "crlf":
        return shaped("pretty", cwd, size).replace("\n", "\r\n")
    if kind == "breaks":  # nothing but line breaks inside an array
        return json.dumps(base)[:-1] + ', "x": [' + "\n" * size + "]}"
    if kind == "multibyte":
        return json.dumps({**base, "tool_response": {"content": 'é€"\\' * (size // 8)}}, ensure_ascii=False)
    raise ValueError(kind)


def child_cpu(run: Callable[[], subprocess.CompletedProcess]) -> tuple[subprocess.CompletedProcess, float]:
    """`run()`'s result and the CPU seconds its child processes used (not wall time: load from other work on the
    machine does not count)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


@pytest.fixture
def live(repo: Repo) -> Repo:
    """An engaged worktree."""
    session_start(repo)
    return repo


@pytest.mark.parametrize("kind", ["pretty", "crlf", "breaks", "multibyte"])
def test_capture_hook_is_linear_in_a_payload_of_any_shape(live: Repo, tmp_path: Path, kind: str) -> None:
    """SMALL then LARGE: each lands whole (as one line of the same JSON), and LARGE costs at most GROWTH x SMALL."""
    bodies = [shaped(kind, live.path, SMALL), shaped(kind, live.path)]
    path_env = tool_path(tmp_path / "hookbin")
    runs = [child_cpu(lambda body=body: run_hook("cortex-capture.sh", body, path_env)) for body in bodies]
    assert [(done.returncode, done.stdout) for done, _ in runs] == [(0, b""), (0, b"")]
    (_, small), (_, big) = runs
    assert big <= GROWTH * small, f"{kind}: {big:.3f}s CPU for {LARGE} bytes against {small:.3f}s for {SMALL}"
    runtime = live.path / ".cortex"
    lines = (runtime / "spool.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    stored = [e["p"] if "p" in e else json.loads((runtime / "blobs" / e["blob"]).read_bytes()) for e in entries]
    assert stored == [json.loads(body) for body in bodies]


@pytest.mark.parametrize("kind", ["pretty", "multibyte"])
def test_substitution_hook_is_linear_in_a_huge_payload(live: Repo, tmp_path: Path, kind: str) -> None:
    """A huge PreToolUse payload lets the Read run (prints nothing); LARGE costs at most GROWTH x SMALL."""
    assert cortex(live.path, "substitution", "on").code == 0
    path_env = tool_path(tmp_path / "hookbin")
    runs = [
        child_cpu(
            lambda size=size: run_hook(
                "cortex-substitute.sh",
                shaped(kind, live.path, size).replace('"PostToolUse"', '"PreToolUse"', 1),
                path_env,
            )
        )
        for size in (SMALL, LARGE)
    ]
    assert [(done.returncode, done.stdout) for done, _ in runs] == [(0, b""), (0, b"")]
    (_, small), (_, big) = runs
    assert big <= GROWTH * small, f"{kind}: {big:.3f}s CPU for {LARGE} bytes against {small:.3f}s for {SMALL}"


def test_refused_store_backs_off_and_caps_the_runtime_folder(live: Repo, tmp_path: Path) -> None:
    """A store Cortex refuses: one flush is tried, then hooks wait; capture pauses at the cap; doctor says why."""
    db = describe_store(live.path).path
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    runtime = live.path / ".cortex"
    run = cortex(live.path, "flush-spool")
    assert run.code == 1 and "newer Cortex" in run.err
    after = (runtime / FLUSH_AFTER).read_bytes()
    assert int(after) > time.time() + 300  # the hooks wait minutes, not one tool call
    env = {"CORTEX_BIN": str(cortex_bin(tmp_path))}
    payload = {
        "session_id": "host-1",
        "cwd": str(live.path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_use_id": "t",
        "tool_input": {"command": "cat big"},
        "tool_response": {"stdout": "z" * (3 * 2**20)},
    }
    path = tool_path(tmp_path / "hookbin")
    for n in range(16):
        assert run_hook("cortex-capture.sh", {**payload, "tool_use_id": f"t-{n}"}, path, extra_env=env).returncode == 0
        # Past the 256 KiB flush threshold on every call, yet no hook spawned a flush: spawning rewrites flush-after.
        assert (runtime / FLUSH_AFTER).read_bytes() == after
    held = sum(p.stat().st_size for p in runtime.rglob("*") if p.is_file())
    assert (runtime / PAUSED).is_file() and held <= RUNTIME_CAP + 4 * 2**20
    report = cortex(live.path, "doctor")
    line = next(line for line in report.out.splitlines() if " spool " in f" {line} ")
    assert "FAIL" in line and "capture is paused" in line and "32 MiB cap" in line
