"""Short ids at 100,000 items: what `list-memory` spends making a page's ids unique (`base.ids.abbreviate`), and
what resolving a typed prefix spends (`base.ids.resolve_item`).

Usage:
    python bench/short_ids.py [--items N] [--runs N] [--store DIR]

The store is a real Cortex store (made by `open_engine` in a fresh git repository), filled straight through SQL
with N memory items in the mix a long-used store has: notes and command runs (whose handle is their own id), and
episodes, session states and branch snapshots (whose handle is a digest of the item id), ids from a seeded
generator. Then, `--runs` times each: `abbreviate` of the newest page of 50 alone and `list_memory`'s first page whole,
cold (as a one-shot command pays) and warm (a process that lists again: the TUI, `cortex serve`), and `resolve_item`
of an 8-character prefix, cold. Run it from an older checkout (copy the script in) on the same `--store` to
compare. Medians and ranges, as JSON; `--store DIR` keeps the store for reuse.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cortex_engine.base.ids import abbreviate, item_handle, resolve_item  # noqa: E402

MIX = (
    ("notes", "note:decision", 0.45),
    ("command_runs", "command_run", 0.25),
    ("episodes", "episode:test_cycle", 0.25),
)


def fill(conn, items: int, scope_key: str) -> None:  # noqa: ANN001
    """`items` rows in memory_items (the FTS triggers fire as on any write)."""
    rng = random.Random(7)
    rows = []
    for n in range(items):
        pick = rng.random()
        table, kind = "branch_snapshots", "session_state"
        edge = 0.0
        for name, k, share in MIX:
            edge += share
            if pick < edge:
                table, kind = name, k
                break
        raw = f"{rng.getrandbits(128):032x}"
        own = f"{raw[:8]}-{raw[8:12]}-4{raw[13:16]}-{raw[16:20]}-{raw[20:]}"
        source = own if table != "episodes" else f"test_cycle:{own}"
        stamp = f"2026-{1 + n % 12:02d}-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00Z"
        rows.append(
            (f"{table}:{source}", "s", "branch", scope_key, kind, table, source, f"area {n % 50}", f"item {n}", stamp)
        )
    from cortex_engine.store.database import scope_id

    scope = scope_id(conn, scope_key)
    conn.executemany(
        "INSERT INTO memory_items(id, session, scope_type, scope_id, kind, subject, text, created_at) "
        "VALUES (?, NULL, 'branch', ?, ?, ?, ?, ?)",
        [(r[0], scope, r[4], r[7], r[8], r[9]) for r in rows],
    )
    conn.commit()


def forget() -> None:
    """Drop what this process kept of earlier reads (a one-shot `cortex list-memory` starts with nothing)."""
    from cortex_engine.base import ids

    held = getattr(ids, "_DIGESTS", None)
    if held is not None:
        held.clear()


def timed(fn, runs: int) -> dict[str, float]:  # noqa: ANN001
    """Median and range of `fn`'s wall time (ms) over `runs` calls."""
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - began) * 1000)
    return {
        "median": round(statistics.median(samples), 2),
        "min": round(min(samples), 2),
        "max": round(max(samples), 2),
    }


def main() -> int:
    """Build (or reuse) the store, time, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--store", type=Path, help="a directory to build the store in once and reuse")
    args = parser.parse_args()
    base = args.store or Path(tempfile.mkdtemp())
    base.mkdir(parents=True, exist_ok=True)
    os.environ.update({"HOME": str(base), "CORTEX_HOME": str(base / "home"), "CORTEX_SEMANTIC": "0"})
    repo = base / "repo"
    from cortex_engine.engine import open_engine
    from cortex_engine.query.listing import list_memory

    fresh = not repo.exists()
    if fresh:
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    engine = open_engine(str(repo))
    conn = engine.conn
    if fresh:
        fill(conn, args.items, engine.scope.key)
    total = conn.execute("SELECT COUNT(*) FROM memory_items").fetchone()[0]
    page = [
        str(r[0]) for r in conn.execute("SELECT id FROM memory_items ORDER BY created_at DESC, rowid DESC LIMIT 50")
    ]
    shown = abbreviate(conn, page)
    typed = item_handle(page[0])[:8]
    result = {
        "items": total,
        "loadavg": os.getloadavg(),
        "abbreviate_page_cold_ms": timed(lambda: (forget(), abbreviate(conn, page)), args.runs),
        "abbreviate_page_warm_ms": timed(lambda: abbreviate(conn, page), args.runs),
        "list_memory_page_cold_ms": timed(lambda: (forget(), list_memory(conn, limit=50)), args.runs),
        "resolve_prefix_cold_ms": timed(lambda: (forget(), resolve_item(conn, typed)), args.runs),
        "list_memory_page_warm_ms": timed(lambda: list_memory(conn, limit=50), args.runs),
        "longest_shown": max(len(s) for s in shown.values()),
    }
    print(json.dumps(result, indent=1))
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
