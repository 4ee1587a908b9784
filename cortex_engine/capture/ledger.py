"""The read ledger: have I already got this file, and is it still what I read? Decided by re-hashing."""

from __future__ import annotations

import hashlib
import os
import sqlite3

from cortex_engine.base.clock import ts_min
from cortex_engine.base.records import record
from cortex_engine.capture.digests import DIGEST_CEILING, relative_path
from cortex_engine.scope.identity import Scope

LINE_CHARS = 120


@record(frozen=True)
class LedgerVerdict:
    """One file's verdict: unread | missing | unchanged-since | changed-since | edited-by-you-since."""

    path: str
    verdict: str
    since: str | None = None
    detail: str | None = None
    recorded_by: str | None = None

    def line(self) -> str:
        """`path: verdict <ts>[ (detail)][ (read by …)]`, capped at 120 characters."""
        text = f"{self.path}: {self.verdict}"
        if self.since:
            text += f" {ts_min(self.since)}"
        if self.detail:
            text += f" ({self.detail})"
        if self.recorded_by and self.recorded_by != "you":
            text += f" ({self.recorded_by})"
        return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"

    def to_dict(self) -> dict[str, object]:
        """The `read-ledger --json` shape of one result."""
        return {
            "path": self.path,
            "verdict": self.verdict,
            "since": self.since,
            "detail": self.detail,
            "recorded_by": self.recorded_by,
        }


def lineage(conn: sqlite3.Connection, session_id: str | None) -> set[str]:
    """The session and its ancestors: reads by these are "yours"."""
    found: set[str] = set()
    while session_id and session_id not in found:
        found.add(session_id)
        row = conn.execute("SELECT parent_session_id FROM sessions WHERE id=?", (session_id,)).fetchone()
        session_id = row["parent_session_id"] if row is not None else None
    return found


def _hash(path: str) -> tuple[str | None, str | None]:
    """(sha256, None) or (None, 'missing' | 'unverifiable')."""
    if not os.path.lexists(path):
        return None, "missing"
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > DIGEST_CEILING:
            return None, "unverifiable"
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest(), None
    except OSError:
        return None, "unverifiable"


def judge(conn: sqlite3.Connection, scope: Scope, session_id: str | None, raw_path: str, cwd: str) -> LedgerVerdict:
    """The verdict for one path; every uncertainty resolves to a miss (changed-since), never to unchanged.

    A file that is not there and was never read is `missing`, not `unread` (there is nothing to read).

    Raises:
        InvalidInput: the path is outside the worktree (the ledger records reads of this checkout only).
    """
    absolute = raw_path if os.path.isabs(raw_path) else os.path.join(cwd, raw_path)
    rel = relative_path(absolute, scope.worktree)
    if os.path.isabs(rel) or rel == ".." or rel.startswith("../"):
        from cortex_engine.base.errors import InvalidInput

        raise InvalidInput(
            f"{raw_path[:200]!r} is outside this worktree ({scope.worktree}); the read ledger covers "
            "files of this checkout only",
            code="outside_worktree",
        )
    row = conn.execute(
        "SELECT d.*, s.agent_type FROM content_digests d LEFT JOIN sessions s ON s.id = d.session_id "
        "WHERE d.scope_key=? AND d.path=?",
        (scope.key, rel),
    ).fetchone()
    if row is None:
        return LedgerVerdict(rel, "missing" if not os.path.lexists(absolute) else "unread")
    mine = lineage(conn, session_id)
    if row["session_id"] in mine:
        by = "you"
    elif row["agent_type"] and row["agent_type"] != "primary":
        by = f"read by subagent {row['agent_type']}"
    else:
        by = "read in an earlier session"
    since = row["recorded_at"]
    if mine:
        marks = ",".join("?" * len(mine))
        edited = conn.execute(
            f"SELECT 1 FROM events WHERE scope_key=? AND target=? AND type IN ('edit','write') AND timestamp >= ? "
            f"AND session_id IN ({marks}) LIMIT 1",
            (scope.key, rel, since, *mine),
        ).fetchone()
        if edited is not None:
            return LedgerVerdict(rel, "edited-by-you-since", since, None, by)
    current, problem = _hash(absolute)
    if problem is not None:
        return LedgerVerdict(rel, "changed-since", since, problem, by)
    if row["oversize"] or not row["sha256"]:
        return LedgerVerdict(rel, "changed-since", since, "unverifiable", by)
    if current != row["sha256"]:
        return LedgerVerdict(rel, "changed-since", since, None, by)
    return LedgerVerdict(rel, "unchanged-since", since, None, by)


def known_unchanged(conn: sqlite3.Connection, scope: Scope, limit: int = 5) -> list[str]:
    """Up to `limit` files this scope has read whose bytes still hash to the record, most-read first."""
    rows = conn.execute(
        "SELECT path, sha256 FROM content_digests WHERE scope_key=? AND oversize=0 AND sha256 IS NOT NULL "
        "ORDER BY read_count DESC, recorded_at DESC LIMIT 50",
        (scope.key,),
    ).fetchall()
    found = []
    for row in rows:
        path = row["path"] if os.path.isabs(row["path"]) else os.path.join(scope.worktree, row["path"])
        current, problem = _hash(path)
        if problem is None and current == row["sha256"]:
            found.append(row["path"])
            if len(found) == limit:
                break
    return found
