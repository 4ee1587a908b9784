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
import random
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

NOW_AT = datetime(2026, 3, 1, tzinfo=timezone.utc)
NOW = "2026-03-01T00:00:00Z"
WORDS = (
    "queue spool flush ledger store graph recall brief state token budget session branch worktree commit "
    "rename stale moved contest decision insight blocker intent focus index digest hash schema migrate "
    "cache tier decay reinforce access scope subject kafka postgres sqlite oidc auth login parser lexer "
    "render label trust freshness economy hook capture subagent summary episode failure test build"
).split()
KINDS = ("insight", "decision", "intent", "blocker", "focus")
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def seed(root: Path, items: int) -> tuple[Path, Path]:
    """A git repository of 50 files and `items` notes written through `Engine.note` (one scope, newest last).

    Subjects repeat every 400 notes, so supersession and contests happen as they would; references point at
    files that exist and files that do not, so the freshness pane has work.
    """
    from cortex_engine.engine import Engine

    repo, home = root / "repo", root / "home"
    repo.mkdir(parents=True)
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    for n in range(50):
        path = repo / "src" / WORDS[n % len(WORDS)] / f"file_{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True, env=env)
    rng = random.Random(7)
    start = NOW_AT - timedelta(minutes=items)
    with Engine(repo, home=home, clock=lambda: start) as engine:
        for n in range(items):
            kind = KINDS[n % len(KINDS)]
            words = rng.sample(WORDS, 9)
            subject = None if kind == "insight" else f"{words[0]} {words[1]} {n % 400}"
            text = " ".join(words[2:]) + f" in src/{words[2]}/{words[3]}_{n % 50}.py"
            engine.clock = lambda n=n: start + timedelta(minutes=n)
            engine.note(kind, text, subject)
    return repo, home
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


def main() -> None:
    """Seed, start `cortex` in a pty, and time first paint and live updates."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5, help="cold starts to time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        repo, home = seed(Path(tmp), args.items)
        seconds = time.perf_counter() - began
        env = {**os.environ, "CORTEX_HOME": str(home), "HOME": tmp, "CORTEX_NOW": NOW, "TERM": "xterm-256color",
               "COLUMNS": str(SIZE[1]), "LINES": str(SIZE[0])}
        os.environ["CORTEX_HOME"] = str(home)

        from cortex_engine.engine import Engine

        first, filled, live = [], [], []
        for run in range(args.runs):
            term = Terminal(repo, env)
            first.append((term.wait_for(b"Cortex") - term.started) * 1000)
            filled.append((term.wait_for(b"what SessionStart injects") - term.started) * 1000)
            if run == 0:
                term.wait_for(b"checked", timeout=60)  # the freshness pane, so the next frames are only our writes
                time.sleep(1.5)  # let the app go idle (no reload in flight) before the first write
                for n in range(args.writes):
                    subject = f"a{args.writes - n:02d} probe"  # each sorts first, so it is painted at the top
                    mark = len(term.buffer)
                    with Engine(repo, home=home) as other:
                        other.note("decision", f"use the probe cache for batch {n}", subject)
                        other.note("decision", f"do not use the probe cache for batch {n}", subject)
                        written = time.perf_counter()
                    live.append((term.wait_for(subject.encode(), since=mark) - written) * 1000)
                    time.sleep(1.5)
            term.close()
        with Engine(repo, home=home) as engine:
            in_scope, in_store = engine.status()["items"], engine.list_memory(limit=1).total
        print(json.dumps({
            "items": args.items,
            "items_in_store": in_store,
            "items_in_scope": in_scope,
            "seed_seconds": round(seconds, 1),
            "first_paint_ms": {"median": round(statistics.median(first), 1), "min": round(min(first), 1),
                               "runs": [round(x) for x in first]},
            "data_paint_ms": {"median": round(statistics.median(filled), 1), "min": round(min(filled), 1),
                              "runs": [round(x) for x in filled]},
            "live_ms": {"median": round(statistics.median(live), 1), "max": round(max(live), 1),
                        "runs": [round(x) for x in live]},
            **in_process(repo, home),
        }, indent=2))


if __name__ == "__main__":
    main()
