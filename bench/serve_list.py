"""`cortex serve`: wall time from spawn to the `initialize` answer and to the `tools/list` answer.

Usage:
    python bench/serve_list.py [--runs N] [--cortex CMD]

Each run spawns a fresh server in a fresh temp repository (nothing is stored: tools/list opens no store), sends
what Claude Code sends first (`initialize`, `notifications/initialized`, `tools/list`) at once, and times each
answer from the spawn. Then it waits for a `tools/call` (`cortex_route`), which needs the SDK. Medians and the
range are printed as JSON; the machine's load average is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def line(n: int | None, method: str, params: dict) -> bytes:
    """One JSON-RPC line (a notification when `n` is None)."""
    message: dict = {"jsonrpc": "2.0", "method": method, "params": params}
    if n is not None:
        message["id"] = n
    return (json.dumps(message) + "\n").encode()


def one_run(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """Spawn a server, ask, and time each answer from the spawn (ms)."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        began = time.perf_counter()
        proc = subprocess.Popen(
            command,
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**env, "CORTEX_HOME": str(Path(tmp) / "home")},
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(
            line(
                1,
                "initialize",
                {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
            )
        )
        proc.stdin.write(line(None, "notifications/initialized", {}))
        proc.stdin.write(line(2, "tools/list", {}))
        proc.stdin.write(line(3, "tools/call", {"name": "cortex_route", "arguments": {}}))
        proc.stdin.flush()
        times: dict[str, float] = {}
        names = {1: "initialize_ms", 2: "tools_list_ms", 3: "first_call_ms"}
        while len(times) < 3:
            raw = proc.stdout.readline()
            if not raw:
                raise RuntimeError("the server closed its output")
            message = json.loads(raw)
            if message.get("id") in names:
                times[names[message["id"]]] = (time.perf_counter() - began) * 1000
                if message["id"] == 2:
                    assert len(message["result"]["tools"]) >= 14, message
        proc.stdin.close()
        proc.wait(timeout=30)
        return times


def main() -> int:
    """Run the bench and print medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--cortex",
        default=f"{sys.executable} -m cortex_engine.adapters.cli",
        help="the command that runs cortex (default: this checkout under this Python)",
    )
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [one_run([*shlex.split(args.cortex), "serve"], env) for _ in range(args.runs)]
    report = {
        key: {
            "median": round(statistics.median(r[key] for r in runs), 1),
            "min": round(min(r[key] for r in runs), 1),
            "max": round(max(r[key] for r in runs), 1),
        }
        for key in ("initialize_ms", "tools_list_ms", "first_call_ms")
    }
    report["runs"] = args.runs
    report["loadavg"] = os.getloadavg()[0]
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
