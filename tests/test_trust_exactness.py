"""What every path says must be so — resolution and supersession, labels, reading vs booking, ids.

CLI behaviour runs the real `cortex` command line as a subprocess; MCP behaviour a real client over stdio;
the TUI's resolve dialog runs under Textual's pilot (see test_tui_behaviour.py for the dialog's own tests).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from cortex_engine.base import labels
from cortex_engine.engine import describe_store
from cortex_engine.query.render import clip, inspect_pointer

from .conftest import Repo, Served
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
        return [
            (r["content"], r["conflict"])
            for r in conn.execute(
                "SELECT content, conflict FROM scoped_notes WHERE "
                "subject=? AND status='active' ORDER BY timestamp, rowid",
                (subject,),
            )
        ]
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


def test_mcp_replacing_one_side_leaves_only_the_replacement(served: Served) -> None:
    """cortex_resolve over a real MCP client obeys the same rule as the CLI."""
    repo = served.repo  # the only test on the shared server that notes on `lang`
    go, _ = contest(repo)

    async def script(session: ClientSession) -> Any:
        return await session.call_tool(
            "cortex_resolve", {"note_id": go[:8], "status": "superseded", "replacement": RUST}
        )

    result, stray = served.run(script)
    assert stray == [] and not result.is_error, text(result)
    assert "Contest closed." in text(result)
    assert active(repo, "lang") == [(RUST, 0)]


def test_mcp_errors_speak_mcp(served: Served) -> None:
    """A wrong kind names the parameter and the kinds that exist; engine errors name parameters, never CLI flags."""

    async def script(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("cortex_note", {"kind": "opinion", "content": "x"}),
            await session.call_tool("cortex_note", {"kind": "intent", "content": "x"}),
            await session.call_tool("cortex_resolve", {}),
            await session.call_tool("cortex_resolve", {"note_id": "no-such-note"}),
        ]

    results, stray = served.run(script)
    assert stray == [] and all(r.is_error for r in results)
    bad_kind, no_subject, neither, missing = (text(r) for r in results)
    assert "parameter kind must be one of insight, decision, intent, blocker, focus" in bad_kind
    for said in (bad_kind, no_subject, neither, missing):
        assert "pydantic" not in said and "validation error" not in said and "--" not in said
        assert "cortex list-memory" not in said and "\n" not in said
    assert "subject parameter" in no_subject
    assert "note_id" in neither and "subject" in neither


def test_mcp_tool_descriptions_carry_no_docstring_indentation(served: Served) -> None:
    """Every tool description is cleandoc'd: no line starts with the docstring's indentation."""

    async def script(session: ClientSession) -> dict[str, str]:
        return {t.name: t.description or "" for t in (await session.list_tools()).tools}

    described, _ = served.run(script)
    assert len(described) == 14  # the seed's 13 and cortex_reanchor
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


def test_help_is_grouped_and_hides_internals(tmp_path: Path) -> None:
    """`cortex --help` lists commands by group; hook entry points and aliases are not listed; tui/serve take no
    --json."""
    out = cortex(tmp_path, "--help").out
    for title in ("everyday:", "inspection and correction:", "setup:"):
        assert title in out
    listed = {line.split()[0] for line in out.splitlines() if line.startswith("  ") and not line.startswith("   ")}
    assert {"note", "recall", "list-memory", "install"} <= listed
    assert not listed & {
        "hook",
        "reflect",
        "header",
        "evaluate",
        "inject-header",
        "flush-spool",
        "note-resolve",
        "install-hooks",
    }
    assert cortex(tmp_path, "tui", "--json").code == 2
    assert cortex(tmp_path, "serve", "--json").code == 2


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
    from cortex_engine.base.errors import InvalidInput

    engine.note("insight", "first")
    engine.note("insight", "second")
    ids = [r["id"] for r in engine.conn.execute("SELECT id FROM notes")]
    with engine.conn:
        engine.conn.execute("PRAGMA foreign_keys=OFF")
        for n, old in enumerate(ids):
            new = f"abcdefgh-{n}"
            engine.conn.execute("UPDATE notes SET id=? WHERE id=?", (new, old))
            engine.conn.execute("UPDATE memory_items SET id=? WHERE id=?", (f"notes:{new}", f"notes:{old}"))
    with pytest.raises(InvalidInput) as refused:
        engine.resolve("abcdefgh")
    assert "abcdefgh-0" in refused.value.message and "abcdefgh-1" in refused.value.message
    with pytest.raises(InvalidInput):
        engine.inspect_memory("abcdefgh")


def item_row(repo: Repo, note_id: str) -> sqlite3.Row:
    """The memory item of a note, as stored."""
    conn = store(repo)
    try:
        return conn.execute("SELECT * FROM memory_items WHERE id=?", (f"notes:{note_id}",)).fetchone()
    finally:
        conn.close()


def test_a_recalled_superseded_decision_never_leads_its_replacement(repo: Repo) -> None:
    """kafka recalled often, then replaced by NATS: recall puts NATS first and the lead names it, labels and all."""
    kafka = ok_json(
        repo.path, "note", "--kind", "decision", "--subject", "queue engine", "use kafka for the queue engine"
    )
    for _ in range(4):
        ok(repo.path, "recall", "kafka", "queue", "engine")
    ok(repo.path, "resolve", kafka["id"][:8], "--status", "superseded", "--replacement", "use NATS instead")
    recall = ok_json(repo.path, "recall", "kafka", "queue", "engine")
    lines = recall["text"].splitlines()
    assert "NATS" in lines[1] and "(superseded)" not in lines[1], recall["text"]
    assert lines[0] == "Most relevant — Decision [queue engine] (today, no file refs)"
    assert "kafka" in lines[2] and lines[2].endswith("(superseded)")
    assert [i["labels"] for i in recall["items"]] == [[], ["superseded"]]


def test_a_superseded_lead_says_so(repo: Repo) -> None:
    """When only a superseded note matches, the lead line carries its label."""
    kafka = ok_json(
        repo.path, "note", "--kind", "decision", "--subject", "queue engine", "use kafka for the queue engine"
    )
    ok(repo.path, "resolve", kafka["id"], "--status", "superseded")
    lead = ok_json(repo.path, "recall", "kafka", "--peek")["text"].splitlines()[0]
    assert lead.startswith("Most relevant — Decision [queue engine]") and lead.endswith("(superseded)")


def test_superseding_demotes_one_tier(repo: Repo) -> None:
    """A superseded decision sits one tier below where it was (hot → warm)."""
    first = ok_json(
        repo.path, "note", "--kind", "decision", "--subject", "queue engine", "use kafka for the queue engine"
    )
    ok(repo.path, "recall", "kafka")  # a read makes it hot
    assert item_row(repo, first["id"])["state"] == "hot"
    ok(repo.path, "note", "--kind", "decision", "--subject", "queue engine", "use NATS for the queue engine")
    row = item_row(repo, first["id"])
    assert "Status: superseded" in row["text"] and row["state"] == "warm"
    # An hour later the tier refresh re-derives every tier: the superseded note still sits one below its score.
    assert cortex(repo.path, "recall", "kafka", "--peek", now="2026-08-02T19:00:00Z").code == 0
    assert item_row(repo, first["id"])["state"] == "warm"


def test_reads_never_reheat_superseded_or_stale_items(repo: Repo) -> None:
    """A recall that shows a superseded note and a stale one books the read but leaves both untouched."""
    repo.write("src/worker.py")
    repo.commit("add worker")
    old = ok_json(
        repo.path, "note", "--kind", "decision", "--subject", "queue engine", "use kafka for the queue engine"
    )
    ok(repo.path, "note", "--kind", "decision", "--subject", "queue engine", "use NATS for the queue engine")
    stale = ok_json(repo.path, "note", "--kind", "insight", "the queue worker lives in src/worker.py")
    (repo.path / "src" / "worker.py").unlink()
    repo.commit("drop worker")
    ok(repo.path, "recall", "queue", "kafka", "worker", "--peek")  # tiers refreshed first: only the read differs below
    before = {i: dict(item_row(repo, i)) for i in (old["id"], stale["id"])}
    recall = ok_json(repo.path, "recall", "queue", "kafka", "worker")
    shown = {i["id"]: i["labels"] for i in recall["items"]}
    assert shown[f"notes:{old['id']}"] == ["superseded"]
    assert any(label.startswith("stale:") for label in shown[f"notes:{stale['id']}"])
    for note_id, was in before.items():
        now = dict(item_row(repo, note_id))
        assert (now["access_count"], now["last_accessed_at"], now["state"]) == (
            was["access_count"],
            was["last_accessed_at"],
            was["state"],
        )


def test_peek_and_session_brief_book_nothing(repo: Repo) -> None:
    """--peek on recall/brief/state and session-brief leave the ledger, the retrieval log and the access counts
    alone."""
    note = ok_json(repo.path, "note", "--kind", "blocker", "--subject", "ci", "ci is red on windows")

    def counts() -> tuple[int, int, int]:
        conn = store(repo)
        try:
            return (
                conn.execute("SELECT COUNT(*) FROM token_ledger").fetchone()[0],
                conn.execute("SELECT COUNT(*) FROM retrieval_log").fetchone()[0],
                conn.execute("SELECT access_count FROM memory_items WHERE id=?", (f"notes:{note['id']}",)).fetchone()[
                    0
                ],
            )
        finally:
            conn.close()

    before = counts()
    for argv in (("recall", "ci", "--peek"), ("brief", "ci", "--peek"), ("state", "--peek"), ("session-brief",)):
        assert ok(repo.path, *argv)
    assert counts() == before
    ok(repo.path, "recall", "ci")
    assert counts() != before


def test_temporal_intent_prefers_old_items_when_asked(repo: Repo) -> None:
    """'history'/'previously'/'old' in a topic lift the older of two equally matching notes above the newer."""
    assert (
        cortex(
            repo.path,
            "note",
            "--kind",
            "insight",
            "the billing export job retries three times",
            now="2026-05-01T09:00:00Z",
        ).code
        == 0
    )
    ok(repo.path, "note", "--kind", "insight", "the billing export job retries five times")
    plain = ok_json(repo.path, "recall", "billing", "export", "--peek")["text"].splitlines()
    assert "five" in plain[1]
    for word in ("history", "old"):
        asked = ok_json(repo.path, "recall", "billing", "export", word, "--peek")["text"].splitlines()
        assert "three" in asked[1], (word, asked)


# -- 2. every label on every surface ---------------------------------------------------------------

SEEDED = {
    "ship": "ship the billing release on fridays",
    "no-ship": "do not ship the billing release on fridays",
    "kafka": "use kafka for the billing queue",
    "nats": "use nats for the billing queue",
    "moved": "billing totals are computed in src/old_name.py",
    "stale": "billing tests fail in src/gone.py",
    "export": "finish the billing export",
    "flake": "billing flake on ci",
}
LABEL_FORMS = ("[contested]", "(superseded)", "(resolved)", "[stale: ", "[moved: ")


def rendered(label: str) -> str:
    """How a label reads on a line."""
    return {"contested": "[contested]", "superseded": "(superseded)", "resolved": "(resolved)"}.get(label, f"[{label}]")


def seed_labels(repo: Repo, engine: Any) -> dict[str, str]:
    """One item per label (contested ×2, superseded, moved, stale, resolved) plus plain ones; key → item id."""
    repo.write("src/old_name.py", "def totals():\n    return sum(range(10))\n")
    repo.write("src/gone.py", "def test_billing():\n    assert False\n")
    repo.commit("files")
    ids = {
        "ship": engine.note("decision", SEEDED["ship"], "deploy day").item_id,
        "no-ship": engine.note("decision", SEEDED["no-ship"], "deploy day").item_id,
        "kafka": engine.note("decision", SEEDED["kafka"], "billing queue").item_id,
        "moved": engine.note("insight", SEEDED["moved"]).item_id,
        "stale": engine.note("blocker", SEEDED["stale"], "billing ci").item_id,
        "export": engine.note("intent", SEEDED["export"], "billing export").item_id,
        "flake": engine.note("blocker", SEEDED["flake"], "flaky").item_id,
    }
    ids["nats"] = "notes:" + str(
        engine.resolve(ids["kafka"], status="superseded", replacement=SEEDED["nats"]).replacement_id
    )
    engine.resolve(ids["flake"])
    repo.git("mv", "src/old_name.py", "src/new_name.py")
    (repo.path / "src" / "gone.py").unlink()
    repo.commit("move and drop")
    return ids


def check_labels(
    surface: str, text: str, items: list[dict] | None, oracle: dict[str, list[str]], keys: dict[str, str]
) -> int:
    """Every label of a shown item is on its line, and every label on a line is the item's; returns labels seen."""
    seen = 0
    for line in (segment for whole in text.splitlines() for segment in whole.split(" | ")):
        if line.startswith("Most relevant — "):
            continue
        found = [key for key, content in SEEDED.items() if content in line and key in keys]
        found = [
            k for k in found if not any(SEEDED[k] in SEEDED[o] and k != o for o in found)
        ]  # "do not ship" ⊃ "ship"
        assert len(found) <= 1, (surface, line)
        if not found:
            continue
        want = {rendered(label) for label in oracle[keys[found[0]]]}
        for form in want:
            assert form in line, (surface, line, want)
        for form in LABEL_FORMS:
            for at in [i for i in range(len(line)) if line.startswith(form, i)]:
                end = line.index("]", at) + 1 if form.startswith("[") else at + len(form)
                assert line[at:end] in want, (surface, line, want)
        seen += len(want)
    for item in items if items is not None else []:
        if item["id"] not in oracle:
            continue
        assert item["labels"] == oracle[item["id"]], (surface, item)
        key = next(k for k, v in keys.items() if v == item["id"])
        assert any(SEEDED[key] in line and not line.startswith("Most relevant") for line in text.splitlines()), (
            surface,
            item,
        )
    return seen


def test_every_label_on_every_surface(repo: Repo, engine: Any, tmp_path: Path) -> None:
    """Property over recall, brief, state, session brief, header, whisper, subagent brief and the MCP tools: the labels
    on an item's line are exactly the labels of that item (as list-memory's labels column states them)."""
    import json

    keys = seed_labels(repo, engine)
    oracle = {i["id"]: i["labels"] for i in ok_json(repo.path, "list-memory", "--limit", "200")["items"]}
    assert {k: oracle[v] for k, v in keys.items()} == {
        "ship": ["contested"],
        "no-ship": ["contested"],
        "kafka": ["superseded"],
        "nats": [],
        "moved": ["moved: src/old_name.py → src/new_name.py"],
        "stale": ["stale: missing src/gone.py"],
        "export": [],
        "flake": ["resolved"],
    }
    seen: dict[str, int] = {}
    for name, argv in (
        ("recall", ("recall", "billing", "--budget", "2000")),
        ("brief", ("brief", "billing", "--budget", "2000")),
        ("state", ("state", "--budget", "2000")),
        ("session brief", ("session-brief", "--budget", "400")),
        ("header", ("header",)),
    ):
        data = ok_json(repo.path, *argv) if name != "session brief" else ok_json(repo.path, "session-brief")
        seen[name] = check_labels(name, data["text"], data["items"], oracle, keys)
    whisper = json.loads(ok(repo.path, "reflect", "--event", "edit", "--file", "src/old_name.py", "--json"))
    seen["whisper"] = check_labels("whisper", whisper["hookSpecificOutput"]["additionalContext"], None, oracle, keys)
    sub = engine.brief_for_subagent("billing release and queue", "general-purpose", "", engine.ensure_session())
    seen["subagent brief"] = check_labels("subagent brief", sub, None, oracle, keys)

    async def script(session: ClientSession) -> list[str]:
        return [
            text(await session.call_tool("cortex_recall", {"topic": "billing", "budget": 2000})),
            text(await session.call_tool("cortex_brief", {"topic": "billing", "budget": 2000})),
            text(await session.call_tool("cortex_state", {"budget": 2000})),
        ]

    for name, said in zip(("mcp recall", "mcp brief", "mcp state"), serve(repo, tmp_path, script)[0], strict=True):
        seen[name] = check_labels(name, said, None, oracle, keys)
    assert [name for name, count in seen.items() if count == 0] == [], seen


def test_an_open_contest_always_leads_the_session_brief(repo: Repo, clock: Any, make_engine: Any) -> None:
    """A cold, month-old contest still opens the SessionStart brief, marked, ahead of hotter notes."""
    from datetime import timedelta

    clock.now -= timedelta(days=40)
    old = make_engine(repo.path)
    old.note("decision", "ship the billing release on fridays", "deploy day")
    old.note("decision", "do not ship the billing release on fridays", "deploy day")
    clock.now += timedelta(days=40)
    engine = make_engine(repo.path)
    for n in range(5):
        engine.note("blocker", f"integration suite {n} fails on arm runners", f"arm runner {n}")
        engine.recall(f"arm runner {n}")
    brief = ok_json(repo.path, "session-brief")
    bullets = [line for line in brief["text"].splitlines() if line.startswith("- [")]
    assert len(bullets) >= 3
    assert all(line.endswith("[contested]") and "billing release" in line for line in bullets[:2]), brief["text"]
    assert [i["labels"] for i in brief["items"][:2]] == [["contested"], ["contested"]]


def test_deleting_the_focus_note_removes_the_focus_everywhere(repo: Repo, engine: Any) -> None:
    """delete-memory on the focus note: brief, header and stats stop naming it."""
    engine.note("insight", "the batch size is 500")
    focus = engine.note("focus", "speed up the batching", "batching")
    engine.flush_spool()
    from cortex_engine.capture import consolidation

    consolidation.sync_branch_snapshot(engine.conn, engine.scope, engine.now())
    engine.conn.commit()
    assert "Focus: batching" in ok(repo.path, "brief", "batch")
    ok(repo.path, "delete-memory", focus.id, "--yes")
    assert "batching" not in ok(repo.path, "brief", "batch").replace("batch size", "")
    assert "Focus: batching" not in ok(repo.path, "header") and "Cortex: batching" not in ok(repo.path, "header")
    assert ok_json(repo.path, "stats")["focus"] is None


# -- 4. the operator's commands -------------------------------------------------------------------


def test_install_project_after_a_note_is_not_a_failure(repo: Repo, bin_path: Path) -> None:
    """`cortex note` before the first session, then `install --scope project`: complete, and exit 0."""
    ok(repo.path, "note", "--kind", "insight", "notes may come before the first session")
    run = cortex(repo.path, "install", "--scope", "project")
    assert "Install complete." in run.out
    assert run.code == 0, run.out + run.err


def test_eval_gate_outside_the_project_says_where_it_runs(repo: Repo) -> None:
    """In a user's repository the gate prints one line saying where it must run, not a page of FAILs."""
    run = cortex(repo.path, "eval-gate")
    assert run.code == 1 and run.out == ""
    assert run.err.count("\n") == 1 and "Cortex source tree" in run.err


def test_suggest_notes_and_search_ledger_print_text(repo: Repo) -> None:
    """suggest-notes prints text unless --json; search-ledger says what its verdict means."""
    ok(repo.path, "note", "--kind", "insight", "a session exists once something is noted")
    out = ok(repo.path, "suggest-notes")
    assert not out.lstrip().startswith("{") and ("suggest" in out.lower() or "worth saving" in out)
    assert "session_id" in ok_json(repo.path, "suggest-notes")
    said = ok(repo.path, "search-ledger", "deriveReadKey")
    assert said.startswith('"deriveReadKey"') and "run it" in said


@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_tui_resolve_dialog_says_what_the_engine_does_and_the_freshness_pane_names_its_units(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Pilot: the dialog's promise (keep one → the other superseded; a replacement → every side superseded) holds
    in the store after Keep B; the freshness title and footer both count memories, each saying so."""
    from cortex_engine.ops.demo import seed_demo
    from cortex_tui.dialogs.resolve_dialog import ResolveDialog
    from cortex_tui.widgets.freshness_pane import FreshnessPane

    from .test_tui_behaviour import FLUSH, NO_FLUSH, drive, spool_notes
    from .test_tui_snapshots import NOW_ISO, settle

    monkeypatch.setenv("CORTEX_NOW", NOW_ISO)
    demo = seed_demo(str(tmp_path / "demo-service"))
    said: dict[str, str] = {}

    async def steps(app: Any, pilot: Any, notes: Any) -> None:
        pane = app.screen.query_one(FreshnessPane)
        said["title"], said["footer"] = str(pane.border_title), str(pane.border_subtitle)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, ResolveDialog)
        said["help"] = str(app.screen.query_one("#resolve-help").render())
        await pilot.click("#keep-b")
        await settle(pilot)

    drive(demo, steps)
    assert "the other is marked superseded" in said["help"] and "every side is superseded by it" in said["help"]
    sides = spool_notes(demo)
    assert {c: (r["status"], r["conflict"]) for c, r in sides.items()} == {
        FLUSH: ("superseded", 0),
        NO_FLUSH: ("active", 0),
    }
    assert "memories:" in said["title"] and "memories checked" in said["footer"]


EVERY_LABEL = [
    labels.CONTESTED,
    labels.SUPERSEDED,
    labels.RESOLVED,
    labels.origin(labels.SHARED),
    labels.origin(f"{labels.FROM} feature/pool-retry"),
    *(labels.reference(f"{verdict}: src/pool.py:connect changed") for verdict in labels.REFERENCE_VERDICTS),
]


@pytest.mark.parametrize(
    "label", [*EVERY_LABEL, " ".join(EVERY_LABEL[i] for i in (0, 4, 5)), " ".join(EVERY_LABEL[i] for i in (2, 3, 6))]
)
def test_a_cut_line_keeps_every_label_whole(label: str) -> None:
    """A line too long for its room is cut before the labels Cortex appended, never through them: every label of
    the vocabulary, the origins and freshness verdicts included (a drifted line once lost its label when cut,
    and a promoted, contested, stale decision kept only `[stale: …]`)."""
    line = "the pool reconnects with backoff " * 12 + label
    cut = clip(line, 120, inspect_pointer("abcd1234"))
    assert cut.endswith(" " + label) and "…" in cut and len(cut) <= 120


def test_a_promoted_contested_stale_decision_keeps_every_label_at_budget_60(
    repo: Repo, make_engine: Any, clock: Any
) -> None:
    """End to end: recall at budget 60 of a decision promoted from a merged branch, contested and
    stale shows `[contested]`, `(from <branch>)` and `[stale: …]`, as its JSON item does."""
    repo.write("src/q.py")
    repo.commit("q")
    make_engine(repo.path).note("decision", "do not use redis for the queue retries", "retries")
    repo.git("checkout", "-q", "-b", "feature-q")
    clock.advance(minutes=1)
    make_engine(repo.path).note(
        "decision", "use redis for the queue retries in src/q.py " + "with jitter " * 30, "retries"
    )
    repo.write("src/q_retry.py")
    repo.commit("retry")
    make_engine(repo.path).flush_spool()
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge feature-q", "feature-q")
    make_engine(repo.path).check_merges()
    repo.git("rm", "-q", "src/q.py")
    repo.commit("drop q")
    data = ok_json(repo.path, "recall", "jitter", "--budget", "60")
    item = next(i for i in data["items"] if "from feature-q" in i["labels"])
    assert set(item["labels"]) == {"contested", "from feature-q", "stale: missing src/q.py"}
    line = next(line for line in data["text"].splitlines() if line.startswith("Decision ["))
    assert line.endswith(" [contested] (from feature-q) [stale: missing src/q.py]"), data["text"]
