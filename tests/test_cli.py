"""The `cortex` command line, driven as a real subprocess in a real git repository (the CLI's contract: exit
codes, --json shapes, one `cortex:` error line).

Every command runs `python -m cortex_engine.adapters.cli` with the repository as its working directory, the
temp HOME/CORTEX_HOME of the autouse fixture, and CORTEX_NOW pinned so timestamps are deterministic.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cortex_engine.engine import Engine

from .conftest import ROOT, Repo, Run, run_in_process

NOW_ISO = "2026-08-02T18:00:00Z"
TS = "2026-08-02 18:00Z"


# -- helpers ------------------------------------------------------------------------------------


def cortex(cwd: Path, *args: str, now: str = NOW_ISO) -> Run:
    """The command line in `cwd` with the test's environment and a pinned clock, run in this process (a process per
    call cost a third of a CPU-second); `cortex_process` starts the real executable where the process is the point."""
    return run_in_process(cwd, list(args), {"CORTEX_NOW": now})


def cortex_process(cwd: Path, *args: str, now: str = NOW_ISO) -> Run:
    """Run the real command line in `cwd` as its own process with the test's environment and a pinned clock."""
    # PYTHONPATH: this checkout's code, not whichever checkout the environment's editable install points at.
    env = {**os.environ, "CORTEX_NOW": now, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", *args], cwd=cwd, env=env, capture_output=True, timeout=60
    )
    return Run(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))


def ok(cwd: Path, *args: str) -> str:
    """stdout of a command that must succeed silently on stderr."""
    run = cortex(cwd, *args)
    assert run.code == 0, run.err
    assert run.err == ""
    return run.out


def ok_json(cwd: Path, *args: str) -> Any:
    """The parsed `--json` output of a command that must succeed."""
    return json.loads(ok(cwd, *args, "--json"))


def fail(cwd: Path, *args: str, code: str, exit_code: int = 1) -> dict[str, Any]:
    """Run with --json a command that must fail: one `cortex:` line on stderr, the error object on stdout."""
    run = cortex(cwd, *args, "--json")
    assert run.code == exit_code, (run.code, run.out, run.err)
    assert run.err.endswith("\n")
    lines = run.err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("cortex: ")
    payload = run.data()
    assert payload["error"] == code
    assert payload["message"] == lines[0][len("cortex: ") :]
    return payload


def _identity(page: dict[str, Any]) -> list[tuple[Any, ...]]:
    assert page["total"] == len(page["items"])
    return sorted((i["id"], i["note_id"], i["kind"], i["subject"], i["text"]) for i in page["items"])


def held(cwd: Path) -> list[tuple[Any, ...]]:
    """What the store holds, as list-memory --json reports it (identity and text of every item)."""
    return _identity(ok_json(cwd, "list-memory", "--limit", "200"))


def held_in_process(engine: Engine) -> list[tuple[Any, ...]]:
    """The same view as `held`, read through the engine (the payload `list-memory --json` prints)."""
    return _identity(json.loads(json.dumps(engine.list_memory(limit=200).to_dict())))


def without_final_newline(out: str) -> str:
    """Plain stdout minus its final newline."""
    assert out.endswith("\n")
    return out[:-1]


def store_files(db: Path) -> list[Path]:
    """The store database and its WAL side files."""
    return [db, Path(f"{db}-wal"), Path(f"{db}-shm")]


def snapshot(files: list[Path]) -> dict[Path, bytes | None]:
    """The bytes of each file (None when absent)."""
    return {f: f.read_bytes() if f.exists() else None for f in files}


def restore(saved: dict[Path, bytes | None]) -> None:
    """Put each file back exactly as it was snapshotted."""
    for path, body in saved.items():
        if body is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(body)


def note_id(cwd: Path, kind: str, text: str, subject: str | None = None) -> str:
    """Write a note through the CLI and return its id."""
    args = ["note", "--kind", kind, *(["--subject", subject] if subject else []), text]
    return str(ok_json(cwd, *args)["id"])


@dataclass(frozen=True)
class Seeded:
    """A repository whose store holds a contested pair and an insight, and what it held when closed."""

    path: Path
    db: Path
    before: list[tuple[Any, ...]]


@pytest.fixture
def seeded(repo: Repo, make_engine: Callable[..., Engine]) -> Seeded:
    """The repo with three notes (a contested pair and an insight) written in-process, store closed."""
    engine = make_engine(repo.path)
    engine.note("decision", "use kafka for the queue engine", "queue engine")
    engine.note("decision", "do not use kafka for the queue engine", "queue engine")
    engine.note("insight", "the porter tokenizer stems queries too")
    before = held_in_process(engine)
    engine.close()
    assert len(before) == 3
    return Seeded(repo.path, engine.identity.db_path, before)


# -- the harness ------------------------------------------------------------------------------------


def test_the_cli_in_this_process_prints_what_its_own_process_prints(repo: Repo) -> None:
    """The in-process runner the tests use stands for the real executable: a write, a plain read, a JSON read and
    a refused command give the same exit code, stdout and stderr both ways (on a store in the same state)."""
    commands = [
        ("note", "--kind", "decision", "--subject", "queue", "use kafka for the queue"),
        ("recall", "queue"),
        ("list-memory", "--json"),
        ("inspect-memory", "no-such-item", "--json"),
    ]
    for args in commands:
        in_process = cortex(repo.path, *args)
        if args[0] == "note":  # a write: the second run writes a second note, so compare its shape, not its id
            assert in_process.code == 0 and in_process.err == ""
            continue
        assert cortex_process(repo.path, *args) == in_process, args
    refused = cortex_process(repo.path, "inspect-memory", "no-such-item", "--json")
    assert refused.code == 1 and refused.err.startswith("cortex: ")


# -- note -----------------------------------------------------------------------------------------


def test_note_prints_the_confirmation_and_json_gives_the_id(repo: Repo) -> None:
    """Plain `note` prints the MCP confirmation line; --json gives the id, the item id and the same text."""
    out = ok(repo.path, "note", "--kind", "decision", "--subject", "Queue  Engine", "use kafka for the queue engine")
    first, id_line = out.splitlines()
    assert first == f"Noted (decision[queue engine]) [{TS}]: use kafka for the queue engine"
    assert id_line.startswith("id: ") and len(id_line) == len("id: ") + 36
    data = ok_json(repo.path, "note", "--kind", "insight", "the porter tokenizer stems queries too")
    assert data["conflicts"] == []
    assert data["item_id"] == f"notes:{data['id']}"
    assert data["text"] == f"Noted (insight) [{TS}]: the porter tokenizer stems queries too\nid: {data['id']}"
    listed = {i["note_id"]: i for i in ok_json(repo.path, "list-memory")["items"]}
    assert listed[data["id"]]["text"] == "insight: the porter tokenizer stems queries too"
    assert len(listed) == 2


def test_note_reports_the_contest_with_the_opposed_note_id(repo: Repo) -> None:
    """A note opposing an active decision names it, in --json `conflicts` and in the plain contest report."""
    first = note_id(repo.path, "decision", "use kafka for the queue engine", "queue engine")
    data = ok_json(
        repo.path, "note", "--kind", "decision", "--subject", "queue engine", "do not use kafka for the queue engine"
    )
    assert [c["id"] for c in data["conflicts"]] == [first]
    report = [
        "Contested — opposes 1 active decision on this subject. Both sides are now marked contested:",
        f"  - {first} [{TS}]: use kafka for the queue engine",
        "Close it with: cortex resolve <id> once you know which one holds.",
    ]
    assert data["text"] == "\n".join(
        [f"Noted (decision[queue engine]) [{TS}]: do not use kafka for the queue engine", f"id: {data['id']}", *report]
    )
    out = ok(
        repo.path, "note", "--kind", "decision", "--subject", "queue engine", "never use kafka for the queue engine"
    )
    lines = out.splitlines()
    assert lines[0] == f"Noted (decision[queue engine]) [{TS}]: never use kafka for the queue engine"
    assert lines[2:] == report


def test_note_alternatives_are_repeatable_and_shown_as_rejected(repo: Repo) -> None:
    """Each --alternative is kept; recall and inspect print them as already rejected."""
    nid = ok_json(
        repo.path,
        "note",
        "--kind",
        "decision",
        "--subject",
        "auth",
        "--alternative",
        "session cookies (no SSO path)",
        "--alternative",
        "JWT-in-localStorage (XSS surface)",
        "use OIDC for auth",
    )["id"]
    inspected = ok_json(repo.path, "inspect-memory", nid)
    assert inspected["conflict"]["alternatives"] == [
        "session cookies (no SSO path)",
        "JWT-in-localStorage (XSS surface)",
    ]
    recall = ok(repo.path, "recall", "auth")
    assert "  already rejected: session cookies (no SSO path), JWT-in-localStorage (XSS surface)\n" in recall


# -- surfaces -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "budget"),
    [
        (("recall", "queue", "engine"), 600),
        (("recall", "queue", "engine", "--detail", "scores", "--budget", "300"), 300),
        (("brief", "queue", "engine", "--for", "reviewer"), 450),
        (("brief", "kafka", "--budget", "200"), 200),
        (("state",), 800),
        (("state", "--budget", "50"), 50),
        (("session-brief",), 150),
    ],
)
def test_surface_json_text_is_the_plain_output_byte_for_byte(
    seeded: Seeded, argv: tuple[str, ...], budget: int
) -> None:
    """From the same store state, `text` in --json equals plain stdout minus its final newline."""
    files = store_files(seeded.db)
    saved = snapshot(files)
    plain = ok(seeded.path, *argv)
    restore(saved)
    data = ok_json(seeded.path, *argv)
    assert data["text"] == without_final_newline(plain)
    assert data["text"] != ""
    assert data["tokens"] == math.ceil(len(data["text"]) / 4)
    assert data["budget"] == budget
    assert data["items"] != []
    assert {tuple(sorted(i)) for i in data["items"]} == {("id", "kind", "labels", "references", "subject", "tokens")}
    assert sum(i["tokens"] for i in data["items"]) <= data["tokens"]


def test_session_brief_on_a_cold_start_prints_nothing(repo: Repo) -> None:
    """No memory: the session brief is empty in both modes."""
    assert ok(repo.path, "session-brief") == ""
    data = ok_json(repo.path, "session-brief")
    assert (data["text"], data["tokens"], data["budget"], data["items"]) == ("", 0, 150, [])


def test_surfaces_carry_contested_superseded_stale_and_moved_labels(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """Labels come from the real checkout: `git rm` makes a stale ref, `git mv` + commit a moved one."""
    repo.write("src/x.py")
    repo.write("src/a.py", "def load(): pass\n")
    repo.commit("add sources")
    engine = make_engine(repo.path)
    kafka = engine.note("decision", "use kafka for the queue engine", "queue engine")
    engine.note("decision", "do not use kafka for the queue engine", "queue engine")
    rabbit = engine.note("decision", "use rabbitmq for the mail engine", "mail engine")
    engine.note("decision", "use redis for the mail engine", "mail engine")
    parser = engine.note("decision", "keep the parser engine in src/x.py", "parser engine")
    loader = engine.note("decision", "the loader engine lives in src/a.py", "loader engine")
    engine.close()
    repo.git("rm", "-q", "src/x.py")
    repo.git("mv", "src/a.py", "src/b.py")
    repo.commit("delete x, move a")
    data = ok_json(repo.path, "recall", "engine")
    labels = {i["id"]: i["labels"] for i in data["items"]}
    assert labels[kafka.item_id] == ["contested"]
    assert labels[rabbit.item_id] == ["superseded"]
    assert labels[parser.item_id] == ["stale: missing src/x.py"]
    assert labels[loader.item_id] == ["moved: src/a.py → src/b.py"]
    text = data["text"]
    assert f"[{TS}]: [queue engine] use kafka for the queue engine [contested]" in text
    assert f"[{TS}]: [mail engine] use rabbitmq for the mail engine (superseded)" in text
    assert "keep the parser engine in src/x.py [stale: missing src/x.py]" in text
    assert "the loader engine lives in src/a.py [moved: src/a.py → src/b.py]" in text


def test_recall_spends_its_budget_and_says_what_it_trimmed(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """--budget caps the estimate; the trim hint counts what did not fit; scores only with --detail scores."""
    engine = make_engine(repo.path)
    for n in range(12):
        engine.note("insight", f"parser note number {n} explains one more corner of the tokenizer and its stems")
    engine.close()
    data = ok_json(repo.path, "recall", "parser", "--budget", "80")
    assert data["budget"] == 80
    assert data["tokens"] <= 80
    assert 1 <= len(data["items"]) < 8
    assert data["text"].endswith("more matches trimmed (raise budget or refine topic)")
    assert "(score " not in data["text"]
    scored = ok_json(repo.path, "recall", "parser", "--detail", "scores")
    assert "(score " in scored["text"].split("\n")[1]
    assert ", lex " in scored["text"]


def test_brief_puts_decisions_first_with_the_agent_header(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """`brief --for` heads the brief with the agent and scope; decisions lead the evidence."""
    engine = make_engine(repo.path)
    engine.note("insight", "auth tokens expire after an hour of auth inactivity")
    engine.note("decision", "use OIDC for auth", "auth")
    engine.close()
    lines = ok(repo.path, "brief", "auth", "--for", "reviewer").splitlines()
    assert lines[:2] == ["Briefing for reviewer:", "Scope: main"]
    assert lines[3].startswith(f"Decision [{TS}]: [auth] use OIDC for auth")
    assert lines[4].startswith(f"Insight [{TS}]: auth tokens expire")


# -- resolve --------------------------------------------------------------------------------------


def test_resolve_by_subject_is_refused_while_contested_and_by_id_closes_it(repo: Repo) -> None:
    """Resolving by subject guesses, so it is refused; resolving one side by id with a replacement closes it."""
    kafka = note_id(repo.path, "decision", "use kafka for the queue engine", "queue engine")
    other = note_id(repo.path, "decision", "do not use kafka for the queue engine", "queue engine")
    before = held(repo.path)
    refused = fail(repo.path, "resolve", "--subject", "Queue Engine", code="contested_subject")
    assert sorted(refused["ids"]) == sorted([kafka, other])
    assert held(repo.path) == before
    data = ok_json(
        repo.path, "resolve", kafka, "--status", "superseded", "--replacement", "use nats for the queue engine"
    )
    assert data["cleared_contest"] is True
    assert data["text"] == (
        f"Marked decision[queue engine] as superseded. Contest closed.\nReplaced with note {data['replacement_id']}.\n"
        "Superseded 1 other active decision on this subject: the replacement is the one active decision on it."
    )
    recall = ok_json(repo.path, "recall", "queue", "engine")
    labels = {i["id"]: i["labels"] for i in recall["items"]}
    # A replacement leaves one active decision on the subject: the other side is superseded by it too.
    assert labels == {
        f"notes:{kafka}": ["superseded"],
        f"notes:{other}": ["superseded"],
        f"notes:{data['replacement_id']}": [],
    }
    assert "[contested]" not in recall["text"]


def test_note_resolve_takes_id_or_subject_flags(repo: Repo) -> None:
    """`note-resolve --id` and `note-resolve --subject` resolve; plain output matches the --json text."""
    blocker = note_id(repo.path, "blocker", "ci is red on windows", "ci")
    decision = note_id(repo.path, "decision", "pin the runner image", "runner")
    out = ok(repo.path, "note-resolve", "--id", blocker, "--status", "resolved")
    assert out == "Marked blocker[ci] as resolved.\n"
    data = ok_json(repo.path, "note-resolve", "--subject", "runner", "--status", "superseded")
    assert (data["id"], data["status"], data["text"]) == (
        decision,
        "superseded",
        "Marked decision[runner] as superseded.",
    )
    states = {i["note_id"]: i["text"].splitlines()[-1] for i in ok_json(repo.path, "list-memory")["items"]}
    assert states == {blocker: "Status: resolved", decision: "Status: superseded"}


# -- errors and bad input -----------------------------------------------------------------------

BAD_INPUTS: list[tuple[tuple[str, ...], str, int]] = [
    (("note", "--kind", "decision", "no subject given"), "subject_required", 1),
    (("note", "--kind", "decision", "--subject", "   ", "blank subject"), "subject_required", 1),
    (("note", "--kind", "opinion", "--subject", "s", "unknown kind"), "bad_kind", 1),
    (("note", "--kind", "insight", "   "), "empty_text", 1),
    (("note", "--kind", "insight"), "usage", 2),
    (("recall", "queue", "--budget", "5"), "bad_budget", 1),
    (("recall", "queue", "--limit", "0"), "bad_limit", 1),
    (("recall", "queue", "--limit", "51"), "bad_limit", 1),
    (("brief", "queue", "--budget", "999999"), "bad_budget", 1),
    (("inspect-memory", "no-such-id"), "not_found", 1),
    (("edit-memory", "no-such-id", "--text", "new text"), "not_found", 1),
    (("delete-memory", "no-such-id", "--yes"), "not_found", 1),
    (("resolve", "no-such-id"), "not_found", 1),
    (("resolve",), "usage", 2),
    (("resolve", "--subject", "queue engine", "--status", "deleted"), "usage", 2),
    (("note-resolve", "--subject", "queue engine"), "contested_subject", 1),
    (("list-memory", "--state", "hot,boiling"), "bad_state", 1),
    (("list-memory", "--offset", "-1"), "bad_args", 1),
    (("frobnicate",), "usage", 2),
]


@pytest.mark.parametrize(("argv", "code", "exit_code"), BAD_INPUTS, ids=[" ".join(a) for a, _, _ in BAD_INPUTS])
def test_bad_input_fails_cleanly_and_loses_nothing(
    seeded: Seeded, argv: tuple[str, ...], code: str, exit_code: int
) -> None:
    """Each bad input: exit 1 (2 for usage), one `cortex:` stderr line, the JSON error; the store is unchanged."""
    fail(seeded.path, *argv, code=code, exit_code=exit_code)
    assert held(seeded.path) == seeded.before


def test_not_found_json_names_the_id(seeded: Seeded) -> None:
    """A missing id is reported by the same words in both modes; --json also carries the id."""
    payload = fail(seeded.path, "inspect-memory", "no-such-id", code="not_found")
    assert payload["message"] == 'no memory item found for id "no-such-id" (list ids with: cortex list-memory)'
    assert payload["id"] == "no-such-id"


@pytest.mark.parametrize(
    ("argv", "exit_code"),
    [(("note", "--kind", "opinion", "--subject", "s", "x"), 1), (("inspect-memory", "nope"), 1), (("recall",), 2)],
)
def test_plain_errors_are_one_stderr_line_and_no_stdout(seeded: Seeded, argv: tuple[str, ...], exit_code: int) -> None:
    """Without --json an error prints nothing on stdout and exactly one `cortex:` line on stderr."""
    run = cortex(seeded.path, *argv)
    assert (run.code, run.out) == (exit_code, "")
    assert len(run.err.splitlines()) == 1
    assert run.err.startswith("cortex: ")


@pytest.mark.parametrize(
    ("topic", "answer"),
    [
        ('"foo AND (bar', 'No matches for ""foo AND (bar".'),
        ("*", "Most relevant — "),
        ("NEAR(", 'No matches for "NEAR(".'),
        ("queue* NEAR(kafka", "Most relevant — Decision [queue engine]"),
        ('kafka" OR "x', "Most relevant — Decision [queue engine]"),
    ],
)
def test_fts_syntax_in_a_topic_is_plain_text(seeded: Seeded, topic: str, answer: str) -> None:
    """FTS syntax characters in a topic never error and never change what is stored."""
    data = ok_json(seeded.path, "recall", topic)
    assert data["text"].startswith(answer)
    assert held(seeded.path) == seeded.before


@pytest.mark.parametrize("topic", ['"foo AND (bar', "NEAR("])
def test_fts_syntax_in_a_brief_topic_is_plain_text(seeded: Seeded, topic: str) -> None:
    """brief treats the same characters as words, answering that nothing matched."""
    assert ok(seeded.path, "brief", topic) == f'Scope: main\nNo context found for "{topic}".\n'
    assert held(seeded.path) == seeded.before


# -- store, status, validate-memory -------------------------------------------------------------


def test_store_json_gives_the_database_path_without_creating_it(repo: Repo) -> None:
    """`store` derives the path from the git common dir and does not create the store."""
    import hashlib

    info = ok_json(repo.path, "store")
    ident = hashlib.sha256(os.path.realpath(repo.path / ".git").encode("utf-8")).hexdigest()[:16]
    expected = Path(os.environ["CORTEX_HOME"]).resolve() / "projects" / f"repo-{ident}" / "cortex.db"
    assert Path(info["path"]) == expected
    assert (info["exists"], info["degraded"]) == (False, False)
    assert not expected.exists()
    ok(repo.path, "note", "--kind", "insight", "now the store exists")
    assert expected.exists()
    lines = ok(repo.path, "store").splitlines()
    assert lines[0] == f"Store:    {expected}"
    assert lines[2] == f"Derived:  git common dir {os.path.realpath(repo.path / '.git')}"
    assert lines[3] == "Exists:   yes"


def test_store_outside_git_says_the_identity_is_degraded(tmp_path: Path) -> None:
    """Outside git the identity falls back to the working directory, and `store` says so."""
    plain = tmp_path / "plain"
    plain.mkdir()
    info = ok_json(plain, "store")
    assert info["degraded"] is True
    assert "not a git repository" in info["degraded_reason"]
    derived = ok(plain, "store").splitlines()[2]
    assert derived.startswith("Derived:  working directory (degraded — not a git repository")


def test_status_counts_this_scope(seeded: Seeded) -> None:
    """`status` reports the store, the scope, items by state and open contested notes."""
    data = ok_json(seeded.path, "status")
    assert (data["items"], data["items_by_state"], data["contested_notes"]) == (3, {"warm": 3}, 2)
    lines = ok(seeded.path, "status").splitlines()
    assert lines == [
        "OK",
        f"DB: {data['store']}",
        f"Scope: {data['scope_key']}",
        f"Session: {data['session']}",  # started by `cortex note`, not by Claude Code: no host id to show
        "Items: 3 (warm 3)",
        "Contested notes: 2",
        "Review: others: decision files this store did not publish, and every import, wait in `cortex inbox` for you",
        "Recall: by words only — recall is lexical only: CORTEX_SEMANTIC turns it off; to turn it on: export "
        "CORTEX_SEMANTIC=1",
    ]
    assert data["semantic"]["retrievers"] == ["lexical"]


def test_validate_memory_reports_stale_and_moved_references(repo: Repo) -> None:
    """validate-memory checks every reference against the checkout, deleting nothing."""
    repo.write("src/x.py")
    repo.write("src/a.py", "def load(): pass\n")
    repo.commit("add")
    stale = note_id(repo.path, "insight", "the parser lives in src/x.py")
    moved = note_id(repo.path, "insight", "the loader lives in src/a.py")
    repo.git("rm", "-q", "src/x.py")
    repo.git("mv", "src/a.py", "src/b.py")
    repo.commit("rm and mv")
    before = held(repo.path)
    report = ok_json(repo.path, "validate-memory")
    assert (report["checked"], report["stale"]) == (2, 1)
    assert report["references"] == {"exists": 0, "missing": 1, "moved": 1, "unknown": 0}
    assert {i["id"]: i["label"] for i in report["items"]} == {
        f"notes:{stale}": "stale: missing src/x.py",
        f"notes:{moved}": "moved: src/a.py → src/b.py",
    }
    lines = ok(repo.path, "validate-memory").splitlines()
    assert lines[0] == "checked 2 memories; 1 stale; references: 0 exists, 1 missing, 1 moved, 0 unknown"
    assert sorted(lines[1:]) == sorted(
        [
            f"  notes:{stale}  [stale: missing src/x.py]",
            f"  notes:{moved}  [moved: src/a.py → src/b.py]",
        ]
    )
    topical = ok_json(repo.path, "validate-memory", "--topic", "loader NEAR(")
    assert (topical["topic"], [i["id"] for i in topical["items"]]) == ("loader NEAR(", [f"notes:{moved}"])
    assert held(repo.path) == before


# -- no terminal, no store, the caller's surface -------------------------------------------------


@pytest.mark.parametrize("argv", [(), ("tui",), ("-C", "."), ("demo", "--dir", "demo")], ids=str)
def test_the_tui_without_a_terminal_says_what_to_do(tmp_path: Path, argv: tuple[str, ...]) -> None:
    """Bare `cortex` with no terminal started the TUI and hung writing escape codes: now one line and exit 2."""
    done = subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", *argv],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    err = done.stderr.decode()
    assert (done.returncode, done.stdout) == (2, b"")
    assert err.startswith("cortex: ") and err.count("\n") == 1 and "cortex --help" in err
    assert not (tmp_path / "demo").exists()  # the demo is not seeded for a TUI that cannot open


def test_one_shot_reads_create_no_store(tmp_path: Path) -> None:
    """`cortex recall` in a folder that is not a repository created a store; reads now answer as an empty store
    would and create nothing, and the no-matches hint names the CLI's `cortex state`, not the MCP tool."""
    plain = tmp_path / "plain"
    plain.mkdir()
    home = Path(os.environ["CORTEX_HOME"])
    assert ok(plain, "recall", "kafka") == (
        'No matches for "kafka". Try a broader topic, or cortex state for the working set.\n'
    )
    for argv in (("state",), ("session-brief",), ("status",), ("list-memory",), ("branches",), ("export",)):
        assert cortex(plain, *argv).code == 0, argv
    assert not home.exists() and list(plain.iterdir()) == []
    assert cortex(plain, "note", "--kind", "insight", "writes still create the store").code == 0
    assert home.exists()


def test_an_unknown_command_names_only_commands_a_user_can_run(repo: Repo) -> None:
    """A typo gets the closest listed commands; a word close to none gets every listed one; never a hidden entry
    point (a hook's, an old name)."""
    from cortex_engine.adapters.cli import COMMANDS

    hidden = [c.name for c in COMMANDS if c.why_hidden]
    assert hidden
    near = cortex(repo.path, "recal")
    assert near.code == 2 and near.out == ""
    assert near.err == "cortex: unknown command 'recal'; did you mean recall? (`cortex --help` lists every command)\n"
    far = cortex(repo.path, "frobnicate")
    assert far.code == 2 and far.err.startswith("cortex: unknown command 'frobnicate'; choose from note, recall")
    listed = far.err.split("choose from ", 1)[1].strip().split(", ")
    assert not set(listed) & set(hidden) and "status" in listed


def test_status_on_an_empty_store_prints_no_empty_parentheses(repo: Repo) -> None:
    """No items: `Items: 0`, not `Items: 0 ()`."""
    lines = ok(repo.path, "status").splitlines()
    assert "Items: 0" in lines


def test_scope_keys_show_the_repository_path_in_its_real_case(tmp_path: Path) -> None:
    """The stored key lowercases paths; `status` and `store` show the path as it is on disk (JSON keeps the key)."""
    from .conftest import git

    path = tmp_path / "MyRepo"
    path.mkdir()
    git(path, "init", "-q", "-b", "Main")
    (path / "README.md").write_text("# up\n", encoding="utf-8")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "init")
    real = os.path.realpath(path)
    for args in (("status",), ("store",)):
        scope = next(line for line in ok(path, *args).splitlines() if line.startswith("Scope:"))
        assert f"{real}/.git:{real}:" in scope and real.lower() not in scope, scope
    assert json.loads(ok(path, "store", "--json"))["scope_key"].count(real.lower()) == 2
    ok(path, "note", "--kind", "decision", "--subject", "readme", "keep README.md short")
    scopes = [line for line in ok(path, "validate-memory", "--all-scopes").splitlines() if line.startswith("scope ")]
    assert scopes and all(real.lower() not in line for line in scopes), scopes
