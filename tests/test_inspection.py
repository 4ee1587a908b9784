"""Inspection and correction (reference §9.3): list-memory, inspect-memory, edit-memory and delete-memory.

Outputs are read through the real command line (a subprocess in a real git repository); the store is
seeded and its rows are checked through the engine where a subprocess would be clumsy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from cortex_engine.base.errors import InvalidInput
from cortex_engine.engine import Engine
from cortex_engine.memory.notes import extract_item_references
from cortex_engine.store.database import scope_id

from .conftest import NOW, Clock, Repo, git
from .test_cli import TS, fail, held, held_in_process, ok, ok_json

ORDER = "newest first (created_at DESC, rowid DESC)"
ACCESS_TRAILER = (
    "  (showing at most 10; cortex gc also prunes the retrieval log — the access count is the durable figure)"
)


def add_item(
    engine: Engine, item_id: str, text: str, kind: str = "command_run", created_at: str = "2026-08-02T18:00:00.000Z"
) -> None:
    """Insert a memory item with no note behind it (as capture would), with its references extracted."""
    engine.conn.execute(
        "INSERT INTO memory_items(id, scope_type, scope_id, kind, subject, text, state, importance, created_at) "
        "VALUES (?, ?, ?, ?, NULL, ?, 'warm', 0.5, ?)",
        (item_id, engine.scope.type, scope_id(engine.conn, engine.scope.key), kind, text, created_at),
    )
    extract_item_references(engine.conn, item_id, None, text)


def count(engine: Engine, table: str) -> int:
    """Rows in one table."""
    return int(engine.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def item(engine: Engine, item_id: str) -> Any:
    """One memory_items row."""
    return engine.conn.execute("SELECT * FROM memory_items WHERE id=?", (item_id,)).fetchone()


# -- list-memory --------------------------------------------------------------------------------


def test_list_memory_has_no_default_filters(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """Archived items and other branches' items are listed; the state column is padded to the page."""
    main = make_engine(repo.path)
    decision = main.note("decision", "use kafka for the queue engine", "queue engine")
    archived = main.note("insight", "an old insight nobody reads")
    main.conn.execute("UPDATE memory_items SET state='archived' WHERE id=?", (archived.item_id,))
    add_item(main, "command_runs:1", "pytest -q\nexit 1", created_at="2026-08-01T09:00:00.000Z")
    repo.git("checkout", "-q", "-b", "feature")
    feature = make_engine(repo.path)
    other = feature.note("insight", "written on the feature branch")
    assert feature.scope.key != main.scope.key
    page = ok_json(repo.path, "list-memory")
    assert (page["total"], page["filters"], page["order"]) == (4, {}, ORDER)
    by_id = {i["id"]: i for i in page["items"]}
    assert set(by_id) == {decision.item_id, archived.item_id, other.item_id, "command_runs:1"}
    assert (by_id["command_runs:1"]["note_id"], by_id["command_runs:1"]["kind"]) == (None, "command_run")
    assert by_id["command_runs:1"]["text"] == "pytest -q\nexit 1"
    assert by_id[archived.item_id]["state"] == "archived"
    assert by_id[decision.item_id]["scope_key"] == main.scope.key
    assert by_id[other.item_id]["scope_key"] == feature.scope.key
    assert by_id[decision.item_id]["note_id"] == decision.id
    lines = ok(repo.path, "list-memory").splitlines()
    assert lines[0] == f"memory items 1-4 of 4 · {ORDER} · filters: none"
    assert lines[1].split() == ["ID", "TIER", "KIND", "SCOPE", "LABELS", "CREATED", "TEXT"]
    assert lines[-1] == "1         warm      command_run  main     -       2026-08-01 09:00Z  pytest -q"
    assert (
        f"{decision.id[:8]}  warm      decision     main     -       "
        f"{TS}  [queue engine] decision: use kafka for the queue engine" in lines
    )
    assert (
        f"{archived.id[:8]}  archived  insight      main     -       {TS}  insight: an old insight nobody reads"
        in lines
    )
    assert (
        f"{other.id[:8]}  warm      insight      feature  -       {TS}  insight: written on the feature branch" in lines
    )
    only = ok_json(repo.path, "list-memory", "--state", "archived")
    assert [i["id"] for i in only["items"]] == [archived.item_id]


def test_list_memory_rows_header_footer_and_empty_pages(
    repo: Repo, make_engine: Callable[..., Engine], clock: Clock
) -> None:
    """Exact rows and header; the footer prints the next page's command; empty pages say why."""
    engine = make_engine(repo.path)
    first = engine.note("insight", "the porter tokenizer stems queries too")
    clock.advance(minutes=1)
    second = engine.note("decision", "do not use OIDC with server-side sessions", "auth strategy")
    clock.advance(minutes=1)
    long_text = "a long insight " + "word " * 40
    third = engine.note("insight", long_text + "\nsecond line never listed")
    first_line = f"insight: {long_text.strip()}"
    assert len(first_line) > 80
    out = ok(repo.path, "list-memory", "--limit", "2")
    assert (
        out
        == "\n".join(
            [
                f"memory items 1-2 of 3 · {ORDER} · filters: none",
                "ID        TIER  KIND      SCOPE  LABELS  CREATED            TEXT",
                f"{third.id[:8]}  warm  insight   main   -       2026-08-02 18:02Z  {first_line[:79]}…",
                f"{second.id[:8]}  warm  decision  main   -       2026-08-02 18:01Z  "
                "[auth strategy] decision: do not use OIDC with server-side sessions",
                "",
                "next page: cortex list-memory --limit 2 --offset 2",
            ]
        )
        + "\n"
    )
    last = ok(repo.path, "list-memory", "--limit", "2", "--offset", "2")
    assert (
        last
        == "\n".join(
            [
                f"memory items 3-3 of 3 · {ORDER} · filters: none",
                "ID        TIER  KIND     SCOPE  LABELS  CREATED            TEXT",
                f"{first.id[:8]}  warm  insight  main   -       {TS}  insight: the porter tokenizer stems queries too",
            ]
        )
        + "\n"
    )
    assert ok(repo.path, "list-memory", "--offset", "3") == "offset 3 is past the end; 3 item(s) match.\n"
    assert ok(repo.path, "list-memory", "--state", "pinned") == "no items match these filters.\n"


def test_list_memory_kind_and_state_are_comma_split(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """--kind and --state take comma-separated values; the header names the filters."""
    engine = make_engine(repo.path)
    decision = engine.note("decision", "use kafka for the queue engine", "queue engine")
    insight = engine.note("insight", "the tokenizer stems queries")
    blocker = engine.note("blocker", "ci is red on windows", "ci")
    kinds = ok_json(repo.path, "list-memory", "--kind", "note:decision, note:insight")
    assert sorted(i["id"] for i in kinds["items"]) == sorted([decision.item_id, insight.item_id])
    assert kinds["filters"] == {"kind": ["note:decision", "note:insight"]}
    states = ok_json(repo.path, "list-memory", "--state", "hot,archived")
    assert [i["id"] for i in states["items"]] == [blocker.item_id]
    header = ok(repo.path, "list-memory", "--kind", "note:decision,note:blocker", "--state", "warm").splitlines()[0]
    assert header == f"memory items 1-1 of 1 · {ORDER} · filters: kind=note:decision,note:blocker state=warm"


def test_list_memory_scope_is_repeatable_and_never_comma_split(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """A scope key may hold a comma (git allows one in a branch name); --scope takes it whole, and repeats."""
    main = make_engine(repo.path)
    on_main = main.note("insight", "written on main")
    repo.git("checkout", "-q", "-b", "feat,x")
    comma = make_engine(repo.path)
    on_comma = comma.note("insight", "written on the comma branch")
    repo.git("checkout", "-q", "-b", "other")
    make_engine(repo.path).note("insight", "written on another branch")
    assert "," in comma.scope.key
    one = ok_json(repo.path, "list-memory", "--scope", comma.scope.key)
    assert ([i["id"] for i in one["items"]], one["filters"]) == ([on_comma.item_id], {"scope": [comma.scope.key]})
    two = ok_json(repo.path, "list-memory", "--scope", main.scope.key, "--scope", comma.scope.key)
    assert sorted(i["id"] for i in two["items"]) == sorted([on_main.item_id, on_comma.item_id])
    assert two["total"] == 2


def test_list_memory_limit_defaults_to_20_and_caps_at_200(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """20 by default; at most 200 however large a limit; zero, negative or non-numeric limits mean 20."""
    engine = make_engine(repo.path)
    for n in range(205):
        engine.note("insight", f"insight number {n}")
    default = ok_json(repo.path, "list-memory")
    assert (default["total"], default["limit"], len(default["items"])) == (205, 20, 20)
    capped = ok_json(repo.path, "list-memory", "--limit", "500")
    assert (capped["limit"], len(capped["items"])) == (200, 200)
    assert ok_json(repo.path, "list-memory", "--limit", "0")["limit"] == 20
    assert ok_json(repo.path, "list-memory", "--limit", "-5")["limit"] == 20
    assert ok_json(repo.path, "list-memory", "--limit", "lots")["limit"] == 20


def test_list_memory_orders_by_created_at_then_rowid(
    repo: Repo, make_engine: Callable[..., Engine], clock: Clock
) -> None:
    """created_at DESC decides; rowid DESC breaks ties (a later insert with an older time sorts last)."""
    engine = make_engine(repo.path)
    a = engine.note("insight", "first at noon")
    b = engine.note("insight", "second at the same instant")
    clock.now = NOW - timedelta(hours=1)
    c = engine.note("insight", "inserted last, timestamped earlier")
    clock.now = NOW + timedelta(minutes=1)
    d = engine.note("insight", "newest")
    ids = [i["id"] for i in ok_json(repo.path, "list-memory")["items"]]
    assert ids == [d.item_id, b.item_id, a.item_id, c.item_id]


def test_list_memory_pages_by_key_in_the_same_order_as_offsets(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """Keyset pages (start, before, oldest) list exactly what offsets list, ties included, and survive a delete."""
    engine = make_engine(repo.path)
    for n in range(23):  # three items share each timestamp: rowid breaks the ties
        add_item(engine, f"item-{n:02d}", f"run {n}", created_at=f"2026-08-02T{10 + n // 3:02d}:00:00.000Z")
    everything = [i["id"] for i in engine.list_memory(limit=200).items]
    assert len(everything) == 23

    pages, page = [], engine.list_memory(limit=5)
    while True:
        pages.append(([i["id"] for i in page.items], page.offset))
        if page.next is None:
            break
        page = engine.list_memory(limit=5, start=page.next)
    assert pages == [(everything[o : o + 5], o) for o in range(0, 23, 5)]

    last = engine.list_memory(limit=5, oldest=True)
    assert ([i["id"] for i in last.items], last.offset, last.next) == (everything[18:], 18, None)
    back = engine.list_memory(limit=5, before=last.keys[0])
    assert ([i["id"] for i in back.items], back.offset) == (everything[13:18], 13)
    assert back.next == last.keys[0]
    top = engine.list_memory(limit=5, before=engine.list_memory(limit=5).keys[3])
    assert ([i["id"] for i in top.items], top.offset) == (everything[:5], 0)  # fewer than a page newer: the first

    key = engine.memory_key(everything[9])
    assert key is not None and engine.memory_key(everything[9], kinds=["decision"]) is None
    engine.conn.execute("DELETE FROM memory_items WHERE id=?", (everything[9],))
    held = engine.list_memory(limit=5, start=key)  # the item is gone: its key still places the page
    assert ([i["id"] for i in held.items], held.offset) == (everything[10:15], 9)
    assert engine.memory_key(everything[9]) is None
    with pytest.raises(InvalidInput):
        engine.list_memory(limit=5, offset=5, start=key)


def test_list_memory_next_page_command_runs_as_printed(tmp_path: Path, make_engine: Callable[..., Engine]) -> None:
    """A scope key with a space is quoted in the footer, and the footer runs in a shell as printed."""
    path = tmp_path / "my repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "commit", "-q", "--allow-empty", "-m", "init")
    engine = make_engine(path)
    for n in range(3):
        engine.note("insight", f"insight {n} in a spaced path")
    key = engine.scope.key
    assert " " in key
    footer = ok(path, "list-memory", "--scope", key, "--kind", "note:insight", "--limit", "2").splitlines()[-1]
    command = footer.removeprefix("next page: ")
    assert command == f"cortex list-memory --scope {json.dumps(key)} --kind note:insight --limit 2 --offset 2"
    done = subprocess.run(
        ["bash", "-c", 'cortex() { "$CORTEX_PY" -m cortex_engine.adapters.cli "$@"; }; ' + command],
        cwd=path,
        env={**os.environ, "CORTEX_PY": sys.executable},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"memory items 3-3 of 3 · {ORDER} · filters: scope={key} kind=note:insight"


# -- inspect-memory -----------------------------------------------------------------------------


def test_inspect_takes_item_or_note_id_shows_the_contest_and_reads_only(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """Both ids give the same report; counterparts are named and inspectable; nothing is touched."""
    engine = make_engine(repo.path)
    kafka = engine.note("decision", "use kafka for the queue engine", "queue engine")
    other = engine.note("decision", "do not use kafka for the queue engine", "queue engine")
    engine.recall("kafka queue")
    touched = [
        tuple(r) for r in engine.conn.execute("SELECT id, access_count, last_accessed_at, state FROM memory_items")
    ]
    counts = [count(engine, t) for t in ("sessions", "retrieval_log", "token_ledger", "memory_corrections")]
    by_note = ok_json(repo.path, "inspect-memory", kafka.id)
    assert ok_json(repo.path, "inspect-memory", kafka.item_id) == by_note
    assert by_note["id"] == kafka.item_id
    assert by_note["access"]["count"] == 1
    assert by_note["conflict"]["state"] == "contested"
    assert [c["id"] for c in by_note["conflict"]["counterparts"]] == [other.id]
    lines = ok(repo.path, "inspect-memory", by_note["conflict"]["counterparts"][0]["id"]).splitlines()
    assert lines[0] == f"id:         {other.item_id}"
    assert "conflict:   contested — an unresolved contradiction on this subject" in lines
    assert f"  contested with {kafka.id} (decision, {TS})" in lines
    assert [
        tuple(r) for r in engine.conn.execute("SELECT id, access_count, last_accessed_at, state FROM memory_items")
    ] == touched
    assert [count(engine, t) for t in ("sessions", "retrieval_log", "token_ledger", "memory_corrections")] == counts


def test_inspect_prints_the_whole_report(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """Identity, trust, conflict, alternatives, references, access history and the full text, exactly."""
    repo.write("src/auth/oidc.ts")
    repo.commit("oidc")
    engine = make_engine(repo.path)
    note = engine.note(
        "decision",
        "use OIDC via src/auth/oidc.ts",
        "auth strategy",
        ["session cookies (no SSO path)", "JWT-in-localStorage\n(XSS surface)"],
    )
    engine.recall("auth strategy")
    session = engine.current_session()
    assert session is not None
    out = ok(repo.path, "inspect-memory", note.id)
    assert (
        out
        == "\n".join(
            [
                f"id:         {note.item_id}",
                "kind:       Decision (note:decision)",
                "subject:    auth strategy",
                f"scope:      {engine.scope.key}",
                f"session:    {session['id']}",
                f"created:    {TS}",
                "state:      hot (importance 0.90)",
                "trust:      refs OK",
                "",
                "conflict:   none",
                "status:     active",
                "  already rejected: session cookies (no SSO path), JWT-in-localStorage (XSS surface)",
                "",
                "references:",
                "  exists   src/auth/oidc.ts",
                "",
                "access history:",
                f"  count 1, last {TS}",
                f"  {TS}  auth strategy",
                ACCESS_TRAILER,
                "",
                "text:",
                "decision: use OIDC via src/auth/oidc.ts",
                "Subject: auth strategy",
                "Alternatives: session cookies (no SSO path), JWT-in-localStorage (XSS surface)",
            ]
        )
        + "\n"
    )


def test_inspect_judges_references_against_the_checkout_now(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """After `git mv` + commit and `git rm`, inspect (first to run) follows the rename and reports the loss."""
    repo.write("src/a.py", "def load(): pass\n")
    repo.write("src/x.py")
    repo.commit("add")
    engine = make_engine(repo.path)
    note = engine.note("insight", "the loader in src/a.py calls src/x.py")
    engine.close()
    repo.git("mv", "src/a.py", "src/b.py")
    repo.git("rm", "-q", "src/x.py")
    repo.commit("mv and rm")
    lines = ok(repo.path, "inspect-memory", note.id).splitlines()
    assert "trust:      stale refs" in lines
    refs = lines[lines.index("references:") + 1 : lines.index("access history:") - 1]
    assert refs == ["  moved    src/a.py → src/b.py", "  missing  src/x.py"]
    data = ok_json(repo.path, "inspect-memory", note.id)
    assert data["references"] == [
        {
            "path": "src/a.py",
            "verdict": "moved",
            "to": "src/b.py",
            "type": "file",
            "status": "moved",
            "moved_to": "src/b.py",
        },
        {"path": "src/x.py", "verdict": "missing", "to": None, "type": "file", "status": "missing", "moved_to": None},
    ]


def test_inspect_items_without_a_live_note(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """No note: n/a. A vanished note: unknown. A note whose flag and projection disagree: said so."""
    engine = make_engine(repo.path)
    add_item(engine, "command_runs:1", "pytest -q failed in src/app.py")
    assert count(engine, "sessions") == 0
    lines = ok(repo.path, "inspect-memory", "command_runs:1").splitlines()
    assert "conflict:   n/a (no note behind this item)" in lines
    assert lines[lines.index("text:") + 1 :] == ["pytest -q failed in src/app.py"]
    assert count(engine, "sessions") == 0
    orphan = engine.note("insight", "this note row will vanish")
    engine.conn.execute("DELETE FROM notes WHERE id=?", (orphan.id,))
    data = ok_json(repo.path, "inspect-memory", orphan.item_id)
    assert data["conflict"] == {"state": "unknown", "counterparts": [], "orphan": True}
    flagged = engine.note("decision", "use kafka for the queue engine", "queue engine")
    engine.conn.execute("UPDATE notes SET conflict=1 WHERE id=?", (flagged.id,))
    lines = ok(repo.path, "inspect-memory", flagged.id).splitlines()
    start = lines.index("conflict:   contested — an unresolved contradiction on this subject")
    assert lines[start + 1 : start + 4] == [
        "status:     active",
        "  no counterpart found in this scope — the contest may be stale",
        "  ⚠ projection disagrees with the stored note: text reads contested=false, superseded=false",
    ]


# -- edit-memory --------------------------------------------------------------------------------

BAD_EDITS: list[tuple[tuple[str, ...], str]] = [
    (("--text", "the parser moved\nSubject: auth"), "spoofed_trailer"),
    (("--text", "the parser moved\nalternatives: none"), "spoofed_trailer"),
    (("--text", "the parser moved\nCONFLICT: true"), "spoofed_trailer"),
    (("--text", "the parser moved\n  Status: resolved  \n\n \n"), "spoofed_trailer"),
    (("--text", "Status:superseded"), "spoofed_trailer"),
    (("--text", ""), "empty_text"),
    (("--text", "  \n\t \n"), "empty_text"),
    (("--text", "\ufeff \n"), "empty_text"),
    ((), "usage"),
    (("--text", "both", "--file", "edit.txt"), "usage"),
    (("--file", "no-such-file.txt"), "bad_file"),
]


@pytest.mark.parametrize(("argv", "code"), BAD_EDITS, ids=[f"{c}-{i}" for i, (_, c) in enumerate(BAD_EDITS)])
def test_edit_refuses_spoofed_trailers_blank_text_and_bad_arguments(
    repo: Repo, make_engine: Callable[..., Engine], argv: tuple[str, ...], code: str
) -> None:
    """A refused edit changes nothing and writes no audit row."""
    engine = make_engine(repo.path)
    note = engine.note("insight", "the parser lives in src/x.py")
    engine.note("decision", "use kafka for the queue engine", "queue engine")
    before = held_in_process(engine)
    (repo.path / "edit.txt").write_text("from a file\n", encoding="utf-8")
    fail(repo.path, "edit-memory", note.id, *argv, code=code, exit_code=2 if code == "usage" else 1)
    assert held(repo.path) == before
    assert (
        engine.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (note.id,)).fetchone()[0]
        == "the parser lives in src/x.py"
    )
    assert count(engine, "memory_corrections") == 0


def test_edit_rewrites_the_note_keeps_tier_and_access_and_is_audited(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """--text (BOM stripped) and --file replace the note's content; inspect lists every correction."""
    repo.write("src/x.py")
    repo.write("src/y.py")
    engine = make_engine(repo.path)
    note = engine.note("insight", "the parser lives in src/x.py")
    engine.recall("parser")
    state, accesses = item(engine, note.item_id)["state"], item(engine, note.item_id)["access_count"]
    assert (state, accesses) == ("hot", 1)
    data = ok_json(repo.path, "edit-memory", note.id, "--text", "\ufeffthe parser moved to src/y.py, see src/z.py")
    assert (data["id"], data["references"]) == (note.item_id, 2)
    assert (data["prior_text"], data["new_text"]) == (
        "the parser lives in src/x.py",
        "the parser moved to src/y.py, see src/z.py",
    )
    assert data["text"] == (
        f"edited {note.item_id}\nreferences: 2 re-extracted\n"
        "(the prior text is kept in the audit log; see inspect-memory)"
    )
    (repo.path / "fix.txt").write_text("the parser is in src/y.py\nand nowhere else\n", encoding="utf-8")
    out = ok(repo.path, "edit-memory", note.item_id, "--file", "fix.txt")
    assert out == (
        f"edited {note.item_id}\nreferences: 1 re-extracted\n"
        "(the prior text is kept in the audit log; see inspect-memory)\n"
    )
    row = item(engine, note.item_id)
    assert (row["state"], row["access_count"]) == (state, accesses)
    assert row["text"] == "insight: the parser is in src/y.py\nand nowhere else"
    audit = engine.conn.execute(
        "SELECT operation, prior_text, new_text FROM memory_corrections WHERE memory_item_id=? ORDER BY id",
        (note.item_id,),
    ).fetchall()
    assert [tuple(r) for r in audit] == [
        ("edit", "the parser lives in src/x.py", "the parser moved to src/y.py, see src/z.py"),
        ("edit", "the parser moved to src/y.py, see src/z.py", "the parser is in src/y.py\nand nowhere else"),
    ]
    lines = ok(repo.path, "inspect-memory", note.id).splitlines()
    start = lines.index("corrections:")
    assert lines[start + 1 : start + 5] == [
        f"  {TS}  edit",
        "    was: the parser lives in src/x.py",
        f"  {TS}  edit",
        "    was: the parser moved to src/y.py, see src/z.py",
    ]
    assert lines[lines.index("text:") + 1 :] == ["insight: the parser is in src/y.py", "and nowhere else"]


def test_edit_a_non_note_item_rewrites_its_text_and_references(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """An item with no note behind it is edited in place, text kept byte for byte, references re-extracted."""
    engine = make_engine(repo.path)
    add_item(engine, "command_runs:7", "pytest -q failed in src/app.py")
    new = "pytest -q passed\n  after fixing src/app.py and src/util.py"
    data = ok_json(repo.path, "edit-memory", "command_runs:7", "--text", new)
    assert (data["references"], data["prior_text"], data["new_text"]) == (2, "pytest -q failed in src/app.py", new)
    assert item(engine, "command_runs:7")["text"] == new
    paths = [
        r[0]
        for r in engine.conn.execute(
            "SELECT normalized_path FROM memory_references WHERE memory_item_id='command_runs:7' ORDER BY id"
        )
    ]
    assert paths == ["src/app.py", "src/util.py"]


# -- delete-memory ------------------------------------------------------------------------------


def test_delete_previews_by_default_and_deletes_with_yes(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """The preview deletes nothing; --yes deletes the item and its note, audited; the contest ends on both sides."""
    repo.write("src/queue.py")
    engine = make_engine(repo.path)
    kafka = engine.note("decision", "use kafka for the queue engine", "queue engine")
    other = engine.note("decision", "do not use kafka for the queue engine in src/queue.py", "queue engine")
    before = held_in_process(engine)
    preview = ok(repo.path, "delete-memory", other.id)
    assert (
        preview
        == "\n".join(
            [
                "preview only — nothing has been deleted.",
                f"id:         {other.item_id}",
                "kind:       Decision (note:decision)",
                "subject:    queue engine",
                f"scope:      {engine.scope.key}",
                "references: 1 will be removed with it",
                f"source row: notes/{other.id} will be deleted",
                'contest:    deleting this ends the contest on "queue engine"',
                "text:",
                "decision: do not use kafka for the queue engine in src/queue.py",
                "Subject: queue engine",
                "Conflict: true",
                "",
                f"to delete: cortex delete-memory {other.item_id} --yes",
            ]
        )
        + "\n"
    )
    assert ok_json(repo.path, "delete-memory", other.id)["deleted"] is False
    assert held(repo.path) == before
    data = ok_json(repo.path, "delete-memory", other.item_id, "--yes")
    assert (data["deleted"], data["contested"]) == (True, True)
    assert data["message"] == "\n".join(
        [
            f"deleted {other.item_id}",
            f"  source row: notes/{other.id}",
            '  cleared the contest on "queue engine"',
            "  the prior text is kept in the audit log (memory_corrections)",
        ]
    )
    after = held(repo.path)
    assert [row[0] for row in after] == [row[0] for row in before if row[0] != other.item_id] == [kafka.item_id]
    assert after[0][4] == "decision: use kafka for the queue engine\nSubject: queue engine"
    assert engine.conn.execute("SELECT COUNT(*) FROM notes WHERE id=?", (other.id,)).fetchone()[0] == 0
    assert (
        engine.conn.execute(
            "SELECT COUNT(*) FROM memory_references WHERE memory_item_id=?", (other.item_id,)
        ).fetchone()[0]
        == 0
    )
    audit = engine.conn.execute("SELECT operation, prior_text, new_text FROM memory_corrections").fetchall()
    assert [tuple(r) for r in audit] == [("delete", "do not use kafka for the queue engine in src/queue.py", None)]
    survivor = ok_json(repo.path, "inspect-memory", kafka.id)
    assert (survivor["conflict"]["state"], survivor["conflict"]["counterparts"]) == ("none", [])
    assert "Conflict: true" not in survivor["text"]
    recall = ok_json(repo.path, "recall", "queue engine")
    assert [(i["id"], i["labels"]) for i in recall["items"]] == [(kafka.item_id, [])]
    fail(repo.path, "delete-memory", other.id, "--yes", code="not_found")


# -- terminal control characters ----------------------------------------------------------------

ESC_TEXT = "use \x1b[31mred\x1b[0m here\rOVERWRITTEN"
ESC_SUBJECT = "red\x1b[2j zone"
ESC_ALT = "blue\x1b]0;title\x07 zone"


def _has_control(text: str) -> bool:
    return any(ch in text for ch in ("\x1b", "\r", "\x07"))


def test_control_characters_never_reach_the_terminal_and_notes_are_stored_clean(repo: Repo) -> None:
    """ESC, BEL and lone CR never reach the terminal; a note is stored without them (subject, content and
    alternatives), and --json gives exactly what is stored."""
    from cortex_engine.query.render import strip_control

    note = ok_json(
        repo.path, "note", "--kind", "decision", "--subject", ESC_SUBJECT, "--alternative", ESC_ALT, ESC_TEXT
    )
    assert note["content"] == strip_control(ESC_TEXT)
    echo = ok(repo.path, "note", "--kind", "insight", ESC_TEXT)
    listing = ok(repo.path, "list-memory")
    inspected = ok(repo.path, "inspect-memory", note["id"])
    preview = ok(repo.path, "delete-memory", note["id"])
    printed = {"note": echo, "list-memory": listing, "inspect-memory": inspected, "delete-memory": preview}
    assert {name: _has_control(out) for name, out in printed.items()} == dict.fromkeys(printed, False)
    assert "subject:    red zone" in inspected  # escape sequences go whole: no `[2j` or `]0;title` left as text
    assert "  already rejected: blue zone" in inspected
    assert "decision: use red hereOVERWRITTEN" in inspected
    data = ok_json(repo.path, "inspect-memory", note["id"])
    assert data["subject"] == " ".join(strip_control(ESC_SUBJECT).split())
    assert data["text"].split("\n")[0] == f"decision: {strip_control(ESC_TEXT)}"
    assert data["conflict"]["alternatives"] == [strip_control(ESC_ALT)]
    page = ok_json(repo.path, "list-memory")
    stored = {i["id"]: i["text"].split("\n")[0] for i in page["items"]}[note["item_id"]]
    assert stored == f"decision: {strip_control(ESC_TEXT)}"


def test_recall_strips_control_characters_from_subjects(repo: Repo) -> None:
    """Recall prints the subject of a note without its terminal control characters."""
    ok(repo.path, "note", "--kind", "decision", "--subject", ESC_SUBJECT, "keep the zone red")
    out = ok(repo.path, "recall", "zone")
    assert "zone" in out
    assert not _has_control(out)


def test_rewrite_path_replaces_whole_mentions_only() -> None:
    """A mention keeps its `./`, `:line` and punctuation; a longer path that contains the old one is left alone."""
    from cortex_engine.scope.references import rewrite_path

    text = "see src/a.py, ./src/a.py:42 and (src\\a.py); not src/a.pyc, lib/src/a.py, src/a.py.bak or src/a.py-x"
    assert rewrite_path(text, "src/a.py", "pkg/b.py") == (
        "see pkg/b.py, ./pkg/b.py:42 and (pkg/b.py); not src/a.pyc, lib/src/a.py, src/a.py.bak or src/a.py-x",
        3,
    )
    assert rewrite_path("nothing here", "src/a.py", "pkg/b.py") == ("nothing here", 0)


def test_rewrite_moved_rewrites_the_renamed_path_audited(repo: Repo) -> None:
    """`cortex rewrite-moved ID` after `git mv`: the note names the new path, the moved label is gone, the audit
    row (`rewrite-moved`) holds both texts and inspect-memory shows the word diff; running it again is refused."""
    repo.write("src/spool.py", "def flush():\n    pass\n")
    repo.commit("add the spool")
    written = ok_json(
        repo.path,
        "note",
        "--kind",
        "decision",
        "--subject",
        "spool flush",
        "flush from src/spool.py at turn end, see ./src/spool.py:1",
    )
    repo.git("mv", "src/spool.py", "src/capture_spool.py")
    repo.commit("rename the spool")
    before = ok_json(repo.path, "validate-memory")
    assert [i["label"] for i in before["items"]] == ["moved: src/spool.py → src/capture_spool.py"]
    item_id = before["items"][0]["id"]
    done = ok_json(repo.path, "rewrite-moved", written["id"])
    assert (done["id"], done["moves"]) == (
        item_id,
        [{"from": "src/spool.py", "to": "src/capture_spool.py", "count": 2}],
    )
    assert done["message"].startswith(f"rewrote {item_id}: src/spool.py → src/capture_spool.py\n")
    after = ok_json(repo.path, "validate-memory")
    assert [i["label"] for i in after["items"]] == [None] and after["references"]["moved"] == 0
    shown = ok_json(repo.path, "inspect-memory", item_id)
    assert shown["text"].startswith(
        "decision: flush from src/capture_spool.py at turn end, see ./src/capture_spool.py:1"
    )
    (correction,) = shown["corrections"]
    assert (correction["operation"], correction["prior_text"], correction["new_text"]) == (
        "rewrite-moved",
        "flush from src/spool.py at turn end, see ./src/spool.py:1",
        "flush from src/capture_spool.py at turn end, see ./src/capture_spool.py:1",
    )
    assert correction["diff"] == [
        ["=", "flush from "],
        ["-", "src/spool.py"],
        ["+", "src/capture_spool.py"],
        ["=", " at turn end, see "],
        ["-", "./src/spool.py:1"],
        ["+", "./src/capture_spool.py:1"],
    ]
    assert "no moved reference" in fail(repo.path, "rewrite-moved", item_id, code="nothing_moved")["message"]
    fail(repo.path, "rewrite-moved", "no-such-id", code="not_found")


def test_rewrite_moved_refuses_a_memory_changed_since_it_was_shown(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """The text the caller showed is compared before writing: an edit made meanwhile refuses, nothing changes;
    a path named only in the subject is refused too (a subject is the note's identity)."""
    from cortex_engine.base.errors import Refused

    repo.write("src/spool.py", "x = 1\n")
    repo.write("src/ledger.py", "y = 1\n")
    repo.commit("add files")
    engine = make_engine(repo.path)
    note = engine.note("decision", "flush from src/spool.py at turn end", "spool flush")
    only_subject = engine.note("decision", "keep it small", "src/ledger.py layout")
    repo.git("mv", "src/spool.py", "src/capture_spool.py")
    repo.git("mv", "src/ledger.py", "src/book.py")
    repo.commit("rename")
    shown = item(engine, note.item_id)["text"]
    engine.edit_memory(note.item_id, "flush from src/spool.py at turn end, never mid-turn")
    with pytest.raises(Refused) as changed:
        engine.rewrite_moved(note.item_id, expected_text=shown)
    assert changed.value.code == "changed"
    assert item(engine, note.item_id)["text"].startswith(
        "decision: flush from src/spool.py at turn end, never mid-turn"
    )
    with pytest.raises(Refused) as subject:
        engine.rewrite_moved(only_subject.item_id)
    assert subject.value.code == "subject_only"
    ops = [r[0] for r in engine.conn.execute("SELECT operation FROM memory_corrections ORDER BY id")]
    assert ops == ["edit"]
    done = engine.rewrite_moved(note.item_id, expected_text=item(engine, note.item_id)["text"])
    assert done.edit.new_text == "flush from src/capture_spool.py at turn end, never mid-turn"


# -- list-memory filters and sort (the operator narrows the table) -------------------------------------


def test_list_memory_filters_by_label_text_and_sorts(
    repo: Repo, make_engine: Callable[..., Engine], clock: Clock
) -> None:
    """Label filters list exactly what the labels say (any of those asked for); text is a literal substring; every sort
    column has its natural direction, `reverse` flips it, and paging counts only what matches."""
    from cortex_engine.base.errors import InvalidInput

    repo.write("src/gone.py", "x = 1\n")
    repo.write("src/table.py", "".join(f"value_{n} = {n} * 7\n" for n in range(30)))
    repo.commit("files")
    engine = make_engine(repo.path)
    kafka = engine.note("decision", "use kafka for the queue engine", "queue engine")
    clock.advance(minutes=1)
    rabbit = engine.note("decision", "do not use kafka for the queue engine", "queue engine")
    clock.advance(minutes=1)
    old = engine.note("decision", "pool size 10 for Postgres", "pool size")
    clock.advance(minutes=1)
    new = engine.note("decision", "pool size 20 for Postgres", "pool size")  # supersedes `old`
    clock.advance(minutes=1)
    stale = engine.note("insight", "src/gone.py holds the 100%_done flag", None)
    clock.advance(minutes=1)
    drift = engine.note("insight", "the constants at src/table.py:10-12 are tuned", None)
    clock.advance(minutes=1)
    plain = engine.note("insight", "Conflict: true is only a phrase here, Status: superseded too", None)
    (repo.path / "src/gone.py").unlink()
    repo.write(
        "src/table.py", "".join(f"value_{n} = {n} * 7\n" for n in range(30)).replace("value_11 = 11", "value_11 = 1")
    )

    def ids(**kw: Any) -> list[str]:
        return [str(i["id"]) for i in engine.list_memory(limit=200, **kw).items]

    assert ids(labels=["contested"]) == [rabbit.item_id, kafka.item_id]
    assert ids(labels=["superseded"]) == [old.item_id]
    assert ids(labels=["stale"]) == [stale.item_id]
    assert ids(labels=["drifted"]) == [drift.item_id]
    assert ids(labels=["stale", "superseded"]) == [stale.item_id, old.item_id]
    page = engine.list_memory(labels=["contested"], limit=1, offset=1)
    assert (page.total, [i["id"] for i in page.items], page.items[0]["labels"]) == (2, [kafka.item_id], ["contested"])
    assert ids(text="POOL SIZE") == [new.item_id, old.item_id]  # subject or text, any case
    assert ids(text="100%_") == [stale.item_id]  # % and _ are literal characters, not wildcards
    assert ids(text="1%done") == [] and ids(text="10_") == []
    assert ids(text="kafka", labels=["contested"], sort="created", reverse=True) == [kafka.item_id, rabbit.item_id]
    assert ids(sort="created", reverse=True)[:2] == [kafka.item_id, rabbit.item_id]
    by_subject = ids(sort="subject")
    assert by_subject[:4] == [new.item_id, old.item_id, rabbit.item_id, kafka.item_id]  # A→Z, ties newest first
    assert set(by_subject[4:]) == {stale.item_id, drift.item_id, plain.item_id}  # no subject: last
    assert ids(sort="subject", reverse=True)[:2] == [rabbit.item_id, kafka.item_id]
    assert ids(sort="subject", reverse=True)[-3:] == by_subject[-3:]
    engine.conn.execute("UPDATE memory_items SET state='pinned' WHERE id=?", (plain.item_id,))
    engine.conn.execute("UPDATE memory_items SET state='archived' WHERE id=?", (kafka.item_id,))
    assert ids(sort="state")[0] == plain.item_id and ids(sort="state")[-1] == kafka.item_id
    assert ids(sort="state", reverse=True)[0] == kafka.item_id
    for bad, code in (({"labels": ["gone"]}, "bad_label"), ({"sort": "age"}, "bad_sort")):
        with pytest.raises(InvalidInput) as raised:
            engine.list_memory(**bad)
        assert raised.value.code == code


def test_a_sorted_listing_pages_by_key_in_its_own_order(
    repo: Repo, make_engine: Callable[..., Engine], clock: Clock
) -> None:
    """Sorted by subject, a page's `next` key opens the following page in that order, `before` the one above it
    and `oldest` the last; walking every page by key lists each item once, in the order one long page gives."""
    engine = make_engine(repo.path)
    for n, subject in enumerate(["delta", "alpha", "echo", "charlie", "bravo", "foxtrot", "golf"]):
        engine.note("insight", f"note {n} about {subject}", subject)
        clock.advance(minutes=1)
    whole = [i["id"] for i in engine.list_memory(sort="subject", limit=200).items]
    assert len(whole) == 7
    walked, page = [], engine.list_memory(sort="subject", limit=3)
    pages = [page]
    while True:
        walked += [i["id"] for i in page.items]
        if page.next is None:
            break
        page = engine.list_memory(sort="subject", limit=3, start=page.next)
        pages.append(page)
    assert walked == whole and [p.offset for p in pages] == [0, 3, 6]
    back = engine.list_memory(sort="subject", limit=3, before=pages[2].keys[0])
    assert [i["id"] for i in back.items] == whole[3:6] and back.offset == 3
    last = engine.list_memory(sort="subject", limit=3, oldest=True)
    assert [i["id"] for i in last.items] == whole[4:] and last.next is None


def test_list_memory_on_the_command_line_filters_by_label_and_text_and_sorts(repo: Repo) -> None:
    """`cortex list-memory --label --text --sort --reverse`: the engine's filters, on the CLI surface too; an unknown
    label or sort is a one-line error with its code."""
    ok_json(repo.path, "note", "--kind", "decision", "--subject", "queue engine", "use kafka for the queue engine")
    ok_json(
        repo.path, "note", "--kind", "decision", "--subject", "queue engine", "do not use kafka for the queue engine"
    )
    ok_json(repo.path, "note", "--kind", "insight", "--subject", "auth", "tokens expire after an hour")
    contested = ok_json(repo.path, "list-memory", "--label", "contested")
    assert contested["total"] == 2 and all(i["labels"] == ["contested"] for i in contested["items"])
    assert [i["subject"] for i in ok_json(repo.path, "list-memory", "--text", "EXPIRE")["items"]] == ["auth"]
    by_subject = [i["subject"] for i in ok_json(repo.path, "list-memory", "--sort", "subject")["items"]]
    assert (
        by_subject[0] == "auth"
        and ok_json(repo.path, "list-memory", "--sort", "subject", "--reverse")["items"][-1]["subject"] == "auth"
    )
    fail(repo.path, "list-memory", "--label", "gone", code="bad_label")
    fail(repo.path, "list-memory", "--sort", "age", code="bad_sort")
