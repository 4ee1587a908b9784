"""Engine: the one API that the CLI, the MCP server, the TUI and the hooks call."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from cortex_engine.base import records, settings
from cortex_engine.base.clock import Clock, clock_from_env, iso, parse_iso
from cortex_engine.base.ids import new_id
from cortex_engine.base.lazy import LazyModule
from cortex_engine.base.records import record
from cortex_engine.base.tokens import estimate_tokens
from cortex_engine.base.untrusted import quote_path
from cortex_engine.capture import flush as capture
from cortex_engine.memory import items as memory, notes as notes_mod
from cortex_engine.memory.items import collapse, defuse_labels, derive_state, note_content, split_trailers
from cortex_engine.memory.notes import NoteWrite, Resolution
from cortex_engine.query import surfaces
from cortex_engine.query.render import item_labels, strip_control
from cortex_engine.query.surfaces import BUDGETS, Surface
from cortex_engine.scope.freshness import Validation, Validator, checkouts, refresh_app_graph
from cortex_engine.scope.identity import (Scope, StoreIdentity, detect_scope, locate_git, project_scope_key,
                                          store_identity)
from cortex_engine.store import queries as store_queries
from cortex_engine.store.database import (IN_SCOPE, SCHEMA_VERSION, in_scopes, open_empty, open_store, remember_scopes,
                                          store_error, transaction)

if TYPE_CHECKING:
    from cortex_engine.capture.gc import GcReport

# Imported on first use: SessionStart, reflexes and flushes never pay for what they do not call.
if TYPE_CHECKING:  # the real modules, so that mypy checks every call through a lazy handle
    from cortex_engine.capture import agents, consolidation, ledger, reflex, searchledger
    from cortex_engine.memory import arrivals, merges, sharing, transfer
    from cortex_engine.memory import inbox as review
    from cortex_engine.query import inspection
else:
    agents = LazyModule("capture.agents")
    consolidation = LazyModule("capture.consolidation")
    inspection = LazyModule("query.inspection")
    merges = LazyModule("memory.merges")
    arrivals = LazyModule("memory.arrivals")
    review = LazyModule("memory.inbox")  # not `inbox`: that is the Engine method listing it
    sharing = LazyModule("memory.sharing")
    ledger = LazyModule("capture.ledger")
    searchledger = LazyModule("capture.searchledger")
    reflex = LazyModule("capture.reflex")
    transfer = LazyModule("memory.transfer")

MIN_BUDGET = 20
SUMMARY_DESCRIPTION_CHARS = 500  # `summarize(what)`: one line that leads the session summary
MAX_BUDGET = 20_000
TIER_REFRESH_SECONDS = 600
TIER_BACKFILL_ITEMS = 2000
"""Rows past the last one derived that a refresh takes: new items, or an older store catching up."""


def _chunks(values: list[str], size: int) -> list[list[str]]:
    return [values[i:i + size] for i in range(0, len(values), size)]


@record(frozen=True)
class StoreInfo:
    """Where the store is, how its identity was derived, and whether it exists."""

    path: str
    store_id: str
    derived: str
    degraded: bool
    degraded_reason: str | None
    exists: bool
    scope_key: str
    scope_label: str

    def to_dict(self) -> dict[str, object]:
        """The `store --json` shape."""
        return dict(self.__dict__)


def describe_store(cwd: str | os.PathLike[str] = ".", home: Path | None = None) -> StoreInfo:
    """Describe the store for `cwd` without opening or creating it."""
    real = os.path.realpath(os.fspath(cwd))
    location = locate_git(real)
    ident = store_identity(real, home, location)
    scope = detect_scope(real, location)
    derived = (
        f"working directory (degraded — {ident.degraded_reason})"
        if ident.degraded_reason
        else f"git common dir {ident.identifying_path}"
    )
    return StoreInfo(
        str(ident.db_path), ident.store_id, derived, ident.degraded_reason is not None, ident.degraded_reason,
        ident.db_path.exists(), scope.key, scope.label,
    )


def _file_id(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a file, None when it does not exist: tells a replaced or deleted file apart."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def check_budget(budget: int | None, channel: str) -> int:
    """The channel's default budget, or the caller's within sane bounds.

    Raises:
        InvalidInput: a budget outside 20..20000.
    """
    from cortex_engine.base.errors import InvalidInput

    if budget is None:
        return BUDGETS[channel]
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise InvalidInput(f"budget must be between {MIN_BUDGET} and {MAX_BUDGET} tokens", code="bad_budget")
    return budget


def check_path(path: str) -> str:
    """A caller's file path, refused when it holds a NUL (no file name can, and the OS would raise).

    Raises:
        InvalidInput: the path holds a NUL character.
    """
    if "\0" in path:
        from cortex_engine.base.errors import InvalidInput

        shown = strip_control(path.replace("\0", "\\0"))[:120]
        raise InvalidInput(f"path '{shown}' contains a NUL character, which no file name can hold; "
                           "pass the path as it is on disk", code="bad_path")
    return path


class Engine:
    """The Cortex engine over one store, seen from one working directory's scope."""

    def __init__(self, cwd: str | os.PathLike[str] = ".", *, home: Path | None = None, clock: Clock | None = None,
                 create: bool = True, empty_if_missing: bool = False) -> None:
        """Open (creating and migrating forward) the store for `cwd`; with `create=False`, only one that exists;
        with `empty_if_missing` as well, a missing store reads as an empty one held in memory (nothing is created:
        the CLI's one-shot reads).

        Raises:
            StoreRefused: the store was written by a newer version, its version is corrupt, or SQLite cannot
                use it (busy, full, read-only, damaged; see `store.store_error`).
            StoreUnavailable: `create=False` and `cwd` has no store (for instance its repository was deleted
                under a running viewer, so the folder now names a store that was never made): none is created.
        """
        self.cwd = os.path.realpath(os.fspath(cwd))
        if not os.path.isdir(self.cwd):
            from cortex_engine.base.errors import InvalidInput

            raise InvalidInput(f"{self.cwd} is not a directory; run Cortex from (or -C) a working directory",
                               code="bad_cwd")
        self.clock = clock or clock_from_env()
        location = locate_git(self.cwd)
        self._location = location
        self.identity: StoreIdentity = store_identity(self.cwd, home, location)
        self.scope: Scope = detect_scope(self.cwd, location)
        if not create and not self.identity.db_path.exists():
            from cortex_engine.base.errors import StoreUnavailable

            if not empty_if_missing:
                raise StoreUnavailable(f"no Cortex store for {self.cwd}; nothing was created (was its repository moved "
                                       "or deleted?)", code="store_missing", path=str(self.identity.db_path))
            self.conn: sqlite3.Connection = open_empty(root=self.identity.root, now=self.now())
        else:
            self.conn = open_store(self.identity.db_path, root=self.identity.root, now=self.now())
        self._store_file = _file_id(self.identity.db_path)
        self._consulted: str | None = None
        self.dense_problem: str | None = None
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key='root_path'").fetchone()
            self._schema_cookie = self.conn.execute("PRAGMA schema_version").fetchone()[0]
            self.project_key = project_scope_key(row["value"] if row else None)
            remember_scopes(self.conn, self.scope_keys)
        except sqlite3.Error as exc:
            self.conn.close()
            raise store_error(exc, self.identity.db_path) from exc

    # -- basics -------------------------------------------------------------------------------

    def rescope(self) -> bool:
        """Re-read HEAD so a long-lived engine follows a branch switch or a new commit; False when it cannot
        (the git directory or the store file is gone or was replaced, or another process changed the store's
        schema, e.g. a newer Cortex migrated it): the caller opens a new engine, which checks the version.

        Costs a few small file reads, no git process: the git location and the store connection are kept.
        A connection outside a transaction sees what other processes committed since (WAL), so nothing
        else is cached across calls.
        """
        location = self._location
        if location is not None and not os.path.isdir(location.git_dir):
            return False
        if _file_id(self.identity.db_path) != self._store_file:
            return False
        if self.conn.execute("PRAGMA schema_version").fetchone()[0] != self._schema_cookie:
            return False
        self.scope = detect_scope(self.cwd, location)
        self._consulted = None
        remember_scopes(self.conn, self.scope_keys)
        return True

    def now(self) -> str:
        """The injected clock's time as a stored ISO string."""
        return iso(self.clock())

    def close(self) -> None:
        """Close the store connection."""
        self.conn.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        """Close the store; an sqlite3 error leaving the block becomes the `StoreRefused` that says what to do."""
        self.close()
        if isinstance(exc, sqlite3.Error):
            raise store_error(exc, self.identity.db_path) from exc

    @property
    def scope_keys(self) -> list[str]:
        """The scopes this working directory reads: its own, then the store's project layer."""
        return [self.scope.key] if self.scope.key == self.project_key else [self.scope.key, self.project_key]

    def current_session(self) -> sqlite3.Row | None:
        """The newest active primary session of this scope, if any."""
        return self.conn.execute(
            "SELECT * FROM sessions WHERE scope_key=? AND status='active' AND parent_session_id IS NULL "
            "ORDER BY started_at DESC, rowid DESC LIMIT 1",
            (self.scope.key,),
        ).fetchone()

    def ensure_session(self) -> str:
        """The current primary session of this scope, created when there is none."""
        row = self.current_session()
        if row is not None:
            return str(row["id"])
        session_id = new_id()
        s = self.scope
        with transaction(self.conn):
            self.conn.execute(
                "INSERT INTO sessions(id, started_at, agent_type, status, git_root, worktree_path, branch_ref, head_oid, "
                "scope_type, scope_key) VALUES (?,?, 'primary', 'active', ?,?,?,?,?,?)",
                (session_id, self.now(), s.git_root, s.worktree, s.branch, s.head_oid, s.type, s.key),
            )
        return session_id

    def refresh(self) -> None:
        """Bring derived state up to date: the checkout inventory (if it moved) and the decay tiers."""
        refresh_app_graph(self.conn, self.scope, self.now())
        self.refresh_tiers()

    def refresh_tiers(self, *, force: bool = False) -> int:
        """Re-derive hot/warm/cold for every item of these scopes whose tier can have changed; returns how many did.

        A tier is a function of an item's columns and the clock, and the clock alone changes it only when the item's
        age or time since last access crosses a step of `hotness` (AGE_STEPS, ACCESS_STEPS). So a refresh re-derives
        the items whose age or last access (the retrieval log records every read that reinforces) crossed a step since
        the last refresh, plus up to TIER_BACKFILL_ITEMS rows past the last rowid it derived: items written since, and
        on a store older than this rule all of them over a few refreshes. Tiers follow the data, not which items
        happened to be the newest 500 when a refresh ran.
        Within TIER_REFRESH_SECONDS of the last refresh nothing runs unless `force`.
        """
        key, backfill_key = f"tiers_derived:{self.scope.key}", f"tiers_backfill:{self.scope.key}"
        now_dt = self.clock()
        stored = dict(self.conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (key, backfill_key)).fetchall())
        last = parse_iso(stored[key]) if key in stored else None
        if not force and last is not None and 0 <= (now_dt - last).total_seconds() < TIER_REFRESH_SECONDS:
            return 0
        in_mine = in_scopes(len(self.scope_keys))
        ids: set[str] = set()
        if last is not None and last <= now_dt:
            for days in memory.AGE_STEPS:
                window = (iso(last - timedelta(days=days)), iso(now_dt - timedelta(days=days)))
                ids.update(r[0] for r in self.conn.execute(
                    f"SELECT id FROM memory_items WHERE {in_mine} AND created_at > ? AND created_at <= ?",
                    (*self.scope_keys, *window)))
            for days in memory.ACCESS_STEPS:
                window = (iso(last - timedelta(days=days)), iso(now_dt - timedelta(days=days)))
                for (shown,) in self.conn.execute(
                        "SELECT result_ids_json FROM retrieval_log WHERE created_at > ? AND created_at <= ?", window):
                    ids.update(i for i in json.loads(shown) if isinstance(i, str))
        cursor = int(stored.get(backfill_key, 0))
        walked = [r[0] for r in self.conn.execute(
            f"SELECT rowid FROM memory_items WHERE {in_mine} AND rowid > ? ORDER BY rowid LIMIT ?",
            (*self.scope_keys, cursor, TIER_BACKFILL_ITEMS))]
        rows = [row for chunk in _chunks(sorted(ids), 500) for row in self.conn.execute(
            f"{surfaces.ITEM_SELECT} WHERE id IN ({','.join('?' * len(chunk))}) AND {in_mine}",
            (*chunk, *self.scope_keys))]
        if walked:
            rows += self.conn.execute(
                f"{surfaces.ITEM_SELECT} WHERE {in_mine} AND rowid > ? AND rowid <= ?",
                (*self.scope_keys, cursor, walked[-1])).fetchall()
        changes = {row["id"]: new for row in rows if (new := derive_state(surfaces.facts(row), now_dt)) != row["state"]}
        with transaction(self.conn):
            if changes:
                self.conn.executemany("UPDATE memory_items SET state=? WHERE id=?", [(v, k) for k, v in changes.items()])
            self.conn.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                [(key, iso(now_dt)), (backfill_key, str(walked[-1] if walked else cursor))],
            )
        return len(changes)

    def dense_search(self) -> surfaces.DenseSearch | None:
        """The dense retriever for topic surfaces, or None: recall is then lexical.

        None without the semantic extra (or with `CORTEX_SEMANTIC=0`), on a store with no vectors yet (nothing is
        loaded then: a one-shot recall before `cortex embed` costs what it always did), or when the model file fails
        its pinned hash (`dense_problem` says so). Otherwise the encoder is loaded once per process.
        """
        self.dense_problem = None
        if self.conn.execute("SELECT 1 FROM item_vectors LIMIT 1").fetchone() is None:
            return None
        from cortex_engine.semantic import extra as semantic

        state = semantic.availability()
        if not state.installed:
            self.dense_problem = state.reason
            return None
        try:
            from cortex_engine.semantic import model, vectors
        except ImportError as exc:
            self.dense_problem = f"recall is lexical only: {exc}"
            return None
        try:
            embedder = model.load()
        except model.ModelRefused as exc:
            self.dense_problem = f"recall is lexical only: {exc}"
            return None

        def search(conn: sqlite3.Connection, keys: list[str], topic: str, k: int) -> list[tuple[int, float]]:
            return vectors.dense_hits(conn, keys, embedder.embed([topic])[0], k)

        return search

    def embedding_backlog(self) -> int:
        """How many items recall can show have no sentence vector yet.

        Raises:
            SemanticUnavailable: the semantic extra is not installed (or `CORTEX_SEMANTIC=0`).
        """
        from cortex_engine.base.errors import SemanticUnavailable
        from cortex_engine.semantic import extra

        found = extra.availability()
        if not found.installed:
            raise SemanticUnavailable(f"{found.reason}; to turn it on: {extra.enable_hint()}")
        from cortex_engine.semantic import vectors

        return vectors.pending_count(self.conn)

    def embed_pending(self, *, limit: int | None = None, tick: Callable[[int], None] | None = None) -> int:
        """Embed the items that have no vector yet (all of them, or `limit`), newest first; returns how many.

        Raises:
            SemanticUnavailable: the extra is not installed, or its model file fails the pinned hash (never run).
        """
        from cortex_engine.base.errors import SemanticUnavailable
        from cortex_engine.semantic import extra

        found = extra.availability()
        if not found.installed:
            raise SemanticUnavailable(f"{found.reason}; to turn it on: {extra.enable_hint()}")
        from cortex_engine.semantic import model, vectors

        try:
            embedder = model.load()
        except model.ModelRefused as exc:
            raise SemanticUnavailable(f"{exc}; reinstall the extra: {extra.ENABLE_HINT}", code="model_refused") from exc
        return vectors.embed_pending(self.conn, embedder, limit=limit, tick=tick)

    def _context(self, *, dense: bool = False) -> surfaces.Context:
        session = self.current_session()
        return surfaces.Context(
            conn=self.conn,
            scope_key=self.scope.key,
            scope_keys=self.scope_keys,
            scope_label=self.scope.label if self.scope.type != "project" else "project",
            is_project_scope=self.scope.type == "project",
            validator=Validator(self.conn, self.scope),
            now=self.clock(),
            focus=session["focus"] if session is not None else None,
            session_id=session["id"] if session is not None else None,
            dense=self.dense_search() if dense else None,
        )

    def book(self, surface: Surface, *, reinforce: bool = False) -> Surface:
        """Record what a surface injected (token ledger, retrieval log) and reinforce what it showed."""
        if not surface.text:
            return surface
        session = self.current_session()
        session_id = session["id"] if session is not None else None
        now = self.now()
        with transaction(self.conn):
            self.conn.execute(
                "INSERT INTO token_ledger(session_id, scope_key, channel, direction, tokens, timestamp) VALUES (?,?,?,?,?,?)",
                (session_id, self.scope.key, surface.channel, "injected", surface.tokens, now),
            )
            if reinforce:
                ids = [item.id for item in surface.items]
                self.conn.execute(
                    "INSERT INTO retrieval_log(session_id, scope_key, channel, topic, query_text, result_ids_json, "
                    "total_candidates, returned_count, token_estimate, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (session_id, self.scope.key, surface.channel, surface.topic, surface.query, json.dumps(ids),
                     surface.total_candidates, len(ids), surface.tokens, now),
                )
                self._touch(surface.items, now)
        return surface

    def book_text(self, channel: str, text: str, session_id: str | None = None) -> None:
        """Book text injected outside the surfaces (hook outputs) against a session."""
        if not text:
            return
        with transaction(self.conn):
            self.conn.execute(
                "INSERT INTO token_ledger(session_id, scope_key, channel, direction, tokens, timestamp) VALUES (?,?,?,?,?,?)",
                (session_id, self.scope.key, channel, "injected", estimate_tokens(text), self.now()),
            )

    def brief_for_subagent(self, description: str, agent_type: str, prompt_prefix: str, child_session: str) -> str:
        """The SubagentStart brief's text: ≤150 tokens; "" when nothing matches or all of it is already pasted."""
        self.refresh()
        ctx = self._context()
        _, _, results = surfaces.ranked(ctx, description, surfaces.BRIEF_LIMIT)
        if not results:
            return ""
        notes = [c for c in results if c.kind.startswith("note:")] or results
        if prompt_prefix and all(
            collapse(strip_control(note_content(split_trailers(c.row["text"])[0]))).lower() in prompt_prefix for c in notes
        ):
            return ""
        # The brief is packed to its budget by the one packer (`render.assemble_budgeted`); nothing to cut here.
        text = surfaces.brief(ctx, description, agent_type, BUDGETS["subagent_brief"]).text
        self.book_text("subagent_brief", text, child_session)
        return text

    def _touch(self, items: list[surfaces.SurfaceItem], now: str) -> None:
        """Reads reinforce: access count, last access, and the tier the read earns — for live items only.

        What counts as a use (README "What counts as a use"): an agent-facing surface that was injected (the
        recall, brief and state an agent asked for). A person looking (`--peek`, `session-brief`, the TUI) is
        not a use. Being shown is never a use of a superseded, resolved or stale item (a missing reference,
        as judged for the surface just shown): its access count, last access and tier stay as they were, so a
        read can never re-heat what the surface itself marks as no longer holding.
        """
        if not items:
            return
        marks = ",".join("?" * len(items))
        # A note's status is read from the notes table, never from its text: content may say "status: resolved".
        rows = {r["id"]: r for r in self.conn.execute(
            f"SELECT m.id, m.state, n.status AS note_status FROM memory_items m "
            f"LEFT JOIN notes n ON m.source_table='notes' AND n.id=m.source_id WHERE m.id IN ({marks})",
            [i.id for i in items])}
        updates = []
        for item in items:
            row = rows.get(item.id)
            if row is None:
                continue
            stale = any(label.startswith("stale:") for label in item.labels)
            if stale or row["note_status"] in ("superseded", "resolved"):
                continue
            state = row["state"] if row["state"] in ("pinned", "archived") else "hot"
            updates.append((now, state, item.id))
        self.conn.executemany(
            "UPDATE memory_items SET access_count=access_count+1, last_accessed_at=?, state=? WHERE id=?", updates
        )

    # -- notes ----------------------------------------------------------------------------------

    def note(self, kind: str, text: str, subject: str | None = None, alternatives: list[str] | None = None) -> NoteWrite:
        """Record a note; reports any active decision on the subject it contradicts.

        Raises:
            InvalidInput: unknown kind, empty text, missing subject (nothing is written).
        """
        notes_mod.validate_note(kind, text, subject, alternatives)
        refresh_app_graph(self.conn, self.scope, self.now())
        session_id = self.ensure_session()
        return notes_mod.write_note(self.conn, self.scope, session_id, kind, text, subject, alternatives, self.now())

    def resolve(
        self,
        note_id: str | None = None,
        *,
        subject: str | None = None,
        status: str = "resolved",
        replacement: str | None = None,
        expected_sides: Sequence[str] | None = None,
    ) -> Resolution:
        """Resolve or supersede a note by id, or by subject in this scope, optionally with a replacement.

        Args:
            expected_sides: the contest's note ids as the caller saw them (a dialog left open); when the open
                contest is no longer exactly these sides, nothing is written.

        Raises:
            InvalidInput, NotFound, Refused: see `notes.resolve_note` (Refused `contest_changed` for a stale contest).
        """
        session = self.current_session()
        return notes_mod.resolve_note(
            self.conn, self.scope, session["id"] if session is not None else None, self.now(),
            note_id=note_id, subject=subject, status=status, replacement=replacement, expected_sides=expected_sides,
        )

    def undo(self):  # noqa: ANN201 - query.undo.Undo, imported on use
        """Undo the newest operator action (resolve, delete, edit, path rewrite) of this scope; audited.

        Raises:
            NotFound: nothing to undo. Refused: what it changed has changed since (nothing is written).
        """
        from cortex_engine.query.undo import undo_last

        return undo_last(self.conn, self.scope_keys, self.scope.type, self.now())

    # -- surfaces -------------------------------------------------------------------------------

    def recall(self, topic: str, budget: int | None = None, detail: str | None = None, *, book: bool = True,
               scope: str | None = None, limit: int | None = None, adapter: str = "mcp") -> Surface:
        """Evidence for a topic within the recall budget (default 600).

        Args:
            book: False for an operator's look (the TUI): nothing is booked, reinforced or marked consulted.
            scope: read another scope instead (a branch name, deleted or not, or a full scope key); its lines
                are led by the scope they come from.
            limit: show at most this many ranked items (1..50); by default as many as fit the budget, at most
                50 (`surfaces.recall` states the rule).
            adapter: the caller's surface (`mcp` or `cli`): a hint names the next step in its words.

        Raises:
            NotFound: `scope` names nothing in the store.
            InvalidInput: a budget outside 20..20000 or a limit outside 1..50.
        """
        budget = check_budget(budget, "recall")
        if limit is not None and not 1 <= limit <= surfaces.RECALL_MAX_LIMIT:
            from cortex_engine.base.errors import InvalidInput

            raise InvalidInput(f"limit must be between 1 and {surfaces.RECALL_MAX_LIMIT} items", code="bad_limit")
        self.refresh()
        if scope is not None:
            keys = merges.scope_keys_for(self.conn, self.scope, scope)
            lead = f"From scope {strip_control(scope.strip())} (not this branch; read only when asked):"
            ctx = records.replace(self._context(dense=True), scope_key=keys[0], scope_keys=keys)
            inner = surfaces.recall(ctx, topic, max(MIN_BUDGET, budget - estimate_tokens(lead) - 1), detail, limit,
                                    adapter)
            surface = Surface(inner.channel, f"{lead}\n{inner.text}", budget, inner.items, inner.topic, inner.query,
                              inner.total_candidates, inner.retrievers)
        else:
            surface = surfaces.recall(self._context(dense=True), topic, budget, detail, limit, adapter)
        if not book:
            return surface
        self.mark_consulted()
        return self.book(surface, reinforce=True)

    def brief(self, topic: str, for_agent: str | None = None, budget: int | None = None, *, book: bool = True) -> Surface:
        """A smaller topical brief within the brief budget (default 450); `book` as for recall."""
        budget = check_budget(budget, "brief")
        self.refresh()
        surface = surfaces.brief(self._context(dense=True), topic, for_agent, budget)
        if not book:
            return surface
        self.mark_consulted()
        return self.book(surface, reinforce=True)

    def state(self, budget: int | None = None, *, book: bool = True) -> Surface:
        """The working state within the state budget (default 800); `book` as for recall."""
        budget = check_budget(budget, "state")
        self.refresh()
        pending = arrivals.pending_line(arrivals.pending_count(self.conn, self.scope_keys))
        surface = surfaces.state(self._context(), budget, [pending[2:]] if pending else None)
        if not book:
            return surface
        self.mark_consulted()
        return self.book(surface)

    def session_brief(self, budget: int | None = None, *, book: bool = True) -> Surface:
        """The SessionStart brief (default 150 tokens): empty on a cold start."""
        budget = check_budget(budget, "session_brief")
        self.refresh()
        files = ledger.known_unchanged(self.conn, self.scope)
        pending = arrivals.pending_line(arrivals.pending_count(self.conn, self.scope_keys))
        surface = surfaces.session_brief(self._context(), budget, ledger_files=files, resume=self._resume_line(),
                                         pending=pending)
        return self.book(surface) if book else surface

    def _resume_line(self) -> str | None:
        """The first line of the newest session summary in this scope, when it is at most 7 days old."""
        cutoff = iso(self.clock() - timedelta(days=7))
        row = self.conn.execute(
            f"SELECT text FROM memory_items WHERE {IN_SCOPE} AND kind='episode:session_summary' AND created_at >= ? "
            "ORDER BY created_at DESC LIMIT 1",
            (self.scope.key, cutoff),
        ).fetchone()
        if row is None:
            return None
        for line in row["text"].split("\n"):
            clean = line.strip().lstrip("#").strip()
            # The focus is the session's label, not what it did; command-only lines say nothing on their own.
            if clean and not clean.startswith(("Command (", "Focus: ")):
                return clean
        return None

    def header(self, budget: int | None = None) -> Surface:
        """The full branch-aware header (`inject-header` without --quiet)."""
        budget = check_budget(budget, "header")
        self.refresh()
        sessions = self.conn.execute(
            "SELECT COUNT(*) FROM sessions WHERE scope_key=? AND parent_session_id IS NULL", (self.scope.key,)
        ).fetchone()[0]
        return self.book(surfaces.header(self._context(), sessions, budget))

    def preview_session_brief(self) -> Surface:
        """The session brief exactly as injected, without booking it (for the operator's view)."""
        return self.session_brief(book=False)

    # -- capture --------------------------------------------------------------------------------

    def flush_spool(self, *, turn_end: bool = False) -> capture.FlushResult:
        """Replay this worktree's spool (and any orphaned claims) into the store.

        Args:
            turn_end: the Stop hook's flush, which sees a whole turn and so may certify reads for substitution.

        Raises:
            RuntimeUntrusted: the runtime folder is a link, someone else's, open to others, or tracked by git.
        """
        folder = capture.find_runtime(self.cwd)
        done = capture.FlushResult() if folder is None else capture.flush_spool(
            self.conn, folder, self.clock(), turn_end=turn_end)
        self.check_merges()
        return done

    # -- the hooks that need the store (the hook adapter, `hookentry`, puts each answer on the wire) ------

    def host_session(self, host: str) -> str:
        """The primary session for the host's session id (`""`: the current one), created when there is none."""
        with transaction(self.conn):
            return capture.primary_session(self.conn, self.scope, host, self.now())

    def consult_hint(self, prompt: str, session: str | None = None) -> str:
        """The consult hint for a prompt ("" when it is not due); `session` defaults to the current one."""
        return reflex.consult_hint(self, session or self.ensure_session(), prompt)

    def whisper(self, event: str, anchor: str, session: str | None = None) -> str:
        """The reflex whisper for the file or command at hand ("" when not confident); an absolute path inside
        the worktree is read as the worktree-relative path memory names."""
        if event == "edit":
            anchor = capture.relative_path(anchor, self.scope.worktree)
        return reflex.whisper(self, session or self.ensure_session(), event, anchor)

    def dispatch_pre(self, payload: dict) -> None:
        """PreToolUse of an Agent call: record the dispatch, so the subagent it starts can be briefed."""
        agents.dispatch_pre(self, payload)

    def subagent_start(self, payload: dict) -> str:
        """SubagentStart: the child's session, and its brief's text ("" for none)."""
        return agents.subagent_start(self, payload)

    def subagent_stop(self, payload: dict) -> None:
        """SubagentStop: flush what the subagent did, then keep its conclusion."""
        self.flush_spool()
        agents.subagent_stop(self, payload)

    def guard_memory(self, payload: dict) -> str:
        """PreToolUse in a subagent: the reason to deny a call that would retire earlier work ("" allows it)."""
        return agents.guard(self, payload)

    def end_of_turn(self, payload: dict) -> str:
        """Stop: flush the turn, replay failures only the transcript reports, and the reason to offer candidate
        notes ("" lets the turn end; also when `CORTEX_STOP_NUDGE` is off)."""
        self.flush_spool(turn_end=True)
        transcript = payload.get("transcript_path")
        if isinstance(transcript, str) and transcript:
            self.replay_transcript_failures(transcript, payload)
        if not settings.stop_nudge():
            return ""
        host = found if isinstance(found := payload.get("session_id"), str) else ""
        return agents.end_of_turn_nudge(self, self.host_session(host))

    def gc(self, *, apply: bool = False, tick: Callable[[int], None] | None = None) -> GcReport:
        """Retention: find (with `apply`, delete) what the retention windows allow; see `capture/gc.py`."""
        from cortex_engine.capture.gc import run_gc

        return run_gc(self, apply=apply, tick=tick)

    # -- memory follows git ----------------------------------------------------------------------

    def check_merges(self, *, force: bool = False) -> merges.MergeCheck:
        """Bring merged branches' notes into this branch's scope; a no-op unless HEAD moved since the last check."""
        return merges.check(self.conn, self.scope, self.now(), force=force)

    def promote(self, branch: str, *, dry_run: bool = False) -> list[merges.Promotion]:
        """Promote a branch's active notes into this branch's scope by hand (a squash merge git cannot see).

        Raises:
            InvalidInput: not on a branch, or the branch named is this one.
            NotFound: the store holds no memory of that branch.
        """
        return merges.promote(self.conn, self.scope, branch, self.now(), dry_run=dry_run)

    def publish(self, ids: list[str]) -> list[str]:
        """Write decisions as MADR files in the repository's decisions folder; returns the paths, for the user to commit.

        Raises:
            NotFound: an id names no note.
            InvalidInput: a note is not a decision, or the folder is misconfigured or a symlink.
        """
        return sharing.publish(self.conn, self.scope, ids)

    def sync_shared(self, *, force: bool = False) -> sharing.SyncResult:
        """Read the decisions folder at HEAD into this branch's scope as `(shared)` decisions (when HEAD moved).

        Raises:
            InvalidInput: the configured decisions folder is not a path inside the repository.
        """
        return sharing.sync(self.conn, self.scope, self.now(), force=force)

    def branches(self) -> list[merges.BranchScope]:
        """Every scope of the store: notes, open contests, last activity, merged into, exists in git."""
        return merges.list_scopes(self.conn, self.scope)

    def replay_transcript_failures(self, transcript_path: str, payload: dict) -> int:
        """Record failed Bash calls the host reported only in its transcript (no PostToolUseFailure); idempotent."""
        from cortex_engine.capture.transcript import fallback_entries

        folder = capture.find_runtime(self.cwd)
        entries = fallback_entries(transcript_path, payload)
        if folder is None or not entries:
            return 0
        now = self.clock()
        done = 0
        with transaction(self.conn):
            replayer = capture.Replayer(self.conn, now, home=str(folder.parent))
            for entry in entries:
                use_id = entry["p"]["tool_use_id"]
                # A call the spool recorded either way (success or failure) is never recorded twice.
                if self.conn.execute("SELECT 1 FROM spool_seen WHERE key=?", (f"PostToolUse:{use_id}",)).fetchone():
                    continue
                if self.conn.execute("INSERT OR IGNORE INTO spool_seen(key, seen_at) VALUES (?,?)",
                                     (f"PostToolUseFailure:{use_id}", iso(now))).rowcount == 0:
                    continue
                done += int(replayer.replay(entry, iso(now)))
            replayer.sync_snapshots(iso(now))
        return done

    def log_event(self, kind: str, *, file: str | None = None, command: str | None = None, exit_code: int | None = None,
                  stdout: str | None = None, stderr: str | None = None, description: str | None = None) -> bool:
        """Capture one event directly (`cortex log …`), through the same replay the spool uses.

        Raises:
            InvalidInput: an unknown kind, or a kind without what it needs (a file, a command, a description).
        """
        from cortex_engine.base.errors import InvalidInput

        tools = {"read": "Read", "edit": "Edit", "write": "Write", "cmd": "Bash", "agent": "Agent"}
        if kind not in tools:
            raise InvalidInput(f"unknown event kind {kind!r}; use {', '.join(tools)}", code="bad_kind")
        tool_input: dict[str, object] = {}
        response: dict[str, object] = {}
        if kind in ("read", "edit", "write"):
            if not file:
                raise InvalidInput(f"log {kind} needs --file", code="bad_args")
            tool_input["file_path"] = os.path.join(self.cwd, file)
        elif kind == "cmd":
            if not command:
                raise InvalidInput("log cmd needs --cmd", code="bad_args")
            tool_input["command"] = command
            response = {"stdout": stdout or "", "stderr": stderr or "", "exit_code": exit_code if exit_code is not None else 0}
        else:
            if not description:
                raise InvalidInput("log agent needs --desc", code="bad_args")
            tool_input["description"] = description
        session = self.ensure_session()
        host = self.conn.execute("SELECT host_session_id FROM sessions WHERE id=?", (session,)).fetchone()[0]
        payload = {"session_id": host or "", "cwd": self.cwd, "hook_event_name": "PostToolUse", "tool_name": tools[kind],
                   "tool_input": tool_input, "tool_response": response}
        with transaction(self.conn):
            replayer = capture.Replayer(self.conn, self.clock())
            done = replayer.replay({"p": payload}, self.now())
            replayer.sync_snapshots(self.now())
        return done

    def substitution(self, action: str) -> str:
        """Turn verified read substitution on or off for this worktree, or report it: on | off | status."""
        from cortex_engine.base.errors import InvalidInput

        if action not in ("on", "off", "status"):
            raise InvalidInput(f"unknown substitution action {action!r}; use on, off or status", code="bad_args")
        folder = capture.runtime_dir(self.scope.worktree)
        if action == "on":
            capture.engage(self.scope.worktree)
        elif not folder.exists():
            return "off"
        with capture.open_runtime(folder) as rt:
            if action == "on":
                rt.write(capture.SUBSTITUTION, "on\n")
            elif action == "off":
                rt.unlink(capture.SUBSTITUTION)
            return "on" if rt.is_file(capture.SUBSTITUTION) else "off"

    def start_session(self, host_session_id: str | None = None) -> str:
        """SessionStart: flush leftovers, read shared decisions, end this scope's primary, start a fresh one, engage capture.

        Raises:
            RuntimeUntrusted: the worktree's runtime folder came with the repository (or is a link, someone else's):
                nothing is flushed, started or engaged.
        """
        capture.reclaim(self.scope.worktree)
        problem = capture.runtime_problem(self.scope.worktree)
        if problem is not None:
            raise capture.RuntimeUntrusted(problem)
        self.flush_spool()
        from cortex_engine.base.errors import InvalidInput

        try:
            self.sync_shared()
        except InvalidInput as exc:  # a bad decisions-folder setting must not cost the session its start
            import logging  # here, not at import: one-shot commands never pay for it

            logging.getLogger(__name__).warning("shared decisions not read: %s", exc.message)
        now = self.now()
        with transaction(self.conn):
            for row in self.conn.execute(
                "SELECT id FROM sessions WHERE scope_key=? AND parent_session_id IS NULL AND status='active'", (self.scope.key,)
            ).fetchall():
                capture.end_session_tree(self.conn, row["id"], now)
            if host_session_id:
                for row in self.conn.execute(
                    "SELECT id FROM sessions WHERE host_session_id=? AND parent_session_id IS NULL AND status='active'",
                    (host_session_id,),
                ).fetchall():
                    capture.end_session_tree(self.conn, row["id"], now)
            consolidation.consolidate(self.conn, self.scope.key, now)
            consolidation.sync_branch_snapshot(self.conn, self.scope, now)
            consolidation.merge_project_state(self.conn, self.scope, now)
            session_id = capture.create_session(self.conn, self.scope, now, host_session=host_session_id)
        folder = capture.engage(self.scope.worktree)
        # A new context holds none of the old session's reads: the substitution index must forget them now.
        with capture.open_runtime(folder) as rt:
            capture.write_index(self.conn, rt)
            rt.unlink(capture.TURN_READS)
        from cortex_engine.capture.gc import auto as auto_gc  # retention at most once a day; CORTEX_GC_AUTO=0 turns it off

        auto_gc(self)
        return session_id

    def engage(self) -> None:
        """Re-enable capture for this worktree."""
        capture.engage(self.scope.worktree)

    def disengage(self) -> bool:
        """Disable capture for this worktree; returns whether it was engaged."""
        return capture.disengage(self.scope.worktree)

    def read_ledger(self, paths: list[str]) -> list[ledger.LedgerVerdict]:
        """For each path: unread, unchanged-since, changed-since or edited-by-you-since (by re-hashing).

        Raises:
            InvalidInput: a path holds a NUL character.
        """
        for path in paths:
            check_path(path)
        session = self.current_session()
        return [ledger.judge(self.conn, self.scope, session["id"] if session else None, p, self.cwd) for p in paths]

    def search_ledger(self, queries: list[dict]) -> list[searchledger.SearchVerdict]:
        """For each search (at most 16): no-matches-at when it provably still finds nothing, else miss or unknown.

        Raises:
            InvalidInput: a query's path holds a NUL character.
        """
        queries = queries[: searchledger.MAX_QUERIES]
        for query in queries:
            if isinstance(query.get("path"), str):
                check_path(query["path"])
        return [searchledger.check(self.conn, self.scope, q) for q in queries]

    def stats(self) -> dict[str, object]:
        """Injected, saved (evidence only), net and ratio for the session and the scope, plus retrieval health."""
        from cortex_engine.query.economy import stats

        return stats(self.conn, self.scope, str(self.identity.db_path))

    def suggest_notes(self, session_id: str | None = None) -> dict[str, object]:
        """Notes worth saving from a session tree (default: the current one); never writes.

        Raises:
            NotFound: `session_id` names no session of this scope.
        """
        if session_id is not None and not self.activity(1, session_id=session_id):
            from cortex_engine.base.errors import NotFound

            raise NotFound(f'no session "{session_id[:80]}" in this scope', code="unknown_session", id=session_id)
        session = session_id or (self.current_session() or {"id": None})["id"]
        if session is None:
            return {"session_id": None, "suggestions": []}
        tree = [session, *[r["id"] for r in self.conn.execute("SELECT id FROM sessions WHERE parent_session_id=?", (session,))]]
        return {"session_id": session, "suggestions": [s.to_dict() for s in agents.suggestions_for(self, tree)]}

    def summarize(self, description: str | None = None) -> str:
        """Write the current session's summary now (a checkpoint); returns its text.

        Raises:
            InvalidInput: a description over `SUMMARY_DESCRIPTION_CHARS` characters (nothing is written).
        """
        if description is not None and len(description) > SUMMARY_DESCRIPTION_CHARS:
            from cortex_engine.base.errors import InvalidInput

            raise InvalidInput(f"the summary's description is {len(description)} characters; the limit is "
                               f"{SUMMARY_DESCRIPTION_CHARS} (one line on what the session did)", code="too_long")
        if capture.runtime_problem(self.scope.worktree) is None:
            self.flush_spool()  # an untrusted runtime folder is never read: the summary covers what is stored
        session = self.current_session()
        if session is None:
            return "No active session."
        with transaction(self.conn):
            episode_id = consolidation.summarize_session(self.conn, session["id"], self.now(), description)
            consolidation.sync_branch_snapshot(self.conn, self.scope, self.now())
        if episode_id is None:
            return "No tracked activity this session."
        summary = str(self.conn.execute("SELECT summary FROM episodes WHERE id=?", (episode_id,)).fetchone()[0])
        return defuse_labels(summary)  # author text throughout (description, subagent tasks, subjects): no label reads

    def consolidate(self) -> int:
        """Summarize every ended session of this scope that has no summary yet."""
        with transaction(self.conn):
            count = consolidation.consolidate(self.conn, self.scope.key, self.now())
            consolidation.sync_branch_snapshot(self.conn, self.scope, self.now())
        return count

    def mark_consulted(self) -> None:
        """The agent asked memory something: the consult hint is no longer needed this session."""
        session = self.current_session()
        if session is not None and session["id"] != self._consulted:
            from cortex_engine.capture.reflex import flag, set_flag

            if not flag(self, session["id"], "consulted"):
                set_flag(self, session["id"], "consulted")
            self._consulted = session["id"]

    def activity(self, limit: int = 20, *, session_id: str | None = None) -> list[dict[str, object]]:
        """Sessions and subagent sessions of this scope, newest first, with what each did and injected (its own tokens).

        Args:
            session_id: only this session (an empty list when it is not one of this scope's).
        """
        rows = self.conn.execute(
            "SELECT s.*, "
            "(SELECT COUNT(*) FROM events e WHERE e.session_id=s.id AND e.type='read') AS reads, "
            "(SELECT COUNT(*) FROM events e WHERE e.session_id=s.id AND e.type IN ('edit','write')) AS edits, "
            "(SELECT COUNT(*) FROM command_runs c WHERE c.session_id=s.id) AS commands, "
            "(SELECT COUNT(*) FROM command_runs c WHERE c.session_id=s.id AND c.exit_code NOT IN (0)) AS failures, "
            "(SELECT COUNT(*) FROM notes n WHERE n.session=s.rowid) AS notes "
            "FROM sessions s WHERE s.scope_key=? AND (? IS NULL OR s.id=?) ORDER BY s.started_at DESC, s.rowid DESC LIMIT ?",
            (self.scope.key, session_id, session_id, limit),
        ).fetchall()
        from cortex_engine.operator import injected_tokens

        tokens = injected_tokens(self, [str(r["id"]) for r in rows])
        return [
            {"id": r["id"], "parent_session_id": r["parent_session_id"], "agent_type": r["agent_type"],
             "agent_id": r["agent_id"], "status": r["status"], "started_at": r["started_at"], "ended_at": r["ended_at"],
             "focus": r["focus"], "reads": r["reads"], "edits": r["edits"], "commands": r["commands"],
             "failures": r["failures"], "notes": r["notes"], "tokens": tokens.get(str(r["id"]), 0)}
            for r in rows
        ]

    def data_version(self) -> int:
        """SQLite's data_version: changes when another connection commits (a cheap change probe)."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def memory_mark(self) -> tuple[object, ...]:
        """A cheap fingerprint of what memory views show: equal marks mean no memory row changed. Reads only.

        It covers memory items (rows and tiers), notes (rows and statuses; a contest is a new note), corrections (every edit
        and delete writes one), references and anchors (what freshness checks) and the checkout's signature. It does
        not cover sessions, events, the token ledger or access counts: a write that touches only those (a spool
        flush of reads, a booked injection) leaves it unchanged, so the operator view reloads its overview only.
        """
        from cortex_engine.scope.freshness import checkout_signature

        def rows(sql: str) -> tuple[object, ...]:
            return tuple(tuple(row) for row in self.conn.execute(sql))

        return (
            rows("SELECT COUNT(*), MAX(rowid) FROM memory_items"),
            rows("SELECT scope_id, state, COUNT(*) FROM memory_items GROUP BY scope_id, state"),
            rows("SELECT COUNT(*), MAX(rowid) FROM notes"),
            rows("SELECT scope_id, status, COUNT(*) FROM notes GROUP BY scope_id, status"),
            rows("SELECT COUNT(*), MAX(rowid) FROM memory_corrections"),
            rows("SELECT COUNT(*), MAX(rowid), TOTAL(rowid) FROM item_refs"),
            rows("SELECT COUNT(*), MAX(rowid), TOTAL(rowid) FROM memory_anchors"),
            checkout_signature(self.scope),
        )

    # -- inspection and correction -------------------------------------------------------------

    def list_memory(
        self,
        *,
        scopes: list[str] | None = None,
        kinds: list[str] | None = None,
        states: list[str] | None = None,
        text: str | None = None,
        labels: list[str] | None = None,
        sort: str = "created",
        reverse: bool = False,
        limit: int | None = None,
        offset: int = 0,
        start: inspection.PageKey | None = None,
        before: inspection.PageKey | None = None,
        oldest: bool = False,
    ) -> inspection.Page:
        """Every memory item, newest first, with its trust labels and one freshness verdict per referenced path.

        No default filters. Reads only. A page is found by `offset`, or by key (`start`, `before`, `oldest`: see
        `inspection.list_memory`), which costs the same on the last page as on the first.

        Args:
            text: only items whose subject or text contains this (case-insensitive substring).
            labels: only items carrying any of `inspection.LABEL_FILTERS` (contested, stale, drifted, superseded),
                judged as the listed labels are (stale and drifted against the checkout as it is now).
            sort: one of `inspection.SORTS`; `reverse` flips its natural direction.

        Raises:
            InvalidInput: an unknown kind (full or short name), state, label or sort, a negative offset, or two ways
                of paging.
        """
        refresh_app_graph(self.conn, self.scope, self.now())  # labels judged against the checkout as it is now
        validator = Validator(self.conn, self.scope)
        page = inspection.list_memory(self.conn, scopes=scopes, kinds=kinds, states=states, text=text, labels=labels,
                                      validator=validator, sort=sort, reverse=reverse, limit=limit, offset=offset,
                                      start=start, before=before, oldest=oldest)
        found = validator.validate_many([(str(i["id"]), str(i["scope_key"])) for i in page.items])
        for item in page.items:
            validation = found[str(item["id"])]
            item["labels"] = item_labels(str(item["kind"]), str(item["text"]), validation)
            item["references"] = validation.verdicts
        return page

    def memory_key(
        self, item_id: str, *, scopes: list[str] | None = None, kinds: list[str] | None = None,
        states: list[str] | None = None,
    ) -> inspection.PageKey | None:
        """An item's place in `list_memory`'s order under these filters (None when they do not list it). Reads only."""
        return inspection.memory_key(self.conn, item_id, scopes=scopes, kinds=kinds, states=states)

    def inspect_memory(self, item_id: str) -> inspection.Inspection:
        """Everything about one item (trust, conflict, references, access, corrections). Reads only."""
        refresh_app_graph(self.conn, self.scope, self.now())
        return inspection.inspect_memory(self.conn, self.scope, item_id)

    def edit_memory(self, item_id: str, text: str) -> inspection.Edit:
        """Replace a memory's text through the audited edit; spoofed trailers are refused."""
        return inspection.edit_memory(self.conn, item_id, text, self.now())

    def delete_memory(self, item_id: str, *, yes: bool = False) -> inspection.Deletion:
        """Preview a delete, or with `yes` delete it and everything derived from it (audited).

        Derived: the contest it was part of ends, the session focus it set falls back, and this scope's branch
        snapshot (focus, intents, blockers) is rebuilt without it, so brief, header and stats stop naming it.
        """
        result = inspection.delete_memory(self.conn, item_id, self.now(), yes=yes)
        has_snapshot = self.conn.execute(
            f"SELECT 1 FROM memory_items WHERE {IN_SCOPE} AND kind='branch_snapshot'", (self.scope.key,)).fetchone()
        if result.deleted and result.scope_key == self.scope.key and result.kind != "branch_snapshot" and has_snapshot:
            with transaction(self.conn):
                if consolidation.sync_branch_snapshot(self.conn, self.scope, self.now()) is None:
                    self.conn.execute(f"DELETE FROM memory_items WHERE {IN_SCOPE} AND kind='branch_snapshot'",
                                      (self.scope.key,))
        return result

    def reanchor(self, item_id: str) -> inspection.Reanchor:
        """Re-anchor a drifted memory to the code as it is now (after the caller checked it still holds); audited.

        Raises:
            NotFound: no such item. Refused: nothing drifted.
        """
        refresh_app_graph(self.conn, self.scope, self.now())
        head = None
        if self.scope.git_dir and self.scope.git_root:
            from cortex_engine.scope.identity import read_head

            head = read_head(self.scope.git_dir, self.scope.git_root)[1]
        return inspection.reanchor_memory(self.conn, self.scope, item_id, head, self.now())

    def locate_reference(self, item_id: str) -> inspection.Location:
        """The file and line to open to check a memory (its drifted span, a renamed file's new place, …); changes no memory.

        Raises:
            NotFound: no such item, or none of its files is in the checkout.
        """
        refresh_app_graph(self.conn, self.scope, self.now())
        return inspection.locate_reference(self.conn, self.scope, item_id)

    def rewrite_moved(self, item_id: str, *, expected_text: str | None = None) -> inspection.MovedRewrite:
        """Rewrite a memory's renamed file references (`[moved: a → b]`) to their new paths in its text; audited.

        Args:
            item_id: the memory item (or note) id.
            expected_text: the item's text as the caller showed it; if it changed since, nothing is written.

        Raises:
            NotFound: no such item. Refused: it changed since it was shown, or has no moved reference in its text.
        """
        refresh_app_graph(self.conn, self.scope, self.now())
        return inspection.rewrite_moved_references(self.conn, self.scope, item_id, self.now(),
                                                   expected_text=expected_text)

    def validate_memory(self, topic: str | None = None, *, persist: bool = True, all_scopes: bool = False) -> dict[str, object]:
        """Audit memories' references against the checkout (deletes nothing); persists each verdict unless told not to.

        `all_scopes` checks every scope of the store, each against its own checkout state (its worktree, else its
        branch tip from git objects), and lists the scopes it could not check.
        """
        self.refresh()
        ctx = self._context()
        scopes: list[dict[str, object]] = []
        unchecked: list[dict[str, object]] = []
        if topic:
            _, _, found = surfaces.ranked(ctx, topic, 20)
            pairs = [(c.row, c.validation) for c in found]
        elif all_scopes:
            keys = [r[0] for r in self.conn.execute(
                "SELECT DISTINCT scope_key FROM scoped_items WHERE state != 'archived' "
                "AND id IN (SELECT memory_item_id FROM memory_references) ORDER BY scope_key"
            )]
            pairs = []
            for checkout in checkouts(self.conn, self.scope, self.project_key, keys, self.now()):
                if checkout.validator is None:
                    unchecked.append({"scope_key": checkout.scope_key, "reason": checkout.reason})
                    continue
                checked = self._validate_scope_rows([checkout.scope_key], checkout.validator)
                pairs.extend(checked)
                scopes.append({
                    "scope_key": checkout.scope_key, "against": checkout.against, "where": checkout.where,
                    "checked": len(checked), "stale": sum(1 for _, v in checked if v.stale),
                })
        else:
            pairs = self._validate_scope_rows(self.scope_keys, ctx.validator)
        now = self.now()
        with transaction(self.conn):
            for row, validation in (pairs if persist else []):
                for ref in validation.refs:
                    store_queries.set_reference_status(self.conn, row["id"], ref.path, ref.status, ref.moved_to, now)
        results = [
            {"id": row["id"], "kind": row["kind"], "subject": row["subject"], "scope_key": row["scope_key"],
             "validity": v.validity, "label": v.label,
             "references": [{**r.verdict, "status": r.status, "moved_to": r.verdict["to"]} for r in v.refs],
             "anchors": [{"anchor": quote_path(a.name), "status": a.status, "path": quote_path(a.path), "start": a.start,
                          "end": a.end}
                         for a in v.anchors]}
            for row, v in pairs
        ]
        summary = {s: sum(1 for _, v in pairs for r in v.refs if r.status == s) for s in ("exists", "missing", "moved", "unknown")}
        report: dict[str, object] = {
            "topic": topic, "checked": len(pairs), "stale": sum(1 for _, v in pairs if v.stale),
            "drifted": sum(1 for _, v in pairs if v.drifted and not v.stale), "references": summary,
            "items": results,
        }
        if all_scopes and not topic:
            report["scopes"] = scopes
            report["unchecked"] = unchecked
        return report

    def _validate_scope_rows(self, keys: list[str], validator: Validator) -> list[tuple[sqlite3.Row, Validation]]:
        """Every non-archived item with references in `keys`, newest first, with its validation."""
        rows = self.conn.execute(
            f"{surfaces.ITEM_SELECT} WHERE {in_scopes(len(keys))} AND state != 'archived' "
            "AND id IN (SELECT memory_item_id FROM memory_references) ORDER BY created_at DESC, rowid DESC",
            keys,
        ).fetchall()
        validations = validator.validate_many([(r["id"], r["scope_key"]) for r in rows])
        return [(r, validations[r["id"]]) for r in rows]

    def contests(self) -> list[dict[str, object]]:
        """Every open contest in this scope: the active contested notes of a subject, seated together."""
        rows = self.conn.execute(
            "SELECT n.*, m.id AS item_id FROM scoped_notes n LEFT JOIN memory_items m ON m.id = 'notes:' || n.id "
            f"WHERE {in_scopes(1, 'n.')} AND n.conflict=1 AND n.status='active' ORDER BY n.subject, n.timestamp, n.rowid",
            (self.scope.key,),
        ).fetchall()
        grouped: dict[str, list[sqlite3.Row]] = {}
        for row in rows:
            grouped.setdefault(row["subject"] or "", []).append(row)
        return [
            {
                "subject": subject,
                "sides": [
                    {"id": r["id"], "item_id": r["item_id"], "kind": r["kind"], "content": r["content"],
                     "timestamp": r["timestamp"], "session_id": r["session_id"]}
                    for r in sides
                ],
            }
            for subject, sides in grouped.items()
        ]

    # -- export / import ------------------------------------------------------------------------

    def export_notes(self, scopes: list[str] | None = None) -> list:
        """Every note (of `scopes`; `here` names this worktree's scopes) as `transfer.ExportedNote`s.

        Raises:
            InvalidInput: a scope key no note carries.
        """
        keys: list[str] = []
        for key in scopes or []:
            for each in (self.scope_keys if key == "here" else [key]):
                if each not in keys:
                    keys.append(each)
        return transfer.export_notes(self.conn, keys or None, implied=tuple(self.scope_keys))

    def import_file(self, path: str, *, scope: str | None = None, progress=None):  # noqa: ANN001, ANN201
        """Import a Cortex JSON Lines export, or a CLAUDE.md / MEMORY.md as insights of the project layer.

        Notes an export holds under another repository's scopes (another clone, another machine) land in this
        worktree's scope, and another project layer in this one (`transfer.map_foreign_scopes`).

        Args:
            scope: put every note under this scope key instead (`here`: this worktree's own scope).
            progress: called with the number of notes read; returns the `tick(n)` to call per note.

        Raises:
            InvalidInput: the file is unreadable, not importable, or holds a bad line (nothing is imported).
        """
        fmt, incoming, skipped = transfer.read_file(path, default_scope=self.project_key, now=self.now())
        remapped = 0
        if scope is not None:
            incoming = transfer.rescope(incoming, self.scope.key if scope == "here" else scope)
        else:
            incoming, remapped = transfer.map_foreign_scopes(incoming, self.scope, self.project_key)
        result = transfer.ImportResult(path, fmt, len(incoming), skipped=skipped, remapped=remapped)
        if arrivals.needs_review("import"):  # what a file claims waits for a person (`cortex inbox`)
            transfer.hold_for_review(self.conn, result, incoming, self.now())
            result.unread_scopes = sorted({n.scope for n in incoming} - set(self.scope_keys))
            return result
        tick = progress(len(incoming)) if progress is not None else None
        transfer.import_notes(self.conn, result, incoming, tick)
        result.unread_scopes = sorted({n.scope for n in incoming} - set(self.scope_keys))
        return result

    # -- the inbox: arrivals from outside, for a person to accept or reject ----------------------

    def inbox(self, states: tuple[str, ...] = ("pending",)) -> list[arrivals.Arrival]:
        """The arrivals of every scope of this store in these states (pending by default), oldest first."""
        return arrivals.listing(self.conn, None, states)

    def pending_arrivals(self) -> int:
        """How many arrivals of this worktree's scopes wait for review."""
        return arrivals.pending_count(self.conn, self.scope_keys)

    def accept_arrivals(self, ids: list[str], *, every: bool = False) -> list[review.Verdict]:
        """A person accepts arrivals: each becomes a note under the usual rules. Only the CLI and the TUI call this.

        Raises:
            NotFound: an id names no arrival.
            InvalidInput: neither ids nor `every`, or an ambiguous prefix.
            Refused: an arrival is no longer pending, or is a decision file of another branch.
        """
        return review.accept(self.conn, self.scope, ids, self.now(), every=every)

    def arrival_file(self, arrival_id: str) -> str:
        """The absolute path of the file an arrival came from (a decision file in this worktree, an imported file).

        Raises:
            NotFound: no arrival carries that id.
        """
        row = arrivals.find(self.conn, arrival_id)
        return row["path"] if row["channel"] == "import" else os.path.join(self.scope.worktree, row["path"])

    def arrival_commit(self, arrival_id: str) -> str:
        """Git's account of the commit a decision-file arrival came from (author text, to be shown as such).

        Raises:
            NotFound: no arrival carries that id.
            InvalidInput: it names no commit, or git cannot show it.
        """
        return sharing.commit_text(self.scope.worktree, arrivals.find(self.conn, arrival_id)["commit_oid"])

    def reject_arrivals(self, ids: list[str], *, every: bool = False) -> list[review.Verdict]:
        """A person rejects arrivals: they never become notes (the same decision file is not offered again).

        Raises:
            NotFound: an id names no arrival.
            InvalidInput: neither ids nor `every`, or an ambiguous prefix.
            Refused: an arrival is no longer pending.
        """
        return review.reject(self.conn, self.scope, ids, self.now(), every=every)

    # -- store ----------------------------------------------------------------------------------

    def store_info(self) -> StoreInfo:
        """Where this directory's store lives and how its identity was derived."""
        return describe_store(self.cwd, self.identity.store_dir.parent.parent)

    def status(self) -> dict[str, object]:
        """Counts that say what this store holds for this scope, and whether recall also ranks by meaning."""
        from cortex_engine.semantic.extra import summary as semantic_summary

        counts = {
            row["state"]: row["n"]
            for row in self.conn.execute(
                f"SELECT state, COUNT(*) AS n FROM memory_items WHERE {IN_SCOPE} GROUP BY state", (self.scope.key,)
            )
        }
        contested = self.conn.execute(
            f"SELECT COUNT(*) FROM notes WHERE {IN_SCOPE} AND conflict=1 AND status='active'", (self.scope.key,)
        ).fetchone()[0]
        session = self.current_session()
        return {
            "engaged": capture.is_engaged(self.scope.worktree),
            "runtime_problem": capture.runtime_problem(self.scope.worktree),
            "worktree": self.scope.worktree,
            "branch": self.scope.branch,
            "head_oid": self.scope.head_oid,
            "degraded": self.identity.degraded_reason is not None,
            "session_started_at": session["started_at"] if session is not None else None,
            "store": str(self.identity.db_path),
            "schema_version": SCHEMA_VERSION,
            "scope_key": self.scope.key,
            "scope_label": self.scope.label,
            "scope_type": self.scope.type,
            "items_by_state": counts,
            "items": sum(counts.values()),
            "contested_notes": contested,
            "session": session["id"] if session is not None else None,
            "semantic": semantic_summary(self.conn),
        }


def engaged_worktree(cwd: str) -> str | None:
    """The worktree whose capture is engaged for `cwd` (its runtime folder trusted and keyed to this machine)."""
    folder = capture.find_runtime(cwd)
    return str(folder.parent) if folder is not None and capture.is_engaged(folder.parent) else None


def back_off_capture(cwd: str, busy: bool) -> None:
    """The store refused a flush: make this worktree's hooks wait before the next one (30 s when only busy)."""
    import time

    folder = capture.find_runtime(cwd)
    if folder is not None:
        capture.back_off(folder, time.time(), 30 if busy else None)


def semantic_installed() -> bool:
    """Whether the semantic extra is installed and not turned off (found, not imported: the model is not loaded)."""
    from cortex_engine.semantic import extra

    return extra.availability().installed


def open_engine(cwd: str | os.PathLike[str] = ".", *, home: Path | None = None, clock: Clock | None = None,
                create: bool = True, empty_if_missing: bool = False) -> Engine:
    """Open the engine for a working directory (see `Engine`; `create=False` opens only a store that exists, and
    with `empty_if_missing` reads a missing one as empty, creating nothing)."""
    return Engine(cwd, home=home, clock=clock, create=create, empty_if_missing=empty_if_missing)
