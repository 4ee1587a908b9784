"""`cortex export` / `cortex import`: a byte-identical round trip through a fresh store, idempotent
re-import, the note rules applied in timestamp order, Claude Code's memory files as insights, and refusals
that import nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cortex_engine.base import settings
from cortex_engine.engine import Engine

from .conftest import Repo, Run, run_in_process


def cortex(cwd: Path, *args: str, home: Path | None = None, now: str = "2026-08-02T18:00:00Z") -> Run:
    """The command line in `cwd`, run in this process (these tests are about what an export or import writes, not
    its process); `home` swaps CORTEX_HOME (a fresh store for the same repository)."""
    # These tests are about the note rules an import applies; the inbox in front of them is tests/test_inbox.py's.
    env = {"CORTEX_NOW": now}
    if home is not None:
        env["CORTEX_HOME"] = str(home)
        settings.write_review_arrivals("none", home)
    return run_in_process(cwd, list(args), env)


@pytest.fixture(autouse=True)
def imports_apply_at_once(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the note rules an import applies; the inbox in front of them is test_inbox.py's."""
    settings.write_review_arrivals("none")


LATER = "2026-08-02T19:00:00Z"
"""After the seeded notes: an import clamps every date to its own now."""


@pytest.fixture
def seeded(engine: Engine, clock) -> Engine:  # noqa: ANN001 - conftest fixture
    """A contest, a supersession (with a rejected alternative), a resolved note and a plain insight."""
    engine.note("decision", "use kafka for the queue engine", "queue engine")
    clock.advance(minutes=1)
    engine.note("decision", "do not use kafka for the queue engine", "queue engine")
    clock.advance(minutes=1)
    engine.note("decision", "use OIDC", "auth", ["session cookies (no SSO path)"])
    clock.advance(minutes=1)
    engine.note("decision", "use OIDC with PKCE", "auth")
    clock.advance(minutes=1)
    blocker = engine.note("blocker", "CI is red on the arm runner", "ci")
    engine.resolve(blocker.id)
    clock.advance(minutes=1)
    engine.note("insight", "tests need docker running\nand a second line")
    engine.close()
    return engine


def test_round_trip_through_a_fresh_store_is_byte_identical(seeded: Engine, repo: Repo, tmp_path: Path) -> None:
    """export → import into a fresh store → export gives the same bytes; the second import changes nothing."""
    first = cortex(repo.path, "export")
    assert first.code == 0, first.err
    records = [json.loads(line) for line in first.out.splitlines()[1:]]
    assert {r["status"] for r in records} == {"active", "superseded", "resolved"}
    contested = [r for r in records if r["contested"]]
    assert len(contested) == 2 and contested[0]["contested_with"] == [contested[1]["id"]]
    assert any(r["alternatives"] == ["session cookies (no SSO path)"] for r in records)
    (tmp_path / "out.jsonl").write_text(first.out, encoding="utf-8")

    fresh = tmp_path / "fresh-home"
    done = cortex(repo.path, "import", str(tmp_path / "out.jsonl"), "--json", home=fresh, now=LATER)
    assert done.code == 0, done.err
    assert done.data()["added"] == len(records)
    again = cortex(repo.path, "import", str(tmp_path / "out.jsonl"), "--json", home=fresh, now=LATER)
    assert again.data()["changed"] is False and again.data()["already_present"] == len(records)
    assert "Nothing changed" in again.data()["text"]
    assert cortex(repo.path, "export", home=fresh).out == first.out
    # What surfaces show is rebuilt too: the contest is open in the fresh store.
    state = cortex(repo.path, "state", home=fresh)
    assert "[contested]" in state.out


def test_import_applies_supersession_and_contradiction_in_timestamp_order(engine: Engine, tmp_path: Path) -> None:
    """An imported newer decision supersedes the stored one; an older one arrives superseded; a contradicting
    one opens a contest."""
    stored = engine.note("decision", "use postgres for storage", "storage")
    scope = engine.scope.key

    def line(note_id: str, stamp: str, content: str) -> str:
        return json.dumps(
            {
                "id": note_id,
                "scope": scope,
                "timestamp": stamp,
                "kind": "decision",
                "subject": "storage",
                "content": content,
                "alternatives": [],
                "status": "active",
                "contested": False,
            }
        )

    older = "00000000-0000-4000-8000-000000000001"
    newer = "00000000-0000-4000-8000-000000000002"
    path = tmp_path / "in.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"cortex_export": 1}),
                line(older, "2026-08-01T00:00:00Z", "use sqlite"),
                line(newer, "2026-08-03T00:00:00Z", "use postgres 16 for storage"),
            ]
        )
        + "\n"
    )
    result = engine.import_file(str(path))
    statuses = {r["id"]: r["status"] for r in engine.conn.execute("SELECT id, status FROM notes")}
    assert statuses == {older: "superseded", stored.id: "superseded", newer: "active"}
    assert set(result.superseded) == {older, stored.id}

    contra = tmp_path / "contra.jsonl"
    contra.write_text(
        json.dumps({"cortex_export": 1})
        + "\n"
        + json.dumps(
            {
                "id": "00000000-0000-4000-8000-000000000003",
                "scope": scope,
                "timestamp": "2026-08-04T00:00:00Z",
                "kind": "decision",
                "subject": "storage",
                "content": "do not use postgres 16 for storage",
            }
        )
        + "\n"
    )
    result = engine.import_file(str(contra))
    flags = {
        r["id"]: (r["status"], r["conflict"]) for r in engine.conn.execute("SELECT id, status, conflict FROM notes")
    }
    assert flags[newer] == ("active", 1) and flags["00000000-0000-4000-8000-000000000003"] == ("active", 1)
    assert sorted(result.contested) == sorted([newer, "00000000-0000-4000-8000-000000000003"])


def test_a_note_imported_already_replaced_is_no_side_of_a_contest(engine: Engine, clock, tmp_path: Path) -> None:
    """An imported intent that contradicts the stored decision but arrives superseded (a newer intent is stored)
    flags nothing: a contest of one active side is no contest (the one write rule every path shares)."""
    decision = engine.note("decision", "flush the spool at turn end", "spool")
    clock.advance(minutes=2)
    engine.note("intent", "finish the spool rework", "spool")
    between = (
        engine.conn.execute("SELECT timestamp FROM notes WHERE id=?", (decision.id,))
        .fetchone()[0]
        .replace(":00Z", ":30Z")
    )
    path = tmp_path / "in.jsonl"
    path.write_text(
        json.dumps({"cortex_export": 1})
        + "\n"
        + json.dumps(
            {
                "id": "00000000-0000-4000-8000-000000000009",
                "scope": engine.scope.key,
                "timestamp": between,
                "kind": "intent",
                "subject": "spool",
                "content": "do not flush the spool at turn end",
            }
        )
        + "\n"
    )
    result = engine.import_file(str(path))
    flags = {
        r["id"]: (r["status"], r["conflict"]) for r in engine.conn.execute("SELECT id, status, conflict FROM notes")
    }
    assert flags["00000000-0000-4000-8000-000000000009"] == ("superseded", 0)
    assert flags[decision.id] == ("active", 0) and result.contested == []


def test_a_bad_line_imports_nothing_and_names_the_line(repo: Repo, tmp_path: Path) -> None:
    """One transaction: a later line that is not a note rolls back the good lines before it."""
    good = {
        "id": "00000000-0000-4000-8000-000000000001",
        "scope": "project:/x",
        "timestamp": "2026-08-01T00:00:00Z",
        "kind": "insight",
        "content": "fine",
    }
    bad = {**good, "id": "00000000-0000-4000-8000-000000000002", "kind": "decision"}  # no subject
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in ({"cortex_export": 1}, good, bad)) + "\n")
    done = cortex(repo.path, "import", str(path))
    assert done.code == 1
    assert done.err.startswith("cortex: ") and "line 3" in done.err and done.err.count("\n") == 1
    assert cortex(repo.path, "export").out.splitlines()[1:] == []


@pytest.mark.parametrize(
    "body, why",
    [
        ('{"some": "json"}\n', "not a Cortex export"),
        ("# Cortex export\n\n1 note(s).\n", "Markdown export"),
        ('{"cortex_export": 99}\n', "format 99"),
        ("SQLite format 3\x00\x10\x00\x01\x01\x00@  \x00\x00\x00\x02", "binary file"),
        ("just some words a shell script left\n", "neither a Cortex export"),
    ],
)
def test_files_import_cannot_read_are_refused_with_a_reason(repo: Repo, tmp_path: Path, body: str, why: str) -> None:
    """Refusing nothing silently: a file that is neither an export nor a memory file says why, exit 1."""
    path = tmp_path / "x.json"
    path.write_text(body)
    done = cortex(repo.path, "import", str(path))
    assert done.code == 1 and why in done.err


def test_claude_memory_files_become_insights_with_their_file_as_source(engine: Engine, repo: Repo) -> None:
    """Each bullet or paragraph of a CLAUDE.md is one insight under its heading; a block that cannot be a note
    is reported, not dropped silently; importing it again changes nothing."""
    claude = repo.write(
        "CLAUDE.md",
        "---\nname: x\n---\n# Build\n\nRun `make test`; it needs docker.\n\n"
        "## Conventions\n- use ruff for linting\n- never push to main\n  open a PR instead\n\n"
        "```sh\nmake build\n```\n\n- " + "x" * 20_001 + "\n",
    )
    result = engine.import_file(str(claude))
    rows = engine.conn.execute(
        "SELECT kind, subject, content, source, scope_key FROM scoped_notes ORDER BY rowid"
    ).fetchall()
    assert [(r["subject"], r["content"]) for r in rows] == [
        ("build", "Run `make test`; it needs docker."),
        ("conventions", "use ruff for linting"),
        ("conventions", "never push to main\nopen a PR instead"),
        ("conventions", "```sh\nmake build\n```"),
    ]
    assert {r["kind"] for r in rows} == {"insight"}
    assert {r["source"] for r in rows} == {os.path.realpath(claude)}
    assert {r["scope_key"] for r in rows} == {engine.project_key}
    assert len(result.skipped) == 1 and "over 20000 characters" in result.skipped[0]
    assert "Not imported: CLAUDE.md line" in result.render()
    assert "use ruff" in engine.recall("ruff linting", book=False).text
    ruff = engine.conn.execute("SELECT id FROM scoped_notes WHERE content='use ruff for linting'").fetchone()[0]
    assert engine.inspect_memory(f"notes:{ruff}").conflict["source"] == os.path.realpath(claude)
    again = engine.import_file(str(claude))
    assert not again.changed and again.present == 4


def test_markdown_export_names_every_field(seeded: Engine, repo: Repo) -> None:
    """The Markdown export shows kind, subject, status, the contest links and the alternatives."""
    text = cortex(repo.path, "export", "--format", "markdown").out
    assert text.startswith("# Cortex export\n")
    assert "### decision · queue engine · active · contested" in text
    assert "Contested with: `" in text and "- session cookies (no SSO path)" in text and "· resolved" in text


def test_export_scope_filter(seeded: Engine, repo: Repo, tmp_path: Path) -> None:
    """--scope here exports this worktree's notes; an unknown scope is a one-line error."""
    here = cortex(repo.path, "export", "--scope", "here")
    assert len(here.out.splitlines()) == 7
    unknown = cortex(repo.path, "export", "--scope", "branch:nowhere")
    assert unknown.code == 1 and "branch:nowhere" in unknown.err


def test_another_machines_export_lands_in_this_worktree_without_flags(repo: Repo, tmp_path: Path) -> None:
    """An export made in another repository (another machine's absolute, lowercased scope keys) is found
    after a plain import: its branch scopes map onto this worktree's scope, its project layer onto this project's;
    the report says so. --scope here still does the same by hand."""
    path = tmp_path / "other.jsonl"
    path.write_text(
        json.dumps({"cortex_export": 1})
        + "\n"
        + json.dumps(
            {
                "id": "00000000-0000-4000-8000-0000000000aa",
                "scope": "branch:/elsewhere/.git:/elsewhere:main",
                "timestamp": "2026-08-01T00:00:00Z",
                "kind": "decision",
                "subject": "queue",
                "content": "use nats",
            }
        )
        + "\n"
        + json.dumps(
            {
                "id": "00000000-0000-4000-8000-0000000000ab",
                "scope": "project:/elsewhere",
                "timestamp": "2026-08-01T00:00:00Z",
                "kind": "insight",
                "content": "the broker runs on port 4222",
            }
        )
        + "\n"
    )
    fresh = tmp_path / "h1"
    done = cortex(repo.path, "import", str(path), "--json", home=fresh)
    assert done.code == 0 and done.data()["unread_scopes"] == [] and done.data()["remapped"] == 2, done.out
    assert "another repository's scopes" in done.data()["text"]
    assert "use nats" in cortex(repo.path, "recall", "queue", home=fresh).out
    assert "port 4222" in cortex(repo.path, "recall", "broker port", home=fresh).out
    moved = cortex(repo.path, "import", str(path), "--scope", "here", "--json", home=tmp_path / "h2")
    assert moved.data()["unread_scopes"] == []
    assert "use nats" in cortex(repo.path, "recall", "queue", home=tmp_path / "h2").out


def test_auto_memory_index_imports_through_the_cli(repo: Repo, tmp_path: Path) -> None:
    """Claude Code's auto-memory MEMORY.md (an index of one-line entries): each entry is one insight."""
    memory = tmp_path / "memory" / "MEMORY.md"
    memory.parent.mkdir()
    memory.write_text(
        "- [Testing](testing.md) — run pytest with -x; the suite needs docker\n"
        "- [Style](style.md) — black, 100 columns\n"
    )
    done = cortex(repo.path, "import", str(memory), "--json")
    assert done.code == 0, done.err
    assert done.data()["added"] == 2 and done.data()["format"] == "MEMORY.md"
    assert "Imported 2 insight(s)" in done.data()["text"]
    assert "the suite needs docker" in cortex(repo.path, "recall", "docker").out


def test_a_re_import_that_changes_nothing_says_nothing_was_moved(repo: Repo, tmp_path: Path) -> None:
    """Notes exported from another repository are put in this worktree's scope once; importing the file again
    changes nothing and says only that (no "were put in this worktree's scope")."""
    path = tmp_path / "other.jsonl"
    notes = [
        {
            "id": f"00000000-0000-4000-8000-0000000000{i}0",
            "scope": "branch:/elsewhere/.git:/elsewhere:main",
            "timestamp": "2026-08-01T00:00:00Z",
            "kind": "insight",
            "content": f"insight number {i} from elsewhere",
        }
        for i in range(3)
    ]
    path.write_text("\n".join(json.dumps(line) for line in [{"cortex_export": 1}, *notes]) + "\n")
    fresh = tmp_path / "h1"
    first = cortex(repo.path, "import", str(path), "--json", home=fresh)
    assert first.code == 0 and first.data()["remapped"] == 3, first.out
    again = cortex(repo.path, "import", str(path), "--json", home=fresh)
    assert again.data()["remapped"] == 0 and again.data()["unread_scopes"] == []
    assert again.data()["text"] == f"Nothing changed: all 3 note(s) in {path} are already in the store."
