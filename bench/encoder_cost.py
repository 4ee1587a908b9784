"""The encoder's cost, this tree against another, interleaved: resident memory and embedding throughput.

Usage:
    python bench/encoder_cost.py [--before TREE] [--rounds 3] [--notes 400]

Each round runs, in a fresh process per tree (PYTHONPATH), `semantic.model.load()`, 20 query encodings (the
reference corpus's queries, one text a call) and one batch of `--notes` corpus notes (subject + content, as
`embed_text` gives them; ~44 tokens each), and reports the process's VmRSS after loading, after the queries and
after the batch (MiB; VmHWM as the peak), the CPU per query, and items per CPU-second of the batch. The vectors of
the two trees are compared (max absolute difference, and each note's cosine between the trees: a tree of another
encoder version, `semantic.extra.ENCODER`, moves them). The trees run in turn within each round (A, B, A, B, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("CORTEX_ANCHOR_CORPUS", "/work/shared/data/anchor"))

CHILD = """
import json, sys, time
import numpy as np
def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key):
            return round(int(line.split()[1]) / 1024, 1)
from cortex_engine.semantic import model
corpus, count, out = sys.argv[1], int(sys.argv[2]), sys.argv[4]
notes = json.load(open(corpus + '/notes-10000.json'))['notes'][:count]
texts = [(n['subject'] + ': ' if n.get('subject') else '') + n['content'] for n in notes]
queries = [q['text'] for q in json.load(open(corpus + '/queries.json'))['queries']]
base = status('VmRSS')
began = time.process_time()
encoder = model.load()
load_cpu = time.process_time() - began
loaded = status('VmRSS')
began = time.process_time()
for q in queries:
    encoder.embed([q])
per_query = (time.process_time() - began) / len(queries) * 1000
after_queries = status('VmRSS')
began = time.process_time()
vectors = encoder.embed(texts)
cpu = time.process_time() - began
np.save(out, vectors)
print(json.dumps({'interpreter_mib': base, 'load_cpu_s': round(load_cpu, 2), 'loaded_mib': loaded,
                  'after_queries_mib': after_queries, 'after_batch_mib': status('VmRSS'), 'peak_mib': status('VmHWM'),
                  'query_cpu_ms': round(per_query, 2), 'items_per_cpu_s': round(len(texts) / cpu, 1)}))
"""


def run(tree: Path, notes: int, mode: str, out: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree), "CORTEX_SEMANTIC": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(CORPUS), str(notes), mode, str(out)],
        env=env,
        capture_output=True,
        cwd="/",  # not a checkout: `-c` puts the working directory first on sys.path
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--notes", type=int, default=400)
    args = parser.parse_args()
    import numpy as np

    sides = [("after", ROOT, "float")]
    if args.before:
        sides.append(("before", args.before, "float"))
    runs: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in sides}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for name, tree, mode in sides:
                runs[name].append(run(tree, args.notes, mode, Path(tmp, f"{len(runs[name])}-{mode}-{tree.name}.npy")))
        report: dict[str, object] = {
            name: {key: statistics.median(r[key] for r in rows) for key in rows[0]} for name, rows in runs.items()
        }
        after = np.load(Path(tmp, f"0-float-{ROOT.name}.npy"))
        if args.before:
            before = np.load(Path(tmp, f"0-float-{args.before.name}.npy"))
            report["max_abs_difference_before_after"] = float(np.abs(after - before).max())
            cosines = (after * before).sum(axis=1)
            report["cosine_before_after"] = {"min": float(cosines.min()), "mean": float(cosines.mean())}
    report["rounds"] = runs
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
