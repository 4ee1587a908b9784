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
    """Something the app shows changed elsewhere (posted from the watcher threads).

    `checkout` means only the checkout moved (index, a commit): freshness is re-checked, nothing else is read.
    Any other reason reloads the snapshot (and freshness after it).
    """

    reason: str = "change"

    @property
    def checkout_only(self) -> bool:
        """Whether only freshness depends on this change."""
        return self.reason == "checkout"

    def can_replace(self, message: Message) -> bool:
        """A burst is one reload: a queued change is dropped for a newer one that reloads at least as much."""
        return isinstance(message, StoreChanged) and (self.checkout_only or not message.checkout_only)


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
    """The store cannot be shown: it does not exist yet (`missing`), it was refused (`refused`), or the directory
    the app was opened in was deleted (`deleted`)."""

    state: str
    info: StoreInfo | None
    hooks: HookInstall | None
    message: str = ""
    code: str = ""


@dataclass
class SelectionChanged(Message):
    """A pane's highlighted memory changed (the screen refreshes which keys apply)."""
