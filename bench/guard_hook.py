"""What the plugin's Bash guard (`plugin/hooks/cortex-guard.sh`, PreToolUse on every Bash call) costs per call.

Usage: python bench/guard_hook.py [--runs 200]

Runs the guard as the plugin declares it (`bash <script>`, the payload on stdin) with an everyday command (allowed,
no output), a denied one, and a 64 KiB heredoc command, `--runs` times each, and prints one JSON object: median
and 95th-percentile wall milliseconds per case, beside a bare `bash -c :` (the floor any bash hook pays).
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUARD = ROOT / "plugin" / "hooks" / "cortex-guard.sh"


def payload(command: str) -> str:
    return json.dumps(
        {
            "session_id": "s",
            "transcript_path": "/dev/null",
            "cwd": "/repo",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "run it"},
            "tool_use_id": "toolu_1",
        }
    )


def timed(argv: list[str], stdin: str, runs: int) -> dict[str, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, input=stdin, text=True, capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {"median_ms": round(statistics.median(times), 2), "p95_ms": round(times[int(len(times) * 0.95) - 1], 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    runs = parser.parse_args().runs
    heredoc = "cat > notes.txt <<'EOF'\n" + ("x" * 79 + "\n") * 820 + "EOF"
    cases = {
        "bash -c : (floor)": (["bash", "-c", ":"], ""),
        "allowed: pytest -q": (["bash", str(GUARD)], payload("python -m pytest -q tests/test_undo.py")),
        "denied: cortex inbox accept --all": (["bash", str(GUARD)], payload("cortex inbox accept --all")),
        "allowed: a 64 KiB heredoc": (["bash", str(GUARD)], payload(heredoc)),
    }
    print(json.dumps({name: timed(argv, stdin, runs) for name, (argv, stdin) in cases.items()}, indent=2))


if __name__ == "__main__":
    main()
