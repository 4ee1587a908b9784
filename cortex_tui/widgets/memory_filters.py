"""The memory table's second filter row: a label, free text, and the keys that sort the table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, Select, Static

from cortex_engine.results import LABEL_FILTERS

LABEL_OPTIONS = [(label, label) for label in LABEL_FILTERS]
SORT_COLUMNS = {"Age": "created", "Kind": "kind", "Tier": "state", "Subject": "subject", "Scope": "scope"}
"""Which table column orders the listing by which `inspection.SORTS` key (Labels and First line are not sortable)."""
SORT_WORDS = {
    "created": ("newest first", "oldest first"),
    "kind": ("kind A→Z", "kind Z→A"),
    "state": ("tier pinned→archived", "tier archived→pinned"),
    "subject": ("subject A→Z", "subject Z→A"),
    "scope": ("scope A→Z", "scope Z→A"),
}
"""How each sort reads, in its natural direction and reversed."""
TYPING_PAUSE = 0.3
"""Seconds of no typing before the text filter applies (enter and escape apply at once)."""


def describe_sort(sort: str, reverse: bool) -> str:
    """`newest first`, `kind Z→A`, … for the page line."""
    return SORT_WORDS[sort][1 if reverse else 0]


def next_sort(sort: str, columns: list[str]) -> str:
    """The sort `o` moves to: the next sortable column of the table, in the table's order, then back to Age."""
    keys = [SORT_COLUMNS[c] for c in columns if c in SORT_COLUMNS]
    return keys[(keys.index(sort) + 1) % len(keys)] if sort in keys else "created"


class MemoryFilters(Horizontal):
    """A label filter and a free-text filter (a literal substring of subject or text); posts `Changed`."""

    DEFAULT_CSS = """
    MemoryFilters {
        height: 1;
        & > #label-filter { width: 20; margin-right: 1; }
        & > #text-filter { width: 1fr; min-width: 16; margin-right: 1; }
        & > #filter-keys { width: auto; color: $text-muted; }
    }
    """

    @dataclass
    class Changed(Message):
        """The label or the text filter changed."""

        label: str | None
        text: str

    def __init__(self, **kwargs: Any) -> None:
        """No filter until the operator picks one."""
        super().__init__(**kwargs)
        self._typing: Timer | None = None

    def compose(self) -> ComposeResult:
        """Label, text, and the keys (the footer has no room for them at 80 columns)."""
        yield Select(LABEL_OPTIONS, prompt="All labels", compact=True, type_to_search=False, id="label-filter")
        yield Input(placeholder="f: filter by text", compact=True, id="text-filter")
        yield Static(Content("l label · o O sort"), id="filter-keys")

    @property
    def label(self) -> str | None:
        """The label asked for (None: every item)."""
        value = self.query_one("#label-filter", Select).value
        return None if value is Select.NULL else str(value)

    @property
    def text(self) -> str:
        """The text asked for ('' : every item)."""
        return self.query_one("#text-filter", Input).value.strip()

    def cycle_label(self) -> None:
        """Every item → contested → stale → moved → drifted → superseded → every item."""
        labels = [None, *LABEL_FILTERS]
        label = labels[(labels.index(self.label) + 1) % len(labels)]
        select = self.query_one("#label-filter", Select)
        if label is None:
            select.clear()
        else:
            select.value = label

    def clear(self) -> None:
        """No label, no text (without announcing it: the caller reloads)."""
        with self.prevent(Select.Changed, Input.Changed):
            self.query_one("#label-filter", Select).clear()
            self.query_one("#text-filter", Input).value = ""

    def _announce(self) -> None:
        if self._typing is not None:
            self._typing.stop()
            self._typing = None
        self.post_message(self.Changed(self.label, self.text))

    @on(Select.Changed, "#label-filter")
    def _label_changed(self, event: Select.Changed) -> None:
        event.stop()
        self._announce()

    @on(Input.Changed, "#text-filter")
    def _text_changed(self, event: Input.Changed) -> None:
        """Apply once typing pauses (each keystroke would list the store again)."""
        event.stop()
        if self._typing is not None:
            self._typing.stop()
        self._typing = self.set_timer(TYPING_PAUSE, self._announce)

    @on(Input.Submitted, "#text-filter")
    def _text_submitted(self, event: Input.Submitted) -> None:
        """Enter: apply now and go back to the table."""
        event.stop()
        self._announce()
        self.screen.query_one("#memory-table").focus()

    def key_escape(self) -> None:
        """Escape in the text filter: apply what is typed and go back to the table."""
        self._announce()
        self.screen.query_one("#memory-table").focus()
