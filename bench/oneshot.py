"""One-shot command CPU (user+sys, the process and its git children), old tree against new, interleaved.

Usage:
    python bench/oneshot.py --store DIR --old TREE [--new TREE] [--old-home HOME] [--new-home HOME] [--runs N]

DIR is a tier built by bench/synth.py (it holds `repo/` and `home/`). Each run measures, in turn: the floor
(a bare Python process running the same FTS5 query on the store), then for the old tree and the new one:
`cortex recall`, the median of 15 in-process recalls on one warm engine, and `cortex inject-header --quiet`.
Both trees are byte-compiled first, as an installed package is: a tree without bytecode pays for compiling on
every start.

When the trees' schemas differ (the old tree refuses a store the new one has migrated), each reads its own
copy: bench/store_size.py leaves them side by side, so pass `--old-home DIR/home --new-home DIR/home-v8`.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

NOW = "2026-08-02T18:00:00Z"
FLOOR = """import sqlite3, glob, sys
db = glob.glob(sys.argv[1] + '/projects/*/cortex.db')[0]
c = sqlite3.connect(db)
c.execute("SELECT rowid FROM memory_items_fts WHERE memory_items_fts MATCH 'spool OR flush' "
          "ORDER BY bm25(memory_items_fts) LIMIT 50").fetchall()
"""

INPROCESS = """import os, statistics, sys, time
from cortex_engine.engine import Engine
engine = Engine(os.getcwd())
times = []
for _ in range(int(sys.argv[1])):
    started = time.process_time()
    engine.recall("spool flush", book=False)
    times.append((time.process_time() - started) * 1000)
print(statistics.median(times))
"""


def inprocess_ms(tree: str, store: Path, home: Path, calls: int) -> float:
    """Median CPU milliseconds of an in-process recall (one warm engine, `calls` recalls, nothing booked)."""
    env = {**os.environ, "PYTHONPATH": tree, "CORTEX_HOME": str(home), "CORTEX_NOW": NOW}
    done = subprocess.run(
        [sys.executable, "-c", INPROCESS, str(calls)],
        env=env,
        capture_output=True,
        text=True,
        cwd=store / "repo",
        check=True,
    )
    return float(done.stdout.strip())


def cpu_ms(args: list[str], tree: str, store: Path, home: Path, stdin: bytes = b"") -> float:
    """CPU milliseconds of one process run to completion (its waited-for children included)."""
    env = {**os.environ, "PYTHONPATH": tree, "CORTEX_HOME": str(home), "CORTEX_NOW": NOW}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, input=stdin, env=env, capture_output=True, cwd=store / "repo")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode(errors="replace"))
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def main(argv: list[str] | None = None) -> int:
    """Print the medians as JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--old-home", type=Path, help="the old tree's CORTEX_HOME (default DIR/home)")
    parser.add_argument("--new-home", type=Path, help="the new tree's CORTEX_HOME (default DIR/home)")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args(argv)
    homes = {"old": args.old_home or args.store / "home", "new": args.new_home or args.store / "home"}
    for tree in (args.old, args.new):
        compileall.compile_dir(os.path.join(tree, "cortex_engine"), quiet=1)
    python = sys.executable
    payload = json.dumps(
        {
            "session_id": "bench-host",
            "cwd": str(args.store / "repo"),
            "transcript_path": "/dev/null",
            "hook_event_name": "SessionStart",
        }
    ).encode()
    samples: dict[str, list[float]] = {}
    for _ in range(args.runs):
        samples.setdefault("floor_fts_ms", []).append(
            cpu_ms([python, "-c", FLOOR, str(homes["new"])], args.old, args.store, homes["new"])
        )
        for name, tree in (("old", args.old), ("new", args.new)):
            samples.setdefault(f"{name}_recall_ms", []).append(
                cpu_ms(
                    [python, "-m", "cortex_engine.adapters.cli", "recall", "spool flush"], tree, args.store, homes[name]
                )
            )
            samples.setdefault(f"{name}_recall_inprocess_ms", []).append(
                inprocess_ms(tree, args.store, homes[name], 15)
            )
            samples.setdefault(f"{name}_inject_header_ms", []).append(
                cpu_ms(
                    [python, "-m", "cortex_engine.adapters.cli", "inject-header", "--quiet"],
                    tree,
                    args.store,
                    homes[name],
                    payload,
                )
            )
    report = {key: round(statistics.median(values), 1) for key, values in samples.items()}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
