"""Projection of captured rows (command runs, episodes) into memory_items, the one retrieval layer."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from cortex_engine.memory.notes import extract_item_references
from cortex_engine.store.database import scope_id

EPISODE_IMPORTANCE = {"command_failure": 0.88, "test_cycle": 0.8, "session_summary": 0.68, "subagent_conclusion": 0.75}


def upsert_item(
    conn: sqlite3.Connection,
    item_id: str,
    session_id: str | None,
    scope_key: str,
    kind: str,
    source_table: str,
    source_id: str,
    subject: str | None,
    text: str,
    state: str,
    importance: float,
    created_at: str,
    *,
    references: bool = True,
    fresh: bool = False,
) -> None:
    """Insert a derived item, or re-project its text (keeping tier and access history); references follow unless
    the item only restates others' (a snapshot's file list would double every stale label). `fresh`: the source
    row was just written, so no item can exist for it yet."""
    row = None if fresh else conn.execute("SELECT text, subject FROM memory_items WHERE id=?", (item_id,)).fetchone()
    scope_type = scope_key.split(":", 1)[0]
    if row is None:
        # The id names the source (`<table>:<id>`, schema 11 computes source_table and source_id from it); an id
        # that does not keeps its source in own_source.
        own = None if item_id == f"{source_table}:{source_id}" else json.dumps([source_table, source_id])
        conn.execute(
            "INSERT INTO memory_items(id, session, scope_type, scope_id, kind, own_source, subject, text, state, "
            "importance, created_at) VALUES (?,(SELECT rowid FROM sessions WHERE id=?),?,?,?,?,?,?,?,?,?)",
            (
                item_id,
                session_id,
                scope_type,
                scope_id(conn, scope_key),
                kind,
                own,
                subject,
                text,
                state,
                importance,
                created_at,
            ),
        )
    elif row["text"] != text or row["subject"] != subject:
        conn.execute(
            "UPDATE memory_items SET text=?, subject=?, created_at=? WHERE id=?", (text, subject, created_at, item_id)
        )
    else:
        return
    if references:
        # A new item's scope is the one just inserted; an old item keeps the scope it has (read back).
        extract_item_references(
            conn, item_id, subject, text, fresh=row is None, scope_key=scope_key if row is None else None
        )


def sync_command_item(conn: sqlite3.Connection, run: Mapping[str, Any], *, fresh: bool = False) -> None:
    """Project one command run, given as its row reads (`command_runs` columns, values as stored): `[category]
    summary (exit N)` with files and output tails (`fresh`: the run was just recorded)."""
    run_id = run["id"]
    exit_part = f" (exit {run['exit_code']})" if run["exit_code"] is not None else ""
    lines = [f"[{run['category']}] {run['command_summary'] or 'command run'}{exit_part}"]
    files = json.loads(run["files_touched_json"] or "[]")
    if files:
        lines.append("Files: " + ", ".join(files))
    if run["stdout_tail"]:
        lines.append("Stdout: " + run["stdout_tail"])
    if run["stderr_tail"]:
        lines.append("Stderr: " + run["stderr_tail"])
    failed = run["exit_code"] not in (None, 0)
    importance = 0.72 if failed else 0.45 if run["category"] in ("test", "build", "git") else 0.3
    upsert_item(
        conn,
        f"command_runs:{run_id}",
        run["session_id"],
        run["scope_key"],
        "command_run",
        "command_runs",
        run_id,
        None,
        "\n".join(lines),
        "warm" if failed else "cold",
        importance,
        run["timestamp"],
        fresh=fresh,
    )


def sync_episode_item(conn: sqlite3.Connection, episode_id: str) -> None:
    """Project one episode: its summary, then target, files, command and output tails."""
    ep = conn.execute("SELECT * FROM episodes WHERE id=?", (episode_id,)).fetchone()
    if ep is None:
        return
    meta = json.loads(ep["metadata_json"] or "{}")
    lines = [ep["summary"]]
    if ep["target"]:
        lines.append(f"Target: {ep['target']}")
    files = meta.get("files") or meta.get("files_touched") or []
    if files:
        lines.append("Files: " + ", ".join(str(f) for f in files))
    if meta.get("command_summary"):
        lines.append(f"Command: {meta['command_summary']}")
    if meta.get("stdout_tail"):
        lines.append(f"Stdout: {meta['stdout_tail']}")
    if meta.get("stderr_tail"):
        lines.append(f"Stderr: {meta['stderr_tail']}")
    state = "hot" if ep["kind"] == "command_failure" else "warm"
    upsert_item(
        conn,
        f"episodes:{episode_id}",
        ep["session_id"],
        ep["scope_key"],
        f"episode:{ep['kind']}",
        "episodes",
        episode_id,
        ep["target"],
        "\n".join(lines),
        state,
        EPISODE_IMPORTANCE.get(ep["kind"], 0.6),
        ep["created_at"],
    )
