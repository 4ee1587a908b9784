"""The bounds every adapter's arguments are checked against before a surface is built: token budgets and paths."""

from __future__ import annotations

from cortex_engine.query.render import strip_control
from cortex_engine.query.surfaces import BUDGETS

MIN_BUDGET = 20
MAX_BUDGET = 20_000


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
        raise InvalidInput(
            f"path '{shown}' contains a NUL character, which no file name can hold; pass the path as it is on disk",
            code="bad_path",
        )
    return path
