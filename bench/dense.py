"""Shared by the retrieval benches: the encoder's vectors, cached under /tmp across runs, and the hybrid context.

Embedding all of LoCoMo takes about a minute on one core; the cache (`CORTEX_BENCH_EMBED_CACHE`, default
/tmp/cortex-bench-embeddings.pkl, keyed by the SHA-1 of each text) makes every later run read them instead. The
vectors are the engine's own (`semantic.model`, `semantic.vectors.embed_text`), so a cached run ranks exactly as a
store embedded by `cortex embed` would.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sqlite3
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

CACHE = Path(os.environ.get("CORTEX_BENCH_EMBED_CACHE", "/tmp/cortex-bench-embeddings.pkl"))


def available() -> bool:
    """Whether the semantic extra is installed (the dense rankers are skipped otherwise)."""
    from cortex_engine.semantic import extra

    return extra.availability().installed


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def embed_all(texts: list[str]) -> tuple[dict[str, Any], dict[str, float]]:
    """Every text's unit vector (from the cache, embedding what is missing); and how long the missing ones took."""
    from cortex_engine.semantic import model

    cache: dict[str, Any] = {}
    if CACHE.is_file():
        with CACHE.open("rb") as handle:
            cache = pickle.load(handle)
    missing = sorted({t for t in texts if _key(t) not in cache})
    took = 0.0
    if missing:
        encoder = model.load()
        began = time.perf_counter()
        for start in range(0, len(missing), 256):
            chunk = missing[start : start + 256]
            for text, vector in zip(chunk, encoder.embed(chunk), strict=True):
                cache[_key(text)] = vector
        took = time.perf_counter() - began
        with CACHE.open("wb") as handle:
            pickle.dump(cache, handle)
    return {t: cache[_key(t)] for t in texts}, {"embedded": len(missing), "seconds": round(took, 2)}


def store_vectors(conn: sqlite3.Connection, vectors_by_rowid: dict[int, Any]) -> None:
    """Write item vectors as `cortex embed` would (int8 rows in `item_vectors`)."""
    from cortex_engine.semantic import vectors

    with conn:
        conn.executemany(
            "INSERT OR REPLACE INTO item_vectors(item_rowid, vector) VALUES (?, ?)",
            [(rowid, vectors.pack(vec)) for rowid, vec in vectors_by_rowid.items()],
        )


def searcher(topics: dict[str, Any]) -> Callable[[sqlite3.Connection, list[str], str, int], list[tuple[int, float]]]:
    """A dense search that looks each topic's vector up instead of running the encoder."""
    from cortex_engine.semantic import vectors

    def search(
        conn: sqlite3.Connection, keys: list[str], topic: str, k: int, include: Collection[int] = ()
    ) -> list[tuple[int, float]]:
        if topic not in topics:  # the topic as recall saw it: cleaned of secrets (`surfaces.entered`)
            topics.update(embed_all([topic])[0])
        if not include:  # as a tree from before `include` calls it
            return vectors.dense_hits(conn, keys, topics[topic], k)
        return vectors.dense_hits(conn, keys, topics[topic], k, include)

    return search


def dense_ranking(unit_vectors: Any, ids: list[str], query: Any) -> list[str]:
    """Every unit by cosine to `query`, best first (the dense retriever alone, no floor)."""
    import numpy as np

    scores = unit_vectors @ np.asarray(query, dtype=np.float32)
    return [ids[i] for i in np.argsort(-scores, kind="stable")]
