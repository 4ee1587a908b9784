"""Running a suite: each fixture and surface probe against the freshly restored scenario, and its metrics.

In: a `Suite`. Out: a result dict (and `baseline_of` it, the part a baseline locks). Standard library only."""

from __future__ import annotations

import json
from typing import Any

from cortex_engine.base.clock import iso, parse_iso
from cortex_engine.base.errors import CortexError
from cortex_engine.base.tokens import estimate_tokens
from cortex_engine.ops.evaluation.scenario import Scenario, scenario
from cortex_engine.ops.evaluation.suites import (
    METRICS,
    RECALL_DEPTH,
    RESULT_SCHEMA,
    Fixture,
    Suite,
    SuiteError,
    SurfaceCheck,
)


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def run_fixture(sc: Scenario, fx: Fixture) -> dict[str, Any]:
    """Run one fixture: rank the topic at full recall depth, then render it at the fixture's budget."""
    sc.restore()
    ranking_surface = sc.engine.recall(fx.topic, RECALL_DEPTH)
    ranking = [sc.labels.get(i.id, f"(unseeded {i.kind})") for i in ranking_surface.items]
    by_label = {label: item_id for item_id, label in sc.labels.items()}
    sc.restore()
    rendered = sc.engine.recall(fx.topic, fx.budget)
    output = rendered.text
    top3 = ranking[:3]
    if fx.no_match:  # nothing is the right answer: any item shown is a wrong top and a wrong top 3
        top1 = 0 if ranking else 1
        recall3 = 0.0 if ranking else 1.0
    else:
        top1 = 1 if ranking and ranking[0] == fx.expected_top else 0
        recall3 = round(sum(1 for ref in fx.relevant if ref in top3) / len(fx.relevant), 4)
    noise = sum(1 for ref in fx.forbidden if ref in ranking)
    stale = 0
    if fx.fresh_after is not None:
        for ref in top3:
            if ref in fx.relevant:
                stamp = parse_iso(str(sc.engine.inspect_memory(by_label[ref]).item["created_at"]))
                stale += 1 if stamp is None or stamp < fx.fresh_after else 0
    tokens = estimate_tokens(output)
    failures = []
    if fx.no_match and ranking:
        failures.append(f"expected no match, found {', '.join(ranking[:3])}")
    elif not top1:
        failures.append(f"top is {ranking[0] if ranking else 'nothing'}, expected {fx.expected_top}")
    missing = [ref for ref in fx.relevant if ref not in top3]
    if missing:
        failures.append(f"not in the top 3: {', '.join(missing)}")
    if noise:
        failures.append(f"forbidden item(s) retrieved: {', '.join(r for r in fx.forbidden if r in ranking)}")
    if stale:
        failures.append(f"{stale} relevant top-3 item(s) older than fresh_after")
    if fx.max_output_tokens is not None and tokens > fx.max_output_tokens:
        failures.append(f"output is {tokens} tokens, over max_output_tokens {fx.max_output_tokens}")
    lowered = output.lower()
    failures += [f"output lacks {n!r}" for n in fx.contains if n.lower() not in lowered]
    failures += [f"output contains {n!r}" for n in fx.excludes if n.lower() in lowered]
    return {
        "topic": fx.topic,
        "expected_top": fx.expected_top or None,
        "top": ranking[0] if ranking else None,
        "ranking": ranking,
        "budget": rendered.budget,
        "top1_hit": top1,
        "recall_at_3": recall3,
        "output_tokens": tokens,
        "noise_count": noise,
        "stale_count": stale,
        "passed": not failures,
        "failures": failures,
        "output": output,
    }


def run_surface(sc: Scenario, check: SurfaceCheck) -> dict[str, Any]:
    """Render one whole surface on the seeded state and check it (case-sensitive)."""
    sc.restore()
    if check.surface == "brief":
        surface = sc.engine.session_brief(check.budget)
    elif check.surface == "header":
        surface = sc.engine.header(check.budget)
    else:
        surface = sc.engine.state(check.budget)
    text = surface.text
    failures = [f"lacks {n!r}" for n in check.contains if n not in text]
    failures += [f"contains {n!r}" for n in check.excludes if n in text]
    if check.max_tokens is not None and surface.tokens > check.max_tokens:
        failures.append(f"is {surface.tokens} tokens, over max_tokens {check.max_tokens}")
    if check.expect_budget is not None and surface.budget != check.expect_budget:
        failures.append(f"spends against a budget of {surface.budget}, expected {check.expect_budget}")
    return {
        "surface": check.surface,
        "budget": surface.budget,
        "tokens": surface.tokens,
        "passed": not failures,
        "failures": failures,
        "text": text,
    }


def run_suite(suite: Suite) -> dict[str, Any]:
    """Seed a suite hermetically and evaluate every fixture and surface.

    Returns:
        The evaluation result (JSON-ready; the same suite always gives byte-identical JSON).

    Raises:
        SuiteError: the scenario could not be built, or the engine refused a seeded item.
    """
    try:
        with scenario(suite) as sc:
            fixtures = [run_fixture(sc, fx) for fx in suite.fixtures]
            surfaces = [run_surface(sc, check) for check in suite.surfaces]
            sc.restore()
            states = [run_state_check(sc, label, tiers) for label, tiers in suite.expect_states]
    except SuiteError:
        raise
    except CortexError as exc:
        raise SuiteError(f"{suite.name}: the engine refused the scenario: {exc.message}") from exc
    metrics = {
        "top1_hit": _mean([f["top1_hit"] for f in fixtures]),
        "recall_at_3": _mean([f["recall_at_3"] for f in fixtures]),
        "output_tokens": sum(f["output_tokens"] for f in fixtures),
        "noise_count": sum(f["noise_count"] for f in fixtures),
        "stale_count": sum(f["stale_count"] for f in fixtures),
    }
    return {
        "suite": suite.name,
        "schema_version": RESULT_SCHEMA,
        "generated_at": iso(suite.now),
        "scope": suite.branch,
        "seeded_items": len(suite.items),
        "kinds_exercised": sorted(suite.exercised_kinds()),
        "metrics": metrics,
        "passed": all(f["passed"] for f in fixtures)
        and all(s["passed"] for s in surfaces)
        and all(s["passed"] for s in states),
        "fixtures": fixtures,
        "surfaces": surfaces,
        "states": states,
    }


def run_state_check(sc: Scenario, label: str, tiers: tuple[str, ...]) -> dict[str, Any]:
    """Check the tier a seeded item holds after seeding and the suite's reads."""
    state = sc.state_of(label)
    passed = state in tiers
    failures = [] if passed else [f"is {state}, expected {' or '.join(tiers)}"]
    return {"item": label, "state": state, "expected": list(tiers), "passed": passed, "failures": failures}


def baseline_of(result: dict[str, Any]) -> dict[str, Any]:
    """The locked part of a result: metrics per fixture and per suite (no rendered text)."""
    return {
        "suite": result["suite"],
        "schema_version": RESULT_SCHEMA,
        "metrics": result["metrics"],
        "fixtures": [
            {
                "topic": f["topic"],
                "top": f["top"],
                "ranking": f["ranking"],
                "passed": f["passed"],
                **{m: f[m] for m in METRICS},
            }
            for f in result["fixtures"]
        ],
    }


def dumps(payload: object) -> str:
    """Stable JSON text for results and baselines."""
    return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
