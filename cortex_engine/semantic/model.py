"""The sentence encoder: all-MiniLM-L6-v2 (int8 ONNX) on one CPU thread, mean-pooled and L2-normalised.

Heavy (numpy, onnxruntime, tokenizers): imported only where embedding happens, never by a hook.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort  # type: ignore[import-untyped]
from tokenizers import Tokenizer

from cortex_engine.semantic import extra as semantic

MAX_TOKENS = 256
"""Longer texts are cut (the model was trained on 128-token passages; a note's first 256 tokens say what it is)."""
BATCH = 32
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
        self._session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(_TOKENIZER))
        # The shipped tokenizer pads every input to 128 tokens: padded alike, every two texts score about 0.8.
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer = tokenizer
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> Any:
        """One L2-normalised float32 row per text, in order (batched by length: less padding to compute)."""
        out = np.zeros((len(texts), semantic.DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            encoded = self._tokenizer.encode_batch(texts)
            order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
            for start in range(0, len(order), BATCH):
                chunk = order[start : start + BATCH]
                width = max(len(encoded[i].ids) for i in chunk)
                ids = np.zeros((len(chunk), width), dtype=np.int64)
                mask = np.zeros((len(chunk), width), dtype=np.int64)
                for row, i in enumerate(chunk):
                    n = len(encoded[i].ids)
                    ids[row, :n] = encoded[i].ids
                    mask[row, :n] = 1
                hidden = self._session.run(
                    None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
                )[0]
                pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
                norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
                out[chunk] = pooled / norms
        return out


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
