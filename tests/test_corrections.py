"""`memory/corrections.py`: the audited corrections a person makes to memory, held in process (the CLI tests
run `cortex` in a subprocess, where neither a mutation run nor a debugger follows them).

Rules held here: an item is found by its id, its note's id or a unique prefix; bad input gets one error and
changes nothing; every correction writes its change and its audit row together (what `cortex undo` takes back);
deleting one side of a three-way contest leaves the other two contested.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cortex_engine.base.errors import InvalidInput, NotFound, Refused
from cortex_engine.engine import Engine
from cortex_engine.memory import corrections
from cortex_engine.memory.notes import extract_item_references
from cortex_engine.scope import references
from cortex_engine.store.database import scope_id

from .conftest import Repo, git


def _add_item(engine: Engine, item_id: str, text: str, kind: str = "command_run") -> None:
    """A memory item with no note behind it (as capture writes one), its references extracted."""
    engine.conn.execute(
        "INSERT INTO memory_items(id, scope_type, scope_id, kind, subject, text, state, importance, created_at) "
        "VALUES (?, ?, ?, ?, NULL, ?, 'warm', 0.5, '2026-08-02T18:00:00.000Z')",
        (item_id, engine.scope.type, scope_id(engine.conn, engine.scope.key), kind, text),
    )
    extract_item_references(engine.conn, item_id, None, text)


def _audit(engine: Engine) -> list[tuple[Any, ...]]:
    return [
        tuple(r)
        for r in engine.conn.execute(
            "SELECT memory_item_id, source_table, source_id, scope_key, operation, prior_text, new_text, prior_subject "
            "FROM memory_corrections ORDER BY id"
        )
    ]


# -- find_item ----------------------------------------------------------------------------------------------------


def test_an_item_is_found_by_its_id_its_note_id_or_a_unique_prefix(engine: Engine) -> None:
    """The item id, the note id (surrounding blanks ignored) and an 8-character prefix of either find the one item."""
    note = engine.note("insight", "the parser lives in src/x.py")
    for key in (note.item_id, note.id, f"  {note.id}\n", note.id[:8], f" {note.item_id[:12]} "):
        assert corrections.find_item(engine.conn, key)["id"] == note.item_id


def test_an_unknown_id_is_not_found_and_an_ambiguous_prefix_is_refused(engine: Engine) -> None:
    """Nothing matching: NotFound naming the id as given (trimmed); a prefix matching two items: InvalidInput."""
    _add_item(engine, "command_runs:1", "pytest -q failed")
    _add_item(engine, "command_runs:2", "pytest -q passed")
    with pytest.raises(NotFound) as missing:
        corrections.find_item(engine.conn, "  no-such-item-at-all ")
    assert missing.value.code == "not_found"
    assert str(missing.value) == 'no memory item found for id "no-such-item-at-all"'
    with pytest.raises(InvalidInput) as ambiguous:
        corrections.find_item(engine.conn, "command_runs:")
    assert ambiguous.value.code == "ambiguous_id"
    assert corrections.find_item(engine.conn, "command_runs:2")["text"] == "pytest -q passed"


def test_not_found_carries_its_code_and_id() -> None:
    """The error adapters print: code `not_found`, the id in its details."""
    error = corrections.not_found("abc")
    assert (str(error), error.code) == ('no memory item found for id "abc"', "not_found")
    assert error.details["id"] == "abc"


# -- check_edit_text and edit_memory ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\ufeff", "\ufeff \n\t\n"])
def test_blank_text_is_refused(text: str) -> None:
    """Blank text (a BOM alone counts as blank) is refused with code `empty_text` and a one-line message."""
    with pytest.raises(InvalidInput) as refused:
        corrections.check_edit_text(text)
    assert refused.value.code == "empty_text"
    assert str(refused.value) == "the new text is empty; nothing was changed"


@pytest.mark.parametrize("last", ["Subject: x", "alternatives: a", "CONFLICT: true", "  status: superseded  "])
def test_a_trailer_shaped_last_line_is_refused(last: str) -> None:
    """The last non-blank line may not look like a trailer (any case, blanks around it and after it ignored)."""
    with pytest.raises(InvalidInput) as refused:
        corrections.check_edit_text(f"the real text\n{last}\n\n  \n")
    assert refused.value.code == "spoofed_trailer"
    assert str(refused.value) == (
        f"the last line {last.strip()[:40]!r} looks like a Cortex trailer (Subject:/Alternatives:/Conflict:/Status:); "
        "trailers are derived from the note, not edited — reword that line"
    )


def test_a_long_trailer_line_is_quoted_cut_to_40_characters() -> None:
    """The refusal quotes at most 40 characters of the offending line, so it stays one short line."""
    last = "Status: " + "x" * 80
    with pytest.raises(InvalidInput) as refused:
        corrections.check_edit_text(last)
    assert repr(last[:40]) in str(refused.value) and repr(last[:41]) not in str(refused.value)


@pytest.mark.parametrize(
    "text", ["the status: is fine", "Subject: first\nthen real text", "Subjects: many", "x\nstatus"]
)
def test_text_that_only_mentions_a_trailer_word_is_accepted(text: str) -> None:
    """Only a last line that starts like a trailer is refused; the text comes back as given (BOM dropped)."""
    assert corrections.check_edit_text(text) == text
    assert corrections.check_edit_text("\ufeff" + text) == text


def test_editing_a_note_rewrites_its_content_keeps_its_tier_and_is_audited(repo: Repo, engine: Engine) -> None:
    """A one-line edit has its blanks collapsed; a multi-line edit is kept, only trimmed; every edit writes one
    audit row holding the item, its source, scope, subject and both texts; the result counts the references."""
    repo.write("src/x.py")
    note = engine.note("decision", "the parser lives in src/x.py", "parser home")
    engine.conn.execute("UPDATE memory_items SET state='hot' WHERE id=?", (note.item_id,))
    done = engine.edit_memory(note.id, "\ufeff  the parser   moved to\tsrc/y.py, see src/z.py  ")
    assert done == corrections.Edit(
        note.item_id, 2, "the parser lives in src/x.py", "the parser moved to src/y.py, see src/z.py"
    )
    row = engine.inspect_memory(note.item_id).item
    assert (row["text"], row["state"]) == (
        "decision: the parser moved to src/y.py, see src/z.py\nSubject: parser home",
        "hot",
    )
    again = engine.edit_memory(note.item_id, "\n  first line  \n\n  second   line\n")
    assert again.new_text == "first line  \n\n  second   line"
    assert again.references == 0
    assert (
        engine.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (note.id,)).fetchone()[0] == again.new_text
    )
    key = engine.scope.key
    assert _audit(engine) == [
        (
            note.item_id,
            "notes",
            note.id,
            key,
            "edit",
            "the parser lives in src/x.py",
            "the parser moved to src/y.py, see src/z.py",
            "parser home",
        ),
        (
            note.item_id,
            "notes",
            note.id,
            key,
            "edit",
            "the parser moved to src/y.py, see src/z.py",
            "first line  \n\n  second   line",
            "parser home",
        ),
    ]
    created = engine.conn.execute("SELECT created_at FROM memory_corrections").fetchall()
    assert [r[0] for r in created] == [engine.now(), engine.now()]


def test_editing_an_item_without_a_note_keeps_the_text_as_given(engine: Engine) -> None:
    """A captured item's text is replaced byte for byte (no collapsing), its references re-extracted."""
    _add_item(engine, "command_runs:7", "pytest -q failed in src/app.py")
    new = "pytest -q passed\n  after fixing   src/app.py and src/util.py  "
    done = engine.edit_memory("command_runs:7", new)
    assert done == corrections.Edit("command_runs:7", 2, "pytest -q failed in src/app.py", new)
    assert engine.inspect_memory("command_runs:7").item["text"] == new
    paths = [
        r[0]
        for r in engine.conn.execute(
            "SELECT normalized_path FROM memory_references WHERE memory_item_id='command_runs:7' ORDER BY id"
        )
    ]
    assert paths == ["src/app.py", "src/util.py"]
    assert _audit(engine) == [
        ("command_runs:7", "command_runs", "7", engine.scope.key, "edit", "pytest -q failed in src/app.py", new, None)
    ]


def test_an_edit_is_stored_redacted(engine: Engine) -> None:
    """A secret typed into an edit is stored redacted, as captured text is."""
    note = engine.note("insight", "the staging token lives in the vault")
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    done = engine.edit_memory(note.id, f"the staging token is {secret}")
    assert secret not in done.new_text and secret not in str(_audit(engine))
    assert secret not in engine.inspect_memory(note.item_id).item["text"]


@pytest.mark.parametrize("text", ["  ", "fine\nStatus: resolved"])
def test_a_refused_edit_changes_nothing(engine: Engine, text: str) -> None:
    """Bad text: nothing written, no audit row."""
    note = engine.note("insight", "keep this text")
    with pytest.raises(InvalidInput):
        engine.edit_memory(note.id, text)
    assert (
        engine.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (note.id,)).fetchone()[0] == "keep this text"
    )
    assert _audit(engine) == []


def test_an_edit_is_undone_to_the_text_before(engine: Engine) -> None:
    """`undo` puts the prior text back (the audit row holds it)."""
    _add_item(engine, "command_runs:3", "make test failed")
    engine.edit_memory("command_runs:3", "make test passed")
    assert engine.undo().operation == "edit"
    assert engine.inspect_memory("command_runs:3").item["text"] == "make test failed"


# -- delete_memory ------------------------------------------------------------------------------------------------


def _rows(engine: Engine) -> tuple[int, ...]:
    """How many rows each table a delete touches holds."""
    return tuple(
        engine.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
        for t in ("memory_items", "notes", "memory_references", "memory_corrections", "episodes", "command_runs")
    )


def _conflict(engine: Engine, note_id: str) -> int | None:
    row = engine.conn.execute("SELECT conflict FROM notes WHERE id=?", (note_id,)).fetchone()
    return None if row is None else int(row[0])


def test_a_delete_preview_describes_the_item_and_changes_nothing(repo: Repo, engine: Engine) -> None:
    """Without `yes`: every field of the preview (a contested note with one reference), and not a row changed."""
    repo.write("src/queue.py")
    engine.note("decision", "use kafka for the queue engine", "queue engine")
    other = engine.note("decision", "do not use kafka for the queue engine in src/queue.py", "queue engine")
    before = _rows(engine)
    text = engine.inspect_memory(other.item_id).item["text"]
    preview = engine.delete_memory(other.id)
    assert preview == corrections.Deletion(
        other.item_id, "note:decision", "queue engine", engine.scope.key, f"notes/{other.id}", 1, True, text, False
    )
    assert _rows(engine) == before


def test_a_delete_preview_of_a_captured_item_names_its_source_and_no_contest(engine: Engine) -> None:
    """A captured item: its source row named `table/id`, never contested, its references counted."""
    _add_item(engine, "command_runs:9", "pytest failed in src/a.py and src/b.py")
    preview = engine.delete_memory("command_runs:9")
    assert (preview.source, preview.contested, preview.references, preview.subject, preview.deleted) == (
        "command_runs/9",
        False,
        2,
        None,
        False,
    )


def test_a_note_outside_a_contest_is_deleted_audited_and_comes_back_by_undo(engine: Engine) -> None:
    """The item, its note and its references go in one audited write; the audit keeps the note's content; undo
    restores the same note."""
    note = engine.note("insight", "the staging broker runs on port 4222 per src/broker.py")
    before = _rows(engine)
    done = engine.delete_memory(note.id, yes=True)
    assert (done.deleted, done.contested, done.id, done.references) == (True, False, note.item_id, 1)
    assert _rows(engine) == (before[0] - 1, before[1] - 1, before[2] - 1, before[3] + 1, before[4], before[5])
    assert _audit(engine) == [
        (
            note.item_id,
            "notes",
            note.id,
            engine.scope.key,
            "delete",
            "the staging broker runs on port 4222 per src/broker.py",
            None,
            None,
        )
    ]
    assert engine.conn.execute("SELECT created_at FROM memory_corrections").fetchone()[0] == engine.now()
    assert engine.undo().detail == "the note is back"
    assert engine.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (note.id,)).fetchone()[0] == (
        "the staging broker runs on port 4222 per src/broker.py"
    )
    with pytest.raises(NotFound):
        engine.delete_memory(note.id + "-gone", yes=True)


def test_deleting_one_side_of_a_three_way_contest_leaves_two_contested_and_undo_reopens_all_three(
    engine: Engine,
) -> None:
    """The deleted side leaves; the two left stay contested; undo brings it back into the contest."""
    a = engine.note("decision", "flush the spool at turn end", "spool flush")
    b = engine.note("decision", "do not flush the spool at turn end", "spool flush")
    c = engine.note("decision", "never flush the spool at turn end", "spool flush")
    assert [_conflict(engine, n.id) for n in (a, b, c)] == [1, 1, 1]
    done = engine.delete_memory(b.id, yes=True)
    assert (done.deleted, done.contested) == (True, True)
    assert [_conflict(engine, n.id) for n in (a, b, c)] == [1, None, 1]
    assert engine.undo().detail == "the note is back and its contest is open again"
    assert [_conflict(engine, n.id) for n in (a, b, c)] == [1, 1, 1]
    text = engine.inspect_memory(b.item_id).item["text"]
    assert "Conflict: true" in text


def test_deleting_one_side_of_a_two_way_contest_closes_it_and_undo_reopens_it(engine: Engine) -> None:
    """The side left is the decision (its flag and its `Conflict: true` trailer go); undo reopens the contest."""
    a = engine.note("decision", "use kafka for the queue engine", "queue engine")
    b = engine.note("decision", "do not use kafka for the queue engine", "queue engine")
    engine.delete_memory(a.id, yes=True)
    assert _conflict(engine, b.id) == 0
    assert "Conflict: true" not in engine.inspect_memory(b.item_id).item["text"]
    assert engine.undo().detail == "the note is back and its contest is open again"
    assert (_conflict(engine, a.id), _conflict(engine, b.id)) == (1, 1)


def test_a_delete_records_only_the_sides_of_its_own_contest(engine: Engine) -> None:
    """The audit row keeps the deleted note whole and the other sides of its own contest (what undo reopens):
    not a side of another subject's contest, not the note itself."""
    a = engine.note("decision", "use kafka for the queue engine", "queue engine")
    b = engine.note("decision", "do not use kafka for the queue engine", "queue engine")
    c = engine.note("decision", "never use kafka for the queue engine", "queue engine")
    engine.note("decision", "use redis for the cache layer", "cache layer")
    engine.note("decision", "do not use redis for the cache layer", "cache layer")
    engine.delete_memory(b.id, yes=True)
    before = json.loads(engine.conn.execute("SELECT before_state FROM memory_corrections").fetchone()[0])
    assert sorted(before["contest"]) == sorted([a.id, c.id])
    assert (before["note"]["id"], before["note"]["content"], before["note"]["conflict"]) == (
        b.id,
        "do not use kafka for the queue engine",
        1,
    )
    plain = engine.note("insight", "no contest here", "queue engine")
    engine.delete_memory(plain.id, yes=True)
    last = json.loads(engine.conn.execute("SELECT before_state FROM memory_corrections ORDER BY id DESC").fetchone()[0])
    assert (last["contest"], last["note"]["id"]) == ([], plain.id)


def test_deleting_a_failure_deletes_its_episode_and_a_command_its_run(live_engine: Engine) -> None:
    """A failure's episode and a command's run go with their items (or the next run would bring them back); the
    session summary's episode stays, its item gone; a branch snapshot's item goes alone."""
    live_engine.log_event("cmd", command="pytest tests/test_x.py", exit_code=1)
    live_engine.log_event("cmd", command="make build", exit_code=0)
    live_engine.summarize("checkpoint")
    items = {r["kind"]: r for r in live_engine.conn.execute("SELECT * FROM scoped_items")}

    def episodes() -> list[str]:
        return sorted(r[0] for r in live_engine.conn.execute("SELECT kind FROM episodes"))

    def runs() -> list[str]:
        return sorted(r[0] for r in live_engine.conn.execute("SELECT command_summary FROM command_runs"))

    assert episodes() == ["command_failure", "session_summary"]
    assert runs() == ["make build", "pytest tests/test_x.py"]
    live_engine.delete_memory(items["episode:command_failure"]["id"], yes=True)
    assert episodes() == ["session_summary"]
    assert runs() == ["make build", "pytest tests/test_x.py"]
    build = [
        r["id"]
        for r in live_engine.conn.execute(
            "SELECT id FROM scoped_items WHERE kind='command_run' AND text LIKE '%make build%'"
        )
    ]
    live_engine.delete_memory(build[0], yes=True)
    assert runs() == ["pytest tests/test_x.py"]
    summary = items["episode:session_summary"]["id"]
    done = live_engine.delete_memory(summary, yes=True)
    assert (done.deleted, done.source) == (True, f"episodes/{items['episode:session_summary']['source_id']}")
    assert episodes() == ["session_summary"]
    with pytest.raises(NotFound):  # the item is gone
        live_engine.inspect_memory(summary)
    audit = _audit(live_engine)
    assert [(r[4], r[5]) for r in audit] == [
        ("delete", items["episode:command_failure"]["text"]),
        ("delete", audit[1][5]),
        ("delete", items["episode:session_summary"]["text"]),
    ]
    assert "make build" in audit[1][5]
    with pytest.raises(Refused) as refused:
        live_engine.undo()
    assert refused.value.code == "not_undoable"
    assert live_engine.delete_memory(items["branch_snapshot"]["id"], yes=True).deleted  # its source is no table
    assert live_engine.conn.execute("SELECT COUNT(*) FROM memory_items WHERE kind='branch_snapshot'").fetchone()[0] == 0


@pytest.fixture
def live_engine(engine: Engine) -> Engine:
    """An engine with a started session (as SessionStart leaves it)."""
    engine.start_session("host-1")
    return engine


def _focus(engine: Engine) -> list[str | None]:
    return [r[0] for r in engine.conn.execute("SELECT focus FROM sessions ORDER BY rowid")]


def test_deleting_the_focus_note_falls_back_to_the_newest_focus_then_intent(live_engine: Engine, clock: Any) -> None:
    """The session's focus falls back to the newest active focus note left, then the newest intent, then none;
    a deleted note of another kind on the same subject leaves the focus alone."""
    engine = live_engine
    engine.note("focus", "first the parser", "parser work")
    clock.advance(minutes=1)
    engine.note("intent", "later the lexer", "lexer work")
    clock.advance(minutes=1)
    engine.note("intent", "then the docs", "docs work")
    clock.advance(minutes=1)
    newest = engine.note("focus", "now the cache", "cache work")
    clock.advance(minutes=1)
    same_subject = engine.note("insight", "the cache misses on cold start", "cache work")
    assert _focus(engine) == ["cache work"]
    engine.delete_memory(same_subject.id, yes=True)
    assert _focus(engine) == ["cache work"]
    engine.delete_memory(newest.id, yes=True)
    assert _focus(engine) == ["parser work"]  # a focus note before any intent, however new
    parser = engine.conn.execute("SELECT id FROM notes WHERE subject='parser work'").fetchone()[0]
    engine.delete_memory(parser, yes=True)
    assert _focus(engine) == ["docs work"]  # the newest intent
    for subject in ("docs work", "lexer work"):
        engine.delete_memory(
            engine.conn.execute("SELECT id FROM notes WHERE subject=?", (subject,)).fetchone()[0], yes=True
        )
    assert _focus(engine) == [None]


def test_the_focus_fallback_skips_retired_notes_and_breaks_ties_by_the_later_write(live_engine: Engine) -> None:
    """Same time (a fixed clock): the note written last wins; a superseded intent is never the focus again."""
    engine = live_engine
    engine.note("intent", "old plan for the build", "build plan")
    engine.note("intent", "new plan for the build", "build plan")  # supersedes the old one (same subject)
    engine.note("focus", "tidy the tests", "tests tidy")
    engine.note("focus", "speed the tests", "tests speed")
    assert _focus(engine) == ["tests speed"]
    speed = engine.conn.execute("SELECT id FROM notes WHERE subject='tests speed'").fetchone()[0]
    engine.delete_memory(speed, yes=True)
    assert _focus(engine) == ["tests tidy"]
    tidy = engine.conn.execute("SELECT id FROM notes WHERE subject='tests tidy'").fetchone()[0]
    engine.delete_memory(tidy, yes=True)
    assert _focus(engine) == ["build plan"]
    active = engine.conn.execute("SELECT id FROM notes WHERE subject='build plan' AND status='active'").fetchone()[0]
    engine.delete_memory(active, yes=True)
    assert _focus(engine) == [None]


# -- rewrite_moved_references -------------------------------------------------------------------------------------


def _renamed(repo: Repo, *moves: tuple[str, str]) -> None:
    """Commit the files, then `git mv` each (old, new) in one more commit."""
    for old, _ in moves:
        repo.write(old, "x = 1\n")
    repo.commit("add files")
    for old, new in moves:
        (repo.path / new).parent.mkdir(parents=True, exist_ok=True)
        repo.git("mv", old, new)
    repo.commit("rename")


def test_rewrite_moved_rewrites_each_renamed_path_in_the_note_audited(repo: Repo, engine: Engine) -> None:
    """Every mention of each renamed file is rewritten in the note's content (not its item text, which adds the
    kind and trailers); the result lists each move with its count; one `rewrite-moved` audit row."""
    note = engine.note(
        "decision", "flush from src/spool.py (see ./src/spool.py:3) and keep src/ledger.py", "spool flush"
    )
    _renamed(repo, ("src/spool.py", "src/capture_spool.py"), ("src/ledger.py", "src/book.py"))
    done = engine.rewrite_moved(note.id)
    new = "flush from src/capture_spool.py (see ./src/capture_spool.py:3) and keep src/book.py"
    prior = "flush from src/spool.py (see ./src/spool.py:3) and keep src/ledger.py"
    assert done.id == note.item_id
    assert sorted(done.moves, key=str) == sorted(
        [
            {"from": "src/spool.py", "to": "src/capture_spool.py", "count": 2},
            {"from": "src/ledger.py", "to": "src/book.py", "count": 1},
        ],
        key=str,
    )
    assert done.edit == corrections.Edit(note.item_id, 2, prior, new)
    assert engine.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (note.id,)).fetchone()[0] == new
    assert _audit(engine) == [
        (note.item_id, "notes", note.id, engine.scope.key, "rewrite-moved", prior, new, "spool flush")
    ]
    assert engine.undo().operation == "rewrite-moved"
    assert engine.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (note.id,)).fetchone()[0] == prior


def test_rewrite_moved_rewrites_a_captured_item_in_place(repo: Repo, engine: Engine) -> None:
    """An item with no note: its own text is rewritten byte for byte."""
    repo.write("src/app.py", "x = 1\n")
    repo.commit("app")
    _add_item(engine, "command_runs:4", "pytest failed in src/app.py\n  twice")
    (repo.path / "lib").mkdir()
    repo.git("mv", "src/app.py", "lib/app.py")  # found by its unique name (the item recorded no HEAD)
    repo.commit("rename")
    done = engine.rewrite_moved("command_runs:4")
    assert done.moves == [{"from": "src/app.py", "to": "lib/app.py", "count": 1}]
    assert engine.inspect_memory("command_runs:4").item["text"] == ("pytest failed in lib/app.py\n  twice")


def test_a_rename_to_a_name_that_is_not_a_plain_path_is_never_copied_in(repo: Repo, engine: Engine) -> None:
    """Alone, such a move refuses (`unsafe_name`, the names quoted); beside a plain move, only the plain one is
    rewritten."""
    alone = engine.note("decision", "flush from src/spool.py at turn end", "spool flush")
    both = engine.note("decision", "src/queue.py reads src/ledger.py", "queue reads")
    two = engine.note("decision", "src/spool.py feeds src/queue.py", "spool feeds")
    _renamed(
        repo,
        ("src/spool.py", "src/spool (old).py"),
        ("src/queue.py", "src/q;ueue.py"),
        ("src/ledger.py", "src/book.py"),
    )
    with pytest.raises(Refused) as refused:
        engine.rewrite_moved(alone.id)
    assert (refused.value.code, refused.value.details["id"]) == ("unsafe_name", alone.item_id)
    assert str(refused.value) == (
        f"{alone.item_id}: git renamed to a name that is not a plain path (src/spool.py → "
        '"src/spool \\x28old\\x29.py"); nothing was rewritten (edit the memory instead)'
    )
    with pytest.raises(Refused) as refused:
        engine.rewrite_moved(two.id)
    assert str(refused.value) == (
        f"{two.item_id}: git renamed to a name that is not a plain path (src/spool.py → "
        '"src/spool \\x28old\\x29.py", src/queue.py → "src/q\\x3bueue.py"); nothing was '
        "rewritten (edit the memory instead)"
    )
    assert _audit(engine) == []
    done = engine.rewrite_moved(both.id)
    assert done.moves == [{"from": "src/ledger.py", "to": "src/book.py", "count": 1}]
    assert done.edit.new_text == "src/queue.py reads src/book.py"


def test_rewrite_moved_refuses_what_it_cannot_do_and_writes_nothing(repo: Repo, engine: Engine) -> None:
    """No moved reference (`nothing_moved`); a moved path named only in the subject (`subject_only`); a text
    changed since it was shown (`changed`); an unknown id. Each writes nothing."""
    still = engine.note("insight", "README.md says hello")
    only_subject = engine.note("decision", "keep it small", "src/ledger.py and src/spool.py layout")
    shown = engine.note("decision", "flush from src/spool.py at turn end", "spool flush")
    _renamed(repo, ("src/ledger.py", "src/book.py"), ("src/spool.py", "src/capture_spool.py"))
    cases = [
        (still.id, None, "nothing_moved", f"{still.item_id} has no moved reference to rewrite"),
        (
            only_subject.id,
            None,
            "subject_only",
            f"{only_subject.item_id} names src/ledger.py, src/spool.py only in its subject, "
            "which is not rewritten; edit the memory instead",
        ),
        (
            shown.id,
            "decision: an older text",
            "changed",
            f"{shown.item_id} changed since it was shown; nothing was rewritten (look again, then retry)",
        ),
    ]
    for item_id, expected, code, message in cases:
        with pytest.raises(Refused) as refused:
            engine.rewrite_moved(item_id, expected_text=expected)
        assert (refused.value.code, str(refused.value), refused.value.details["id"]) == (
            code,
            message,
            corrections.find_item(engine.conn, item_id)["id"],
        )
    with pytest.raises(NotFound):
        engine.rewrite_moved("no-such-memory-item")
    assert _audit(engine) == []
    text = engine.inspect_memory(shown.item_id).item["text"]
    assert (
        engine.rewrite_moved(shown.id, expected_text=text).edit.new_text
        == "flush from src/capture_spool.py at turn end"
    )


def test_an_edit_made_while_the_rewrite_reads_the_checkout_refuses_it(
    repo: Repo, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text is compared again inside the write: an edit that lands between the read and the write (here,
    while the paths are rewritten) makes the rewrite refuse; the edit stands."""
    note = engine.note("decision", "flush from src/spool.py at turn end", "spool flush")
    _renamed(repo, ("src/spool.py", "src/capture_spool.py"))
    real = references.rewrite_path

    def meanwhile(text: str, old: str, new: str) -> tuple[str, int]:
        corrections.edit_memory(engine.conn, note.id, "flush from src/spool.py at session end", engine.now())
        return real(text, old, new)

    monkeypatch.setattr(references, "rewrite_path", meanwhile)
    with pytest.raises(Refused) as refused:
        engine.rewrite_moved(note.id)
    assert (refused.value.code, str(refused.value), refused.value.details["id"]) == (
        "changed",
        f"{note.item_id} changed since it was read; nothing was rewritten (look again, then retry)",
        note.item_id,
    )
    assert engine.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (note.id,)).fetchone()[0] == (
        "flush from src/spool.py at session end"
    )
    assert [r[4] for r in _audit(engine)] == ["edit"]


# -- reanchor_memory ----------------------------------------------------------------------------------------------

SESSION = "import os\n\ndef refresh_token(x):\n    y = x + 1\n    return y\n\n\ndef other(a):\n    return a * 2\n"


def test_reanchor_moves_only_the_drifted_anchor_to_the_code_now_audited(repo: Repo, engine: Engine) -> None:
    """The drifted span takes its new lines, hash, the HEAD it was re-anchored on and the time; a fresh anchor of
    the same note is left as it was; the audit row says from where to where; a second reanchor is refused."""
    repo.write("src/session.py", SESSION)
    repo.commit("session")
    note = engine.note(
        "decision", "refresh_token() in src/session.py adds one; other() in src/session.py doubles", "tokens"
    )

    def anchors() -> dict[str, dict[str, Any]]:
        return {r["symbol"]: dict(r) for r in engine.conn.execute("SELECT * FROM memory_anchors")}

    before = anchors()
    assert (before["refresh_token"]["start_line"], before["refresh_token"]["end_line"]) == (3, 5)
    repo.write("src/session.py", SESSION.replace("import os\n", "import os\nimport sys\n\n").replace("+ 1", "+ 2"))
    repo.commit("add two")
    head = repo.git("rev-parse", "HEAD").strip()
    done = engine.reanchor(note.id)
    after = anchors()
    moved = after["refresh_token"]
    assert done == corrections.Reanchor(
        note.item_id, [{"anchor": "src/session.py:refresh_token", "start": 5, "end": 7, "hash": moved["content_hash"]}]
    )
    assert moved["content_hash"] != before["refresh_token"]["content_hash"]
    assert (moved["path"], moved["start_line"], moved["end_line"], moved["head_oid"], moved["anchored_at"]) == (
        "src/session.py",
        5,
        7,
        head,
        engine.now(),
    )
    assert after["other"] == before["other"]
    assert _audit(engine) == [
        (
            note.item_id,
            "notes",
            note.id,
            engine.scope.key,
            "reanchor",
            f"src/session.py:refresh_token lines 3-5 hash {before['refresh_token']['content_hash']}",
            f"src/session.py:refresh_token lines 5-7 hash {moved['content_hash']}",
            "tokens",
        )
    ]
    assert engine.conn.execute("SELECT created_at FROM memory_corrections").fetchone()[0] == engine.now()
    report: Any = engine.validate_memory(persist=False)
    assert report["items"][0]["label"] is None
    with pytest.raises(Refused) as refused:
        engine.reanchor(note.id)
    assert str(refused.value) == f"{note.item_id} has no drifted anchor to re-anchor"
    assert len(_audit(engine)) == 1


def test_reanchor_takes_every_drifted_anchor_and_skips_a_missing_one(repo: Repo, engine: Engine) -> None:
    """Two drifted anchors are both moved (one audit row each); an anchor whose symbol is gone is not."""
    repo.write("src/session.py", SESSION + "\n\ndef third(b):\n    return b - 1\n")
    repo.commit("session")
    note = engine.note("decision", "refresh_token(), other() and third() in src/session.py do arithmetic", "math")
    assert len(engine.conn.execute("SELECT * FROM memory_anchors").fetchall()) == 3
    repo.write("src/session.py", SESSION.replace("+ 1", "+ 2").replace("* 2", "* 3"))
    done = engine.reanchor(note.id)
    assert sorted(str(a["anchor"]) for a in done.anchors) == ["src/session.py:other", "src/session.py:refresh_token"]
    assert sorted(r[5].split(" ")[0] for r in _audit(engine)) == [
        "src/session.py:other",
        "src/session.py:refresh_token",
    ]
    third = engine.conn.execute("SELECT start_line, anchored_at FROM memory_anchors WHERE symbol='third'").fetchone()
    assert tuple(third) == (12, None)


def test_deleting_a_note_of_another_kind_on_the_focus_subject_keeps_the_focus(live_engine: Engine) -> None:
    """The focus came from the first intent (a later intent does not take it); deleting an insight that shares its
    subject leaves it, though the newest intent would be the fallback."""
    engine = live_engine
    engine.note("intent", "plan the parser", "parser plan")
    engine.note("intent", "plan the lexer", "lexer plan")
    assert _focus(engine) == ["parser plan"]
    aside = engine.note("insight", "the parser plan needs a grammar", "parser plan")
    engine.delete_memory(aside.id, yes=True)
    assert _focus(engine) == ["parser plan"]
    first = engine.conn.execute("SELECT id FROM notes WHERE subject='parser plan'").fetchone()[0]
    engine.delete_memory(first, yes=True)
    assert _focus(engine) == ["lexer plan"]


def test_delete_memory_previews_unless_told_to_delete(engine: Engine) -> None:
    """Called without `yes` the function only previews (its documented default): nothing is removed."""
    note = engine.note("insight", "the broker listens on 4222")
    before = _rows(engine)
    assert corrections.delete_memory(engine.conn, note.id, engine.now()).deleted is False
    assert _rows(engine) == before
    assert corrections.delete_memory(engine.conn, note.id, engine.now(), yes=True).deleted is True
    assert _rows(engine) != before


def test_a_memory_deleted_while_the_rewrite_reads_the_checkout_is_not_found(
    repo: Repo, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delete that lands between the rewrite's read and its write: the rewrite says the memory is not found
    (naming its id) and writes nothing of its own."""
    note = engine.note("decision", "flush from src/spool.py at turn end", "spool flush")
    _renamed(repo, ("src/spool.py", "src/capture_spool.py"))
    real = references.rewrite_path

    def meanwhile(text: str, old: str, new: str) -> tuple[str, int]:
        corrections.delete_memory(engine.conn, note.id, engine.now(), yes=True)
        return real(text, old, new)

    monkeypatch.setattr(references, "rewrite_path", meanwhile)
    with pytest.raises(NotFound) as missing:
        engine.rewrite_moved(note.id)
    assert (str(missing.value), missing.value.details["id"]) == (
        f'no memory item found for id "{note.item_id}"',
        note.item_id,
    )
    assert [r[4] for r in _audit(engine)] == ["delete"]


def test_an_item_whose_note_row_is_gone_is_not_found_and_nothing_is_written(repo: Repo, engine: Engine) -> None:
    """A damaged store (the note row gone, its item left): edit and rewrite-moved both say the item is not found,
    naming it, and write nothing."""
    note = engine.note("decision", "flush from src/spool.py at turn end", "spool flush")
    _renamed(repo, ("src/spool.py", "src/capture_spool.py"))
    engine.conn.execute("DELETE FROM notes WHERE id=?", (note.id,))
    text = engine.inspect_memory(note.item_id).item["text"]
    for correct in (lambda: engine.edit_memory(note.item_id, "a new text"), lambda: engine.rewrite_moved(note.item_id)):
        with pytest.raises(NotFound) as missing:
            correct()
        assert str(missing.value) == f'no memory item found for id "{note.item_id}"'
    assert engine.inspect_memory(note.item_id).item["text"] == text
    assert _audit(engine) == []


def test_a_whole_id_finds_its_item_even_when_it_is_the_prefix_of_another(engine: Engine) -> None:
    """`command_runs:1` is found as itself, not refused as a prefix of `command_runs:12`; a prefix of both is
    refused naming what it matched."""
    _add_item(engine, "command_runs:1", "run one")
    _add_item(engine, "command_runs:12", "run twelve")
    assert corrections.find_item(engine.conn, "command_runs:1")["text"] == "run one"
    with pytest.raises(InvalidInput) as ambiguous:
        corrections.find_item(engine.conn, "command_runs:")
    assert str(ambiguous.value).startswith('id prefix "command_runs:" matches more than one memory item: ')


def test_editing_a_captured_item_keeps_the_references_its_subject_names(live_engine: Engine) -> None:
    """A failure's item has the failing target as its subject: an edit re-extracts references from it too."""
    live_engine.log_event("cmd", command="pytest tests/test_x.py", exit_code=1)
    failure = live_engine.conn.execute(
        "SELECT id, subject FROM memory_items WHERE kind='episode:command_failure'"
    ).fetchone()
    assert failure["subject"] == "tests/test_x.py"
    done = live_engine.edit_memory(failure["id"], "flaky: a rerun passes")
    assert done.references == 1
    paths = [
        r[0]
        for r in live_engine.conn.execute(
            "SELECT normalized_path FROM memory_references WHERE memory_item_id=?", (failure["id"],)
        )
    ]
    assert paths == ["tests/test_x.py"]


def test_reanchor_in_a_linked_worktree_records_that_worktree_s_head(
    repo: Repo, tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    """A linked worktree's HEAD names a branch whose ref lives in the shared git directory: it is still read."""
    repo.write("src/session.py", SESSION)
    repo.commit("session")
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "feature", str(linked))
    engine = make_engine(linked)
    note = engine.note("decision", "refresh_token() in src/session.py adds one", "tokens")
    (linked / "src" / "session.py").write_text(SESSION.replace("+ 1", "+ 2"))
    git(linked, "commit", "-qam", "add two")
    done = engine.reanchor(note.id)
    assert [a["anchor"] for a in done.anchors] == ["src/session.py:refresh_token"]
    head = engine.conn.execute("SELECT head_oid FROM memory_anchors WHERE symbol='refresh_token'").fetchone()[0]
    assert head == git(linked, "rev-parse", "HEAD").strip()
