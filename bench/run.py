"""The benchmark suite: one command, three store sizes, every figure users feel, compared with its target.

Usage:
    python bench/run.py                  # tiers 1k, 10k, 100k + LoCoMo; writes bench/results.json and bench/RESULTS.md
    python bench/run.py --tiers 1000 --quick --runs 1 --out DIR   # the smoke run the test suite uses

Each figure is a median and p95 over repeated runs on a deterministic synthetic store (bench/synth.py).
Nothing here is asserted: missed targets are printed and written into the report with the miss.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / "hooks"
NOW = synth.NOW.strftime("%Y-%m-%dT%H:%M:%SZ")
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

# figure -> {tier: target ms} (None = reported, not targeted)
TARGETS: dict[str, dict[int, float | None]] = {
    "capture_hook_ms": {1000: 5, 10000: 5, 100000: 5},
    "inject_header_ms": {10000: 150, 100000: 300},
    "reflect_edit_ms": {10000: 120},
    "recall_inprocess_ms": {10000: 6, 100000: 25},
    "recall_cli_ms": {10000: 150},
    "mcp_recall_ms": {10000: 20},
    "mcp_note_ms": {10000: 25},
    "serve_first_answer_ms": {10000: 2500},
    "flush_10k_lines_ms": {10000: 2000},
    "doctor_ms": {10000: 1000},
    "tui_first_paint_ms": {10000: 1500},
    "tui_live_ms": {10000: 1000},
    "tui_events_cpu_pct": {10000: 5},
    "tui_git_mv_label_ms": {10000: 2000},
}


# What profiling found behind a figure that sits at its target, printed beside it when a run misses.
WHY = {
    "recall_inprocess_ms": "Profiled: bm25 over every full-text match (the bench topics match 7,000-19,000 of "
    "100,000 synthetic items) is ~11 ms CPU of it; the rerank, rendering ~18 lines and "
    "reinforcement ~5 ms. Wall time on a shared machine is several times CPU time.",
    "flush_10k_lines_ms": "Profiled: one statement batch per line (event, command run, projected item with its "
    "full-text row and references); the run-to-run spread here is about ±10%.",
}


def stats(samples: list[float]) -> dict[str, float]:
    """Median and p95 (nearest rank) in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, max(0, int(round(0.95 * len(ordered))) - 1))]
    return {"median": round(statistics.median(ordered), 2), "p95": round(p95, 2), "runs": len(ordered)}


def wall(args: list[str], *, stdin: str = "", env: dict, cwd: Path, runs: int) -> dict[str, float]:
    """Wall time of a process, fed `stdin`."""
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run(args, input=stdin.encode(), env=env, cwd=cwd, capture_output=True)
        samples.append((time.perf_counter() - began) * 1000)
    return stats(samples)


def inprocess(fn: Callable[[int], object], runs: int) -> dict[str, float]:
    """Time a function called with the run index."""
    samples = []
    for n in range(runs):
        began = time.perf_counter()
        fn(n)
        samples.append((time.perf_counter() - began) * 1000)
    return stats(samples)


def mcp_figures(repo: Path, env: dict, runs: int) -> dict[str, dict[str, float]]:
    """Start `cortex serve`, time the first answer, then warm cortex_recall and cortex_note round trips."""
    try:
        import anyio
        from mcp import ClientSession, StdioServerParameters, stdio_client
    except ImportError:
        return {}
    cortex = shutil.which("cortex") or "cortex"
    out: dict[str, dict[str, float]] = {}

    async def main() -> None:
        params = StdioServerParameters(command=cortex, args=["serve"], cwd=str(repo), env=env)
        began = time.perf_counter()
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await session.call_tool("cortex_route", {})
                    out["serve_first_answer_ms"] = stats([(time.perf_counter() - began) * 1000])
                    recall, note = [], []
                    for n in range(runs):
                        t0 = time.perf_counter()
                        await session.call_tool("cortex_recall", {"topic": TOPICS[n % len(TOPICS)]})
                        recall.append((time.perf_counter() - t0) * 1000)
                        t0 = time.perf_counter()
                        await session.call_tool(
                            "cortex_note", {"kind": "insight", "content": f"bench observation {n} about the spool"}
                        )
                        note.append((time.perf_counter() - t0) * 1000)
                    out["mcp_recall_ms"], out["mcp_note_ms"] = stats(recall), stats(note)

    anyio.run(main)
    return out


def store_figures(built: synth.Built) -> dict[str, object]:
    """Item counts and on-disk size of the store."""
    from cortex_engine.scope.identity import store_identity

    db = store_identity(str(built.repo), built.home).db_path
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    items = conn.execute("SELECT COUNT(*) FROM memory_items").fetchone()[0]
    conn.close()
    size = db.stat().st_size
    return {"items": items, "store_bytes": size, "store_mb_per_10k_items": round(size / 1e6 * 10000 / max(items, 1), 2)}


def run_tier(items: int, root: Path, *, quick: bool, runs: int | None = None) -> dict[str, object]:
    """Build one tier and measure every figure on it, each `runs` times (5 with `quick`, else 25, by default)."""
    runs = runs or (5 if quick else 25)
    began = time.perf_counter()
    built = synth.build(root / f"tier-{items}", items, files=400 if quick else 3000)
    build_s = time.perf_counter() - began
    cortex = shutil.which("cortex") or "cortex"
    env = {**os.environ, "CORTEX_HOME": str(built.home), "CORTEX_NOW": NOW, "CORTEX_BIN": cortex, **synth.GIT_ENV}
    repo = built.repo
    result: dict[str, object] = {"items_requested": items, "build_seconds": round(build_s, 1), **store_figures(built)}
    payload = {"session_id": "bench-host", "cwd": str(repo), "transcript_path": "/dev/null"}
    result["capture_hook_ms"] = wall(
        ["bash", str(HOOKS / "cortex-capture.sh")],
        env=env,
        cwd=repo,
        runs=runs * 4,
        stdin=json.dumps(
            {
                **payload,
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_use_id": "b",
                "tool_input": {"command": "ls"},
                "tool_response": {"stdout": "a", "stderr": ""},
            }
        ),
    )
    result["inject_header_ms"] = wall(
        [cortex, "inject-header", "--quiet"],
        env=env,
        cwd=repo,
        runs=max(min(3, runs), runs // 2),
        stdin=json.dumps({**payload, "hook_event_name": "SessionStart"}),
    )
    edit = {
        **payload,
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": str(repo / built.files[5])},
    }
    result["reflect_edit_ms"] = wall(
        [cortex, "hook", "reflect-pre"], env=env, cwd=repo, runs=runs, stdin=json.dumps(edit)
    )
    result["recall_cli_ms"] = wall([cortex, "recall", TOPICS[0]], env=env, cwd=repo, runs=max(min(3, runs), runs // 2))
    result["doctor_ms"] = wall([cortex, "doctor"], env=env, cwd=repo, runs=min(3, runs))

    from cortex_engine.engine import Engine

    engine = Engine(repo, home=built.home, clock=lambda: synth.NOW)
    engine.recall("warm up")
    result["recall_inprocess_ms"] = inprocess(lambda n: engine.recall(TOPICS[n % len(TOPICS)]), runs * 2)
    lines = synth.spool_lines(
        repo,
        __import__("random").Random(3),
        10_000 if not quick else 1_000,
        list(built.files),
        start=synth.NOW.timestamp(),
    )
    (repo / ".cortex" / "spool.jsonl").write_text("\n".join(lines) + "\n")
    began = time.perf_counter()
    flushed = engine.flush_spool()
    result["flush_10k_lines_ms" if not quick else "flush_1k_lines_ms"] = stats([(time.perf_counter() - began) * 1000])
    result["flush_processed"] = flushed.processed
    engine.close()
    result.update(mcp_figures(repo, env, runs))
    if not quick and items == 10_000:
        import bench_tui

        tui = bench_tui.measure(repo, built.home, runs=3, writes=3, events=60)
        result["tui_first_paint_ms"] = stats(tui["first_paint_ms"])
        result["tui_data_paint_ms"] = stats(tui["data_paint_ms"])
        result["tui_live_ms"] = stats(tui["live_ms"])
        for name in (
            "idle_cpu_pct",
            "events_cpu_pct",
            "flushed_events_cpu_pct",
            "git_mv_label_ms",
            "page_newest_ms",
            "page_next_ms",
            "page_oldest_ms",
            "page_before_oldest_ms",
            "page_by_offset_oldest_ms",
        ):
            result[f"tui_{name}"] = stats([tui[name]])
    return result


def verdicts(tiers: dict[int, dict[str, object]]) -> list[dict[str, object]]:
    """Every targeted figure with its measured median and whether it meets the target."""
    rows = []
    for figure, per_tier in TARGETS.items():
        for tier, target in per_tier.items():
            measured = tiers.get(tier, {}).get(figure)
            if not isinstance(measured, dict) or target is None:
                continue
            rows.append(
                {
                    "figure": figure,
                    "tier": tier,
                    "median": measured["median"],
                    "p95": measured["p95"],
                    "target": target,
                    "met": measured["median"] <= target,
                }
            )
    return rows


def markdown(report: dict[str, object]) -> str:
    """The committed report."""
    env = report["environment"]
    lines = [
        "# Benchmark results",
        "",
        f"Generated by `python bench/run.py` on {env['date']}: {env['machine']}, Python {env['python']}, "
        f"SQLite {env['sqlite']}, {env['cpus']} cores.",
        "",
        "| figure | tier | median ms | p95 ms | target | met |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["verdicts"]:
        lines.append(
            f"| {row['figure']} | {row['tier']:,} | {row['median']} | {row['p95']} | ≤ {row['target']} | "
            f"{'yes' if row['met'] else 'NO'} |"
        )
    lines += ["", "## All figures per tier", ""]
    for tier, figures in report["tiers"].items():
        lines.append(f"### {int(tier):,} items requested")
        lines.append("")
        for key, value in figures.items():
            shown = (
                f"median {value['median']} / p95 {value['p95']} ms ({value['runs']} runs)"
                if isinstance(value, dict)
                else value
            )
            lines.append(f"- `{key}`: {shown}")
        lines.append("")
    locomo = report.get("locomo")
    if locomo:
        lines += ["## Retrieval quality on LoCoMo (a check, not a training set)", "", locomo["note"], ""]
        lines += ["| ranker | split | questions | R@1 | R@5 | R@10 | MRR |", "|---|---|---|---|---|---|---|"]
        for row in locomo["rows"]:
            lines.append(
                f"| {row['ranker']} | {row['split']} | {row['questions']} "
                f"| {row['r1']} | {row['r5']} | {row['r10']} | {row['mrr']} |"
            )
        lines.append("")
    misses = [r for r in report["verdicts"] if not r["met"]]
    lines += ["## Misses", ""]
    lines += [
        f"- {r['figure']} at {r['tier']:,}: {r['median']} ms against ≤ {r['target']} ms "
        f"({round(r['median'] / r['target'] * 100)}% of target). {WHY.get(r['figure'], '')}".rstrip()
        for r in misses
    ] or ["- none"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the tiers (and LoCoMo), write results.json and RESULTS.md, print what falls short."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tiers", default="1000,10000,100000")
    parser.add_argument("--quick", action="store_true", help="fewer runs and a smaller repository (the smoke run)")
    parser.add_argument(
        "--runs", type=int, help="how many times each figure is measured (default 5 with --quick, else 25); 1 smokes"
    )
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent))
    import locomo

    parser.add_argument("--locomo", default=str(locomo.default_path()))
    parser.add_argument("--no-locomo", action="store_true")
    args = parser.parse_args(argv)
    tiers: dict[int, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="cortex-bench-") as tmp:
        for tier in (int(t) for t in args.tiers.split(",") if t.strip()):
            print(f"tier {tier:,}…", file=sys.stderr, flush=True)
            tiers[tier] = run_tier(tier, Path(tmp), quick=args.quick, runs=args.runs)
    report: dict[str, object] = {
        "environment": {
            "date": date.today().isoformat(),
            "machine": f"{platform.system()} {platform.machine()}",
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "cpus": os.cpu_count(),
        },
        "tiers": tiers,
        "verdicts": verdicts(tiers),
    }
    if not args.no_locomo:
        report["locomo"] = locomo.evaluate(Path(args.locomo))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "RESULTS.md").write_text(markdown(report))
    for row in report["verdicts"]:
        flag = "ok  " if row["met"] else "MISS"
        print(f"{flag} {row['figure']:<24} {row['tier']:>7,}  median {row['median']:>8} ms  target ≤ {row['target']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
