"""`cortex serve` figures, old tree against new, interleaved run by run so machine noise cannot decide.

Usage:
    python bench/serve.py --store DIR --old TREE [--new TREE] [--old-home HOME] [--new-home HOME] [--runs N]

DIR is a tier built by bench/synth.py (it holds `repo/` and `home/`). For each tree (its PYTHONPATH) and run:
  - start: wall time from spawning `cortex serve` to the `initialize` answer, and to the first tool answer
    (`cortex_route`), plus the process's CPU (user+sys) for that whole short session;
  - warm recall: CPU per `cortex_recall` call in one server (from /proc, over a batch of calls), against
    the same recall made in process (`Engine.recall`) under the same tree.
Both trees are byte-compiled first. Medians are printed as JSON. When the trees' schemas differ (the old tree
refuses a store the new one has migrated), give each its own copy: `--old-home DIR/home --new-home DIR/home-v8`
(bench/store_size.py leaves them side by side).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

NOW = "2026-08-02T18:00:00Z"
TOPICS = (
    "spool flush",
    "auth token",
    "billing retry",
    "query planner cache",
    "kafka queue",
    "render budget",
    "hooks latency",
    "migrate schema",
    "gateway router",
    "sync worker",
)
TICK = os.sysconf("SC_CLK_TCK")


def env_for(tree: str, home: Path) -> dict[str, str]:
    """The environment a server of `tree` runs with, on the store under `home`."""
    return {**os.environ, "PYTHONPATH": tree, "CORTEX_HOME": str(home), "CORTEX_NOW": NOW}


def cpu_of(pid: int) -> float:
    """Seconds of CPU (user+sys) a live process used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def request(n: int, method: str, params: dict) -> bytes:
    """One JSON-RPC request line."""
    return (json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}) + "\n").encode()


def answer(proc: subprocess.Popen, n: int) -> dict:
    """Read lines until the answer to request `n`."""
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("server closed its output")
        message = json.loads(line)
        if message.get("id") == n:
            return message


def session(tree: str, store: Path, home: Path, calls: int) -> dict[str, float]:
    """One server: initialize, route, then `calls` recalls; the figures of that run."""
    began = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cortex_engine.adapters.cli", "serve"],
        cwd=store / "repo",
        env=env_for(tree, home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    proc.stdin.write(
        request(
            0,
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        )
    )
    proc.stdin.flush()
    answer(proc, 0)
    initialized = time.perf_counter() - began
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.write(request(1, "tools/call", {"name": "cortex_route", "arguments": {}}))
    proc.stdin.flush()
    answer(proc, 1)
    first_tool = time.perf_counter() - began
    start_cpu = cpu_of(proc.pid)
    proc.stdin.write(request(2, "tools/call", {"name": "cortex_recall", "arguments": {"topic": "warm up"}}))
    proc.stdin.flush()
    answer(proc, 2)
    before = cpu_of(proc.pid)
    walls = []
    for n in range(calls):
        t0 = time.perf_counter()
        proc.stdin.write(
            request(10 + n, "tools/call", {"name": "cortex_recall", "arguments": {"topic": TOPICS[n % len(TOPICS)]}})
        )
        proc.stdin.flush()
        answer(proc, 10 + n)
        walls.append(time.perf_counter() - t0)
    per_call = (cpu_of(proc.pid) - before) / max(calls, 1)
    proc.stdin.close()
    proc.wait(timeout=60)
    return {
        "initialize_ms": initialized * 1000,
        "first_tool_ms": first_tool * 1000,
        "start_cpu_ms": start_cpu * 1000,
        "mcp_recall_cpu_ms": per_call * 1000,
        "mcp_recall_wall_ms": statistics.median(walls) * 1000,
    }


INPROCESS = """
import sys, time, json
from datetime import datetime, timezone
from cortex_engine.engine import Engine
engine = Engine(sys.argv[1], clock=lambda: datetime(2026, 8, 2, 18, tzinfo=timezone.utc))
topics = json.loads(sys.argv[2]); calls = int(sys.argv[3])
engine.recall("warm up")
t0 = time.process_time(); w0 = time.perf_counter()
for n in range(calls):
    engine.recall(topics[n % len(topics)])
print(json.dumps({"inprocess_recall_cpu_ms": (time.process_time() - t0) * 1000 / calls,
                  "inprocess_recall_wall_ms": (time.perf_counter() - w0) * 1000 / calls}))
"""


def inprocess(tree: str, store: Path, home: Path, calls: int) -> dict[str, float]:
    """CPU per recall made in process by `tree`'s engine."""
    done = subprocess.run(
        [sys.executable, "-c", INPROCESS, str(store / "repo"), json.dumps(TOPICS), str(calls)],
        env=env_for(tree, home),
        capture_output=True,
        text=True,
        check=True,
        cwd=store / "repo",
    )  # not the caller's folder: `-c` puts it first on sys.path
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    """Run old and new alternately and print the medians of each."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--old-home", type=Path, help="the old tree's CORTEX_HOME (default DIR/home)")
    parser.add_argument("--new-home", type=Path, help="the new tree's CORTEX_HOME (default DIR/home)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args(argv)
    for tree in (args.old, args.new):  # as installed: a tree without bytecode recompiles on every start
        compileall.compile_dir(os.path.join(tree, "cortex_engine"), quiet=1)
    samples: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    homes = {"old": args.old_home or args.store / "home", "new": args.new_home or args.store / "home"}
    for _ in range(args.runs):
        for name, tree in (("old", args.old), ("new", args.new)):
            figures = {
                **session(tree, args.store, homes[name], args.calls),
                **inprocess(tree, args.store, homes[name], args.calls),
            }
            for key, value in figures.items():
                samples[name].setdefault(key, []).append(value)
    report = {name: {k: round(statistics.median(v), 2) for k, v in figs.items()} for name, figs in samples.items()}
    for name in report:
        report[name]["mcp_over_inprocess"] = round(
            report[name]["mcp_recall_cpu_ms"] / report[name]["inprocess_recall_cpu_ms"], 2
        )
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
