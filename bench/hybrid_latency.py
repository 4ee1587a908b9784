"""Hybrid recall's cost, each figure interleaved against lexical recall in the same run.

Usage:
    python bench/hybrid_latency.py [--root /tmp/cortex-bench-hybrid] [--runs 5] [--calls 10] [--out FILE]
                                   [--embed-limit N]   # embed N items for real, give the rest noisy copies
                                   [--tree CHECKOUT]   # the servers of another checkout (the previous tree)
                                   [--fresh]           # a topic new to the server on every call

On the synthetic 10k tier (bench/synth.py, built once under --root):
  - backfill: `Engine.embed_pending()` with the real encoder (one CPU thread): seconds, items/s, and the store's
    growth per 1,000 items (page count × page size before and after); with `--embed-limit N` only N items are
    embedded for real, the 10k backfill time is projected from their rate (`backfill_10k_measured: false`) and
    the other items get noisy copies of real vectors (the search reads as many rows either way);
  - warm MCP recall: two `cortex serve` processes on the same store, one with `CORTEX_SEMANTIC=0` (lexical), one
    hybrid; each run makes `--calls` recalls on one then the other; median wall and CPU per call; and each
    server's resident memory (VmRSS) afterwards;
and then on 100k (the 10k tier's items copied ten times by SQL in place, each copy with its own vector: the 10k
vectors plus small noise, so the matrix search reads 100k distinct rows; a later run measures 100k only):
  - in-process recall, lexical and hybrid alternately (`CORTEX_SEMANTIC` flipped between calls); the hybrid
    figure includes encoding the topic.
Absolute figures depend on the machine (2 shared cores here); nothing is asserted.
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import synth  # noqa: E402
from serve import TOPICS, answer, cpu_of, request  # noqa: E402

NOW = synth.NOW.strftime("%Y-%m-%dT%H:%M:%SZ")
LIMIT = 0
TREE = ROOT
"""The checkout whose servers are measured (`--tree`: another tree, e.g. the previous one, with this bench)."""
FRESH = False
"""`--fresh`: every call's topic is new to the server (a number appended), so nothing it remembers applies."""


def tier(root: Path) -> synth.Built | Path:
    """The 10k tier, built once."""
    where = root / "tier-10000"
    if not (where / "built").is_file():
        shutil.rmtree(where, ignore_errors=True)
        synth.build(where, 10_000, files=400)
        (where / "built").write_text("ok")
    return where


def db_of(home: Path) -> Path:
    """The one store under a Cortex home."""
    return next(home.glob("projects/*/cortex.db"))


def size(db: Path) -> int:
    """Bytes the store's pages take."""
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("PRAGMA page_count").fetchone()[0]) * int(
            conn.execute("PRAGMA page_size").fetchone()[0]
        )
    finally:
        conn.close()


def backfill(where: Path) -> dict[str, float]:
    """Embed every item of the tier (once: later runs reuse the vectors) and measure it."""
    from cortex_engine.engine import Engine

    db = db_of(where / "home")
    marker = where / "embedded.json"
    if marker.is_file():
        figures: dict[str, float] = json.loads(marker.read_text())
        return figures
    before = size(db)
    with Engine(where / "repo", home=where / "home", clock=lambda: synth.NOW) as engine:
        pending = engine.embedding_backlog()
        began = time.perf_counter()
        cpu = time.process_time()
        done = engine.embed_pending(limit=LIMIT or None)
        wall = time.perf_counter() - began
        cpu = time.process_time() - cpu
        engine.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        after = size(db)
        rest = engine.embedding_backlog()
        if rest:  # the rest get noisy copies of real vectors (the search cost is the same), labelled as such
            import numpy as np

            from cortex_engine.semantic import vectors

            real = [vectors.unpack(r[0]) for r in engine.conn.execute("SELECT vector FROM item_vectors")]
            rng = np.random.default_rng(11)
            missing = [
                r[0]
                for r in engine.conn.execute(
                    "SELECT rowid FROM memory_items WHERE rowid NOT IN (SELECT item_rowid FROM item_vectors)"
                )
            ]
            rows = []
            for n, rowid in enumerate(missing):
                vec = real[n % len(real)] + rng.normal(0, 0.05, 384).astype(np.float32)
                rows.append((rowid, vec / np.linalg.norm(vec)))
            from dense import store_vectors

            store_vectors(engine.conn, dict(rows))
    figures = {
        "items_embedded": done,
        "items": pending,
        "embedded_s": round(wall, 1),
        "embedded_cpu_s": round(cpu, 1),
        "items_per_s": round(done / wall, 1),
        "items_per_cpu_s": round(done / cpu, 1),
        "backfill_10k_s": round(pending / (done / wall)) if rest else round(wall, 1),
        "backfill_10k_measured": not rest,
        "store_growth_bytes_per_1000": round((after - before) / done * 1000),
    }
    marker.write_text(json.dumps(figures))
    return figures


def server(where: Path, semantic: bool) -> subprocess.Popen[bytes]:
    """A `cortex serve` on the tier, initialized and warmed by one recall."""
    env = {
        **os.environ,
        "CORTEX_HOME": str(where / "home"),
        "CORTEX_NOW": NOW,
        "CORTEX_SEMANTIC": "1" if semantic else "0",
        "PYTHONPATH": str(TREE),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "cortex_engine.adapters.cli", "serve"],
        cwd=where / "repo",
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    proc.stdin.write(
        request(
            0,
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        )
    )
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.write(request(1, "tools/call", {"name": "cortex_recall", "arguments": {"topic": "warm up"}}))
    proc.stdin.flush()
    answer(proc, 0)
    answer(proc, 1)
    return proc


def recalls(proc: subprocess.Popen[bytes], start: int, calls: int) -> tuple[list[float], float]:
    """`calls` recalls: wall seconds of each, CPU seconds per call."""
    assert proc.stdin is not None
    walls = []
    before = cpu_of(proc.pid)
    for n in range(calls):
        t0 = time.perf_counter()
        topic = TOPICS[n % len(TOPICS)] + (f" {start + n}" if FRESH else "")
        proc.stdin.write(request(start + n, "tools/call", {"name": "cortex_recall", "arguments": {"topic": topic}}))
        proc.stdin.flush()
        answer(proc, start + n)
        walls.append(time.perf_counter() - t0)
    return walls, (cpu_of(proc.pid) - before) / calls


def rss_mb(pid: int) -> float:
    """Resident memory of a live process, MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def warm_mcp(where: Path, runs: int, calls: int) -> dict[str, float]:
    """Lexical and hybrid servers, recalls alternated run by run."""
    lexical, hybrid = server(where, False), server(where, True)
    walls: dict[str, list[float]] = {"lexical": [], "hybrid": []}
    cpus: dict[str, list[float]] = {"lexical": [], "hybrid": []}
    try:
        for run in range(runs):
            for name, proc in (
                (("lexical", lexical), ("hybrid", hybrid))
                if run % 2 == 0
                else (("hybrid", hybrid), ("lexical", lexical))
            ):
                w, c = recalls(proc, 100 + run * calls, calls)
                walls[name] += w
                cpus[name].append(c)
        figures = {f"mcp_{name}_wall_ms": round(statistics.median(walls[name]) * 1000, 1) for name in walls}
        figures.update({f"mcp_{name}_cpu_ms": round(statistics.median(cpus[name]) * 1000, 1) for name in cpus})
        figures["mcp_hybrid_over_lexical_wall"] = round(
            figures["mcp_hybrid_wall_ms"] / figures["mcp_lexical_wall_ms"], 2
        )
        figures["rss_lexical_server_mb"] = rss_mb(lexical.pid)
        figures["rss_hybrid_server_mb"] = rss_mb(hybrid.pid)
        return figures
    finally:
        for proc in (lexical, hybrid):
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=60)


def hundred_k(where: Path, root: Path) -> Path:
    """The tier's store with every item copied nine more times (and a noisy copy of its vector), once, in place:
    run the 10k figures first (`main` does)."""
    import numpy as np

    from cortex_engine.semantic import vectors

    big = where  # in place: a copied folder would be another store (a store's identity is its repository's path)
    if (big / "expanded").is_file():
        return big
    db = db_of(big / "home")
    conn = sqlite3.connect(db)
    rng = np.random.default_rng(7)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(memory_items)")]
    copied = [c for c in columns if c not in ("id", "source_id")]
    originals = conn.execute("SELECT rowid FROM memory_items").fetchall()
    stored = dict(conn.execute("SELECT item_rowid, vector FROM item_vectors").fetchall())
    with conn:
        for n in range(1, 10):
            conn.execute(
                f"INSERT INTO memory_items(id, source_id, {', '.join(copied)}) SELECT id || '-c{n}', "
                f"CASE WHEN source_id IS NULL THEN NULL ELSE source_id || '-c{n}' END, {', '.join(copied)} "
                "FROM memory_items WHERE id NOT LIKE '%-c_'"
            )
        rows = conn.execute("SELECT rowid, id FROM memory_items WHERE id LIKE '%-c_'").fetchall()
        base = {r[1]: r[0] for r in conn.execute("SELECT rowid, id FROM memory_items WHERE id NOT LIKE '%-c_'")}
        batch = []
        for rowid, ident in rows:
            original = stored.get(base[ident[:-3]])
            if original is None:
                continue
            vec = vectors.unpack(original) + rng.normal(0, 0.02, 384).astype(np.float32)
            batch.append((rowid, vec / np.linalg.norm(vec)))
        from dense import store_vectors

        store_vectors(conn, dict(batch))
    count = conn.execute("SELECT count(*) FROM memory_items").fetchone()[0]
    conn.close()
    (big / "expanded").write_text(str(count))
    print(f"100k store: {count} items, {len(originals)} originals", file=sys.stderr, flush=True)
    return big


def in_process(big: Path, runs: int, calls: int) -> dict[str, float]:
    """Recall in process at 100k, lexical and hybrid alternately."""
    from cortex_engine.engine import Engine

    times: dict[str, list[float]] = {"lexical": [], "hybrid": []}
    cpu: dict[str, list[float]] = {"lexical": [], "hybrid": []}
    with Engine(big / "repo", home=big / "home", clock=lambda: synth.NOW) as engine:
        for name in ("lexical", "hybrid"):  # warm both paths (the matrix, the encoder, SQLite's cache)
            os.environ["CORTEX_SEMANTIC"] = "1" if name == "hybrid" else "0"
            engine.recall("warm up", book=False)
        for run in range(runs):
            for n in range(calls):
                for name in ("lexical", "hybrid") if (run + n) % 2 == 0 else ("hybrid", "lexical"):
                    os.environ["CORTEX_SEMANTIC"] = "1" if name == "hybrid" else "0"
                    t0, c0 = time.perf_counter(), time.process_time()
                    surface = engine.recall(TOPICS[n % len(TOPICS)], book=False)
                    times[name].append(time.perf_counter() - t0)
                    cpu[name].append(time.process_time() - c0)
                    assert ("dense" in surface.retrievers) == (name == "hybrid")
        items = engine.conn.execute("SELECT count(*) FROM memory_items").fetchone()[0]
    os.environ.pop("CORTEX_SEMANTIC", None)
    return {
        "items": items,
        **{f"inprocess_{k}_ms_median": round(statistics.median(v) * 1000, 1) for k, v in times.items()},
        **{f"inprocess_{k}_ms_p95": round(sorted(v)[int(len(v) * 0.95) - 1] * 1000, 1) for k, v in times.items()},
        **{f"inprocess_{k}_cpu_ms_median": round(statistics.median(v) * 1000, 1) for k, v in cpu.items()},
    }


def main() -> int:
    """Build what is missing, measure, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/tmp/cortex-bench-hybrid"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--skip", nargs="*", default=[], choices=["mcp", "100k"])
    parser.add_argument(
        "--embed-limit",
        type=int,
        default=0,
        help="embed only this many items for real (the throughput); the rest get noisy copies",
    )
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose servers run")
    parser.add_argument("--fresh", action="store_true", help="a topic new to the server on every call")
    args = parser.parse_args()
    global LIMIT, TREE, FRESH
    LIMIT = args.embed_limit
    TREE, FRESH = args.tree, args.fresh
    args.root.mkdir(parents=True, exist_ok=True)
    where = tier(args.root)
    assert isinstance(where, Path)
    report: dict[str, object] = {"backfill_10k": backfill(where)}
    print(json.dumps(report), file=sys.stderr, flush=True)
    if "mcp" not in args.skip and not (where / "expanded").is_file():
        report["warm_mcp_10k"] = warm_mcp(where, args.runs, args.calls)
        print(json.dumps(report), file=sys.stderr, flush=True)
    if "100k" not in args.skip:
        report["in_process_100k"] = in_process(hundred_k(where, args.root), args.runs, args.calls)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
