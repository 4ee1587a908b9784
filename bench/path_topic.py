"""The path topic `src/db/pool.ts timeout` and other topics, in process on the reference's 10k corpus: CPU per call,
interleaved.

Usage:
    python bench/path_topic.py --store DIR [--before TREE] [--ref /work/ref --ref-db FILE] [--rounds 5] [--calls 30]
        [--topic T ...]

DIR is a store built by `bench/anchor_replay.py build --out DIR --n 10000` (its repo and home); the reference's
store by `node bench/reference_recall.mjs seed` (the same corpus through its own API). Each round runs, one after
another in a fresh process each: this tree, the `--before` tree (PYTHONPATH), and the reference (node); each
process times every topic in turn (`--topic`, repeated; by default the path topic and four more of the reference's
corpus queries), each warmed up with 5 calls, then `--calls` recalls timed (CPU: user + system of the process;
the topic order is the same on every side). Cortex's recall is
`Engine.recall(topic, book=False)` at the default budget: a pure read (the reference's `recall` also logs the
retrieval, a write, so its figure includes one more step). The rendered text of the trees is compared: the same
store must give the same answer. Prints JSON: per topic and side the median of the round medians, every round's
median, and Cortex's CPU over the reference's for each round and their median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOPIC = "src/db/pool.ts timeout"
TOPICS = (TOPIC, "token refresh", "connection pool", "src/auth/session.ts", "memory leak in the worker")
"""The path topic first, then the reference corpus's q01, q02, q04 (a file) and q13 (a sentence)."""

CHILD = """
import json, sys, time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from cortex_engine.engine import Engine
store, topics, calls = Path(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
now = datetime(2026, 5, 1, 9, 0, tzinfo=UTC) + timedelta(minutes=10001)
out = {}
with Engine(store / "repo", home=store / "home", clock=lambda: now) as engine:
    for topic in topics:
        first = engine.recall(topic, book=False)
        for _ in range(4):
            engine.recall(topic, book=False)
        cpu = []
        for _ in range(calls):
            c = time.process_time()
            engine.recall(topic, book=False)
            cpu.append((time.process_time() - c) * 1000)
        out[topic] = {"cpu_ms": cpu, "answer": first.text, "items": len(first.items)}
print(json.dumps(out))
"""


def cortex(tree: Path, store: Path, topics: list[str], calls: int) -> dict[str, dict[str, object]]:
    env = {**os.environ, "PYTHONPATH": str(tree), "CORTEX_SEMANTIC": "0", "CORTEX_HOME": str(store / "home")}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(store), json.dumps(topics), str(calls)],
        env=env,
        capture_output=True,
        cwd="/",  # not a checkout: `-c` puts the working directory first on sys.path
        text=True,
        check=True,
    )
    result: dict[str, dict[str, object]] = json.loads(out.stdout)
    return result


def reference(ref: Path, db: Path, topics: list[str], calls: int) -> dict[str, dict[str, object]]:
    script = ROOT / "bench" / "reference_recall.mjs"
    args = ["node", str(script), "time", "--ref", str(ref), "--db", str(db), "--topics", json.dumps(topics)]
    out = subprocess.run([*args, "--calls", str(calls)], capture_output=True, text=True, check=True)
    result: dict[str, dict[str, object]] = json.loads(out.stdout)
    return result


def _median_cpu(got: dict[str, object]) -> float:
    return statistics.median(float(c) for c in got["cpu_ms"])  # type: ignore[attr-defined]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--ref", type=Path)
    parser.add_argument("--ref-db", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--topic", action="append", dest="topics", help="a topic to time (repeat; default TOPICS)")
    args = parser.parse_args()
    topics: list[str] = args.topics or list(TOPICS)
    sides = ["after"] + (["before"] if args.before else []) + (["reference"] if args.ref else [])
    cpu: dict[str, dict[str, list[float]]] = {t: {side: [] for side in sides} for t in topics}
    answers: dict[str, dict[str, set[str]]] = {t: {"after": set(), "before": set()} for t in topics}
    items: dict[str, dict[str, int]] = {t: {} for t in topics}
    for _ in range(args.rounds):
        for side in sides:
            if side == "reference":
                got = reference(args.ref, args.ref_db, topics, args.calls)
            else:
                got = cortex(ROOT if side == "after" else args.before, args.store, topics, args.calls)
            for topic in topics:
                cpu[topic][side].append(_median_cpu(got[topic]))
                if side != "reference":
                    answers[topic][side].add(str(got[topic]["answer"]))
                    items[topic][side] = int(str(got[topic]["items"]))
    report: dict[str, object] = {}
    for topic in topics:
        entry: dict[str, object] = {
            side: {"cpu_ms_median": round(statistics.median(v), 2), "rounds": [round(x, 2) for x in v]}
            for side, v in cpu[topic].items()
        }
        if args.ref:
            # Each round's sides ran one after another: their ratio is steadier than either figure under load.
            ratios = [a / r for a, r in zip(cpu[topic]["after"], cpu[topic]["reference"], strict=True)]
            entry["after_over_reference"] = {
                "median": round(statistics.median(ratios), 3),
                "rounds": [round(x, 3) for x in ratios],
            }
        entry["items_shown"] = items[topic]
        if args.before:
            after, before = answers[topic]["after"], answers[topic]["before"]
            entry["same_answer"] = after == before and len(after) == 1
        report[topic] = entry
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
