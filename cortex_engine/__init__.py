"""Cortex engine: trust, freshness and economy for coding-agent memory (standard library only)."""

from cortex_engine.base.errors import CortexError, InvalidInput, NotFound, Refused, StoreRefused

__all__ = ["CortexError", "InvalidInput", "NotFound", "Refused", "StoreRefused", "open_engine"]


def open_engine(*args: object, **kwargs: object):  # noqa: ANN201 - lazily typed to keep import light
    """Open the engine for a working directory (see `cortex_engine.engine.open_engine`)."""
    from cortex_engine.engine import open_engine as _open

    return _open(*args, **kwargs)  # type: ignore[arg-type]
