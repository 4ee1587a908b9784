"""The `cortex evaluate` and `cortex eval-gate` commands over the harness. Standard library only."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from cortex_engine.ops.evaluation.suites import SuiteError, load_suite, read_json
from cortex_engine.ops.evaluation.runner import dumps, run_suite
from cortex_engine.ops.evaluation.gate import compare, regenerate_baseline, run_gate
from cortex_engine.ops.evaluation.live import evaluate_live



def _base(args: argparse.Namespace) -> Path:
    return Path(getattr(args, "cwd", None) or os.getcwd())


def _path(args: argparse.Namespace, value: str) -> Path:
    path = Path(value)
    return path if path.is_absolute() else _base(args) / path


def cli_evaluate(args: argparse.Namespace) -> int:
    """`cortex evaluate`: a suite's JSON result (optionally compared with a baseline), or the live store's."""
    if args.compare and not args.suite:
        raise SuiteError("--compare needs --suite", code="bad_args")
    if args.suite:
        result = run_suite(load_suite(_path(args, args.suite)))
        if args.compare:
            baseline = read_json(_path(args, args.compare), "baseline")
            problems, _, deltas = compare(result, baseline)
            result["quality_comparison"] = {**deltas, "problems": problems}
    else:
        topics = [t.strip() for t in (args.topics or "").split(",") if t.strip()]
        result = evaluate_live(str(_base(args)), topics)
    sys.stdout.write(dumps(result))
    return 0


def cli_eval_gate(args: argparse.Namespace) -> int:
    """`cortex eval-gate`: run the gate (or regenerate one baseline) and print the report."""
    suites_dir, baselines_dir = _path(args, args.suites), _path(args, args.baselines)
    if not suites_dir.is_dir() and not baselines_dir.is_dir():
        # Not the Cortex source tree (a user's repository): say where the gate runs instead of failing every check.
        raise SuiteError(f"eval-gate runs in the Cortex source tree, which holds eval/suites and eval/baselines "
                         f"(none under {_base(args)}); run it from there or pass --suites and --baselines",
                         code="not_cortex_tree")
    if args.regenerate_baseline:
        code, lines = regenerate_baseline(args.regenerate_baseline, suites_dir, baselines_dir)
        if args.json:
            sys.stdout.write(dumps({"written": code == 0, "lines": lines}))
        else:
            sys.stdout.write("\n".join(lines) + "\n")
        return code
    gate = run_gate(suites_dir, baselines_dir, _path(args, args.coverage))
    if args.json:
        sys.stdout.write(dumps(gate.to_dict()))
    else:
        sys.stdout.write("\n".join(gate.lines) + "\n")
    if not gate.passed:
        sys.stderr.write(f"cortex: retrieval quality gate failed ({len(gate.failures)} problem(s))\n")
    return gate.exit_code
