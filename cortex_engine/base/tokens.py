"""The one token estimator used by every budget, ledger booking and eval metric."""

from __future__ import annotations

import math


def estimate_tokens(text: str) -> int:
    """Estimate the tokens of `text` as ceil(characters / 4); the empty string costs nothing."""
    return math.ceil(len(text) / 4)


def estimate_file_tokens(size: int) -> int:
    """The byte-based variant for files: ceil(bytes / 4)."""
    return math.ceil(size / 4)
