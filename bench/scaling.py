"""Scaling on the reference's corpus: old tree against new, interleaved run by run, at 1k, 10k and 100k notes.

Usage:
    python bench/scaling.py --old TREE [--new TREE] [--tiers 1000,10000,100000] [--root DIR] [--runs 3] [--table]

Each tier is a store built by bench/anchor_replay.py under each tree (DIR/a<N>-old, DIR/a<N>-new; built here
when missing, and reused after: the 100k build takes minutes). Every run copies each tree's store, then in
one process of that tree measures CPU (user+sys of the process, `time.process_time`) of:
  - recall: the median over the corpus's 20 queries (queries.json), nothing booked, one warm engine;
  - path: the median of `src/db/pool.ts timeout` recalls, limited to 8 items and as deep as the budget goes;
  - session_start: the median of 5 `Engine.start_session` (SessionStart: flush, snapshot, new session);
  - note: the median of 20 `Engine.note` writes;
  - flush: one flush of 2,000 spool lines (reads, edits, test runs; bench/synth.py's shapes).
Each figure is also kept as wall time (`<figure>_wall`), and each tier's load average before and after its runs.
Runs alternate old, new, new, old, … so load on the machine falls on both. Also reported: the store's size
after a checkpoint, each index's bytes per note (dbstat), and whether the top 8 of every query is the same.
`--table` prints the medians as a Markdown table (CPU, then wall) after the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERIES = Path(os.environ.get("CORTEX_ANCHOR_QUERIES", "/work/shared/data/anchor/queries.json"))
PATH_TOPIC = "src/db/pool.ts timeout"

MEASURE = r"""
import json, random, statistics, sys, time
from datetime import datetime, timedelta, timezone
from pathlib import Path
sys.path.insert(0, sys.argv[4])
from cortex_engine.engine import Engine
repo, home, queries = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(Path(sys.argv[3]).read_text())["queries"]
tick = [0]
def clock():
    return datetime(2027, 1, 1, 9, 0, tzinfo=timezone.utc) + timedelta(seconds=tick[0])
walls = {}
def cpu(fn, name=None):
    started, wall = time.process_time(), time.perf_counter(); value = fn()
    if name: walls.setdefault(name, []).append((time.perf_counter() - wall) * 1000)
    return (time.process_time() - started) * 1000, value
out = {}
with Engine(repo, home=home, clock=clock) as e:
    e.recall("warm up", book=False)
    times, tops = [], {}
    for _ in range(2):
        for q in queries:
            ms, s = cpu(lambda: e.recall(q["text"], book=False), "recall_ms")
            times.append(ms)
            tops[q["id"]] = [
                e.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (i.id.split(":", 1)[1],)).fetchone()[0]
                if i.id.startswith("notes:")
                else i.id.split(":", 1)[0]
                for i in s.items[:8]
            ]
    out["recall_ms"] = statistics.median(times)
    out["tops"] = tops
    for name, limit in (("path8_ms", 8), ("path_ms", None)):
        e.recall(PATH, book=False, limit=limit)
        runs = [cpu(lambda: e.recall(PATH, book=False, limit=limit), name) for _ in range(15)]
        out[name] = statistics.median(ms for ms, _ in runs)
        out[name.replace("_ms", "_items")] = len(runs[-1][1].items)
    starts = []
    for n in range(5):
        tick[0] += 3600
        starts.append(cpu(e.start_session, "session_start_ms")[0])
    out["session_start_ms"] = statistics.median(starts)
    notes = []
    for n in range(20):
        tick[0] += 60
        text = f"bench note {n}: the pool in src/db/pool.ts times out after {n} s"
        notes.append(cpu(lambda text=text: e.note("insight", text), "note_ms")[0])
    out["note_ms"] = statistics.median(notes)
    import synth
    files = ["src/db/pool.ts", "src/auth/session.ts", "src/api/router.ts", "README.md"]
    lines = synth.spool_lines(repo, random.Random(3), 2000, files, start=clock().timestamp())
    (repo / ".cortex").mkdir(exist_ok=True)
    (repo / ".cortex" / "spool.jsonl").write_text("\n".join(lines) + "\n")
    out["flush_2k_ms"] = cpu(e.flush_spool, "flush_2k_ms")[0]
out.update({f"{name}_wall": statistics.median(ms) for name, ms in walls.items()})
print(json.dumps(out))
""".replace("PATH", repr(PATH_TOPIC))


def store(home: Path) -> Path:
    (db,) = home.glob("projects/*/cortex.db")
    return db


def sizes(home: Path) -> dict[str, object]:
    """Size after a checkpoint and each index's bytes per note."""
    db = store(home)
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        notes = conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0]
        segments = _segments(conn)
        per_index = {
            name: round(total / notes)
            for name, total in conn.execute(
                "SELECT d.name, SUM(d.pgsize) FROM dbstat d "
                "JOIN sqlite_master m ON m.name = d.name AND m.type = 'index' "
                "GROUP BY d.name ORDER BY 2 DESC"
            )
        }
    finally:
        conn.close()
    return {
        "mib": round(db.stat().st_size / 1048576, 2),
        "bytes_per_note": round(db.stat().st_size / notes),
        "index_bytes_per_note": per_index,
        "fulltext_segments": segments,
    }


def _segments(conn: sqlite3.Connection) -> int | None:
    """The full-text index's segment count (the new tree's reader; None where it cannot say)."""
    sys.path.insert(0, str(HERE.parent))
    try:
        from cortex_engine.store.queries import fulltext_segments
    except ImportError:
        return None
    finally:
        sys.path.pop(0)
    return fulltext_segments(conn)


def build(tree: str, out: Path, n: int) -> None:
    env = {**os.environ, "PYTHONPATH": tree}
    subprocess.run(
        [sys.executable, str(HERE / "anchor_replay.py"), "build", "--out", str(out), "--n", str(n)],
        env=env,
        check=True,
        capture_output=True,
    )


def measure(tree: str, tier: Path, scratch: Path) -> dict[str, object]:
    """Copy the tier's home and repo to `scratch`, then measure there under `tree`."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    # The store's identity follows the repository's path: measure on the tier's own repo, a copied home.
    shutil.copytree(tier / "home", scratch / "home")
    spool = tier / "repo" / ".cortex" / "spool.jsonl"
    spool.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": tree}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(tier / "repo"), str(scratch / "home"), str(QUERIES), str(HERE)],
        env=env,
        capture_output=True,
        text=True,
        cwd=tier / "repo",
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", default=str(HERE.parent))
    parser.add_argument("--tiers", default="1000,10000,100000")
    parser.add_argument("--root", type=Path, default=Path("/tmp/perf"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args(argv)
    trees = {"old": args.old, "new": args.new}
    report: dict[str, object] = {}
    for n in (int(t) for t in args.tiers.split(",")):
        tiers = {name: args.root / f"a{n // 1000}k-{name}" for name in trees}
        for name, tier in tiers.items():
            if not (tier / "home").exists():
                print(f"building {tier}…", file=sys.stderr, flush=True)
                build(trees[name], tier, n)
        runs: dict[str, list[dict[str, object]]] = {"old": [], "new": []}
        load_before = os.getloadavg()[0]
        for r in range(args.runs):
            for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
                print(f"{n}: run {r + 1} {name}", file=sys.stderr, flush=True)
                runs[name].append(measure(trees[name], tiers[name], args.root / f"scratch-{name}"))
        figures: dict[str, object] = {}
        for key in FIGURES:
            for column in (key, f"{key}_wall"):
                figures[column] = {name: [round(float(run[column]), 2) for run in runs[name]] for name in trees}
        figures["load_average"] = [load_before, os.getloadavg()[0]]
        figures["path_items"] = {name: runs[name][0]["path_items"] for name in trees}
        same = sum(runs["old"][0]["tops"][q] == runs["new"][0]["tops"][q] for q in runs["old"][0]["tops"])
        figures["same_top8_queries"] = f"{same}/{len(runs['old'][0]['tops'])}"
        figures["size"] = {name: sizes(tiers[name] / "home") for name in trees}
        report[str(n)] = figures
        print(json.dumps({str(n): figures}), flush=True)
    print(json.dumps(report, indent=1))
    if args.table:
        print(table(report))
    return 0


FIGURES = ("recall_ms", "path8_ms", "path_ms", "session_start_ms", "note_ms", "flush_2k_ms")


def table(report: dict[str, object]) -> str:
    """Medians per tier, old against new, CPU then wall (ms), with the store's size and the load average."""
    rows = [
        "| figure | tier | c80058d CPU | this tree CPU | c80058d wall | this tree wall |",
        "|---|---|---|---|---|---|",
    ]
    for tier, figures in report.items():
        assert isinstance(figures, dict)
        for key in FIGURES:
            cells = [
                statistics.median(figures[column][name]) for column in (key, f"{key}_wall") for name in ("old", "new")
            ]
            rows.append(f"| {key} | {int(tier):,} | " + " | ".join(f"{v:.2f}" for v in cells) + " |")
        size = figures["size"]
        rows.append(
            f"| store MiB (B/note) | {int(tier):,} | {size['old']['mib']} ({size['old']['bytes_per_note']}) | "
            f"{size['new']['mib']} ({size['new']['bytes_per_note']}) | | |"
        )
        rows.append(
            f"| load average (before, after) | {int(tier):,} | {figures['load_average'][0]:.1f} | "
            f"{figures['load_average'][1]:.1f} | | |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    raise SystemExit(main())
