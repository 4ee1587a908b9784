"""`cortex undo`: the last operator actions taken back from the audit trail's before-state, newest
first, each undo audited, and refused when what the action changed has changed since."""

from __future__ import annotations

import pytest

from cortex_engine.base.errors import NotFound, Refused
from cortex_engine.engine import Engine

from .conftest import Repo
from .terminal import at_terminal


def _status(engine: Engine, note_id: str) -> tuple[str, int] | None:
    row = engine.conn.execute("SELECT status, conflict FROM notes WHERE id=?", (note_id,)).fetchone()
    return None if row is None else (row["status"], row["conflict"])


def test_undo_walks_back_resolve_delete_and_edit_newest_first(engine: Engine) -> None:
    """Open a contest, settle it with a replacement, delete a note, edit another; three undos put each back in
    reverse order (the replacement withdrawn, the contest open again), every undo is audited, then nothing is left."""
    kafka = engine.note("decision", "use kafka for the queue engine", "queue engine").id
    nats = engine.note("decision", "do not use kafka for the queue engine", "queue engine").id
    assert _status(engine, kafka) == _status(engine, nats) == ("active", 1)
    settled = engine.resolve(kafka, status="superseded", replacement="use nats for the queue engine")
    assert _status(engine, kafka) == _status(engine, nats) == ("superseded", 0)
    doomed = engine.note("insight", "the staging broker runs on port 4222").id
    engine.delete_memory(f"notes:{doomed}", yes=True)
    kept = engine.note("insight", "ci runs on arm").id
    engine.edit_memory(f"notes:{kept}", "ci runs on arm and x86")

    assert engine.undo().operation == "edit"
    assert engine.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (kept,)).fetchone()[0] == "ci runs on arm"
    assert engine.undo().operation == "delete"
    assert _status(engine, doomed) == ("active", 0) and "port 4222" in engine.recall("staging broker", book=False).text
    undone = engine.undo()
    assert undone.operation == "resolve" and "replacement is withdrawn" in undone.detail
    assert _status(engine, kafka) == _status(engine, nats) == ("active", 1)
    assert _status(engine, str(settled.replacement_id)) is None
    assert "[contested]" in engine.recall("queue engine", book=False).text
    audit = engine.conn.execute("SELECT operation, undone_by FROM memory_corrections ORDER BY id").fetchall()
    assert [r["operation"] for r in audit] == ["resolve", "delete", "edit", "undo", "undo", "undo"]
    assert all(r["undone_by"] is not None for r in audit[:3])
    with pytest.raises(NotFound):
        engine.undo()


def test_undo_is_refused_when_the_state_changed_since(engine: Engine, repo: Repo) -> None:
    """A resolve whose notes changed afterwards (a newer decision superseded the survivor) is not undone blindly;
    nothing is written. The CLI says so in one `cortex:` line."""
    first = engine.note("decision", "use kafka", "queue").id
    second = engine.note("decision", "do not use kafka", "queue").id
    engine.resolve(first, status="superseded")
    engine.note("decision", "use nats", "queue")  # supersedes the survivor: the resolve's after-state is gone
    before = (_status(engine, first), _status(engine, second))
    with pytest.raises(Refused) as refused:
        engine.undo()
    assert refused.value.code == "changed_since"
    assert (_status(engine, first), _status(engine, second)) == before
    engine.close()
    done, prompted, shown = at_terminal(repo.path, "undo")  # at a terminal: refused before anything is asked
    assert prompted is None and done.code == 1 and "cortex: " in shown and "changed since" in shown


def test_an_action_that_cannot_be_undone_does_not_block_the_ones_before_it(engine: Engine) -> None:
    """A delete and an edit, then a resolve whose notes a newer decision moved on: `undo` says it passes over the
    resolve and takes back the edit; run again, the delete; run again, nothing is left but the refused resolve."""
    doomed = engine.note("insight", "the staging broker runs on port 4222").id
    engine.delete_memory(doomed, yes=True)
    kept = engine.note("insight", "ci runs on arm").id
    engine.edit_memory(kept, "ci runs on arm and x86")
    first = engine.note("decision", "use kafka", "queue").id
    engine.note("decision", "do not use kafka", "queue")
    engine.resolve(first, status="superseded")
    engine.note("decision", "use nats", "queue")  # the resolve's after-state is gone: it can no longer be undone

    undone = engine.undo()
    assert undone.operation == "edit" and len(undone.skipped) == 1
    assert "resolve" in undone.skipped[0] and "changed since" in undone.skipped[0]
    assert "cannot be undone" in undone.render() and undone.render().endswith("its text is back as it was")
    assert engine.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (kept,)).fetchone()[0] == "ci runs on arm"
    assert engine.undo().operation == "delete" and _status(engine, doomed) == ("active", 0)
    with pytest.raises(Refused) as refused:
        engine.undo()
    assert refused.value.code == "changed_since"


def test_undoing_an_edit_of_a_captured_item_is_refused_once_capture_changed_it(engine: Engine) -> None:
    """An edited failure episode that capture re-projected since (the same failure seen again) keeps capture's text:
    the undo is refused and writes nothing."""
    engine.start_session("host-1")
    engine.log_event("cmd", command="pytest tests/test_x.py", exit_code=1, stderr="AssertionError: boom")
    item = engine.conn.execute("SELECT id FROM memory_items WHERE kind='episode:command_failure'").fetchone()[0]
    engine.edit_memory(item, "pytest fails on the boom assertion")
    engine.log_event("cmd", command="pytest tests/test_x.py", exit_code=1, stderr="AssertionError: boom")
    captured = engine.conn.execute("SELECT text FROM memory_items WHERE id=?", (item,)).fetchone()[0]
    assert captured != "pytest fails on the boom assertion"
    with pytest.raises(Refused) as refused:
        engine.undo()
    assert refused.value.code == "changed_since"
    assert engine.conn.execute("SELECT text FROM memory_items WHERE id=?", (item,)).fetchone()[0] == captured
    assert engine.conn.execute("SELECT COUNT(*) FROM memory_corrections WHERE operation='undo'").fetchone()[0] == 0
