"""The session lifecycle: primary and subagent session rows, starting, summarizing and ending them.

In: a connection, a scope, an ISO time. A session belongs to one scope; a primary can carry the host's session id
(Claude Code's), and a subagent's session hangs under the primary that dispatched it. SessionStart ends this scope's
(and this host's) open primaries, consolidates what they did and starts a fresh one (`engagement` then readies the
worktree's runtime folder), except that a host session resumed or compacted carries on its own. The spool's replay
(`flush`) finds its sessions here, so this module never imports it. Writes run inside the caller's
`store.transaction` unless a function opens its own (said where it does).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from cortex_engine.base.ids import new_id
from cortex_engine.memory.items import defuse_labels
from cortex_engine.scope.identity import Scope
from cortex_engine.store import queries, reports
from cortex_engine.store.database import transaction

if TYPE_CHECKING:  # the real module, so that mypy checks every call through a lazy handle
    from cortex_engine.capture import consolidation
else:
    from cortex_engine.base.lazy import LazyModule

    consolidation = LazyModule("capture.consolidation")

SUMMARY_DESCRIPTION_CHARS = 500
"""`summarize(what)`: one line that leads the session summary."""


# -- session rows --------------------------------------------------------------------------------------------


def current(conn: sqlite3.Connection, scope_key: str) -> sqlite3.Row | None:
    """The newest active primary session of the scope, if any."""
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM sessions WHERE scope_key=? AND status='active' AND parent_session_id IS NULL "
        "ORDER BY started_at DESC, rowid DESC LIMIT 1",
        (scope_key,),
    ).fetchone()
    return row


def current_id(conn: sqlite3.Connection, scope_key: str) -> str | None:
    """The id of the scope's current primary session; None when there is none."""
    row = current(conn, scope_key)
    return str(row["id"]) if row is not None else None


def ensure(conn: sqlite3.Connection, scope: Scope, at: str) -> str:
    """The scope's current primary session, created (in its own transaction) when there is none."""
    found = current_id(conn, scope.key)
    if found is not None:
        return found
    with transaction(conn):
        return create_session(conn, scope, at)


def host_of(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The host's session id a session carries (None for a session Cortex started itself)."""
    return queries.host_session_of(conn, session_id)


def tree(conn: sqlite3.Connection, session_id: str) -> list[str]:
    """A session and the subagent sessions it started."""
    return [session_id, *queries.child_session_ids(conn, session_id)]


def primary_session(conn: sqlite3.Connection, scope: Scope, host_session: str, at: str) -> str:
    """The active primary for a host session in this scope; a scope change ends the old one and rotates."""
    if host_session:
        row = conn.execute(
            "SELECT id, scope_key FROM sessions WHERE host_session_id=? "
            "AND parent_session_id IS NULL AND status='active' "
            "ORDER BY started_at DESC, rowid DESC LIMIT 1",
            (host_session,),
        ).fetchone()
        if row is not None and row["scope_key"] == scope.key:
            return str(row["id"])
        if row is not None:
            end_session_tree(conn, row["id"], at)
    else:
        found = current_id(conn, scope.key)
        if found is not None:
            return found
    return create_session(conn, scope, at, host_session=host_session or None)


def host_primary(conn: sqlite3.Connection, scope: Scope, host_session: str, at: str) -> str:
    """`primary_session` in its own transaction (the hooks' entry point)."""
    with transaction(conn):
        return primary_session(conn, scope, host_session, at)


def create_session(
    conn: sqlite3.Connection,
    scope: Scope,
    at: str,
    *,
    host_session: str | None = None,
    parent: str | None = None,
    agent_id: str | None = None,
    agent_type: str = "primary",
) -> str:
    """Insert a session row carrying the scope."""
    session_id = new_id()
    conn.execute(
        "INSERT INTO sessions(id, parent_session_id, started_at, "
        "agent_type, agent_id, status, git_root, worktree_path, "
        "branch_ref, head_oid, scope_type, scope_key, host_session_id) VALUES (?,?,?,?,?, 'active', ?,?,?,?,?,?,?)",
        (
            session_id,
            parent,
            at,
            agent_type,
            agent_id,
            scope.git_root,
            scope.worktree,
            scope.branch,
            scope.head_oid,
            scope.type,
            scope.key,
            host_session,
        ),
    )
    return session_id


def child_session(conn: sqlite3.Connection, scope: Scope, primary: str, agent_id: str, agent_type: str, at: str) -> str:
    """Find or create the subagent's session under the primary; never rotates or ends the primary."""
    parent = queries.session_row(conn, primary)
    assert parent is not None  # the caller's primary session, found or created before
    row = conn.execute(
        "SELECT id, agent_type FROM sessions WHERE scope_key=? AND agent_id=? ORDER BY started_at DESC LIMIT 1",
        (parent["scope_key"], agent_id),
    ).fetchone()
    if row is not None:
        if agent_type and row["agent_type"] in ("subagent", "") and agent_type != row["agent_type"]:
            conn.execute("UPDATE sessions SET agent_type=? WHERE id=?", (agent_type, row["id"]))
        return str(row["id"])
    session_id = new_id()
    conn.execute(
        "INSERT INTO sessions(id, parent_session_id, started_at, "
        "agent_type, agent_id, status, git_root, worktree_path, "
        "branch_ref, head_oid, scope_type, scope_key, host_session_id) "
        "SELECT ?, id, ?, ?, ?, CASE WHEN status='active' THEN 'active' ELSE 'ended' END, git_root, worktree_path, "
        "branch_ref, head_oid, scope_type, scope_key, host_session_id FROM sessions WHERE id=?",
        (session_id, at, agent_type or "subagent", agent_id, primary),
    )
    return session_id


def end_session_tree(conn: sqlite3.Connection, session_id: str, at: str) -> None:
    """End a primary and its active children."""
    conn.execute(
        "UPDATE sessions SET status='ended', ended_at=? WHERE (id=? OR parent_session_id=?) AND status='active'",
        (at, session_id, session_id),
    )


def _open_primaries(conn: sqlite3.Connection, scope_key: str, host_session: str | None) -> list[str]:
    """This scope's active primaries, and the host session's (in whatever scope it last ran)."""
    ids = [
        str(r["id"])
        for r in conn.execute(
            "SELECT id FROM sessions WHERE scope_key=? AND parent_session_id IS NULL AND status='active'", (scope_key,)
        )
    ]
    if host_session:
        ids += [
            str(r["id"])
            for r in conn.execute(
                "SELECT id FROM sessions WHERE host_session_id=? AND parent_session_id IS NULL AND status='active'",
                (host_session,),
            )
        ]
    return ids


# -- the lifecycle -------------------------------------------------------------------------------------------


CONTINUING_SOURCES = ("resume", "compact")
"""SessionStart sources that carry on a host session Claude Code already had (`--resume`/`/resume`, a compaction):
the Cortex session that host session had goes on. `startup` and `clear` start a fresh one."""


def _continued(conn: sqlite3.Connection, scope: Scope, host_session: str | None, source: str | None) -> str | None:
    """The primary of this scope a continuing SessionStart carries on (the host session's newest), if any."""
    if not host_session or source not in CONTINUING_SOURCES:
        return None
    row = conn.execute(
        "SELECT id FROM sessions WHERE host_session_id=? AND parent_session_id IS NULL AND scope_key=? "
        "ORDER BY started_at DESC, rowid DESC LIMIT 1",
        (host_session, scope.key),
    ).fetchone()
    return None if row is None else str(row["id"])


def begin(conn: sqlite3.Connection, scope: Scope, at: str, host_session: str | None, source: str | None = None) -> str:
    """SessionStart's write, in one transaction: end the open primaries, summarize what ended, rebuild the branch
    snapshot (and outside git the project state), and start a fresh primary; returns its id.

    One Claude Code session is one Cortex session: a `resume` or `compact` start of a host session this scope
    already has carries on its Cortex session (reopened if another start had ended it; a summary written when it
    ended is dropped, to be written whole when it ends again), so its notes, focus and intents stay the current
    session's. `startup` and `clear` (a fresh context) start a new one.
    """
    with transaction(conn):
        kept = _continued(conn, scope, host_session, source)
        for session_id in _open_primaries(conn, scope.key, host_session):
            if session_id != kept:
                end_session_tree(conn, session_id, at)
        if kept is not None:
            reopened = conn.execute(
                "UPDATE sessions SET status='active', ended_at=NULL WHERE id=? AND status='ended'", (kept,)
            ).rowcount
            if reopened:
                queries.delete_item(conn, f"episodes:session_summary:{kept}")
                conn.execute("DELETE FROM episodes WHERE id=?", (f"session_summary:{kept}",))
        consolidation.consolidate(conn, scope.key, at)
        consolidation.sync_branch_snapshot(conn, scope, at)
        consolidation.merge_project_state(conn, scope, at)
        return kept if kept is not None else create_session(conn, scope, at, host_session=host_session)


def check_description(description: str | None) -> None:
    """Refuse a summary description over SUMMARY_DESCRIPTION_CHARS characters.

    Raises:
        InvalidInput: it is longer (nothing is written).
    """
    if description is not None and len(description) > SUMMARY_DESCRIPTION_CHARS:
        from cortex_engine.base.errors import InvalidInput

        raise InvalidInput(
            f"the summary's description is {len(description)} characters; the limit is "
            f"{SUMMARY_DESCRIPTION_CHARS} (one line on what the session did)",
            code="too_long",
        )


def summarize(conn: sqlite3.Connection, scope: Scope, at: str, description: str | None) -> str:
    """Write the scope's current session summary now (a checkpoint), in one transaction; returns its text."""
    session_id = current_id(conn, scope.key)
    if session_id is None:
        return "No active session."
    with transaction(conn):
        episode_id = consolidation.summarize_session(conn, session_id, at, description)
        consolidation.sync_branch_snapshot(conn, scope, at)
    if episode_id is None:
        return "No tracked activity this session."
    row = conn.execute("SELECT summary FROM episodes WHERE id=?", (episode_id,)).fetchone()
    return defuse_labels(str(row[0]))  # author text throughout (description, subagent tasks, subjects): no label reads


def resnapshot(conn: sqlite3.Connection, scope: Scope, at: str) -> None:
    """After a delete: rebuild the scope's branch snapshot (focus, intents, blockers) without what was deleted, so
    brief, header and stats stop naming it; drop the snapshot when nothing is left to snapshot. One transaction;
    nothing happens when the scope has no snapshot."""
    if not reports.has_branch_snapshot(conn, scope.key):
        return
    with transaction(conn):
        if consolidation.sync_branch_snapshot(conn, scope, at) is None:
            reports.drop_branch_snapshot(conn, scope.key)


def consolidate(conn: sqlite3.Connection, scope: Scope, at: str) -> int:
    """Summarize every ended session of the scope that has no summary yet, in one transaction; returns how many."""
    with transaction(conn):
        count = consolidation.consolidate(conn, scope.key, at)
        consolidation.sync_branch_snapshot(conn, scope, at)
    return count
