#!/usr/bin/env python3
"""Run the eval gate against deliberately broken copies of the engine: every mutant must fail it.

Each mutant in `mutants.json` is one exact text replacement in one file of `cortex_engine/`. The runner
copies the package to a temporary directory, applies the replacement there (the checkout is never
touched), and runs `cortex eval-gate` from the repository root against the copy. A mutant whose text does
not occur exactly once is an error, so a refactor cannot quietly retire a mutant.

Usage:
    python eval/mutants/run.py [--only NAME] [--json] [--jobs N]

The gates run side by side (`--jobs`, one per core by default): each is its own process on its own copy.

Exit 0: the gate failed on every mutant (and passes on the unmutated engine); 1: some mutant survived or
the gate fails on the clean engine; 2: a mutant no longer applies.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = Path(__file__).resolve().parent / "mutants.json"


def gate(package_parent: Path) -> tuple[int, str]:
    """Run the eval gate on the engine under `package_parent`; (exit code, its failure lines).

    `-P` keeps the working directory (the checkout, whose own engine would shadow the copy) off sys.path.
    """
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    done = subprocess.run(
        [sys.executable, "-P", "-m", "cortex_engine.adapters.cli", "eval-gate"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("FAIL")]
    return done.returncode, "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run every mutant (or one) and report which the gate caught."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only the mutant with this name")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="gates run at once (default: cores)")
    args = parser.parse_args(argv)
    mutants = json.loads(MUTANTS.read_text(encoding="utf-8"))["mutants"]
    if args.only:
        mutants = [m for m in mutants if m["name"] == args.only]
        if not mutants:
            print(f"run.py: no mutant named {args.only!r}", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="cortex-mutants-") as tmp:
        clean = Path(tmp) / "clean"
        shutil.copytree(ROOT / "cortex_engine", clean / "cortex_engine", ignore=shutil.ignore_patterns("__pycache__"))
        copies = []
        for n, mutant in enumerate(mutants):
            copy = Path(tmp) / f"mutant-{n}"
            shutil.copytree(clean, copy)
            target = copy / "cortex_engine" / mutant["file"]
            source = target.read_text(encoding="utf-8")
            found = source.count(mutant["find"])
            if found != 1:
                print(
                    f"run.py: mutant {mutant['name']!r}: its text occurs {found} times in {mutant['file']}; "
                    "update eval/mutants/mutants.json to the code as it is now",
                    file=sys.stderr,
                )
                return 2
            target.write_text(source.replace(mutant["find"], mutant["replace"]), encoding="utf-8")
            copies.append(copy)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            on_clean = pool.submit(gate, clean)
            outcomes = list(pool.map(gate, copies))
            code, failures = on_clean.result()
        if code != 0:
            print(f"run.py: the gate fails on the unmutated engine; fix that first:\n{failures}", file=sys.stderr)
            return 1
    report = [
        {"mutant": mutant["name"], "caught": code != 0, "failures": failures.splitlines()}
        for mutant, (code, failures) in zip(mutants, outcomes, strict=True)
    ]
    survivors = [r["mutant"] for r in report if not r["caught"]]
    if args.json:
        print(json.dumps({"mutants": report, "survivors": survivors}, indent=2))
    else:
        for r in report:
            first = r["failures"][0] if r["failures"] else "(the gate passed)"
            print(f"{'caught  ' if r['caught'] else 'SURVIVED'}  {r['mutant']}: {first}")
        print(f"{len(report) - len(survivors)} of {len(report)} mutants fail the gate")
    return 1 if survivors else 0


if __name__ == "__main__":
    raise SystemExit(main())
