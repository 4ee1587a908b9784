"""`cortex serve`: spawn → first `tools/call` (cortex_recall) answered, wall time and the server's CPU by then.

Usage:
    python bench/serve_first_call.py [--runs N] [--before DIR] [--reference DIR] [--write]

What Claude Code sends at the start of a session, at once: `initialize`, `notifications/initialized`, `tools/list`,
then a `cortex_recall`. Each run spawns a fresh server on one seeded repository (a few notes, so recall reads a real
store) and times the recall's answer from the spawn; the server's CPU (user + system, every thread, from
/proc/<pid>/stat) is read the moment the answer arrives. With `--before DIR` (a checkout of an older Cortex) the two
are run interleaved, one each in turn, so load on the machine falls on both alike. With `--reference DIR` (a built
checkout of the TypeScript reference, ShuromiU/Cortex: `node DIR/dist/transports/cli.js serve`) the reference is
seeded with the same notes through its own `cortex_note` tool (its store is `.cortex.db` in the directory it serves)
and run interleaved too, the order of the servers turning each round. Two CPU figures per run: `cpu_ms` at the
answer (/proc/<pid>/stat) and `rusage_ms`, the child's whole user + system (wait4) once its input is closed right
after the answer, which includes whatever the server still does after answering (Cortex's background SDK import).
Medians and ranges, as JSON; `--write` appends a row per server to bench/RESULTS.md's first-call table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

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


def command(checkout: Path, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """How to start the server of `checkout`: the reference's node entry point, or a Cortex tree's module."""
    node_entry = checkout / "dist" / "transports" / "cli.js"
    if node_entry.is_file():
        return ["node", str(node_entry), "serve"], env
    return [sys.executable, "-m", "cortex_engine.adapters.cli", "serve"], {**env, "PYTHONPATH": str(checkout)}


def one_run(checkout: Path, repo: Path, env: dict[str, str]) -> dict[str, float]:
    """Spawn a server from `checkout`, ask, and time the recall's answer from the spawn."""
    argv, child_env = command(checkout, env)
    began = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env
    )
    assert proc.stdin is not None and proc.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
    proc.stdin.write(line(1, "initialize", hello))
    proc.stdin.write(line(None, "notifications/initialized", {}))
    proc.stdin.write(line(2, "tools/list", {}))
    proc.stdin.write(line(3, "tools/call", {"name": "cortex_recall", "arguments": {"topic": "queue engine"}}))
    proc.stdin.flush()
    wall = cpu = -1.0
    text = ""
    while raw := proc.stdout.readline():
        answer = json.loads(raw)
        if answer.get("id") == 3:
            wall = time.perf_counter() - began
            cpu = cpu_seconds(proc.pid)
            text = answer["result"]["content"][0]["text"]
            break
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if "kafka" not in text:
        raise SystemExit(f"{argv[1]}: the recall did not find the seeded notes: {text[:200]!r}")
    rusage = usage.ru_utime + usage.ru_stime
    return {"wall_ms": round(wall * 1000), "cpu_ms": round(cpu * 1000), "rusage_ms": round(rusage * 1000)}


NOTES = [
    ("queue engine", "use kafka for the queue engine"),
    ("queue engine", "do not use kafka for the queue engine"),
    ("ledger store", "use sqlite for the ledger"),
    ("auth strategy", "use OIDC with server-side sessions"),
]


def seed_reference(reference: Path, repo: Path, env: dict[str, str]) -> None:
    """The same notes in the reference's store, written through its own MCP `cortex_note` tool."""
    argv, child_env = command(reference, env)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
    wire = line(1, "initialize", hello) + line(None, "notifications/initialized", {})
    for n, (subject, content) in enumerate(NOTES, start=2):
        arguments = {"kind": "decision", "subject": subject, "content": content}
        wire += line(n, "tools/call", {"name": "cortex_note", "arguments": arguments})
    done = subprocess.run(argv, cwd=repo, input=wire, env=child_env, capture_output=True, timeout=120, check=False)
    noted = [json.loads(raw) for raw in done.stdout.splitlines() if raw.strip()]
    texts = [m["result"]["content"][0]["text"] for m in noted if "result" in m and m.get("id", 0) > 1]
    if len(texts) != len(NOTES) or not all(t.startswith("Noted") for t in texts):
        raise SystemExit(f"the reference did not take the notes: {texts or done.stderr[-300:]!r}")


def seeded(tmp: Path, env: dict[str, str]) -> Path:
    """A repository with a contest and a few decisions in its store."""
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for subject, content in NOTES:
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
    for key in ("wall_ms", "cpu_ms", "rusage_ms"):
        values = [r[key] for r in runs]
        out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    return out


def main() -> int:
    """Run the bench; print JSON (and with `--write`, append its rows to bench/RESULTS.md)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--before", type=Path, help="a checkout of an older Cortex, run interleaved")
    parser.add_argument("--reference", type=Path, help="a built checkout of the TypeScript reference, interleaved")
    parser.add_argument("--write", action="store_true", help="append the rows to bench/RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "HOME": tmp,
            "TMPDIR": tmp,
            "CORTEX_HOME": str(Path(tmp) / "home"),
            "CORTEX_SEMANTIC": "0",
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        }
        repo = seeded(Path(tmp), env)
        checkouts = {"cortex": ROOT}
        if args.before:
            checkouts["before"] = args.before.resolve()
        if args.reference:
            checkouts["reference"] = args.reference.resolve()
            seed_reference(checkouts["reference"], repo, env)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
        order = list(checkouts)
        for n in range(args.runs):
            turn = n % len(order)
            for name in order[turn:] + order[:turn]:
                runs[name].append(one_run(checkouts[name], repo, env))
    result = {"runs": args.runs, "loadavg": os.getloadavg(), **{n: summary(r) for n, r in runs.items()}}
    print(json.dumps(result, indent=1))
    if args.write:
        write_rows(result, checkouts)
    return 0


def write_rows(result: dict[str, Any], checkouts: dict[str, Path]) -> None:
    """One row per server under RESULTS.md's interleaved first-call table (the table is made when missing)."""
    results = ROOT / "bench" / "RESULTS.md"
    text = results.read_text(encoding="utf-8")
    head = "## `cortex serve` against the TypeScript reference: spawn to the first `cortex_recall` answered"
    if head not in text:
        intro = (
            "`python bench/serve_first_call.py --runs N --reference /work/ref --write`: initialize, initialized, "
            "tools/list and a `cortex_recall` sent at once to a freshly spawned server on one repository seeded with "
            "the same four decisions (a contest among them); the servers run interleaved, the order turning each "
            "round. `cpu at answer`: the server's user + system CPU (every thread, /proc) when the recall's answer "
            "arrives; `rusage`: the child's whole user + system (wait4) after its input is closed right after that "
            "answer, which for Cortex includes the MCP SDK's import (about a second of CPU), made once the wire is "
            "quiet, after the answer, and before it exits. Medians (min–max)."
        )
        table = "| date (UTC) | server | runs | load | wall ms | cpu at answer ms | rusage ms |\n" + "|---" * 7 + "|\n"
        text = text.rstrip("\n") + f"\n\n{head}\n\n{textwrap.fill(intro, 115)}\n\n{table}"
    stamp = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    load = f"{result['loadavg'][0]:.1f}"
    rows = []
    for name in checkouts:
        cells = [result[name][k] for k in ("wall_ms", "cpu_ms", "rusage_ms")]
        figures = [f"{c['median']:g} ({c['min']:g}–{c['max']:g})" for c in cells]
        rows.append(f"| {stamp} | {name} | {result['runs']} | {load} | " + " | ".join(figures) + " |")
    lines = text.rstrip("\n").split("\n")
    at = lines.index(head)
    end = at + 1
    while end < len(lines) and not lines[end].startswith("## "):
        end += 1
    while lines[end - 1].strip() == "":
        end -= 1
    lines[end:end] = rows
    results.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
