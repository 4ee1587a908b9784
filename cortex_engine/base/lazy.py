"""Lazy module handles: hook paths pay for a module (its regexes, its dataclasses) only when they use it."""

from __future__ import annotations

import importlib
from types import ModuleType


class LazyModule:
    """Stands in for `cortex_engine.<name>` and imports it on first attribute access."""

    def __init__(self, name: str) -> None:
        """Remember which engine module to import later."""
        self._name = f"cortex_engine.{name}"
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> object:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)
