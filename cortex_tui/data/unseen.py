"""What arrived live and the operator has not looked at yet (a contest, a stale reference): marked until seen."""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content

MARK = Content.styled("● new ", "bold $accent")
"""The marker an unseen entry's first line starts with."""


class Unseen:
    """Arrival keys listed after the first look that the operator has not highlighted yet.

    The first `update` is the baseline: what was there when the view opened is not news. Every later key is unseen
    until `see` is called for it (its entry highlighted in a focused list); a key no longer listed is forgotten, so
    a contest resolved and opened again arrives again.
    """

    def __init__(self) -> None:
        """Nothing known until the first update."""
        self._known: set[str] | None = None
        self.keys: set[str] = set()

    def update(self, listed: Iterable[str]) -> None:
        """What is listed now: keys not listed before are unseen."""
        current = set(listed)
        if self._known is not None:
            self.keys |= current - self._known
        self.keys &= current
        self._known = current

    def see(self, key: str | None) -> bool:
        """The operator highlighted this entry; True when it was unseen."""
        if key is None or key not in self.keys:
            return False
        self.keys.discard(key)
        return True

    def __contains__(self, key: object) -> bool:
        """Whether `key` arrived live and is still unseen."""
        return key in self.keys

    def __len__(self) -> int:
        """How many entries are unseen."""
        return len(self.keys)
