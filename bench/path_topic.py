"""The path topic `src/db/pool.ts timeout`, in process on the reference's 10k corpus: CPU per call, interleaved.

Usage:
    python bench/path_topic.py --store DIR [--before TREE] [--ref /work/ref --ref-db FILE] [--rounds 5] [--calls 30]

DIR is a store built by `bench/anchor_replay.py build --out DIR --n 10000` (its repo and home); the reference's
store by `node bench/reference_recall.mjs seed` (the same corpus through its own API). Each round runs, one after
another in a fresh process each: this tree, the `--before` tree (PYTHONPATH), and the reference (node); each
process warms up with 5 calls, then times `--calls` recalls (CPU: user + system of the process). Cortex's recall is
`Engine.recall(topic, book=False)` at the default budget: a pure read (the reference's `recall` also logs the
retrieval, a write, so its figure includes one more step). The rendered text of the trees is compared: the same
store must give the same answer. Prints JSON: per side the median of the round medians and every round's median.
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

CHILD = """
import json, sys, time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from cortex_engine.engine import Engine
store, topic, calls = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
now = datetime(2026, 5, 1, 9, 0, tzinfo=UTC) + timedelta(minutes=10001)
with Engine(store / "repo", home=store / "home", clock=lambda: now) as engine:
    first = engine.recall(topic, book=False)
    for _ in range(4):
        engine.recall(topic, book=False)
    cpu = []
    for _ in range(calls):
        c = time.process_time()
        engine.recall(topic, book=False)
        cpu.append((time.process_time() - c) * 1000)
print(json.dumps({"cpu_ms": cpu, "answer": first.text, "items": len(first.items)}))
"""


def cortex(tree: Path, store: Path, calls: int) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree), "CORTEX_SEMANTIC": "0", "CORTEX_HOME": str(store / "home")}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(store), TOPIC, str(calls)],
        env=env,
        capture_output=True,
        cwd="/",  # not a checkout: `-c` puts the working directory first on sys.path
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


def reference(ref: Path, db: Path, calls: int) -> dict[str, object]:
    script = ROOT / "bench" / "reference_recall.mjs"
    args = ["node", str(script), "time", "--ref", str(ref), "--db", str(db), "--topic", TOPIC, "--calls", str(calls)]
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(out.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--ref", type=Path)
    parser.add_argument("--ref-db", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    sides: dict[str, list[float]] = {"after": []}
    if args.before:
        sides["before"] = []
    if args.ref:
        sides["reference"] = []
    answers: dict[str, set[str]] = {"after": set(), "before": set()}
    items: dict[str, int] = {}
    for _ in range(args.rounds):
        for side in list(sides):
            if side == "reference":
                got = reference(args.ref, args.ref_db, args.calls)
            else:
                got = cortex(ROOT if side == "after" else args.before, args.store, args.calls)
                answers[side].add(str(got["answer"]))
                items[side] = int(str(got["items"]))
            sides[side].append(statistics.median(float(c) for c in got["cpu_ms"]))  # type: ignore[attr-defined]
    report: dict[str, object] = {
        side: {"cpu_ms_median": round(statistics.median(v), 2), "rounds": [round(x, 2) for x in v]}
        for side, v in sides.items()
    }
    report["items_shown"] = items
    if args.before:
        report["same_answer"] = answers["after"] == answers["before"] and len(answers["after"]) == 1
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
