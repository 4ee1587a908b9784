"""The store the app looks at: a working directory, the injected clock, and where homes are."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cortex_engine.base.clock import Clock, clock_from_env

if TYPE_CHECKING:
    from cortex_engine.engine import Engine, StoreInfo
    from cortex_engine.operator import HookInstall


@dataclass(frozen=True)
class StoreTarget:
    """One working directory's store, opened fresh by each worker (SQLite connections never cross threads)."""

    cwd: str
    """The directory the app was started in (its store and scope follow from it)."""
    clock: Clock = field(default_factory=clock_from_env)
    """The engine clock (CORTEX_NOW pins it)."""
    home: Path | None = None
    """CORTEX_HOME override; None means the environment's."""
    user_home: Path | None = None
    """Where `~/.claude` is looked for; None means the user's home."""

    def describe(self) -> StoreInfo:
        """Where the store is and whether it exists, without opening or creating it."""
        from cortex_engine.engine import describe_store

        return describe_store(self.cwd, self.home)

    def open(self) -> Engine:
        """Open an engine for this thread, on a store that exists: the viewer never creates one.

        Raises:
            StoreRefused: the store was written by a newer version or is unreadable.
            StoreUnavailable: there is no store for the folder (any more): its repository was deleted or moved
                under the app, and the folder would now name a new store keyed by its path.
        """
        from cortex_engine.engine import open_engine

        return open_engine(self.cwd, home=self.home, clock=self.clock, create=False)

    def hooks(self) -> HookInstall:
        """Whether Claude Code captures sessions here: a settings file or the enabled plugin wires the capture hook."""
        from cortex_engine.ops.presence import hooks_installed

        return hooks_installed(self.cwd, self.user_home)

    def shorten(self, text: str | None) -> str:
        """A path (or any text holding paths, such as a scope key) with the home directory written as `~`.

        Scope keys carry lowercased paths, so the lowercased home is replaced too.
        """
        if not text:
            return ""
        home = str(Path.home()).rstrip(os.sep)
        if len(home) <= 1:
            return text
        return text.replace(home, "~").replace(home.lower(), "~")
