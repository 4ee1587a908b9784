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
    """The store cannot be opened safely (newer schema, corrupt version); nothing was written to it."""

    code = "store_refused"


class RuntimeUntrusted(CortexError):
    """The worktree's runtime folder may not be used: a link, someone else's, open to others, or tracked by git."""

    code = "untrusted_runtime"
