"""Help: the keys (from the bindings, as the palette reads them), and what the labels mean (trust, freshness,
economy)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from cortex_engine.base.labels import CONTESTED, SUPERSEDED

GLOSSARY = (
    (CONTESTED, "Trust: two active notes on one subject disagree. Both are marked on every surface until resolved."),
    (SUPERSEDED, "Trust: replaced by a newer note. It cools one tier and is never shown as live."),
    ("stale: missing", "Freshness: a file it refers to is gone from the checkout. Ranked lower, still reachable."),
    ("moved: a → b", "Freshness: the file was renamed; git's rename map says where it went."),
    (
        "drifted: f:x",
        "Freshness: the code the note names changed since it was written; `cortex reanchor ID` once it still holds.",
    ),
    (
        "● new",
        "Arrived live: a contest opened or a reference went stale since this view opened. The Overview tab "
        "counts them; highlighting one in its pane marks it seen.",
    ),
    (
        "tokens/budget",
        "Economy: what an injection cost against its channel budget (150 session brief, 450 brief, "
        "600 recall, 800 state). Saved counts only recorded evidence.",
    ),
)


class HelpDialog(ModalScreen[None]):
    """Keys and labels, one screen. The keys come from the bindings of the screen underneath (`keys.help_rows`)."""

    DEFAULT_CSS = """
    HelpDialog {
        align: center middle;
        & > #help-box {
            width: 100; max-width: 100%; height: auto; max-height: 100%;
            border: thick $accent; background: $surface; padding: 0 1;
        }
        .help-grid { grid-size: 2; grid-columns: 10 1fr; grid-rows: auto; height: auto; }
        #glossary { grid-columns: 16 1fr; }
        .help-key { color: $accent; text-style: bold; }
        .help-heading { text-style: bold; margin-top: 1; }
        #help-footnote { color: $text-muted; margin-top: 1; }
    }
    """
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]
    """Any of escape, ? or q closes help."""

    def __init__(self, keys: Sequence[tuple[str, str]]) -> None:
        """Args:
        keys: (key, what it does) rows, read from the live screen's bindings.
        """
        super().__init__()
        self.keys = tuple(keys)

    def compose(self) -> ComposeResult:
        """Keys, then the glossary, each as a two-column grid (descriptions wrap under themselves)."""
        with VerticalScroll(id="help-box") as box:
            box.border_title = "Cortex — help"
            box.border_subtitle = "esc close"
            yield Static("Keys", classes="help-heading")
            with Grid(classes="help-grid"):
                for key, text in self.keys:
                    yield Static(key, classes="help-key", markup=False)
                    yield Static(text, markup=False)
            yield Static("What the labels mean", classes="help-heading")
            with Grid(classes="help-grid", id="glossary"):
                for label, text in GLOSSARY:
                    yield Static(label, classes="help-key", markup=False)
                    yield Static(text, markup=False)
            yield Static(
                "Everything here comes from the engine the agent's surfaces use; this view books nothing, "
                "reinforces nothing, and never creates a store by being opened.",
                id="help-footnote",
            )

    def action_close(self) -> None:
        """Close help."""
        self.dismiss(None)
