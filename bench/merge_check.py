"""The merge check's cost with N branches that each hold a note: HEAD unmoved, and HEAD moved.

Usage: python bench/merge_check.py [--branches 100] [--merged 10] [--repeat 5]

Builds a temporary repository with N branches off main (one commit and one decision each, written through the
engine), then times `Engine.check_merges()` in-process:
  unmoved_ms        HEAD has not moved since the last check (the SessionStart/flush fast path)
  moved_none_ms     HEAD moved, no branch merged (every branch is asked `git cherry`: the worst case)
  moved_merged_ms   HEAD moved by merging `--merged` branches (promotions written)
  moved_idle_ms     HEAD moved again with nothing left to promote from merged branches (the rest still asked)
Prints one JSON object; nothing is asserted.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cortex_engine.base import records  # noqa: E402
from cortex_engine.engine import Engine  # noqa: E402
from cortex_engine.memory.notes import write_note  # noqa: E402

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@x.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@x.invalid",
}


def git(repo: Path, *args: str) -> str:
    """Run git in the bench repository."""
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=ENV).stdout


def build(root: Path, branches: int) -> Path:
    """A repository with `branches` branches off main, one commit each, and one decision per branch scope."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("bench\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    base = git(repo, "rev-parse", "HEAD").strip()
    with Engine(repo) as engine:
        for n in range(branches):
            blob = subprocess.run(
                ["git", "hash-object", "-w", "--stdin"],
                cwd=repo,
                input=f"b{n}\n",
                text=True,
                capture_output=True,
                check=True,
            ).stdout.strip()
            new_tree = subprocess.run(
                ["git", "mktree"],
                cwd=repo,
                capture_output=True,
                text=True,
                check=True,
                input=f"100644 blob {blob}\tf{n}.txt\n",
            ).stdout.strip()
            oid = subprocess.run(
                ["git", "commit-tree", new_tree, "-p", base, "-m", f"b{n}"],
                cwd=repo,
                env=ENV,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            git(repo, "update-ref", f"refs/heads/b{n}", oid)
            scope = records.replace(engine.scope, key=engine.scope.key.rsplit(":", 1)[0] + f":b{n}", branch=f"b{n}")
            write_note(
                engine.conn, scope, None, "decision", f"branch {n} picks option {n}", f"topic {n}", None, engine.now()
            )
    return repo


def timed(repo: Path, repeat: int = 1) -> tuple[float, object]:
    """Median milliseconds of `check_merges()` on a fresh engine (the engine's open is not counted)."""
    times, result = [], None
    for _ in range(repeat):
        with Engine(repo) as engine:
            started = time.perf_counter()
            result = engine.check_merges()
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), result


def main() -> None:
    """Build, time, print."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--branches", type=int, default=100)
    parser.add_argument("--merged", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CORTEX_HOME"] = str(Path(tmp) / "home")
        repo = build(Path(tmp), args.branches)
        timed(repo)  # the first check after the notes were written
        unmoved, _ = timed(repo, args.repeat)
        (repo / "main.txt").write_text("1\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "main moves")
        moved_none, none = timed(repo)
        for n in range(args.merged):
            git(repo, "merge", "-q", "--no-ff", f"b{n}", "-m", f"merge b{n}")
        moved_merged, merged = timed(repo)
        (repo / "main.txt").write_text("2\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "main moves again")
        moved_idle, _ = timed(repo)
    print(
        json.dumps(
            {
                "branches": args.branches,
                "merged": args.merged,
                "unmoved_ms": round(unmoved, 2),
                "moved_none_ms": round(moved_none, 1),
                "moved_none_promoted": len(none.promoted),  # type: ignore[union-attr]
                "moved_merged_ms": round(moved_merged, 1),
                "promoted": len(merged.promoted),  # type: ignore[union-attr]
                "moved_idle_ms": round(moved_idle, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
