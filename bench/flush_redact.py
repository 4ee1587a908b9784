"""Flush of 10,000 spool lines: the old tree against the new, interleaved run by run on copies of one store.

Usage:
    python bench/flush_redact.py --old TREE [--root DIR] [--items 10000] [--runs 5] [--profile] [--build-with TREE]

TREE is a checkout of the old commit (`git archive <commit> | tar -x -C TREE`). A tier of `--items` items is
built once under DIR (kept, so a second run reuses it) with `bench/synth.py`; its store and runtime folder are
snapshotted, and each run restores them, writes the same 10,000 spool lines (`synth.spool_lines`, seed 3, as
`bench/run.py` does) and times `Engine.flush_spool()` in a fresh process of one tree, old and new alternating.
Besides wall time each run reports the process CPU time and the number of `clean_text` calls and of strings
scanned for secrets (new tree only: the counters are `redact.STATS`). `--profile` prints a cProfile of one
new-tree flush. `--cleaning` records every statement's parameters during one new-tree flush, then times the
old and the new tree's cleaning (`redact._clean_params`, the store's choke point) over exactly those
parameters, interleaved in one process, caches emptied before each pass, and checks both clean them alike.
`--build-with TREE` builds the tier under that tree instead (in a process of its own): the old tree when it
reads an older schema than the new one (the new tree migrates its copy when it opens it, before the clock starts).
The figures print as JSON, with the load average before and after the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NEW = HERE.parent
sys.path.insert(0, str(HERE))

WORKER = r"""
import json, sys, time, resource
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from cortex_engine.engine import Engine
import synth
from cortex_engine.store import redact
engine = Engine(Path(sys.argv[1]), home=Path(sys.argv[2]), clock=lambda: synth.NOW)
cpu = time.process_time()
began = time.perf_counter()
if len(sys.argv) > 4:
    import cProfile, pstats
    profile = cProfile.Profile()
    profile.enable()
flushed = engine.flush_spool()
wall = (time.perf_counter() - began) * 1000
cpu = (time.process_time() - cpu) * 1000
if len(sys.argv) > 4:
    profile.disable()
    order = sys.argv[5] if len(sys.argv) > 5 else "cumulative"
    pstats.Stats(profile, stream=sys.stderr).sort_stats(order).print_stats(40)
engine.close()
stats = getattr(redact, "STATS", None)
print(json.dumps({"ms": round(wall, 1), "cpu_ms": round(cpu, 1), "processed": flushed.processed,
                  "redact": dict(stats) if stats is not None else None}))
"""


def snapshot(built_repo: Path, home: Path, keep: Path) -> None:
    """Keep the built store and runtime folder as they are after the build."""
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir(parents=True)
    shutil.copytree(home, keep / "home")
    shutil.copytree(built_repo / ".cortex", keep / "runtime")


def restore(built_repo: Path, home: Path, keep: Path) -> None:
    """Put the store and runtime folder back as the snapshot has them."""
    shutil.rmtree(home)
    shutil.copytree(keep / "home", home)
    shutil.rmtree(built_repo / ".cortex")
    shutil.copytree(keep / "runtime", built_repo / ".cortex")


def flush_once(tree: Path, repo: Path, home: Path, lines: list[str], *, profile: bool = False) -> dict:
    """One timed flush of `lines` by the tree at `tree`, in a fresh process."""
    (repo / ".cortex" / "spool.jsonl").write_text("\n".join(lines) + "\n")
    env = {**os.environ, "PYTHONPATH": str(tree), "CORTEX_HOME": str(home)}
    args = [sys.executable, "-c", WORKER, str(repo), str(home), str(HERE)] + (
        ["profile", os.environ.get("CORTEX_BENCH_SORT", "cumulative")] if profile else []
    )
    # Started in the tree itself: `python -c` puts the working directory first on sys.path.
    done = subprocess.run(args, env=env, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    if profile:
        print(done.stderr, file=sys.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


CAPTURE = r"""
import pickle, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
import synth
from cortex_engine.store import redact
from cortex_engine.engine import Engine
rows = []
clean = redact._clean_params
redact._clean_params = lambda parameters: (rows.append(parameters), clean(parameters))[1]
engine = Engine(Path(sys.argv[1]), home=Path(sys.argv[2]), clock=lambda: synth.NOW)
engine.flush_spool()
engine.close()
pickle.dump([list(r) if isinstance(r, (list, tuple)) else r for r in rows], open(sys.argv[4], "wb"))
"""


def cleaning(old: Path, repo: Path, home: Path, keep: Path, lines: list[str], runs: int) -> dict:
    """Old against new cleaning over the parameters of one flush."""
    import importlib.util
    import pickle
    import time

    restore(repo, home, keep)
    (repo / ".cortex" / "spool.jsonl").write_text("\n".join(lines) + "\n")
    dump = keep.parent / "params.pickle"
    env = {**os.environ, "PYTHONPATH": str(NEW), "CORTEX_HOME": str(home)}
    subprocess.run(
        [sys.executable, "-c", CAPTURE, str(repo), str(home), str(HERE), str(dump)], env=env, cwd=NEW, check=True
    )
    rows = pickle.loads(dump.read_bytes())
    modules = {}
    for name, tree in (("old", old), ("new", NEW)):
        spec = importlib.util.spec_from_file_location(f"{name}_redact", tree / "cortex_engine/store/redact.py")
        assert spec is not None and spec.loader is not None
        modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[name])
    times: dict[str, list[float]] = {"old": [], "new": []}
    for n in range(runs):
        for name in ("old", "new") if n % 2 == 0 else ("new", "old"):
            module = modules[name]
            if hasattr(module, "forget"):
                module.forget()
            for cache in ("_clean_short", "_clean_short_param", "_redact_short"):
                if hasattr(module, cache):
                    getattr(module, cache).cache_clear()
            began = time.process_time()
            for row in rows:
                module._clean_params(row)
            times[name].append(round((time.process_time() - began) * 1000, 1))
    values = [v for row in rows if isinstance(row, list) for v in row]
    differ = sum(
        1
        for v in set(v for v in values if isinstance(v, str))
        if modules["old"].clean_param(v) != modules["new"].clean_param(v)
    )
    strings = [v for v in values if isinstance(v, str)]
    return {
        "statements": len(rows),
        "string_parameters": len(strings),
        "distinct": len(set(strings)),
        "bytes": sum(len(v) for v in strings),
        "cpu_ms": times,
        "median_cpu_ms": {k: statistics.median(v) for k, v in times.items()},
        "cleaned_differently": differ,
    }


def main() -> int:
    """Build (or reuse) the tier, then alternate old and new flushes."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, required=True)
    parser.add_argument("--root", type=Path, default=Path("/tmp/cortex-bench-flush"))
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--cleaning", action="store_true")
    parser.add_argument("--build-with", type=Path, default=None)
    args = parser.parse_args()
    import synth

    tier = args.root / f"tier-{args.items}"
    keep = args.root / f"snapshot-{args.items}"
    if not (keep / "files.json").exists() and args.build_with is not None:
        code = (
            "import json, sys; from pathlib import Path; import synth; "
            f"b = synth.build(Path({str(tier)!r}), {args.items}, files=3000); "
            "print(json.dumps([str(b.repo), str(b.home), list(b.files)]))"
        )
        env = {**os.environ, "PYTHONPATH": f"{args.build_with}{os.pathsep}{HERE}"}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, cwd=HERE, capture_output=True, text=True, check=True
        )
        repo_name, home_name, files = json.loads(done.stdout.strip().splitlines()[-1])
        snapshot(Path(repo_name), Path(home_name), keep)
        (keep / "files.json").write_text(json.dumps([repo_name, home_name, files]))
    if not (keep / "files.json").exists():
        built = synth.build(tier, args.items, files=3000)
        snapshot(built.repo, built.home, keep)
        (keep / "files.json").write_text(json.dumps([str(built.repo), str(built.home), list(built.files)]))
    repo_name, home_name, files = json.loads((keep / "files.json").read_text())
    repo, home = Path(repo_name), Path(home_name)
    lines = synth.spool_lines(repo, random.Random(3), args.lines, files, start=synth.NOW.timestamp())
    if args.cleaning:
        print(json.dumps(cleaning(args.old, repo, home, keep, lines, args.runs), indent=2))
        return 0
    if args.profile:
        restore(repo, home, keep)
        flush_once(NEW, repo, home, lines, profile=True)
        return 0
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    load_before = os.getloadavg()[0]
    for n in range(args.runs):
        for name, tree in (("old", args.old), ("new", NEW)) if n % 2 == 0 else (("new", NEW), ("old", args.old)):
            restore(repo, home, keep)
            runs[name].append(flush_once(tree, repo, home, lines))
            print(name, runs[name][-1], file=sys.stderr, flush=True)
    summary = {
        name: {
            "ms": sorted(r["ms"] for r in rs),
            "cpu_ms": sorted(r["cpu_ms"] for r in rs),
            "median_ms": statistics.median(r["ms"] for r in rs),
            "median_cpu_ms": statistics.median(r["cpu_ms"] for r in rs),
            "processed": rs[0]["processed"],
            "redact": rs[-1]["redact"],
        }
        for name, rs in runs.items()
    }
    print(json.dumps({**summary, "load_average": [load_before, os.getloadavg()[0]]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
