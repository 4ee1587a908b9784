"""The sentence encoder: all-MiniLM-L6-v2 (int8 ONNX) on one CPU thread, mean-pooled and L2-normalised.

The pinned file is read once, its SHA-256 checked on the bytes that are run, and its graph rewritten in memory so
the vocabulary's embedding table stays int8 (`graph`: ~35 MiB less resident memory, outputs bit-identical); with
`semantic.extra.INTEGER_PRODUCTS` the matrix products run on the int8 weights too (off: the vectors move).

Heavy (numpy, onnxruntime; `tokenizers` only for a non-ASCII text): imported only where embedding happens, never
by a hook.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort  # type: ignore[import-untyped]

from cortex_engine.semantic import extra as semantic
from cortex_engine.semantic import graph
from cortex_engine.semantic.wordpiece import WordPiece

MAX_TOKENS = 256
"""Longer texts are cut (the model was trained on 128-token passages; a note's first 256 tokens say what it is)."""
BATCH = 8
"""Texts per run, sorted by length: 8 short notes fit the CPU's caches (measured: 8 → 159 items per CPU-second,
32 → 133, 64 → 105 on the anchor corpus's notes, ~44 tokens each)."""
TOPICS_KEPT = 256
"""Topics whose vectors a process remembers (1.5 KiB each)."""
_TOKENIZER = Path(__file__).with_name("tokenizer.json")
_LOADED: dict[str, Embedder] = {}
_LOCK = threading.Lock()


class ModelRefused(Exception):
    """The model file is missing or is not the pinned one: the dense retriever stays off."""


class Embedder:
    """Texts to unit vectors (float32, `semantic.DIMENSIONS` wide); deterministic on CPU with one thread."""

    def __init__(self, path: str) -> None:
        """Load `path` after checking its SHA-256 against the pinned one.

        Raises:
            ModelRefused: no such file, or its hash differs (a different or damaged model is never run).
        """
        problem = semantic.model_problem(path)
        if problem is not None:
            raise ModelRefused(problem)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # No memory arena: it keeps the peak of the largest batch (+150 MB after a backfill) for the server's life.
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise ModelRefused(f"cannot read the model file {path}: {exc.strerror or exc}") from exc
        if hashlib.sha256(data).hexdigest() != semantic.MODEL_SHA256:  # changed since it was checked
            raise ModelRefused(f"the model file {path} changed while it was loaded; it is refused, never run")
        self._session = ort.InferenceSession(
            graph.rewrite(data, matmuls=semantic.INTEGER_PRODUCTS), options, providers=["CPUExecutionProvider"]
        )
        del data
        semantic.release_freed()
        self._wordpiece = WordPiece(_TOKENIZER)
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._topics: OrderedDict[str, Any] = OrderedDict()

    def embed_topic(self, topic: str) -> Any:
        """One text's vector, remembered for the process's last TOPICS_KEPT topics (read-only: it is shared).

        A warm server is asked the same topics again (an agent re-recalls what it is working on); the encoder is
        deterministic, so a remembered vector is the one a new run would compute, for ~5 ms less.
        """
        with self._lock:
            held = self._topics.get(topic)
            if held is not None:
                self._topics.move_to_end(topic)
                return held
        vector = self.embed([topic])[0]
        vector.flags.writeable = False
        with self._lock:
            self._topics[topic] = vector
            while len(self._topics) > TOPICS_KEPT:
                self._topics.popitem(last=False)
        return vector

    def _token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids: ASCII text by `wordpiece` (the same ids in ~4 MiB), any other by the library,
        loaded the first time one comes (~15 MiB)."""
        ids: list[list[int] | None] = [
            self._wordpiece.encode(t, MAX_TOKENS) if self._wordpiece.handles(t) else None for t in texts
        ]
        rest = [i for i, found in enumerate(ids) if found is None]
        if rest:
            if self._tokenizer is None:
                self._tokenizer = _library_tokenizer()
            for i, encoding in zip(rest, self._tokenizer.encode_batch([texts[i] for i in rest]), strict=True):
                ids[i] = list(encoding.ids)
        return [found or [] for found in ids]

    def embed(self, texts: list[str]) -> Any:
        """One L2-normalised float32 row per text, in order (batched by length: less padding to compute)."""
        out = np.zeros((len(texts), semantic.DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            encoded = self._token_ids(texts)
            order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
            for start in range(0, len(order), BATCH):
                chunk = order[start : start + BATCH]
                width = max(len(encoded[i]) for i in chunk)
                ids = np.zeros((len(chunk), width), dtype=np.int64)
                mask = np.zeros((len(chunk), width), dtype=np.int64)
                for row, i in enumerate(chunk):
                    n = len(encoded[i])
                    ids[row, :n] = encoded[i]
                    mask[row, :n] = 1
                hidden = self._session.run(
                    None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
                )[0]
                pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
                norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
                out[chunk] = pooled / norms
            semantic.release_freed()
        return out


def _library_tokenizer() -> Any:
    """The `tokenizers` library's tokenizer for the shipped file, unpadded, cut at MAX_TOKENS."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(_TOKENIZER))
    # The shipped tokenizer pads every input to 128 tokens: padded alike, every two texts score about 0.8.
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    return tokenizer


def load() -> Embedder:
    """The process's encoder, loaded once.

    Raises:
        ModelRefused: the extra is not installed, is turned off, or its model file fails the hash.
    """
    state = semantic.availability()
    path = semantic.model_file()
    if not state.installed or path is None:
        raise ModelRefused(state.reason)
    with _LOCK:
        if path not in _LOADED:
            _LOADED[path] = Embedder(path)
        return _LOADED[path]
