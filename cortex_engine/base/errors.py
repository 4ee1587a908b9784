"""The engine's error hierarchy: every expected failure is a CortexError with a one-line message."""

from __future__ import annotations


class CortexError(Exception):
    """An expected failure, shown to the user as one line; `code` is the machine-readable name."""

    code = "error"

    def __init__(self, message: str, *, code: str | None = None, **details: object) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.details = details

    @property
    def message(self) -> str:
        """The one-line human message."""
        return str(self)


class InvalidInput(CortexError):
    """The caller passed something the engine cannot accept (nothing was written)."""

    code = "invalid_input"


class NotFound(CortexError):
    """An id or subject that names nothing in the store."""

    code = "not_found"


class Refused(CortexError):
    """A request that is well-formed but refused by a rule (e.g. resolving a contested subject)."""

    code = "refused"


class StoreRefused(CortexError):
    """The store cannot be used safely (newer schema, corrupt version, a failing file); the failed change was
    not written."""

    code = "store_refused"


class StoreBusy(StoreRefused):
    """Another process held the store's lock past the busy timeout; retrying later works."""

    code = "store_busy"


class StoreFull(StoreRefused):
    """The disk (or the store's size limit) is full; the change was rolled back."""

    code = "store_full"


class StoreReadOnly(StoreRefused):
    """The store file or its folder cannot be written; the change was not saved."""

    code = "store_read_only"


class StoreDamaged(StoreRefused):
    """The store file is damaged or is not a Cortex store at all; Cortex leaves it as it is."""

    code = "unreadable_store"


class StoreUnavailable(StoreRefused):
    """SQLite cannot open, read or write the store file for another reason (permissions, I/O error)."""

    code = "store_unavailable"


class RuntimeUntrusted(CortexError):
    """The worktree's runtime folder may not be used: a link, someone else's, open to others, or tracked by git."""

    code = "untrusted_runtime"


class SemanticUnavailable(CortexError):
    """The dense retriever cannot run: the semantic extra is not installed or turned off, or its model file fails
    the pinned hash. Recall stays lexical; the message says how to turn it on."""

    code = "semantic_unavailable"
