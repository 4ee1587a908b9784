"""The SQLite store: connection settings, schema, forward migrations and the version guard."""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from cortex_engine.base import settings
from cortex_engine.base.errors import StoreBusy, StoreDamaged, StoreFull, StoreReadOnly, StoreRefused, StoreUnavailable
from cortex_engine.store.redact import CleanConnection

SCHEMA_VERSION = 13
BUSY_TIMEOUT_MS = 5000
WAL_MAX_BYTES = 4 * 1024 * 1024
WAL_MIN_BYTES = 4096

_V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    parent_session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    focus TEXT,
    agent_type TEXT NOT NULL DEFAULT 'primary',
    agent_id TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    git_root TEXT,
    worktree_path TEXT,
    branch_ref TEXT,
    head_oid TEXT,
    scope_type TEXT NOT NULL DEFAULT 'project',
    scope_key TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_scope ON sessions(scope_key, status, started_at);
CREATE UNIQUE INDEX IF NOT EXISTS sessions_agent ON sessions(scope_key, agent_id) WHERE agent_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS notes (
    id TEXT PRIMARY KEY,
    session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    scope_key TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    kind TEXT NOT NULL,
    subject TEXT,
    content TEXT NOT NULL,
    alternatives TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    conflict INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS notes_subject ON notes(scope_key, subject, status);
CREATE TABLE IF NOT EXISTS memory_items (
    id TEXT PRIMARY KEY,
    session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    scope_type TEXT NOT NULL,
    scope_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    source_table TEXT,
    source_id TEXT,
    subject TEXT,
    text TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'warm',
    importance REAL NOT NULL DEFAULT 0,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS memory_items_source ON memory_items(source_table, source_id)
    WHERE source_table IS NOT NULL;
CREATE INDEX IF NOT EXISTS memory_items_scope ON memory_items(scope_key, state, created_at);
CREATE INDEX IF NOT EXISTS memory_items_created ON memory_items(created_at DESC);
CREATE INDEX IF NOT EXISTS memory_items_scope_created ON memory_items(scope_key, created_at);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_items_fts USING fts5(
    subject, text, content='memory_items', content_rowid='rowid', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS memory_items_ai AFTER INSERT ON memory_items BEGIN
    INSERT INTO memory_items_fts(rowid, subject, text) VALUES (new.rowid, COALESCE(new.subject, ''), new.text);
END;
CREATE TRIGGER IF NOT EXISTS memory_items_ad AFTER DELETE ON memory_items BEGIN
    INSERT INTO memory_items_fts(memory_items_fts, rowid, subject, text)
        VALUES ('delete', old.rowid, COALESCE(old.subject, ''), old.text);
END;
CREATE TRIGGER IF NOT EXISTS memory_items_au AFTER UPDATE OF subject, text ON memory_items BEGIN
    INSERT INTO memory_items_fts(memory_items_fts, rowid, subject, text)
        VALUES ('delete', old.rowid, COALESCE(old.subject, ''), old.text);
    INSERT INTO memory_items_fts(rowid, subject, text) VALUES (new.rowid, COALESCE(new.subject, ''), new.text);
END;
CREATE TABLE IF NOT EXISTS memory_references (
    id INTEGER PRIMARY KEY,
    memory_item_id TEXT NOT NULL REFERENCES memory_items(id) ON DELETE CASCADE,
    reference_type TEXT NOT NULL,
    raw_reference TEXT NOT NULL,
    normalized_path TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'unknown',
    checked_at TEXT,
    moved_to TEXT
);
CREATE INDEX IF NOT EXISTS memory_references_item ON memory_references(memory_item_id);
CREATE TABLE IF NOT EXISTS current_app_graphs (
    scope_key TEXT PRIMARY KEY,
    worktree_path TEXT,
    head_oid TEXT,
    signature TEXT,
    files_json TEXT NOT NULL DEFAULT '[]',
    file_count INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT
);
CREATE TABLE IF NOT EXISTS file_renames (
    id INTEGER PRIMARY KEY,
    scope_key TEXT NOT NULL,
    old_path TEXT NOT NULL,
    new_path TEXT NOT NULL,
    head_oid TEXT,
    detected_at TEXT,
    UNIQUE(scope_key, old_path)
);
CREATE TABLE IF NOT EXISTS retrieval_log (
    id INTEGER PRIMARY KEY,
    session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    scope_key TEXT NOT NULL,
    channel TEXT NOT NULL,
    topic TEXT,
    query_text TEXT,
    result_ids_json TEXT NOT NULL DEFAULT '[]',
    total_candidates INTEGER NOT NULL DEFAULT 0,
    returned_count INTEGER NOT NULL DEFAULT 0,
    token_estimate INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS retrieval_log_created ON retrieval_log(created_at);
CREATE TABLE IF NOT EXISTS token_ledger (
    id INTEGER PRIMARY KEY,
    session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    scope_key TEXT NOT NULL,
    channel TEXT NOT NULL,
    direction TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    timestamp TEXT NOT NULL,
    evidence_kind TEXT,
    evidence_ref TEXT,
    evidence_size INTEGER
);
CREATE INDEX IF NOT EXISTS token_ledger_scope ON token_ledger(scope_key, timestamp);
CREATE TABLE IF NOT EXISTS memory_corrections (
    id INTEGER PRIMARY KEY,
    memory_item_id TEXT NOT NULL,
    source_table TEXT,
    source_id TEXT,
    scope_key TEXT NOT NULL,
    operation TEXT NOT NULL,
    prior_text TEXT NOT NULL,
    new_text TEXT,
    prior_subject TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_corrections_item ON memory_corrections(memory_item_id);
"""

# Version 2: capture (spool replay, sessions per host session, events, commands, episodes, the read ledger).
_V2 = """
ALTER TABLE sessions ADD COLUMN host_session_id TEXT;
CREATE INDEX IF NOT EXISTS sessions_host ON sessions(host_session_id, scope_key);
CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    scope_key TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    type TEXT NOT NULL,
    target TEXT,
    metadata_json TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS events_session ON events(session_id, timestamp);
CREATE INDEX IF NOT EXISTS events_target ON events(scope_key, target, type);
CREATE TABLE IF NOT EXISTS command_runs (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    event_id TEXT REFERENCES events(id) ON DELETE SET NULL,
    scope_key TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    category TEXT NOT NULL,
    command_summary TEXT NOT NULL,
    exit_code INTEGER,
    stdout_tail TEXT,
    stderr_tail TEXT,
    files_touched_json TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS episodes (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    scope_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    summary TEXT NOT NULL,
    target TEXT,
    metadata_json TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS episodes_session ON episodes(session_id, kind, created_at);
CREATE TABLE IF NOT EXISTS content_digests (
    scope_key TEXT NOT NULL,
    path TEXT NOT NULL,
    sha256 TEXT,
    byte_size INTEGER,
    session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    agent_id TEXT,
    oversize INTEGER NOT NULL DEFAULT 0,
    read_count INTEGER NOT NULL DEFAULT 1,
    source TEXT NOT NULL DEFAULT 'file',
    refund_eligible INTEGER NOT NULL DEFAULT 0,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (scope_key, path)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS spool_seen (key TEXT PRIMARY KEY, seen_at TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS subagent_dispatches (
    id INTEGER PRIMARY KEY,
    scope_key TEXT NOT NULL,
    host_session_id TEXT NOT NULL,
    agent_type TEXT NOT NULL,
    tool_use_id TEXT,
    description TEXT NOT NULL,
    prompt_digest TEXT,
    prompt_prefix TEXT,
    captured_at TEXT NOT NULL,
    consumed_at TEXT,
    consumed_by_agent_id TEXT
);
CREATE INDEX IF NOT EXISTS subagent_dispatches_pending ON subagent_dispatches(host_session_id, agent_type, consumed_at);
CREATE TABLE IF NOT EXISTS session_flags (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, value INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS negative_results (
    scope_key TEXT NOT NULL,
    query_key TEXT NOT NULL,
    pattern TEXT NOT NULL,
    root TEXT NOT NULL,
    params_json TEXT NOT NULL DEFAULT '{}',
    head_oid TEXT,
    census_sha256 TEXT NOT NULL,
    census_files INTEGER NOT NULL,
    census_bytes INTEGER NOT NULL,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (scope_key, query_key)
) WITHOUT ROWID;
"""

# Version 3: indexes for the branch snapshot's newest notes by kind, a session's notes, and the `(seen Nx)`
# lookup of a repeated failure (100k-item stores and 10k-line flushes).
_V3 = """
CREATE INDEX IF NOT EXISTS notes_scope_time ON notes(scope_key, status, kind, timestamp);
CREATE INDEX IF NOT EXISTS notes_session ON notes(session_id, timestamp);
CREATE INDEX IF NOT EXISTS episodes_summary ON episodes(session_id, kind, summary);
"""

# Version 4: each reference records the HEAD its item was written on, so freshness can follow the path commit
# by commit from there; `rename_chains` caches that walk per (recorded HEAD, current HEAD).
_V4 = """
ALTER TABLE memory_references ADD COLUMN head_oid TEXT;
CREATE TABLE IF NOT EXISTS rename_chains (
    from_oid TEXT NOT NULL,
    to_oid TEXT NOT NULL,
    start_oid TEXT,
    moves_json TEXT NOT NULL DEFAULT '{}',
    computed_at TEXT,
    PRIMARY KEY (from_oid, to_oid)
) WITHOUT ROWID;
"""

# Version 5: where a note came from when it was imported (`cortex import CLAUDE.md`); NULL for notes written here.
_V5 = """
ALTER TABLE notes ADD COLUMN source TEXT;
"""

# Version 6: memory follows git. A note's origin (`from <branch>`, `shared`); the last HEAD seen for each scope
# (a deleted branch's tip); which note was promoted into which scope (a merge check never copies twice); and
# the shared decision files read from the repository at HEAD (path, blob, the note they became).
_V6 = """
ALTER TABLE notes ADD COLUMN origin TEXT;
CREATE TABLE IF NOT EXISTS scope_heads (
    scope_key TEXT PRIMARY KEY,
    branch TEXT,
    head_oid TEXT NOT NULL,
    seen_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS promotions (
    source_note_id TEXT NOT NULL,
    target_scope_key TEXT NOT NULL,
    source_scope_key TEXT NOT NULL,
    note_id TEXT NOT NULL,
    how TEXT NOT NULL,
    promoted_at TEXT NOT NULL,
    PRIMARY KEY (source_note_id, target_scope_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS promotions_note ON promotions(note_id);
CREATE TABLE IF NOT EXISTS shared_files (
    scope_key TEXT NOT NULL,
    path TEXT NOT NULL,
    blob_oid TEXT NOT NULL,
    note_id TEXT,
    problem TEXT,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (scope_key, path)
) WITHOUT ROWID;
"""

# Version 7: claim-level anchors: the symbol or line range a note names inside a file it references, with the
# hash of that span's whitespace-free content when the note was written (`anchors.py`).
_V7 = """
CREATE TABLE IF NOT EXISTS memory_anchors (
    id INTEGER PRIMARY KEY,
    memory_item_id TEXT NOT NULL REFERENCES memory_items(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    symbol TEXT,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    head_oid TEXT,
    anchored_at TEXT
);
CREATE INDEX IF NOT EXISTS memory_anchors_item ON memory_anchors(memory_item_id);
"""

# Version 8: a smaller store. Notes and memory items name their scope by a small integer (`scopes`) instead of
# repeating its key string (~60-120 bytes) in every row and in every scope index; the (scope, state, created_at)
# index that overlapped (scope, created_at) is gone. Rows keep their rowids, so the external-content full-text
# index stays valid. Reads that want the key go through the `scoped_notes` and `scoped_items` views, the one
# place a scope key is matched to its id; writes store `scope_id(conn, key)`.
_V8 = """
CREATE TABLE IF NOT EXISTS scopes (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
INSERT OR IGNORE INTO scopes(key) SELECT scope_key FROM memory_items UNION SELECT scope_key FROM notes ORDER BY 1;
CREATE TABLE notes_v8 (
    id TEXT PRIMARY KEY,
    session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    scope_id INTEGER NOT NULL REFERENCES scopes(id),
    timestamp TEXT NOT NULL,
    kind TEXT NOT NULL,
    subject TEXT,
    content TEXT NOT NULL,
    alternatives TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    conflict INTEGER NOT NULL DEFAULT 0,
    source TEXT,
    origin TEXT
);
INSERT INTO notes_v8(rowid, id, session_id, scope_id, timestamp, kind, subject, content, alternatives, status, conflict,
                     source, origin)
    SELECT n.rowid, n.id, n.session_id, s.id, n.timestamp, n.kind, n.subject, n.content, n.alternatives, n.status,
           n.conflict, n.source, n.origin
    FROM notes n JOIN scopes s ON s.key = n.scope_key ORDER BY n.rowid;
DROP TABLE notes;
ALTER TABLE notes_v8 RENAME TO notes;
CREATE INDEX notes_subject ON notes(scope_id, subject, status);
CREATE INDEX notes_scope_time ON notes(scope_id, status, kind, timestamp);
CREATE INDEX notes_session ON notes(session_id, timestamp);
CREATE TABLE memory_items_v8 (
    id TEXT PRIMARY KEY,
    session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    scope_type TEXT NOT NULL,
    scope_id INTEGER NOT NULL REFERENCES scopes(id),
    kind TEXT NOT NULL,
    source_table TEXT,
    source_id TEXT,
    subject TEXT,
    text TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'warm',
    importance REAL NOT NULL DEFAULT 0,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    created_at TEXT NOT NULL
);
INSERT INTO memory_items_v8(rowid, id, session_id, scope_type, scope_id, kind, source_table, source_id, subject, text,
                            state, importance, access_count, last_accessed_at, created_at)
    SELECT m.rowid, m.id, m.session_id, m.scope_type, s.id, m.kind, m.source_table, m.source_id, m.subject, m.text,
           m.state, m.importance, m.access_count, m.last_accessed_at, m.created_at
    FROM memory_items m JOIN scopes s ON s.key = m.scope_key ORDER BY m.rowid;
DROP TABLE memory_items;
ALTER TABLE memory_items_v8 RENAME TO memory_items;
CREATE UNIQUE INDEX memory_items_source ON memory_items(source_table, source_id) WHERE source_table IS NOT NULL;
CREATE INDEX memory_items_scope ON memory_items(scope_id, created_at);
CREATE INDEX memory_items_created ON memory_items(created_at DESC);
CREATE TRIGGER memory_items_ai AFTER INSERT ON memory_items BEGIN
    INSERT INTO memory_items_fts(rowid, subject, text) VALUES (new.rowid, COALESCE(new.subject, ''), new.text);
END;
CREATE TRIGGER memory_items_ad AFTER DELETE ON memory_items BEGIN
    INSERT INTO memory_items_fts(memory_items_fts, rowid, subject, text)
        VALUES ('delete', old.rowid, COALESCE(old.subject, ''), old.text);
END;
CREATE TRIGGER memory_items_au AFTER UPDATE OF subject, text ON memory_items BEGIN
    INSERT INTO memory_items_fts(memory_items_fts, rowid, subject, text)
        VALUES ('delete', old.rowid, COALESCE(old.subject, ''), old.text);
    INSERT INTO memory_items_fts(rowid, subject, text) VALUES (new.rowid, COALESCE(new.subject, ''), new.text);
END;
CREATE VIEW scoped_notes AS
    SELECT n.rowid AS rowid, n.*, s.key AS scope_key FROM notes n JOIN scopes s ON s.id = n.scope_id;
CREATE VIEW scoped_items AS
    SELECT m.rowid AS rowid, m.*, s.key AS scope_key FROM memory_items m JOIN scopes s ON s.id = m.scope_id;
"""

# Version 9: indexes for what every SessionStart reads.
# - command_runs_session: summarizing a session counted its commands by scanning every command run ever recorded
#   (and deleting a session cascaded through the same scan).
# - memory_items_live (partial): the brief walks the newest pinned, hot or warm items of its scopes; without it the
#   query read the state of every item in the scope, ~2 ms at 10k.
# - notes_open_contests (partial): open contests are a handful of notes; without it the query scanned every active
#   note in the scope. It repeats status and conflict as columns: without statistics the planner prefers the
#   index that matches the most equalities, and notes_scope_time's (scope_id, status) would otherwise win.
# SQLite uses a partial index only for a query that repeats its WHERE terms, so the queries spell them as here.
_V9 = """
CREATE INDEX IF NOT EXISTS memory_items_live ON memory_items(scope_id, created_at)
    WHERE state IN ('pinned','hot','warm');
CREATE INDEX IF NOT EXISTS notes_open_contests ON notes(scope_id, status, conflict)
    WHERE conflict=1 AND status='active';
CREATE INDEX IF NOT EXISTS command_runs_session ON command_runs(session_id);
"""

# Version 10: the inbox (issue 26). What arrives from outside (a decision file committed by someone else, an
# imported note) waits here until a person accepts or rejects it; nothing in it is a note, so no surface ranks it
# and no rule runs against it. A row keeps where the arrival came from (file path, commit, author and date as git
# records them) and what it says, and its review state; keyed by the scope's integer id like notes.
_V10 = """
CREATE TABLE IF NOT EXISTS arrivals (
    id TEXT PRIMARY KEY,
    scope_id INTEGER NOT NULL REFERENCES scopes(id),
    channel TEXT NOT NULL CHECK (channel IN ('shared', 'import')),
    path TEXT NOT NULL,
    blob_oid TEXT,
    commit_oid TEXT,
    author TEXT,
    authored_at TEXT,
    note_id TEXT,
    kind TEXT NOT NULL,
    subject TEXT,
    content TEXT NOT NULL,
    alternatives TEXT,
    timestamp TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'active',
    source TEXT,
    seq INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'accepted', 'rejected', 'withdrawn')),
    arrived_at TEXT NOT NULL,
    decided_at TEXT,
    result_note_id TEXT
);
CREATE INDEX IF NOT EXISTS arrivals_pending ON arrivals(scope_id, state) WHERE state='pending';
CREATE INDEX IF NOT EXISTS arrivals_file ON arrivals(scope_id, path, blob_oid);
"""

# Version 11: each text stored once, rows keyed by integer, only the indexes a query plan uses (issue 30: the
# reference corpus's 10k notes made a 16.8 MiB store). `notes` and `memory_items` are rebuilt with their rowids.
# - A note's content is kept by its memory item: the item's text is the note's projection, `<kind>: <content>`
#   then trailers, so `notes.content` is NULL and `content_chars` says how long it is; `scoped_notes` reads it out
#   of the item. Triggers on memory_items keep this exact on every path (raw SQL included): a note whose item
#   text no longer starts with `<kind>: <content>` (an edit, a deletion) gets its content written back first, and
#   is shared again only when the item's new text holds it verbatim (a content line the projection indents never
#   is). Readers take a note's content from `scoped_notes`, never from `notes.content`.
# - Notes and items name their session by the session's integer rowid (`session`); `scoped_notes` and
#   `scoped_items` show `session_id`. Deleting a session clears it (a trigger, as ON DELETE SET NULL did).
# - An item's `source_table` and `source_id` are computed from its id, which is always `<source_table>:<source_id>`
#   (`own_source` holds them, as JSON, for an item whose id is not). The primary key then finds, and keeps
#   unique, an item by its source: memory_items_source is gone, and queries ask `id = 'notes:' || n.id`.
# - References live in `item_refs`, keyed by the item's rowid, with the raw spelling only when it differs from
#   the normalized path, the status only once a check set it (NULL reads `unknown`), and the HEAD as an
#   integer into `git_oids` (one HEAD was repeated as 40 hex characters in every reference).
#   `memory_references` is a view with the old columns for readers; writes go through
#   `store.queries` (add_references, drop_references, set_reference_status). Deleting an item deletes its
#   references (a trigger: a rowid cannot be a foreign key target here).
# - notes_session keys the session alone (a session's notes are a few dozen, sorted in memory).
# - episodes_summary is gone: no plan used it. Its (session_id, kind) prefix is episodes_session's, and SQLite read
#   the `(seen Nx)` lookup through that one (a session's failures are a handful).
# - notes_subject holds only notes with a subject: every query through it asks `subject=?` (which SQLite knows
#   implies the index's `subject IS NOT NULL`), and insights often have none.
# - arrivals_file (schema 10) is gone: no plan used it (`arrivals.known_files` reads the scope's shared arrivals
#   without the scope index, by design, and nothing looks an arrival up by path).
# - memory_items_created ascends: items arrive in time order, and a descending index took every new key at its
#   left edge, leaving its pages half full (SQLite walks an index backwards for `ORDER BY created_at DESC`).
_V11 = """
CREATE TABLE notes_v10 (
    id TEXT PRIMARY KEY,
    session INTEGER,
    scope_id INTEGER NOT NULL REFERENCES scopes(id),
    timestamp TEXT NOT NULL,
    kind TEXT NOT NULL,
    subject TEXT,
    content TEXT,
    alternatives TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    conflict INTEGER NOT NULL DEFAULT 0,
    source TEXT,
    origin TEXT,
    content_chars INTEGER
);
INSERT INTO notes_v10(rowid, id, session, scope_id, timestamp, kind, subject, content, alternatives, status, conflict,
                      source, origin, content_chars)
    SELECT n.rowid, n.id, (SELECT rowid FROM sessions WHERE id = n.session_id), n.scope_id, n.timestamp, n.kind,
           n.subject, CASE WHEN n.shared THEN NULL ELSE n.content END, n.alternatives, n.status, n.conflict, n.source,
           n.origin, CASE WHEN n.shared THEN length(n.content) END
    FROM (SELECT n.*, n.rowid AS rowid, COALESCE(substr(m.text, 1, length(n.kind) + 2 + length(n.content))
                                                 = n.kind || ': ' || n.content, 0) AS shared
          FROM notes n LEFT JOIN memory_items m ON m.id = 'notes:' || n.id) n
    ORDER BY n.rowid;
DROP VIEW scoped_notes;
DROP TABLE notes;
ALTER TABLE notes_v10 RENAME TO notes;
CREATE INDEX notes_subject ON notes(scope_id, subject, status) WHERE subject IS NOT NULL;
CREATE INDEX notes_scope_time ON notes(scope_id, status, kind, timestamp);
CREATE INDEX notes_session ON notes(session);
CREATE INDEX notes_open_contests ON notes(scope_id, status, conflict) WHERE conflict=1 AND status='active';
CREATE TABLE memory_items_v10 (
    id TEXT PRIMARY KEY,
    session INTEGER,
    scope_type TEXT NOT NULL,
    scope_id INTEGER NOT NULL REFERENCES scopes(id),
    kind TEXT NOT NULL,
    subject TEXT,
    text TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'warm',
    importance REAL NOT NULL DEFAULT 0,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    created_at TEXT NOT NULL,
    own_source TEXT,
    source_table TEXT GENERATED ALWAYS AS (CASE WHEN own_source IS NULL THEN substr(id, 1, instr(id, ':') - 1)
                                                ELSE json_extract(own_source, '$[0]') END) VIRTUAL,
    source_id TEXT GENERATED ALWAYS AS (CASE WHEN own_source IS NULL THEN substr(id, instr(id, ':') + 1)
                                             ELSE json_extract(own_source, '$[1]') END) VIRTUAL
);
INSERT INTO memory_items_v10(rowid, id, session, scope_type, scope_id, kind, subject, text, state, importance,
                             access_count, last_accessed_at, created_at, own_source)
    SELECT m.rowid, m.id, (SELECT rowid FROM sessions WHERE id = m.session_id), m.scope_type, m.scope_id, m.kind,
           m.subject, m.text, m.state, m.importance, m.access_count, m.last_accessed_at, m.created_at,
           CASE WHEN instr(m.id, ':') > 0 AND m.id = m.source_table || ':' || m.source_id THEN NULL
                ELSE json_array(m.source_table, m.source_id) END
    FROM memory_items m ORDER BY m.rowid;
DROP VIEW scoped_items;
DROP TABLE memory_items;
ALTER TABLE memory_items_v10 RENAME TO memory_items;
CREATE INDEX memory_items_scope ON memory_items(scope_id, created_at);
CREATE INDEX memory_items_created ON memory_items(created_at);
CREATE INDEX memory_items_live ON memory_items(scope_id, created_at) WHERE state IN ('pinned','hot','warm');
CREATE TRIGGER memory_items_ai AFTER INSERT ON memory_items BEGIN
    INSERT INTO memory_items_fts(rowid, subject, text) VALUES (new.rowid, COALESCE(new.subject, ''), new.text);
END;
CREATE TRIGGER memory_items_ad AFTER DELETE ON memory_items BEGIN
    INSERT INTO memory_items_fts(memory_items_fts, rowid, subject, text)
        VALUES ('delete', old.rowid, COALESCE(old.subject, ''), old.text);
END;
CREATE TRIGGER memory_items_au AFTER UPDATE OF subject, text ON memory_items BEGIN
    INSERT INTO memory_items_fts(memory_items_fts, rowid, subject, text)
        VALUES ('delete', old.rowid, COALESCE(old.subject, ''), old.text);
    INSERT INTO memory_items_fts(rowid, subject, text) VALUES (new.rowid, COALESCE(new.subject, ''), new.text);
END;
CREATE TRIGGER notes_text_share_ai AFTER INSERT ON memory_items WHEN new.source_table = 'notes' BEGIN
    UPDATE notes SET content_chars = length(content), content = NULL
        WHERE id = new.source_id AND content IS NOT NULL
          AND substr(new.text, 1, length(kind) + 2 + length(content)) = kind || ': ' || content;
END;
CREATE TRIGGER notes_text_keep_bu BEFORE UPDATE OF text ON memory_items WHEN old.source_table = 'notes' BEGIN
    UPDATE notes SET content = substr(old.text, length(kind) + 3, content_chars), content_chars = NULL
        WHERE id = old.source_id AND content IS NULL;
END;
CREATE TRIGGER notes_text_share_au AFTER UPDATE OF text ON memory_items WHEN new.source_table = 'notes' BEGIN
    UPDATE notes SET content_chars = length(content), content = NULL
        WHERE id = new.source_id AND content IS NOT NULL
          AND substr(new.text, 1, length(kind) + 2 + length(content)) = kind || ': ' || content;
END;
CREATE TRIGGER notes_text_keep_bd BEFORE DELETE ON memory_items WHEN old.source_table = 'notes' BEGIN
    UPDATE notes SET content = substr(old.text, length(kind) + 3, content_chars), content_chars = NULL
        WHERE id = old.source_id AND content IS NULL;
END;
CREATE TRIGGER sessions_gone AFTER DELETE ON sessions BEGIN
    UPDATE notes SET session = NULL WHERE session = old.rowid;
    UPDATE memory_items SET session = NULL WHERE session = old.rowid;
END;
CREATE VIEW scoped_notes AS
    SELECT n.rowid AS rowid, n.id, (SELECT id FROM sessions WHERE rowid = n.session) AS session_id, n.scope_id,
           n.timestamp, n.kind, n.subject,
           COALESCE(n.content, (SELECT substr(m.text, length(n.kind) + 3, n.content_chars) FROM memory_items m
                                WHERE m.id = 'notes:' || n.id)) AS content,
           n.alternatives, n.status, n.conflict, n.source, n.origin, s.key AS scope_key
    FROM notes n JOIN scopes s ON s.id = n.scope_id;
CREATE VIEW scoped_items AS
    SELECT m.rowid AS rowid, m.id, (SELECT id FROM sessions WHERE rowid = m.session) AS session_id, m.scope_type,
           m.scope_id, m.kind, m.source_table, m.source_id, m.subject, m.text, m.state, m.importance, m.access_count,
           m.last_accessed_at, m.created_at, s.key AS scope_key
    FROM memory_items m JOIN scopes s ON s.id = m.scope_id;
DROP INDEX episodes_summary;
DROP INDEX IF EXISTS arrivals_file;
CREATE TABLE git_oids (id INTEGER PRIMARY KEY, oid TEXT NOT NULL UNIQUE);
INSERT INTO git_oids(oid) SELECT DISTINCT head_oid FROM memory_references WHERE head_oid IS NOT NULL ORDER BY 1;
CREATE TABLE item_refs (
    id INTEGER PRIMARY KEY,
    item INTEGER NOT NULL,
    reference_type TEXT NOT NULL,
    raw_reference TEXT,
    normalized_path TEXT NOT NULL,
    status TEXT,
    checked_at TEXT,
    moved_to TEXT,
    head INTEGER REFERENCES git_oids(id)
);
INSERT INTO item_refs(id, item, reference_type, raw_reference, normalized_path, status, checked_at, moved_to, head)
    SELECT r.id, m.rowid, r.reference_type, NULLIF(r.raw_reference, r.normalized_path), r.normalized_path,
           NULLIF(r.status, 'unknown'), r.checked_at, r.moved_to, g.id
    FROM memory_references r JOIN memory_items m ON m.id = r.memory_item_id LEFT JOIN git_oids g ON g.oid = r.head_oid
    ORDER BY r.id;
DROP TABLE memory_references;
CREATE INDEX item_refs_item ON item_refs(item);
CREATE VIEW memory_references AS
    SELECT r.id AS id, m.id AS memory_item_id, r.reference_type, COALESCE(r.raw_reference, r.normalized_path)
               AS raw_reference, r.normalized_path, COALESCE(r.status, 'unknown') AS status, r.checked_at, r.moved_to,
           g.oid AS head_oid
    FROM item_refs r JOIN memory_items m ON m.rowid = r.item LEFT JOIN git_oids g ON g.id = r.head;
CREATE TRIGGER item_refs_cascade AFTER DELETE ON memory_items BEGIN
    DELETE FROM item_refs WHERE item = old.rowid;
END;
"""

# Version 12: sentence vectors for the optional dense retriever (`cortex_engine.semantic`), one per memory item,
# keyed by the item's integer rowid: a float32 scale and 384 int8 components (`semantic.vectors.pack`), 388 bytes
# (about 410 bytes an item in the store).
# `vector_generation` (meta) changes with every vector written or dropped: the in-memory search matrix follows it.
# A vector follows its item's words: deleting the item or changing its subject or text drops the vector, and the
# warm server, the detached flush or `cortex embed` embeds it again (until then the item is found lexically).
_V12 = """
CREATE TABLE IF NOT EXISTS item_vectors (
    item_rowid INTEGER PRIMARY KEY,
    vector BLOB NOT NULL
);
CREATE TRIGGER IF NOT EXISTS item_vectors_ad AFTER DELETE ON memory_items BEGIN
    DELETE FROM item_vectors WHERE item_rowid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS item_vectors_au AFTER UPDATE OF subject, text ON memory_items BEGIN
    DELETE FROM item_vectors WHERE item_rowid = old.rowid;
END;
INSERT OR IGNORE INTO meta(key, value) VALUES ('vector_generation', '0');
CREATE TRIGGER IF NOT EXISTS item_vectors_gen_ai AFTER INSERT ON item_vectors BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation';
END;
CREATE TRIGGER IF NOT EXISTS item_vectors_gen_ad AFTER DELETE ON item_vectors BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation';
END;
CREATE TRIGGER IF NOT EXISTS item_vectors_gen_scope AFTER UPDATE OF scope_id ON memory_items BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation';
END;
"""

# Version 13: `cortex undo` (issue 29). An audited action keeps what it changed beyond the text: `before_state` and
# `after_state` (JSON: a deleted note's row, the status and conflict of each note a resolve touched), and an undone
# action points at the correction that undid it (`undone_by`), so it is not undone twice.
_V13 = """
ALTER TABLE memory_corrections ADD COLUMN before_state TEXT;
ALTER TABLE memory_corrections ADD COLUMN after_state TEXT;
ALTER TABLE memory_corrections ADD COLUMN undone_by INTEGER;
"""

# Each entry upgrades the schema from version N-1 to N; index 0 creates version 1.
MIGRATIONS: tuple[str, ...] = (_V1, _V2, _V3, _V4, _V5, _V6, _V7, _V8, _V9, _V10, _V11, _V12, _V13)
assert len(MIGRATIONS) == SCHEMA_VERSION

_UPGRADE_HINT = "upgrade Cortex (pip install -U cortex-memory-layer) and try again"


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """Open a connection with the store's pragmas (WAL, foreign keys, busy timeout).

    The connection cleans every string parameter (`redact.CleanConnection`): the one choke point that keeps
    secrets and terminal escapes out of the store, whichever path writes.
    """
    if readonly:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, isolation_level=None,
                               check_same_thread=False, factory=CleanConnection)
    else:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, factory=CleanConnection)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    if not readonly:
        _use_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA cache_size=-16384")  # 16 MiB: a 10k-line flush or a 100k-item recall stays in memory
        conn.execute("PRAGMA temp_store=MEMORY")
    return conn


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch the store to WAL. Two processes creating the same new store at the same instant both ask to
    switch, and SQLite answers one of them "locked" at once instead of waiting (waiting could deadlock): that
    one tries again, for as long as the busy timeout, by which time the other has switched it.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def read_version(db: Path) -> int:
    """The schema version of an existing store, read without writing a byte of it.

    With no `-wal` file the database file holds everything committed, so it is read as immutable and SQLite
    creates no `-wal`/`-shm`. Otherwise (or when that read fails) it is opened read-only, so a WAL is read
    too (reading past it could report a stale version).

    Raises:
        StoreRefused: a newer or corrupt schema version.
        sqlite3.Error: the file cannot be opened or read as SQLite.
    """
    if not _sidecars(db)[0].exists():
        try:
            conn = sqlite3.connect(f"file:{quote(str(db))}?mode=ro&immutable=1", uri=True)
        except sqlite3.Error:
            conn = None
        if conn is not None:
            try:
                return stored_version(conn)
            except sqlite3.Error:
                pass
            finally:
                conn.close()
    conn = connect(db, readonly=True)
    try:
        return stored_version(conn)
    finally:
        conn.close()


def stored_version(conn: sqlite3.Connection) -> int:
    """Read the schema version before any DDL: 0 for a fresh file; refuse a corrupt or newer one."""
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if not has_meta:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    if row is None:
        return 0
    raw = str(row[0]).strip()
    if not re.fullmatch(r"\d+", raw):
        raise StoreRefused(
            f"the store's schema version {raw!r} is corrupt; nothing was written — "
            "move the store aside (see `cortex store`) and Cortex will start a fresh one",
            code="corrupt_schema_version",
        )
    version = int(raw)
    if version > SCHEMA_VERSION:
        raise StoreRefused(
            f"the store was written by a newer Cortex (schema {version}, this build reads up to "
            f"{SCHEMA_VERSION}); nothing was written — {_UPGRADE_HINT}",
            code="newer_schema",
        )
    return version


def _private(path: Path) -> None:
    """The store holds what agents read and ran: its folder is 0700 and its file 0600 (SQLite gives the WAL the same).

    Only group and other bits are ever removed, so a store its owner made read-only stays read-only.
    """
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError:
        pass  # it exists (or cannot be created: connect says why)
    for item in (path.parent, path):
        try:
            mode = item.stat().st_mode
            if mode & 0o077 and item.stat().st_uid == os.geteuid():
                os.chmod(item, mode & 0o700)
        except OSError:
            pass  # not ours to change: opening it reports any real problem


def open_store(path: Path, *, root: str, now: str) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the store forward; refuse newer or corrupt versions.

    An existing store's version is checked read-only first: the read-write open switches the journal to
    WAL, which rewrites header bytes of a store this build must refuse.

    Raises:
        StoreRefused: a newer or corrupt version, or a store SQLite cannot use (see `store_error`).
    """
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreUnavailable(
            f"cannot create the store folder {path.parent} ({exc.strerror or exc.__class__.__name__}); nothing was "
            "written — make its parent writable, or point CORTEX_HOME at a folder you can write",
            code="store_folder", path=str(path),
        ) from exc
    _private(path)
    try:
        if path.exists():
            read_version(path)
        conn = connect(path)
    except sqlite3.Error as exc:
        raise store_error(exc, path) from exc
    try:
        version = stored_version(conn)
        if version < SCHEMA_VERSION:
            _migrate(conn, root=root, now=now)
    except (sqlite3.Error, StoreRefused) as exc:
        conn.close()
        if isinstance(exc, sqlite3.Error):
            raise store_error(exc, path) from exc
        raise
    return conn


def open_empty(*, root: str, now: str) -> sqlite3.Connection:
    """An empty store of the current schema held in memory: what a read sees where no store exists yet, so a
    one-shot read answers as an empty store would and creates nothing (issue 29)."""
    conn = connect(Path(":memory:"))
    _migrate(conn, root=root, now=now)
    return conn


@contextmanager
def waiting_at_most(conn: sqlite3.Connection, ms: int = 0) -> Iterator[None]:
    """Run the block with the busy timeout at `ms` (0: fail at once rather than wait on another connection), then
    put the store's own timeout back. For work that may be skipped or redone when the store is busy."""
    conn.execute(f"PRAGMA busy_timeout={int(ms)}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


def _migrate(conn: sqlite3.Connection, *, root: str, now: str) -> None:
    """Run every migration the store lacks in one write transaction.

    Foreign keys are off while it runs: version 8 rebuilds `notes` and `memory_items`, and dropping the old
    `memory_items` with them on would cascade into every reference and anchor. A store that held rows when
    it was rebuilt is vacuumed afterwards (best effort), so the file itself shrinks.
    """
    conn.execute("PRAGMA foreign_keys=OFF")
    try:
        with transaction(conn):
            version = stored_version(conn)  # re-read under the write lock: another process may have migrated
            for script in MIGRATIONS[version:]:
                for statement in _split_sql(script):
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
                "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                (str(SCHEMA_VERSION),),
            )
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('root_path', ?)", (root,))
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('created_at', ?)", (now,))
    finally:
        conn.execute("PRAGMA foreign_keys=ON")
    if 0 < version < 11 and conn.execute("SELECT 1 FROM memory_items LIMIT 1").fetchone() is not None:
        try:
            with waiting_at_most(conn):  # never wait on a reader for this: it is only about file size
                conn.execute("VACUUM")
        except sqlite3.OperationalError:
            pass  # another connection is reading: the freed pages are reused by later writes instead


def in_scopes(count: int = 1, alias: str = "", *, indexed: bool = True) -> str:
    """The one SQL condition "this note's or memory item's scope is one of `count` keys" (bind the key strings).

    Rows store the scope's integer id (schema 8); this matches it through the `scopes` table's unique key
    index, so callers keep binding keys and SQLite still walks the scope indexes. `alias` qualifies the
    column (`"m."`). `indexed=False` keeps SQLite off the scope index, for rows already found by rowid.
    """
    column = f"{alias}scope_id" if indexed else f"+{alias}scope_id"
    return f"{column} IN (SELECT id FROM scopes WHERE key IN ({','.join('?' * count)}))"


IN_SCOPE = in_scopes(1)


def scope_id(conn: sqlite3.Connection, key: str) -> int:
    """The integer id notes and memory items store for the scope `key`, adding it on first use.

    Called inside the write transaction that stores the row. An id `remember_scopes` read when the engine
    opened costs no statement (a flush projects thousands of rows into one scope); any other is looked up,
    and added if new, by two statements, and not remembered: the transaction adding it may still roll back.
    """
    known: dict[str, int] | None = getattr(conn, "known_scopes", None)
    if known and key in known:
        return known[key]
    conn.execute("INSERT OR IGNORE INTO scopes(key) VALUES (?)", (key,))
    return int(conn.execute("SELECT id FROM scopes WHERE key=?", (key,)).fetchone()[0])


def remember_scopes(conn: sqlite3.Connection, keys: Sequence[str]) -> None:
    """Give the engine's own scopes their ids now (adding any the store lacks) and remember them on the
    connection for `scope_id`, so writes into them cost no extra statement.

    Only outside a transaction, so every id remembered is committed (scope rows are never deleted or
    renumbered). A store that cannot take the write now (read-only, busy) is left alone: `scope_id` then
    adds the scope inside the first write that needs it.
    """
    known: dict[str, int] | None = getattr(conn, "known_scopes", None)
    if known is None or conn.in_transaction or not keys:
        return
    select = f"SELECT key, id FROM scopes WHERE key IN ({','.join('?' * len(keys))})"
    known.update((str(key), int(id_)) for key, id_ in conn.execute(select, tuple(keys)))
    missing = [key for key in keys if key not in known]
    if not missing:
        return
    try:
        with waiting_at_most(conn), transaction(conn):
            conn.executemany("INSERT OR IGNORE INTO scopes(key) VALUES (?)", [(key,) for key in missing])
    except sqlite3.Error:
        return
    known.update((str(key), int(id_)) for key, id_ in conn.execute(select, tuple(keys)))


_DAMAGED_HINT = (
    "keep a copy of it, then salvage what it holds (`sqlite3 {path} .recover | sqlite3 recovered.db`) or move it "
    "aside (Cortex starts a fresh store)"
)


def store_error(exc: sqlite3.Error, path: Path | str) -> StoreRefused:
    """Say in one line what SQLite's failure means for the store at `path`, and what to do about it.

    Every sqlite3 error that leaves the engine passes through here (opening a store, and `Engine.__exit__`).
    """
    path = Path(path)
    folder = path.parent
    primary = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    said = " ".join(str(exc).split())
    if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or (not primary and _busy(exc)):
        return StoreBusy(
            f"{path} is busy: another Cortex process held it for over {BUSY_TIMEOUT_MS / 1000:g} s ({said}); "
            "nothing was written — try again in a moment",
            path=str(path),
        )
    if primary == sqlite3.SQLITE_FULL:
        return StoreFull(
            f"the disk holding {path} is full ({said}); this change was not saved and what was stored before is "
            "intact — free some disk space and run the command again",
            path=str(path),
        )
    if primary == sqlite3.SQLITE_READONLY or (primary == sqlite3.SQLITE_CANTOPEN and not _writable(folder)):
        # SQLite gives the -wal and -shm files the database file's mode, so they may need the fix too.
        files = [f for f in (path, *_sidecars(path)) if f.exists() and not os.access(f, os.W_OK)]
        targets = [folder] if not _writable(folder) else files or [path]
        return StoreReadOnly(
            f"{' and '.join(map(str, targets))} {'is' if len(targets) == 1 else 'are'} read-only ({said}); this "
            "change was not saved and the store is intact — make "
            f"{'it' if len(targets) == 1 else 'them'} writable (chmod u+w {' '.join(map(str, targets))}), "
            "or run Cortex as the user who owns the store",
            path=str(path),
        )
    if primary in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return StoreDamaged(
            f"{path} is damaged or is not a Cortex store ({said}); the command stopped there — "
            + _DAMAGED_HINT.format(path=path),
            path=str(path),
        )
    if primary in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH):
        return StoreUnavailable(
            f"cannot open {path} ({said}); nothing was written — check that you can read and write the file "
            f"and its folder {folder}",
            path=str(path),
        )
    return StoreUnavailable(
        f"the store {path} failed ({said}); this change was not saved — check the disk, then run the command "
        "again (`cortex doctor` checks the store)",
        path=str(path),
    )


def _sidecars(path: Path) -> tuple[Path, Path]:
    """The store's WAL and shared-memory files."""
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")


def _writable(folder: Path) -> bool:
    """Whether this process may create files in `folder` (SQLite's `-wal`, `-shm` and journal live there)."""
    return os.access(folder, os.W_OK | os.X_OK)


def _busy(exc: sqlite3.Error) -> bool:
    """Whether SQLite gave up waiting for another connection's lock (not a damaged file)."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


def _split_sql(script: str) -> Iterator[str]:
    """Split a DDL script into statements, keeping trigger bodies whole."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statement = buffer.strip()
            buffer = ""
            if statement:
                yield statement


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Run a short `BEGIN IMMEDIATE` write transaction; roll back on any error (which is re-raised as is)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back whatever is still open, never masking the error that got us here.

    After SQLITE_FULL, SQLITE_IOERR or a failed COMMIT, SQLite may already have rolled the transaction back;
    a second ROLLBACK would then raise "no transaction is active" in place of the real cause.
    """
    if not conn.in_transaction:
        return
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # the original error is what the caller must see; SQLite discards the transaction on close


def wal_bound() -> int:
    """The WAL size past which a flush checkpoints: `CORTEX_WAL_MAX_BYTES` (an integer >= 4096), else 4 MiB."""
    return settings.wal_max_bytes(WAL_MAX_BYTES, WAL_MIN_BYTES)


def checkpoint_if_large(conn: sqlite3.Connection) -> str | None:
    """Checkpoint the WAL when it has grown past its bound, without ever waiting for a lock.

    SQLite's automatic checkpoint copies pages back but never shrinks the `-wal` file, and it cannot finish
    while a reader holds an old snapshot. Past the bound this copies what it can (PASSIVE) and then tries to
    truncate the file (TRUNCATE) with the busy timeout set to 0, so a concurrent reader or writer makes it
    give up at once instead of blocking the hook that flushed. Returns None when the WAL is within bounds,
    else `truncated` or `busy` (retried by the next flush).
    """
    row = conn.execute("PRAGMA database_list").fetchone()
    path = row[2] if row is not None else ""
    if not path or conn.in_transaction:
        return None
    try:
        size = os.path.getsize(path + "-wal")
    except OSError:
        return None
    if size <= wal_bound():
        return None
    try:
        with waiting_at_most(conn):
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    except sqlite3.OperationalError:
        busy = 1
    return "busy" if busy else "truncated"
