"""How a note is projected into memory: one item, its references and anchors, and every id that finds it.

A note becomes one memory item (`sync_note_item`): its text, tier, importance and dates at first, and on a
later change a re-projection that keeps its tier and history. Its file references and the anchors its text
makes in those files are extracted with it (`extract_item_references`, `write_anchors`), and a note is found by
every id a person can type (`find_note`). Real git repositories, the engine's own connection.
"""

from __future__ import annotations

import sqlite3

import pytest

from cortex_engine.base.errors import InvalidInput, NotFound
from cortex_engine.engine import Engine
from cortex_engine.memory import notes
from cortex_engine.scope import anchors
from cortex_engine.store import queries

from .conftest import Repo

T0, T1 = "2026-08-01T10:00:00.000Z", "2026-08-01T11:00:00.000Z"
SOURCE = "import os\n\n\ndef refresh_token(x):\n    y = x + 1\n    return y\n\n\ndef other(a):\n    return a * 2\n"


def item(engine: Engine, item_id: str) -> dict[str, object]:
    """The stored memory item as a dict, its scope by key and its session by id ({} when there is none)."""
    row = engine.conn.execute(
        "SELECT m.kind, m.subject, m.text, m.state, m.importance, m.created_at, m.scope_type, sc.key AS scope, "
        "s.id AS session FROM memory_items m LEFT JOIN sessions s ON s.rowid = m.session "
        "LEFT JOIN scopes sc ON sc.id = m.scope_id WHERE m.id=?",
        (item_id,),
    ).fetchone()
    return dict(row) if row is not None else {}


def refs(engine: Engine, item_id: str) -> list[tuple[object, ...]]:
    """(type, raw, normalized path, head, status) of an item's references."""
    return sorted(
        (
            tuple(r)
            for r in engine.conn.execute(
                "SELECT reference_type, raw_reference, normalized_path, head_oid, status FROM memory_references "
                "WHERE memory_item_id=?",
                (item_id,),
            )
        ),
        key=str,
    )


def anchored(engine: Engine, item_id: str) -> list[tuple[object, ...]]:
    """(path, symbol, start, end, head, anchored_at) of an item's anchors."""
    return sorted(
        tuple(r)
        for r in engine.conn.execute(
            "SELECT path, symbol, start_line, end_line, head_oid, "
            "anchored_at FROM memory_anchors WHERE memory_item_id=?",
            (item_id,),
        )
    )


def note_values(engine: Engine, note_id: str, **fields: object) -> dict[str, object]:
    """A note as `sync_note_item` takes it: the stored row's values, some replaced."""
    row = engine.conn.execute("SELECT * FROM scoped_notes WHERE id=?", (note_id,)).fetchone()
    return {**{k: row[k] for k in row.keys()}, **fields}


def head(repo: Repo) -> str:
    return repo.git("rev-parse", "HEAD").strip()


@pytest.fixture
def coded(repo: Repo) -> Repo:
    """The repository with `src/auth/session.py` (two functions) and a `main.py` committed."""
    repo.write("src/auth/session.py", SOURCE)
    repo.write("main.py", "print(1)\n")
    repo.commit("session")
    return repo


# -- a note's first projection --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "state", "importance"),
    [
        ("decision", "warm", 0.9),
        ("intent", "hot", 0.85),
        ("focus", "hot", 1.0),
        ("blocker", "hot", 0.95),
        ("insight", "warm", 0.7),
    ],
)
def test_a_written_note_is_one_item_with_its_kind_s_tier_and_importance(
    engine: Engine, kind: str, state: str, importance: float
) -> None:
    written = engine.note(kind, "keep the cache warm", "cache")
    session = engine.conn.execute("SELECT session_id FROM scoped_notes WHERE id=?", (written.id,)).fetchone()[0]
    assert session is not None
    assert item(engine, f"notes:{written.id}") == {
        "kind": f"note:{kind}",
        "subject": "cache",
        "text": f"{kind}: keep the cache warm\nSubject: cache",
        "state": state,
        "importance": importance,
        "created_at": written.timestamp,
        "scope_type": "branch",
        "scope": engine.scope.key,
        "session": session,
    }


def test_a_note_projected_from_its_values_keeps_them(engine: Engine) -> None:
    """A note projected from values (an import, an undo): its own session, scope, date and status."""
    written = engine.note("decision", "use postgres", "database")
    other = note_values(
        engine,
        written.id,
        id="n-other",
        session_id=None,
        scope_key="project:/elsewhere",
        timestamp=T0,
        status="superseded",
        kind="constraint",
    )
    notes.sync_note_item(engine.conn, other, "project", fresh=True)
    got = item(engine, "notes:n-other")
    assert {k: got[k] for k in ("kind", "state", "importance", "created_at", "scope_type", "scope", "session")} == {
        "kind": "note:constraint",
        "state": "cold",
        "importance": 0.5,
        "created_at": T0,
        "scope_type": "project",
        "scope": "project:/elsewhere",
        "session": None,
    }


def test_a_note_that_is_not_active_starts_cold(engine: Engine) -> None:
    written = engine.note("intent", "ship it", "release")
    notes.sync_note_item(engine.conn, note_values(engine, written.id, id="n-done", status="resolved"), "branch")
    assert item(engine, "notes:n-done")["state"] == "cold"


def test_a_note_from_elsewhere_is_projected_with_its_origin(engine: Engine) -> None:
    written = engine.note("decision", "use postgres", "database")
    merged = note_values(engine, written.id, id="n-merged", origin="from feature")
    notes.sync_note_item(engine.conn, merged, "branch", fresh=True)
    assert item(engine, "notes:n-merged")["text"] == "decision: use postgres\nSubject: database\nOrigin: from feature"
    plain = {k: v for k, v in note_values(engine, written.id, id="n-plain").items() if k != "origin"}
    notes.sync_note_item(engine.conn, plain, "branch", fresh=True)  # values without an origin at all
    assert item(engine, "notes:n-plain")["text"] == "decision: use postgres\nSubject: database"


def test_a_note_that_becomes_contested_keeps_its_tier(engine: Engine) -> None:
    first = engine.note("decision", "use postgres", "database")
    engine.conn.execute("UPDATE memory_items SET state='hot' WHERE id=?", (f"notes:{first.id}",))
    second = engine.note("decision", "do not use postgres", "database")
    assert second.conflicts and second.conflicts[0].id == first.id
    got = item(engine, f"notes:{first.id}")
    assert (got["state"], got["text"]) == ("hot", "decision: use postgres\nSubject: database\nConflict: true")


# -- a later projection ---------------------------------------------------------------------------------------


def test_a_re_projection_keeps_the_tier_unless_resolved_or_demoted(engine: Engine) -> None:
    written = engine.note("intent", "ship it", "release")
    item_id = f"notes:{written.id}"
    values = note_values(engine, written.id)
    engine.conn.execute("UPDATE memory_items SET state='pinned' WHERE id=?", (item_id,))
    notes.sync_note_item(engine.conn, values, "branch")
    notes.sync_note_item(engine.conn, values, "branch", demote_tier=True)
    assert item(engine, item_id)["state"] == "pinned"
    engine.conn.execute("UPDATE memory_items SET state='hot' WHERE id=?", (item_id,))
    notes.sync_note_item(engine.conn, values, "branch")
    assert item(engine, item_id)["state"] == "hot"
    notes.sync_note_item(engine.conn, values, "branch", demote_tier=True)
    got = item(engine, item_id)
    assert (got["state"], got["text"]) == ("warm", "intent: ship it\nSubject: release")
    notes.sync_note_item(engine.conn, {**values, "status": "resolved"}, "branch")
    assert item(engine, item_id)["state"] == "cold"


def test_a_changed_text_or_subject_is_projected_with_the_state_it_earns(engine: Engine) -> None:
    written = engine.note("intent", "ship it", "release")
    item_id = f"notes:{written.id}"
    values = note_values(engine, written.id)
    notes.sync_note_item(engine.conn, {**values, "content": "ship it today"}, "branch", demote_tier=True)
    assert {k: item(engine, item_id)[k] for k in ("text", "subject", "state")} == {
        "text": "intent: ship it today\nSubject: release",
        "subject": "release",
        "state": "warm",
    }
    notes.sync_note_item(engine.conn, {**values, "content": "ship it today", "subject": "launch"}, "branch")
    assert {k: item(engine, item_id)[k] for k in ("text", "subject", "state")} == {
        "text": "intent: ship it today\nSubject: launch",
        "subject": "launch",
        "state": "warm",
    }
    notes.sync_note_item(
        engine.conn, {**values, "content": "ship it today", "subject": "launch", "status": "resolved"}, "branch"
    )
    got = item(engine, item_id)
    assert got["state"] == "cold" and got["subject"] == "launch"
    assert got["text"] != "intent: ship it today\nSubject: launch"
    assert got["created_at"] == written.timestamp and got["kind"] == "note:intent"


def test_an_unchanged_re_projection_keeps_what_the_freshness_check_recorded(coded: Repo, engine: Engine) -> None:
    written = engine.note("decision", "refresh_token() in src/auth/session.py adds one", "tokens")
    item_id = f"notes:{written.id}"
    queries.set_reference_status(engine.conn, item_id, "src/auth/session.py", "moved", "src/auth/s2.py", T1)
    before = refs(engine, item_id), anchored(engine, item_id)
    assert before[0][0][-1] == "moved" and len(before[1]) == 1
    notes.sync_note_item(engine.conn, note_values(engine, written.id), "branch", demote_tier=True)
    assert (refs(engine, item_id), anchored(engine, item_id)) == before
    assert item(engine, item_id)["state"] == "cold"


def test_a_changed_text_replaces_the_references_and_anchors(coded: Repo, engine: Engine) -> None:
    written = engine.note("decision", "refresh_token() in src/auth/session.py adds one", "tokens")
    item_id = f"notes:{written.id}"
    queries.set_reference_status(engine.conn, item_id, "src/auth/session.py", "moved", "src/auth/s2.py", T1)
    changed = note_values(engine, written.id, content="other() in src/auth/session.py; README.md")
    notes.sync_note_item(engine.conn, changed, "branch")
    at = head(coded)
    assert refs(engine, item_id) == [
        ("file", "README.md", "README.md", at, "unknown"),
        ("file", "src/auth/session.py", "src/auth/session.py", at, "unknown"),
    ]
    assert anchored(engine, item_id) == [("src/auth/session.py", "other", 9, 10, at, None)]


def test_a_changed_subject_alone_re_reads_the_references(coded: Repo, engine: Engine) -> None:
    written = engine.note("decision", "adds one before returning", "tokens")
    item_id = f"notes:{written.id}"
    assert refs(engine, item_id) == [] and anchored(engine, item_id) == []
    notes.sync_note_item(
        engine.conn, note_values(engine, written.id, subject="refresh_token() in src/auth/session.py"), "branch"
    )
    assert refs(engine, item_id) == [("file", "src/auth/session.py", "src/auth/session.py", head(coded), "unknown")]
    assert [a[:4] for a in anchored(engine, item_id)] == [("src/auth/session.py", "refresh_token", 4, 6)]


# -- references and anchors ---------------------------------------------------------------------------------


def test_a_note_s_references_and_anchors_are_recorded_at_head(coded: Repo, engine: Engine) -> None:
    written = engine.note("decision", "refresh_token() in ./src/auth/session.py adds one; see README.md", "tokens")
    item_id = f"notes:{written.id}"
    at = head(coded)
    assert refs(engine, item_id) == [
        ("file", "./src/auth/session.py", "src/auth/session.py", at, "unknown"),
        ("file", "README.md", "README.md", at, "unknown"),
    ]
    assert anchored(engine, item_id) == [("src/auth/session.py", "refresh_token", 4, 6, at, None)]


def test_the_subject_is_read_for_symbols_with_the_text(coded: Repo, engine: Engine) -> None:
    written = engine.note("decision", "src/auth/session.py adds one before returning", "refresh_token()")
    assert [a[:2] for a in anchored(engine, f"notes:{written.id}")] == [("src/auth/session.py", "refresh_token")]


def test_the_subject_s_references_come_before_the_text_s(engine: Engine) -> None:
    """`inspect-memory` lists a note's references in the order they were read: its subject first."""
    written = engine.note("decision", "see src/a.py then", "src/b.py")
    shown = engine.inspect_memory(f"notes:{written.id}").references
    assert [r["path"] for r in shown] == ["src/b.py", "src/a.py"]


def test_extracting_again_replaces_references_and_anchors_and_counts_them(coded: Repo, engine: Engine) -> None:
    written = engine.note("decision", "refresh_token() in src/auth/session.py adds one", "tokens")
    item_id = f"notes:{written.id}"
    at = head(coded)
    count = notes.extract_item_references(
        engine.conn, item_id, None, "other() in src/auth/session.py; README.md", anchor=True
    )
    assert count == 2
    assert refs(engine, item_id) == [
        ("file", "README.md", "README.md", at, "unknown"),
        ("file", "src/auth/session.py", "src/auth/session.py", at, "unknown"),
    ]
    assert anchored(engine, item_id) == [("src/auth/session.py", "other", 9, 10, at, None)]
    assert notes.extract_item_references(engine.conn, item_id, "nothing", "no paths at all") == 0
    assert refs(engine, item_id) == [] and anchored(engine, item_id) == []


def test_captured_text_is_not_anchored(coded: Repo, engine: Engine) -> None:
    written = engine.note("decision", "adds one", "tokens")
    item_id = f"notes:{written.id}"
    assert notes.extract_item_references(engine.conn, item_id, None, "refresh_token() in src/auth/session.py") == 1
    assert refs(engine, item_id) == [("file", "src/auth/session.py", "src/auth/session.py", head(coded), "unknown")]
    assert anchored(engine, item_id) == []


def test_fresh_extraction_adds_to_what_is_there(coded: Repo, engine: Engine) -> None:
    written = engine.note("decision", "see README.md", "docs")
    item_id = f"notes:{written.id}"
    notes.extract_item_references(
        engine.conn, item_id, None, "refresh_token() in src/auth/session.py", fresh=True, anchor=True
    )
    assert [r[2] for r in refs(engine, item_id)] == ["README.md", "src/auth/session.py"]
    assert [a[:2] for a in anchored(engine, item_id)] == [("src/auth/session.py", "refresh_token")]


def test_references_are_read_against_the_scope_given_or_the_item_s_own(coded: Repo, engine: Engine) -> None:
    """A bare name is a reference only where the repository tracks it at its root, which needs the scope's
    repository: the item's own scope when none is given, none for a scope of no checkout."""
    written = engine.note("decision", "adds one", "tokens")
    item_id = f"notes:{written.id}"
    assert notes.extract_item_references(engine.conn, item_id, None, "run main.py first") == 1
    assert [r[2:4] for r in refs(engine, item_id)] == [("main.py", head(coded))]
    assert (
        notes.extract_item_references(engine.conn, item_id, None, "run main.py first", scope_key="project:/nowhere")
        == 0
    )
    assert notes.extract_item_references(engine.conn, "notes:nothing-here", None, "run main.py first") == 0
    no_checkout = notes.extract_item_references(
        engine.conn, item_id, None, "refresh_token() in src/auth/session.py", anchor=True, scope_key="project:/nowhere"
    )
    assert (no_checkout, anchored(engine, item_id)) == (1, [])  # a path, but no checkout to anchor it in


def test_anchors_are_stored_as_found_with_their_head_and_time(engine: Engine) -> None:
    written = engine.note("decision", "adds one", "tokens")
    item_id = f"notes:{written.id}"
    found = [anchors.Anchor("src/a.py", "f", 3, 9, "d1"), anchors.Anchor("src/b.py", None, 1, 2, "d2")]
    notes.write_anchors(engine.conn, item_id, found, "h" * 40, T1)
    stored = sorted(
        tuple(r)
        for r in engine.conn.execute(
            "SELECT path, symbol, start_line, end_line, content_hash, head_oid, anchored_at FROM memory_anchors "
            "WHERE memory_item_id=?",
            (item_id,),
        )
    )
    assert stored == [("src/a.py", "f", 3, 9, "d1", "h" * 40, T1), ("src/b.py", None, 1, 2, "d2", "h" * 40, T1)]


# -- finding a note -----------------------------------------------------------------------------------------------


def test_a_note_is_found_by_its_id_its_item_id_or_a_prefix_of_either(engine: Engine) -> None:
    written = engine.note("decision", "use postgres", "database")
    typed_ids = (
        written.id,
        f" notes:{written.id}\n",
        written.id[:8],
        f"notes:{written.id[:8]}",
        f"  {written.id[:12]} ",
    )
    for typed in typed_ids:
        found = notes.find_note(engine.conn, typed)
        assert (found["id"], found["content"], found["scope_key"]) == (written.id, "use postgres", engine.scope.key)


def test_a_note_not_found_names_what_was_typed(engine: Engine) -> None:
    engine.note("decision", "use postgres", "database")
    for typed, shown in ((" notes:ffffffff-ffff ", "notes:ffffffff-ffff"), ("ffffffff", "ffffffff")):
        with pytest.raises(NotFound) as missing:
            notes.find_note(engine.conn, typed)
        assert (missing.value.code, missing.value.message, missing.value.details) == (
            "not_found",
            f'no note found for id "{shown}"',
            {"id": shown},
        )


def test_a_short_or_shared_prefix_is_refused(engine: Engine) -> None:
    first = engine.note("decision", "use postgres", "database")
    with pytest.raises(InvalidInput) as short:
        notes.find_note(engine.conn, f"notes:{first.id[:7]}")
    assert short.value.code == "short_id" and f'"{first.id[:7]}"' in short.value.message
    one, two = "abcdef12-0000-4000-8000-000000000001", "abcdef12-0000-4000-8000-000000000002"
    engine.conn.execute("UPDATE notes SET id=? WHERE id=?", (one, first.id))
    second = engine.note("decision", "use redis", "cache")
    engine.conn.execute("UPDATE notes SET id=? WHERE id=?", (two, second.id))
    with pytest.raises(InvalidInput) as shared:
        notes.find_note(engine.conn, "notes:abcdef12")
    assert (shared.value.code, shared.value.message) == (
        "ambiguous_id",
        f'id prefix "abcdef12" matches more than one note: {one}, {two}; give more characters',
    )


def test_find_note_reads_the_scoped_row(engine: Engine) -> None:
    written = engine.note("decision", "use postgres", "database")
    row = notes.find_note(engine.conn, written.id)
    assert isinstance(row, sqlite3.Row) and row["scope_key"] == engine.scope.key and row["subject"] == "database"
