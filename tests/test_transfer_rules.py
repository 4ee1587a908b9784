"""Export and import rule by rule, read through `memory/transfer.py`'s public functions and the Engine, in process.

`tests/test_transfer.py` drives export and import through the command line in a subprocess, which the
mutation run cannot see into; these tests hold the same rules where it can: every refusal of a file (message and
code), every field check of an export line, how a Markdown memory file is cut into notes, where foreign scopes
land, the order and the rules of an import, the inbox in front of it, and the exact text of both exports.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex_engine.base import settings
from cortex_engine.base.errors import InvalidInput
from cortex_engine.engine import Engine
from cortex_engine.memory import transfer
from cortex_engine.memory.transfer import ExportedNote, ImportResult, Incoming

from .conftest import Clock

Open = Callable[..., Engine]
NOW = "2026-08-02T18:00:00.000Z"
HEADER = json.dumps({"cortex_export": 1})


def uid(n: int) -> str:
    """A fixed note id."""
    return f"00000000-0000-4000-8000-{n:012d}"


def line(n: int, **fields: object) -> str:
    """One export line: an insight in project:/x unless `fields` say otherwise."""
    record: dict[str, object] = {
        "id": uid(n),
        "scope": "project:/x",
        "timestamp": "2026-08-01T00:00:00Z",
        "kind": "insight",
        "content": f"note {n}",
    }
    record.update(fields)
    return json.dumps({k: v for k, v in record.items() if v is not ...})


def export_file(tmp_path: Path, *lines: str, name: str = "in.jsonl") -> Path:
    """An export file: the header, then these lines."""
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    return path


def refusal(path: Path, *, now: str = NOW) -> InvalidInput:
    """The refusal `read_file` raises for this file."""
    with pytest.raises(InvalidInput) as caught:
        transfer.read_file(str(path), default_scope="project:/here", now=now)
    return caught.value


@pytest.fixture(autouse=True)
def imports_apply_at_once(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The note rules of an import; the inbox in front of them has its own tests below."""
    settings.write_review_arrivals("none")


# -- reading a file ------------------------------------------------------------------------------------


def test_an_unreadable_file_is_refused_with_the_system_s_reason(tmp_path: Path) -> None:
    missing = refusal(tmp_path / "gone.jsonl")
    assert (missing.message, missing.code) == (
        f"cannot read {tmp_path / 'gone.jsonl'}: No such file or directory",
        "bad_file",
    )
    folder = refusal(tmp_path)
    assert folder.message == f"cannot read {tmp_path}: Is a directory" and folder.code == "bad_file"


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin.md"
    path.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    refused = refusal(path)
    assert (refused.message, refused.code) == (f"{path} is not UTF-8 text; nothing was imported", "bad_file")


@pytest.mark.parametrize(
    "body, binary",
    [
        ("a\x00b\n", True),
        ("words\n" + "\x01" * 9, True),
        ("words\n" + "\x01" * 8, False),
        ("words\n" + "\r" * 9, True),  # a lone carriage return is a control character; CRLF line ends are not
        ("words\r\n" * 9, False),
        ("words\t\f\v\n" * 9, False),
        ("x" * 8183 + "\x01" * 9, True),  # the ninth at index 8191: inside the 8 KiB that are looked at
        ("x" * 8184 + "\x01" * 9, False),  # the ninth at index 8192: past them
    ],
    ids=["nul", "nine", "eight", "lone-cr", "crlf", "tab-ff-vt", "ninth-inside", "ninth-past"],
)
def test_a_binary_file_is_told_by_a_nul_or_more_than_eight_control_characters_in_its_first_8_kib(
    tmp_path: Path, body: str, binary: bool
) -> None:
    path = tmp_path / "memory.md"
    path.write_text(body, encoding="utf-8", newline="")
    if binary:
        refused = refusal(path)
        assert (
            refused.message
            == (f"{path} is a binary file, not a Cortex export or a Markdown memory file; nothing was imported")
            and refused.code == "bad_file"
        )
    else:
        fmt, incoming, _ = transfer.read_file(str(path), default_scope="project:/here", now=NOW)
        assert fmt == "memory.md" and len(incoming) == 1


@pytest.mark.parametrize("first", ["# Cortex export", "\n\n  # Cortex export  "])
def test_a_markdown_export_is_refused_even_after_blank_lines(tmp_path: Path, first: str) -> None:
    path = tmp_path / "export.md"
    path.write_text(first + "\n\n1 note(s).\n", encoding="utf-8")
    refused = refusal(path)
    assert (
        refused.message
        == (
            f"{path} is a Markdown export, which is for reading; import the JSON Lines export "
            "(`cortex export --format jsonl`); nothing was imported"
        )
        and refused.code == "bad_file"
    )


def test_an_export_of_another_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"cortex_export": 2}\n', encoding="utf-8")
    refused = refusal(path)
    assert (
        refused.message == (f"{path} is a Cortex export of format 2; this build reads format 1; nothing was imported")
        and refused.code == "bad_file"
    )


@pytest.mark.parametrize("first", ['{"notes": 3}', '{"cortex_export": 1', "  {not json"])
def test_json_that_is_not_an_export_is_refused(tmp_path: Path, first: str) -> None:
    path = tmp_path / "in.md"
    path.write_text(first + "\n", encoding="utf-8")
    refused = refusal(path)
    assert (
        refused.message
        == (f"{path} is JSON but not a Cortex export (its first line has no 'cortex_export' key); nothing was imported")
        and refused.code == "bad_file"
    )


@pytest.mark.parametrize(
    "name, accepted",
    [("notes.txt", False), ("CLAUDE", False), ("NOTES.MD", True), ("notes.markdown", True), ("notes.md", True)],
)
def test_only_markdown_files_are_read_as_memory_files(tmp_path: Path, name: str, accepted: bool) -> None:
    path = tmp_path / name
    path.write_text("- keep the build green\n", encoding="utf-8")
    if not accepted:
        refused = refusal(path)
        assert refused.message == (
            f"{path} is neither a Cortex export (`cortex export`) nor a Markdown memory file "
            "(CLAUDE.md, MEMORY.md or another .md file); nothing was imported"
        )
        assert refused.code == "bad_file"
        return
    fmt, incoming, skipped = transfer.read_file(str(path), default_scope="project:/here", now=NOW)
    assert (fmt, [n.content for n in incoming], skipped) == (name, ["keep the build green"], [])


def test_a_memory_file_s_notes_are_insights_of_the_default_scope_dated_now_from_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real" / "CLAUDE.md"
    real.parent.mkdir()
    real.write_text("# Build\n\nrun make\n", encoding="utf-8")
    link = tmp_path / "LINK.md"
    link.symlink_to(real)
    fmt, incoming, skipped = transfer.read_file(str(link), default_scope="project:/here", now=NOW)
    assert fmt == "LINK.md" and skipped == []
    (note,) = incoming
    assert (
        note.scope,
        note.timestamp,
        note.kind,
        note.subject,
        note.content,
        note.alternatives,
        note.status,
        note.contested,
        note.source,
    ) == ("project:/here", NOW, "insight", "Build", "run make", (), "active", False, os.path.realpath(link))
    assert note.where == "CLAUDE.md line 3"


def test_an_export_with_a_byte_order_mark_and_crlf_line_ends_is_read(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(("\ufeff" + HEADER + "\r\n" + line(1, content="first\nsecond") + "\r\n").encode("utf-8"))
    fmt, incoming, skipped = transfer.read_file(str(path), default_scope="project:/here", now=NOW)
    assert (fmt, skipped) == ("jsonl", []) and [n.content for n in incoming] == ["first\nsecond"]


def test_an_export_s_dates_are_clamped_to_now(tmp_path: Path) -> None:
    path = export_file(tmp_path, line(1, timestamp="2030-01-01T00:00:00Z"), line(2, timestamp="2026-08-01T00:00:00Z"))
    _, incoming, _ = transfer.read_file(str(path), default_scope="project:/here", now=NOW)
    assert [n.timestamp for n in incoming] == [NOW, "2026-08-01T00:00:00.000Z"]


def test_an_export_line_is_read_field_by_field(tmp_path: Path) -> None:
    path = export_file(
        tmp_path,
        "",
        line(
            1,
            id=uid(1).upper(),
            scope="branch:/r/.git:/r:main",
            kind="decision",
            subject="Queue",
            content="use nats",
            alternatives=["kafka", "rabbitmq"],
            status="superseded",
            contested=True,
            source="/elsewhere/CLAUDE.md",
            timestamp="2026-08-01T02:00:00+02:00",
        ),
        "   ",
        line(2, alternatives=None, contested=..., status=..., subject=None, source=None),
    )
    _, incoming, _ = transfer.read_file(str(path), default_scope="project:/here", now=NOW)
    first, second = incoming
    assert first == Incoming(
        uid(1),
        "branch:/r/.git:/r:main",
        "2026-08-01T00:00:00.000Z",
        "decision",
        "Queue",
        "use nats",
        ("kafka", "rabbitmq"),
        "superseded",
        True,
        "/elsewhere/CLAUDE.md",
        f"{path} line 3",
    )
    assert second == Incoming(
        uid(2),
        "project:/x",
        "2026-08-01T00:00:00.000Z",
        "insight",
        None,
        "note 2",
        (),
        "active",
        False,
        None,
        f"{path} line 5",
    )


@pytest.mark.parametrize(
    "fields, why",
    [
        ({"id": ...}, "'id' must be a non-empty string"),
        ({"id": "  "}, "'id' must be a non-empty string"),
        ({"id": 7}, "'id' must be a non-empty string"),
        ({"id": "note-1"}, "id 'note-1' is not a UUID"),
        ({"kind": "rumour"}, "unknown kind 'rumour'"),
        ({"kind": ...}, "'kind' must be a non-empty string"),
        ({"status": "lost"}, "unknown status 'lost'"),
        ({"status": None}, "unknown status None"),
        ({"timestamp": "yesterday"}, "timestamp 'yesterday' is not an ISO time"),
        ({"timestamp": ...}, "'timestamp' must be a non-empty string"),
        ({"alternatives": "kafka"}, "'alternatives' must be a list of strings"),
        ({"alternatives": ["kafka", 3]}, "'alternatives' must be a list of strings"),
        ({"contested": "yes"}, "'contested' must be true or false"),
        ({"contested": 1}, "'contested' must be true or false"),
        ({"content": ""}, "'content' must be a non-empty string"),
        ({"kind": "decision"}, "Subject is required for decision notes"),
        ({"content": "x" * 20_001}, "note text is over 20000 characters"),
        ({"subject": 5}, "'subject' must be a non-empty string"),
        ({"subject": " "}, "'subject' must be a non-empty string"),
        ({"scope": ...}, "'scope' must be a non-empty string"),
        ({"source": ""}, "'source' must be a non-empty string"),
        ({"alternatives": ["a" * 1000, "b" * 1001]}, "alternatives are over 2000 characters"),
    ],
)
def test_a_bad_field_names_its_line_and_imports_nothing(tmp_path: Path, fields: dict[str, object], why: str) -> None:
    path = export_file(tmp_path, line(1), line(2, **fields))
    refused = refusal(path)
    assert refused.message == f"{path} line 3: {why}; nothing was imported" and refused.code == "bad_file"


def test_a_line_that_is_not_an_object_or_repeats_an_id_is_refused(tmp_path: Path) -> None:
    listed = export_file(tmp_path, line(1), "[1, 2]", name="list.jsonl")
    refused = refusal(listed)
    assert (refused.message, refused.code) == (
        f"{listed} line 3 is not a JSON object; nothing was imported",
        "bad_file",
    )
    twice = export_file(tmp_path, line(1), line(2), line(1, content="again"), name="twice.jsonl")
    refused = refusal(twice)
    assert (refused.message, refused.code) == (
        f"{twice} line 4 repeats note id {uid(1)}; nothing was imported",
        "bad_file",
    )


# -- a Markdown memory file ----------------------------------------------------------------------------


def blocks(text: str, tmp_path: Path) -> list[tuple[str | None, str, str]]:
    """(heading, text, where) of each note a memory file holds."""
    path = tmp_path / "CLAUDE.md"
    path.write_text(text, encoding="utf-8")
    _, incoming, _ = transfer.read_file(str(path), default_scope="project:/here", now=NOW)
    return [(n.subject, n.content, n.where.removeprefix("CLAUDE.md ")) for n in incoming]


def test_front_matter_is_dropped_only_when_it_is_closed(tmp_path: Path) -> None:
    assert blocks("---\nname: x\n---\nbody\n", tmp_path) == [(None, "body", "line 4")]
    assert blocks("---\n---\nbody\n", tmp_path) == [(None, "body", "line 3")]
    assert blocks(" --- \nname: x\n  ---\nbody\n", tmp_path) == [(None, "body", "line 4")]
    assert blocks("---\nname: x\n\nbody\n", tmp_path) == [(None, "---\nname: x", "line 1"), (None, "body", "line 4")]
    assert blocks("intro\n---\nname: x\n---\n", tmp_path) == [(None, "intro\n---\nname: x\n---", "line 1")]


def test_headings_of_one_to_six_marks_name_the_blocks_under_them(tmp_path: Path) -> None:
    text = (
        "# Build ##\none\n\n###### Deep\ntwo\n\n####### Seven\nthree\n\n#NoSpace\nfour\n\n# \nfive\n\n## Tests\n- six\n"
    )
    assert blocks(text, tmp_path) == [
        ("Build", "one", "line 2"),
        ("Deep", "two", "line 5"),
        ("Deep", "####### Seven\nthree", "line 7"),
        ("Deep", "#NoSpace\nfour", "line 10"),
        (None, "five", "line 14"),
        ("Tests", "six", "line 17"),
    ]


def test_bullets_start_blocks_and_indented_lines_continue_them(tmp_path: Path) -> None:
    text = (
        "- one\n* two\n+ three\n1. four\n2) five\n  continued\n  - nested stays\n-not a bullet\nsix\n"
        "\n   plain indented\n"
    )
    assert blocks(text, tmp_path) == [
        (None, "one", "line 1"),
        (None, "two", "line 2"),
        (None, "three", "line 3"),
        (None, "four", "line 4"),
        (None, "five\ncontinued\n  - nested stays\n-not a bullet\nsix", "line 5"),
        (None, "plain indented", "line 11"),
    ]


def test_a_fenced_block_is_kept_whole_across_blank_lines_and_headings(tmp_path: Path) -> None:
    text = (
        "intro\n```sh\nmake\n\n# not a heading\n```\nafter\n\n~~~\n- x\n~~~\n\n  ```\nindented fence\n  ```\n- last\n"
    )
    assert blocks(text, tmp_path) == [
        (None, "intro\n```sh\nmake\n\n# not a heading\n```\nafter", "line 1"),
        (None, "~~~\n- x\n~~~", "line 9"),
        (None, "```\nindented fence\n  ```", "line 13"),
        (None, "last", "line 16"),
    ]


def test_a_memory_file_skips_what_cannot_be_a_note_and_repeats_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_text(
        "# A\n- same\n- same\n- " + "x" * 20_001 + "\n# B\n- same\n# " + "s" * 201 + "\n- long subject\n",
        encoding="utf-8",
    )
    _, incoming, skipped = transfer.read_file(str(path), default_scope="project:/here", now=NOW)
    assert [(n.subject, n.content) for n in incoming] == [("A", "same"), ("B", "same")]
    assert skipped == [
        "CLAUDE.md line 3: the same text appears earlier under the same heading",
        "CLAUDE.md line 4: note text is over 20000 characters",
        "CLAUDE.md line 8: subject is 201 characters; the limit is 200 (name the topic in a few words, "
        "put the detail in the note text)",
    ]


def test_a_memory_note_s_id_is_the_one_earlier_versions_gave_it(tmp_path: Path) -> None:
    """The id is stored data: a CLAUDE.md imported by an earlier version must be found already present, so the
    id stays uuid5(namespace, file, scope, heading, text) exactly."""
    import uuid

    path = tmp_path / "CLAUDE.md"
    path.write_text("- keep the build green\n# Build\n- run make\n", encoding="utf-8")
    _, incoming, _ = transfer.read_file(str(path), default_scope="project:/x", now=NOW)
    source = os.path.realpath(path)
    namespace = uuid.UUID("6f1c0b8e-2d2a-4a53-9a55-3c0a1e0c7a21")
    assert [n.id for n in incoming] == [
        str(uuid.uuid5(namespace, f"{source}\nproject:/x\n\nkeep the build green")),
        str(uuid.uuid5(namespace, f"{source}\nproject:/x\nBuild\nrun make")),
    ]


def test_a_file_with_nothing_in_it(tmp_path: Path) -> None:
    for name, body in (("empty.md", ""), ("blank.md", "  \n\n\t\n")):
        path = tmp_path / name
        path.write_text(body, encoding="utf-8")
        assert transfer.read_file(str(path), default_scope="project:/x", now=NOW) == (name, [], [])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert "is neither a Cortex export" in refusal(empty).message


def test_a_memory_note_s_id_is_fixed_by_its_file_scope_heading_and_text(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_text("# A\n- same\n# B\n- same\n", encoding="utf-8")

    def ids(scope: str) -> list[str]:
        return [n.id for n in transfer.read_file(str(path), default_scope=scope, now=NOW)[1]]

    first = ids("project:/here")
    assert first == ids("project:/here") and len(set(first)) == 2
    assert not set(first) & set(ids("project:/there"))
    path.write_text("# A\n- same\n# B\n- other\n", encoding="utf-8")
    assert ids("project:/here")[0] == first[0] and ids("project:/here")[1] != first[1]
    copy = tmp_path / "copy" / "CLAUDE.md"
    copy.parent.mkdir()
    copy.write_text("# A\n- same\n", encoding="utf-8")
    assert transfer.read_file(str(copy), default_scope="project:/here", now=NOW)[1][0].id != first[0]


# -- where an import lands ---------------------------------------------------------------------------------


def incoming_under(*scopes: str) -> list[Incoming]:
    return [
        Incoming(uid(i), s, NOW, "insight", None, f"note {i}", (), "active", False, None, "here")
        for i, s in enumerate(scopes)
    ]


def test_foreign_scopes_land_here_and_this_repository_s_are_kept(engine: Engine) -> None:
    here, project = engine.scope, engine.project_key
    root = here.key.split(":")[1]
    notes = incoming_under(
        f"branch:{root}:/elsewhere:topic",
        f"detached:{root}:/wt:abc",
        "project:/other",
        "branch:/other/.git:/other:main",
        "detached:/other/.git:/other:abc",
        here.key,
        project,
        "nonsense",
        f"BRANCH:{root}:/x:main",
    )
    moved, count = transfer.map_foreign_scopes(notes, here, project)
    assert [n.scope for n in moved] == [
        f"branch:{root}:/elsewhere:topic",
        f"detached:{root}:/wt:abc",
        project,
        here.key,
        here.key,
        here.key,
        project,
        here.key,
        here.key,
    ]
    assert count == 5
    assert [n.id for n in moved] == [n.id for n in notes]


def test_outside_git_every_branch_scope_is_foreign(tmp_path: Path, make_engine: Open) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    eng = make_engine(plain)
    notes = incoming_under("branch:/r/.git:/r:main", eng.scope.key, "project:/r")
    moved, count = transfer.map_foreign_scopes(notes, eng.scope, eng.project_key)
    assert [n.scope for n in moved] == [eng.scope.key, eng.scope.key, eng.project_key] and count == 2
    forged = incoming_under("branch:None:/x:main", "detached:None:/x:abc")
    assert [n.scope for n in transfer.map_foreign_scopes(forged, eng.scope, eng.project_key)[0]] == [eng.scope.key] * 2


def test_rescope_moves_every_note() -> None:
    notes = incoming_under("project:/a", "branch:/b")
    assert [(n.id, n.scope) for n in transfer.rescope(notes, "project:/c")] == [
        (uid(0), "project:/c"),
        (uid(1), "project:/c"),
    ]


def test_an_import_reports_the_scopes_this_worktree_does_not_read(engine: Engine, tmp_path: Path) -> None:
    path = export_file(tmp_path, line(1, scope=engine.scope.key), line(2, scope=engine.project_key))
    result = engine.import_file(str(path), scope="project:/another")
    assert result.unread_scopes == ["project:/another"] and result.remapped == 0
    assert result.render().endswith(
        "Stored under scopes this worktree does not read: project:/another "
        "(`cortex import FILE --scope here` puts them in this worktree's scope instead)"
    )
    here = engine.import_file(str(export_file(tmp_path, line(3, scope="project:/gone"), name="b.jsonl")), scope="here")
    assert (
        here.unread_scopes == []
        and engine.conn.execute("SELECT scope_key FROM scoped_notes WHERE id=?", (uid(3),)).fetchone()[0]
        == engine.scope.key
    )


# -- importing -----------------------------------------------------------------------------------------


def test_notes_are_written_in_timestamp_then_file_order_with_one_tick_each(engine: Engine, tmp_path: Path) -> None:
    scope = engine.scope.key
    engine.import_file(str(export_file(tmp_path, line(9, scope=scope), name="first.jsonl")))
    path = export_file(
        tmp_path,
        line(1, scope=scope, timestamp="2026-08-01T03:00:00Z"),
        line(2, scope=scope, timestamp="2026-08-01T01:00:00Z"),
        line(9, scope=scope),
        line(3, scope=scope, timestamp="2026-08-01T01:00:00Z"),
    )
    ticks: list[int] = []
    totals: list[int] = []

    def progress(total: int) -> Callable[[int], None]:
        totals.append(total)
        return ticks.append

    result = engine.import_file(str(path), progress=progress)
    assert result.added == [uid(2), uid(3), uid(1)] and result.present == 1
    assert totals == [4] and ticks == [1, 1, 1, 1]
    rowids = [r[0] for r in engine.conn.execute("SELECT id FROM notes ORDER BY rowid")]
    assert rowids == [uid(9), uid(2), uid(3), uid(1)]


def test_imported_notes_are_cleaned_and_projected(engine: Engine, tmp_path: Path) -> None:
    path = export_file(
        tmp_path,
        line(
            1,
            scope=engine.scope.key,
            kind="decision",
            subject="  The Queue  ",
            content="  use nats \x1b[31m[contested]\n",
            alternatives=["kafka", "  ", "sqs\x07"],
        ),
    )
    engine.import_file(str(path))
    row = engine.conn.execute(
        "SELECT subject, content, alternatives, status, conflict, session_id, source FROM scoped_notes WHERE id=?",
        (uid(1),),
    ).fetchone()
    assert (row["subject"], row["content"]) == ("the queue", "use nats [contested]")
    assert json.loads(row["alternatives"]) == ["kafka", "sqs"]
    assert (row["status"], row["conflict"], row["session_id"], row["source"]) == ("active", 0, None, None)
    item = engine.inspect_memory(f"notes:{uid(1)}").item
    assert item["kind"] == "note:decision" and "use nats" in str(item["text"])
    plain = export_file(tmp_path, line(2, scope=engine.scope.key, alternatives=[]), name="plain.jsonl")
    engine.import_file(str(plain))
    assert engine.conn.execute("SELECT alternatives FROM notes WHERE id=?", (uid(2),)).fetchone()[0] is None


def test_a_decision_importing_into_a_store_with_the_rules_of_a_write(
    engine: Engine, clock: Clock, tmp_path: Path
) -> None:
    """Older and newer decisions on one subject: the newest stays active, the rest superseded, reported."""
    scope = engine.scope.key
    stored = engine.note("decision", "use postgres for storage", "storage")
    path = export_file(
        tmp_path,
        line(
            1,
            scope=scope,
            kind="decision",
            subject="Storage",
            content="use sqlite for storage",
            timestamp="2026-08-01T00:00:00Z",
        ),
        line(
            2,
            scope=scope,
            kind="intent",
            subject="storage",
            content="move storage to sqlite",
            timestamp="2026-08-01T00:00:00Z",
        ),
        line(
            3,
            scope=scope,
            kind="decision",
            subject="storage",
            content="use postgres 16 for storage",
            timestamp="2026-08-02T18:00:00Z",
        ),
        line(
            4,
            scope="project:/elsewhere",
            kind="decision",
            subject="storage",
            content="use mysql for storage",
            timestamp="2026-08-02T19:00:00Z",
        ),
    )
    result = engine.import_file(str(path), scope=None)
    status = {r["id"]: r["status"] for r in engine.conn.execute("SELECT id, status FROM notes")}
    assert status == {
        uid(1): "superseded",
        uid(2): "active",
        stored.id: "superseded",
        uid(3): "active",
        "00000000-0000-4000-8000-000000000004": "active",
    }
    assert result.superseded == [uid(1), stored.id] and result.contested == []
    item = engine.inspect_memory(f"notes:{stored.id}").item["text"]
    assert "superseded" in item


def test_a_superseded_or_resolved_import_meets_no_rule(engine: Engine, tmp_path: Path) -> None:
    scope = engine.scope.key
    stored = engine.note("decision", "use postgres for storage", "storage")
    path = export_file(
        tmp_path,
        line(
            1,
            scope=scope,
            kind="decision",
            subject="storage",
            content="do not use postgres for storage",
            status="superseded",
            timestamp="2026-08-02T18:30:00Z",
        ),
        line(
            2,
            scope=scope,
            kind="decision",
            subject="storage",
            content="use sqlite for storage",
            status="resolved",
            timestamp="2026-08-02T18:30:00Z",
        ),
    )
    result = engine.import_file(str(path))
    flags = {
        r["id"]: (r["status"], r["conflict"]) for r in engine.conn.execute("SELECT id, status, conflict FROM notes")
    }
    assert flags == {stored.id: ("active", 0), uid(1): ("superseded", 0), uid(2): ("resolved", 0)}
    assert result.superseded == [] and result.contested == []


def test_a_contest_is_what_the_notes_say_never_what_the_file_claims(engine: Engine, tmp_path: Path) -> None:
    scope = engine.scope.key
    path = export_file(
        tmp_path,
        line(
            1,
            scope=scope,
            kind="decision",
            subject="cache",
            content="use redis",
            contested=True,
            contested_with=[uid(8)],
        ),
    )
    result = engine.import_file(str(path))
    assert engine.conn.execute("SELECT conflict FROM notes WHERE id=?", (uid(1),)).fetchone()[0] == 0
    assert result.contested == []


def test_an_opposing_import_opens_a_contest_with_each_active_side_and_reports_new_flags_once(
    engine: Engine, clock: Clock, tmp_path: Path
) -> None:
    scope = engine.scope.key
    a = engine.note("decision", "use redis for the cache", "cache")
    clock.advance(minutes=1)
    b = engine.note("decision", "do not use redis for the cache", "cache")
    assert engine.conn.execute("SELECT conflict FROM notes WHERE id=?", (a.id,)).fetchone()[0] == 1
    path = export_file(
        tmp_path,
        line(
            1,
            scope=scope,
            kind="decision",
            subject="cache",
            content="do not use redis for the cache",
            timestamp="2026-08-02T18:30:00Z",
        ),
    )
    result = engine.import_file(str(path))
    flags = {
        r["id"]: (r["status"], r["conflict"]) for r in engine.conn.execute("SELECT id, status, conflict FROM notes")
    }
    assert flags == {a.id: ("active", 1), b.id: ("active", 1), uid(1): ("active", 1)}
    assert result.contested == [uid(1)] and result.superseded == []


def test_an_older_opposing_decision_is_compared_the_other_way_round(
    engine: Engine, clock: Clock, tmp_path: Path
) -> None:
    """The stored decision is the newer: the import is the earlier side of the comparison."""
    scope = engine.scope.key
    stored = engine.note("decision", "do not use redis for the cache", "cache")
    path = export_file(
        tmp_path,
        line(
            1,
            scope=scope,
            kind="decision",
            subject="cache",
            content="use redis for the cache",
            timestamp="2026-08-01T00:00:00Z",
        ),
        line(
            2,
            scope=scope,
            kind="intent",
            subject="cache",
            content="try redis for the cache",
            timestamp="2026-08-01T00:00:00Z",
        ),
    )
    result = engine.import_file(str(path))
    flags = {
        r["id"]: (r["status"], r["conflict"]) for r in engine.conn.execute("SELECT id, status, conflict FROM notes")
    }
    assert flags == {stored.id: ("active", 1), uid(1): ("active", 1), uid(2): ("active", 0)}
    assert result.contested == [stored.id, uid(1)]


def test_an_intent_only_meets_decisions_and_its_own_kind(engine: Engine, clock: Clock, tmp_path: Path) -> None:
    scope = engine.scope.key
    decision = engine.note("decision", "use redis for the cache", "cache")
    blocker = engine.note("blocker", "redis is down for the cache", "cache")
    older_intent = engine.note("intent", "move the cache to redis", "cache")
    path = export_file(
        tmp_path,
        line(
            1,
            scope=scope,
            kind="intent",
            subject="cache",
            content="do not use redis for the cache",
            timestamp="2026-08-02T18:30:00Z",
        ),
        line(
            2,
            scope=scope,
            kind="insight",
            subject="cache",
            content="do not use redis for the cache!",
            timestamp="2026-08-02T18:30:00Z",
        ),
    )
    result = engine.import_file(str(path))
    flags = {
        r["id"]: (r["status"], r["conflict"]) for r in engine.conn.execute("SELECT id, status, conflict FROM notes")
    }
    assert flags[decision.id] == ("active", 1) and flags[uid(1)] == ("active", 1)
    assert flags[older_intent.id] == ("superseded", 0) and flags[blocker.id] == ("active", 0)
    assert flags[uid(2)] == ("active", 1)  # an insight, too, can oppose a decision
    assert result.contested == [decision.id, uid(1), uid(2)] and result.superseded == [older_intent.id]


def flags_of(engine: Engine) -> dict[str, tuple[str, int]]:
    """(status, conflict) of every note by id."""
    return {
        r["id"]: (r["status"], r["conflict"]) for r in engine.conn.execute("SELECT id, status, conflict FROM notes")
    }


def stored(engine: Engine, tmp_path: Path, *lines: str) -> None:
    """Notes already in the store, written by an earlier import (so that their times are the file's)."""
    engine.import_file(str(export_file(tmp_path, *lines, name="stored.jsonl")))


def test_a_note_of_the_same_time_as_a_stored_one_comes_after_it(engine: Engine, tmp_path: Path) -> None:
    scope, at = engine.scope.key, "2026-08-01T10:00:00Z"
    stored(
        engine,
        tmp_path,
        line(1, scope=scope, kind="decision", subject="cache", content="use redis for the cache", timestamp=at),
        line(2, scope=scope, kind="decision", subject="queue", content="run jobs on rq", timestamp=at),
    )
    path = export_file(
        tmp_path,
        line(3, scope=scope, kind="intent", subject="cache", content="do not use redis for the cache", timestamp=at),
        line(4, scope=scope, kind="decision", subject="queue", content="run jobs on celery", timestamp=at),
    )
    result = engine.import_file(str(path))
    assert flags_of(engine) == {
        uid(1): ("active", 1),
        uid(2): ("superseded", 0),
        uid(3): ("active", 1),
        uid(4): ("active", 0),
    }
    assert result.contested == [uid(1), uid(3)] and result.superseded == [uid(2)]


@pytest.mark.parametrize(
    ("stored_note", "incoming", "flags", "replaced"),
    [
        pytest.param(
            ("intent", "use redis for the cache", "2026-08-01T10:00:00Z"),
            ("intent", "do not use redis for the cache", "2026-08-01T11:00:00Z"),
            {uid(1): ("superseded", 0), uid(2): ("active", 0)},
            [uid(1)],
            id="two_intents_never_contest_the_newer_replaces_the_older",
        ),
        pytest.param(
            ("decision", "do not use redis for the cache", "2026-08-01T11:00:00Z"),
            ("intent", "use redis for the cache", "2026-08-01T10:00:00Z"),
            {uid(1): ("active", 0), uid(2): ("active", 0)},
            [],
            id="an_intent_older_than_a_decision_never_contests_it",
        ),
    ],
)
def test_an_intent_never_contests_what_it_cannot_oppose(
    engine: Engine,
    tmp_path: Path,
    stored_note: tuple[str, str, str],
    incoming: tuple[str, str, str],
    flags: dict[str, tuple[str, int]],
    replaced: list[str],
) -> None:
    """An intent contests only a decision older than it; a newer intent of the same subject replaces an older."""
    scope = engine.scope.key
    kind, content, at = stored_note
    stored(engine, tmp_path, line(1, scope=scope, kind=kind, subject="cache", content=content, timestamp=at))
    kind, content, at = incoming
    new = line(2, scope=scope, kind=kind, subject="cache", content=content, timestamp=at)
    result = engine.import_file(str(export_file(tmp_path, new)))
    assert flags_of(engine) == flags
    assert result.contested == [] and result.superseded == replaced


def test_an_intent_meets_a_decision_behind_an_older_intent_and_never_replaces_it(
    engine: Engine, tmp_path: Path
) -> None:
    scope = engine.scope.key
    stored(
        engine,
        tmp_path,
        line(
            1,
            scope=scope,
            kind="intent",
            subject="cache",
            content="finish the cache rework",
            timestamp="2026-08-01T10:00:00Z",
        ),
        line(
            2,
            scope=scope,
            kind="decision",
            subject="cache",
            content="use redis for the cache",
            timestamp="2026-08-01T11:00:00Z",
        ),
        line(
            3, scope=scope, kind="decision", subject="queue", content="run jobs on rq", timestamp="2026-08-01T11:00:00Z"
        ),
    )
    result = engine.import_file(
        str(
            export_file(
                tmp_path,
                line(
                    4,
                    scope=scope,
                    kind="intent",
                    subject="cache",
                    content="do not use redis for the cache",
                    timestamp="2026-08-01T12:00:00Z",
                ),
                line(
                    5,
                    scope=scope,
                    kind="intent",
                    subject="queue",
                    content="move the queue to the new cluster",
                    timestamp="2026-08-01T12:00:00Z",
                ),
            )
        )
    )
    assert flags_of(engine) == {
        uid(1): ("superseded", 0),
        uid(2): ("active", 1),
        uid(3): ("active", 0),
        uid(4): ("active", 1),
        uid(5): ("active", 0),
    }
    assert result.contested == [uid(2), uid(4)] and result.superseded == [uid(1)]


def test_a_contested_side_is_neither_replaced_nor_replacing(engine: Engine, clock: Clock, tmp_path: Path) -> None:
    scope = engine.scope.key
    a = engine.note("decision", "use redis for the cache", "cache")
    clock.advance(minutes=1)
    b = engine.note("decision", "do not use redis for the cache", "cache")
    path = export_file(
        tmp_path,
        line(
            1,
            scope=scope,
            kind="decision",
            subject="cache",
            content="put the cache in memcached",
            timestamp="2026-08-02T18:30:00Z",
        ),
        line(
            2,
            scope=scope,
            kind="decision",
            subject="cache",
            content="keep the cache in process",
            timestamp="2026-08-01T00:00:00Z",
        ),
    )
    result = engine.import_file(str(path))
    flags = {
        r["id"]: (r["status"], r["conflict"]) for r in engine.conn.execute("SELECT id, status, conflict FROM notes")
    }
    assert flags[a.id] == ("active", 1) and flags[b.id] == ("active", 1)
    assert flags[uid(1)] == ("active", 0) and flags[uid(2)] == ("superseded", 0)
    assert result.superseded == [uid(2)]


def test_an_import_in_another_scope_meets_nothing_here(engine: Engine, tmp_path: Path) -> None:
    stored = engine.note("decision", "use redis for the cache", "cache")
    path = export_file(
        tmp_path,
        line(
            1,
            scope="project:/else",
            kind="decision",
            subject="cache",
            content="do not use redis for the cache",
            timestamp="2026-08-02T18:30:00Z",
        ),
    )
    result = engine.import_file(str(path), scope="project:/else")
    flags = {
        r["id"]: (r["status"], r["conflict"]) for r in engine.conn.execute("SELECT id, status, conflict FROM notes")
    }
    assert flags == {stored.id: ("active", 0), uid(1): ("active", 0)} and result.contested == []


def test_a_bad_note_rolls_the_whole_import_back(engine: Engine, tmp_path: Path) -> None:
    calls: list[int] = []
    notes = incoming_under(engine.scope.key, engine.scope.key)
    result = ImportResult("x", "jsonl", 2)

    def inside(conn: object) -> None:
        calls.append(len(result.added))
        raise InvalidInput("refused inside", code="bad")

    with pytest.raises(InvalidInput):
        transfer.import_notes(engine.conn, result, notes, inside=inside)
    assert calls == [2] and engine.conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 0
    seen: list[int] = []
    transfer.import_notes(
        engine.conn,
        ImportResult("x", "jsonl", 2),
        notes,
        inside=lambda conn: seen.append(conn.execute("SELECT count(*) FROM notes").fetchone()[0]),
    )
    assert seen == [2]


# -- the inbox in front of an import -----------------------------------------------------------------------


def test_an_import_that_waits_for_review_writes_only_arrivals(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.import_file(str(export_file(tmp_path, line(1, scope=engine.scope.key), name="first.jsonl")))
    settings.write_review_arrivals("others")
    stored = engine.import_file(str(export_file(tmp_path, line(1, scope=engine.scope.key), name="again.jsonl")))
    assert stored.pending == [] and stored.present == 1
    export_file(
        tmp_path,
        line(
            2,
            kind="decision",
            subject="Cache",
            content="use redis",
            alternatives=["memcached"],
            status="superseded",
            source="/a/CLAUDE.md",
            timestamp="2026-08-01T01:00:00Z",
        ),
        line(3),
    )
    monkeypatch.chdir(tmp_path)
    result = engine.import_file("in.jsonl", scope="project:/else")
    assert result.pending == [uid(2), uid(3)] and result.added == [] and result.present == 0
    assert result.unread_scopes == ["project:/else"] and not result.changed
    assert engine.conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 1
    rows = engine.conn.execute(
        "SELECT a.*, s.key AS scope_key FROM arrivals a JOIN scopes s ON s.id=a.scope_id ORDER BY seq"
    ).fetchall()
    assert [(r["channel"], r["path"], r["note_id"], r["seq"], r["state"], r["scope_key"]) for r in rows] == [
        ("import", str(tmp_path / "in.jsonl"), uid(2), 0, "pending", "project:/else"),
        ("import", str(tmp_path / "in.jsonl"), uid(3), 1, "pending", "project:/else"),
    ]
    first = rows[0]
    assert (
        first["kind"],
        first["subject"],
        first["content"],
        json.loads(first["alternatives"]),
        first["status"],
        first["source"],
        first["timestamp"],
    ) == ("decision", "Cache", "use redis", ["memcached"], "superseded", "/a/CLAUDE.md", "2026-08-01T01:00:00.000Z")
    again = engine.import_file("in.jsonl", scope="project:/else")
    assert again.pending == [] and again.present == 2
    # Nothing else is said of notes the import left as they were (where they are stored, how `--scope here` would
    # move them: it would not).
    assert again.render() == "Nothing changed: all 2 note(s) in in.jsonl are already in the store."


def test_a_note_given_twice_waits_in_the_inbox_once(engine: Engine) -> None:
    """The file readers refuse a repeated id, but the inbox does not lean on that: a note listed twice in one
    batch is one arrival, and its second listing counts as present."""
    twice = [incoming_under(engine.scope.key)[0]] * 2
    result = transfer.hold_for_review(engine.conn, ImportResult("in.jsonl", "jsonl", 2), twice, NOW)
    assert result.pending == [uid(0)] and result.present == 1
    assert engine.conn.execute("SELECT count(*) FROM arrivals WHERE note_id=?", (uid(0),)).fetchone()[0] == 1


def test_an_accepted_import_arrival_is_written_as_the_file_said(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.write_review_arrivals("others")
    path = export_file(
        tmp_path,
        line(
            2,
            scope=engine.scope.key,
            kind="decision",
            subject="Cache",
            content="use redis",
            alternatives=["memcached"],
            status="superseded",
            source="/a/CLAUDE.md",
            timestamp="2026-08-01T01:00:00Z",
        ),
    )
    engine.import_file(str(path))
    (arrival,) = engine.inbox()
    engine.accept_arrivals([arrival.id])
    row = engine.conn.execute("SELECT * FROM scoped_notes WHERE id=?", (uid(2),)).fetchone()
    assert (
        row["scope_key"],
        row["timestamp"],
        row["kind"],
        row["subject"],
        row["content"],
        json.loads(row["alternatives"]),
        row["status"],
        row["conflict"],
        row["source"],
    ) == (
        engine.scope.key,
        "2026-08-01T01:00:00.000Z",
        "decision",
        "cache",
        "use redis",
        ["memcached"],
        "superseded",
        0,
        "/a/CLAUDE.md",
    )


# -- exporting -----------------------------------------------------------------------------------------


@pytest.fixture
def seeded(engine: Engine, clock: Clock) -> Engine:
    """A contest of two (and a third note on its subject), a supersession with an alternative, a resolved blocker,
    an insight of two lines with a source, and a note of the project layer."""
    engine.note("decision", "use kafka for the queue", "queue")
    clock.advance(minutes=1)
    engine.note("decision", "do not use kafka for the queue", "queue")
    clock.advance(minutes=1)
    engine.note("decision", "use OIDC", "auth", ["session cookies"])
    clock.advance(minutes=1)
    engine.note("decision", "use OIDC with PKCE", "auth")
    clock.advance(minutes=1)
    blocker = engine.note("blocker", "CI is red", "ci")
    engine.resolve(blocker.id)
    clock.advance(minutes=1)
    engine.import_file(
        str(
            export_file(
                engine_tmp(engine),
                line(
                    7,
                    scope=engine.project_key,
                    timestamp="2026-08-02T18:05:00Z",
                    content="tests need docker\n\nand ünïcode",
                    source="/home/a/CLAUDE.md",
                ),
            )
        )
    )
    return engine


def engine_tmp(engine: Engine) -> Path:
    """A folder beside the engine's repository for the files a fixture writes."""
    return Path(engine.scope.worktree).parent


def test_export_lists_every_note_in_time_order_with_its_contest_peers(seeded: Engine) -> None:
    notes = seeded.export_notes()
    assert [(n.kind, n.subject, n.status, n.contested) for n in notes] == [
        ("decision", "queue", "active", True),
        ("decision", "queue", "active", True),
        ("decision", "auth", "superseded", False),
        ("decision", "auth", "active", False),
        ("blocker", "ci", "resolved", False),
        ("insight", None, "active", False),
    ]
    first, second = notes[0], notes[1]
    assert first.contested_with == (second.id,) and second.contested_with == (first.id,)
    assert all(n.contested_with == () for n in notes[2:])
    assert notes[2].alternatives == ("session cookies",) and notes[3].alternatives == ()
    assert notes[5].source == "/home/a/CLAUDE.md" and notes[5].scope == seeded.project_key
    assert {n.scope for n in notes[:5]} == {seeded.scope.key}
    assert notes[0].to_dict() == {
        "id": first.id,
        "scope": seeded.scope.key,
        "timestamp": first.timestamp,
        "kind": "decision",
        "subject": "queue",
        "content": "use kafka for the queue",
        "alternatives": [],
        "status": "active",
        "contested": True,
        "contested_with": [second.id],
        "source": None,
    }
    assert list(notes[0].to_dict()) == [
        "id",
        "scope",
        "timestamp",
        "kind",
        "subject",
        "content",
        "alternatives",
        "status",
        "contested",
        "contested_with",
        "source",
    ]


def test_contest_peers_are_those_of_the_same_subject_and_scope(engine: Engine, clock: Clock, tmp_path: Path) -> None:
    scope = engine.scope.key
    engine.import_file(
        str(
            export_file(
                tmp_path,
                line(1, scope=scope, kind="decision", subject="cache", content="use redis for the cache"),
                line(2, scope=scope, kind="decision", subject="cache", content="do not use redis for the cache"),
                line(3, scope=scope, kind="decision", subject="queue", content="use kafka for the queue"),
                line(4, scope=scope, kind="decision", subject="queue", content="do not use kafka for the queue"),
                line(5, scope="project:/p", kind="decision", subject="cache", content="use redis for the cache"),
                line(6, scope="project:/p", kind="decision", subject="cache", content="do not use redis for the cache"),
                line(7, scope=scope, kind="decision", subject="cache", content="use memcached", status="superseded"),
            )
        )
    )
    peers = {n.id: n.contested_with for n in engine.export_notes()}
    assert peers == {
        uid(1): (uid(2),),
        uid(2): (uid(1),),
        uid(3): (uid(4),),
        uid(4): (uid(3),),
        uid(5): (uid(6),),
        uid(6): (uid(5),),
        uid(7): (),
    }


def test_export_of_some_scopes(seeded: Engine) -> None:
    assert [n.id for n in seeded.export_notes(["here"])] == [n.id for n in seeded.export_notes()]  # both layers
    branch = seeded.export_notes([seeded.scope.key])
    assert len(branch) == 5 and {n.scope for n in branch} == {seeded.scope.key}
    both = seeded.export_notes([seeded.project_key, "here", seeded.scope.key])
    assert [n.id for n in both] == [n.id for n in seeded.export_notes()]
    project = transfer.export_notes(seeded.conn, [seeded.project_key])
    assert [n.content for n in project] == ["tests need docker\n\nand ünïcode"]
    with pytest.raises(InvalidInput) as caught:
        seeded.export_notes(["branch:nowhere"])
    assert caught.value.message == (
        "no note is stored under scope 'branch:nowhere'; list the scopes with "
        "`cortex list-memory --json` (or omit --scope to export every scope)"
    )
    assert caught.value.code == "bad_scope"
    with pytest.raises(InvalidInput, match="'project:/none'"):
        transfer.export_notes(seeded.conn, [seeded.scope.key, "project:/none"])
    assert transfer.export_notes(seeded.conn, ["project:/none"], implied=("project:/none",)) == []


def test_an_empty_store_exports_a_header_alone(engine: Engine) -> None:
    assert transfer.render_jsonl(engine.export_notes()) == '{"cortex_export": 1, "notes": 0}\n'
    assert (
        transfer.render_markdown([]) == "# Cortex export\n\n0 note(s). Import reads the JSON Lines export "
        "(`--format jsonl`).\n"
    )


def test_the_jsonl_export_is_a_header_then_one_line_per_note_unescaped(seeded: Engine) -> None:
    notes = seeded.export_notes()
    ticks: list[int] = []
    text = transfer.render_jsonl(notes, ticks.append)
    assert ticks == [1] * 6 and text.endswith("}\n") and text.count("\n") == 7
    lines = text.split("\n")
    assert lines[0] == '{"cortex_export": 1, "notes": 6}'
    assert lines[1:7] == [json.dumps(n.to_dict(), ensure_ascii=False) for n in notes]
    assert '"content": "tests need docker\\n\\nand ünïcode"' in lines[6]
    assert transfer.render_jsonl(notes) == text


def test_the_markdown_export_reads_scope_by_scope(seeded: Engine) -> None:
    notes = seeded.export_notes()
    q1, q2, a1, a2, ci, ins = notes
    assert (
        transfer.render_markdown(notes)
        == "\n".join(
            [
                "# Cortex export",
                "",
                "6 note(s). Import reads the JSON Lines export (`--format jsonl`).",
                "",
                f"## {seeded.scope.key}",
                "",
                "### decision · queue · active · contested",
                "",
                f"`{q1.id}` · {q1.timestamp}",
                "",
                "> use kafka for the queue",
                "",
                f"Contested with: `{q2.id}`",
                "",
                "### decision · queue · active · contested",
                "",
                f"`{q2.id}` · {q2.timestamp}",
                "",
                "> do not use kafka for the queue",
                "",
                f"Contested with: `{q1.id}`",
                "",
                "### decision · auth · superseded",
                "",
                f"`{a1.id}` · {a1.timestamp}",
                "",
                "> use OIDC",
                "",
                "Rejected alternatives:",
                "- session cookies",
                "",
                "### decision · auth · active",
                "",
                f"`{a2.id}` · {a2.timestamp}",
                "",
                "> use OIDC with PKCE",
                "",
                "### blocker · ci · resolved",
                "",
                f"`{ci.id}` · {ci.timestamp}",
                "",
                "> CI is red",
                "",
                f"## {seeded.project_key}",
                "",
                "### insight · active",
                "",
                f"`{ins.id}` · {ins.timestamp} · from /home/a/CLAUDE.md",
                "",
                "> tests need docker",
                ">",
                "> and ünïcode",
            ]
        )
        + "\n"
    )


def test_a_contest_of_three_names_both_other_sides() -> None:
    note = ExportedNote(uid(1), "s", "t", "decision", "q", "x", (), "active", True, (uid(2), uid(3)), None)
    assert f"\n\nContested with: `{uid(2)}`, `{uid(3)}`\n" in transfer.render_markdown([note])


def test_the_markdown_export_sorts_by_scope_time_and_id() -> None:
    def note(n: int, scope: str, stamp: str) -> ExportedNote:
        return ExportedNote(uid(n), scope, stamp, "insight", None, f"n{n}", (), "active", False, (), None)

    text = transfer.render_markdown([note(3, "b", "2"), note(2, "a", "2"), note(1, "a", "2"), note(4, "a", "1")])
    order = [text.index(f"> n{n}") for n in (4, 1, 2, 3)]
    assert order == sorted(order) and text.count("## a\n") == 1 and text.count("## b\n") == 1


# -- what an import reports ------------------------------------------------------------------------------


def test_the_report_of_an_import_says_what_changed() -> None:
    ids = [uid(n) for n in range(7)]
    result = ImportResult(
        "in.jsonl",
        "jsonl",
        9,
        added=ids[:2],
        present=3,
        superseded=ids[:6],
        contested=ids[:5],
        skipped=["x line 2: why", "x line 3: why"],
        unread_scopes=["project:/a", "project:/b"],
        remapped=2,
    )
    assert result.render() == "\n".join(
        [
            "Imported 2 note(s) from in.jsonl; 3 already present, left as they are.",
            f"Superseded by the import: {', '.join(ids[:5])} and 1 more (--json lists them all)",
            f"Contested (resolve with `cortex resolve`): {', '.join(ids[:5])}",
            "2 note(s) came from another repository's scopes and "
            "were put in this worktree's scope (a project-layer note "
            "in this project's).",
            "Not imported: x line 2: why",
            "Not imported: x line 3: why",
            "Stored under scopes this worktree does not read: "
            "project:/a, project:/b (`cortex import FILE --scope here` "
            "puts them in this worktree's scope instead)",
        ]
    )
    assert result.to_dict() == {
        "path": "in.jsonl",
        "format": "jsonl",
        "read": 9,
        "added": 2,
        "already_present": 3,
        "superseded": ids[:6],
        "contested": ids[:5],
        "skipped": ["x line 2: why", "x line 3: why"],
        "unread_scopes": ["project:/a", "project:/b"],
        "remapped": 2,
        "changed": True,
        "ids": ids[:2],
        "pending": 0,
        "text": result.render(),
    }


def test_the_report_of_a_memory_file_counts_insights() -> None:
    assert ImportResult("CLAUDE.md", "CLAUDE.md", 1, added=[uid(1)]).render() == "Imported 1 insight(s) from CLAUDE.md."
    assert ImportResult("CLAUDE.md", "CLAUDE.md", 1, present=1).render() == (
        "Nothing changed: all 1 insight(s) in CLAUDE.md are already in the store."
    )
    assert ImportResult("CLAUDE.md", "CLAUDE.md", 0).render() == "Nothing changed: CLAUDE.md holds no note to import."
    empty = ImportResult("CLAUDE.md", "CLAUDE.md", 0)
    assert not empty.changed and empty.to_dict()["changed"] is False and empty.to_dict()["ids"] == []


def test_the_report_of_an_import_that_waits() -> None:
    waiting = ImportResult("in.jsonl", "jsonl", 3, present=1, pending=[uid(1), uid(2)])
    assert waiting.render() == (
        "2 note(s) from in.jsonl wait in the inbox for your review; 1 already present, left as they are. Nothing is "
        "memory until you accept it: `cortex inbox` lists them, `cortex inbox accept ID` (or `--all`) takes them, "
        "`cortex inbox reject ID` drops one."
    )
    assert waiting.to_dict()["pending"] == 2 and waiting.to_dict()["changed"] is False
    alone = ImportResult("CLAUDE.md", "CLAUDE.md", 1, pending=[uid(1)])
    assert alone.render().startswith("1 insight(s) from CLAUDE.md wait in the inbox for your review. Nothing is memory")


def test_five_ids_are_shown_whole() -> None:
    ids = [uid(n) for n in range(5)]
    assert (
        ImportResult("f", "jsonl", 5, added=ids, contested=ids)
        .render()
        .endswith(f"Contested (resolve with `cortex resolve`): {', '.join(ids)}")
    )
