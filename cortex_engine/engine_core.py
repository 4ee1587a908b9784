"""The facade's core: one store opened for one working directory's scope, with the clock, the current session,
the per-call context the surfaces read, and booking. `Engine` (engine.py) adds the API every adapter calls.

Like the rest of the facade it holds no SQL: each method is a call into a stage (tested by
`tests/test_engine_facade.py`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Self

from cortex_engine.base import settings
from cortex_engine.base.clock import Clock, clock_from_env, iso
from cortex_engine.base.lazy import LazyModule
from cortex_engine.capture import sessions
from cortex_engine.memory import tiers
from cortex_engine.query import economy, surfaces
from cortex_engine.query.surfaces import Surface
from cortex_engine.scope.freshness import Validator, refresh_app_graph
from cortex_engine.scope.identity import (
    Scope,
    StoreIdentity,
    detect_scope,
    locate_git,
    project_scope_key,
    store_identity,
)
from cortex_engine.scope.storeinfo import file_id
from cortex_engine.store import queries as store_queries
from cortex_engine.store import reports as store_reports
from cortex_engine.store.database import open_empty, open_store, remember_scopes, store_error

if TYPE_CHECKING:  # the real module, so that mypy checks every call through the lazy handle
    from cortex_engine.query import dense
else:
    dense = LazyModule("query.dense")  # the semantic extra's door: a lexical recall never loads it


class EngineCore:
    """One store, seen from one working directory's scope: what every `Engine` call stands on."""

    def __init__(
        self,
        cwd: str | os.PathLike[str] = ".",
        *,
        home: Path | None = None,
        clock: Clock | None = None,
        create: bool = True,
        empty_if_missing: bool = False,
    ) -> None:
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

            raise InvalidInput(
                f"{self.cwd} is not a directory; run Cortex from (or -C) a working directory", code="bad_cwd"
            )
        self.clock = clock or clock_from_env()
        location = locate_git(self.cwd)
        self._location = location
        self.home: Path = home if home is not None else settings.home()
        """Cortex's home for this store: its settings file (the review policy) is read here."""
        self.identity: StoreIdentity = store_identity(self.cwd, home, location)
        self.scope: Scope = detect_scope(self.cwd, location)
        if not create and not self.identity.db_path.exists():
            from cortex_engine.base.errors import StoreUnavailable

            if not empty_if_missing:
                raise StoreUnavailable(
                    f"no Cortex store for {self.cwd}; nothing was created (was its repository moved or deleted?)",
                    code="store_missing",
                    path=str(self.identity.db_path),
                )
            self.conn: sqlite3.Connection = open_empty(root=self.identity.root, now=self.now())
        else:
            self.conn = open_store(self.identity.db_path, root=self.identity.root, now=self.now())
        self._store_file = file_id(self.identity.db_path)
        self._consulted: str | None = None
        self.dense_problem: str | None = None
        try:
            root = store_queries.meta_value(self.conn, "root_path")
            self._schema_cookie = store_reports.schema_cookie(self.conn)
            self.project_key = project_scope_key(root)
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
        if file_id(self.identity.db_path) != self._store_file:
            return False
        if store_reports.schema_cookie(self.conn) != self._schema_cookie:
            return False
        self.scope = detect_scope(self.cwd, location)
        self._consulted = None
        remember_scopes(self.conn, self.scope_keys)
        return True

    def now(self) -> str:
        """The injected clock's time as a stored ISO string."""
        return iso(self.clock())

    def review_policy(self) -> str:
        """Which arrivals wait for a person (`others`, `all`, `none`): the user's settings file in this store's home,
        read when asked; never the environment of the process that asks."""
        return settings.review_arrivals(self.home)

    def close(self) -> None:
        """Close the store connection."""
        self.conn.close()

    def __enter__(self) -> Self:
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
        return sessions.current(self.conn, self.scope.key)

    def _session_id(self) -> str | None:
        return sessions.current_id(self.conn, self.scope.key)

    def ensure_session(self) -> str:
        """The current primary session of this scope, created when there is none."""
        return sessions.ensure(self.conn, self.scope, self.now())

    def refresh(self) -> None:
        """Bring derived state up to date: the checkout inventory (if it moved) and the decay tiers."""
        refresh_app_graph(self.conn, self.scope, self.now())
        self.refresh_tiers()

    def refresh_tiers(self, *, force: bool = False) -> int:
        """Re-derive hot/warm/cold for every item of these scopes whose tier can have changed; returns how many did
        (`memory.tiers.refresh` says which can have; within `tiers.REFRESH_SECONDS` nothing runs unless `force`)."""
        return tiers.refresh(self.conn, self.scope.key, self.scope_keys, self.clock(), force=force)

    def dense_search(self) -> surfaces.DenseSearch | None:
        """The dense retriever for topic surfaces, or None: recall is then lexical.

        None without the semantic extra (or with `CORTEX_SEMANTIC=0`), on a store with no vectors yet (nothing is
        loaded then: a one-shot recall before `cortex embed` costs what it always did), or when the model file fails
        its pinned hash (`dense_problem` says so). Otherwise the encoder is loaded once per process.
        """
        search, self.dense_problem = dense.retriever(self.conn)
        return search

    def embedding_backlog(self) -> int:
        """How many items recall can show have no sentence vector yet.

        Raises:
            SemanticUnavailable: the semantic extra is not installed (or `CORTEX_SEMANTIC=0`).
        """
        return dense.backlog(self.conn)

    def embed_pending(self, *, limit: int | None = None, tick: Callable[[int], None] | None = None) -> int:
        """Embed the items that have no vector yet (all of them, or `limit`), newest first; returns how many.

        Raises:
            SemanticUnavailable: the extra is not installed, or its model file fails the pinned hash (never run).
        """
        return dense.embed_pending(self.conn, limit=limit, tick=tick)

    def _fresh_context(self) -> surfaces.Context:
        """The surfaces' context after the tiers and the checkout are refreshed: what a read of memory starts from."""
        self.refresh()
        return self._context()

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
        return economy.book(self.conn, self.scope.key, self._session_id(), surface, self.now(), reinforce=reinforce)

    def book_text(self, channel: str, text: str, session_id: str | None = None) -> None:
        """Book text injected outside the surfaces (hook outputs) against a session."""
        economy.book_text(self.conn, self.scope.key, session_id, channel, text, self.now())
