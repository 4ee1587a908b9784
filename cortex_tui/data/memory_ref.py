"""Which memory a key acts on: the highlighted row of whichever pane has focus."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryRef:
    """A memory item as a pane offers it to the screen's keys."""

    item_id: str
    """The memory item's id (what inspect, edit and delete take)."""
    note_id: str | None
    """The note behind it, if any (what resolve takes)."""
    title: str
    """A short human name for dialogs and notifications."""
    contest: bool = False
    """Whether it is a side of an open contest (resolve applies)."""
    editable: bool = True
    """Whether edit and delete apply from this pane."""
    labels: tuple[str, ...] = ()
    """The labels the pane shows on it (`moved: a → b`, `drifted: …`): which fixes apply."""

    def has_label(self, tag: str) -> bool:
        """Whether it carries a label of this kind (`moved`, `drifted`, …)."""
        return any(label.split(":", 1)[0].strip() == tag for label in self.labels)
