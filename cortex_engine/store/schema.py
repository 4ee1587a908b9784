"""The store's schema: one DDL script per version, each upgrading the one before (`database._migrate` runs them)."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator

SCHEMA_VERSION = 18

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

# Version 10: the inbox. What arrives from outside (a decision file committed by someone else, an
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

# Version 11: each text stored once, rows keyed by integer, only the indexes a query plan uses (the
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

# Version 13: `cortex undo`. An audited action keeps what it changed beyond the text: `before_state` and
# `after_state` (JSON: a deleted note's row, the status and conflict of each note a resolve touched), and an undone
# action points at the correction that undid it (`undone_by`), so it is not undone twice.
_V13 = """
ALTER TABLE memory_corrections ADD COLUMN before_state TEXT;
ALTER TABLE memory_corrections ADD COLUMN after_state TEXT;
ALTER TABLE memory_corrections ADD COLUMN undone_by INTEGER;
"""

# Version 14: episodes_failure. A failing command looks up the same failure earlier in its session, to
# bump it `(seen Nx)`; through episodes_session that read every failure of the session newest first until one
# matched (a session with hundreds of distinct failures: ~0.2 ms a failing command, 8 % of a 10k-line flush).
# Partial: only failures are looked up by summary, and notes never pay for it.
_V14 = """
CREATE INDEX IF NOT EXISTS episodes_failure ON episodes(session_id, summary) WHERE kind='command_failure';
"""

# Version 15: a note's item text rewritten with the same leading '<kind>: <content>' (a label added, a status
# changed) no longer copies the content back into the note row only to clear it again: each such round trip grew a
# packed row, split its page, and left the store's notes half a page emptier (11.14 MiB at 10k, 10.98
# before notes were written already shared).
_V15 = """
DROP TRIGGER IF EXISTS notes_text_keep_bu;
CREATE TRIGGER notes_text_keep_bu BEFORE UPDATE OF text ON memory_items WHEN old.source_table = 'notes' BEGIN
    UPDATE notes SET content = substr(old.text, length(kind) + 3, content_chars), content_chars = NULL
        WHERE id = old.source_id AND content IS NULL
          AND substr(new.text, 1, length(kind) + 2 + content_chars)
              IS NOT substr(old.text, 1, length(kind) + 2 + content_chars);
END;
"""

# Version 16: a spool line's key is hex (`spool_digest` of `<event>:<tool-use id>`, or the line's SHA-256), which the
# choke point keeps without the secret scan each author-written key took. Booked keys are rewritten the
# same way, so a claim left by a crash before the upgrade is still recognised after it.
_V16 = """
UPDATE spool_seen
   SET key = CASE WHEN substr(key, 1, 7) = 'sha256:' THEN substr(key, 8) ELSE cortex_spool_digest(key) END;
"""

# Version 17: what `cortex publish` wrote, by the SHA-256 of the file's bytes. A decision file at HEAD is this
# store's own only when its content is one this store published: git's author identity is set by whoever runs git
# (an environment variable), and a squash merge by the user commits a teammate's file under the user's name. A new
# table: nothing else changes. Files published before it are not recorded: they wait in the inbox once (safe side).
_V17 = """
CREATE TABLE IF NOT EXISTS published_files (
    digest TEXT NOT NULL PRIMARY KEY,
    path TEXT NOT NULL,
    note_id TEXT,
    scope_key TEXT,
    published_at TEXT NOT NULL
) WITHOUT ROWID;
"""

# Version 18: each vector records the encoder that made it (`semantic.extra.ENCODER`). Every vector stored before
# came from the float32 matrix products (version 1); a vector of another version than the running encoder's is
# never compared with a query: it counts as missing, and the backfill replaces it (one vector per item still).
_V18 = """
ALTER TABLE item_vectors ADD COLUMN encoder INTEGER NOT NULL DEFAULT 1;
"""


def spool_digest(key: str) -> str:
    """The stored key of a spool line known by its tool-use id (`<event>:<id>`): 32 hex digits (a line's bytes
    hash to 64, so the two kinds never meet). Registered as `cortex_spool_digest` while the store migrates."""
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


# Each entry upgrades the schema from version N-1 to N; index 0 creates version 1.
MIGRATIONS: tuple[str, ...] = (
    _V1,
    _V2,
    _V3,
    _V4,
    _V5,
    _V6,
    _V7,
    _V8,
    _V9,
    _V10,
    _V11,
    _V12,
    _V13,
    _V14,
    _V15,
    _V16,
    _V17,
    _V18,
)
assert len(MIGRATIONS) == SCHEMA_VERSION


def statements(script: str) -> Iterator[str]:
    """Split a DDL script into statements, keeping trigger bodies whole."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statement = buffer.strip()
            buffer = ""
            if statement:
                yield statement
