"""Issue 12: what every path says must be so — resolution and supersession, labels, reading vs booking, ids.

CLI behaviour runs the real `cortex` command line as a subprocess; MCP behaviour a real client over stdio;
the TUI's resolve dialog runs under Textual's pilot (see test_tui_behaviour.py for the dialog's own tests).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from cortex_engine.engine import describe_store

from .conftest import Repo
from .test_cli import cortex, ok, ok_json
from .test_mcp_server import serve, text

GO = "write the service in go"
NOT_GO = "do not write the service in go"
RUST = "write the service in rust"


def store(repo: Repo) -> sqlite3.Connection:
    """A plain read connection on the repo's store (what is actually held, not what a surface says)."""
    conn = sqlite3.connect(describe_store(repo.path).path)
    conn.row_factory = sqlite3.Row
    return conn


def active(repo: Repo, subject: str) -> list[tuple[str, int]]:
    """(content, conflict) of every active note on a subject."""
    conn = store(repo)
    try:
        return [(r["content"], r["conflict"]) for r in conn.execute(
            "SELECT content, conflict FROM notes WHERE subject=? AND status='active' ORDER BY timestamp, rowid", (subject,))]
    finally:
        conn.close()


def contest(repo: Repo) -> tuple[str, str]:
    """An open contest on `lang` through the CLI: (id of the go side, id of the not-go side)."""
    first = ok_json(repo.path, "note", "--kind", "decision", "--subject", "lang", GO)
    second = ok_json(repo.path, "note", "--kind", "decision", "--subject", "lang", NOT_GO)
    assert [c["id"] for c in second["conflicts"]] == [first["id"]]
    return first["id"], second["id"]


# -- 1. resolution and supersession ---------------------------------------------------------------


def test_cli_replacing_one_side_of_a_contest_leaves_only_the_replacement(repo: Repo) -> None:
    """resolve <go> --status superseded --replacement rust: the contest closes, rust is the one active decision."""
    go, _ = contest(repo)
    out = ok(repo.path, "resolve", go, "--status", "superseded", "--replacement", RUST)
    assert "Contest closed." in out and "Superseded 1 other" in out
    assert active(repo, "lang") == [(RUST, 0)]
    recall = ok_json(repo.path, "recall", "lang", "--peek")
    lines = recall["text"].splitlines()
    assert lines[0].startswith("Most relevant — Decision [lang]") and "superseded" not in lines[0]
    assert RUST in lines[1] and "(superseded)" not in lines[1]
    assert {i["subject"]: i["labels"] for i in recall["items"][:1]} == {"lang": []}
    assert all(i["labels"] == ["superseded"] for i in recall["items"][1:])
    listing = ok(repo.path, "list-memory", "--kind", "decision")
    assert sum(1 for line in listing.splitlines() if "superseded" not in line and "[lang]" in line) == 1


def test_cli_resolving_one_side_without_a_replacement_leaves_the_other_standing(repo: Repo) -> None:
    """Superseding one side closes the contest; the other side is the one active decision, no longer contested."""
    go, _ = contest(repo)
    out = ok(repo.path, "resolve", go, "--status", "superseded")
    assert "Contest closed." in out
    assert active(repo, "lang") == [(NOT_GO, 0)]


def test_cli_resolve_by_subject_when_uncontested(repo: Repo) -> None:
    """By subject: the active note takes the status; with a replacement, the replacement is the one active note."""
    ok(repo.path, "note", "--kind", "decision", "--subject", "lang", GO)
    ok(repo.path, "resolve", "--subject", "lang", "--status", "superseded", "--replacement", RUST)
    assert active(repo, "lang") == [(RUST, 0)]
    ok(repo.path, "resolve", "--subject", "lang")
    assert active(repo, "lang") == []


def test_cli_resolve_by_subject_on_a_contest(repo: Repo) -> None:
    """By subject a contest is refused without a replacement (it would guess); with one, every side is replaced."""
    contest(repo)
    refused = cortex(repo.path, "resolve", "--subject", "lang")
    assert refused.code == 1 and "open contest" in refused.err
    assert active(repo, "lang") == [(GO, 1), (NOT_GO, 1)]
    ok(repo.path, "resolve", "--subject", "lang", "--status", "superseded", "--replacement", RUST)
    assert active(repo, "lang") == [(RUST, 0)]


def test_mcp_replacing_one_side_leaves_only_the_replacement(repo: Repo, tmp_path: Path) -> None:
    """cortex_resolve over a real MCP client obeys the same rule as the CLI."""
    go, _ = contest(repo)

    async def script(session: ClientSession) -> Any:
        return await session.call_tool(
            "cortex_resolve", {"note_id": go[:8], "status": "superseded", "replacement": RUST})

    result, stray = serve(repo, tmp_path, script)
    assert stray == [] and not result.is_error, text(result)
    assert "Contest closed." in text(result)
    assert active(repo, "lang") == [(RUST, 0)]


def test_mcp_errors_speak_mcp(repo: Repo, tmp_path: Path) -> None:
    """A wrong kind names the parameter and the kinds that exist; engine errors name parameters, never CLI flags."""
    async def script(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("cortex_note", {"kind": "opinion", "content": "x"}),
            await session.call_tool("cortex_note", {"kind": "intent", "content": "x"}),
            await session.call_tool("cortex_resolve", {}),
            await session.call_tool("cortex_resolve", {"note_id": "no-such-note"}),
        ]

    results, stray = serve(repo, tmp_path, script)
    assert stray == [] and all(r.is_error for r in results)
    bad_kind, no_subject, neither, missing = (text(r) for r in results)
    assert "parameter kind must be one of insight, decision, intent, blocker, focus" in bad_kind
    for said in (bad_kind, no_subject, neither, missing):
        assert "pydantic" not in said and "validation error" not in said and "--" not in said
        assert "cortex list-memory" not in said and "\n" not in said
    assert "subject parameter" in no_subject
    assert "note_id" in neither and "subject" in neither


def test_mcp_tool_descriptions_carry_no_docstring_indentation(repo: Repo, tmp_path: Path) -> None:
    """Every tool description is cleandoc'd: no line starts with the docstring's indentation."""
    async def script(session: ClientSession) -> dict[str, str]:
        return {t.name: t.description or "" for t in (await session.list_tools()).tools}

    described, _ = serve(repo, tmp_path, script)
    assert len(described) == 13
    assert [name for name, d in described.items() if any(line.startswith(" ") for line in d.splitlines())] == []


def test_cli_errors_speak_cli_and_usage_exits_2(repo: Repo, tmp_path: Path) -> None:
    """Usage errors exit 2; engine errors name CLI flags and commands, never MCP tools."""
    assert cortex(repo.path, "resolve").code == 2
    assert cortex(repo.path, "edit-memory", "abcdefgh").code == 2
    missing = cortex(tmp_path, "-C", str(tmp_path / "nonexistent"), "store")
    assert missing.code == 1 and missing.err.startswith("cortex: ") and "not a directory" in missing.err
    no_subject = cortex(repo.path, "note", "--kind", "intent", "x")
    assert no_subject.code == 1 and "--subject" in no_subject.err
    contested = contest(repo)
    second = ok(repo.path, "note", "--kind", "decision", "--subject", "lang", "write the service in go again")
    assert "cortex_" not in second
    note = ok(repo.path, "note", "--kind", "decision", "--subject", "db", "use sqlite")
    assert any(line.startswith("id: ") and len(line) > 12 for line in note.splitlines())
    unknown = cortex(repo.path, "inspect-memory", "zzzzzzzzzz")
    assert unknown.code == 1 and "cortex list-memory" in unknown.err
    assert contested


def test_help_is_grouped_and_hides_internals() -> None:
    """`cortex --help` lists commands by group; hook entry points and aliases are not listed; tui/serve take no --json."""
    out = cortex(Path.cwd(), "--help").out
    for title in ("everyday:", "inspection and correction:", "setup:"):
        assert title in out
    listed = {line.split()[0] for line in out.splitlines() if line.startswith("  ") and not line.startswith("   ")}
    assert {"note", "recall", "list-memory", "install"} <= listed
    assert not listed & {"hook", "reflect", "header", "evaluate", "inject-header", "flush-spool", "note-resolve",
                         "install-hooks"}
    assert cortex(Path.cwd(), "tui", "--json").code == 2
    assert cortex(Path.cwd(), "serve", "--json").code == 2


def test_list_memory_kinds_columns_and_prefix_ids(repo: Repo) -> None:
    """--kind decision works, an unknown kind lists the valid ones; rows show scope and labels; 8-char ids work."""
    go, not_go = contest(repo)
    listing = ok(repo.path, "list-memory", "--kind", "decision")
    rows = [line for line in listing.splitlines() if "[lang]" in line]
    assert len(rows) == 2 and all(" main " in r and "[contested]" in r for r in rows)
    assert {r.split()[0] for r in rows} == {go[:8], not_go[:8]}
    assert ok_json(repo.path, "list-memory", "--kind", "note:decision")["total"] == 2
    bad = cortex(repo.path, "list-memory", "--kind", "decisoin")
    assert bad.code == 1 and "decision" in bad.err and "command_failure" in bad.err
    assert go in ok(repo.path, "inspect-memory", go[:8])
    assert cortex(repo.path, "inspect-memory", go[:7]).code == 1
    ok(repo.path, "resolve", go[:8], "--status", "superseded")
    assert active(repo, "lang") == [(NOT_GO, 0)]


def test_ambiguous_prefix_lists_the_candidates(engine: Any) -> None:
    """Two notes sharing an 8-character prefix: the prefix is refused with both candidates named."""
    from cortex_engine.errors import InvalidInput

    engine.note("insight", "first")
    engine.note("insight", "second")
    ids = [r["id"] for r in engine.conn.execute("SELECT id FROM notes")]
    with engine.conn:
        engine.conn.execute("PRAGMA foreign_keys=OFF")
        for n, old in enumerate(ids):
            new = f"abcdefgh-{n}"
            engine.conn.execute("UPDATE notes SET id=? WHERE id=?", (new, old))
            engine.conn.execute("UPDATE memory_items SET id=?, source_id=? WHERE source_id=?", (f"notes:{new}", new, old))
    with pytest.raises(InvalidInput) as refused:
        engine.resolve("abcdefgh")
    assert "abcdefgh-0" in refused.value.message and "abcdefgh-1" in refused.value.message
    with pytest.raises(InvalidInput):
        engine.inspect_memory("abcdefgh")
