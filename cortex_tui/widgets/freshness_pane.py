"""The freshness pane: memories whose references are missing, moved or drifted in the checkout, with label and path."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option, OptionDoesNotExist

from ..data.memory_ref import MemoryRef
from ..data.text import count, first_line, humanize_kind, one_line
from ..data.unseen import MARK, Unseen
from ..events import SelectionChanged
from .wrapped_options import WrappedOptionList

SHOWN = 200
"""At most this many flagged memories are listed (the title carries the full count)."""


class FreshnessPane(Vertical):
    """One option per flagged memory: its label (`stale: missing …`, `moved: a → b`, `drifted: …`) and what it says.

    A memory flagged (or flagged differently) after the first check is marked new until highlighted in the focused list.
    """

    DEFAULT_CSS = """
    FreshnessPane {
        & > OptionList, & > OptionList:focus { height: 1fr; border: none; padding: 0; background: transparent; }
        &.-stale { border: round $warning; }
    }
    """
    BORDER_TITLE = "Freshness"

    def __init__(self, **kwargs: Any) -> None:
        """An empty pane until the first check."""
        super().__init__(**kwargs)
        self.flagged: list[dict[str, Any]] = []
        self._by_key: dict[str, dict[str, Any]] = {}
        self.unseen = Unseen()
        """Flagged memories (by id and label) that appeared after the first check and were not highlighted yet."""
        self._texts: dict[str, str] = {}
        self._title = ""

    def compose(self) -> ComposeResult:
        """The list of flagged memories."""
        yield WrappedOptionList(Option("checking references…", disabled=True), id="freshness-list")

    def show_report(self, report: dict[str, Any], texts: dict[str, str]) -> None:
        """Show `validate_memory` items that carry a label, stale first."""
        flagged = [item for item in report["items"] if item.get("label")]
        flagged.sort(key=lambda item: (item["validity"] != "stale", 0))
        self.flagged = flagged[:SHOWN]
        self._by_key = {f"fresh:{item['id']}": item for item in self.flagged}
        self._texts = texts
        self.unseen.update(self._arrival(item) for item in flagged)
        options = self.query_one("#freshness-list", OptionList)
        keep_id = options.highlighted_option.id if options.highlighted_option is not None else None
        keep_at = options.highlighted
        options.clear_options()
        if not flagged:
            options.add_option(
                Option(
                    Content(
                        f"Every reference is current: {count(report['checked'], 'memory', 'memories')} "
                        "with file references checked "
                        "against the checkout."
                    ).stylize("dim"),
                    disabled=True,
                )
            )
        for item in self.flagged:
            options.add_option(Option(self._prompt(item), id=f"fresh:{item['id']}"))
        if self.flagged:  # the same memory stays highlighted while it is listed; else the same place
            try:
                options.highlighted = options.get_option_index(keep_id) if keep_id else 0
            except OptionDoesNotExist:
                options.highlighted = min(keep_at or 0, len(self.flagged) - 1)
        stale = sum(1 for item in flagged if "stale:" in item["label"])
        drifted = sum(1 for item in flagged if "stale:" not in item["label"] and "drifted:" in item["label"])
        moved = len(flagged) - stale - drifted
        # Title and footer both count memories (one memory may name several files; per-file counts are
        # `cortex validate-memory`'s), each under its worst label: stale, then drifted, then moved. The footer
        # names the way on: Enter shows the memory, whatever its files' state.
        self._title = f"Freshness · memories: {stale} stale · {moved} moved" + (
            f" · {drifted} drifted" if drifted else ""
        )
        self._retitle()
        self.border_subtitle = Content(
            f"of {count(report['checked'], 'memory', 'memories')} checked" + (" · ⏎ show memory" if flagged else "")
        )
        self.set_class(bool(flagged), "-stale")
        self._see_highlighted()

    def _prompt(self, item: dict[str, Any]) -> Content:
        """The label (marked new while unseen), then the kind, subject and first line of the memory."""
        style = "$text-error" if "stale:" in item["label"] else "$text-warning"
        kind = humanize_kind(str(item["kind"]))
        subject = f"[{one_line(item['subject'])}] " if item.get("subject") else ""
        body = first_line(str(item["kind"]), self._texts.get(item["id"], ""))
        return Content.assemble(
            Content.assemble(
                MARK if self._arrival(item) in self.unseen else "",
                (f"[{one_line(item['label'])}]", f"bold {style}"),
                "\n",
            ),
            Content.from_markup("  [dim]$kind[/] $subject$body", kind=kind, subject=subject, body=body),
        )

    @staticmethod
    def _arrival(item: dict[str, Any]) -> str:
        """What makes a flag news: the memory and its label (a further missing file flags it again)."""
        return f"{item['id']}|{item['label']}"

    def _retitle(self) -> None:
        self.border_title = Content(self._title + (f" · {len(self.unseen)} new" if self.unseen else ""))

    def _see_highlighted(self) -> None:
        """The highlighted memory of a focused list has been seen: drop its marker."""
        options = self.query_one("#freshness-list", OptionList)
        option = options.highlighted_option
        item = self._by_key.get(option.id or "") if option is not None and self.screen.focused is options else None
        if item is not None and self.unseen.see(self._arrival(item)):
            options.replace_option_prompt(f"fresh:{item['id']}", self._prompt(item))
            self._retitle()

    def on_descendant_focus(self) -> None:
        """Focus came to the list: what it highlights is seen."""
        self._see_highlighted()
        self.post_message(SelectionChanged())

    def selected_item(self) -> dict[str, Any] | None:
        """The highlighted item as `validate_memory` reported it (id, label, references, anchors)."""
        option = self.query_one("#freshness-list", OptionList).highlighted_option
        return self._by_key.get(option.id or "") if option is not None else None

    def shown_text(self, item_id: str) -> str | None:
        """The item's text as this pane read it (a fix refuses if the memory changed since)."""
        return self._texts.get(item_id)

    def selected_memory(self) -> MemoryRef | None:
        """The highlighted flagged memory."""
        item = self.selected_item()
        if item is None:
            return None
        title = one_line(item.get("subject") or humanize_kind(str(item["kind"])))
        note_id = str(item["id"]).split(":", 1)[1] if str(item["id"]).startswith("notes:") else None
        label = str(item.get("label") or "")
        return MemoryRef(str(item["id"]), note_id, title, labels=tuple(label.split("; ")) if label else ())

    class Picked(Message):
        """Enter on a flagged memory: the screen shows it in the Memory tab (a stale one has no file to open)."""

        def __init__(self, item_id: str) -> None:
            """The memory item picked."""
            super().__init__()
            self.item_id = item_id

    @on(OptionList.OptionSelected, "#freshness-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        """Enter: go to the memory."""
        event.stop()
        item = self._by_key.get(event.option.id or "")
        if item is not None:
            self.post_message(self.Picked(str(item["id"])))

    @on(OptionList.OptionHighlighted, "#freshness-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Mark it seen; tell the screen which keys now apply."""
        event.stop()
        self._see_highlighted()
        self.post_message(SelectionChanged())
