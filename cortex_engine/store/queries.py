"""Named queries of the store layer for the subagent, reflex, operator and retention modules.

In: an open connection and plain values (scope keys, ids, ISO times). Out: rows, ids, counts. The callers hold
the rules (when to brief, what to deny, what retention keeps); the SQL that serves them lives here, so a schema
change is made in the store layer and nowhere else. Writes run inside the caller's `store.transaction`.
Standard library only.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence

from cortex_engine.store.database import IN_SCOPE, waiting_at_most

CHUNK = 500
"""Ids bound per `IN (...)` list: well under SQLite's variable limit."""


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


# -- meta, counters, session flags ---------------------------------------------------------------------------


def meta_value(conn: sqlite3.Connection, key: str) -> str | None:
    """One value of the store's `meta` table; None when unset."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return str(row["value"]) if row is not None else None


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    """Set one value of the store's `meta` table."""
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value", (key, value)
    )


def bump_counter(conn: sqlite3.Connection, key: str) -> None:
    """Add one to a named counter (created at 1)."""
    conn.execute("INSERT INTO counters(key, value) VALUES (?, 1) ON CONFLICT(key) DO UPDATE SET value=value+1", (key,))


def session_flag(conn: sqlite3.Connection, session_id: str, key: str) -> str | None:
    """A per-session flag's value; None when unset."""
    row = conn.execute("SELECT value FROM session_flags WHERE session_id=? AND key=?", (session_id, key)).fetchone()
    return str(row["value"]) if row is not None else None


def set_session_flag(conn: sqlite3.Connection, session_id: str, key: str, value: str) -> None:
    """Set a per-session flag."""
    conn.execute(
        "INSERT INTO session_flags(session_id, key, value) VALUES (?,?,?) "
        "ON CONFLICT(session_id, key) DO UPDATE SET value=excluded.value",
        (session_id, key, value),
    )


# -- sessions ------------------------------------------------------------------------------------------------


def session_row(conn: sqlite3.Connection, session_id: str) -> sqlite3.Row | None:
    """A session by id."""
    row: sqlite3.Row | None = conn.execute("SELECT * FROM sessions WHERE id=?", (session_id,)).fetchone()
    return row


def host_session_of(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The host's session id a session carries (None for one Cortex started itself, or no such session)."""
    row = conn.execute("SELECT host_session_id FROM sessions WHERE id=?", (session_id,)).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def mark_spool_seen(conn: sqlite3.Connection, keys: Sequence[tuple[str, str]]) -> int:
    """Record spool entries as replayed, `(key, seen_at)` each; how many were new (a seen key is left as it was)."""
    return conn.executemany("INSERT OR IGNORE INTO spool_seen(key, seen_at) VALUES (?,?)", keys).rowcount


def primary_session_count(conn: sqlite3.Connection, scope_key: str) -> int:
    """How many primary (non-subagent) sessions the scope has had."""
    row = conn.execute(
        "SELECT COUNT(*) FROM sessions WHERE scope_key=? AND parent_session_id IS NULL", (scope_key,)
    ).fetchone()
    return int(row[0])


def active_primary(conn: sqlite3.Connection, scope_key: str, host_session: str) -> str | None:
    """The newest active primary session of the scope for a host session ('' matches any host)."""
    row = conn.execute(
        "SELECT id FROM sessions WHERE parent_session_id IS NULL AND status='active' AND scope_key=? "
        "AND (host_session_id=? OR ?='') ORDER BY started_at DESC, rowid DESC LIMIT 1",
        (scope_key, host_session, host_session),
    ).fetchone()
    return str(row["id"]) if row is not None else None


def child_session_ids(conn: sqlite3.Connection, primary: str) -> list[str]:
    """The subagent sessions a primary session started."""
    return [str(r["id"]) for r in conn.execute("SELECT id FROM sessions WHERE parent_session_id=?", (primary,))]


def latest_agent_session(conn: sqlite3.Connection, scope_key: str, agent_id: str) -> sqlite3.Row | None:
    """The newest session of the scope that a subagent id ran in."""
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM sessions WHERE scope_key=? AND agent_id=? ORDER BY started_at DESC LIMIT 1",
        (scope_key, agent_id),
    ).fetchone()
    return row


def agent_session_under(conn: sqlite3.Connection, scope_key: str, agent_id: str, primary: str) -> str | None:
    """The id of the subagent session `agent_id` runs in under `primary`; None when it is not one."""
    row = conn.execute(
        "SELECT id FROM sessions WHERE scope_key=? AND agent_id=? AND parent_session_id=?",
        (scope_key, agent_id, primary),
    ).fetchone()
    return str(row["id"]) if row is not None else None


def end_session(conn: sqlite3.Connection, session_id: str, at: str) -> None:
    """Mark a session ended (its first end time is kept)."""
    conn.execute("UPDATE sessions SET status='ended', ended_at=COALESCE(ended_at, ?) WHERE id=?", (at, session_id))


# -- subagent dispatches -------------------------------------------------------------------------------------


def record_dispatch(
    conn: sqlite3.Connection,
    scope_key: str,
    host_session: str,
    agent_type: str,
    tool_use_id: object,
    description: str,
    prompt_digest: str,
    prompt_prefix: str,
    at: str,
) -> None:
    """Remember one Agent dispatch, so the subagent it starts can be briefed from it."""
    conn.execute(
        "INSERT INTO subagent_dispatches(scope_key, host_session_id, "
        "agent_type, tool_use_id, description, prompt_digest, "
        "prompt_prefix, captured_at) VALUES (?,?,?,?,?,?,?,?)",
        (scope_key, host_session, agent_type, tool_use_id, description, prompt_digest, prompt_prefix, at),
    )


def pending_dispatches(conn: sqlite3.Connection, host_session: str, agent_type: str, since: str) -> list[sqlite3.Row]:
    """Unclaimed dispatches of one agent type by a host session, captured at or after `since`."""
    return conn.execute(
        "SELECT * FROM subagent_dispatches WHERE host_session_id=? "
        "AND agent_type=? AND consumed_at IS NULL AND captured_at >= ?",
        (host_session, agent_type, since),
    ).fetchall()


def claim_dispatch(conn: sqlite3.Connection, dispatch_id: int, agent_id: str, at: str) -> bool:
    """Mark a dispatch consumed by a subagent; False when another claimed it first."""
    return (
        conn.execute(
            "UPDATE subagent_dispatches SET consumed_at=?, consumed_by_agent_id=? WHERE id=? AND consumed_at IS NULL",
            (at, agent_id, dispatch_id),
        ).rowcount
        > 0
    )


# -- episodes ------------------------------------------------------------------------------------------------


def insert_episode_once(
    conn: sqlite3.Connection,
    episode_id: str,
    session_id: str,
    scope_key: str,
    kind: str,
    summary: str,
    target: str | None,
    metadata_json: str,
    at: str,
) -> None:
    """Insert an episode unless one with this id exists (a repeated hook keeps the first)."""
    conn.execute(
        "INSERT OR IGNORE INTO episodes(id, session_id, scope_key, kind, summary, target, metadata_json, created_at) "
        "VALUES (?,?,?,?,?,?,?,?)",
        (episode_id, session_id, scope_key, kind, summary, target, metadata_json, at),
    )


def episodes_of_sessions(conn: sqlite3.Connection, session_ids: Sequence[str]) -> list[sqlite3.Row]:
    """(id, kind, summary) of the sessions' episodes: subagent conclusions first, then by time."""
    if not session_ids:
        return []
    return conn.execute(
        f"SELECT id, kind, summary FROM episodes WHERE session_id IN ({_marks(session_ids)}) "
        f"ORDER BY CASE kind WHEN 'subagent_conclusion' THEN 0 ELSE 1 END, created_at",
        list(session_ids),
    ).fetchall()


def subagent_conclusions(conn: sqlite3.Connection, session_ids: Sequence[str]) -> list[sqlite3.Row]:
    """(id, metadata_json) of the subagent conclusions recorded in these sessions."""
    if not session_ids:
        return []
    return conn.execute(
        "SELECT id, metadata_json FROM episodes WHERE "
        f"kind='subagent_conclusion' AND session_id IN ({_marks(session_ids)})",
        list(session_ids),
    ).fetchall()


def episode_metadata(conn: sqlite3.Connection, episode_id: str) -> str | None:
    """An episode's metadata JSON text; None when the episode or its metadata is missing."""
    row = conn.execute("SELECT metadata_json FROM episodes WHERE id=?", (episode_id,)).fetchone()
    return row["metadata_json"] if row is not None else None


def set_episode_metadata(conn: sqlite3.Connection, episode_id: str, metadata_json: str) -> None:
    """Replace an episode's metadata JSON."""
    conn.execute("UPDATE episodes SET metadata_json=? WHERE id=?", (metadata_json, episode_id))


# -- notes and items -----------------------------------------------------------------------------------------


def note_row(conn: sqlite3.Connection, note_id: str) -> sqlite3.Row | None:
    """A note by id, with its scope key."""
    row: sqlite3.Row | None = conn.execute("SELECT * FROM scoped_notes WHERE id=?", (note_id,)).fetchone()
    return row


def note_content(conn: sqlite3.Connection, note_id: str) -> str | None:
    """A note's stored content (without its trailers); None when there is no such note."""
    row = conn.execute("SELECT content FROM scoped_notes WHERE id=?", (note_id,)).fetchone()
    return str(row["content"]) if row is not None else None


def note_exists(conn: sqlite3.Connection, note_id: str) -> bool:
    """Whether a note with this id is stored, whatever its state."""
    return conn.execute("SELECT 1 FROM notes WHERE id=?", (note_id,)).fetchone() is not None


def set_note_content(conn: sqlite3.Connection, note_id: str, content: str) -> None:
    """Rewrite a note's content (its item is re-projected by the caller)."""
    conn.execute("UPDATE notes SET content=? WHERE id=?", (content, note_id))


def mark_contested(conn: sqlite3.Connection, note_id: str) -> None:
    """Flag a note as one side of a contest."""
    conn.execute("UPDATE notes SET conflict=1 WHERE id=?", (note_id,))


def delete_note(conn: sqlite3.Connection, note_id: str) -> None:
    """Remove a note's row (its item is the caller's to remove)."""
    conn.execute("DELETE FROM notes WHERE id=?", (note_id,))


def active_decision_peers(conn: sqlite3.Connection, scope_key: str, subject: str, kind: str) -> list[sqlite3.Row]:
    """The active notes on a (normalized) subject in the scope that a note of `kind` may contest or supersede:
    decisions, and notes of its own kind; oldest first."""
    return conn.execute(
        f"SELECT * FROM scoped_notes WHERE {IN_SCOPE} AND subject=? "
        "AND status='active' AND (kind='decision' OR kind=?) "
        "ORDER BY timestamp, rowid",
        (scope_key, subject, kind),
    ).fetchall()


def item_text(conn: sqlite3.Connection, item_id: str) -> str | None:
    """A memory item's text; None when there is no such item."""
    row = conn.execute("SELECT text FROM memory_items WHERE id=?", (item_id,)).fetchone()
    return str(row["text"]) if row is not None else None


def set_item_text(conn: sqlite3.Connection, item_id: str, text: str) -> None:
    """Rewrite a memory item's text (its references are re-extracted by the caller)."""
    conn.execute("UPDATE memory_items SET text=? WHERE id=?", (text, item_id))


def set_item_states(conn: sqlite3.Connection, states: Sequence[tuple[str, str]]) -> None:
    """Set memory items' states, `(state, item_id)` each."""
    conn.executemany("UPDATE memory_items SET state=? WHERE id=?", states)


def delete_item(conn: sqlite3.Connection, item_id: str) -> None:
    """Remove a memory item's row."""
    conn.execute("DELETE FROM memory_items WHERE id=?", (item_id,))


def drop_anchors(conn: sqlite3.Connection, item_id: str) -> None:
    """Forget an item's symbol anchors."""
    conn.execute("DELETE FROM memory_anchors WHERE memory_item_id=?", (item_id,))


def item_count(conn: sqlite3.Connection) -> int:
    """How many memory items the store holds, every scope and state."""
    return int(conn.execute("SELECT count(*) FROM memory_items").fetchone()[0])


def uncontested_active_notes(conn: sqlite3.Connection, scope_key: str, subject: str, kind: str) -> list[sqlite3.Row]:
    """The active, uncontested notes of one kind on a (normalized) subject in the scope."""
    return conn.execute(
        f"SELECT * FROM scoped_notes WHERE {IN_SCOPE} AND subject=? AND kind=? AND status='active' AND conflict=0",
        (scope_key, subject, kind),
    ).fetchall()


def latest_active_note(conn: sqlite3.Connection, scope_key: str, subject: str) -> sqlite3.Row | None:
    """The newest active note of any kind on a (normalized) subject in the scope."""
    row: sqlite3.Row | None = conn.execute(
        f"SELECT * FROM scoped_notes WHERE {IN_SCOPE} AND subject=? "
        "AND status='active' ORDER BY timestamp DESC LIMIT 1",
        (scope_key, subject),
    ).fetchone()
    return row


def item_source(conn: sqlite3.Connection, item_id: str) -> tuple[str | None, str | None] | None:
    """(source_table, source_id) of a memory item; None when there is no such item."""
    row = conn.execute("SELECT source_table, source_id FROM memory_items WHERE id=?", (item_id,)).fetchone()
    return (row["source_table"], row["source_id"]) if row is not None else None


def item_texts(conn: sqlite3.Connection, item_ids: Sequence[str]) -> dict[str, str]:
    """The stored text of each listed memory item that exists."""
    found: dict[str, str] = {}
    ids = list(item_ids)
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        for row in conn.execute(f"SELECT id, text FROM memory_items WHERE id IN ({_marks(chunk)})", chunk):
            found[str(row["id"])] = str(row["text"])
    return found


# -- references (schema 11: `item_refs` keyed by the item's rowid; `memory_references` is the view readers use) -----


def add_references(
    conn: sqlite3.Connection, item_id: str, refs: Sequence[tuple[str, str, str]], head: str | None
) -> None:
    """Store (type, raw, normalized) references of a memory item, recorded at HEAD `head`.

    The raw spelling is stored only when it differs from the normalized path, and the HEAD once per store
    (`git_oids`); `memory_references` shows both as they were given. Two statements whatever the count (a flush
    projects thousands of items).
    """
    if not refs:
        return
    if head is not None:
        conn.execute("INSERT OR IGNORE INTO git_oids(oid) VALUES (?)", (head,))
    conn.executemany(
        "INSERT INTO item_refs(item, reference_type, raw_reference, normalized_path, head) "
        "SELECT rowid, ?, ?, ?, (SELECT id FROM git_oids WHERE oid=?) FROM memory_items WHERE id=?",
        [(kind, None if raw == normalized else raw, normalized, head, item_id) for kind, raw, normalized in refs],
    )


def drop_references(conn: sqlite3.Connection, item_id: str) -> None:
    """Delete a memory item's stored references."""
    conn.execute("DELETE FROM item_refs WHERE item IN (SELECT rowid FROM memory_items WHERE id=?)", (item_id,))


def set_reference_status(
    conn: sqlite3.Connection, item_id: str, path: str, status: str, moved_to: str | None, checked_at: str
) -> None:
    """Record what a freshness check found for one reference (by normalized path) of a memory item."""
    conn.execute(
        "UPDATE item_refs SET status=?, moved_to=?, checked_at=? "
        "WHERE item IN (SELECT rowid FROM memory_items WHERE id=?) AND normalized_path=?",
        (status, moved_to, checked_at, item_id, path),
    )


def judged_rows(conn: sqlite3.Connection, item_ids: list[str]) -> tuple[list[sqlite3.Row], list[sqlite3.Row]]:
    """What freshness judges of these items: their references and their anchors, each in id order."""
    marks = ",".join("?" * len(item_ids))
    refs = conn.execute(
        "SELECT memory_item_id, normalized_path, reference_type, head_oid FROM memory_references "
        f"WHERE memory_item_id IN ({marks}) ORDER BY id",
        item_ids,
    ).fetchall()
    anchors = conn.execute(
        "SELECT id, memory_item_id, path, symbol, start_line, end_line, content_hash, head_oid "
        f"FROM memory_anchors WHERE memory_item_id IN ({marks}) ORDER BY id",
        item_ids,
    ).fetchall()
    return refs, anchors


class JudgedRows:
    """`judged_rows` for a pass that judges a pool a batch at a time: told the pool (`expect`), the first batch
    reads the rows of the whole pool with its own, and later batches among them are served from that read."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        """Read from `conn`; nothing expected yet."""
        self._conn = conn
        self._expected: list[str] = []
        self._read: tuple[frozenset[str], list[sqlite3.Row], list[sqlite3.Row]] | None = None

    def expect(self, item_ids: list[str]) -> None:
        """The items the next batches will come from (read with the next batch, at most 500 with it)."""
        self._expected, self._read = list(item_ids), None

    def read(self, chunk: list[str]) -> tuple[list[sqlite3.Row], list[sqlite3.Row]]:
        """`judged_rows` of `chunk`: from the pool's read when it holds them all."""
        wanted = set(chunk)
        if self._read is None and len(chunk) < len(self._expected) <= 500 - len(chunk):
            every = chunk + [item_id for item_id in self._expected if item_id not in wanted]
            self._read = (frozenset(every), *judged_rows(self._conn, every))
        if self._read is None or not wanted <= self._read[0]:
            return judged_rows(self._conn, chunk)
        refs, anchors = ([r for r in rows if r["memory_item_id"] in wanted] for rows in self._read[1:])
        return refs, anchors


def upgrade_anchors(conn: sqlite3.Connection, upgrades: list[tuple[int, str, int, int, str]]) -> None:
    """Store anchors re-read under the current span rule: (id, digest they had, start, end, new digest). An anchor
    whose digest changed since it was read (a re-anchor in between) is left as it is."""
    conn.executemany(
        "UPDATE memory_anchors SET start_line=?, end_line=?, content_hash=? WHERE id=? AND content_hash=?",
        [(start, end, digest, anchor_id, old) for anchor_id, old, start, end, digest in upgrades],
    )


# -- the token ledger ----------------------------------------------------------------------------------------


def injected_by_channel(
    conn: sqlite3.Connection,
    *,
    scope_key: str | None = None,
    session_tree: str | None = None,
    session: str | None = None,
) -> list[sqlite3.Row]:
    """(channel, n, total, top) of injected tokens per channel: the scope's, one primary session's tree, or one
    session's own.

    Raises:
        ValueError: not exactly one of `scope_key`, `session_tree` and `session` given.
    """
    if sum(x is not None for x in (scope_key, session_tree, session)) != 1:
        raise ValueError("give exactly one of scope_key, session_tree and session")
    args: tuple[str | None, ...]
    if scope_key is not None:
        where, args = "scope_key=?", (scope_key,)
    elif session is not None:
        where, args = "session_id=?", (session,)
    else:
        where, args = (
            "session_id IN (SELECT id FROM sessions WHERE id=? OR parent_session_id=?)",
            (session_tree, session_tree),
        )
    return conn.execute(
        f"SELECT channel, COUNT(*) AS n, COALESCE(SUM(tokens), 0) AS total, COALESCE(MAX(tokens), 0) AS top "
        f"FROM token_ledger WHERE direction='injected' AND {where} GROUP BY channel",
        args,
    ).fetchall()


def injected_per_session(conn: sqlite3.Connection, session_ids: list[str]) -> dict[str, int]:
    """Tokens injected into each listed session (its own injections, every channel), in one query."""
    rows = conn.execute(
        "SELECT session_id, COALESCE(SUM(tokens), 0) AS total FROM token_ledger WHERE direction='injected' "
        "AND session_id IN (SELECT value FROM json_each(?)) GROUP BY session_id",
        (json.dumps(session_ids),),
    )
    return {str(row["session_id"]): int(row["total"]) for row in rows}


def session_note_items(conn: sqlite3.Connection, session_id: str) -> list[sqlite3.Row]:
    """The memory items of a session's notes still stored, oldest first."""
    return conn.execute(
        "SELECT id, kind, subject, text, scope_key, created_at FROM scoped_items WHERE source_table='notes' "
        "AND id IN (SELECT 'notes:' || id FROM notes WHERE session=(SELECT "
        "rowid FROM sessions WHERE id=?)) ORDER BY created_at, rowid",
        (session_id,),
    ).fetchall()


def session_failures(conn: sqlite3.Connection, session_id: str) -> list[sqlite3.Row]:
    """A session's commands that exited non-zero, oldest first."""
    return conn.execute(
        "SELECT timestamp, category, command_summary, exit_code, stderr_tail FROM command_runs "
        "WHERE session_id=? AND exit_code NOT IN (0) ORDER BY timestamp, rowid",
        (session_id,),
    ).fetchall()


# -- retention -----------------------------------------------------------------------------------------------

_RETENTION = {
    # Events of sessions that ended before the cutoff and whose primary has a summary. Params: (cutoff,)
    "events": (
        "events",
        "session_id IN (SELECT s.id FROM sessions s WHERE s.status='ended' AND s.ended_at IS NOT NULL "
        "AND s.ended_at < ? AND EXISTS (SELECT 1 FROM episodes e "
        "WHERE e.id = 'session_summary:' || COALESCE(s.parent_session_id, s.id)))",
    ),
    # Retrieval log rows older than the cutoff, beyond the newest KEEP. Params: (cutoff, keep)
    "retrieval_log": (
        "retrieval_log",
        "created_at < ? AND id NOT IN (SELECT id FROM retrieval_log ORDER BY created_at DESC, id DESC LIMIT ?)",
    ),
    # Spool replay keys older than the cutoff. Params: (cutoff,)
    "spool_seen": ("spool_seen", "seen_at < ?"),
    # Archived, never-accessed items older than the cutoff that are no note, snapshot or summary.
    # Params: (cutoff, *kinds never pruned)
    "archived_memory_items": (
        "memory_items",
        "state='archived' AND access_count=0 AND created_at < ? AND kind NOT LIKE 'note:%' "
        "AND kind NOT IN ({kinds}) "
        "AND COALESCE(source_table, '') NOT IN ('notes', 'branch_snapshots', 'project_snapshots')",
    ),
}


def prune(
    conn: sqlite3.Connection,
    rule: str,
    params: Sequence[object],
    *,
    apply: bool,
    never_pruned_kinds: Sequence[str] = (),
) -> tuple[int, int]:
    """(candidates, deleted) for one retention rule; rows are deleted only with `apply`.

    Raises:
        KeyError: an unknown rule.
    """
    table, where = _RETENTION[rule]
    bound = tuple(params)
    if "{kinds}" in where:
        where = where.replace("{kinds}", _marks(never_pruned_kinds))
        bound += tuple(never_pruned_kinds)
    candidates = int(conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", bound).fetchone()[0])
    deleted = conn.execute(f"DELETE FROM {table} WHERE {where}", bound).rowcount if apply and candidates else 0
    return candidates, deleted


def freelist_ratio(conn: sqlite3.Connection) -> float:
    """The share of the store's pages that are free (0 for an empty file)."""
    pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    return free / pages if pages else 0.0


def fulltext_segments(conn: sqlite3.Connection) -> int | None:
    """How many segments (b-trees) the full-text index is made of; None when its structure cannot be read.

    Read from FTS5's structure record (row 10 of `memory_items_fts_data`: a 4-byte cookie, the 4-byte mark of a
    version-2 record where there is one, then varints: levels, segments, ...; `fts5StructureDecode` in SQLite's
    `fts5_index.c`). Only the count is taken.
    """
    row = conn.execute("SELECT block FROM memory_items_fts_data WHERE id = 10").fetchone()
    if row is None or not isinstance(row[0], bytes) or len(row[0]) < 6:
        return None
    block = row[0]
    at = 8 if block[4:8] == b"\xff\x00\x00\x01" else 4
    fields: list[int] = []
    value = length = 0
    while at < len(block) and len(fields) < 2:  # the level count, then the segment count
        byte = block[at]
        at += 1
        length += 1
        if length > 5:  # both are 32-bit varints
            return None
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            fields.append(value)
            value = length = 0
    return fields[1] if len(fields) == 2 else None


FULLTEXT_MERGE_STEP = 32
"""Pages one merge step writes at most (FTS5's `merge` command with a positive budget)."""


def tidy_fulltext(conn: sqlite3.Connection, pages: int, busy_ms: int) -> int | None:
    """Merge the full-text index's segments level by level, about `pages` pages at most; the segments left (None:
    unreadable).

    Each small write (a note, a flush) adds a segment to the FTS5 index, and FTS5's own merging keeps up only in
    steps of 64 pages written: a store written note by note holds 10 to 20 segments, and every query looks each of
    its terms up in each one. Here two or more segments of one level are merged (`usermerge` 2, set here: FTS5
    keeps it in the index's config), so the index tends to one segment per level; a lone large segment is never
    rewritten, and each step is its own transaction, so the pages it used up are free for the next one (merging
    everything in one statement wrote a 10k index whole beside the old one: 1.3 MB more file). A step that changes
    fewer than two rows found nothing to merge (FTS5's documented test), which ends the loop.

    Raises:
        sqlite3.OperationalError: the store stayed busy longer than `busy_ms` (the steps done are kept).
    """
    left = fulltext_segments(conn)
    if left is None or left <= 1:
        return left
    written = 0
    with waiting_at_most(conn, busy_ms):
        setting = conn.execute("SELECT v FROM memory_items_fts_config WHERE k='usermerge'").fetchone()
        if setting is None or setting[0] != 2:
            conn.execute("INSERT INTO memory_items_fts(memory_items_fts, rank) VALUES ('usermerge', 2)")  # once
        while written < pages:
            before = conn.total_changes
            conn.execute(
                "INSERT INTO memory_items_fts(memory_items_fts, rank) VALUES ('merge', ?)", (FULLTEXT_MERGE_STEP,)
            )
            written += FULLTEXT_MERGE_STEP
            if conn.total_changes - before < 2:
                break
    return fulltext_segments(conn)


def vacuum(conn: sqlite3.Connection, busy_ms: int) -> None:
    """VACUUM, waiting at most `busy_ms` for other connections (then the store's own busy timeout again).

    Raises:
        sqlite3.OperationalError: the store stayed busy (or the VACUUM failed).
    """
    with waiting_at_most(conn, busy_ms):
        conn.execute("VACUUM")


# -- the indexes and the queries that need them --------------------------------------------------------------

_S = "(SELECT id FROM scopes WHERE key IN (?))"
INDEX_QUERIES: dict[str, tuple[str, tuple[object, ...]]] = {
    # Each index of the schema, with a query of the engine that reads through it (the query's text as its module
    # runs it, sample values bound). tests/test_store.py checks SQLite's plan for each uses the index, and that
    # no index is missing here: an index no plan uses only costs writes and bytes.
    "sessions_scope": (  # Engine.current_session
        "SELECT * FROM sessions WHERE scope_key=? AND status='active' AND parent_session_id IS NULL "
        "ORDER BY started_at DESC, rowid DESC LIMIT 1",
        ("k",),
    ),
    "sessions_agent": (  # agent_session_under (and the one-session-per-agent rule)
        "SELECT id FROM sessions WHERE scope_key=? AND agent_id=? AND parent_session_id=?",
        ("k", "a", "p"),
    ),
    "sessions_host": (  # Engine.start_session: end the host session's primaries
        "SELECT id FROM sessions WHERE host_session_id=? AND parent_session_id IS NULL AND status='active'",
        ("h",),
    ),
    "retrieval_log_created": (  # Engine.refresh_tiers: reads booked in a time window
        "SELECT result_ids_json FROM retrieval_log WHERE created_at > ? AND created_at <= ?",
        ("a", "b"),
    ),
    "token_ledger_scope": (  # economy: a scope's spend
        "SELECT channel, direction, SUM(tokens) FROM token_ledger WHERE scope_key=? GROUP BY channel, direction",
        ("k",),
    ),
    "memory_corrections_item": (  # inspection: an item's corrections
        "SELECT * FROM memory_corrections WHERE memory_item_id=? ORDER BY created_at, id",
        ("i",),
    ),
    "events_session": (  # Engine.activity: a session's reads
        "SELECT COUNT(*) FROM events e WHERE e.session_id=? AND e.type='read'",
        ("s",),
    ),
    "events_target": (  # ledger: edited since read
        "SELECT 1 FROM events WHERE scope_key=? AND target=? AND type IN ('edit','write') AND timestamp >= ? LIMIT 1",
        ("k", "t", "a"),
    ),
    "episodes_session": (  # episodes_of_sessions
        "SELECT id, kind, summary FROM episodes WHERE session_id IN (?) "
        "ORDER BY CASE kind WHEN 'subagent_conclusion' THEN 0 ELSE 1 END, created_at",
        ("s",),
    ),
    "episodes_failure": (  # command_runs.FailureEpisodes: the same failure earlier in the session
        "SELECT id FROM episodes WHERE session_id=? AND kind='command_failure' AND summary >= ? AND summary < ? "
        "AND (summary=? OR summary >= ?) ORDER BY created_at DESC, rowid DESC LIMIT 1",
        ("s", "b", "b (seen \uffff", "b", "b (seen "),
    ),
    "subagent_dispatches_pending": (  # pending_dispatches
        "SELECT * FROM subagent_dispatches WHERE host_session_id=? AND agent_type=? AND consumed_at IS NULL "
        "AND captured_at >= ?",
        ("h", "t", "a"),
    ),
    "promotions_note": (  # merges: which note a promoted note came from
        "SELECT n.id, p.source_note_id FROM notes n LEFT JOIN promotions p ON p.note_id = n.id WHERE n.rowid = 1",
        (),
    ),
    "memory_anchors_item": (  # freshness: an item's anchors
        "SELECT id, path FROM memory_anchors WHERE memory_item_id IN (?)",
        ("i",),
    ),
    "command_runs_session": (  # summarize a session: its failures
        "SELECT timestamp, category FROM command_runs WHERE session_id=? AND exit_code NOT IN (0)",
        ("s",),
    ),
    "notes_subject": (  # latest_active_note
        f"SELECT * FROM scoped_notes WHERE scope_id IN {_S} AND subject=? AND status='active' "
        "ORDER BY timestamp DESC LIMIT 1",
        ("k", "s"),
    ),
    "notes_scope_time": (  # consolidation: the newest active notes of a kind (branch snapshot)
        f"SELECT kind, subject, content, timestamp FROM scoped_notes WHERE scope_id IN {_S} AND status='active' "
        "AND kind=? ORDER BY timestamp DESC, rowid DESC LIMIT 5",
        ("k", "intent"),
    ),
    "notes_session": (  # consolidation: a session's notes
        "SELECT kind, subject FROM notes WHERE session=(SELECT rowid FROM sessions WHERE id=?) ORDER BY timestamp "
        "LIMIT 5",
        ("s",),
    ),
    "notes_open_contests": (  # surfaces.open_contest_rows (SessionStart)
        f"SELECT 'notes:' || id FROM notes WHERE scope_id IN {_S} AND conflict=1 AND status='active'",
        ("k",),
    ),
    "memory_items_scope": (  # surfaces: a scope's most used items
        f"SELECT * FROM scoped_items WHERE scope_id IN {_S} AND access_count > 0 "
        "ORDER BY access_count DESC, last_accessed_at DESC, rowid DESC LIMIT 10",
        ("k",),
    ),
    "memory_items_created": (  # inspection.list_memory: every item, newest first
        "SELECT * FROM scoped_items ORDER BY created_at DESC, rowid DESC LIMIT 21 OFFSET 0",
        (),
    ),
    "memory_items_live": (  # the SessionStart brief: the newest pinned, hot or warm items
        f"SELECT id FROM memory_items WHERE scope_id IN {_S} AND state IN ('pinned','hot','warm') "
        "ORDER BY created_at DESC LIMIT 40",
        ("k",),
    ),
    "arrivals_pending": (  # arrivals.pending_count (the inbox's count on every brief)
        f"SELECT COUNT(*) FROM arrivals WHERE state='pending' AND scope_id IN {_S}",
        ("k",),
    ),
    "item_refs_item": (  # freshness: an item's references
        "SELECT memory_item_id, normalized_path FROM memory_references WHERE memory_item_id IN (?)",
        ("i",),
    ),
}

SCOPE_KEY_COLUMNS = ("scope_key", "target_scope_key", "source_scope_key")
"""Columns that hold a scope key as text (`scopes.key` holds the rest, by integer id)."""


def rename_scope_keys(conn: sqlite3.Connection, rename: Callable[[str], str]) -> int:
    """Rewrite every stored scope key through `rename` (a restore into a repository at another path); returns
    how many `scopes` rows changed. A renamed key that already exists is left as it was (UPDATE OR IGNORE)."""
    conn.create_function("cortex_rename_scope", 1, rename, deterministic=True)
    tables = [
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND sql NOT LIKE 'CREATE VIRTUAL%'")
    ]
    changed = 0
    for table in tables:
        columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
        for column in (c for c in columns if c in SCOPE_KEY_COLUMNS or (table == "scopes" and c == "key")):
            done = conn.execute(
                f'UPDATE OR IGNORE "{table}" SET "{column}" = cortex_rename_scope("{column}") '
                f'WHERE "{column}" != cortex_rename_scope("{column}")'
            )
            if table == "scopes":
                changed += done.rowcount
    return changed
