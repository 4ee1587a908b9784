"""Session consolidation at SessionStart: which ended sessions get summaries, and the branch snapshot's lines."""

from __future__ import annotations

import json
import random

import pytest

from cortex_engine.capture import consolidation
from cortex_engine.engine import Engine

from .conftest import Clock


def test_the_snapshot_names_the_newest_notes_of_any_kind_and_each_kind_its_own(engine: Engine, clock: Clock) -> None:
    """With no summarized session the snapshot's summary is the four newest active notes whatever their kind,
    newest first; intents and blockers list only their own kind; a retired note stays out."""
    written = [
        ("insight", "the pool size is eight"),
        ("decision", "retry the upload twice"),
        ("intent", "split the upload worker"),
        ("blocker", "the staging bucket refuses writes"),
        ("focus", "upload reliability"),
        ("insight", "uploads time out after thirty seconds"),
        ("decision", "keep the upload queue in sqlite"),
    ]
    for kind, text in written:
        engine.note(kind, text, text.split()[-1])
        clock.advance(minutes=1)
    newest = engine.note("insight", "an insight that is then retired")
    engine.conn.execute("UPDATE notes SET status='superseded' WHERE id=?", (newest.id,))
    consolidation.sync_branch_snapshot(engine.conn, engine.scope, engine.now())
    text = engine.conn.execute("SELECT text FROM memory_items WHERE kind='branch_snapshot'").fetchone()[0]
    summary = text.split("Summary: ", 1)[1].split("\nIntents:")[0].splitlines()
    assert [line.split("] ", 1)[1] for line in summary] == [
        "keep the upload queue in sqlite",
        "uploads time out after thirty seconds",
        "upload reliability",
        "the staging bucket refuses writes",
    ]
    assert "Intents: [worker] split the upload worker" in text
    assert "Blockers: [writes] the staging bucket refuses writes" in text


def test_only_sessions_with_something_in_them_are_summarized(engine: Engine, clock: Clock) -> None:
    """Ended sessions with no event, command or note are not candidates (they would never get a summary and be
    read again at every start); a session with a note is summarized once."""
    empty = engine.start_session(None)
    clock.advance(minutes=5)
    busy = engine.start_session(None)  # ends `empty`
    engine.note("insight", "the cache key includes the branch")
    clock.advance(minutes=5)
    engine.start_session(None)  # ends `busy` and summarizes it
    summaries = {row[0] for row in engine.conn.execute("SELECT session_id FROM episodes WHERE kind='session_summary'")}
    assert busy in summaries and empty not in summaries
    statements: list[str] = []
    engine.conn.set_trace_callback(statements.append)
    try:
        assert consolidation.consolidate(engine.conn, engine.scope.key, engine.now()) == 0
    finally:
        engine.conn.set_trace_callback(None)
    assert len(statements) == 1  # the candidate query alone: the empty session is not read again


def test_notes_written_in_the_same_instant_list_the_last_written_first(engine: Engine) -> None:
    """Ties on the timestamp (a fixed clock, a burst of notes) are broken by the order of writing, newest first,
    whatever their kinds: the same store always gives the same snapshot."""
    for kind, text in [
        ("decision", "ship on tuesdays"),
        ("insight", "the queue drains at night"),
        ("blocker", "the release bucket is read-only"),
        ("insight", "builds cache wheels"),
        ("decision", "pin the wheel cache key"),
    ]:
        engine.note(kind, text, text.split()[-1])
    consolidation.sync_branch_snapshot(engine.conn, engine.scope, engine.now())
    text = engine.conn.execute("SELECT text FROM memory_items WHERE kind='branch_snapshot'").fetchone()[0]
    summary = text.split("Summary: ", 1)[1].split("\nBlockers:")[0].splitlines()
    assert [line.split("] ", 1)[1] for line in summary] == [
        "pin the wheel cache key",
        "builds cache wheels",
        "the release bucket is read-only",
        "the queue drains at night",
    ]


def test_the_snapshot_s_recent_steps_are_the_whole_session_s_last_ones(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`recent_steps` reads only a session's newest events, restarting the compression at a command, subagent or
    search: over many random sessions (test cycles crossing the read window, runs of one file, ties on the
    timestamp) its steps equal the last ones of compressing the whole session, both when the window answers and
    when it falls back to the whole session."""
    monkeypatch.setattr(consolidation, "RECENT_LOOKBACK", 12)
    whole = consolidation.level1
    fallbacks: list[str] = []

    def counted(conn, session_id, *, with_commands=True):  # type: ignore[no-untyped-def]
        fallbacks.append(session_id)
        return whole(conn, session_id, with_commands=with_commands)

    monkeypatch.setattr(consolidation, "level1", counted)
    rng = random.Random(7)
    fragments = [
        [("read", "a.py", {})],
        [("edit", "a.py", {})],
        [("edit", "b.py", {})],
        [("write", "c.py", {})],
        [("read", "b.py", {}), ("read", "b.py", {})],
        [
            ("cmd", None, {"category": "test", "exit_code": 1}),
            ("edit", "a.py", {}),
            ("read", "b.py", {}),
            ("cmd", None, {"category": "test", "exit_code": 1}),
            ("edit", "b.py", {}),
            ("cmd", None, {"category": "test", "exit_code": 0}),
        ],
        [("cmd", None, {"category": "test", "exit_code": 1})],
        [("cmd", None, {"category": "test", "exit_code": 0})],
        [("cmd", None, {"category": "test", "exit_code": None})],
        [("cmd", None, {"category": "build", "exit_code": 0})],
        [("agent", None, {"description": "look around"})],
        [("search", "src", {"pattern": "retry"})],
    ]
    checked = fell_back = 0
    for n in range(120):
        session = engine.start_session(None)
        events = [e for _ in range(rng.randrange(0, 16)) for e in rng.choice(fragments)]
        second = 0
        for k, (kind, target, meta) in enumerate(events):
            second += rng.choice((0, 1, 1))  # some events share a timestamp: the rowid orders them
            engine.conn.execute(
                "INSERT INTO events(id, session_id, scope_key, timestamp, "
                "type, target, metadata_json) VALUES (?,?,?,?,?,?,?)",
                (
                    f"e{n}-{k}",
                    session,
                    engine.scope.key,
                    f"2026-12-01T10:{second // 60:02d}:{second % 60:02d}Z",
                    kind,
                    target,
                    json.dumps(meta),
                ),
            )
        expected = whole(engine.conn, session, with_commands=False)[-8:]
        fallbacks.clear()
        assert consolidation.recent_steps(engine.conn, session, 8) == expected, events
        checked += len(expected)
        fell_back += bool(fallbacks)
    assert checked > 500 and 5 < fell_back < 60
