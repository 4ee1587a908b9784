"""Messages shared across the app: store changes from the watcher, and results handed back by workers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from cortex_engine.engine import StoreInfo
    from cortex_engine.operator import HookInstall

    from .data.snapshot import Snapshot


@dataclass
class StoreChanged(Message, bubble=False):
    """Something under the store or the worktree's runtime folder changed (posted from the watcher threads)."""

    reason: str = "change"

    def can_replace(self, message: Message) -> bool:
        """A burst of changes is one reload: a newer StoreChanged replaces a queued one."""
        return isinstance(message, StoreChanged)


@dataclass
class SnapshotReady(Message, bubble=False):
    """A load worker read the store."""

    snapshot: Snapshot


@dataclass
class FreshnessReady(Message, bubble=False):
    """A freshness check finished (`Engine.validate_memory(persist=False)`)."""

    generation: int
    report: dict[str, Any]
    announce: bool = False


@dataclass
class StoreUnavailable(Message, bubble=False):
    """The store cannot be shown: it does not exist yet (`missing`) or it was refused (`refused`)."""

    state: str
    info: StoreInfo | None
    hooks: HookInstall | None
    message: str = ""
    code: str = ""


@dataclass
class SelectionChanged(Message):
    """A pane's highlighted memory changed (the screen refreshes which keys apply)."""
