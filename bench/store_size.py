"""Store size after checkpoint: a store written by the old tree (schema 7) against the same store migrated.

Usage:
    python bench/store_size.py --store DIR [--new TREE]

DIR is a tier built by bench/synth.py under the OLD tree, so its store (DIR/home) is schema 7. The store is
copied to DIR/home-v8 and opened by the new tree with `cortex recall` (which migrates it on open, timed); then
both are checkpointed and measured: file bytes, bytes per memory item, and the largest tables and indexes
(SQLite's dbstat). The figures print as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

NOW = "2026-08-02T18:00:00Z"


def measure(db: Path) -> dict[str, object]:
    """Checkpoint `db`, then its size, schema version, item count and the largest objects in MiB."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        items = conn.execute("SELECT COUNT(*) FROM memory_items").fetchone()[0]
        version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
        objects = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 12").fetchall()
    finally:
        conn.close()
    size = db.stat().st_size
    return {
        "schema": int(version),
        "bytes": size,
        "mib": round(size / 1048576, 2),
        "items": items,
        "bytes_per_item": round(size / max(items, 1)),
        "largest_mib": {name: round(total / 1048576, 2) for name, total in objects},
    }


def main(argv: list[str] | None = None) -> int:
    """Print old and new sizes, and the migration's wall and CPU time, as JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--new", default=str(Path(__file__).resolve().parent.parent))
    args = parser.parse_args(argv)
    old_home, new_home = args.store / "home", args.store / "home-v8"
    shutil.rmtree(new_home, ignore_errors=True)
    shutil.copytree(old_home, new_home)
    env = {**os.environ, "PYTHONPATH": args.new, "CORTEX_HOME": str(new_home), "CORTEX_NOW": NOW}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", "recall", "spool flush"],
        env=env,
        capture_output=True,
        cwd=args.store / "repo",
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode(errors="replace"))
    (old_db,) = old_home.glob("projects/*/cortex.db")
    (new_db,) = new_home.glob("projects/*/cortex.db")
    report = {
        "old": measure(old_db),
        "new": measure(new_db),
        "migrate_and_recall_wall_ms": round(wall * 1000),
        "migrate_and_recall_cpu_ms": round(
            (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
        ),
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
