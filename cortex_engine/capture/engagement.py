"""Engaging capture in a worktree, and the status report that says whether it is engaged.

Engaging creates the worktree's self-ignoring runtime folder (0700) and marks it with this machine's key, so
the hooks spool there; SessionStart also empties what a new context cannot hold (the substitution index's reads).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from cortex_engine.base.errors import RuntimeUntrusted
from cortex_engine.capture import flush, sessions
from cortex_engine.capture.runtime import ENGAGED, IGNORE, IGNORE_TEXT, Runtime, home_key, marker_text
from cortex_engine.capture.standdown import STANDDOWN, project_capture
from cortex_engine.scope.identity import Scope, StoreIdentity, cortex_home, shown_scope_key
from cortex_engine.store import reports
from cortex_engine.store.database import SCHEMA_VERSION


def engage(worktree: str | os.PathLike[str]) -> Path:
    """Create the self-ignoring runtime folder (0700) and mark the worktree engaged with this machine's key.

    Raises:
        RuntimeUntrusted: the folder is a link, someone else's, or tracked by git (nothing is written).
    """
    folder = flush.runtime_dir(worktree)
    flush.reclaim(worktree)
    key = home_key(cortex_home())
    assert key is not None  # created on demand
    with Runtime.open(folder, create=True) as rt:
        rt.mkdir(flush.CLAIMS)
        rt.mkdir(flush.BLOBS)
        rt.write(IGNORE, IGNORE_TEXT)
        rt.write(ENGAGED, marker_text(key) + (f"{STANDDOWN}={key}\n" if _project_wires(worktree) else ""))
    return folder


def _project_wires(worktree: str | os.PathLike[str]) -> bool:
    """Whether the project wires Cortex itself (`standdown.project_capture`), for the mark the hook scripts read:
    the project Claude Code runs in (`$CLAUDE_PROJECT_DIR`) when it lies in this worktree, else the worktree."""
    root = os.path.realpath(worktree)
    env = os.environ.get("CLAUDE_PROJECT_DIR", "")
    inside = os.path.isabs(env) and (os.path.realpath(env) + os.sep).startswith(root + os.sep)
    return project_capture(env if inside else root) is not None


def disengage(worktree: str | os.PathLike[str]) -> bool:
    """Stop capture for the worktree; returns whether it was engaged."""
    try:
        with Runtime.open(flush.runtime_dir(worktree), tracked=False) as rt:
            return rt.unlink(ENGAGED)
    except (OSError, RuntimeUntrusted):
        return False


def reclaim_or_refuse(worktree: str) -> None:
    """Close a runtime folder left open to others (`flush.reclaim`), then refuse one that cannot be trusted.

    Raises:
        RuntimeUntrusted: the folder came with the repository (or is a link, someone else's).
    """
    flush.reclaim(worktree)
    problem = flush.runtime_problem(worktree)
    if problem is not None:
        raise RuntimeUntrusted(problem)


def substitution(worktree: str, action: str) -> str:
    """Turn verified read substitution on or off for the worktree, or report it: on | off | status.

    Raises:
        InvalidInput: another action.
    """
    from cortex_engine.base.errors import InvalidInput

    if action not in ("on", "off", "status"):
        raise InvalidInput(f"unknown substitution action {action!r}; use on, off or status", code="bad_args")
    folder = flush.runtime_dir(worktree)
    if action == "on":
        engage(worktree)
    elif not folder.exists():
        return "off"
    with flush.open_runtime(folder) as rt:
        if action == "on":
            rt.write(flush.SUBSTITUTION, "on\n")
        elif action == "off":
            rt.unlink(flush.SUBSTITUTION)
        return "on" if rt.is_file(flush.SUBSTITUTION) else "off"


def fresh_context(conn: sqlite3.Connection, worktree: str) -> None:
    """Engage capture for a new context, which holds none of the old session's reads: the substitution index
    forgets them now.

    Raises:
        RuntimeUntrusted: the runtime folder is a link, someone else's, or tracked by git.
    """
    folder = engage(worktree)
    with flush.open_runtime(folder) as rt:
        flush.write_index(conn, rt)
        rt.unlink(flush.TURN_READS)


def status(conn: sqlite3.Connection, scope: Scope, identity: StoreIdentity) -> dict[str, object]:
    """Counts that say what this store holds for this scope, whether capture is engaged here, and whether recall
    also ranks by meaning."""
    from cortex_engine.semantic.extra import summary as semantic_summary

    counts = reports.items_by_state(conn, scope.key)
    session = sessions.current(conn, scope.key)
    return {
        "engaged": flush.is_engaged(scope.worktree),
        "runtime_problem": flush.runtime_problem(scope.worktree),
        "worktree": scope.worktree,
        "branch": scope.branch,
        "head_oid": scope.head_oid,
        "degraded": identity.degraded_reason is not None,
        "session_started_at": session["started_at"] if session is not None else None,
        "store": str(identity.db_path),
        "schema_version": SCHEMA_VERSION,
        "scope_key": scope.key,
        "scope_key_shown": shown_scope_key(scope.key, identity.identifying_path, identity.root, scope.worktree),
        "scope_label": scope.label,
        "scope_type": scope.type,
        "items_by_state": counts,
        "items": sum(counts.values()),
        "contested_notes": reports.contested_count(conn, scope.key),
        "session": session["id"] if session is not None else None,
        "host_session_id": session["host_session_id"] if session is not None else None,
        "semantic": semantic_summary(conn),
    }
