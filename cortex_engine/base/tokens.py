"""The one token estimator used by every budget, ledger booking and eval metric.

Every conversion between tokens and characters goes through here (`CHARS_PER_TOKEN`): a budget is held as
`budget_chars(budget)` characters of rendered text, and a text costs `estimate_tokens(text)`. The hook
`hooks/cortex-substitute.sh` cannot import this module; `tests/test_budget_packer.py` checks its shell
arithmetic against `estimate_file_tokens`.
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4
"""The estimate's ratio: about four characters of English or code per token."""


def estimate_tokens(text: str) -> int:
    """Estimate the tokens of `text` as ceil(characters / 4); the empty string costs nothing."""
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate_file_tokens(size: int) -> int:
    """The byte-based variant for files: ceil(bytes / 4)."""
    return -(-size // CHARS_PER_TOKEN)


def budget_chars(budget: int) -> int:
    """The characters a budget of `budget` tokens holds: a text of at most this length costs at most `budget`."""
    return budget * CHARS_PER_TOKEN
