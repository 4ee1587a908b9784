"""The dense retriever's door: whether recall also ranks by meaning on this store, and embedding the backlog.

The semantic extra is optional: nothing here imports it (or numpy, or the model) until a store has vectors and
a caller asks, so a one-shot recall before `cortex embed` costs what it always did.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from cortex_engine.store import reports

if TYPE_CHECKING:
    from cortex_engine.query.surfaces import DenseSearch


def retriever(conn: sqlite3.Connection) -> tuple[DenseSearch | None, str | None]:
    """The dense retriever for topic surfaces and why there is none (None, None: no vectors yet, nothing said).

    None without the semantic extra (or with `CORTEX_SEMANTIC=0`), on a store with no vectors of this encoder yet
    (nothing is loaded then; vectors an earlier encoder made wait to be embedded again), or when the model file
    fails its pinned hash. Otherwise the encoder is loaded once per process.
    """
    from cortex_engine.semantic import extra as semantic

    if not reports.has_vectors(conn, semantic.ENCODER):
        return None, None
    state = semantic.availability()
    if not state.installed:
        return None, state.reason
    try:
        from cortex_engine.semantic import model, vectors
    except ImportError as exc:
        return None, f"recall is lexical only: {exc}"
    try:
        embedder = model.load()
    except model.ModelRefused as exc:
        return None, f"recall is lexical only: {exc}"

    def search(
        conn: sqlite3.Connection, keys: list[str], topic: str, k: int, include: Collection[int]
    ) -> list[tuple[int, float]]:
        return vectors.dense_hits(conn, keys, embedder.embed_topic(topic), k, include)

    return search, None


def _require_extra() -> None:
    """Raises SemanticUnavailable when the extra is not installed (or `CORTEX_SEMANTIC=0`)."""
    from cortex_engine.base.errors import SemanticUnavailable
    from cortex_engine.semantic import extra

    found = extra.availability()
    if not found.installed:
        raise SemanticUnavailable(f"{found.reason}; to turn it on: {extra.enable_hint()}")


def backlog(conn: sqlite3.Connection) -> int:
    """How many items recall can show have no sentence vector yet.

    Raises:
        SemanticUnavailable: the semantic extra is not installed (or `CORTEX_SEMANTIC=0`).
    """
    _require_extra()
    from cortex_engine.semantic import vectors

    return vectors.pending_count(conn)


def embed_pending(
    conn: sqlite3.Connection, *, limit: int | None = None, tick: Callable[[int], None] | None = None
) -> int:
    """Embed the items that have no vector yet (all of them, or `limit`), newest first; returns how many.

    Raises:
        SemanticUnavailable: the extra is not installed, or its model file fails the pinned hash (never run).
    """
    from cortex_engine.base.errors import SemanticUnavailable

    _require_extra()
    from cortex_engine.semantic import extra, model, vectors

    try:
        embedder = model.load()
    except model.ModelRefused as exc:
        raise SemanticUnavailable(f"{exc}; reinstall the extra: {extra.install_hint()}", code="model_refused") from exc
    return vectors.embed_pending(conn, embedder, limit=limit, tick=tick)
