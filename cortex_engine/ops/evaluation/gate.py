"""The fail-closed gate: each suite against its locked baseline (nDCG@5 of the rankings, counts, labels),
coverage of every registered kind, and regenerating one baseline on purpose. Standard library only."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cortex_engine.ops.evaluation.runner import baseline_of, dumps, run_suite
from cortex_engine.ops.evaluation.suites import (
    COUNT_METRICS,
    GATED_METRICS,
    METRICS,
    RANK_DEPTH,
    REGENERATE_REMINDER,
    SUITE_NAME,
    Suite,
    SuiteError,
    checked_object,
    load_suite,
    read_json,
)
from cortex_engine.results import KIND_WEIGHTS


def _metric(values: Any, metric: str) -> float | None:
    value = values.get(metric) if isinstance(values, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.4f}".rstrip("0")


def ranking_agreement(now: list[str], base: list[str], depth: int = RANK_DEPTH) -> float:
    """nDCG@depth of `now`, graded by `base`: the baseline's rank r (0-based) is worth depth - r.

    1.0 exactly when the top `depth` of both rankings agree position by position; any swap, drop or intruder
    in the baseline's top `depth` lowers it, and a move near the top costs more than one near the bottom.
    """
    gain = {ref: depth - r for r, ref in enumerate(base[:depth])}
    ideal = sum(g / math.log2(r + 2) for r, g in enumerate(sorted(gain.values(), reverse=True)))
    if ideal == 0:
        return 1.0
    actual = sum(gain.get(ref, 0) / math.log2(r + 2) for r, ref in enumerate(now[:depth]))
    return round(actual / ideal, 4)


def compare(result: dict[str, Any], baseline: Any) -> tuple[list[str], list[str], dict[str, Any]]:
    """Compare a suite result with its baseline.

    Returns:
        (problems that fail the gate, regressions of gated metrics, deltas for reporting). Problems
        include every regression plus anything the baseline does not let the gate judge.
    """
    name = result["suite"]
    problems: list[str] = []
    regressions: list[str] = []
    deltas: dict[str, Any] = {"fixtures": {}}
    if not isinstance(baseline, dict) or not isinstance(baseline.get("metrics"), dict):
        return [f"{name}: baseline has no metrics object"], [], deltas

    def judge(where: str, now_values: dict[str, Any], base_values: Any, into: dict[str, Any]) -> None:
        for metric in METRICS:
            base = _metric(base_values, metric)
            if base is None:
                problems.append(f"{where}: baseline lacks metric {metric} (a missing value would un-gate it)")
                continue
            delta: float = round(float(now_values[metric]) - base, 4)
            if metric in COUNT_METRICS and delta.is_integer():
                delta = int(delta)
            into[f"{metric}_delta"] = delta
            direction = GATED_METRICS.get(metric)
            if direction is not None and delta * direction > 0:
                line = (
                    f"{where}: {metric} {'+' if delta > 0 else ''}{_fmt(delta)} "
                    f"(baseline {_fmt(base)} → now {_fmt(float(now_values[metric]))})"
                )
                regressions.append(line)
                problems.append(line)

    judge(name, result["metrics"], baseline["metrics"], deltas)
    base_fixtures = baseline.get("fixtures")
    if not isinstance(base_fixtures, list):
        problems.append(f"{name}: baseline has no fixtures list")
        return problems, regressions, deltas
    by_topic = {key: f for f in base_fixtures if isinstance(f, dict) and isinstance(key := f.get("topic"), str)}
    if len(by_topic) < len(base_fixtures):
        problems.append(f"{name}: baseline has a fixture without a topic (regenerate the baseline)")
    current = {f["topic"] for f in result["fixtures"]}
    for fixture in result["fixtures"]:
        topic = fixture["topic"]
        where = f"{name} [{topic}]"
        if topic not in by_topic:
            problems.append(
                f"{where}: fixture has no baseline entry (run cortex eval-gate --regenerate-baseline {name})"
            )
            continue
        into: dict[str, Any] = {}
        judge(where, fixture, by_topic[topic], into)
        base_ranking = by_topic[topic].get("ranking")
        if not isinstance(base_ranking, list):
            problems.append(f"{where}: baseline lacks its ranking (the order could not be gated)")
        else:
            agreement = ranking_agreement(fixture["ranking"], base_ranking)
            into["ranking_ndcg"] = agreement
            if agreement < 1.0:
                line = (
                    f"{where}: ranking order drops against the baseline (nDCG@{RANK_DEPTH} {_fmt(agreement)}): "
                    f"baseline {base_ranking[:RANK_DEPTH]} → now {fixture['ranking'][:RANK_DEPTH]}"
                )
                regressions.append(line)
                problems.append(line)
        deltas["fixtures"][topic] = into
    for topic in sorted(t for t in by_topic if t not in current):
        problems.append(f"{name} [{topic}]: baseline fixture no longer exists in the suite")
    return problems, regressions, deltas


def own_failures(result: dict[str, Any], baseline: Any = None) -> list[str]:
    """Failures of the suite's own assertions (fixtures, surfaces, tiers); no baseline can excuse them."""
    base_passed = {}
    if isinstance(baseline, dict) and isinstance(baseline.get("fixtures"), list):
        base_passed = {f.get("topic"): f.get("passed") for f in baseline["fixtures"] if isinstance(f, dict)}
    out = []
    name = result["suite"]
    for fixture in result["fixtures"]:
        if fixture["passed"]:
            continue
        note = (
            " (the baseline recorded it failing too; that does not excuse it)"
            if base_passed.get(fixture["topic"]) is False
            else ""
        )
        out.append(
            f"{name} [{fixture['topic']}]: fixture fails its own assertions: {'; '.join(fixture['failures'])}{note}"
        )
    for surface in result["surfaces"]:
        if not surface["passed"]:
            out.append(f"{name} <{surface['surface']}>: surface {'; '.join(surface['failures'])}")
    for state in result.get("states", []):
        if not state["passed"]:
            out.append(f"{name} {{{state['item']}}}: tier {'; '.join(state['failures'])}")
    return out


# -- the gate ----------------------------------------------------------------------------------


@dataclass
class GateResult:
    """What the gate found: report lines in order, the failures among them, and each suite's result."""

    lines: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when nothing failed."""
        return not self.failures

    @property
    def exit_code(self) -> int:
        """0 when the gate passed, else 1."""
        return 0 if self.passed else 1

    def fail(self, message: str) -> None:
        """Record one failure (also as a report line)."""
        self.failures.append(message)
        self.lines.append(f"FAIL  {message}")

    def to_dict(self) -> dict[str, object]:
        """The `eval-gate --json` shape."""
        return {
            "passed": self.passed,
            "failures": self.failures,
            "suites": {name: r["metrics"] for name, r in self.results.items()},
        }


def _json_entries(directory: Path, what: str, gate: GateResult) -> dict[str, Path] | None:
    """The `<name>.json` files of a directory; anything else in it fails the gate."""
    if not directory.is_dir():
        gate.fail(f"no {what} directory at {directory}")
        return None
    found: dict[str, Path] = {}
    for entry in sorted(directory.iterdir()):
        if entry.is_file() and entry.suffix == ".json" and SUITE_NAME.match(entry.stem):
            found[entry.stem] = entry
        else:
            gate.fail(
                f"unexpected entry {entry} in the {what} directory (only <lowercase-name>.json files belong there)"
            )
    return found


def load_coverage(path: Path) -> list[str]:
    """The kinds `eval/kind-coverage.json` grandfathers.

    Raises:
        SuiteError: the manifest is unreadable or malformed.
    """
    data = checked_object(
        read_json(path, "kind-coverage manifest"), f"kind-coverage manifest {path}", {"_comment", "grandfathered"}
    )
    kinds = data.get("grandfathered")
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        raise SuiteError(f"kind-coverage manifest {path}: grandfathered must be a list of kind names")
    return list(kinds)


def check_coverage(suites: dict[str, Suite], coverage: Path, gate: GateResult) -> None:
    """Every registered kind must be exercised by a fixture or grandfathered, and only uncovered kinds may be."""
    covered: dict[str, list[str]] = {}
    for name, suite in suites.items():
        for kind in suite.exercised_kinds():
            covered.setdefault(kind, []).append(name)
    try:
        grandfathered = load_coverage(coverage)
    except SuiteError as exc:
        gate.fail(f"{exc.message} (it grandfathers nothing until it can be read)")
        grandfathered = []
    registered = set(KIND_WEIGHTS)
    for kind in grandfathered:
        if kind not in registered:
            gate.fail(f"kind-coverage manifest grandfathers {kind!r}, which is not a registered memory kind")
        elif kind in covered:
            gate.fail(
                f"kind-coverage manifest grandfathers {kind!r}, but suite(s) {', '.join(covered[kind])} exercise it; "
                "remove it from the manifest"
            )
    if len(set(grandfathered)) != len(grandfathered):
        gate.fail("kind-coverage manifest lists a kind twice")
    for kind in sorted(registered - set(covered) - set(grandfathered)):
        gate.fail(
            f"memory_items kind {kind!r} is registered but no locked suite exercises it "
            f"(add a fixture naming an item of that kind, or grandfather it in {coverage})"
        )


def run_gate(suites_dir: Path, baselines_dir: Path, coverage: Path) -> GateResult:
    """Run every suite and compare it with its locked baseline; fail closed on anything ambiguous.

    Args:
        suites_dir: the `eval/suites` directory.
        baselines_dir: the `eval/baselines` directory.
        coverage: the `eval/kind-coverage.json` manifest.

    Returns:
        The gate's result; `exit_code` is 1 when anything failed.
    """
    gate = GateResult()
    suite_files = _json_entries(suites_dir, "suites", gate)
    baseline_files = _json_entries(baselines_dir, "baselines", gate) or {}
    if suite_files is not None and not suite_files:
        gate.fail(f"no suites in {suites_dir}")
    suites: dict[str, Suite] = {}
    for name, path in (suite_files or {}).items():
        try:
            suites[name] = load_suite(path)
        except SuiteError as exc:
            gate.fail(exc.message)
    for name in sorted(set(baseline_files) - set(suite_files or {})):
        gate.fail(
            f"{name}: baseline {baseline_files[name]} has no suite (deleting a suite must not silently stop gating it)"
        )
    for name, suite in suites.items():
        baseline: Any = None
        if name not in baseline_files:
            gate.fail(f"{name}: suite has no baseline (run cortex eval-gate --regenerate-baseline {name})")
        else:
            try:
                baseline = read_json(baseline_files[name], "baseline")
            except SuiteError as exc:
                gate.fail(f"{name}: {exc.message}")
        try:
            result = run_suite(suite)
        except SuiteError as exc:
            gate.fail(exc.message)
            continue
        gate.results[name] = result
        problems = own_failures(result, baseline)
        if baseline is not None:
            problems += compare(result, baseline)[0]
        for problem in problems:
            gate.fail(problem)
        if not problems and name in baseline_files:
            m = result["metrics"]
            gate.lines.append(f"ok    {name}  " + " ".join(f"{k}={_fmt(m[k])}" for k in METRICS))
    check_coverage(suites, coverage, gate)
    if gate.passed:
        gate.lines.append(f"Retrieval quality gate passed ({len(suites)} suites).")
    else:
        gate.lines.append(
            f"Retrieval quality gate FAILED: {len(gate.failures)} problem(s) above. Fix the cause; regenerating a "
            "baseline is never the way to turn a red gate green."
        )
    return gate


def regenerate_baseline(name: str, suites_dir: Path, baselines_dir: Path) -> tuple[int, list[str]]:
    """Rewrite one suite's baseline, listing the regressions it accepts.

    Returns:
        (exit code, report lines). Refuses (exit 1) when the suite's own assertions fail.
    """
    if not SUITE_NAME.match(name):
        raise SuiteError(f"--regenerate-baseline takes a bare suite name (like 'budget'), not {name!r}")
    suite = load_suite(suites_dir / f"{name}.json")
    result = run_suite(suite)
    failing = own_failures(result)
    if failing:
        return 1, [f"FAIL  {line}" for line in failing] + [
            f"refused: {name}'s own assertions fail; no baseline was written"
        ]
    target = baselines_dir / f"{name}.json"
    lines: list[str] = []
    if target.exists():
        try:
            old = read_json(target, "baseline")
        except SuiteError as exc:
            old = None
            lines.append(f"replacing an unreadable baseline: {exc.message}")
        if old is not None:
            _, regressions, _ = compare(result, old)
            lines += [f"accepting regression: {line}" for line in regressions]
            if not regressions:
                lines.append(f"{name}: no gated metric regresses against the old baseline")
    else:
        lines.append(f"{name}: new baseline (no previous one to compare)")
    text = dumps(baseline_of(result))
    baselines_dir.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    m = result["metrics"]
    lines.append(f"wrote {target}  " + " ".join(f"{k}={_fmt(m[k])}" for k in METRICS))
    lines.append(f"Commit it with a trailer on that same commit:  {REGENERATE_REMINDER}")
    return 0, lines
