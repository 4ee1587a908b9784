"""The retrieval-quality gate: passes on the locked suites, fails closed on everything it cannot judge."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from cortex_engine.adapters import cli
from cortex_engine.base.clock import parse_iso
from cortex_engine.memory import items as memory
from cortex_engine.ops.evaluation import gate, runner, scenario, suites
from cortex_engine.ops.evaluation.gate import GateResult, run_gate
from cortex_engine.ops.evaluation.runner import run_suite
from cortex_engine.ops.evaluation.suites import SuiteError, load_suite

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT / "eval"
CHECK_BASELINES = ROOT / ".ci" / "check-baselines"

GRANDFATHERED: list[str] = ["session_state"]
"""The kinds eval/kind-coverage.json may grandfather: exactly those no locked suite exercises (no write path makes
session_state)."""

LOCKED_SUITES = (
    "alternatives",
    "brief-surface",
    "budget",
    "contested",
    "kind-ordering",
    "rename-moved",
    "stale-label",
    "stemming",
    "subagent-conclusion",
    "superseded-history",
)


# -- helpers -----------------------------------------------------------------------------------


@dataclass
class EvalDir:
    """A temporary copy of some suites, their baselines and a coverage manifest."""

    suites: Path
    baselines: Path
    coverage: Path

    def suite(self, name: str) -> dict[str, Any]:
        return json.loads((self.suites / f"{name}.json").read_text(encoding="utf-8"))

    def write_suite(self, name: str, data: object) -> None:
        (self.suites / f"{name}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")

    def baseline(self, name: str) -> dict[str, Any]:
        return json.loads((self.baselines / f"{name}.json").read_text(encoding="utf-8"))

    def write_baseline(self, name: str, data: object) -> None:
        (self.baselines / f"{name}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")

    def gate(self) -> GateResult:
        return run_gate(self.suites, self.baselines, self.coverage)


def covered_kinds(names: list[str], suites_dir: Path) -> set[str]:
    """Kinds the named suites exercise."""
    return set().union(*(load_suite(suites_dir / f"{n}.json").exercised_kinds() for n in names))


@pytest.fixture
def make_eval(tmp_path: Path) -> Callable[..., EvalDir]:
    """Copy the named locked suites and baselines; grandfather every kind they do not exercise."""

    def make(*names: str) -> EvalDir:
        target = EvalDir(
            tmp_path / "eval" / "suites", tmp_path / "eval" / "baselines", tmp_path / "eval" / "kind-coverage.json"
        )
        target.suites.mkdir(parents=True)
        target.baselines.mkdir(parents=True)
        for name in names:
            shutil.copy(EVAL / "suites" / f"{name}.json", target.suites)
            shutil.copy(EVAL / "baselines" / f"{name}.json", target.baselines)
        uncovered = sorted(set(memory.KIND_WEIGHTS) - covered_kinds(list(names), target.suites))
        target.coverage.write_text(json.dumps({"grandfathered": uncovered}), encoding="utf-8")
        return target

    return make


@pytest.fixture
def stemming(make_eval: Callable[..., EvalDir]) -> EvalDir:
    """A temp eval dir holding only the stemming suite (fast) and a manifest that makes it pass."""
    return make_eval("stemming")


def assert_fails(result: GateResult, *needles: str) -> str:
    """The gate failed (exit 1) and one failure line names every needle; returns that line."""
    assert result.exit_code == 1
    assert not result.passed
    matching = [f for f in result.failures if all(n in f for n in needles)]
    assert matching, f"no failure mentions {needles}: {result.failures}"
    return matching[0]


@pytest.fixture(scope="module")
def real_gate() -> GateResult:
    """The gate over the repository's own eval/ directory (run once for the module)."""
    return run_gate(EVAL / "suites", EVAL / "baselines", EVAL / "kind-coverage.json")


# -- the gate on main --------------------------------------------------------------------------


def test_gate_passes_on_the_locked_suites(real_gate: GateResult) -> None:
    """Every suite, fixture and surface passes and matches its baseline; the report says so."""
    assert real_gate.failures == []
    assert real_gate.exit_code == 0
    assert real_gate.lines[-1] == f"Retrieval quality gate passed ({len(real_gate.results)} suites)."
    assert set(LOCKED_SUITES) <= set(real_gate.results)
    assert all(r["passed"] for r in real_gate.results.values())


def test_every_locked_suite_asserts_something_real(real_gate: GateResult) -> None:
    """Each locked suite has fixtures that rank something (a no-match fixture: nothing, which is its assertion),
    and every suite file has a baseline."""
    suite_names = {p.stem for p in (EVAL / "suites").glob("*.json")}
    baseline_names = {p.stem for p in (EVAL / "baselines").glob("*.json")}
    assert suite_names == baseline_names == set(real_gate.results)
    counts = {name: len(r["fixtures"]) for name, r in real_gate.results.items()}
    assert min(counts.values()) >= 1
    fixtures = [f for r in real_gate.results.values() for f in r["fixtures"]]
    assert all(bool(f["ranking"]) == (f["expected_top"] is not None) for f in fixtures)
    assert any(f["expected_top"] is None for f in fixtures)


def test_stale_and_moved_labels_are_locked(real_gate: GateResult) -> None:
    """The two label suites render their label in the output (the gate asserts on it, not only on deltas)."""
    stale = real_gate.results["stale-label"]["fixtures"][0]["output"]
    moved = real_gate.results["rename-moved"]["fixtures"][0]["output"]
    assert "[stale: missing src/auth/password_login.py]" in stale
    assert "[moved: src/billing/invoice_render.py → src/billing/render/templates.py]" in moved


def test_kind_coverage_manifest_is_pinned(real_gate: GateResult) -> None:
    """The manifest grandfathers exactly the registered kinds no locked suite exercises."""
    manifest = json.loads((EVAL / "kind-coverage.json").read_text(encoding="utf-8"))
    names = sorted(p.stem for p in (EVAL / "suites").glob("*.json"))
    uncovered = sorted(set(memory.KIND_WEIGHTS) - covered_kinds(names, EVAL / "suites"))
    assert manifest["grandfathered"] == GRANDFATHERED
    assert uncovered == GRANDFATHERED


def test_positive_control_copy_passes(stemming: EvalDir) -> None:
    """The unmodified temp copy passes, so each failure below is caused by its one mutation."""
    result = stemming.gate()
    assert result.failures == []
    assert result.exit_code == 0
    assert result.lines[0].startswith("ok    stemming  top1_hit=1 recall_at_3=1 output_tokens=")


# -- fail closed -------------------------------------------------------------------------------


def test_suite_without_baseline_fails(stemming: EvalDir) -> None:
    (stemming.baselines / "stemming.json").unlink()
    assert_fails(stemming.gate(), "stemming: suite has no baseline", "--regenerate-baseline stemming")


def test_baseline_without_suite_fails(stemming: EvalDir) -> None:
    (stemming.suites / "stemming.json").unlink()
    assert_fails(stemming.gate(), "stemming: baseline", "has no suite")


@pytest.mark.parametrize("metric", ["top1_hit", "recall_at_3", "output_tokens", "noise_count", "stale_count"])
def test_baseline_missing_an_aggregate_metric_fails(stemming: EvalDir, metric: str) -> None:
    baseline = stemming.baseline("stemming")
    del baseline["metrics"][metric]
    stemming.write_baseline("stemming", baseline)
    assert_fails(stemming.gate(), "stemming:", f"baseline lacks metric {metric}")


def test_baseline_missing_a_fixture_metric_fails(stemming: EvalDir) -> None:
    baseline = stemming.baseline("stemming")
    del baseline["fixtures"][0]["recall_at_3"]
    stemming.write_baseline("stemming", baseline)
    assert_fails(stemming.gate(), "stemming [testing flakes]", "baseline lacks metric recall_at_3")


def test_baseline_metric_that_is_not_a_number_fails(stemming: EvalDir) -> None:
    baseline = stemming.baseline("stemming")
    baseline["metrics"]["top1_hit"] = None
    stemming.write_baseline("stemming", baseline)
    assert_fails(stemming.gate(), "stemming:", "baseline lacks metric top1_hit")


def test_fixture_whose_assertions_fail_fails(stemming: EvalDir) -> None:
    """A fixture can fail with every gated metric unchanged: losing a label only shrinks the output."""
    suite = stemming.suite("stemming")
    suite["fixtures"][0]["expect_output_contains"].append("[stale:")
    stemming.write_suite("stemming", suite)
    result = stemming.gate()
    line = assert_fails(result, "stemming [testing flakes]", "fixture fails its own assertions", "lacks '[stale:'")
    assert "recorded it failing" not in line
    assert len(result.failures) == 1


def test_tier_expectation_that_fails_fails_the_gate(stemming: EvalDir) -> None:
    """expect_states is an own assertion: an item in a tier the suite forbids fails, whatever the baseline."""
    suite = stemming.suite("stemming")
    label = suite["seed"]["items"][0]["id"]
    suite["expect_states"] = {label: ["archived"]}
    stemming.write_suite("stemming", suite)
    assert_fails(stemming.gate(), f"stemming {{{label}}}: tier is", "expected archived")


def test_surface_budget_expectation_that_fails_fails_the_gate(stemming: EvalDir) -> None:
    suite = stemming.suite("stemming")
    suite["surfaces"] = [{"surface": "brief", "expect_budget": 300}]
    stemming.write_suite("stemming", suite)
    assert_fails(stemming.gate(), "stemming <brief>", "spends against a budget of 150, expected 300")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["seed"]["items"][0].update(branch=s["seed"]["scope"]["key"]), "is the suite's own branch"),
        (lambda s: s["seed"]["items"][0].update(branch="../escape"), "plain branch name"),
        (lambda s: s["seed"].update(distractors={"count": 0, "words": ["x"]}), "distractors.count"),
        (lambda s: s["seed"].update(distractors={"count": 5, "words": []}), "words"),
        (lambda s: s["seed"].update(reads=[{"topic": "x", "times": 0}]), "reads[0].times"),
        (lambda s: s.update(expect_states={"no-such-item": ["hot"]}), "names an item the seed does not define"),
        (lambda s: s.update(expect_states={s["seed"]["items"][0]["id"]: ["lukewarm"]}), "must list one or more of"),
    ],
)
def test_new_seed_keys_refuse_what_they_cannot_judge(
    stemming: EvalDir, change: Callable[[dict], object], message: str
) -> None:
    suite = stemming.suite("stemming")
    change(suite)
    stemming.write_suite("stemming", suite)
    with pytest.raises(SuiteError, match=re.escape(message)):
        load_suite(stemming.suites / "stemming.json")


def test_distractors_are_deterministic_and_share_one_word() -> None:
    spec = {"count": 40, "seed": 7, "words": ["deploys", "staging"]}
    now = parse_iso("2026-03-14T09:30:00Z")
    first, again = suites.distractors(spec, "t", now), suites.distractors(spec, "t", now)
    assert first == again and len(first) == 40
    assert suites.distractors({**spec, "seed": 8}, "t", now) != first
    for item in first:
        words = set(item.text.split())
        assert len(words & {"deploys", "staging"}) == 1, item.text
        assert not any(w.startswith(("depl", "stag")) for w in words - {"deploys", "staging"}), item.text


def test_fixture_already_failing_in_its_baseline_still_fails(stemming: EvalDir) -> None:
    """A baseline that recorded the failure (same metrics, passed=false) does not excuse it."""
    suite = stemming.suite("stemming")
    suite["fixtures"][0]["expected_top"] = "testing-decoy-decision"
    suite["fixtures"][0]["allowed"] = ["test-flake-insight"]
    stemming.write_suite("stemming", suite)
    result = run_suite(load_suite(stemming.suites / "stemming.json"))
    stemming.write_baseline("stemming", runner.baseline_of(result))
    assert stemming.baseline("stemming")["fixtures"][0]["passed"] is False
    gate = stemming.gate()
    assert_fails(gate, "stemming [testing flakes]", "top is test-flake-insight", "baseline recorded it failing too")
    assert not [f for f in gate.failures if "top1_hit -" in f]


def test_stale_fixture_fails(stemming: EvalDir) -> None:
    """fresh_after counts relevant top-3 items older than it; any stale one fails the fixture."""
    suite = stemming.suite("stemming")
    suite["fixtures"][0]["fresh_after"] = "2026-03-11T00:00:00Z"
    stemming.write_suite("stemming", suite)
    gate = stemming.gate()
    assert_fails(gate, "stemming [testing flakes]", "1 relevant top-3 item(s) older than fresh_after")
    assert gate.results["stemming"]["metrics"]["stale_count"] == 1


@pytest.mark.parametrize(
    ("mutate", "metric", "value", "message"),
    [
        (
            lambda f: f.update(allowed=[], forbidden=["testing-decoy-decision"]),
            "noise_count",
            1,
            "forbidden item(s) retrieved: testing-decoy-decision",
        ),
        (
            lambda f: f.update(allowed=["testing-decoy-decision", "unrelated-insight"], forbidden=[]),
            "recall_at_3",
            0.6667,
            "not in the top 3: unrelated-insight",
        ),
        (lambda f: f.update(max_output_tokens=40), "output_tokens", 76, "over max_output_tokens 40"),
        (
            lambda f: f.update(expect_output_excludes=["INTEGRATION testing"]),
            "top1_hit",
            1,
            "output contains 'INTEGRATION testing'",
        ),
    ],
)
def test_fixture_metrics_and_assertions(
    stemming: EvalDir, mutate: Callable[[dict[str, Any]], object], metric: str, value: float, message: str
) -> None:
    """Noise, partial recall, the token ceiling and (case-insensitive) output checks each fail the fixture."""
    suite = stemming.suite("stemming")
    mutate(suite["fixtures"][0])
    stemming.write_suite("stemming", suite)
    result = stemming.gate()
    assert_fails(result, "stemming [testing flakes]", "fixture fails its own assertions", message)
    assert result.results["stemming"]["fixtures"][0][metric] == value


def test_surface_whose_assertions_fail_fails(stemming: EvalDir) -> None:
    suite = stemming.suite("stemming")
    suite["surfaces"] = [{"surface": "full_state", "expect_excludes": ["upload test flake"]}]
    stemming.write_suite("stemming", suite)
    assert_fails(stemming.gate(), "stemming <full_state>", "contains 'upload test flake'")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s.update(fixtures=[]), "stemming: has no fixtures"),
        (lambda s: s.pop("fixtures"), "stemming: has no fixtures"),
        (lambda s: s.pop("seed"), "stemming: has no seed"),
        (
            lambda s: s["seed"].update(items=[]),
            "stemming: seed.items and seed.sessions must be lists, and at least one",
        ),
        (
            lambda s: s["seed"]["items"].append({"id": "hand-made", "kind": "command_run", "text": "x"}),
            "command_run is not seeded directly: capture it through seed.sessions",
        ),
        (
            lambda s: s["seed"].update(sessions=[{"host": "h", "events": [{"bash": "pytest", "id": "e"}]}]),
            "a bash event labels one of: command_run, episode:command_failure, episode:test_cycle (give kind)",
        ),
        (
            lambda s: s["seed"].update(sessions=[{"host": "h", "events": [{"summary": "x", "exit": 1}]}]),
            "exit, stdout and stderr belong to bash events",
        ),
        (
            lambda s: s["seed"].update(sessions=[{"host": "h", "events": [{"edit": "a.py", "bash": "ls"}]}]),
            "must hold exactly one of bash, summary, subagent, edit",
        ),
        (lambda s: s["seed"].update(snapshots={"branch_snapshot": "snap"}), "seed.snapshots needs seed.sessions"),
        (lambda s: s["seed"].update(scope={"type": "project", "key": "x"}), "a project suite runs outside git"),
        (
            lambda s: s.update(surfaces=[{"surface": "session_brief", "expect_contains": ["x"]}]),
            "unknown surface 'session_brief'",
        ),
        (lambda s: s.update(surfaces=[{"surface": "brief"}]), "the brief block asserts nothing"),
        (lambda s: s["fixtures"][0].update(expect_output_contain=["x"]), "unknown key(s) expect_output_contain"),
        (
            lambda s: s["fixtures"][0].update(expected_top="no-such-item"),
            "names item(s) the seed does not define: no-such-item",
        ),
        (lambda s: s["fixtures"].append(dict(s["fixtures"][0])), "two fixtures share a topic"),
        (
            lambda s: s["fixtures"][0].update(expect_no_match=True),
            "a fixture that expects no match names no expected_top or allowed items",
        ),
        (lambda s: s["fixtures"][0].update(expect_no_match="yes"), "expect_no_match must be true or false"),
        (lambda s: s["seed"]["items"][0].update(kind="note:wish"), "is not a registered memory kind"),
        (lambda s: s["seed"]["items"][0].update(state="hot"), "unknown key(s) state"),
        (lambda s: s["seed"]["items"][0].update(age_days=-1), "age_days: must be a number"),
        (lambda s: s["seed"].update(now="yesterday"), "seed.now: must be an ISO-8601 time"),
        (
            lambda s: s["seed"].update(deletions=["src/nowhere.py"]),
            "deletion of src/nowhere.py needs it in the app graph",
        ),
        (
            lambda s: s["seed"].update(edits=[{"path": "src/nowhere.py", "text": "x"}]),
            "edit of src/nowhere.py needs it in the app graph",
        ),
        (lambda s: s["seed"].update(edits=[{"path": "src/a.py"}]), "seed.edits[0].text"),
        (
            lambda s: s["seed"].update(app_graph={"files": ["src/a.py"], "contents": {"src/b.py": "x"}}),
            "seed.app_graph.contents: unknown key(s) src/b.py",
        ),
    ],
)
def test_invalid_suite_fails_closed(
    stemming: EvalDir, mutate: Callable[[dict[str, Any]], object], message: str
) -> None:
    suite = stemming.suite("stemming")
    mutate(suite)
    stemming.write_suite("stemming", suite)
    assert_fails(stemming.gate(), message)


def test_suite_that_is_not_json_fails(stemming: EvalDir) -> None:
    (stemming.suites / "stemming.json").write_text("{ not json", encoding="utf-8")
    assert_fails(stemming.gate(), "stemming.json is not valid JSON")


def test_suite_that_is_not_text_fails(stemming: EvalDir) -> None:
    (stemming.suites / "stemming.json").write_bytes(b"\xff\xfe\x00garbage")
    assert_fails(stemming.gate(), "cannot read suite", "stemming.json")


def test_baseline_that_is_not_json_fails(stemming: EvalDir) -> None:
    (stemming.baselines / "stemming.json").write_text("[1, 2", encoding="utf-8")
    assert_fails(stemming.gate(), "stemming:", "baseline", "is not valid JSON")


def test_baseline_of_the_wrong_shape_fails(stemming: EvalDir) -> None:
    stemming.write_baseline("stemming", [1, 2, 3])
    assert_fails(stemming.gate(), "stemming: baseline has no metrics object")


def test_coverage_manifest_that_is_not_json_fails(stemming: EvalDir) -> None:
    stemming.coverage.write_text("grandfathered: everything", encoding="utf-8")
    result = stemming.gate()
    assert_fails(result, "kind-coverage manifest", "is not valid JSON")
    assert_fails(result, "is registered but no locked suite exercises it")


def test_missing_coverage_manifest_fails(stemming: EvalDir) -> None:
    stemming.coverage.unlink()
    assert_fails(stemming.gate(), "cannot read kind-coverage manifest")


@pytest.mark.parametrize("entry", ["README.md", "notes"])
def test_unexpected_entry_in_the_suites_dir_fails(stemming: EvalDir, entry: str) -> None:
    if entry == "notes":
        (stemming.suites / entry).mkdir()
    else:
        (stemming.suites / entry).write_text("# suites\n", encoding="utf-8")
    assert_fails(stemming.gate(), "unexpected entry", entry)


def test_empty_suites_dir_fails(stemming: EvalDir) -> None:
    (stemming.suites / "stemming.json").unlink()
    (stemming.baselines / "stemming.json").unlink()
    assert_fails(stemming.gate(), "no suites in")


def test_missing_suites_dir_fails(stemming: EvalDir) -> None:
    shutil.rmtree(stemming.suites)
    assert_fails(stemming.gate(), "no suites directory at")


def test_fixture_missing_from_the_baseline_fails(stemming: EvalDir) -> None:
    suite = stemming.suite("stemming")
    extra = dict(suite["fixtures"][0], topic="flaky upload test")
    suite["fixtures"].append(extra)
    stemming.write_suite("stemming", suite)
    assert_fails(stemming.gate(), "stemming [flaky upload test]", "fixture has no baseline entry")


def test_baseline_fixture_without_a_suite_fixture_fails(stemming: EvalDir) -> None:
    baseline = stemming.baseline("stemming")
    baseline["fixtures"].append(dict(baseline["fixtures"][0], topic="a deleted fixture"))
    stemming.write_baseline("stemming", baseline)
    assert_fails(stemming.gate(), "stemming [a deleted fixture]", "baseline fixture no longer exists in the suite")


def test_baseline_fixture_without_a_topic_fails_cleanly(stemming: EvalDir) -> None:
    """A topicless baseline fixture is a problem the gate names; beside a deleted one it once crashed sorted()."""
    baseline = stemming.baseline("stemming")
    topicless = dict(baseline["fixtures"][0])
    del topicless["topic"]
    baseline["fixtures"] += [topicless, dict(baseline["fixtures"][0], topic="a deleted fixture")]
    stemming.write_baseline("stemming", baseline)
    result = stemming.gate()
    assert_fails(result, "stemming:", "baseline has a fixture without a topic")
    assert_fails(result, "stemming [a deleted fixture]", "baseline fixture no longer exists in the suite")


def test_uncovered_kind_not_grandfathered_fails(stemming: EvalDir) -> None:
    manifest = json.loads(stemming.coverage.read_text(encoding="utf-8"))
    manifest["grandfathered"].remove("session_state")
    stemming.coverage.write_text(json.dumps(manifest), encoding="utf-8")
    assert_fails(stemming.gate(), "memory_items kind 'session_state' is registered but no locked suite exercises it")


def test_newly_registered_kind_fails_until_a_fixture_ships(stemming: EvalDir, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(memory.KIND_WEIGHTS, "episode:deploy", (2.0, 1.0))
    assert_fails(stemming.gate(), "memory_items kind 'episode:deploy' is registered but no locked suite exercises it")


def test_grandfathering_a_covered_kind_fails(stemming: EvalDir) -> None:
    stemming.coverage.write_text(
        json.dumps(
            {"grandfathered": [*sorted(set(memory.KIND_WEIGHTS) - {"note:insight", "note:decision"}), "note:insight"]}
        ),
        encoding="utf-8",
    )
    assert_fails(stemming.gate(), "grandfathers 'note:insight'", "stemming exercise it")


# -- regressions -------------------------------------------------------------------------------


def test_rerank_weight_change_that_flips_a_fixture_fails(
    make_eval: Callable[..., EvalDir], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Raising the insight retrieval weight well above the decision's lets the audit insight outrank the contest.

    The suite and baseline are the repository's own files, copied byte for byte: the same change turns the gate over
    eval/ red (re-running all of eval/ for it cost as much as the clean gate run the module shares)."""
    contested = make_eval("contested")
    assert contested.gate().exit_code == 0
    monkeypatch.setitem(memory.KIND_WEIGHTS, "note:insight", (5.0, 2.1))
    result = contested.gate()
    assert_fails(result, "contested: top1_hit -1 (baseline 1 → now 0)")
    assert_fails(result, "contested [refresh token storage]: top1_hit -1")
    assert_fails(
        result, "contested [refresh token storage]", "top is storage-audit-insight, expected contested-current"
    )


def test_output_token_rise_fails(stemming: EvalDir) -> None:
    baseline = stemming.baseline("stemming")
    now = baseline["metrics"]["output_tokens"]
    baseline["metrics"]["output_tokens"] = now - 3
    stemming.write_baseline("stemming", baseline)
    assert_fails(stemming.gate(), f"stemming: output_tokens +3 (baseline {now - 3} → now {now})")


def test_drops_fail_and_improvements_pass() -> None:
    """Gated directions: top1/recall may not fall, output_tokens may not rise; noise/stale never gate."""
    result = {
        "suite": "s",
        "metrics": {"top1_hit": 0.5, "recall_at_3": 0.75, "output_tokens": 90, "noise_count": 4, "stale_count": 2},
        "fixtures": [],
    }
    worse = {
        "metrics": {"top1_hit": 1.0, "recall_at_3": 1.0, "output_tokens": 80, "noise_count": 0, "stale_count": 0},
        "fixtures": [],
    }
    better = {
        "metrics": {"top1_hit": 0.0, "recall_at_3": 0.5, "output_tokens": 100, "noise_count": 9, "stale_count": 9},
        "fixtures": [],
    }
    problems, regressions, _ = gate.compare(result, worse)
    assert regressions == [
        "s: top1_hit -0.5 (baseline 1 → now 0.5)",
        "s: recall_at_3 -0.25 (baseline 1 → now 0.75)",
        "s: output_tokens +10 (baseline 80 → now 90)",
    ]
    assert problems == regressions
    assert gate.compare(result, better)[0] == []


def test_a_swap_below_the_top_fails_the_gate(make_eval: Callable[..., EvalDir]) -> None:
    """The whole top of the ranking is gated, not only rank 1: ranks 2 and 3 swapped in the baseline fail."""
    budget = make_eval("budget")
    baseline = budget.baseline("budget")
    fixture = next(f for f in baseline["fixtures"] if len(f["ranking"]) >= 3)
    locked = list(fixture["ranking"])
    fixture["ranking"][1], fixture["ranking"][2] = locked[2], locked[1]
    budget.write_baseline("budget", baseline)
    assert_fails(budget.gate(), f"budget [{fixture['topic']}]: ranking order drops against the baseline")


@pytest.mark.parametrize(
    ("now", "agreement"),
    [
        (["a", "b", "c"], 1.0),
        (["a", "c", "b"], None),
        (["b", "a", "c"], None),
        (["a", "b"], None),
        (["a", "b", "x", "c"], None),
    ],
)
def test_ranking_agreement_is_one_only_for_the_same_order(now: list[str], agreement: float | None) -> None:
    value = gate.ranking_agreement(now, ["a", "b", "c"])
    if agreement is None:
        assert 0 < value < 1
    else:
        assert value == agreement
    # a move at the top costs more than the same move lower down
    assert gate.ranking_agreement(["b", "a", "c"], ["a", "b", "c"]) < gate.ranking_agreement(
        ["a", "c", "b"], ["a", "b", "c"]
    )


# -- determinism, isolation, hermeticity -------------------------------------------------------


@pytest.mark.parametrize("name", ["rename-moved", "stale-label"])
def test_same_suite_gives_byte_identical_results(name: str) -> None:
    suite = load_suite(EVAL / "suites" / f"{name}.json")
    first = runner.dumps(run_suite(suite))
    second = runner.dumps(run_suite(suite))
    assert first == second


def test_each_probe_starts_from_the_seeded_store() -> None:
    """A probe books and reinforces what it shows; restoring undoes it, so no probe sees another's reads."""
    suite = load_suite(EVAL / "suites" / "stemming.json")

    def reads(sc: scenario.Scenario) -> tuple[int, int]:
        conn = sc.engine.conn
        return (
            conn.execute("SELECT COUNT(*) FROM token_ledger").fetchone()[0],
            conn.execute("SELECT COALESCE(SUM(access_count), 0) FROM memory_items").fetchone()[0],
        )

    with scenario.scenario(suite) as sc:
        assert reads(sc) == (0, 0)
        first = runner.run_fixture(sc, suite.fixtures[0])
        booked, accessed = reads(sc)
        assert booked > 0
        assert accessed > 0
        sc.restore()
        assert reads(sc) == (0, 0)
        assert runner.run_fixture(sc, suite.fixtures[0]) == first


def test_harness_imports_no_heavy_modules() -> None:
    code = (
        "import sys, cortex_engine.ops.evaluation; "
        "print(' '.join(m for m in ('textual', 'mcp', 'rich', 'watchdog', 'sqlite_utils') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_suites_never_touch_the_users_cortex_home(isolated_home: Path) -> None:
    run_suite(load_suite(EVAL / "suites" / "stemming.json"))
    assert not (isolated_home / ".cortex").exists()


def test_scenario_is_on_the_suites_branch() -> None:
    result = run_suite(load_suite(EVAL / "suites" / "brief-surface.json"))
    brief = next(s for s in result["surfaces"] if s["surface"] == "brief")
    assert result["scope"] == "eval/brief-surface"
    assert brief["text"].startswith("Cortex memory (eval/brief-surface):")


# -- regenerating a baseline -------------------------------------------------------------------


def test_regenerate_prints_the_regressions_it_accepts(stemming: EvalDir) -> None:
    baseline = stemming.baseline("stemming")
    now = baseline["metrics"]["output_tokens"]
    baseline["metrics"]["output_tokens"] = now - 5
    stemming.write_baseline("stemming", baseline)
    assert stemming.gate().exit_code == 1
    code, lines = gate.regenerate_baseline("stemming", stemming.suites, stemming.baselines)
    assert code == 0
    assert f"accepting regression: stemming: output_tokens +5 (baseline {now - 5} → now {now})" in lines
    assert lines[-1].endswith("Baseline-Regenerated: <why this quality change is intended>")
    assert stemming.baseline("stemming")["metrics"]["output_tokens"] == now
    assert stemming.gate().exit_code == 0


def test_regenerate_refuses_a_suite_whose_fixtures_fail(stemming: EvalDir) -> None:
    suite = stemming.suite("stemming")
    suite["fixtures"][0]["expected_top"] = "testing-decoy-decision"
    suite["fixtures"][0]["allowed"] = []
    stemming.write_suite("stemming", suite)
    before = (stemming.baselines / "stemming.json").read_bytes()
    code, lines = gate.regenerate_baseline("stemming", stemming.suites, stemming.baselines)
    assert code == 1
    assert lines[-1] == "refused: stemming's own assertions fail; no baseline was written"
    assert (stemming.baselines / "stemming.json").read_bytes() == before


@pytest.mark.parametrize("name", ["../stemming", "eval/suites/stemming.json", "Stemming"])
def test_regenerate_takes_a_bare_name(stemming: EvalDir, name: str) -> None:
    with pytest.raises(SuiteError, match="bare suite name"):
        gate.regenerate_baseline(name, stemming.suites, stemming.baselines)


# -- the CLI -----------------------------------------------------------------------------------


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def gate_args(ev: EvalDir) -> list[str]:
    return ["eval-gate", "--suites", str(ev.suites), "--baselines", str(ev.baselines), "--coverage", str(ev.coverage)]


def test_cli_gate_passes_and_fails(stemming: EvalDir) -> None:
    code, out, err = run_cli(*gate_args(stemming))
    assert (code, err) == (0, "")
    assert out.endswith("Retrieval quality gate passed (1 suites).\n")
    (stemming.baselines / "stemming.json").unlink()
    code, out, err = run_cli(*gate_args(stemming))
    assert code == 1
    assert "FAIL  stemming: suite has no baseline" in out
    assert err == "cortex: retrieval quality gate failed (1 problem(s))\n"


def test_cli_gate_json(stemming: EvalDir) -> None:
    code, out, _ = run_cli(*gate_args(stemming), "--json")
    payload = json.loads(out)
    assert code == 0
    assert payload["passed"] is True
    assert payload["suites"]["stemming"]["top1_hit"] == 1.0


def test_cli_regenerate_json(stemming: EvalDir) -> None:
    code, out, _ = run_cli(*gate_args(stemming), "--regenerate-baseline", "stemming", "--json")
    payload = json.loads(out)
    assert code == 0
    assert payload["written"] is True
    assert payload["lines"][0] == "stemming: no gated metric regresses against the old baseline"


def test_cli_evaluate_suite_with_compare(stemming: EvalDir) -> None:
    code, out, _ = run_cli(
        "evaluate",
        "--suite",
        str(stemming.suites / "stemming.json"),
        "--compare",
        str(stemming.baselines / "stemming.json"),
    )
    payload = json.loads(out)
    assert code == 0
    assert payload["suite"] == "stemming"
    assert payload["fixtures"][0]["top"] == "test-flake-insight"
    assert payload["quality_comparison"]["top1_hit_delta"] == 0
    assert payload["quality_comparison"]["problems"] == []


def test_cli_evaluate_live_store_reads_a_copy(tmp_path: Path, isolated_home: Path) -> None:
    """Live evaluation reports surfaces and topics without booking anything in the real store."""
    repo = tmp_path / "live"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    assert (
        run_cli("-C", str(repo), "note", "--kind", "decision", "--subject", "queue", "use nats for the queue")[0] == 0
    )
    code, out, _ = run_cli("-C", str(repo), "evaluate", "--topics", "queue")
    payload = json.loads(out)
    assert code == 0
    assert payload["tables"]["notes"] == 1
    assert payload["topics"][0]["items"][0]["kind"] == "note:decision"
    listed = json.loads(run_cli("-C", str(repo), "list-memory", "--json")[1])
    assert listed["items"][0]["access_count"] == 0
    code, _, err = run_cli("-C", str(tmp_path), "evaluate")
    assert code == 1
    assert err.startswith("cortex: no Cortex store for")


# -- .ci/check-baselines -----------------------------------------------------------------------


def load_check_baselines() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("check_baselines", str(CHECK_BASELINES))
    spec = importlib.util.spec_from_loader("check_baselines", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class History:
    """A temp git repository to commit baseline changes into."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir()
        self.git("init", "-q", "-b", "main")
        self.write("README.md", "# r\n")
        self.commit("init")

    def git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.path, check=True, capture_output=True, text=True).stdout

    def write(self, rel: str, body: str) -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def check(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(CHECK_BASELINES), *args], cwd=self.path, capture_output=True, text=True
        )


REASON = "Baseline-Regenerated: the stemming suite now ranks the flake insight with a shorter lead line"


@pytest.fixture
def history(tmp_path: Path) -> History:
    """A repository whose first baseline was added with a real reason."""
    h = History(tmp_path / "history")
    h.write("eval/baselines/stemming.json", '{"metrics": {}}\n')
    h.commit(f"Add the stemming baseline\n\n{REASON}")
    return h


def test_check_accepts_a_history_with_real_reasons(history: History) -> None:
    history.write("src/app.py", "x = 1\n")
    history.commit("unrelated change needs no trailer")
    done = history.check()
    assert done.returncode == 0, done.stdout
    assert "ok" in done.stdout


def test_check_rejects_a_baseline_change_without_a_trailer(history: History) -> None:
    history.write("eval/baselines/stemming.json", '{"metrics": {"top1_hit": 0}}\n')
    history.commit("Retune stemming")
    done = history.check()
    assert done.returncode == 1
    assert "rejected:" in done.stdout
    assert '"Retune stemming" changes eval/baselines/stemming.json (M) without' in done.stdout


@pytest.mark.parametrize(
    "trailer",
    [
        "Baseline-Regenerated: <reason>",
        "Baseline-Regenerated: <why this quality change is intended>",
        "Baseline-Regenerated: TODO",
        "Baseline-Regenerated: tbd",
        "Baseline-Regenerated: x",
        "Baseline-Regenerated: ...",
        "Baseline-Regenerated: reason",
        "Baseline-Regenerated: update the baseline",
        "Baseline-Regenerated: regenerated eval baselines",
        "Baseline-Regenerated: fix it",
        "Baseline-Regenerated: TODO explain this later",
        "Baseline-Regenerated:",
    ],
)
def test_check_rejects_a_placeholder_reason(history: History, trailer: str) -> None:
    history.write("eval/baselines/stemming.json", '{"metrics": {"top1_hit": 0}}\n')
    history.commit(f"Retune stemming\n\n{trailer}")
    done = history.check()
    assert done.returncode == 1
    assert '"Retune stemming" changes eval/baselines/stemming.json (M)' in done.stdout


def test_check_accepts_a_real_reason(history: History) -> None:
    history.write("eval/baselines/stemming.json", '{"metrics": {"top1_hit": 0}}\n')
    history.commit(
        "Retune stemming\n\nBody.\n\nBaseline-Regenerated: output "
        "tokens rise by 4 because recall now names its trimmed count"
    )
    done = history.check()
    assert done.returncode == 0, done.stdout


def test_a_trailer_on_another_commit_does_not_launder(history: History) -> None:
    history.write("eval/baselines/stemming.json", '{"metrics": {"top1_hit": 0}}\n')
    bad = history.commit("Quietly retune stemming")
    history.write("src/app.py", "x = 2\n")
    history.commit(f"Follow-up\n\n{REASON}")
    done = history.check()
    assert done.returncode == 1
    assert f'rejected: {bad[:10]} "Quietly retune stemming"' in done.stdout
    assert "Follow-up" not in done.stdout


@pytest.mark.parametrize(
    ("change", "status"),
    [
        (lambda h: (h.path / "eval/baselines/stemming.json").unlink(), "(D)"),
        (lambda h: h.write("eval/baselines/budget.json", "{}\n"), "(A)"),
        (lambda h: h.write("eval/kind-coverage.json", '{"grandfathered": ["session_state"]}\n'), "(A)"),
        (lambda h: h.git("mv", "eval/baselines/stemming.json", "eval/baselines/stems.json"), "(D)"),
    ],
)
def test_check_guards_deletes_adds_renames_and_the_manifest(
    history: History, change: Callable[[History], object], status: str
) -> None:
    change(history)
    history.commit("Touch the locked files")
    done = history.check()
    assert done.returncode == 1
    assert status in done.stdout


def test_check_base_limits_the_range(history: History) -> None:
    history.write("eval/baselines/stemming.json", '{"metrics": {"top1_hit": 0}}\n')
    history.commit("Old unjustified retune")
    base = history.commit("later work")
    assert history.check().returncode == 1
    assert history.check("--base", base).returncode == 0
    assert history.check("--base", "0" * 40).returncode == 1
    env_run = subprocess.run(
        [sys.executable, str(CHECK_BASELINES)],
        cwd=history.path,
        capture_output=True,
        text=True,
        env={**os.environ, "CORTEX_BASELINE_BASE": base},
    )
    assert env_run.returncode == 0


def test_check_fails_on_an_unknown_base_or_a_non_repository(history: History, tmp_path: Path) -> None:
    assert history.check("--base", "no-such-rev").returncode == 2
    assert history.check("--repo", str(tmp_path)).returncode == 2


@pytest.mark.parametrize(
    ("reason", "ok"),
    [
        ("the budget suite output rises by twelve tokens because recall shows alternatives", True),
        ("new suite for branch snapshots", True),
        ("", False),
        ("<reason>", False),
        ("tbd", False),
        ("x y z", False),
        ("update baselines", False),
    ],
)
def test_placeholder_rule(reason: str, ok: bool) -> None:
    module = load_check_baselines()
    assert (module.placeholder_problem(reason) is None) is ok


def test_check_passes_on_this_repository() -> None:
    done = subprocess.run([sys.executable, str(CHECK_BASELINES)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_refuses_a_shallow_clone_it_cannot_judge(history: History, tmp_path: Path) -> None:
    """A loosened baseline without a trailer must not pass just because the clone lacks its parent."""
    history.write("eval/baselines/stemming.json", '{"metrics": {"output_tokens": 999}}\n')
    history.commit("Loosen stemming quietly")
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{history.path}", str(shallow)], check=True, capture_output=True
    )
    done = subprocess.run([sys.executable, str(CHECK_BASELINES)], cwd=shallow, capture_output=True, text=True)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "shallow clone" in done.stderr
    assert "git fetch --unshallow" in done.stderr
    assert "ok" not in done.stdout


def test_every_mutant_still_applies_to_the_engine() -> None:
    """eval/mutants/run.py refuses a mutant whose text is gone; catch that here, long before CI runs it."""
    spec = json.loads((EVAL / "mutants" / "mutants.json").read_text(encoding="utf-8"))
    mutants = spec["mutants"]
    assert len(mutants) >= 10
    counts = {
        m["name"]: (ROOT / "cortex_engine" / m["file"]).read_text(encoding="utf-8").count(m["find"]) for m in mutants
    }
    assert counts == {name: 1 for name in counts}


def test_a_no_match_fixture_fails_when_recall_finds_something(stemming: EvalDir) -> None:
    """`expect_no_match`: nothing is the right answer. A topic the seed does answer fails it on its own terms
    (top1_hit and recall_at_3 read 0), whatever its baseline recorded; one that matches nothing passes."""
    suite = stemming.suite("stemming")
    topic = suite["fixtures"][0]["topic"]
    suite["fixtures"] = [{"topic": topic, "expect_no_match": True}, {"topic": "zzzz qqqq", "expect_no_match": True}]
    stemming.write_suite("stemming", suite)
    result = run_suite(load_suite(stemming.suites / "stemming.json"))
    found, empty = result["fixtures"]
    assert (found["top1_hit"], found["recall_at_3"], found["passed"]) == (0, 0.0, False)
    assert found["failures"][0].startswith("expected no match, found ")
    assert (empty["top1_hit"], empty["recall_at_3"], empty["passed"], empty["ranking"]) == (1, 1.0, True, [])
    stemming.write_baseline("stemming", result)
    assert_fails(stemming.gate(), f"stemming [{topic}]", "fixture fails its own assertions", "expected no match")
