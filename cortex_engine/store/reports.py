"""Named queries of the store layer for the reports the facade answers: status, activity, contests, the change
marks the operator view polls, and the validation audit's item list.

In: an open connection and plain values (scope keys, ids, ISO times). Out: rows, counts, tuples. The rules that
read them live in `query.reports`; a schema change is made here and nowhere else. Reads only, except the branch
snapshot's removal (inside the caller's `store.transaction`). Standard library only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from cortex_engine.store.database import IN_SCOPE, in_scopes

# -- probes: cheap questions about the store file itself -----------------------------------------------------


def schema_cookie(conn: sqlite3.Connection) -> int:
    """SQLite's schema version counter: changes when any process alters the schema (a migration)."""
    return int(conn.execute("PRAGMA schema_version").fetchone()[0])


def data_version(conn: sqlite3.Connection) -> int:
    """SQLite's data_version: changes when another connection commits."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


def has_vectors(conn: sqlite3.Connection, encoder: int) -> bool:
    """Whether any item has a sentence vector of this encoder yet (`semantic.extra.ENCODER`; the backfill replaces
    vectors in rowid order, so after its first batch the first rows read answer)."""
    return conn.execute("SELECT 1 FROM item_vectors WHERE encoder = ? LIMIT 1", (encoder,)).fetchone() is not None


def memory_mark(conn: sqlite3.Connection) -> tuple[tuple[object, ...], ...]:
    """Counts and rowid sums of the tables memory views show (items and tiers, notes and statuses, corrections,
    references, anchors): equal marks mean no such row changed."""

    def rows(sql: str) -> tuple[object, ...]:
        return tuple(tuple(row) for row in conn.execute(sql))

    return (
        rows("SELECT COUNT(*), MAX(rowid) FROM memory_items"),
        rows("SELECT scope_id, state, COUNT(*) FROM memory_items GROUP BY scope_id, state"),
        rows("SELECT COUNT(*), MAX(rowid) FROM notes"),
        rows("SELECT scope_id, status, COUNT(*) FROM notes GROUP BY scope_id, status"),
        rows("SELECT COUNT(*), MAX(rowid) FROM memory_corrections"),
        rows("SELECT COUNT(*), MAX(rowid), TOTAL(rowid) FROM item_refs"),
        rows("SELECT COUNT(*), MAX(rowid), TOTAL(rowid) FROM memory_anchors"),
    )


# -- status and activity -------------------------------------------------------------------------------------


def items_by_state(conn: sqlite3.Connection, scope_key: str) -> dict[str, int]:
    """How many memory items of the scope are in each state."""
    return {
        str(row["state"]): int(row["n"])
        for row in conn.execute(
            f"SELECT state, COUNT(*) AS n FROM memory_items WHERE {IN_SCOPE} GROUP BY state", (scope_key,)
        )
    }


def contested_count(conn: sqlite3.Connection, scope_key: str) -> int:
    """How many active notes of the scope are in an open contest."""
    return int(
        conn.execute(
            f"SELECT COUNT(*) FROM notes WHERE {IN_SCOPE} AND conflict=1 AND status='active'", (scope_key,)
        ).fetchone()[0]
    )


def session_activity(conn: sqlite3.Connection, scope_key: str, limit: int, session_id: str | None) -> list[sqlite3.Row]:
    """Sessions of the scope (or the one named), newest first, with their reads, edits, commands, failures, notes."""
    return conn.execute(
        "SELECT s.*, "
        "(SELECT COUNT(*) FROM events e WHERE e.session_id=s.id AND e.type='read') AS reads, "
        "(SELECT COUNT(*) FROM events e WHERE e.session_id=s.id AND e.type IN ('edit','write')) AS edits, "
        "(SELECT COUNT(*) FROM command_runs c WHERE c.session_id=s.id) AS commands, "
        "(SELECT COUNT(*) FROM command_runs c WHERE c.session_id=s.id AND c.exit_code NOT IN (0)) AS failures, "
        "(SELECT COUNT(*) FROM notes n WHERE n.session=s.rowid) AS notes "
        "FROM sessions s WHERE s.scope_key=? AND (? IS NULL OR "
        "s.id=?) ORDER BY s.started_at DESC, s.rowid DESC LIMIT ?",
        (scope_key, session_id, session_id, limit),
    ).fetchall()


def latest_summary_text(conn: sqlite3.Connection, scope_key: str, since: str) -> str | None:
    """The text of the scope's newest session summary written at or after `since`; None when there is none."""
    row = conn.execute(
        f"SELECT text FROM memory_items WHERE {IN_SCOPE} AND kind='episode:session_summary' AND created_at >= ? "
        "ORDER BY created_at DESC LIMIT 1",
        (scope_key, since),
    ).fetchone()
    return None if row is None else str(row["text"])


# -- contests ------------------------------------------------------------------------------------------------


def open_contest_notes(conn: sqlite3.Connection, scope_key: str) -> list[sqlite3.Row]:
    """The scope's active contested notes with their memory item's id, by subject, oldest first."""
    return conn.execute(
        "SELECT n.*, m.id AS item_id FROM scoped_notes n LEFT JOIN memory_items m ON m.id = 'notes:' || n.id "
        f"WHERE {in_scopes(1, 'n.')} AND n.conflict=1 AND n.status='active' ORDER BY n.subject, n.timestamp, n.rowid",
        (scope_key,),
    ).fetchall()


# -- the validation audit ------------------------------------------------------------------------------------


def referenced_scope_keys(conn: sqlite3.Connection) -> list[str]:
    """Every scope with a live item that references a file."""
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT DISTINCT scope_key FROM scoped_items WHERE state != 'archived' "
            "AND id IN (SELECT memory_item_id FROM memory_references) ORDER BY scope_key"
        )
    ]


def referencing_items(conn: sqlite3.Connection, scope_keys: Sequence[str]) -> list[sqlite3.Row]:
    """Every non-archived item of these scopes that references a file, newest first."""
    return conn.execute(
        "SELECT rowid, id, kind, subject, text, state, scope_key, created_at FROM scoped_items "
        f"WHERE {in_scopes(len(scope_keys))} AND state != 'archived' "
        "AND id IN (SELECT memory_item_id FROM memory_references) ORDER BY created_at DESC, rowid DESC",
        list(scope_keys),
    ).fetchall()


# -- the branch snapshot -------------------------------------------------------------------------------------


def has_branch_snapshot(conn: sqlite3.Connection, scope_key: str) -> bool:
    """Whether the scope has a branch snapshot item."""
    return (
        conn.execute(f"SELECT 1 FROM memory_items WHERE {IN_SCOPE} AND kind='branch_snapshot'", (scope_key,)).fetchone()
        is not None
    )


def drop_branch_snapshot(conn: sqlite3.Connection, scope_key: str) -> None:
    """Remove the scope's branch snapshot item (nothing is left to snapshot)."""
    conn.execute(f"DELETE FROM memory_items WHERE {IN_SCOPE} AND kind='branch_snapshot'", (scope_key,))
