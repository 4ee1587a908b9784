"""Recall latency at scale: median in-process and as a CLI call, on a store of N notes.

Usage: python bench/bench_recall.py [--items 10000] [--runs 30]
Prints one JSON object; nothing is asserted (figures are recorded, not gated).
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

WORDS = (
    "queue spool flush ledger store graph recall brief state token budget session branch worktree commit "
    "rename stale moved contest decision insight blocker intent focus index digest hash schema migrate "
    "cache tier decay reinforce access scope subject kafka postgres sqlite oidc auth login parser lexer "
    "render label trust freshness economy hook capture subagent summary episode failure test build"
).split()
KINDS = ("insight", "decision", "intent", "blocker", "focus")


def seed(repo: Path, home: Path, items: int) -> float:
    """Write `items` notes through the engine; returns seconds taken."""
    from cortex_engine.engine import Engine

    rng = random.Random(7)
    start_clock = datetime(2026, 1, 1, tzinfo=timezone.utc)
    engine = Engine(repo, home=home, clock=lambda: start_clock)
    began = time.perf_counter()
    for n in range(items):
        kind = KINDS[n % len(KINDS)]
        words = rng.sample(WORDS, 9)
        subject = None if kind == "insight" else f"{words[0]} {words[1]} {n % 400}"
        text = " ".join(words[2:]) + f" in src/{words[2]}/{words[3]}_{n % 50}.py"
        engine.clock = lambda n=n: start_clock + timedelta(minutes=n)
        engine.note(kind, text, subject)
    engine.close()
    return time.perf_counter() - began


def main() -> None:
    """Seed, then time recall in-process and through the CLI."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo, home = Path(tmp, "repo"), Path(tmp, "home")
        repo.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
        for n in range(50):
            path = repo / "src" / WORDS[n % len(WORDS)] / f"file_{n}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x = 1\n")
        env = {**os.environ, "CORTEX_HOME": str(home), "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
               "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x", "CORTEX_NOW": "2026-03-01T00:00:00Z"}
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True, env=env)
        seconds = seed(repo, home, args.items)

        from cortex_engine.engine import Engine

        rng = random.Random(11)
        topics = [" ".join(rng.sample(WORDS, 2)) for _ in range(args.runs)]
        engine = Engine(repo, home=home, clock=lambda: datetime(2026, 3, 1, tzinfo=timezone.utc))
        engine.recall("warm up")
        inproc = []
        for topic in topics:
            began = time.perf_counter()
            engine.recall(topic)
            inproc.append((time.perf_counter() - began) * 1000)
        engine.close()
        cli = []
        for topic in topics[: max(5, args.runs // 3)]:
            began = time.perf_counter()
            subprocess.run([sys.executable, "-m", "cortex_engine.cli", "recall", topic], cwd=repo, env=env,
                           check=True, capture_output=True)
            cli.append((time.perf_counter() - began) * 1000)
        print(json.dumps({
            "items": args.items,
            "seed_seconds": round(seconds, 1),
            "recall_inprocess_ms": {"median": round(statistics.median(inproc), 2), "p90": round(sorted(inproc)[int(len(inproc) * 0.9) - 1], 2)},
            "recall_cli_ms": {"median": round(statistics.median(cli), 1), "max": round(max(cli), 1)},
        }, indent=2))


if __name__ == "__main__":
    main()
