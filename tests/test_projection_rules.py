"""The rules of projecting captured rows into memory items (found by mutation testing of `memory/projection.py`).

A command run and an episode each become one memory item: its text as written, the tier and importance it
starts with, and on a later change a re-projection that keeps the item's tier and history.
"""

from __future__ import annotations

import json

import pytest

from cortex_engine.engine import Engine
from cortex_engine.memory.projection import sync_command_item, sync_episode_item, upsert_item

T1, T2 = "2026-08-02T18:00:00.000Z", "2026-08-02T19:00:00.000Z"


def command(
    engine: Engine,
    run_id: str,
    *,
    category: str = "test",
    summary: str = "pytest -q",
    exit_code: int | None = 1,
    stdout: str | None = None,
    stderr: str | None = None,
    files: str | None = "[]",
) -> None:
    """Store a command run of the engine's scope and project it."""
    session = engine.ensure_session()
    engine.conn.execute(
        "INSERT INTO command_runs(id, session_id, scope_key, timestamp, category, command_summary, exit_code, "
        "stdout_tail, stderr_tail, files_touched_json) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (run_id, session, engine.scope.key, T1, category, summary, exit_code, stdout, stderr, files),
    )
    sync_command_item(
        engine.conn, engine.conn.execute("SELECT * FROM command_runs WHERE id=?", (run_id,)).fetchone(), fresh=True
    )


def episode(
    engine: Engine,
    episode_id: str,
    kind: str,
    *,
    summary: str = "tests failed",
    target: str | None = None,
    meta: dict[str, object] | None = None,
) -> None:
    """Store an episode of the engine's scope and project it."""
    session = engine.ensure_session()
    engine.conn.execute(
        "INSERT INTO episodes(id, session_id, scope_key, kind, summary, target, metadata_json, created_at) "
        "VALUES (?,?,?,?,?,?,?,?)",
        (episode_id, session, engine.scope.key, kind, summary, target, json.dumps(meta or {}), T1),
    )
    sync_episode_item(engine.conn, episode_id)


def item(engine: Engine, item_id: str) -> dict[str, object]:
    """The stored memory item, as a dict (None fields included)."""
    row = engine.conn.execute(
        "SELECT m.kind, m.subject, m.text, m.state, m.importance, m.created_at, m.scope_type, m.own_source, "
        "m.access_count, s.id AS session FROM memory_items m LEFT JOIN sessions s ON s.rowid = m.session "
        "WHERE m.id=?",
        (item_id,),
    ).fetchone()
    return dict(row) if row is not None else {}


def references(engine: Engine, item_id: str) -> list[str]:
    """The paths an item references."""
    return sorted(
        r[0]
        for r in engine.conn.execute("SELECT normalized_path FROM memory_references WHERE memory_item_id=?", (item_id,))
    )


def test_a_failed_command_is_a_warm_item_with_its_exit_files_and_tails(engine: Engine) -> None:
    command(engine, "r1", exit_code=2, stdout="1 failed", stderr="boom", files='["src/a.py", "src/b.py"]')
    got = item(engine, "command_runs:r1")
    assert got == {
        "kind": "command_run",
        "subject": None,
        "state": "warm",
        "importance": 0.72,
        "created_at": T1,
        "scope_type": "branch",
        "own_source": None,
        "access_count": 0,
        "session": engine.ensure_session(),
        "text": "[test] pytest -q (exit 2)\nFiles: src/a.py, src/b.py\nStdout: 1 failed\nStderr: boom",
    }
    assert references(engine, "command_runs:r1") == ["src/a.py", "src/b.py"]


@pytest.mark.parametrize(
    ("category", "exit_code", "state", "importance"),
    [
        ("test", 0, "cold", 0.45),
        ("build", None, "cold", 0.45),
        ("git", 0, "cold", 0.45),
        ("other", 0, "cold", 0.3),
        ("other", -1, "warm", 0.72),
        ("other", 1, "warm", 0.72),
    ],
)
def test_a_command_s_tier_and_importance_follow_its_outcome_and_category(
    engine: Engine, category: str, exit_code: int | None, state: str, importance: float
) -> None:
    command(engine, "r", category=category, exit_code=exit_code)
    got = item(engine, "command_runs:r")
    assert (got["state"], got["importance"]) == (state, importance)


def test_a_command_without_exit_tails_or_files_is_one_line(engine: Engine) -> None:
    command(engine, "r", category="build", summary="", exit_code=None, files="")
    assert item(engine, "command_runs:r")["text"] == "[build] command run"
    command(engine, "s", exit_code=0, stdout="", stderr="")
    assert item(engine, "command_runs:s")["text"] == "[test] pytest -q (exit 0)"


def test_nothing_is_projected_for_a_row_that_is_not_there(engine: Engine) -> None:
    sync_episode_item(engine.conn, "missing")
    assert engine.conn.execute("SELECT COUNT(*) FROM memory_items WHERE id LIKE '%missing'").fetchone()[0] == 0


def test_an_episode_is_its_summary_then_target_files_command_and_tails(engine: Engine) -> None:
    episode(
        engine,
        "e1",
        "command_failure",
        target="src/a.py",
        meta={
            "files": ["src/a.py", "src/b.py"],
            "command_summary": "pytest",
            "stdout_tail": "out",
            "stderr_tail": "err",
        },
    )
    got = item(engine, "episodes:e1")
    assert got == {
        "kind": "episode:command_failure",
        "subject": "src/a.py",
        "state": "hot",
        "importance": 0.88,
        "created_at": T1,
        "scope_type": "branch",
        "own_source": None,
        "access_count": 0,
        "session": engine.ensure_session(),
        "text": "tests failed\nTarget: src/a.py\nFiles: src/a.py, src/b.py\nCommand: pytest\nStdout: out\nStderr: err",
    }
    assert references(engine, "episodes:e1") == ["src/a.py", "src/b.py"]


@pytest.mark.parametrize(
    ("kind", "state", "importance"),
    [
        ("test_cycle", "warm", 0.8),
        ("session_summary", "warm", 0.68),
        ("subagent_conclusion", "warm", 0.75),
        ("something_new", "warm", 0.6),
    ],
)
def test_an_episode_s_tier_and_importance_follow_its_kind(
    engine: Engine, kind: str, state: str, importance: float
) -> None:
    episode(engine, "e", kind, meta={"files_touched": [1, "b.py"]})
    got = item(engine, "episodes:e")
    assert (got["kind"], got["state"], got["importance"]) == (f"episode:{kind}", state, importance)
    assert got["text"] == "tests failed\nFiles: 1, b.py"


def test_an_episode_with_nothing_but_its_summary(engine: Engine) -> None:
    episode(engine, "e", "test_cycle", meta={"files": [], "command_summary": "", "stdout_tail": None})
    assert item(engine, "episodes:e")["text"] == "tests failed"
    assert item(engine, "episodes:e")["subject"] is None


def test_a_re_projection_changes_the_text_and_keeps_the_tier_and_history(engine: Engine) -> None:
    episode(engine, "e", "test_cycle", summary="first")
    engine.conn.execute("UPDATE memory_items SET state='cold', access_count=3 WHERE id='episodes:e'")
    engine.conn.execute("UPDATE episodes SET summary='second see src/c.py', created_at=? WHERE id='e'", (T2,))
    sync_episode_item(engine.conn, "e")
    got = item(engine, "episodes:e")
    assert (got["text"], got["state"], got["access_count"], got["created_at"]) == ("second see src/c.py", "cold", 3, T2)
    assert references(engine, "episodes:e") == ["src/c.py"]
    engine.conn.execute("UPDATE episodes SET target='t', created_at=? WHERE id='e'", (T1,))
    sync_episode_item(engine.conn, "e")
    got = item(engine, "episodes:e")
    assert (got["subject"], got["created_at"]) == ("t", T1)  # a changed subject alone re-projects too


def test_an_unchanged_row_is_not_projected_again(engine: Engine) -> None:
    episode(engine, "e", "test_cycle", summary="same see src/a.py")
    engine.conn.execute("UPDATE episodes SET created_at=? WHERE id='e'", (T2,))
    engine.conn.execute("DELETE FROM item_refs WHERE item=(SELECT rowid FROM memory_items WHERE id='episodes:e')")
    sync_episode_item(engine.conn, "e")
    assert item(engine, "episodes:e")["created_at"] == T1
    assert references(engine, "episodes:e") == []  # nothing re-read either


def test_an_item_whose_id_does_not_name_its_source_keeps_its_source(engine: Engine) -> None:
    session = engine.ensure_session()
    upsert_item(
        engine.conn,
        "snap:1",
        session,
        engine.scope.key,
        "branch_snapshot",
        "branch_snapshots",
        "b1",
        None,
        "files a.py",
        "warm",
        0.5,
        T1,
        references=False,
    )
    got = item(engine, "snap:1")
    assert json.loads(str(got["own_source"])) == ["branch_snapshots", "b1"]
    assert references(engine, "snap:1") == []
    upsert_item(
        engine.conn,
        "project_snapshots:p:/x",
        None,
        "project:/x",
        "project_snapshot",
        "project_snapshots",
        "p:/x",
        None,
        "see src/a.py",
        "warm",
        0.5,
        T1,
    )
    got = item(engine, "project_snapshots:p:/x")
    assert (got["own_source"], got["scope_type"], got["session"]) == (None, "project", None)
    assert references(engine, "project_snapshots:p:/x") == ["src/a.py"]


def test_an_episode_with_empty_metadata_is_its_summary(engine: Engine) -> None:
    session = engine.ensure_session()
    engine.conn.execute(
        "INSERT INTO episodes(id, session_id, scope_key, kind, summary, target, metadata_json, created_at) "
        "VALUES ('e', ?, ?, 'test_cycle', 'ran the tests', NULL, '', ?)",
        (session, engine.scope.key, T1),
    )
    sync_episode_item(engine.conn, "e")
    assert item(engine, "episodes:e")["text"] == "ran the tests"


# -- an item's references re-read on each projection; an episode's subject read before its text ------------------------


def stale_label(engine: Engine, item_id: str) -> str | None:
    """The freshness label of one item, judged now (nothing persisted)."""
    labels = {i["id"]: i["label"] for i in engine.validate_memory(persist=False)["items"]}
    return labels[item_id]


def test_a_re_projection_replaces_the_item_s_references(engine: Engine) -> None:
    """The episode's summary named one file, then another: the item references the new one only."""
    episode(engine, "e", "test_cycle", summary="tests failed in src/a.py")
    assert references(engine, "episodes:e") == ["src/a.py"]
    engine.conn.execute("UPDATE episodes SET summary='tests failed in src/c.py' WHERE id='e'")
    sync_episode_item(engine.conn, "e")
    assert references(engine, "episodes:e") == ["src/c.py"]


def test_an_episode_s_target_is_the_first_path_its_freshness_label_names(engine: Engine) -> None:
    """Neither file exists: the label lists the target before the file its summary named first."""
    episode(engine, "e", "command_failure", summary="tests failed in src/b.py", target="src/a.py")
    assert stale_label(engine, "episodes:e") == "stale: missing src/a.py, src/b.py"
