"""Events captured outside the spool: `cortex log …` by hand, and the failed calls a host reported only in its
transcript. Both go through the spool's own replay (`flush.Replayer`), so they are recorded exactly as a hook's
line would be, and never twice.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime

from cortex_engine.base.clock import iso
from cortex_engine.base.errors import InvalidInput
from cortex_engine.capture import flush, sessions
from cortex_engine.scope.identity import Scope
from cortex_engine.store import queries
from cortex_engine.store.database import transaction

TOOLS = {"read": "Read", "edit": "Edit", "write": "Write", "cmd": "Bash", "agent": "Agent"}
"""`cortex log` kinds and the host tool each one stands for."""


def replay_transcript_failures(
    conn: sqlite3.Connection, cwd: str, transcript_path: str, payload: dict[str, object], now: datetime
) -> int:
    """Record failed Bash calls the host reported only in its transcript (no PostToolUseFailure); idempotent."""
    from cortex_engine.capture.transcript import fallback_entries

    folder = flush.find_runtime(cwd)
    entries = fallback_entries(transcript_path, payload)
    if folder is None or not entries:
        return 0
    done = 0
    with transaction(conn):
        replayer = flush.Replayer(conn, turn_end=False, home=str(folder.parent))
        for entry in entries:
            use_id = entry["p"]["tool_use_id"]
            # A call the spool recorded either way (success or failure) is never recorded twice.
            if conn.execute(
                "SELECT 1 FROM spool_seen WHERE key=?", (flush.spool_key("PostToolUse", use_id),)
            ).fetchone():
                continue
            if queries.mark_spool_seen(conn, [(flush.spool_key("PostToolUseFailure", use_id), iso(now))]) == 0:
                continue
            done += int(replayer.replay(entry, iso(now)))
        replayer.finish(iso(now))
    return done


def log_event(
    conn: sqlite3.Connection,
    scope: Scope,
    cwd: str,
    now: datetime,
    kind: str,
    *,
    file: str | None,
    command: str | None,
    exit_code: int | None,
    stdout: str | None,
    stderr: str | None,
    description: str | None,
) -> bool:
    """Capture one event directly (`cortex log …`) in the scope's current session, through the spool's replay.

    Raises:
        InvalidInput: an unknown kind, or a kind without what it needs (a file, a command, a description).
    """
    if kind not in TOOLS:
        raise InvalidInput(f"unknown event kind {kind!r}; use {', '.join(TOOLS)}", code="bad_kind")
    tool_input: dict[str, object] = {}
    response: dict[str, object] = {}
    if kind in ("read", "edit", "write"):
        if not file:
            raise InvalidInput(f"log {kind} needs --file", code="bad_args")
        tool_input["file_path"] = os.path.join(cwd, file)
    elif kind == "cmd":
        if not command:
            raise InvalidInput("log cmd needs --cmd", code="bad_args")
        tool_input["command"] = command
        response = {
            "stdout": stdout or "",
            "stderr": stderr or "",
            "exit_code": exit_code if exit_code is not None else 0,
        }
    else:
        if not description:
            raise InvalidInput("log agent needs --desc", code="bad_args")
        tool_input["description"] = description
    session = sessions.ensure(conn, scope, iso(now))
    payload = {
        "session_id": sessions.host_of(conn, session) or "",
        "cwd": cwd,
        "hook_event_name": "PostToolUse",
        "tool_name": TOOLS[kind],
        "tool_input": tool_input,
        "tool_response": response,
    }
    with transaction(conn):
        replayer = flush.Replayer(conn, turn_end=False)
        done = replayer.replay({"p": payload}, iso(now))
        replayer.finish(iso(now))
    return done
