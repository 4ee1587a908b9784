"""Notes: kinds and subjects, contests, supersession per scope, and resolving.

The later sections read what a write or a resolve hands back to its caller (`NoteWrite`, `Resolution`: the CLI and
MCP print them), the session focus a focus or intent note sets, the `record` callback that merges and shared
decisions store with their note, and the limits a note's fields may reach. Real git repositories, the engine's own
connection.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex_engine.base import settings
from cortex_engine.base.errors import InvalidInput, NotFound, Refused
from cortex_engine.engine import Engine
from cortex_engine.memory import notes
from cortex_engine.memory.notes import Resolution

from .conftest import Clock, Repo


def _item(engine: Engine, note_id: str) -> dict[str, object]:
    """The memory item a note projects to, as `inspect-memory` reads it."""
    return engine.inspect_memory(f"notes:{note_id}").item


def _note(engine: Engine, note_id: str) -> sqlite3.Row:
    row: sqlite3.Row = engine.conn.execute("SELECT * FROM scoped_notes WHERE id=?", (note_id,)).fetchone()
    return row


def _count(engine: Engine) -> int:
    return engine.conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0]


@pytest.mark.parametrize("kind", ["decision", "intent", "blocker", "focus"])
def test_subject_required_except_insight(engine: Engine, kind: str) -> None:
    """Every kind but insight needs a subject; nothing is written when it is missing."""
    with pytest.raises(InvalidInput, match=f"Subject is required for {kind} notes"):
        engine.note(kind, "some text", "   ")
    assert _count(engine) == 0
    assert engine.note("insight", "an insight needs no subject").subject is None


def test_unknown_kind_and_empty_text_write_nothing(engine: Engine) -> None:
    """Bad input is refused before anything is stored."""
    engine.note("insight", "keep me")
    with pytest.raises(InvalidInput) as kind_error:
        engine.note("opinion", "text", "s")
    with pytest.raises(InvalidInput) as empty_error:
        engine.note("decision", "  \n ", "s")
    assert (kind_error.value.code, empty_error.value.code) == ("bad_kind", "empty_text")
    assert _count(engine) == 1


def test_subject_is_trimmed_and_lowercased(engine: Engine) -> None:
    """Subjects are normalised so that resolve and supersession find them."""
    result = engine.note("decision", "use kafka", "  Queue   ENGINE ")
    assert result.subject == "queue engine"
    assert _note(engine, result.id)["subject"] == "queue engine"


def test_contradiction_marks_both_sides(engine: Engine) -> None:
    """A note opposing an active decision marks both contested and reports the prior."""
    first = engine.note("decision", "flush the spool at turn end", "spool flush")
    second = engine.note("decision", "do not flush the spool at turn end", "spool flush")
    assert [c.id for c in second.conflicts] == [first.id]
    assert second.conflicts[0].signal == "negation"
    assert _note(engine, first.id)["conflict"] == 1 and _note(engine, second.id)["conflict"] == 1
    assert "Conflict: true" in _item(engine, first.id)["text"]
    assert second.superseded == ()
    assert _note(engine, first.id)["status"] == "active"


@pytest.mark.parametrize(
    ("prior", "incoming"),
    [
        ("use postgres for storage", "use postgres, not mysql, for storage"),
        ("use postgres for storage", "use mysql for storage"),
        ("we cache the app graph per turn", "as noted, we cache the app graph per turn"),
        ("run git commit on release branches", "run git commit --no-verify on release branches"),
    ],
)
def test_refinements_and_divergent_choices_are_not_contests(engine: Engine, prior: str, incoming: str) -> None:
    """Refinements, divergent choices, `as noted` and `--no-verify` never contest."""
    engine.note("decision", prior, "topic")
    result = engine.note("decision", incoming, "topic")
    assert result.conflicts == ()


def test_contest_needs_same_subject(engine: Engine) -> None:
    """Opposite notes on different subjects do not contest."""
    engine.note("decision", "flush the spool at turn end", "spool a")
    assert engine.note("decision", "do not flush the spool at turn end", "spool b").conflicts == ()


def test_decision_supersedes_prior_decision_one_tier_cooler(engine: Engine) -> None:
    """A new decision supersedes the prior on its subject: labelled, kept, one tier cooler."""
    old = engine.note("decision", "use rabbitmq for the queue engine", "queue engine")
    before = _item(engine, old.id)["state"]
    new = engine.note("decision", "use kafka for the queue engine", "queue engine")
    assert new.superseded == (old.id,)
    assert _note(engine, old.id)["status"] == "superseded"
    item = _item(engine, old.id)
    assert item["text"].endswith("Status: superseded")
    assert (before, item["state"]) == ("warm", "cold")


def test_intent_supersedes_intent_but_blockers_never(engine: Engine) -> None:
    """Intents supersede intents; a decision never retires a blocker; blockers never supersede."""
    blocker = engine.note("blocker", "the queue client leaks sockets", "queue engine")
    engine.note("decision", "use kafka for the queue engine", "queue engine")
    engine.note("blocker", "the kafka client needs java", "queue engine")
    assert _note(engine, blocker.id)["status"] == "active"
    first = engine.note("intent", "port the producer", "queue engine")
    engine.note("intent", "port the consumer", "queue engine")
    assert _note(engine, first.id)["status"] == "superseded"


def test_contested_notes_are_never_auto_superseded(engine: Engine) -> None:
    """A later decision on a contested subject cools neither side of the open contest."""
    a = engine.note("decision", "flush the spool at turn end", "spool flush")
    b = engine.note("decision", "do not flush the spool at turn end", "spool flush")
    c = engine.note("decision", "batch spool writes by size", "spool flush")
    assert c.superseded == ()
    assert {_note(engine, a.id)["status"], _note(engine, b.id)["status"]} == {"active"}


def test_supersession_and_contests_are_per_scope(repo: Repo, make_engine) -> None:
    """A decision on main retires nothing on a feature branch, and contests nothing there."""
    repo.git("checkout", "-q", "-b", "feature")
    feature = make_engine(repo.path)
    on_feature = feature.note("decision", "flush the spool at turn end", "spool flush")
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)
    on_main = main.note("decision", "do not flush the spool at turn end", "spool flush")
    assert on_main.conflicts == () and on_main.superseded == ()
    assert _note(main, on_feature.id)["status"] == "active"
    assert _note(main, on_feature.id)["conflict"] == 0


def test_a_replacement_supersedes_only_its_own_kind_in_its_own_scope(repo: Repo, make_engine, clock) -> None:
    """Replacing a decision by subject retires neither the active intent on that subject nor the same subject's
    decision on another branch; a new intent retires the older intent only (a test of one side only let a mutant
    of either pass)."""
    repo.git("checkout", "-q", "-b", "feature")
    elsewhere = make_engine(repo.path).note("decision", "use kafka for the queue", "queue")
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)
    intent = main.note("intent", "move the queue to a managed service", "queue")
    clock.advance(minutes=1)
    old = main.note("decision", "use rabbitmq for the queue", "queue")
    result = main.resolve(subject="queue", status="superseded", replacement="use nats for the queue")
    assert (result.id, result.superseded) == (old.id, ())
    assert _note(main, intent.id)["status"] == "active" and _note(main, elsewhere.id)["status"] == "active"
    clock.advance(minutes=1)
    newer = main.note("intent", "run the queue on the managed service first", "queue")
    assert newer.superseded == (intent.id,)
    assert _note(main, str(result.replacement_id))["status"] == "active"


def test_resolve_by_subject_refused_while_contested(engine: Engine) -> None:
    """Resolving by subject during a contest is refused, naming both sides; nothing changes."""
    a = engine.note("decision", "flush the spool at turn end", "spool flush")
    b = engine.note("decision", "do not flush the spool at turn end", "spool flush")
    with pytest.raises(Refused) as caught:
        engine.resolve(subject="Spool Flush")
    assert a.id in caught.value.message and b.id in caught.value.message
    assert "\n" not in caught.value.message
    assert {_note(engine, a.id)["status"], _note(engine, b.id)["status"]} == {"active"}


def test_resolving_either_side_closes_the_contest(engine: Engine) -> None:
    """Resolving one side clears the marker on both."""
    a = engine.note("decision", "flush the spool at turn end", "spool flush")
    b = engine.note("decision", "do not flush the spool at turn end", "spool flush")
    result = engine.resolve(b.id, status="superseded")
    assert result.cleared_contest is True
    assert _note(engine, a.id)["conflict"] == 0 and _note(engine, b.id)["conflict"] == 0
    assert "Conflict: true" not in _item(engine, a.id)["text"]
    assert _item(engine, b.id)["text"].endswith("Status: superseded")


@pytest.mark.parametrize("leave", ["resolve", "supersede", "delete"])
def test_a_side_leaving_a_three_way_contest_leaves_the_other_two_contested(engine: Engine, leave: str) -> None:
    """Resolved, superseded or deleted, one side leaves and the two left stay contested and
    marked; the next side to leave closes the contest. (Deleting used to clear the flag on every side.)"""
    a = engine.note("decision", "flush the spool at turn end", "spool flush")
    b = engine.note("decision", "do not flush the spool at turn end", "spool flush")
    c = engine.note("decision", "never flush the spool at turn end", "spool flush")

    def go(note_id: str) -> None:
        if leave == "delete":
            engine.delete_memory(note_id, yes=True)
        else:
            engine.resolve(note_id, status="resolved" if leave == "resolve" else "superseded")

    assert [c.id for c in c.conflicts] == [a.id]
    go(b.id)
    for side in (a, c):
        assert _note(engine, side.id)["conflict"] == 1
        assert "Conflict: true" in _item(engine, side.id)["text"]
    assert sorted(i.id for i in engine.recall("flush the spool").items if "contested" in i.labels) == sorted(
        f"notes:{side.id}" for side in (a, c)
    )
    go(c.id)
    assert _note(engine, a.id)["conflict"] == 0 and "Conflict: true" not in _item(engine, a.id)["text"]


def test_a_dated_note_replaced_on_arrival_is_no_side_of_a_contest(engine: Engine, clock) -> None:  # noqa: ANN001
    """A merged note older than this scope's intent arrives superseded: the decision it contradicts is not left
    contested alone (a contest of one active side is no contest)."""
    decision = engine.note("decision", "flush the spool at turn end", "spool")
    clock.advance(minutes=2)
    engine.note("intent", "finish the spool rework", "spool")
    between = _note(engine, decision.id)["timestamp"].replace(":00Z", ":30Z")
    wrote = notes.write_note(
        engine.conn,
        engine.scope,
        None,
        "intent",
        "do not flush the spool at turn end",
        "spool",
        None,
        between,
        origin="from feature/x",
    )
    assert (_note(engine, wrote.id)["status"], _note(engine, wrote.id)["conflict"]) == ("superseded", 0)
    assert _note(engine, decision.id)["conflict"] == 0 and wrote.conflicts == ()
    assert [
        r["status"] for r in engine.conn.execute("SELECT status FROM notes WHERE kind='intent' ORDER BY timestamp")
    ] == ["superseded", "active"]  # the older, dated arrival retires nothing newer


def _write(engine: Engine, kind: str, text: str, subject: str, when: str, origin: str | None = "from feature/x"):
    return notes.write_note(engine.conn, engine.scope, None, kind, text, subject, None, when, origin=origin)


def test_dated_writes_meet_newer_notes_by_the_rules(engine: Engine) -> None:
    """A dated (merged) write older than an active decision of another kind, or than a contest, arrives active; one
    at exactly a prior's timestamp supersedes it; a local write with an older clock still supersedes what is there."""
    t0, t1, t2 = "2026-08-02T17:00:00.000Z", "2026-08-02T17:30:00.000Z", "2026-08-02T17:45:00.000Z"
    decision = _write(engine, "decision", "use kafka for the queue", "queue", t1, None)
    intent = _write(engine, "intent", "benchmark the queue first", "queue", t0)
    assert [_note(engine, n.id)["status"] for n in (decision, intent)] == ["active", "active"]
    same = _write(engine, "decision", "use kafka 3 for the queue", "queue", t1)
    assert (_note(engine, same.id)["status"], _note(engine, decision.id)["status"]) == ("active", "superseded")
    local = _write(engine, "decision", "use nats for the queue", "queue", t0, None)
    assert (_note(engine, local.id)["status"], _note(engine, same.id)["status"]) == ("active", "superseded")
    a = _write(engine, "decision", "flush the spool at turn end", "spool", t2, None)
    b = _write(engine, "decision", "do not flush the spool at turn end", "spool", t2, None)
    late = _write(engine, "decision", "rotate the spool file daily", "spool", t0)
    assert [_note(engine, n.id)["status"] for n in (a, b, late)] == ["active", "active", "active"]


def test_the_contest_check_reaches_a_decision_behind_an_intent_and_reports_it_whole(engine: Engine, clock) -> None:
    """A new intent meets every decision on its subject, also one written after an older intent; the conflict it
    reports carries the decision's subject, time, text and trigger; alternatives are stored cleaned."""
    engine.note("intent", "look at the spool later", "spool")
    clock.advance(minutes=1)
    decision = engine.note("decision", "flush the spool at turn end", "spool", ["flush on every write"])
    clock.advance(minutes=1)
    intent = engine.note("intent", "do not flush the spool at turn end", "spool")
    assert intent.conflicts == (
        notes.Conflict(decision.id, "spool", decision.timestamp, decision.content, "negation", "flush"),
    )
    assert _note(engine, decision.id)["alternatives"] == '["flush on every write"]'
    with pytest.raises(InvalidInput, match="alternatives are over 2000 characters"):
        notes.write_note(engine.conn, engine.scope, None, "decision", "x", "s", ["a" * 2_001], decision.timestamp)


def test_resolve_by_subject_and_by_item_id(engine: Engine) -> None:
    """Uncontested notes resolve by subject (newest) or by either id form; resolved lands cold."""
    old = engine.note("blocker", "ci is red on windows", "ci")
    new = engine.note("blocker", "ci is slow on mac", "ci")
    assert engine.resolve(subject="CI").id == new.id
    assert _item(engine, new.id)["state"] == "cold"
    assert engine.resolve(f"notes:{old.id}").id == old.id


def test_resolve_with_replacement(engine: Engine) -> None:
    """A replacement is written as a new active note on the same subject; the old one is superseded."""
    old = engine.note("decision", "use rabbitmq for the queue", "queue")
    result = engine.resolve(old.id, status="superseded", replacement="use nats for the queue")
    assert result.replacement_id is not None
    new = _note(engine, result.replacement_id)
    assert (new["kind"], new["subject"], new["status"]) == ("decision", "queue", "active")
    assert _note(engine, old.id)["status"] == "superseded"


def test_resolve_errors(engine: Engine) -> None:
    """Unknown ids and subjects, and bad arguments, are clear errors."""
    with pytest.raises(NotFound):
        engine.resolve("no-such-id")
    with pytest.raises(NotFound):
        engine.resolve(subject="nothing here")
    with pytest.raises(InvalidInput):
        engine.resolve()
    with pytest.raises(InvalidInput):
        engine.resolve("x", status="deleted")


REFUSALS = [  # (call, error type, code, message): every refusal names itself exactly (CLI and MCP print these)
    (
        lambda e: e.note("opinion", "text", "s"),
        InvalidInput,
        "bad_kind",
        "unknown note kind 'opinion'; use one of insight, decision, intent, blocker, focus",
    ),
    (lambda e: e.note("decision", " \n", "s"), InvalidInput, "empty_text", "note text is empty"),
    (lambda e: e.note("insight", "x" * 20_001), InvalidInput, "too_long", "note text is over 20000 characters"),
    (
        lambda e: e.note("intent", "text", "  "),
        InvalidInput,
        "subject_required",
        "Subject is required for intent notes",
    ),
    (
        lambda e: e.note("decision", "text", "s" * 201),
        InvalidInput,
        "too_long",
        "subject is 201 characters; the limit is 200 (name the topic in a few words, put the detail in the note text)",
    ),
    (
        lambda e: e.note("decision", "text", "s", ["a" * 2_001]),
        InvalidInput,
        "too_long",
        "alternatives are over 2000 characters",
    ),
    (
        lambda e: e.resolve("x", status="deleted"),
        InvalidInput,
        "bad_status",
        "unknown status 'deleted'; use resolved or superseded",
    ),
    (lambda e: e.resolve(), InvalidInput, "id_or_subject", "give exactly one of a note id or a subject"),
    (
        lambda e: e.resolve("x", subject="s"),
        InvalidInput,
        "id_or_subject",
        "give exactly one of a note id or a subject",
    ),
    (lambda e: e.resolve("x", replacement=" "), InvalidInput, "empty_text", "replacement text is empty"),
    (lambda e: e.resolve(subject=" "), InvalidInput, "bad_args", "subject is empty"),
    (
        lambda e: e.resolve(subject="Nothing Here"),
        NotFound,
        "not_found",
        'no active note on subject "nothing here" in this scope',
    ),
    (lambda e: e.resolve("notes:no-such-id"), NotFound, "not_found", 'no note found for id "notes:no-such-id"'),
]


@pytest.mark.parametrize(("call", "error", "code", "message"), REFUSALS)
def test_every_refusal_names_itself_and_writes_nothing(engine: Engine, call, error, code: str, message: str) -> None:
    """The exact type, code and one-line message of each refusal; the store is left as it was."""
    with pytest.raises(error) as caught:
        call(engine)
    assert (caught.value.code, caught.value.message) == (code, message)
    assert _count(engine) == 0


def test_resolving_by_subject_during_a_contest_names_both_sides(engine: Engine) -> None:
    """The refusal carries the sides' ids (the TUI offers them), oldest last, as the message lists them."""
    a = engine.note("decision", "flush the spool at turn end", "spool flush")
    b = engine.note("decision", "do not flush the spool at turn end", "spool flush")
    with pytest.raises(Refused) as caught:
        engine.resolve(subject="spool flush")
    assert (caught.value.code, caught.value.details) == ("contested_subject", {"ids": [b.id, a.id]})
    assert caught.value.message == (
        f'"spool flush" has an open contest between {b.id}, {a.id}; resolve one side by '
        "id, or give a replacement (resolving by subject would have to guess which side "
        "you meant)"
    )


def test_a_contest_changed_since_it_was_shown_is_refused_with_what_it_is_now(engine: Engine) -> None:
    """`expected_sides` that no longer match: refused, naming the open sides now, and nothing changes."""
    a = engine.note("decision", "flush the spool at turn end", "spool flush")
    b = engine.note("decision", "do not flush the spool at turn end", "spool flush")
    c = engine.note("decision", "never flush the spool at turn end", "spool flush")
    with pytest.raises(Refused) as caught:
        engine.resolve(b.id, expected_sides=[a.id, b.id])
    assert caught.value.code == "contest_changed"
    assert caught.value.details == {"expected": [a.id, b.id], "current": [a.id, b.id, c.id]}
    assert caught.value.message == (
        f'the contest on "spool flush" changed since it was shown: its open sides are now '
        f"{a.id[:8]}, {b.id[:8]}, {c.id[:8]}; nothing was changed"
    )
    assert engine.resolve(b.id, expected_sides=[a.id, b.id, c.id]).id == b.id
    assert engine.resolve(a.id, expected_sides=[c.id, a.id]).cleared_contest is True
    with pytest.raises(Refused, match="it is no longer open; nothing was changed"):
        engine.resolve(c.id, expected_sides=[a.id, c.id])
    assert _note(engine, c.id)["status"] == "active"


def test_text_over_the_limit_only_before_cleaning_is_accepted(engine: Engine) -> None:
    """The limit counts the text as stored: 20,001 characters of which one is invisible is 20,000, accepted."""
    text = "x" * 10_000 + "\u200b" + "x" * 10_000
    wrote = engine.note("insight", text)
    assert len(_note(engine, wrote.id)["content"]) == 20_000


def test_a_replacement_is_projected_at_once_and_a_second_supersede_cools_nothing(engine: Engine) -> None:
    """The replacement's memory item exists as resolve returns; superseding the superseded note again leaves its
    tier where the first supersede put it."""
    old = engine.note("intent", "move the queue to rabbitmq", "queue")  # an intent starts hot: room to cool twice
    result = engine.resolve(old.id, status="superseded", replacement="move the queue to nats")
    assert "move the queue to nats" in _item(engine, str(result.replacement_id))["text"]
    assert _item(engine, old.id)["state"] == "warm"
    engine.resolve(old.id, status="superseded")
    assert _item(engine, old.id)["state"] == "warm"


def test_leaving_a_contest_ignores_what_is_not_a_side(engine: Engine) -> None:
    """`leave_contest` on a note that is no side (or no note at all) changes nothing."""
    a = engine.note("decision", "flush the spool at turn end", "spool flush")
    b = engine.note("decision", "do not flush the spool at turn end", "spool flush")
    plain = engine.note("decision", "rotate the spool file daily", "spool rotation")
    for note_id in (plain.id, "no-such-note"):
        notes.leave_contest(engine.conn, note_id)
    assert (_note(engine, a.id)["conflict"], _note(engine, b.id)["conflict"]) == (1, 1)


def test_a_replacement_by_subject_on_a_contest_supersedes_every_side_and_keeps_the_kind(engine: Engine, clock) -> None:
    """By subject with a replacement on a contested subject: the newest side is the one resolved, every other side
    is superseded, the replacement is a decision written in this session, and a newer intent stays."""
    session = engine.start_session("host-1")
    a = engine.note("decision", "flush the spool at turn end", "spool flush")
    clock.advance(minutes=1)
    b = engine.note("decision", "do not flush the spool at turn end", "spool flush")
    clock.advance(minutes=1)
    intent = engine.note("intent", "measure the spool before deciding", "spool flush")
    result = engine.resolve(subject="spool flush", status="superseded", replacement="flush the spool every minute")
    assert (result.id, result.superseded, result.cleared_contest) == (b.id, (a.id,), True)
    replacement = _note(engine, str(result.replacement_id))
    assert (replacement["kind"], replacement["status"], replacement["session_id"]) == ("decision", "active", session)
    assert [_note(engine, n.id)["status"] for n in (a, b, intent)] == ["superseded", "superseded", "active"]
    assert engine.resolve(intent.id).replacement_id is None
    with pytest.raises(NotFound) as caught:
        engine.resolve(subject="Spool Rotation")
    assert caught.value.details == {"subject": "spool rotation"}


def test_contest_survives_reopen(repo: Repo, make_engine, tmp_path: Path) -> None:
    """The contest is stored, not computed per process."""
    first = make_engine(repo.path)
    first.note("decision", "flush the spool at turn end", "spool flush")
    first.note("decision", "do not flush the spool at turn end", "spool flush")
    again = make_engine(repo.path)
    assert len(again.contests()) == 1
    assert len(again.contests()[0]["sides"]) == 2


def test_cortex_note_says_whether_it_contested_or_superseded_and_which(repo) -> None:
    """The rule the README gives, through the CLI: a polarity flip over shared content contests (both ids named);
    a new decision on the subject that does not negate the old one supersedes it (its id named)."""
    from .install_helpers import cortex

    first = cortex(repo.path, "note", "--kind", "decision", "--subject", "cache", "use redis for the cache")
    first_id = first.out.split("id: ")[1].split()[0]
    flip = cortex(repo.path, "note", "--kind", "decision", "--subject", "cache", "do not use redis")
    assert "Contested" in flip.out and first_id in flip.out and "Superseded" not in flip.out
    tests = cortex(repo.path, "note", "--kind", "decision", "--subject", "tests", "run the tests with pytest")
    tests_id = tests.out.split("id: ")[1].split()[0]
    switch = cortex(repo.path, "note", "--kind", "decision", "--subject", "tests", "do not use pytest; use unittest")
    assert "Superseded 1 earlier decision" in switch.out and tests_id in switch.out and "Contested" not in switch.out


FLUSH, NO_FLUSH, NEVER = (
    "flush the spool at turn end",
    "do not flush the spool at turn end",
    "never flush the spool at turn end",
)


def focus_of(engine: Engine, session_id: str) -> str | None:
    focus: str | None = engine.conn.execute("SELECT focus FROM sessions WHERE id=?", (session_id,)).fetchone()[0]
    return focus


# -- write_note: what it reports ------------------------------------------------------------------------------


def test_a_write_reports_the_note_as_stored(engine: Engine) -> None:
    """The report names the note, its item, its kind, its normalized subject, its text as stored and its time."""
    wrote = engine.note("decision", "  use kafka\u200b for the queue \n", "  The   QUEUE ")
    row = _note(engine, wrote.id)
    assert wrote == notes.NoteWrite(
        row["id"], f"notes:{row['id']}", "decision", "the queue", "use kafka for the queue", engine.now(), (), ()
    )
    assert (row["content"], row["subject"], row["timestamp"]) == ("use kafka for the queue", "the queue", engine.now())
    assert engine.inspect_memory(wrote.item_id).item["kind"] == "note:decision"


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
    assert _note(engine, a.id)["conflict"] == 0


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
    assert _note(engine, blocker.id)["status"] == "active"


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
    row = _note(engine, wrote.id)
    assert (row["origin"], row["alternatives"]) == ("from feature/x", None)
    text = engine.inspect_memory(wrote.item_id).item["text"]
    assert "from feature/x" in text
    plain = engine.note("insight", "the queue is fast")
    assert (_note(engine, plain.id)["origin"], _note(engine, plain.id)["alternatives"]) == (None, None)


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
    assert (wrote.subject, _note(engine, wrote.id)["alternatives"]) == (at_limit, json.dumps(alternatives))
    with pytest.raises(InvalidInput, match="subject is 201 characters"):
        engine.note("decision", "use a longer subject", at_limit + "s")
    with pytest.raises(InvalidInput, match="alternatives are over 2000 characters"):
        engine.note("decision", "use longer alternatives", "alternatives", [*alternatives, "c"])
