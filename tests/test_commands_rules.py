"""A failing test, build or git command becomes a failure episode; the same failure again in the session within a
day bumps it to `(seen Nx)` (`capture.command_runs.FailureEpisodes`, which the spool's replay batches)."""

from __future__ import annotations

import json
from typing import Any

from cortex_engine.base.clock import iso
from cortex_engine.engine import Engine

from .conftest import Clock

COMMAND = "python -m pytest tests/test_api.py"


def failures(engine: Engine) -> list[dict[str, Any]]:
    return [
        {"summary": r["summary"], "created_at": r["created_at"], **json.loads(r["metadata_json"])}
        for r in engine.conn.execute(
            "SELECT summary, created_at, metadata_json FROM episodes "
            "WHERE kind='command_failure' ORDER BY created_at, rowid"
        )
    ]


def fail(engine: Engine, command: str = COMMAND) -> None:
    assert engine.log_event("cmd", command=command, exit_code=2, stdout="collected 3 items", stderr="E   boom")


def test_a_failure_records_what_was_run_and_how_it_failed(engine: Engine) -> None:
    fail(engine, "pytest tests/test_api.py src/api.py")
    (episode,) = failures(engine)
    event = engine.conn.execute("SELECT id FROM events WHERE type='cmd'").fetchone()["id"]
    assert episode == {
        "summary": "test failed: pytest tests/test_api.py src/api.py (exit 2)",
        "created_at": engine.now(),
        "category": "test",
        "exit_code": 2,
        "command_summary": "pytest tests/test_api.py src/api.py",
        "files_touched": ["tests/test_api.py", "src/api.py"],
        "stdout_tail": "collected 3 items",
        "stderr_tail": "E   boom",
        "event_id": event,
        "occurrences": 1,
    }


def test_a_repeat_within_a_day_bumps_the_episode_and_names_its_last_occurrence(engine: Engine, clock: Clock) -> None:
    fail(engine)
    first = failures(engine)[0]
    clock.advance(hours=23, minutes=59, seconds=59)
    fail(engine)
    clock.advance(seconds=86_400)  # exactly a day after the last occurrence: still the same failure
    fail(engine)
    events = [r["id"] for r in engine.conn.execute("SELECT id FROM events WHERE type='cmd' ORDER BY rowid")]
    (episode,) = failures(engine)
    assert episode["summary"] == "test failed: python -m pytest tests/test_api.py (exit 2) (seen 3x)"
    assert (episode["occurrences"], episode["last_occurred_at"], episode["event_id"]) == (3, engine.now(), events[-1])
    assert episode["created_at"] == engine.now() != first["created_at"]
    assert episode["command_summary"] == first["command_summary"]  # the first occurrence's record stays


def test_a_repeat_more_than_a_day_later_is_a_new_episode(engine: Engine, clock: Clock) -> None:
    fail(engine)
    clock.advance(seconds=86_401)
    fail(engine)
    assert [e["summary"] for e in failures(engine)] == ["test failed: python -m pytest tests/test_api.py (exit 2)"] * 2
    assert [e["occurrences"] for e in failures(engine)] == [1, 1]


def test_an_episode_stored_without_a_count_or_metadata_counts_as_seen_once(engine: Engine, clock: Clock) -> None:
    """Episodes written before occurrences were counted (or with an empty metadata document) are bumped to 2x."""
    fail(engine)
    fail(engine, "npm test")
    engine.conn.execute("UPDATE episodes SET metadata_json='{}' WHERE summary LIKE 'test failed: python%'")
    engine.conn.execute("UPDATE episodes SET metadata_json='' WHERE summary LIKE 'test failed: npm%'")
    clock.advance(minutes=5)
    fail(engine)
    fail(engine, "npm test")
    assert sorted(e["summary"] for e in failures(engine)) == [
        "test failed: npm test (exit 2) (seen 2x)",
        "test failed: python -m pytest tests/test_api.py (exit 2) (seen 2x)",
    ]
    assert {e["occurrences"] for e in failures(engine)} == {2}


def test_the_day_is_measured_from_the_last_occurrence_not_the_first(engine: Engine, clock: Clock) -> None:
    fail(engine)
    for _ in range(3):
        clock.advance(hours=20)
        fail(engine)
    (episode,) = failures(engine)
    assert episode["occurrences"] == 4 and episode["created_at"] == iso(clock.now)  # 60 hours after the first
