"""The first SessionStart after a pull that adds N decision files: how long the hook takes, and the brief.

Usage: python bench/shared_sync.py [--files 500] [--old PATH_TO_OLD_TREE] [--runs 3]

Builds a temporary repository where the user holds two decisions, commits N decision files under
`docs/decisions/` authored by someone else, then runs `cortex inject-header --quiet` (the SessionStart hook) once
on a fresh store, `--runs` times, for this tree (arrivals held for review, the default, and
review policy `none` in the home's settings file, the files applied at once; an older tree read
`CORTEX_REVIEW_ARRIVALS`, which is set too) and, with `--old`, for another tree (its source folder,
put first on PYTHONPATH). Prints one JSON object: wall and CPU seconds per case (medians; CPU is the hook process's
own) and whether the user's two decisions are still in the brief. Nothing is asserted.
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

HERE = Path(__file__).resolve().parent.parent
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "me",
    "GIT_AUTHOR_EMAIL": "me@x.invalid",
    "GIT_COMMITTER_NAME": "me",
    "GIT_COMMITTER_EMAIL": "me@x.invalid",
    "CORTEX_NOW": "2026-08-02T18:00:00Z",
}


def git(repo: Path, *args: str) -> None:
    """Run git in the bench repository."""
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=ENV)


def build(root: Path, files: int) -> Path:
    """The repository: one commit by the user, then `files` decision files by another author (no store yet)."""
    repo = root / "repo"
    (repo / "docs" / "decisions").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("bench\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    for n in range(files):
        (repo / "docs" / "decisions" / f"{n:04d}-topic-{n}.md").write_text(
            f'# topic {n}\n\n## Decision Outcome\n\nChosen option: "use tool {n} for the topic {n} work"\n'
        )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "decisions", "--author=Someone Else <else@x.invalid>")
    return repo


def _env(tree: Path, home: Path, review: str | None) -> dict[str, str]:
    """The environment of a run from `tree` with its own CORTEX_HOME; the review policy in that home's settings file
    (this tree reads only the file; an older one read the variable)."""
    env = {**ENV, "CORTEX_HOME": str(home), "PYTHONPATH": str(tree)}
    if review is not None:
        home.mkdir(parents=True, exist_ok=True)
        (home / "settings.json").write_text(json.dumps({"review_arrivals": review}) + "\n")
        env["CORTEX_REVIEW_ARRIVALS"] = review
    return env


def cli(tree: Path, home: Path, repo: Path, *args: str, review: str | None = None) -> subprocess.CompletedProcess:
    """Run `cortex` from `tree` with its own CORTEX_HOME."""
    env = _env(tree, home, review)
    return subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def case(tree: Path, repo: Path, root: Path, runs: int, review: str | None) -> dict[str, object]:
    """Median wall seconds of the first SessionStart on a fresh store holding the user's two decisions."""
    times, cpu, kept = [], [], []
    for run in range(runs):
        home = root / f"home-{tree.name}-{review}-{run}"
        for subject, text in (("auth", "use OIDC"), ("database", "use postgres")):
            cli(tree, home, repo, "note", "--kind", "decision", "--subject", subject, text, review=review)
        env = _env(tree, home, review)
        start = time.perf_counter()
        hook = subprocess.Popen(
            [sys.executable, "-m", "cortex_engine.adapters.cli", "inject-header", "--quiet"],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        out = hook.stdout.read() if hook.stdout else ""
        _, _, usage = os.wait4(hook.pid, 0)  # the hook's own CPU: on a shared machine wall time is mostly waiting
        times.append(time.perf_counter() - start)
        cpu.append(usage.ru_utime + usage.ru_stime)
        kept.append("use OIDC" in out and "use postgres" in out)
        shutil.rmtree(home)
    return {
        "wall_median_s": round(statistics.median(times), 2),
        "cpu_median_s": round(statistics.median(cpu), 2),
        "wall_runs_s": [round(t, 2) for t in times],
        "user_notes_in_brief": all(kept),
    }


def main() -> None:
    """Build once, time each tree and setting."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--old", type=Path, help="another tree's source folder (e.g. main, extracted)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="cortex-shared-sync-"))
    try:
        repo = build(root, args.files)
        out: dict[str, object] = {"files": args.files}
        if args.old is not None:
            out["old"] = case(args.old.resolve(), repo, root, args.runs, None)
        out["new_review"] = case(HERE, repo, root, args.runs, None)
        out["new_trusted"] = case(HERE, repo, root, args.runs, "none")
        print(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
