"""A note's references keep their true verdict through every write that re-projects it: an edit, a contest opened
or resolved, an undo, a moved-path rewrite. The verdict is the one a fresh validation gives: a path renamed in a
commit after the note was written reads `moved`, never `stale: missing`, whatever re-recorded the note since."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortex_engine.base.errors import NotFound, Refused
from cortex_engine.engine import Engine

from .conftest import Repo

OLD, NEW, KEPT = "src/shop/payment.py", "src/shop/billing.py", "src/shop/cart.py"


def _moved_repo(repo: Repo, make_engine) -> tuple[Engine, str]:
    repo.write(OLD, "def charge():\n    return 1\n" * 3)
    repo.write(KEPT, "def add():\n    return 2\n" * 3)
    repo.commit("shop")
    engine = make_engine(repo.path)
    note = engine.note("decision", f"charge cards in {OLD}; the basket lives in {KEPT}", "payments").id
    repo.git("mv", OLD, NEW)
    repo.commit("rename payment to billing")
    return engine, note


def _verdicts(engine: Engine, note_id: str) -> dict[str, str]:
    validation = engine.validate_memory(persist=False)
    rows = [i for i in validation["items"] if str(i["id"]).endswith(note_id)]  # type: ignore[union-attr]
    if not rows:  # an item with no reference left is not listed
        return {}
    return {str(v["path"]): str(v["verdict"]) for v in rows[0]["references"]}  # type: ignore[index]


def _expected(engine: Engine, note_id: str) -> dict[str, str]:
    """What a fresh validation says of the note's text as it is now: the rename followed, nothing else gone."""
    content = engine.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (note_id,)).fetchone()[0]
    truth = {OLD: "moved", NEW: "exists", KEPT: "exists"}
    return {path: verdict for path, verdict in truth.items() if path in content}


def test_an_edited_note_keeps_its_moved_reference(repo: Repo, make_engine) -> None:
    engine, note = _moved_repo(repo, make_engine)
    assert _verdicts(engine, note)[OLD] == "moved"
    engine.edit_memory(note, f"charge cards (stripe) in {OLD}; the basket lives in {KEPT}")
    assert _verdicts(engine, note) == {OLD: "moved", KEPT: "exists"}
    assert f"[moved: {OLD} → {NEW}]" in engine.recall("charge cards", book=False).text
    assert "stale" not in engine.recall("charge cards", book=False).text


def test_a_contested_then_resolved_note_keeps_its_moved_reference(repo: Repo, make_engine) -> None:
    engine, note = _moved_repo(repo, make_engine)
    other = engine.note("decision", f"do not charge cards in {OLD}; the basket lives in {KEPT}", "payments").id
    assert _verdicts(engine, note)[OLD] == "moved" and _verdicts(engine, other)[OLD] == "missing"
    engine.resolve(other, status="superseded")
    assert _verdicts(engine, note)[OLD] == "moved"
    engine.undo()
    assert _verdicts(engine, note)[OLD] == "moved"
    assert "moved: src/shop/payment.py" in engine.brief("payments", book=False).text


def test_an_undone_edit_and_rewrite_bring_the_label_back(repo: Repo, make_engine) -> None:
    engine, note = _moved_repo(repo, make_engine)
    engine.edit_memory(note, "charge cards somewhere else entirely")
    assert _verdicts(engine, note) == {}
    engine.undo()
    assert _verdicts(engine, note) == {OLD: "moved", KEPT: "exists"}
    engine.rewrite_moved(note)
    assert _verdicts(engine, note) == {NEW: "exists", KEPT: "exists"}
    engine.undo()
    assert _verdicts(engine, note) == {OLD: "moved", KEPT: "exists"}
    assert engine.rewrite_moved(note).moves == [{"from": OLD, "to": NEW, "count": 1}]
    engine.undo()
    engine.delete_memory(note, yes=True)
    engine.undo()
    assert _verdicts(engine, note) == {OLD: "moved", KEPT: "exists"}


_OPS = st.lists(
    st.sampled_from(["edit", "edit-drop", "contest", "resolve", "undo", "rewrite-moved"]), min_size=1, max_size=6
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=_OPS)
def test_references_keep_a_fresh_validations_verdict_through_any_writes(
    program: list[str], tmp_path_factory: pytest.TempPathFactory, make_engine
) -> None:
    from .conftest import git

    path = tmp_path_factory.mktemp("repo")
    git(path, "init", "-q", "-b", "main")
    repo = Repo(path)
    repo.write("README.md", "# test\n")
    repo.commit("init")
    engine, note = _moved_repo(repo, make_engine)
    for step, op in enumerate(program):
        try:
            if op == "edit":
                content = engine.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (note,)).fetchone()[0]
                engine.edit_memory(note, f"{content} (checked {step})")
            elif op == "edit-drop":
                engine.edit_memory(note, f"charge cards in the shop ({step})")
            elif op == "contest":
                engine.note("decision", f"do not charge cards in {OLD} ({step})", "payments")
            elif op == "resolve":
                rival = engine.conn.execute(
                    "SELECT id FROM notes WHERE conflict=1 AND status='active' AND id != ? LIMIT 1", (note,)
                ).fetchone()
                if rival is not None:
                    engine.resolve(rival[0], status="superseded")
            elif op == "undo":
                engine.undo()
            else:
                engine.rewrite_moved(note)
        except (Refused, NotFound):
            pass
        if engine.conn.execute("SELECT 1 FROM notes WHERE id=?", (note,)).fetchone() is None:
            break
        assert _verdicts(engine, note) == _expected(engine, note), (program, step)
