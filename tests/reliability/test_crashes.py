"""Crashes: kill -9 a flush and a note write at chosen points; the next run finishes or rolls back.

The crash points are deterministic. A worker process (`tests/reliability/workers.py`, role `crash`) opens the
engine, swaps its connection for a `Tripwire` that counts statements, and SIGKILLs itself at the chosen one:
before the claim, just after it, at statements spread through the replay transaction, right before and right
after COMMIT (the claim is then still on disk, its work already booked), and during the index rewrite. A dry
run of the same shape first lists the statements, so the points are named by what they are, not guessed.
After every kill a normal flush runs, and the store must hold each event exactly once: events, command runs,
episodes, token ledger rows, digests — nothing lost, nothing booked twice, integrity ok.

The WAL bound: past `CORTEX_WAL_MAX_BYTES` a flush checkpoints and truncates the WAL, with the busy timeout at
0 so a reader holding an old snapshot makes it give up at once instead of stalling the hook for 5 s.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
from pathlib import Path

import pytest

from cortex_engine.capture import flush as capture
from cortex_engine.engine import Engine
from cortex_engine.store import database as store
from tests.conftest import Repo

from ._support import assert_intact, counts, finish, hook_path, run_hook, spool_line, worker

ROUND_SHAPE = {"events": 6, "command_runs": 3, "episodes": 2, "token_ledger": 2, "content_digests": 1}


def round_lines(repo: Repo, r: int) -> list[str]:
    """One batch of spool lines: a failing test run, a failing build, a plain command, a read, an edit, a
    grep, a substitution credit (two ledger rows) and a blob-backed large output, all unique to round r."""
    base = {"session_id": "host-crash", "cwd": str(repo.path), "hook_event_name": "PostToolUse"}
    read_path = str(repo.path / f"src/read{r}.py")
    payloads = [
        {
            **base,
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_use_id": f"r{r}-test",
            "tool_input": {"command": f"pytest tests/test_round{r}.py"},
            "error": "Command exited with non-zero status code 1",
        },
        {
            **base,
            "tool_name": "Bash",
            "tool_use_id": f"r{r}-build",
            "tool_input": {"command": f"make target{r}"},
            "tool_response": {"stdout": "", "stderr": f"error in target{r}", "exit_code": 2},
        },
        {
            **base,
            "tool_name": "Bash",
            "tool_use_id": f"r{r}-ls",
            "tool_input": {"command": f"ls dir{r}"},
            "tool_response": {"stdout": "a b", "stderr": ""},
        },
        {
            **base,
            "tool_name": "Read",
            "tool_use_id": f"r{r}-read",
            "tool_input": {"file_path": read_path},
            "tool_response": {
                "file": {"filePath": read_path, "content": f"R{r}\n", "numLines": 1, "startLine": 1, "totalLines": 1}
            },
        },
        {
            **base,
            "tool_name": "Edit",
            "tool_use_id": f"r{r}-edit",
            "tool_input": {"file_path": str(repo.path / f"src/e{r}.py")},
        },
        {
            **base,
            "tool_name": "Grep",
            "tool_use_id": f"r{r}-grep",
            "tool_input": {"pattern": f"needle{r}"},
            "tool_response": {"mode": "content", "content": f"src/x.py: needle{r}", "numLines": 1},
        },
    ]
    lines = [spool_line(p, 1785700000 + r) for p in payloads]
    credit = {
        "v": 1,
        "t": 1785700000 + r,
        "credit": {"path": f"{repo.path}/src/read{r}.py", "size": 400, "line": "[cortex] substituted"},
        "p": {**base, "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_use_id": f"r{r}-credit"},
    }
    lines.append(json.dumps(credit))
    return lines


def write_round(repo: Repo, r: int) -> None:
    """Append round r to the spool, one of its payloads as a blob behind a pointer line (as the hook does)."""
    folder = capture.runtime_dir(repo.path)
    lines = round_lines(repo, r)
    blob = f"1785700000.{r}-1-1.json"
    (folder / capture.BLOBS / blob).write_text(json.dumps(json.loads(lines[2])["p"]))
    lines[2] = json.dumps({"v": 1, "t": 1785700000 + r, "blob": blob})
    with open(folder / capture.SPOOL, "a", encoding="utf-8") as spool:
        spool.write("\n".join(lines) + "\n")


@pytest.fixture
def live(repo: Repo, make_engine) -> Engine:
    """An engaged worktree with a session, as SessionStart leaves it."""
    repo.write("src/x.py", "nothing here\n")
    repo.commit("src")
    engine = make_engine(repo.path)
    engine.start_session("host-crash")
    return engine


def crash(cwd: Path, point: dict, action: str = "flush", **note: str) -> dict | None:
    """Run the crash worker; assert it was killed by SIGKILL when the point is armed. Returns its report if it lived."""
    code, report, err = finish(worker("crash", {"cwd": str(cwd), "action": action, "point": point, **note}))
    assert err == ""
    if point:
        assert code == -signal.SIGKILL, (point, code, report)
        return None
    assert code == 0
    return report  # type: ignore[return-value]


def expected(rounds: int, base: dict[str, int]) -> dict[str, int]:
    return {table: base[table] + rounds * n for table, n in ROUND_SHAPE.items()}


def test_kill_9_at_every_named_point_of_a_flush_loses_nothing_and_books_nothing_twice(live: Engine, repo: Repo) -> None:
    """Figures: 1 dry run + 15 kill -9 points in a flush (each followed by a recovering flush); counts exact."""
    db = live.identity.db_path
    folder = capture.runtime_dir(repo.path)
    write_round(repo, 0)
    report = crash(repo.path, {})  # the dry run: it books the lines just written and lists a flush's statements
    assert report is not None and report["processed"] == 7 and report["errors"] == []
    statements: list[str] = report["statements"]
    begin = statements.index("BEGIN IMMEDIATE")
    commit = statements.index("COMMIT", begin)
    inside = list(range(begin + 2, commit + 1))  # 1-based statement numbers strictly after BEGIN, up to COMMIT
    spread = sorted({inside[(len(inside) - 1) * i // 7] for i in range(8)})
    points = [
        {"claim": True},  # before the claim: the spool is still whole
        {"at": 1, "when": "before"},  # after the claim, before anything is written
        {"at": begin + 1, "when": "after"},  # the transaction just began
        *({"at": n, "when": "before"} for n in spread),  # mid-transaction, spread through the replay
        {"at": commit + 1, "when": "before"},  # instead of COMMIT
        {"at": commit + 1, "when": "after"},  # right after COMMIT: claim and blobs still on disk
        {"at": commit + 2, "when": "before"},  # after commit, during the index rewrite
        {"at": len(statements), "when": "after"},  # the very last statement, before the unlink
    ]
    assert len(points) == 15 and len(inside) > 30 and statements[commit] == "COMMIT"
    base = {table: n - ROUND_SHAPE.get(table, 0) for table, n in counts(db).items()}
    for r, point in enumerate(points, start=1):
        write_round(repo, r)
        crash(repo.path, point)
        assert counts(db)["events"] in (base["events"] + 6 * r, base["events"] + 6 * (r + 1))  # all or nothing
        recovered = Engine(repo.path)
        try:
            result = recovered.flush_spool()
        finally:
            recovered.close()
        assert result.errors == []
        got = counts(db)
        assert {t: got[t] for t in ROUND_SHAPE} == expected(r + 1, base), point
        assert sorted(p.name for p in (folder / capture.CLAIMS).iterdir()) == []
        assert sorted(p.name for p in (folder / capture.BLOBS).iterdir()) == []
    assert_intact(db)
    conn = sqlite3.connect(db)
    uses = {
        capture.spool_key(event, f"r{r}-{use}")
        for r in range(len(points) + 1)
        for event, use in (
            ("PostToolUseFailure", "test"),
            ("PostToolUse", "build"),
            ("PostToolUse", "ls"),
            ("PostToolUse", "read"),
            ("PostToolUse", "edit"),
            ("PostToolUse", "grep"),
            ("PreToolUse", "credit"),
        )
    }
    keys = [k for (k,) in conn.execute("SELECT key FROM spool_seen") if k in uses]
    summaries = [
        s
        for (s,) in conn.execute(
            "SELECT command_summary FROM command_runs WHERE command_summary LIKE 'pytest tests/test_round%'"
        )
    ]
    conn.close()
    assert len(keys) == len(set(keys)) == 7 * (len(points) + 1)
    assert sorted(summaries) == sorted(f"pytest tests/test_round{r}.py" for r in range(len(points) + 1))


NOTE_POINTS = [
    ("after the supersession update", {"statement": "UPDATE notes SET status=? WHERE id=?", "when": "after"}),
    ("after the note insert", {"statement": "INSERT INTO notes(", "when": "after"}),
    ("while projecting into memory_items", {"statement": "INSERT INTO memory_items(", "when": "before"}),
    ("right before COMMIT", {"armed_by": "INSERT INTO notes(", "statement": "COMMIT", "when": "before"}),
    ("right after COMMIT", {"armed_by": "INSERT INTO notes(", "statement": "COMMIT", "when": "after"}),
]


@pytest.mark.parametrize(("name", "point"), NOTE_POINTS, ids=[n for n, _ in NOTE_POINTS])
def test_kill_9_mid_note_write_rolls_back_whole(live: Engine, repo: Repo, name: str, point: dict) -> None:
    """A note write killed mid-transaction leaves no trace (the prior decision stays active, unprojected
    nothing); killed after COMMIT it is there once. A retry then supersedes the prior exactly once."""
    prior = live.note("decision", "use kafka for the queue engine", "queue engine")
    live.note("decision", "use postgres for storage", "storage")
    db = live.identity.db_path
    before = counts(db)
    crash(repo.path, point, "note", kind="decision", subject="queue engine", text="use nats for the queue engine")
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    committed = "after COMMIT" in name
    rows = conn.execute("SELECT * FROM scoped_notes WHERE subject='queue engine' ORDER BY timestamp, rowid").fetchall()
    assert [(r["content"], r["status"]) for r in rows] == (
        [("use kafka for the queue engine", "superseded"), ("use nats for the queue engine", "active")]
        if committed
        else [("use kafka for the queue engine", "active")]
    )
    assert counts(db)["notes"] == before["notes"] + int(committed)
    item = conn.execute("SELECT text, state FROM memory_items WHERE id=?", (prior.item_id,)).fetchone()
    assert ("Status: superseded" in item["text"]) is committed
    orphans = conn.execute(
        "SELECT COUNT(*) FROM notes n LEFT JOIN memory_items m ON m.source_id=n.id WHERE m.id IS NULL"
    ).fetchone()[0]
    conn.close()
    assert orphans == 0
    retry = Engine(repo.path)
    try:
        again = retry.note("decision", "use nats for the queue engine", "queue engine")
        statuses = [r[0] for r in retry.conn.execute("SELECT status FROM notes WHERE subject='queue engine'")]
    finally:
        retry.close()
    assert len(again.superseded) == 1 and (prior.id in again.superseded) is not committed
    assert sorted(statuses) == (["active", "superseded", "superseded"] if committed else ["active", "superseded"])
    assert_intact(db)


def checkpoint_timeouts(statements: list[str]) -> list[int]:
    """The busy timeout (ms) in force when each `wal_checkpoint(TRUNCATE)` among `statements` ran (what
    the statements were, not how long they took)."""
    timeout, found = store.BUSY_TIMEOUT_MS, []
    for statement in statements:
        setting = re.fullmatch(r"\s*PRAGMA busy_timeout\s*=\s*(\d+)\s*", statement, re.IGNORECASE)
        if setting:
            timeout = int(setting.group(1))
        elif "wal_checkpoint(TRUNCATE)" in statement:
            found.append(timeout)
    return found


def test_wal_past_its_bound_is_checkpointed_without_blocking(
    live: Engine, repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past CORTEX_WAL_MAX_BYTES a flush truncates the WAL; a reader pinning an old snapshot makes it give up at
    once (never the 5 s busy timeout), the next flush finishes the job; a hook is never in the way."""
    monkeypatch.setenv("CORTEX_WAL_MAX_BYTES", "65536")
    db = live.identity.db_path
    wal = Path(f"{db}-wal")
    for n in range(40):
        live.note("insight", f"padding note {n} " + "lorem ipsum dolor " * 60)
    assert wal.stat().st_size > 65536
    pin = sqlite3.connect(db)
    pin.execute("BEGIN")
    pin.execute("SELECT COUNT(*) FROM notes").fetchone()  # a reader holding a snapshot: TRUNCATE cannot finish
    write_round(repo, 1)
    statements: list[str] = []
    live.conn.set_trace_callback(statements.append)
    held = live.flush_spool()
    live.conn.set_trace_callback(None)
    assert (held.processed, held.checkpoint) == (7, "busy")
    assert checkpoint_timeouts(statements) == [0]  # it could not wait for the reader: no busy timeout was set
    assert wal.stat().st_size > 65536
    # The hook runs with no python on its PATH (hook_path): it only appends to the spool, never opens the store.
    hook = run_hook(
        "cortex-capture.sh",
        {
            "session_id": "h",
            "cwd": str(repo.path),
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_use_id": "wal-1",
            "tool_input": {"command": "ls"},
        },
        hook_path(tmp_path),
    )
    assert (hook.code, hook.stdout, hook.stderr) == (0, b"", b"")
    pin.rollback()
    pin.close()
    freed = live.flush_spool()
    assert (freed.processed, freed.checkpoint) == (1, "truncated")
    assert wal.stat().st_size == 0
    quiet = live.flush_spool()
    assert quiet.checkpoint is None  # within bounds: nothing to do
    assert_intact(db)


@pytest.mark.parametrize(
    ("raw", "bound"),
    [
        (None, 4 * 1024 * 1024),
        ("8192", 8192),
        ("4096", 4096),
        ("4095", 4 * 1024 * 1024),
        ("-5", 4 * 1024 * 1024),
        ("lots", 4 * 1024 * 1024),
        ("", 4 * 1024 * 1024),
    ],
)
def test_wal_bound_setting(raw: str | None, bound: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """CORTEX_WAL_MAX_BYTES: an integer of at least 4096, else the 4 MiB default."""
    if raw is None:
        monkeypatch.delenv("CORTEX_WAL_MAX_BYTES", raising=False)
    else:
        monkeypatch.setenv("CORTEX_WAL_MAX_BYTES", raw)
    assert store.wal_bound() == bound


def test_checkpoint_gives_up_at_once_while_another_process_writes(
    live: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a writer holding the lock, the checkpoint reports busy immediately and the busy timeout is restored."""
    monkeypatch.setenv("CORTEX_WAL_MAX_BYTES", "4096")
    for n in range(5):
        live.note("insight", f"note {n} " + "x" * 2000)
    writer = sqlite3.connect(live.identity.db_path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    statements: list[str] = []
    live.conn.set_trace_callback(statements.append)
    try:
        assert store.checkpoint_if_large(live.conn) == "busy"
    finally:
        live.conn.set_trace_callback(None)
        writer.execute("ROLLBACK")
        writer.close()
    assert checkpoint_timeouts(statements) == [0]  # the busy timeout is 5 s; it was 0 here: it did not wait
    assert live.conn.execute("PRAGMA busy_timeout").fetchone()[0] == store.BUSY_TIMEOUT_MS
    assert store.checkpoint_if_large(live.conn) == "truncated"
    assert os.path.getsize(f"{live.identity.db_path}-wal") == 0
