"""Hook costs: the capture hook's median (pure bash), and the Python hook paths at 10,000 items.

Usage: python bench/bench_hooks.py [--items 10000] [--runs 15]
Prints one JSON object; nothing is asserted (figures are recorded, not gated).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_recall import seed  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / "hooks"


def timed(args: list[str], payload: dict, env: dict, cwd: Path, runs: int) -> dict[str, float]:
    """Median and max wall time (ms) of a command fed a payload."""
    body = json.dumps(payload).encode()
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run(args, input=body, env=env, cwd=cwd, capture_output=True, check=True)
        samples.append((time.perf_counter() - began) * 1000)
    return {"median_ms": round(statistics.median(samples), 2), "max_ms": round(max(samples), 2)}


def main() -> None:
    """Seed a store, engage a worktree, then time each hook path."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo, home = Path(tmp, "repo"), Path(tmp, "home")
        repo.mkdir()
        env = {**os.environ, "CORTEX_HOME": str(home), "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
               "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x", "CORTEX_NOW": "2026-01-08T00:00:00Z"}
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
        (repo / "src").mkdir()
        (repo / "src" / "store.py").write_text("x = 1\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True, env=env)
        seed(repo, home, args.items)
        cortex = shutil.which("cortex") or "cortex"
        env["CORTEX_BIN"] = cortex
        base = {"session_id": "bench", "cwd": str(repo), "transcript_path": "/dev/null"}
        inject = timed([cortex, "inject-header", "--quiet"], {**base, "hook_event_name": "SessionStart"}, env, repo,
                       max(5, args.runs // 3))
        capture = timed(["bash", str(HOOKS / "cortex-capture.sh")],
                        {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "t",
                         "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a", "stderr": ""}}, env, repo,
                        args.runs * 10)
        reflect_pre = timed([cortex, "hook", "reflect-pre"],
                            {**base, "hook_event_name": "PreToolUse", "tool_name": "Edit",
                             "tool_input": {"file_path": str(repo / "src" / "store.py")}}, env, repo, args.runs)
        reflect_prompt = timed([cortex, "hook", "reflect-prompt"],
                               {**base, "hook_event_name": "UserPromptSubmit", "prompt": "fix the spool flush"}, env, repo,
                               args.runs)
        flush = timed([cortex, "flush-spool"], {}, env, repo, 3)
        print(json.dumps({"items": args.items, "capture_hook": capture, "inject_header_quiet": inject,
                          "reflect_pre": reflect_pre, "reflect_prompt": reflect_prompt, "flush_spool": flush}, indent=2))


if __name__ == "__main__":
    main()
