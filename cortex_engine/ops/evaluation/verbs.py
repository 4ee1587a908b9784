"""What `cortex evaluate` and `cortex eval-gate` ask the harness for; the CLI prints the results. Standard
library only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cortex_engine.ops.evaluation.gate import compare
from cortex_engine.ops.evaluation.own_store import evaluate_live
from cortex_engine.ops.evaluation.runner import run_suite
from cortex_engine.ops.evaluation.suites import SuiteError, load_suite, read_json


def under(base: str | Path, value: str) -> Path:
    """`value` as a path, relative to `base` unless it is absolute."""
    path = Path(value)
    return path if path.is_absolute() else Path(base) / path


def evaluate(base: str | Path, suite: str | None, compare_with: str | None, topics: list[str]) -> dict[str, Any]:
    """`cortex evaluate`: a suite's result (compared with a baseline when asked), or the live store's on `topics`.

    Raises:
        SuiteError: a baseline to compare with but no suite, or a suite or baseline that cannot be judged.
    """
    if compare_with and not suite:
        raise SuiteError("--compare needs --suite", code="bad_args")
    if not suite:
        return evaluate_live(str(base), topics)
    result = run_suite(load_suite(under(base, suite)))
    if compare_with:
        baseline = read_json(under(base, compare_with), "baseline")
        problems, _, deltas = compare(result, baseline)
        result["quality_comparison"] = {**deltas, "problems": problems}
    return result


def require_eval_tree(base: str | Path, suites_dir: Path, baselines_dir: Path) -> None:
    """Refuse to gate a directory that is not the Cortex source tree (neither folder exists).

    Raises:
        SuiteError: neither the suites nor the baselines folder exists (a user's repository, most likely).
    """
    if not suites_dir.is_dir() and not baselines_dir.is_dir():
        # Not the Cortex source tree (a user's repository): say where the gate runs instead of failing every check.
        raise SuiteError(
            f"eval-gate runs in the Cortex source tree, which holds eval/suites and eval/baselines "
            f"(none under {base}); run it from there or pass --suites and --baselines",
            code="not_cortex_tree",
        )
