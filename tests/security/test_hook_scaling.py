"""The capture and substitution hooks are linear in the payload, and back off when the store refuses (issue 11 §5).

Bash's `${payload//$'\n'/}` made pretty-printed JSON quadratic: 200 KB with 40,000 line breaks took 12 s and
1.25 MB never finished. Each shape of a 10 MB payload must now pass through a hook within 2 s.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from cortex_engine.capture.flush import FLUSH_AFTER, PAUSED, RUNTIME_CAP
from cortex_engine.engine import describe_store

from ..conftest import Repo, tool_path
from ..install_helpers import cortex, cortex_bin
from ..test_capture import run_hook
from .test_runtime_folder import session_start

MB10 = 10 * 1024 * 1024
HOOK_SECONDS = 2.0
"""The issue's bound for one hook run on 10 MB of any shape."""


def shaped(kind: str, cwd: Path) -> str:
    """A 10 MB PostToolUse payload of one shape, as the host would send it."""
    base = {"session_id": "host-1", "cwd": str(cwd), "hook_event_name": "PostToolUse", "tool_name": "Read",
            "tool_use_id": f"t-{kind}", "tool_input": {"file_path": str(cwd / "big.json")}}
    if kind == "pretty":  # about 1.3 million line breaks
        return json.dumps({**base, "tool_response": {"items": [{"k": i, "v": "abc"} for i in range(MB10 // 56)]}}, indent=2)
    if kind == "crlf":
        return shaped("pretty", cwd).replace("\n", "\r\n")
    if kind == "breaks":  # nothing but line breaks inside an array
        return json.dumps(base)[:-1] + ', "x": [' + "\n" * MB10 + "]}"
    if kind == "multibyte":
        return json.dumps({**base, "tool_response": {"content": "é€\"\\" * (MB10 // 8)}}, ensure_ascii=False)
    raise ValueError(kind)


@pytest.fixture
def live(repo: Repo) -> Repo:
    """An engaged worktree."""
    session_start(repo)
    return repo


@pytest.mark.parametrize("kind", ["pretty", "crlf", "breaks", "multibyte"])
def test_capture_hook_takes_10mb_of_any_shape_within_2s(live: Repo, tmp_path: Path, kind: str) -> None:
    """The payload lands whole (as one line of the same JSON) and quickly."""
    body = shaped(kind, live.path)
    start = time.monotonic()
    done = run_hook("cortex-capture.sh", body, tool_path(tmp_path / "hookbin"))
    elapsed = time.monotonic() - start
    assert done.returncode == 0 and done.stdout == b""
    assert elapsed < HOOK_SECONDS, f"{kind}: {elapsed:.2f}s"
    runtime = live.path / ".cortex"
    [line] = (runtime / "spool.jsonl").read_text().splitlines()
    entry = json.loads(line)
    stored = entry["p"] if "p" in entry else json.loads((runtime / "blobs" / entry["blob"]).read_bytes())
    assert stored == json.loads(body)


@pytest.mark.parametrize("kind", ["pretty", "multibyte"])
def test_substitution_hook_takes_10mb_within_2s(live: Repo, tmp_path: Path, kind: str) -> None:
    """A huge PreToolUse payload lets the Read run (prints nothing), quickly."""
    assert cortex(live.path, "substitution", "on").code == 0
    body = shaped(kind, live.path).replace('"PostToolUse"', '"PreToolUse"', 1)
    start = time.monotonic()
    done = run_hook("cortex-substitute.sh", body, tool_path(tmp_path / "hookbin"))
    elapsed = time.monotonic() - start
    assert (done.returncode, done.stdout) == (0, b"")
    assert elapsed < HOOK_SECONDS, f"{kind}: {elapsed:.2f}s"


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
    payload = {"session_id": "host-1", "cwd": str(live.path), "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_use_id": "t", "tool_input": {"command": "cat big"}, "tool_response": {"stdout": "z" * (3 * 2**20)}}
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
