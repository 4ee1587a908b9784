"""The TUI in a real terminal (a pty): what happens when that terminal goes away under it."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from .test_tui_behaviour import demo  # noqa: F401 - the seeded demo repository fixture


def _read_until(fd: int, needle: bytes, seconds: float) -> bytes:
    """Drain the terminal's output until `needle` shows (or the time is up): the app must never block on a write."""
    seen = b""
    deadline = time.monotonic() + seconds
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


def test_a_tui_whose_terminal_hangs_up_quits_instead_of_spinning(demo: Path) -> None:  # noqa: F811
    """A side terminal closed by the program that held its pty sends no SIGHUP to a process outside its session;
    the input thread then read end-of-file in a loop at a full core, for hours (seen at 36–58 % CPU on leftover
    TUIs). The TUI now notices the hang-up at its next terminal check (`TERMINAL_CHECK_SECONDS`) and quits; how
    soon is not asserted (a loaded machine would fail a clock), that it quits at all is."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "cortex_engine.adapters.cli"],
        cwd=demo,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    os.close(slave)
    try:
        painted = _read_until(master, b"Overview", 90)
        assert b"Overview" in painted and proc.poll() is None  # really running in the terminal
        os.close(master)
        assert proc.wait(timeout=30) is not None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
