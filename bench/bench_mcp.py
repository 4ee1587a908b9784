"""`cortex serve` over stdio: start-up time and the `cortex_recall` round trip on a store of N notes.

Usage: python bench/bench_mcp.py [--items 10000] [--runs 30] [--starts 5]
Start-up is measured from spawning the server process to the end of the MCP initialize handshake, with the
mcp SDK's own stdio client (the way Claude Code starts it). The round trip is one `cortex_recall` call
answered over the pipe, engine opened and closed per call as the server does. Prints one JSON object;
nothing is asserted (figures are recorded, not gated).
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
from datetime import datetime, timedelta, timezone
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
WORDS = (
    "queue spool flush ledger store graph recall brief state token budget session branch worktree commit "
    "rename stale moved contest decision insight blocker intent focus index digest hash schema migrate "
    "cache tier decay reinforce access scope subject kafka postgres sqlite oidc auth login parser lexer "
    "render label trust freshness economy hook capture subagent summary episode failure test build"
).split()
KINDS = ("insight", "decision", "intent", "blocker", "focus")


def seed(repo: Path, home: Path, items: int) -> float:
    """Write `items` notes through the engine (as bench_recall does); returns seconds taken."""
    sys.path.insert(0, str(ROOT))
    from cortex_engine.engine import Engine

    rng = random.Random(7)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    engine = Engine(repo, home=home, clock=lambda: start)
    began = time.perf_counter()
    for n in range(items):
        kind = KINDS[n % len(KINDS)]
        words = rng.sample(WORDS, 9)
        subject = None if kind == "insight" else f"{words[0]} {words[1]} {n % 400}"
        engine.clock = lambda n=n: start + timedelta(minutes=n)
        engine.note(kind, " ".join(words[2:]) + f" in src/{words[2]}/{words[3]}_{n % 50}.py", subject)
    engine.close()
    return time.perf_counter() - began


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of `values`."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * len(ordered)) - 1))]


async def measure(params: StdioServerParameters, topics: list[str], starts: int) -> dict[str, object]:
    """Time `starts` cold starts, then the recall round trips in one session."""
    startups: list[float] = []
    with open(os.devnull, "w") as errlog:
        for _ in range(starts):
            began = time.perf_counter()
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    startups.append((time.perf_counter() - began) * 1000)
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.call_tool("cortex_recall", {"topic": "warm up"})
                route: list[float] = []
                for _ in range(10):
                    began = time.perf_counter()
                    await session.call_tool("cortex_route", {})
                    route.append((time.perf_counter() - began) * 1000)
                recall: list[float] = []
                errors = 0
                for topic in topics:
                    began = time.perf_counter()
                    result = await session.call_tool("cortex_recall", {"topic": topic})
                    recall.append((time.perf_counter() - began) * 1000)
                    errors += bool(result.is_error)
    return {
        "startup_ms": {"median": round(statistics.median(startups), 1), "min": round(min(startups), 1),
                       "max": round(max(startups), 1), "runs": len(startups)},
        "route_roundtrip_ms": {"median": round(statistics.median(route), 2)},
        "recall_roundtrip_ms": {"median": round(statistics.median(recall), 2), "p90": round(percentile(recall, 0.9), 2),
                                "max": round(max(recall), 2), "runs": len(recall), "errors": errors},
    }


def main() -> None:
    """Seed a store, then time the server's start-up and recall round trips."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo, home = Path(tmp, "repo"), Path(tmp, "home")
        repo.mkdir()
        env = {**os.environ, "CORTEX_HOME": str(home), "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
               "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
        for n in range(50):
            path = repo / "src" / WORDS[n % len(WORDS)] / f"file_{n}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x = 1\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True, env=env)
        seconds = seed(repo, home, args.items)
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "cortex_engine.cli", "serve"], cwd=str(repo),
            env={"CORTEX_HOME": str(home), "CORTEX_NOW": "2026-03-01T00:00:00Z", "PYTHONPATH": str(ROOT),
                 "CORTEX_GC_AUTO": "0"},
        )
        rng = random.Random(11)
        topics = [" ".join(rng.sample(WORDS, 2)) for _ in range(args.runs)]
        figures = anyio.run(measure, params, topics, args.starts)
        print(json.dumps({"items": args.items, "seed_seconds": round(seconds, 1), **figures}, indent=2))


if __name__ == "__main__":
    main()
