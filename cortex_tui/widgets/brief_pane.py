"""The session brief pane: exactly the text the agent is given at SessionStart, with its tokens against 150."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from ..data.text import plain

if TYPE_CHECKING:
    from cortex_engine.results import Surface


class BriefPane(VerticalScroll):
    """Shows `Engine.preview_session_brief()` verbatim (not booked), titled with its token count."""

    DEFAULT_CSS = """
    BriefPane {
        & > #brief-text { width: 1fr; }
        &.-over-budget { border: round $error; }
    }
    """
    BORDER_TITLE = "Session brief"

    def compose(self) -> ComposeResult:
        """The brief's text."""
        yield Static("loading…", id="brief-text", markup=False)

    def show_brief(self, brief: Surface) -> None:
        """Show the brief and its tokens/budget (red border if it ever exceeded the budget)."""
        text = self.query_one("#brief-text", Static)
        if brief.text:
            text.update(plain(brief.text))
        else:
            text.update(
                Content.from_markup(
                    "[dim]Nothing: a cold start. At the next session start the agent is told nothing from memory "
                    "(there is nothing on this branch worth a line yet).[/]"
                )
            )
        self.border_subtitle = Content(f"{brief.tokens}/{brief.budget} tokens · what SessionStart injects")
        self.set_class(brief.tokens > brief.budget, "-over-budget")
