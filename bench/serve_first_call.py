"""`cortex serve`: spawn → first `tools/call` (cortex_recall) answered, wall time and the server's CPU by then.

Usage:
    python bench/serve_first_call.py [--runs N] [--before DIR]

What Claude Code sends at the start of a session, at once: `initialize`, `notifications/initialized`, `tools/list`,
then a `cortex_recall`. Each run spawns a fresh server on one seeded repository (a few notes, so recall reads a real
store) and times the recall's answer from the spawn; the server's CPU (user + system, every thread, from
/proc/<pid>/stat) is read the moment the answer arrives. With `--before DIR` (a checkout of an older Cortex) the two
are run interleaved, one each in turn, so load on the machine falls on both alike. Medians and ranges, as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")


def line(n: int | None, method: str, params: dict) -> bytes:
    """One JSON-RPC line (a notification when `n` is None)."""
    message: dict = {"jsonrpc": "2.0", "method": method, "params": params}
    if n is not None:
        message["id"] = n
    return (json.dumps(message) + "\n").encode()


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a live process, every thread included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def one_run(checkout: Path, repo: Path, env: dict[str, str]) -> dict[str, float]:
    """Spawn a server from `checkout`, ask, and time the recall's answer from the spawn."""
    began = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cortex_engine.adapters.cli", "serve"],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**env, "PYTHONPATH": str(checkout)},
    )
    assert proc.stdin is not None and proc.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
    proc.stdin.write(line(1, "initialize", hello))
    proc.stdin.write(line(None, "notifications/initialized", {}))
    proc.stdin.write(line(2, "tools/list", {}))
    proc.stdin.write(line(3, "tools/call", {"name": "cortex_recall", "arguments": {"topic": "queue engine"}}))
    proc.stdin.flush()
    wall = cpu = -1.0
    while raw := proc.stdout.readline():
        if json.loads(raw).get("id") == 3:
            wall = time.perf_counter() - began
            cpu = cpu_seconds(proc.pid)
            break
    proc.stdin.close()
    proc.wait(timeout=60)
    return {"wall_ms": round(wall * 1000), "cpu_ms": round(cpu * 1000)}


def seeded(tmp: Path, env: dict[str, str]) -> Path:
    """A repository with a contest and a few decisions in its store."""
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    notes = [
        ("queue engine", "use kafka for the queue engine"),
        ("queue engine", "do not use kafka for the queue engine"),
        ("ledger store", "use sqlite for the ledger"),
        ("auth strategy", "use OIDC with server-side sessions"),
    ]
    for subject, content in notes:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "cortex_engine.adapters.cli",
                "note",
                "--kind",
                "decision",
                "--subject",
                subject,
                content,
            ],
            cwd=repo,
            env={**env, "PYTHONPATH": str(ROOT)},
            check=True,
            capture_output=True,
        )
    return repo


def summary(runs: list[dict[str, float]]) -> dict[str, object]:
    """Median and range of each figure."""
    out: dict[str, object] = {}
    for key in ("wall_ms", "cpu_ms"):
        values = [r[key] for r in runs]
        out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    return out


def main() -> int:
    """Run the bench; print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--before", type=Path, help="a checkout of an older Cortex, run interleaved")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "HOME": tmp,
            "CORTEX_HOME": str(Path(tmp) / "home"),
            "CORTEX_SEMANTIC": "0",
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        }
        repo = seeded(Path(tmp), env)
        checkouts = {"after": ROOT, **({"before": args.before.resolve()} if args.before else {})}
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
        for _ in range(args.runs):
            for name, checkout in checkouts.items():
                runs[name].append(one_run(checkout, repo, env))
    print(
        json.dumps(
            {"runs": args.runs, "loadavg": os.getloadavg(), **{n: summary(r) for n, r in runs.items()}}, indent=1
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
