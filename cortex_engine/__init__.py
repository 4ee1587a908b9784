"""Cortex engine: trust, freshness and economy for coding-agent memory (standard library only)."""

from typing import TYPE_CHECKING

from cortex_engine.base.errors import CortexError, InvalidInput, NotFound, Refused, StoreRefused

__all__ = ["CortexError", "InvalidInput", "NotFound", "Refused", "StoreRefused", "open_engine"]

if TYPE_CHECKING:  # type checkers see the real signature; at run time the engine is imported on the first call
    from cortex_engine.engine import open_engine
else:

    def open_engine(*args, **kwargs):
        """Open the engine for a working directory (see `cortex_engine.engine.open_engine`)."""
        from cortex_engine.engine import open_engine as _open

        return _open(*args, **kwargs)
