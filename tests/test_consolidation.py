"""Session consolidation at SessionStart: which ended sessions get summaries, and the branch snapshot's lines."""

from __future__ import annotations

from cortex_engine.capture import consolidation
from cortex_engine.engine import Engine

from .conftest import Clock


def test_the_snapshot_names_the_newest_notes_of_any_kind_and_each_kind_its_own(engine: Engine, clock: Clock) -> None:
    """With no summarized session the snapshot's summary is the four newest active notes whatever their kind,
    newest first; intents and blockers list only their own kind; a retired note stays out."""
    written = [("insight", "the pool size is eight"), ("decision", "retry the upload twice"),
               ("intent", "split the upload worker"), ("blocker", "the staging bucket refuses writes"),
               ("focus", "upload reliability"), ("insight", "uploads time out after thirty seconds"),
               ("decision", "keep the upload queue in sqlite")]
    for kind, text in written:
        engine.note(kind, text, text.split()[-1])
        clock.advance(minutes=1)
    newest = engine.note("insight", "an insight that is then retired")
    engine.conn.execute("UPDATE notes SET status='superseded' WHERE id=?", (newest.id,))
    consolidation.sync_branch_snapshot(engine.conn, engine.scope, engine.now())
    text = engine.conn.execute("SELECT text FROM memory_items WHERE kind='branch_snapshot'").fetchone()[0]
    summary = text.split("Summary: ", 1)[1].split("\nIntents:")[0].splitlines()
    assert [line.split("] ", 1)[1] for line in summary] == [
        "keep the upload queue in sqlite", "uploads time out after thirty seconds", "upload reliability",
        "the staging bucket refuses writes"]
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
    for kind, text in [("decision", "ship on tuesdays"), ("insight", "the queue drains at night"),
                       ("blocker", "the release bucket is read-only"), ("insight", "builds cache wheels"),
                       ("decision", "pin the wheel cache key")]:
        engine.note(kind, text, text.split()[-1])
    consolidation.sync_branch_snapshot(engine.conn, engine.scope, engine.now())
    text = engine.conn.execute("SELECT text FROM memory_items WHERE kind='branch_snapshot'").fetchone()[0]
    summary = text.split("Summary: ", 1)[1].split("\nBlockers:")[0].splitlines()
    assert [line.split("] ", 1)[1] for line in summary] == [
        "pin the wheel cache key", "builds cache wheels", "the release bucket is read-only", "the queue drains at night"]
