"""Shared by the retrieval benches: the encoder's vectors, cached under /tmp across runs, and the hybrid context.

Embedding all of LoCoMo takes about a minute on one core; the cache (`CORTEX_BENCH_EMBED_CACHE`, default
/tmp/cortex-bench-embeddings.pkl, keyed by the SHA-1 of each text) makes every later run read them instead. One
cache per encoder version (`semantic.extra.ENCODER`; version 1, the float products, keeps the plain name, and a tree
from before versions were stored is version 1): two trees of different encoders never read each other's vectors.
The vectors are the engine's own (`semantic.model`, `semantic.vectors.embed_text`), so a cached run ranks exactly as
a store embedded by `cortex embed` would.
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


def encoder() -> int:
    """The encoder version of the tree on the path (1 for a tree from before versions were stored)."""
    from cortex_engine.semantic import extra

    return int(getattr(extra, "ENCODER", 1))


def _cache() -> Path:
    base = Path(os.environ.get("CORTEX_BENCH_EMBED_CACHE", "/tmp/cortex-bench-embeddings.pkl"))
    version = encoder()
    return base if version == 1 else base.with_name(f"{base.stem}-encoder{version}{base.suffix}")


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
    path = _cache()
    if path.is_file():
        with path.open("rb") as handle:
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
        with path.open("wb") as handle:
            pickle.dump(cache, handle)
    return {t: cache[_key(t)] for t in texts}, {"embedded": len(missing), "seconds": round(took, 2)}


def store_vectors(conn: sqlite3.Connection, vectors_by_rowid: dict[int, Any]) -> None:
    """Write item vectors as `cortex embed` would (int8 rows in `item_vectors`)."""
    from cortex_engine.semantic import vectors

    version = encoder()
    if version == 1:  # also a tree whose vectors record no encoder
        sql, extra = "INSERT OR REPLACE INTO item_vectors(item_rowid, vector) VALUES (?, ?)", ()
    else:
        sql, extra = "INSERT OR REPLACE INTO item_vectors(item_rowid, vector, encoder) VALUES (?, ?, ?)", (version,)
    with conn:
        conn.executemany(sql, [(rowid, vectors.pack(vec), *extra) for rowid, vec in vectors_by_rowid.items()])


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
