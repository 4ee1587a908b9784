"""Operator TUI latency on a store of N notes: `cortex` start to first paint, and an external write to its appearance.

Usage: python bench/bench_tui.py [--items 10000] [--writes 5]

`cortex` runs in a pseudo-terminal (120×40), exactly as an operator starts it; the bench reads what it paints.
  first_paint_ms   process start → the first frame (the header is on screen)
  data_paint_ms    process start → the overview filled from the store (the brief's "tokens" line painted)
  live_ms          another engine commits a contest → its subject is painted (watchdog; poll fallback 1 s)
Also timed in-process: one overview load and one freshness check. Prints one JSON object; nothing is asserted.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth  # noqa: E402

NOW_AT = synth.NOW
NOW = synth.NOW.strftime("%Y-%m-%dT%H:%M:%SZ")
SIZE = (40, 120)


class Terminal:
    """`cortex` in a pseudo-terminal; `wait_for` reads its output until a marker is painted."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        """Start the process (the clock starts just before the spawn)."""
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[0], SIZE[1], 0, 0))
        self.master = master
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-m", "cortex_engine.cli"], cwd=cwd, env=env, stdin=slave,
                                     stdout=slave, stderr=slave, start_new_session=True)
        os.close(slave)
        self.buffer = b""

    def wait_for(self, marker: bytes, timeout: float = 30.0, *, since: int = 0) -> float:
        """Seconds (perf_counter) at which `marker` first appears in the output after byte `since`."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if marker in self.buffer[since:]:
                return time.perf_counter()
            ready, _, _ = select.select([self.master], [], [], 0.01)
            if ready:
                try:
                    self.buffer += os.read(self.master, 65536)
                except OSError:
                    break
        raise TimeoutError(f"{marker!r} not painted within {timeout}s")

    def close(self) -> None:
        """Quit the app and reap it."""
        try:
            os.write(self.master, b"q")
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=5)
        os.close(self.master)


def in_process(repo: Path, home: Path) -> dict[str, float]:
    """One overview load and one freshness check, in-process, as the app's workers run them."""
    from cortex_engine.engine import Engine
    from cortex_engine.operator import hooks_installed
    from cortex_tui.data.snapshot import load_snapshot

    with Engine(repo, home=home, clock=lambda: NOW_AT) as engine:
        load_snapshot(engine, 0, hooks_installed(str(repo)))
        began = time.perf_counter()
        load_snapshot(engine, 1, hooks_installed(str(repo)))
        load_ms = (time.perf_counter() - began) * 1000
        began = time.perf_counter()
        engine.validate_memory(persist=False)
        fresh_ms = (time.perf_counter() - began) * 1000
    return {"overview_load_ms": round(load_ms, 1), "freshness_check_ms": round(fresh_ms, 1)}


def measure(repo: Path, home: Path, *, runs: int = 5, writes: int = 5) -> dict[str, object]:
    """Cold starts to first paint and to a filled overview, then external writes to their appearance."""
    from cortex_engine.engine import Engine

    env = {**os.environ, "CORTEX_HOME": str(home), "CORTEX_NOW": NOW, "TERM": "xterm-256color",
           "COLUMNS": str(SIZE[1]), "LINES": str(SIZE[0])}
    first, filled, live = [], [], []
    for run in range(runs):
        term = Terminal(repo, env)
        first.append((term.wait_for(b"Cortex") - term.started) * 1000)
        filled.append((term.wait_for(b"what SessionStart injects") - term.started) * 1000)
        if run == 0:
            term.wait_for(b"checked", timeout=60)  # the freshness pane, so the next frames are only our writes
            time.sleep(1.5)  # let the app go idle (no reload in flight) before the first write
            for n in range(writes):
                subject = f"a{writes - n:02d} probe"  # each sorts first, so it is painted at the top
                mark = len(term.buffer)
                with Engine(repo, home=home) as other:
                    other.note("decision", f"use the probe cache for batch {n}", subject)
                    other.note("decision", f"do not use the probe cache for batch {n}", subject)
                    written = time.perf_counter()
                live.append((term.wait_for(subject.encode(), since=mark) - written) * 1000)
                time.sleep(1.5)
        term.close()
    return {"first_paint_ms": first, "data_paint_ms": filled, "live_ms": live, **in_process(repo, home)}


def main() -> None:
    """Build a synthetic store, start `cortex` in a pty, and time first paint and live updates."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5, help="cold starts to time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        built = synth.build(Path(tmp), args.items)
        os.environ["CORTEX_HOME"] = str(built.home)
        figures = measure(built.repo, built.home, runs=args.runs, writes=args.writes)
        print(json.dumps({"items": args.items, **{
            k: ({"median": round(statistics.median(v), 1), "max": round(max(v), 1)} if isinstance(v, list) else v)
            for k, v in figures.items()}}, indent=2))


if __name__ == "__main__":
    main()
