"""A person at a real terminal: the `cortex` CLI run on a pseudo-terminal, answering its confirmation prompt.

The output is read until the prompt appears (a bounded `select` loop, no sleeping); the answer is the code the
prompt shows (or a wrong one), typed after the prompt, as a person would.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .conftest import Run

PROMPT = re.compile(rb"Type ([a-z]{4}) and press Enter to ([^\n]*?) \(anything else cancels\): ")
READ_TIMEOUT_S = 60


def _read_until(master: int, buffer: bytearray, pattern: re.Pattern[bytes] | None) -> re.Match[bytes] | None:
    """Read the terminal into `buffer` until `pattern` matches (its match) or the process closes it (None)."""
    while True:
        if pattern is not None:
            found = pattern.search(buffer)
            if found:
                return found
        ready, _, _ = select.select([master], [], [], READ_TIMEOUT_S)
        assert ready, f"no output for {READ_TIMEOUT_S} s; so far: {bytes(buffer)!r}"
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed its side
            return None
        if not chunk:
            return None
        buffer += chunk


def at_terminal(
    cwd: Path,
    *args: str,
    answer: str | None = "code",
    env: Mapping[str, str] | None = None,
    now: str | None = "2026-08-02T18:00:00Z",
) -> tuple[Run, str | None, str]:
    """Run `cortex ARGS` with stdin, stdout and stderr on a pseudo-terminal.

    `answer`: "code" types the code the prompt shows; any other string is typed instead; None types nothing (the
    command must not prompt). Returns the run (`out` is everything the terminal showed, `err` empty), the
    prompt's action words (None when no prompt appeared) and what the terminal showed after the answer.
    """
    base = {**os.environ, "PYTHONIOENCODING": "utf-8", "TERM": "dumb", **(env or {})}
    if now is not None:
        base.setdefault("CORTEX_NOW", now)
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cortex_engine.adapters.cli", *args],
            cwd=cwd,
            env=base,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
    finally:
        os.close(slave)
    buffer = bytearray()
    action = None
    mark = 0
    try:
        if answer is not None:
            prompt = _read_until(master, buffer, PROMPT)
            if prompt is not None:
                action = prompt.group(2).decode("utf-8")
                typed = prompt.group(1).decode("ascii") if answer == "code" else answer
                os.write(master, typed.encode("utf-8") + b"\n")
                mark = prompt.end()
        _read_until(master, buffer, None)
        code = proc.wait(timeout=READ_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)

    def text(raw: bytes) -> str:
        return raw.decode("utf-8", "replace").replace("\r\n", "\n")

    return Run(code, text(bytes(buffer)), ""), action, text(bytes(buffer[mark:]))


def json_shown(tail: str) -> Any:
    """The JSON document a `--json` run printed on the terminal after the prompt (the typed answer echoed first)."""
    return json.loads(tail[tail.index("{") :])
