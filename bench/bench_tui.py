"""Operator TUI latency on a store of N notes: `cortex` start to first paint, and an external write to its appearance.

Usage: python bench/bench_tui.py [--items 10000] [--writes 5] [--events 60] [--store DIR]

`cortex` runs in a pseudo-terminal (120×40), exactly as an operator starts it; the bench reads what it paints.
  first_paint_ms   process start → the first frame (the header is on screen)
  data_paint_ms    process start → the overview filled from the store (the brief's "tokens" line painted)
  live_ms          another engine commits a contest → the Contests count is painted (watchdog; poll fallback 1 s)
  idle_cpu_pct     the app's CPU while nothing happens (10 s)
  events_cpu_pct   the app's CPU while a hook event per second is appended to the spool (--events seconds)
  flushed_events_cpu_pct  the same, each event flushed into the store at once (a store commit every second)
  git_mv_label_ms  `git mv` + `git commit` of the most referenced file → the Freshness title's moved count changes
Also timed in-process: one overview load, one freshness check, and a page of the memory table by key (newest, next,
oldest, the one before it) against the oldest page by OFFSET. Prints one JSON object; nothing is asserted.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import re
import select
import signal
import sqlite3
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
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cortex_engine.adapters.cli"],
            cwd=cwd,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
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

    def wait_for_pattern(self, pattern: bytes, accept, timeout: float = 30.0, *, since: int = 0) -> float:
        """Seconds (perf_counter) at which a match of `pattern` after byte `since` satisfies `accept(match)`."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if any(accept(m) for m in re.finditer(pattern, self.buffer[since:])):
                return time.perf_counter()
            ready, _, _ = select.select([self.master], [], [], 0.01)
            if ready:
                try:
                    self.buffer += os.read(self.master, 65536)
                except OSError:
                    break
        raise TimeoutError(f"{pattern!r} not painted within {timeout}s")

    def drain(self, seconds: float) -> None:
        """Keep reading the output for `seconds` (a pty that is not read would block the app)."""
        deadline = time.perf_counter() + seconds
        while (left := deadline - time.perf_counter()) > 0:
            ready, _, _ = select.select([self.master], [], [], min(left, 0.05))
            if ready:
                try:
                    self.buffer += os.read(self.master, 65536)
                except OSError:
                    return

    def cpu_seconds(self) -> float:
        """User + system CPU the app's process has used so far (from /proc)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

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
    """One overview load, one freshness check and the memory table's pages, in-process, as the app's workers run them.

    Pages are listed the way the browser lists them (by key, every scope, 200 rows): the newest, the next, the oldest
    (End) and the one before it; `page_by_offset_oldest_ms` lists the oldest page by OFFSET, as the browser used to.
    """
    from cortex_engine.engine import Engine
    from cortex_engine.operator import hooks_installed
    from cortex_tui.data.snapshot import load_snapshot
    from cortex_tui.widgets.memory_browser import PAGE

    def timed(call) -> float:  # noqa: ANN001
        call()  # warm: the figure is a page turn in a running app, not a cold open
        began = time.perf_counter()
        call()
        return round((time.perf_counter() - began) * 1000, 1)

    with Engine(repo, home=home, clock=lambda: NOW_AT) as engine:
        hooks = hooks_installed(str(repo))
        figures = {
            "overview_load_ms": timed(lambda: load_snapshot(engine, 1, hooks)),
            "freshness_check_ms": timed(lambda: engine.validate_memory(persist=False)),
        }
        newest = engine.list_memory(limit=PAGE)
        oldest = engine.list_memory(limit=PAGE, oldest=True)
        figures.update(
            {
                "page_newest_ms": timed(lambda: engine.list_memory(limit=PAGE)),
                "page_next_ms": timed(lambda: engine.list_memory(limit=PAGE, start=newest.next)),
                "page_oldest_ms": timed(lambda: engine.list_memory(limit=PAGE, oldest=True)),
                "page_before_oldest_ms": timed(lambda: engine.list_memory(limit=PAGE, before=oldest.keys[0])),
                "page_by_offset_oldest_ms": timed(lambda: engine.list_memory(limit=PAGE, offset=oldest.offset)),
            }
        )
    return figures


CONTESTS_TITLE = rb"Contests \xc2\xb7 (\d+|none) open"
FRESHNESS_TITLE = rb"Freshness \xc2\xb7 memories: (\d+) stale \xc2\xb7 (\d+) moved"


def cpu_and_checkout(term: Terminal, repo: Path, home: Path, db: Path, *, events: int) -> dict[str, float]:
    """Idle CPU, CPU under one hook event per second, and a referenced file's rename to its label on screen."""
    term.drain(2.0)
    began, cpu = time.perf_counter(), term.cpu_seconds()
    term.drain(10.0)
    idle = (term.cpu_seconds() - cpu) / (time.perf_counter() - began) * 100
    spool = repo / ".cortex" / "spool.jsonl"

    def one_per_second(seconds: int, *, flush: bool) -> float:
        """The app's CPU (%) while a hook event arrives every second, each flushed into the store when `flush`."""
        from cortex_engine.engine import Engine

        began, cpu = time.perf_counter(), term.cpu_seconds()
        for n in range(seconds):
            tick = time.perf_counter()
            with spool.open("a", encoding="utf-8") as out:  # what the capture hook does on every tool call
                out.write(
                    json.dumps(
                        {
                            "v": 1,
                            "t": time.time(),
                            "p": {
                                "session_id": "bench-host",
                                "cwd": str(repo),
                                "hook_event_name": "PostToolUse",
                                "tool_name": "Read",
                                "tool_use_id": f"bench-{flush}-{n}",
                                "tool_input": {"file_path": str(repo / f"bench-{n}.py")},
                            },
                        }
                    )
                    + "\n"
                )
            if flush:  # the worst case: a flush (a store commit) after every event, not once per turn
                with Engine(repo, home=home) as other:
                    other.flush_spool()
            term.drain(max(0.0, 1.0 - (time.perf_counter() - tick)))
        return (term.cpu_seconds() - cpu) / (time.perf_counter() - began) * 100

    busy = one_per_second(events, flush=False)
    flushed = one_per_second(events, flush=True)
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT normalized_path, COUNT(*) FROM memory_references GROUP BY normalized_path ORDER BY 2 DESC"
    ).fetchall()
    conn.close()
    path = next(p for p, _ in rows if p and (repo / p).is_file())
    shown = [int(m.group(2)) for m in re.finditer(FRESHNESS_TITLE, term.buffer)]
    before = shown[-1] if shown else -1
    mark = len(term.buffer)
    subprocess.run(["git", "mv", path, path + ".moved"], cwd=repo, check=True, capture_output=True)
    subprocess.run(
        ["git", "commit", "-q", "-m", "bench: rename"],
        cwd=repo,
        check=True,
        capture_output=True,
        env={**os.environ, **synth.GIT_ENV},
    )
    committed = time.perf_counter()
    label = term.wait_for_pattern(FRESHNESS_TITLE, lambda m: int(m.group(2)) != before, since=mark)
    return {
        "idle_cpu_pct": round(idle, 2),
        "events_cpu_pct": round(busy, 2),
        "flushed_events_cpu_pct": round(flushed, 2),
        "git_mv_label_ms": round((label - committed) * 1000, 1),
    }


def measure(repo: Path, home: Path, *, runs: int = 5, writes: int = 5, events: int = 0) -> dict[str, object]:
    """Cold starts to first paint and to a filled overview, then external writes to their appearance."""
    from cortex_engine.engine import Engine

    env = {
        **os.environ,
        "CORTEX_HOME": str(home),
        "CORTEX_NOW": NOW,
        "TERM": "xterm-256color",
        "COLUMNS": str(SIZE[1]),
        "LINES": str(SIZE[0]),
    }
    first, filled, live = [], [], []
    extra: dict[str, float] = {}
    for run in range(runs):
        term = Terminal(repo, env)
        first.append((term.wait_for(b"Cortex") - term.started) * 1000)
        filled.append((term.wait_for(b"what SessionStart injects") - term.started) * 1000)
        if run == 0:
            term.wait_for(b"checked", timeout=60)  # the freshness pane, so the next frames are only our writes
            time.sleep(1.5)  # let the app go idle (no reload in flight) before the first write
            for n in range(writes):
                # The highlight stays on the contest the operator was on, so a new contest may land
                # above the visible rows: what is timed is the pane's count changing on screen.
                subject = f"a{writes - n:02d} probe"
                shown = [m.group(1) for m in re.finditer(CONTESTS_TITLE, term.buffer)]
                mark = len(term.buffer)
                with Engine(repo, home=home) as other:
                    other.note("decision", f"use the probe cache for batch {n}", subject)
                    other.note("decision", f"do not use the probe cache for batch {n}", subject)
                    written = time.perf_counter()
                painted = term.wait_for_pattern(
                    CONTESTS_TITLE, lambda m, before=shown[-1]: m.group(1) != before, since=mark
                )
                live.append((painted - written) * 1000)
                time.sleep(1.5)
            if events:
                from cortex_engine.engine import describe_store

                extra = cpu_and_checkout(term, repo, home, Path(describe_store(str(repo), home).path), events=events)
        term.close()
    return {"first_paint_ms": first, "data_paint_ms": filled, "live_ms": live, **extra, **in_process(repo, home)}


def main() -> None:
    """Build a synthetic store, start `cortex` in a pty, and time first paint and live updates."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5, help="cold starts to time")
    parser.add_argument("--events", type=int, default=60, help="seconds of one hook event per second (0: skip)")
    parser.add_argument("--store", type=Path, help="build the store here once and reuse it (the bench writes to it)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.store or Path(tmp)
        if args.store is not None and (root / "repo").is_dir():
            built = synth.Built(root / "repo", root / "home", (), (), 0, 0)
        else:
            built = synth.build(root, args.items)
        os.environ["CORTEX_HOME"] = str(built.home)
        figures = measure(built.repo, built.home, runs=args.runs, writes=args.writes, events=args.events)
        print(
            json.dumps(
                {
                    "items": args.items,
                    **{
                        k: (
                            {"median": round(statistics.median(v), 1), "max": round(max(v), 1)}
                            if isinstance(v, list)
                            else v
                        )
                        for k, v in figures.items()
                    },
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
