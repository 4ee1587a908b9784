"""Search memory through the same recall the agent uses: the rendered result, its tokens, and what it showed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, get_current_worker

from ..data.text import count, humanize_kind, line, one_line, plain
from ..failures import report_worker_failure
from ..widgets.wrapped_options import WrappedOptionList

if TYPE_CHECKING:
    from cortex_engine.results import Surface


class SearchDialog(ModalScreen[str | None]):
    """`Engine.recall(topic, book=False)`: exactly what the agent would read, nothing booked or reinforced.

    Dismisses with the id of an item picked from the result (to show it in the browser), or None.
    """

    DEFAULT_CSS = """
    SearchDialog {
        align: center middle;
        & > #search-box {
            width: 110; max-width: 100%; height: 90%;
            border: thick $accent; background: $surface; padding: 0 1;
        }
        #search-result { height: 1fr; border: round $primary; padding: 0 1; }
        #search-items { height: auto; max-height: 8; border: round $primary; }
        #search-hint { color: $text-muted; height: 1; }
    }
    """
    BINDINGS = [Binding("escape", "close", "Close"), Binding("down", "focus_items", "Items", show=False)]
    """Escape closes the search; ↓ from the topic moves into the items the recall showed."""

    def __init__(self, topic: str = "") -> None:
        """Open with an optional topic already typed."""
        super().__init__()
        self.topic = topic
        self.surface: Surface | None = None

    def compose(self) -> ComposeResult:
        """The topic, the rendered recall, and the items it showed."""
        with Vertical(id="search-box") as box:
            box.border_title = "Recall — the same search the agent uses (nothing booked)"
            box.border_subtitle = "enter search · ↓ items · esc close"
            yield Input(self.topic, placeholder="topic, e.g. spool flush", id="search-input")
            yield Static("Type a topic and press enter.", id="search-hint")
            with VerticalScroll(id="search-result") as result:
                result.border_title = "Rendered recall"
                yield Static("", id="search-text")
            yield WrappedOptionList(id="search-items")

    def on_mount(self) -> None:
        """Focus the topic; search at once if one was given."""
        self.query_one("#search-input", Input).focus()
        if self.topic.strip():
            self.search(self.topic)

    @on(Input.Submitted, "#search-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.query_one("#search-hint", Static).update("searching…")
            self.search(event.value.strip())

    @work(thread=True, exclusive=True, group="search", exit_on_error=False, name="recall")
    def search(self, topic: str) -> None:
        """`Engine.recall(topic, book=False)` in a worker thread."""
        worker = get_current_worker()
        with self.app.target.open() as engine:  # type: ignore[attr-defined]
            surface = engine.recall(topic, book=False)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show, topic, surface)

    def _show(self, topic: str, surface: Surface) -> None:
        self.surface = surface
        result = self.query_one("#search-result", VerticalScroll)
        result.border_title = Content.assemble("Rendered recall · “", line(topic), "”")
        # Which retrievers ran; lexical only points at the command that turns meaning on (it says what it needs).
        found_by = "words + meaning" if "dense" in surface.retrievers else "words only (see cortex embed)"
        result.border_subtitle = Content(
            f"{surface.tokens}/{surface.budget} tokens · {surface.total_candidates} candidates · {found_by}"
        )
        self.query_one("#search-text", Static).update(plain(surface.text))
        self.query_one("#search-hint", Static).update(
            f"{count(len(surface.items), 'memory', 'memories')} shown to the agent · ↓ then enter opens one"
        )
        items = self.query_one("#search-items", OptionList)
        items.clear_options()
        for n, item in enumerate(surface.items):
            labels = f"  [{', '.join(one_line(label) for label in item.labels)}]" if item.labels else ""
            subject = f" [{one_line(item.subject)}]" if item.subject else ""
            items.add_option(Option(Content(f"{humanize_kind(item.kind)}{subject}{labels}"), id=f"hit-{n}"))
        items.border_title = Content(f"Items · {len(surface.items)}")

    @on(OptionList.OptionSelected, "#search-items")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.surface is not None and event.option.id:
            self.dismiss(self.surface.items[int(event.option.id.split("-", 1)[1])].id)

    def action_focus_items(self) -> None:
        """Move from the topic into the result items (the list keeps ↓ for itself once focused)."""
        items = self.query_one("#search-items", OptionList)
        if items.option_count:
            items.focus()
            if items.highlighted is None:
                items.highlighted = 0

    def action_close(self) -> None:
        """Close without opening anything."""
        self.dismiss(None)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Failures are notified, never silent."""
        report_worker_failure(self, event)
