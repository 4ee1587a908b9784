"""Consolidation: a session's activity compressed into lines, session summaries, test cycles, snapshots."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from cortex_engine.base.records import record
from cortex_engine.memory.items import NOTE_KINDS, collapse
from cortex_engine.memory.projection import sync_episode_item, upsert_item
from cortex_engine.scope.identity import Scope
from cortex_engine.store import queries
from cortex_engine.store.database import IN_SCOPE

SNAPSHOT_IMPORTANCE = 0.92


@record(frozen=True)
class Step:
    """One consolidated line of a session's timeline."""

    kind: str
    text: str
    target: str | None = None


def level1(conn: sqlite3.Connection, session_id: str, *, with_commands: bool = True) -> list[Step]:
    """Compress a session's events: grouped file events, test cycles, commands and subagents, in order."""
    events = [
        _event(row)
        for row in conn.execute(
            "SELECT type, target, metadata_json FROM events WHERE session_id=? ORDER BY timestamp, rowid", (session_id,)
        )
    ]
    return _steps(events, with_commands)


RECENT_LOOKBACK = 400
"""How many of a session's newest events `recent_steps` reads before it falls back to the whole session."""


def recent_steps(conn: sqlite3.Connection, session_id: str, count: int) -> list[Step]:
    """The last `count` steps of `level1(..., with_commands=False)`, read from the session's newest events only.

    The compression reads forward (a file run, a test cycle from a failure to its pass), so it is restarted only at
    an event every parse of the whole session starts a step at: one that is neither a file event nor a test run
    (a command, a subagent, a search), which no run or cycle can hold. From the oldest such event among the newest
    `RECENT_LOOKBACK`, the steps are exactly the whole session's last ones; with no such event there, or too few
    steps after it, the whole session is read. The branch snapshot asks this at every flush, and a session can
    hold thousands of events.
    """
    rows = conn.execute(
        "SELECT type, target, metadata_json FROM events WHERE session_id=? ORDER BY timestamp DESC, rowid DESC LIMIT ?",
        (session_id, RECENT_LOOKBACK),
    ).fetchall()
    events = [_event(row) for row in reversed(rows)]
    if len(rows) == RECENT_LOOKBACK:  # older events may exist: parse from a step every parse starts
        start = next((k for k, event in enumerate(events) if _role(event) is None), None)
        steps = [] if start is None else _steps(events[start:], with_commands=False)
        if len(steps) < count:
            return level1(conn, session_id, with_commands=False)[-count:]
        return steps[-count:]
    return _steps(events, with_commands=False)[-count:]


def _steps(events: list[Event], with_commands: bool) -> list[Step]:
    steps: list[Step] = []
    i = 0
    while i < len(events):
        kind, target, meta = events[i]
        if _role(events[i]) == "fail":
            cycle = _test_cycle(events, i)
            if cycle is not None:
                end, step = cycle
                steps.append(step)
                i = end + 1
                continue
        if kind in ("read", "edit", "write"):
            count = 1
            while i + count < len(events) and events[i + count][0] == kind and events[i + count][1] == target:
                count += 1
            verb = {"read": "Read", "edit": "Edited", "write": "Created"}[kind]
            steps.append(Step(kind, f"{verb} {target}{f' x{count}' if count > 1 else ''}", target))
            i += count
            continue
        if kind == "cmd":
            if with_commands:
                code = meta.get("exit_code")
                steps.append(
                    Step("cmd", f"Command ({meta.get('category', 'cmd')}): exit {code if code is not None else '?'}")
                )
        elif kind == "agent":
            steps.append(Step("agent", f"Subagent: {collapse(str(meta.get('description', '')))[:120]}"))
        elif kind == "search":
            steps.append(Step("search", f"Searched {collapse(str(meta.get('pattern', '')))[:60]}"))
        i += 1
    return steps


Event = tuple[str, str | None, dict[str, Any]]
"""An event as consolidation reads it: type, target, metadata."""

_META_KINDS = frozenset({"cmd", "agent", "search"})


def _event(row: sqlite3.Row) -> Event:
    """An event row with its metadata decoded once, and only for the kinds whose metadata is read (a file event's
    is not: a session is mostly reads and edits)."""
    kind = row[0]
    return kind, row[1], json.loads(row[2] or "{}") if kind in _META_KINDS else {}


def _role(event: Event) -> str | None:
    """What an event is to a test cycle: `file` (an edit), `read`, `fail` or `pass` (a test run), else None."""
    kind, _, meta = event
    if kind in ("edit", "write"):
        return "file"
    if kind == "read":
        return "read"
    if kind == "cmd" and meta.get("category") == "test" and meta.get("exit_code") is not None:
        return "pass" if meta["exit_code"] == 0 else "fail"
    return None


def _cycle_step(iterations: int, files: list[str]) -> Step:
    listed = f" ({', '.join(files[:6])})" if files else ""
    return Step("test_cycle", f"Test cycle: fixed after {iterations} iteration{'s' if iterations != 1 else ''}{listed}")


def _test_cycle(events: list[Event], start: int) -> tuple[int, Step] | None:
    """From a failing test run: edits and further failures ending in a pass → (end index, the cycle)."""
    files: list[str] = []
    tests = 0
    for j in range(start + 1, len(events)):
        role = _role(events[j])
        target = events[j][1]
        if role == "file":
            if target and target not in files:
                files.append(target)
        elif role in ("fail", "pass"):
            tests += 1
            if role == "pass":
                return j, _cycle_step(tests, files)
        elif role != "read":
            return None
    return None


def render(steps: list[Step]) -> str:
    """The steps as lines."""
    return "\n".join(step.text for step in steps)


CYCLE_LOOKBACK = 500


def trailing_test_cycle(conn: sqlite3.Connection, session_id: str) -> Step | None:
    """The test cycle the session's timeline ends in (a pass after failures and edits), or None.

    Walks back from the newest event only as far as the cycle reaches, so a long session costs no more
    than a short one.
    """
    rows = conn.execute(
        "SELECT type, target, metadata_json FROM events WHERE session_id=? ORDER BY timestamp DESC, rowid DESC LIMIT ?",
        (session_id, CYCLE_LOOKBACK),
    )
    first = rows.fetchone()  # rows are read lazily: the walk usually stops within a few
    if first is None or _role(_event(first)) != "pass":
        return None
    failures = 0
    files: list[str] = []
    for row in rows:
        role = _role(_event(row))
        if role == "file":
            if row[1] and row[1] not in files:
                files.append(row[1])
        elif role == "fail":
            failures += 1
        elif role != "read":
            break
    return _cycle_step(failures, list(reversed(files))) if failures else None


def maybe_test_cycle(conn: sqlite3.Connection, session_id: str, scope_key: str, event_id: str, at: str) -> str | None:
    """After a passing test run: if the session's timeline now ends in a test cycle, record it as an episode."""
    cycle = trailing_test_cycle(conn, session_id)
    if cycle is None:
        return None
    episode_id = f"test_cycle:{event_id}"
    queries.insert_episode_once(
        conn, episode_id, session_id, scope_key, "test_cycle", cycle.text, None, json.dumps({"event_id": event_id}), at
    )
    sync_episode_item(conn, episode_id)
    return episode_id


def summarize_session(conn: sqlite3.Connection, session_id: str, at: str, description: str | None = None) -> str | None:
    """Write (or rewrite) a session's summary episode from its activity and notes; None when there is nothing."""
    session = queries.session_row(conn, session_id)
    if session is None:
        return None
    steps = level1(conn, session_id, with_commands=False)
    commands = conn.execute(
        "SELECT category, COUNT(*) AS n, SUM(CASE WHEN exit_code NOT IN (0) THEN 1 ELSE 0 END) AS failed "
        "FROM command_runs WHERE session_id=? GROUP BY category ORDER BY category",
        (session_id,),
    ).fetchall()
    note_count = conn.execute(
        "SELECT COUNT(*) FROM notes WHERE session=(SELECT rowid FROM sessions WHERE id=?)", (session_id,)
    ).fetchone()[0]
    notes = conn.execute(
        "SELECT kind, subject FROM notes WHERE session=(SELECT "
        "rowid FROM sessions WHERE id=?) ORDER BY timestamp LIMIT 5",
        (session_id,),
    ).fetchall()
    if not steps and not commands and not notes and not description:
        return None
    lines = []
    if session["focus"]:
        lines.append(f"Focus: {session['focus']}")
    if description:
        lines.append(collapse(description))
    edited = [s.target for s in steps if s.kind in ("edit", "write") and s.target]
    if edited:
        unique = list(dict.fromkeys(edited))
        lines.append("Edited " + ", ".join(unique[:6]) + (f" (+{len(unique) - 6} more)" if len(unique) > 6 else ""))
    cycles = [s.text for s in steps if s.kind == "test_cycle"]
    lines.extend(cycles[:3])
    if commands:
        parts = [f"{r['n']} {r['category']}" + (f" ({r['failed']} failed)" if r["failed"] else "") for r in commands]
        lines.append("Commands: " + ", ".join(parts))
    read = [s.target for s in steps if s.kind == "read" and s.target]
    if read:
        unique = list(dict.fromkeys(read))
        lines.append("Read " + ", ".join(unique[:6]) + (f" (+{len(unique) - 6} more)" if len(unique) > 6 else ""))
    agents = [s.text for s in steps if s.kind == "agent"]
    lines.extend(agents[:3])
    # Notes are memory in their own right: the summary names them rather than repeating their text,
    # so a recall on their words finds the note, not three echoes of it.
    noted = [f"{n['kind']} on {n['subject']}" if n["subject"] else n["kind"] for n in notes]
    if noted:
        lines.append("Noted " + ", ".join(noted) + (f" (+{note_count - 5} more)" if note_count > 5 else ""))
    summary = "\n".join(lines)
    episode_id = f"session_summary:{session_id}"
    conn.execute(
        "INSERT INTO episodes(id, session_id, scope_key, kind, summary, target, metadata_json, created_at) "
        "VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
        "summary=excluded.summary, created_at=excluded.created_at",
        (episode_id, session_id, session["scope_key"], "session_summary", summary, None, "{}", at),
    )
    sync_episode_item(conn, episode_id)
    return episode_id


def consolidate(conn: sqlite3.Connection, scope_key: str, at: str) -> int:
    """Summarize every ended primary session of the scope that has no summary yet; returns how many.

    A session with no event, command or note has nothing to summarize and never gets a summary, so it stays a
    candidate for good: SQL skips it with three index probes instead of `summarize_session` reading it again
    (five queries) at every SessionStart. Sessions opened and closed without work (a `/clear`, a quick question)
    pile up over months.
    """
    rows = conn.execute(
        "SELECT s.id FROM sessions s WHERE s.scope_key=? AND s.parent_session_id IS NULL AND s.status='ended' "
        "AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.id = 'session_summary:' || s.id) "
        "AND (EXISTS (SELECT 1 FROM events WHERE session_id=s.id) OR EXISTS (SELECT 1 FROM command_runs WHERE "
        "session_id=s.id) OR EXISTS (SELECT 1 FROM notes WHERE session=s.rowid)) ORDER BY s.started_at",
        (scope_key,),
    ).fetchall()
    return sum(1 for row in rows if summarize_session(conn, row["id"], at) is not None)


def sync_branch_snapshot(conn: sqlite3.Connection, scope: Scope, at: str) -> str | None:
    """Rebuild the scope's snapshot (focus, summary, intents, blockers, recent files) as one memory item."""
    if scope.type not in ("branch", "detached"):
        return None
    primaries = conn.execute(
        "SELECT id, focus FROM sessions WHERE scope_key=? AND "
        "parent_session_id IS NULL ORDER BY started_at DESC, rowid DESC LIMIT 5",
        (scope.key,),
    ).fetchall()
    ids = [r["id"] for r in primaries]
    summary = None
    if ids:
        marks = ",".join("?" * len(ids))
        row = conn.execute(
            "SELECT summary FROM episodes WHERE kind='session_summary' "
            f"AND session_id IN ({marks}) ORDER BY created_at DESC LIMIT 1",
            ids,
        ).fetchone()
        summary = row["summary"] if row is not None else None
        if summary is None:
            for sid in ids:
                steps = recent_steps(conn, sid, 8)
                if steps:
                    summary = render(steps)
                    break

    def newest(kinds: tuple[str, ...], limit: int) -> list[sqlite3.Row]:
        # The newest of each kind through the (scope, status, kind, timestamp) index, then the newest of those:
        # across kinds at once SQLite would sort every active note of the scope. Every write path (a note, an
        # import) refuses a kind outside NOTE_KINDS, so the kinds asked for are all there are.
        # Notes written in the same millisecond come newest-written first (rowid), not in whatever order a sort
        # leaves them.
        one = (
            f"SELECT * FROM (SELECT kind, subject, content, timestamp, rowid AS written FROM scoped_notes "
            f"WHERE {IN_SCOPE} AND status='active' AND kind=? ORDER BY timestamp DESC, rowid DESC LIMIT ?)"
        )
        return conn.execute(
            f"SELECT kind, subject, content FROM ({' UNION ALL '.join([one] * len(kinds))}) "
            "ORDER BY timestamp DESC, written DESC LIMIT ?",
            [*(value for kind in kinds for value in (scope.key, kind, limit)), limit],
        ).fetchall()

    intents = [f"[{n['subject']}] {collapse(n['content'])[:100]}" for n in newest(("intent",), 5)]
    blockers = [f"[{n['subject']}] {collapse(n['content'])[:100]}" for n in newest(("blocker",), 5)]
    if summary is None:
        fallback = newest(NOTE_KINDS, 4)
        summary = "\n".join(f"[{n['subject'] or n['kind']}] {collapse(n['content'])[:100]}" for n in fallback) or None
    files: list[str] = []
    if ids:
        marks = ",".join("?" * len(ids[:3]))
        files = [
            r["target"]
            for r in conn.execute(
                "SELECT target, COUNT(*) AS n FROM events WHERE session_id "
                f"IN ({marks}) AND type IN ('read','edit','write') "
                f"AND target IS NOT NULL GROUP BY target ORDER BY n DESC, MAX(timestamp) DESC LIMIT 6",
                ids[:3],
            )
        ]
    focus = next((r["focus"] for r in primaries if r["focus"]), None)
    if summary is None and not intents and not blockers and not files:
        return None
    lines = []
    if focus:
        lines.append(f"Focus: {focus}")
    lines.append(f"Summary: {summary or 'No summarized activity yet.'}")
    if intents:
        lines.append("Intents: " + " | ".join(intents))
    if blockers:
        lines.append("Blockers: " + " | ".join(blockers))
    if files:
        lines.append("Recent files: " + ", ".join(files))
    text = "\n".join(lines)
    snapshot_id = f"branch:{scope.key}"
    item_id = f"branch_snapshots:{snapshot_id}"
    upsert_item(
        conn,
        item_id,
        ids[0] if ids else None,
        scope.key,
        "branch_snapshot",
        "branch_snapshots",
        snapshot_id,
        scope.branch or focus,
        text,
        "hot",
        SNAPSHOT_IMPORTANCE,
        at,
        references=False,
    )
    return item_id


PROJECT_STATE_CHARS = 2000
RECENT_SUMMARIES = 5


def merge_project_state(conn: sqlite3.Connection, scope: Scope, at: str) -> str | None:
    """Outside git, fold the summaries older than the newest five and the active notes into the project state.

    Only a project scope gets one: on a branch, a repository-wide layer built from branch memory would serve one
    branch's decisions on another, which is exactly what scoping exists to prevent.
    """
    if scope.type != "project":
        return None
    summaries = conn.execute(
        "SELECT summary FROM episodes WHERE scope_key=? AND kind='session_summary' ORDER BY created_at DESC LIMIT 100",
        (scope.key,),
    ).fetchall()
    if len(summaries) <= RECENT_SUMMARIES:
        return None
    older = [r["summary"].split("\n", 1)[0] for r in summaries[RECENT_SUMMARIES:]]
    notes = conn.execute(
        f"SELECT kind, subject, content FROM scoped_notes WHERE {IN_SCOPE} AND status='active' ORDER BY timestamp DESC "
        "LIMIT 20",
        (scope.key,),
    ).fetchall()
    parts = ["Earlier sessions:\n" + "\n".join(f"- {line}" for line in older)]
    if notes:
        parts.append(
            "Active notes:\n"
            + "\n".join(
                f"- {n['kind']}: {'[' + n['subject'] + '] ' if n['subject'] else ''}{collapse(n['content'])[:120]}"
                for n in notes
            )
        )
    text = "\n\n".join(parts)
    if len(text) > PROJECT_STATE_CHARS:
        text = text[:PROJECT_STATE_CHARS] + "\n[truncated]"
    item_id = f"project_snapshots:{scope.key}"
    upsert_item(
        conn,
        item_id,
        None,
        scope.key,
        "project_snapshot",
        "project_snapshots",
        scope.key,
        None,
        text,
        "warm",
        0.8,
        at,
        references=False,
    )
    return item_id
