"""What writing and resolving a note report and record (found by mutation testing of `memory/notes.py`'s write rules).

The write rules themselves (contests, supersession, dated writes, refusals) are held by `tests/test_notes.py`. These
tests read what a write or a resolve hands back to its caller (`NoteWrite`, `Resolution`: the CLI and MCP print
them), the session focus a focus or intent note sets, and the `record` callback that merges and shared decisions
store with their note. Real git repositories, the engine's own connection.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex_engine.base import settings
from cortex_engine.base.errors import InvalidInput
from cortex_engine.engine import Engine
from cortex_engine.memory import notes
from cortex_engine.memory.notes import Resolution

from .conftest import Clock, Repo

FLUSH, NO_FLUSH, NEVER = (
    "flush the spool at turn end",
    "do not flush the spool at turn end",
    "never flush the spool at turn end",
)


def note_row(engine: Engine, note_id: str) -> sqlite3.Row:
    row: sqlite3.Row = engine.conn.execute("SELECT * FROM scoped_notes WHERE id=?", (note_id,)).fetchone()
    return row


def focus_of(engine: Engine, session_id: str) -> str | None:
    focus: str | None = engine.conn.execute("SELECT focus FROM sessions WHERE id=?", (session_id,)).fetchone()[0]
    return focus


# -- write_note: what it reports ------------------------------------------------------------------------------


def test_a_write_reports_the_note_as_stored(engine: Engine) -> None:
    """The report names the note, its item, its kind, its normalized subject, its text as stored and its time."""
    wrote = engine.note("decision", "  use kafka\u200b for the queue \n", "  The   QUEUE ")
    row = note_row(engine, wrote.id)
    assert wrote == notes.NoteWrite(
        row["id"], f"notes:{row['id']}", "decision", "the queue", "use kafka for the queue", engine.now(), (), ()
    )
    assert (row["content"], row["subject"], row["timestamp"]) == ("use kafka for the queue", "the queue", engine.now())
    item = engine.conn.execute("SELECT kind FROM memory_items WHERE id=?", (wrote.item_id,)).fetchone()
    assert item[0] == "note:decision"


def test_a_write_reports_what_it_superseded_and_contested(engine: Engine, clock: Clock) -> None:
    """A decision supersedes the one before it on the subject and says so; one that contradicts an active decision
    names it as a conflict and supersedes nothing."""
    first = engine.note("decision", "use rabbitmq for the queue", "queue")
    clock.advance(minutes=1)
    second = engine.note("decision", "use nats for the queue", "queue")
    assert (second.superseded, second.conflicts) == ((first.id,), ())
    clock.advance(minutes=1)
    a = engine.note("decision", FLUSH, "spool")
    clock.advance(minutes=1)
    b = engine.note("decision", NO_FLUSH, "spool")
    assert (b.superseded, [c.id for c in b.conflicts], b.kind, b.subject) == ((), [a.id], "decision", "spool")
    insight = engine.note("insight", "the spool is flushed by a hook")
    assert (insight.subject, insight.superseded, insight.conflicts) == (None, (), ())


# -- write_note: the session focus ------------------------------------------------------------------------------


def test_a_focus_note_sets_its_session_s_focus_and_an_intent_only_an_unset_one(engine: Engine) -> None:
    """A focus note's subject becomes the session's focus (each one replacing the last); an intent's only when the
    session has none yet; no other kind touches it."""
    session = engine.start_session("host-1")
    assert focus_of(engine, session) is None
    engine.note("decision", "use kafka for the queue", "Queue")
    engine.note("blocker", "ci is red on windows", "ci")
    engine.note("insight", "the queue is fast")
    assert focus_of(engine, session) is None
    engine.note("intent", "move the queue to nats", "The Queue")
    assert focus_of(engine, session) == "the queue"
    engine.note("intent", "look at the spool", "spool")
    assert focus_of(engine, session) == "the queue"
    engine.note("focus", "the release", "Release  Notes")
    assert focus_of(engine, session) == "release notes"
    engine.note("focus", "the spool", "spool")
    assert focus_of(engine, session) == "spool"
    engine.note("intent", "cut the release", "release")
    engine.note("decision", "ship on friday", "release day")
    assert focus_of(engine, session) == "spool"


def test_a_focus_note_sets_only_its_own_session_s_focus(engine: Engine) -> None:
    """A note written without a session (a merged or shared one) sets no session's focus; one written in a
    session sets that session's alone."""
    session = engine.start_session("host-1")
    notes.write_note(
        engine.conn,
        engine.scope,
        None,
        "focus",
        "the merge",
        "merged work",
        None,
        engine.now(),
        origin="from feature/x",
    )
    assert focus_of(engine, session) is None
    other = engine.start_session("host-2")
    notes.write_note(engine.conn, engine.scope, other, "focus", "the release", "release", None, engine.now())
    assert (focus_of(engine, session), focus_of(engine, other)) == (None, "release")


# -- write_note: the record callback --------------------------------------------------------------------------------


def test_the_record_callback_runs_once_inside_the_write_with_the_new_note(engine: Engine) -> None:
    """`record(conn, note_id)` is called once, on the write's connection, when the note row is already there."""
    seen: list[tuple[sqlite3.Connection, str, str]] = []

    def record(conn: sqlite3.Connection, note_id: str) -> None:
        seen.append((conn, note_id, conn.execute("SELECT content FROM notes WHERE id=?", (note_id,)).fetchone()[0]))

    wrote = notes.write_note(
        engine.conn, engine.scope, None, "insight", "recorded with its note", None, None, engine.now(), record=record
    )
    assert [(conn, note_id) for conn, note_id, _ in seen] == [(engine.conn, wrote.id)]
    assert engine.conn.in_transaction is False  # the write committed after the callback


def test_a_failing_record_callback_writes_nothing(engine: Engine) -> None:
    """The callback runs in the note's transaction: when it fails, the note (and its item) are not written."""

    def record(conn: sqlite3.Connection, note_id: str) -> None:
        raise RuntimeError("the promotion could not be recorded")

    before = engine.conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0]
    with pytest.raises(RuntimeError):
        notes.write_note(
            engine.conn, engine.scope, None, "decision", "use kafka", "queue", None, engine.now(), record=record
        )
    assert engine.conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0] == before
    assert engine.conn.execute("SELECT COUNT(*) FROM memory_items WHERE kind='note:decision'").fetchone()[0] == 0


# -- resolve_note: what it reports ---------------------------------------------------------------------------------


def test_resolving_one_side_of_a_two_way_contest_reports_the_contest_closed(engine: Engine) -> None:
    a = engine.note("decision", FLUSH, "Spool Flush")
    b = engine.note("decision", NO_FLUSH, "spool flush")
    assert engine.resolve(b.id, status="superseded") == Resolution(
        b.id, "decision", "spool flush", "superseded", True, None, ()
    )
    assert note_row(engine, a.id)["conflict"] == 0


def test_resolving_one_side_of_a_three_way_contest_reports_it_still_open(engine: Engine) -> None:
    engine.note("decision", FLUSH, "spool flush")
    b = engine.note("decision", NO_FLUSH, "spool flush")
    engine.note("decision", NEVER, "spool flush")
    assert engine.resolve(b.id) == Resolution(b.id, "decision", "spool flush", "resolved", False, None, ())


@pytest.mark.parametrize("status", ["resolved", "superseded"])
def test_resolving_an_uncontested_note_closes_no_contest(engine: Engine, status: str) -> None:
    blocker = engine.note("blocker", "ci is red on windows", "CI")
    assert engine.resolve(blocker.id, status=status) == Resolution(blocker.id, "blocker", "ci", status, False, None, ())
    insight = engine.note("insight", "the spool is flushed by a hook")
    assert engine.resolve(insight.id) == Resolution(insight.id, "insight", None, "resolved", False, None, ())


def test_resolving_with_a_replacement_reports_it_and_what_it_superseded(engine: Engine, clock: Clock) -> None:
    """By id with a replacement: the contest closes, the replacement is named, and the other side is reported as
    superseded by it."""
    a = engine.note("decision", FLUSH, "spool flush")
    clock.advance(minutes=1)
    b = engine.note("decision", NO_FLUSH, "spool flush")
    result = engine.resolve(a.id, replacement="flush the spool every minute")
    assert result.replacement_id is not None
    assert result == Resolution(a.id, "decision", "spool flush", "resolved", True, result.replacement_id, (b.id,))
    uncontested = engine.note("intent", "benchmark the queue", "queue")
    replaced = engine.resolve(uncontested.id, status="superseded", replacement="benchmark the queue twice")
    assert (replaced.cleared_contest, replaced.superseded, replaced.kind) == (False, (), "intent")


def test_a_resolve_is_audited_on_its_note_s_item_and_undone_from_there(engine: Engine, clock: Clock) -> None:
    """The audit row names the note's item, its table and id, its scope, its text, the status it took and its
    subject; `inspect-memory` lists it on the item and `undo` takes it back."""
    blocker = engine.note("blocker", "ci is red on windows", "CI")
    clock.advance(minutes=5)
    engine.resolve(blocker.id)
    row = engine.conn.execute(
        "SELECT memory_item_id, source_table, source_id, scope_key, operation, prior_text, new_text, prior_subject, "
        "created_at FROM memory_corrections"
    ).fetchone()
    assert tuple(row) == (
        f"notes:{blocker.id}",
        "notes",
        blocker.id,
        engine.scope.key,
        "resolve",
        "ci is red on windows",
        "resolved",
        "ci",
        engine.now(),
    )
    shown = engine.inspect_memory(f"notes:{blocker.id}").corrections
    assert [(c["operation"], c["prior_text"], c["new_text"]) for c in shown] == [
        ("resolve", "ci is red on windows", "resolved")
    ]
    undone = engine.undo()
    assert (undone.operation, undone.item_id, undone.subject) == ("resolve", f"notes:{blocker.id}", "ci")
    assert note_row(engine, blocker.id)["status"] == "active"


def test_a_note_keeps_its_origin_and_no_empty_alternatives(engine: Engine) -> None:
    """A dated write keeps the origin it came from (cleaned), shown on its item; a note without alternatives, or
    with only blank ones, stores none."""
    wrote = notes.write_note(
        engine.conn,
        engine.scope,
        None,
        "decision",
        "use kafka for the queue",
        "queue",
        ["  "],
        engine.now(),
        origin="from feature/\u200bx",
    )
    row = note_row(engine, wrote.id)
    assert (row["origin"], row["alternatives"]) == ("from feature/x", None)
    text = engine.conn.execute("SELECT text FROM memory_items WHERE id=?", (wrote.item_id,)).fetchone()[0]
    assert "from feature/x" in text
    plain = engine.note("insight", "the queue is fast")
    assert (note_row(engine, plain.id)["origin"], note_row(engine, plain.id)["alternatives"]) == (None, None)


@pytest.mark.parametrize("where", ["project", "detached"])
def test_a_replacement_outside_a_branch_is_an_item_of_its_scope_s_type(
    make_engine: Callable[..., Engine], repo: Repo, tmp_path: Path, where: str
) -> None:
    """A folder outside git has a project scope, a detached HEAD a detached one: a note resolved there with a
    replacement projects the replacement as an item of that type, read from its scope key (the resolve's own
    fallback is a branch)."""
    if where == "project":
        folder = tmp_path / "plain"
        folder.mkdir()
    else:
        repo.git("checkout", "-q", "--detach")
        folder = repo.path
    eng = make_engine(folder)
    assert eng.scope.type == where
    wrote = eng.note("decision", "keep notes in plain folders", "folders")
    done = eng.resolve(wrote.id, status="superseded", replacement="keep notes in a database")
    assert done.replacement_id is not None
    types = dict(eng.conn.execute("SELECT id, scope_type FROM memory_items"))
    assert types == {wrote.item_id: where, notes.item_id_for(done.replacement_id): where}


def test_a_note_imported_into_a_branch_is_an_item_of_the_branch_scope(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import projects its notes with the type their scope key names (`branch`), not the fallback it gives."""
    settings.write_review_arrivals("none")  # applied at once, not held in the inbox
    path = tmp_path / "in.jsonl"
    note_id = "00000000-0000-4000-8000-000000000001"
    path.write_text(
        json.dumps({"cortex_export": 1})
        + "\n"
        + json.dumps(
            {
                "id": note_id,
                "scope": engine.scope.key,
                "timestamp": "2026-08-01T00:00:00Z",
                "kind": "decision",
                "subject": "storage",
                "content": "use sqlite",
                "alternatives": [],
                "status": "active",
                "contested": False,
            }
        )
        + "\n"
    )
    engine.import_file(str(path))
    assert engine.scope.type == "branch" and engine.scope.key.count(":") > 1
    assert dict(engine.conn.execute("SELECT id, scope_type FROM memory_items")) == {
        notes.item_id_for(note_id): "branch"
    }


# -- validate_note: the limits are inclusive ------------------------------------------------------------------------


def test_a_subject_and_alternatives_exactly_at_their_limits_are_accepted(engine: Engine) -> None:
    """200 characters of subject and 2,000 of alternatives are allowed; one more of either is refused."""
    at_limit = "s" * notes.MAX_SUBJECT_CHARS
    alternatives = ["a" * (notes.MAX_ALTERNATIVES_CHARS - 10), "b" * 10]
    wrote = engine.note("decision", "use the long subject", at_limit, alternatives)
    assert (wrote.subject, note_row(engine, wrote.id)["alternatives"]) == (at_limit, json.dumps(alternatives))
    with pytest.raises(InvalidInput, match="subject is 201 characters"):
        engine.note("decision", "use a longer subject", at_limit + "s")
    with pytest.raises(InvalidInput, match="alternatives are over 2000 characters"):
        engine.note("decision", "use longer alternatives", "alternatives", [*alternatives, "c"])
