"""Concurrency: many writers on one store at once, bounded by operation count (never by sleeping).

4 processes write notes (two through the engine, two through the CLI; pairs of them contest on purpose),
2 processes flush the spools that 32 parallel capture hooks (the real bash scripts) fill, 2 processes read
surfaces, and all of it runs on two worktrees of one repository engaged at the same time — and on a store
that does not exist yet, so the first opens race to create and migrate it. Then: every note and every
captured event is there exactly once, no process printed anything on stderr (no traceback, no `database is
locked`), the contests match the same writes serialized into a fresh store, and the store is intact.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cortex_engine.capture import engagement
from cortex_engine.capture import flush as capture
from cortex_engine.engine import Engine
from cortex_engine.memory.contradiction import compare
from tests.conftest import Repo, deep_profile

from ._support import add_worktree, assert_intact, finish, hook_path, run_hook, worker

# The deep profile (HYPOTHESIS_PROFILE=deep) runs the full counts; the suite's default a quarter of the events,
# flushes and reads and half the notes, at the same 32 hooks at a time: the races are the point, not the totals.
DEEP = deep_profile()
HOOK_EVENTS = 384 if DEEP else 96  # a multiple of 6 (the payload shapes) and of 2 (the worktrees)
HOOK_THREADS = 32
FLUSHES_PER_PROCESS = 40 if DEEP else 10
READ_ROUNDS = 10 if DEEP else 3
NOTES_PER_WRITER = 20 if DEEP else 10  # at least the 8 planned pairs and supersessions writer 0 holds
CONTEST_PAIRS = 6
CROSS_SCOPE_PAIRS = 4
SUPERSEDE_PAIRS = 2


def note_plan(main: str, side: str) -> dict[int, list[dict]]:
    """The 48 notes of the 4 writers: contest pairs split across writers, cross-scope pairs, supersessions, fillers."""
    plan: dict[int, list[dict]] = {0: [], 1: [], 2: [], 3: []}

    def add(writer: int, cwd: str, kind: str, subject: str | None, text: str, marker: str) -> None:
        plan[writer].append(
            {"cwd": cwd, "kind": kind, "subject": subject, "text": f"{text} {marker}", "marker": marker}
        )

    for k in range(CONTEST_PAIRS):  # same scope, same subject, opposite polarity: must contest, in either order
        add(0, main, "decision", f"queue {k}", f"use kafka for the queue engine q{k}", f"mka{k}")
        add(1, main, "decision", f"queue {k}", f"do not use kafka for the queue engine q{k}", f"mkb{k}")
    for k in range(CROSS_SCOPE_PAIRS):  # the same contradiction across two worktrees: must never contest
        add(2, main, "decision", f"cache {k}", f"use redis for the cache layer c{k}", f"mkc{k}")
        add(3, side, "decision", f"cache {k}", f"do not use redis for the cache layer c{k}", f"mkd{k}")
    for k in range(SUPERSEDE_PAIRS):  # no contradiction: whichever lands second supersedes the first
        add(0, main, "decision", f"wire {k}", f"encode the wire format w{k} as json", f"mke{k}")
        add(2, main, "decision", f"wire {k}", f"encode the wire format w{k} as msgpack", f"mkf{k}")
    kinds = ("insight", "intent", "blocker", "decision", "focus")
    for writer, notes in plan.items():
        cwd = side if writer == 3 else main
        for i in range(NOTES_PER_WRITER - len(notes)):
            kind = kinds[(writer + i) % len(kinds)]
            add(
                writer,
                cwd,
                kind,
                None if kind == "insight" else f"topic {writer}-{i}",
                f"note about module m{writer}x{i} and its parser",
                f"mkg{writer}x{i}",
            )
    for writer, notes in plan.items():
        random.Random(writer).shuffle(notes)
    return plan


def hook_payload(n: int, repo: Repo, side: Path) -> tuple[dict, str]:
    """The n-th captured tool call (alternating worktrees) and the key it must be booked under exactly once."""
    root = repo.path if n % 2 == 0 else side
    host = "host-main" if n % 2 == 0 else "host-side"
    base = {
        "session_id": host,
        "transcript_path": "/dev/null",
        "cwd": str(root),
        "hook_event_name": "PostToolUse",
        "tool_use_id": f"tu-{n:03d}",
    }
    shape = n % 6
    if shape == 0:
        p = {
            **base,
            "tool_name": "Bash",
            "tool_input": {"command": f"echo stress {n}"},
            "tool_response": {"stdout": f"stress {n}", "stderr": "", "interrupted": False},
        }
    elif shape == 1:
        p = {
            **base,
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": f"python -m pytest tests/test_s{n}.py"},
            "error": "Command exited with non-zero status code 1",
            "is_interrupt": False,
        }
    elif shape == 2:
        path = root / f"src/r{n}.py"
        p = {
            **base,
            "tool_name": "Read",
            "tool_input": {"file_path": str(path)},
            "tool_response": {
                "type": "text",
                "file": {"filePath": str(path), "content": f"# r{n}\n", "numLines": 1, "startLine": 1, "totalLines": 1},
            },
        }
    elif shape == 3:
        p = {
            **base,
            "tool_name": "Edit",
            "tool_input": {"file_path": str(root / f"src/e{n}.py")},
            "tool_response": {"filePath": str(root / f"src/e{n}.py")},
        }
    elif shape == 4:
        p = {
            **base,
            "tool_name": "Grep",
            "tool_input": {"pattern": f"needle{n}", "path": str(root)},
            "tool_response": {"mode": "files_with_matches", "filenames": [], "numFiles": 0},
        }
    else:  # past the hook's 3000-character line: written to a blob behind a pointer line
        p = {
            **base,
            "tool_name": "Bash",
            "tool_input": {"command": f"cat big{n}.log"},
            "tool_response": {"stdout": f"big {n} " + "x" * 6000, "stderr": "", "interrupted": False},
        }
    return p, capture.spool_key(p["hook_event_name"], p["tool_use_id"])


def serialized_outcome(plan: dict[int, list[dict]], repo: Repo, side: Path, home: Path, monkeypatch) -> dict:
    """The same writes, one after another, into a fresh store: which markers contest, which supersede."""
    monkeypatch.setenv("CORTEX_HOME", str(home))
    engines = {str(repo.path): Engine(repo.path), str(side): Engine(side)}
    try:
        for writer in sorted(plan):
            for note in plan[writer]:
                engines[note["cwd"]].note(note["kind"], note["text"], note.get("subject"))
        return outcome(engines[str(repo.path)].conn)
    finally:
        for engine in engines.values():
            engine.close()


def outcome(conn: sqlite3.Connection) -> dict:
    """Contested markers and per-subject (active, superseded) counts, keyed by scope."""
    rows = conn.execute("SELECT scope_key, subject, content, status, conflict FROM scoped_notes").fetchall()
    contested = sorted(r[2].rsplit(" ", 1)[1] for r in rows if r[4] and r[3] == "active")
    by_subject: dict[str, list[int]] = {}
    for scope, subject, _, status, _ in rows:
        key = f"{scope.rsplit(':', 1)[1]}|{subject}"
        tally = by_subject.setdefault(key, [0, 0])
        tally[0 if status == "active" else 1] += 1
    return {"contested": contested, "subjects": by_subject}


def test_stress_many_writers_two_worktrees_nothing_lost_nothing_locked(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Figures under the deep profile: 80 notes (4 writers), 384 captured tool calls (32 hooks at a time, 64 of them
    blob-backed), 80 flushes racing them (+2 final), 80 surfaces read, 8 processes, two worktrees, a store created by
    the first to arrive (the suite's default: 40 notes, 96 calls, 20 flushes, 24 surfaces)."""
    side = add_worktree(repo, tmp_path / "wt-side", "side")
    for root in (repo.path, side):
        (root / "src").mkdir(exist_ok=True)
        engagement.engage(root)  # engaged, but no store yet: the first processes race to create and migrate it
    main, other = str(repo.path), str(side)
    plan = note_plan(main, other)
    for k in range(CONTEST_PAIRS):  # the pairs are built to contest / not to contest: check the rule agrees
        assert compare(
            f"use kafka for the queue engine q{k} mka{k}", f"do not use kafka for the queue engine q{k} mkb{k}"
        )
    assert compare("encode the wire format w0 as json mke0", "encode the wire format w0 as msgpack mkf0") is None

    procs = {
        "notes-engine-0": worker("notes", {"mode": "engine", "notes": plan[0]}),
        "notes-cli-1": worker("notes", {"mode": "cli", "notes": plan[1]}),
        "notes-engine-2": worker("notes", {"mode": "engine", "notes": plan[2]}),
        "notes-cli-3": worker("notes", {"mode": "cli", "notes": plan[3]}),
        "flush-engine": worker("flush", {"mode": "engine", "cwds": [main, other], "count": FLUSHES_PER_PROCESS}),
        "flush-cli": worker("flush", {"mode": "cli", "cwds": [other, main], "count": FLUSHES_PER_PROCESS}),
        "read-engine": worker(
            "read",
            {
                "mode": "engine",
                "cwds": [main, other],
                "rounds": READ_ROUNDS,
                "topics": ["kafka queue", "redis cache", "wire format"],
            },
        ),
        "read-cli": worker(
            "read",
            {
                "mode": "cli",
                "cwds": [other, main],
                "rounds": READ_ROUNDS,
                "topics": ["parser module", "queue engine", "stress"],
            },
        ),
    }
    events = [hook_payload(n, repo, side) for n in range(HOOK_EVENTS)]
    path_env = hook_path(tmp_path)
    with ThreadPoolExecutor(max_workers=HOOK_THREADS) as pool:
        runs = list(pool.map(lambda e: run_hook("cortex-capture.sh", e[0], path_env), events))
    results = {name: finish(proc) for name, proc in procs.items()}

    assert [(r.code, r.stdout, r.stderr) for r in runs] == [(0, b"", b"")] * HOOK_EVENTS
    complaints = {name: f"exit {code}: {err}" for name, (code, _, err) in results.items() if code or err}
    assert not complaints, "\n".join(f"--- {name}: {text}" for name, text in complaints.items())
    flushed = [results[name][1] for name in ("flush-engine", "flush-cli")]
    assert [f["flushes"] for f in flushed] == [FLUSHES_PER_PROCESS] * 2  # type: ignore[index]
    assert flushed[0]["errors"] == []  # type: ignore[index]
    surfaces = [results[name][1]["surfaces"] for name in ("read-engine", "read-cli")]  # type: ignore[index]
    assert surfaces == [4 * READ_ROUNDS] * 2

    with Engine(repo.path) as engine, Engine(side) as other_engine:
        last = [engine.flush_spool(), other_engine.flush_spool()]
        assert [r.errors for r in last] == [[], []]
        conn = engine.conn
        db = engine.identity.db_path
        for root in (repo.path, side):  # nothing left behind in either runtime folder
            folder = capture.runtime_dir(root)
            assert [p.name for p in (folder / "claims").iterdir()] + [
                p.name for p in (folder / "blobs").iterdir()
            ] == []
            assert not (folder / capture.SPOOL).exists()

        # Every note exactly once, in the notes table and projected once into memory_items.
        writers = [results[writer][1] for writer in results if writer.startswith("notes")]
        written = [n for notes in writers for n in notes]  # type: ignore[union-attr]
        markers = sorted(n["marker"] for notes in plan.values() for n in notes)
        assert sorted(n["marker"] for n in written) == markers and len(markers) == 4 * NOTES_PER_WRITER
        stored = Counter(r[0].rsplit(" ", 1)[1] for r in conn.execute("SELECT content FROM scoped_notes"))
        assert stored == Counter({m: 1 for m in markers})
        projected = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT source_id) FROM memory_items WHERE source_table='notes'"
        ).fetchone()
        assert tuple(projected) == (len(markers), len(markers))

        # Every captured event exactly once: keyed by tool_use_id, and by what each one left behind.
        keys = {k for (k,) in conn.execute("SELECT key FROM spool_seen")}
        assert keys == {key for _, key in events}
        shapes = Counter(n % 6 for n in range(HOOK_EVENTS))
        assert dict(conn.execute("SELECT type, COUNT(*) FROM events GROUP BY type").fetchall()) == {
            "cmd": shapes[0] + shapes[1] + shapes[5],
            "read": shapes[2],
            "edit": shapes[3],
            "search": shapes[4],
        }
        commands = Counter(r[0] for r in conn.execute("SELECT command_summary FROM command_runs"))
        expected_commands = [e[0]["tool_input"]["command"] for e in events if e[0]["tool_name"] == "Bash"]
        assert commands == Counter({c: 1 for c in expected_commands})
        assert conn.execute("SELECT COUNT(*) FROM episodes WHERE kind='command_failure'").fetchone()[0] == shapes[1]
        reads = {r[0] for r in conn.execute("SELECT path FROM content_digests")}
        assert reads == {f"src/r{n}.py" for n in range(HOOK_EVENTS) if n % 6 == 2}
        by_scope = dict(conn.execute("SELECT scope_key, COUNT(*) FROM events GROUP BY scope_key").fetchall())
        assert by_scope == {engine.scope.key: HOOK_EVENTS // 2, other_engine.scope.key: HOOK_EVENTS // 2}

        # Contests: as the rule says, and the same as the same writes one after another.
        live = outcome(conn)
        assert live["contested"] == sorted(
            [f"mka{k}" for k in range(CONTEST_PAIRS)] + [f"mkb{k}" for k in range(CONTEST_PAIRS)]
        )
        ids = {n["id"]: n["marker"] for n in written}
        reported = {frozenset((n["marker"], ids[c])) for n in written for c in n["conflicts"]}
        assert reported == {frozenset((f"mka{k}", f"mkb{k}")) for k in range(CONTEST_PAIRS)}
    assert_intact(db)
    assert live == serialized_outcome(plan, repo, side, tmp_path / "serial-home", monkeypatch)
    for k in range(SUPERSEDE_PAIRS):
        assert live["subjects"][f"main|wire {k}"] == [1, 1]
    print(
        json.dumps(
            {
                "flushed": flushed,
                "notes": len(markers),
                "hook_events": HOOK_EVENTS,
                "flushes": 2 * FLUSHES_PER_PROCESS + 2,
                "surfaces": 8 * READ_ROUNDS,
                "processes": len(procs),
            }
        )
    )


@pytest.mark.parametrize("held", ["a brand-new file (first open)", "an older schema (migration)"])
def test_a_store_held_past_the_busy_timeout_is_busy_not_unreadable(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, held: str
) -> None:
    """Regression: a lock held past the busy timeout while a store was first opened (or migrated) was reported as
    `not a readable Cortex store … move it aside` (or escaped as a raw sqlite3 error). It is a busy store: the
    message says so, with its own code, and advises waiting — never moving a healthy store aside."""
    from cortex_engine.base.errors import StoreRefused
    from cortex_engine.engine import describe_store
    from cortex_engine.store import database as store

    monkeypatch.setattr(store, "BUSY_TIMEOUT_MS", 50)
    db = Path(describe_store(repo.path).path)
    db.parent.mkdir(parents=True)
    holder = sqlite3.connect(db, isolation_level=None)
    if held.startswith("a brand-new"):
        holder.execute("CREATE TABLE placeholder(x)")
        holder.execute("BEGIN EXCLUSIVE")  # rollback-journal mode: switching to WAL has to wait for it
    else:
        holder.execute("PRAGMA journal_mode=WAL")
        holder.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        holder.execute("INSERT INTO meta VALUES ('schema_version', '1')")
        holder.execute("BEGIN IMMEDIATE")  # the migration's write transaction has to wait for it
    try:
        with pytest.raises(StoreRefused) as refused:
            Engine(repo.path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert refused.value.code == "store_busy"
    assert "is busy" in refused.value.message and "move it aside" not in refused.value.message
