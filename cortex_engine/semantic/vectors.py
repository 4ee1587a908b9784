"""Sentence vectors in the store (`item_vectors`) and the brute-force search over one read's scopes.

A vector is stored as its float32 scale and 384 int8 components (388 bytes; cosine against the float original
0.999+). Search reads every vector of the store once per process into memory and keeps it until the store's
vectors change (`vector_generation`, bumped by triggers); a query masks the rows to the read's scopes BEFORE it
scores anything, so a vector of another branch can neither rank nor push an in-scope one out of the top.
Heavy (numpy): imported only where vectors are written or searched.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Collection
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from cortex_engine.memory.items import split_trailers
from cortex_engine.semantic import extra as semantic
from cortex_engine.semantic import graph
from cortex_engine.store.database import connect, transaction

BATCH = 64
"""Items embedded and written per transaction: short writes, so a hook's write never waits long behind one."""
EMBED_CHARS = 2000
"""What of an item's text is embedded (the tokenizer keeps 256 tokens; this bounds the tokenizer's work)."""


def pack(vector: Any) -> bytes:
    """A unit float vector as its float32 scale then int8 components."""
    scale = float(np.max(np.abs(vector))) / 127.0 or 1.0
    quantized = np.clip(np.rint(vector / scale), -127, 127).astype(np.int8)
    return bytes(np.float32(scale).tobytes()) + bytes(quantized.tobytes())


def unpack(blob: bytes) -> Any:
    """The float32 vector `pack` stored."""
    scale = np.frombuffer(blob[:4], dtype=np.float32)[0]
    return np.frombuffer(blob[4:], dtype=np.int8).astype(np.float32) * scale


def embed_text(subject: str | None, text: str) -> str:
    """What an item's vector says: its subject and its body without the label trailers."""
    body, _ = split_trailers(text)
    return ((subject + ": ") if subject else "") + body[:EMBED_CHARS]


_MISSING = (
    "FROM memory_items m WHERE m.state != 'archived' "
    "AND NOT EXISTS (SELECT 1 FROM item_vectors v WHERE v.item_rowid = m.rowid AND v.encoder = ?)"
)
"""The items recall can show with no vector of this encoder: none yet, or one an earlier encoder made."""


def pending_count(conn: sqlite3.Connection) -> int:
    """How many items that recall can show have no vector of this encoder yet (`semantic.ENCODER`)."""
    return int(conn.execute("SELECT count(*) " + _MISSING, (semantic.ENCODER,)).fetchone()[0])


def embed_pending(
    conn: sqlite3.Connection, embedder: Any, *, limit: int | None = None, tick: Callable[[int], None] | None = None
) -> int:
    """Embed items without a vector of this encoder in rowid order, BATCH per transaction; returns how many were
    embedded (a vector an earlier encoder made is replaced).

    In rowid order, the vectors' B-tree is appended to: its pages fill (~410 bytes an item), where inserting
    newest first split every page half full (~820 bytes an item).

    An item changed or deleted meanwhile is skipped (its text is read and written in one transaction).
    """
    done = 0
    while limit is None or done < limit:
        size = BATCH if limit is None else min(BATCH, limit - done)
        rows = conn.execute(
            "SELECT m.rowid, m.subject, m.text " + _MISSING + " ORDER BY m.rowid LIMIT ?", (semantic.ENCODER, size)
        ).fetchall()
        if not rows:
            break
        vectors = embedder.embed([embed_text(r[1], r[2]) for r in rows])
        with transaction(conn):
            for row, vector in zip(rows, vectors, strict=True):
                still = conn.execute("SELECT subject, text FROM memory_items WHERE rowid=?", (row[0],)).fetchone()
                if still is None or (still[0], still[1]) != (row[1], row[2]):
                    continue
                conn.execute(
                    "INSERT OR REPLACE INTO item_vectors(item_rowid, vector, encoder) VALUES (?, ?, ?)",
                    (row[0], pack(vector), semantic.ENCODER),
                )
        done += len(rows)
        if tick is not None:
            tick(len(rows))
    return done


class Matrix:
    """Every vector of one store, in memory: int8 rows, their scales, item rowids and scope ids."""

    def __init__(self, conn: sqlite3.Connection, generation: str | None) -> None:
        """Read every stored vector with its item's scope id."""
        rows = _every_vector(conn)
        width = semantic.DIMENSIONS
        self.generation = generation
        self.rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        self.scopes = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        raw = b"".join(r[2] for r in rows if len(r[2]) == 4 + width)
        if len(raw) != len(rows) * (4 + width):  # a row of another width (a damaged blob): read none of them
            self.rowids = self.rowids[:0]
            self.scopes = self.scopes[:0]
            raw = b""
        table = np.frombuffer(raw, dtype=np.uint8).reshape(len(self.rowids), 4 + width)
        # Rows are held grouped by scope, so a read scores its scopes' rows in place (slices of one array: no
        # gathering of 100k rows into a copy, no sorting of their indices, per query); in rowid order within a
        # scope, so the rows a read asks for by rowid (`include`) are found by bisection.
        order = np.lexsort((self.rowids, self.scopes))
        self.rowids = self.rowids[order]
        self.scopes = self.scopes[order]
        self.scales = np.ascontiguousarray(table[order, :4]).view(np.float32).reshape(-1)
        self.values = np.ascontiguousarray(table[order, 4:]).view(np.int8)
        starts: list[int] = (
            np.flatnonzero(np.r_[True, self.scopes[1:] != self.scopes[:-1]]).tolist() if len(order) else []
        )
        bounds = [*starts, len(order)]
        self.rows_of: dict[int, slice] = {int(self.scopes[a]): slice(a, b) for a, b in pairwise(bounds)}
        """Each scope id's rows: a read takes its scopes' rows and scores nothing else."""

    def search(
        self, scope_ids: list[int], query: Any, k: int, include: Collection[int] = ()
    ) -> list[tuple[int, float]]:
        """The `k` rows of these scopes most similar to `query`, best first: (item rowid, cosine); then the rows of
        `include` (in these scopes) that are not among them, with theirs, in rowid order."""
        parts = [self.rows_of[s] for s in scope_ids if s in self.rows_of]
        if not parts or (k <= 0 and not include):
            return []
        # The query is quantized as the rows are, and scored in integers (exact, and ~10x faster than widening
        # every int8 row to float32 first; onnxruntime's kernel, `graph.int8_scores`); each row's scale then makes
        # it a cosine again.
        q = np.asarray(query, dtype=np.float32)
        q_scale = float(np.max(np.abs(q))) / 127.0 or 1.0
        q8 = np.clip(np.rint(q / q_scale), -127, 127).astype(np.int8)
        column = q8.reshape(-1, 1)
        total = sum(part.stop - part.start for part in parts)
        scores = np.empty(total, dtype=np.float32)
        rowids = np.empty(total, dtype=np.int64)
        at = 0
        for part in parts:
            end = at + part.stop - part.start
            dots = _scorer().run(None, {"rows": self.values[part], "query": column})[0].reshape(-1)
            np.multiply(dots.astype(np.float32), self.scales[part], out=scores[at:end])
            rowids[at:end] = self.rowids[part]
            at = end
        scores *= np.float32(q_scale)
        k = min(k, total)
        best = np.argpartition(scores, total - k)[total - k :] if k > 0 else np.zeros(0, dtype=np.int64)
        best = best[np.lexsort((rowids[best], -scores[best]))]
        found = [(int(rowids[i]), float(scores[i])) for i in best]
        if include:
            taken = set(rowids[best].tolist())
            wanted = np.array(sorted(r for r in include if r not in taken), dtype=np.int64)
            extra: list[tuple[int, float]] = []
            at = 0
            for part in parts:  # each part's rowids are sorted: bisect for the wanted ones
                held = self.rowids[part]
                spot = np.minimum(np.searchsorted(held, wanted), len(held) - 1)
                hit = held[spot] == wanted
                extra += [(int(r), float(scores[at + i])) for r, i in zip(wanted[hit], spot[hit], strict=True)]
                at += len(held)
            found += sorted(extra)
        return found


_SCORER: list[Any] = []


def _scorer() -> Any:
    """The process's `graph.int8_scores` session (one thread, like the encoder's)."""
    if not _SCORER:
        import onnxruntime as ort  # type: ignore[import-untyped]

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        session = ort.InferenceSession(
            graph.int8_scores(semantic.DIMENSIONS), options, providers=["CPUExecutionProvider"]
        )
        with _LOCK:
            if not _SCORER:
                _SCORER.append(session)
    return _SCORER[0]


def _every_vector(conn: sqlite3.Connection) -> list[Any]:
    """(item rowid, scope id, blob) of every stored vector of this encoder, read through a connection of its own
    when the store is a file: the pages read once for the matrix then leave with it, instead of filling the store
    connection's page cache (16 MiB, kept for recall's hot pages) with the whole vector table for the process's
    life."""
    sql = (
        "SELECT v.item_rowid, m.scope_id, v.vector FROM item_vectors v JOIN memory_items m ON m.rowid = v.item_rowid "
        "WHERE v.encoder = ?"
    )
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    if not path or conn.in_transaction:  # in memory, or reading what this connection has not committed yet
        return conn.execute(sql, (semantic.ENCODER,)).fetchall()
    reader = connect(Path(path), readonly=True)
    try:
        return reader.execute(sql, (semantic.ENCODER,)).fetchall()
    finally:
        reader.close()


_MATRICES: dict[str, Matrix] = {}
_LOCK = threading.Lock()


def generation(conn: sqlite3.Connection) -> str | None:
    """The store's vector generation: changes whenever a vector is written or dropped."""
    row = conn.execute("SELECT value FROM meta WHERE key='vector_generation'").fetchone()
    return None if row is None else str(row[0])


def matrix(conn: sqlite3.Connection) -> Matrix:
    """This store's vectors, read once per generation per process."""
    path = conn.execute("PRAGMA database_list").fetchone()[2] or str(id(conn))
    current = generation(conn)
    with _LOCK:
        held = _MATRICES.get(path)
        if held is None or held.generation != current or current is None:
            held = _MATRICES[path] = Matrix(conn, current)
        return held


def dense_hits(
    conn: sqlite3.Connection, scope_keys: list[str], query: Any, k: int, include: Collection[int] = ()
) -> list[tuple[int, float]]:
    """The `k` items of these scopes nearest to `query` (item rowid, cosine), best first; then the cosines of the
    items of `include` (of these scopes, with a vector) that are not among them (`Matrix.search`)."""
    ids = [
        int(r[0])
        for r in conn.execute(f"SELECT id FROM scopes WHERE key IN ({','.join('?' * len(scope_keys))})", scope_keys)
    ]
    return matrix(conn).search(ids, query, k, include) if ids else []
