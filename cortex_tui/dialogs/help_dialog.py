"""Help: the keys, and what the labels mean (trust, freshness, economy)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from cortex_engine.base.labels import CONTESTED, SUPERSEDED, reference

KEYS = (
    ("1 2 3", "Overview · Memory · Activity"),
    ("c", "resolve the highlighted contest (keep one side, or resolve both; optional replacement)"),
    ("e", "edit the highlighted memory (audited; trailers cannot be spoofed)"),
    ("d", "delete the highlighted memory (the engine's preview first; nothing without confirming)"),
    ("v", "re-validate freshness: check every reference against the checkout now"),
    ("r", "refresh everything from the store (changes also appear live, within a second)"),
    ("/", "recall: search memory exactly as the agent would (any tab; ↓ into the items, enter opens one)"),
    ("s", "switch the Memory table between this branch and every scope"),
    ("f", "filter the Memory table by text (subject or text contains it; enter applies, esc back to the table)"),
    ("l", "show only contested, stale, drifted or superseded memory (each press: the next label, then all)"),
    ("o  O", "sort the Memory table by its next column · reverse (or click a column header)"),
    ("[ ]", "previous / next page of the Memory table"),
    ("home end", "the newest / the oldest memory (first or last page)"),
    ("y  Y", "copy the highlighted memory's id · its text (in the delete and edit dialogs, y confirms)"),
    ("o", "Freshness: open the file in $EDITOR, at the drifted span's line (the app waits until you quit it)"),
    ("m", f"Freshness: rewrite a moved path ({reference('moved: a → b')}) in the note to its new place (audited)"),
    ("a", "Memory: the highlighted memory's corrections, each edit as a word diff (in resolve: keep side A; b: B)"),
    ("enter", "on an Activity row: that session's notes, failed commands and token spend"),
    ("tab", "move between panes; arrows move within one"),
    ("ctrl+p", "command palette: every action by name"),
    ("?  q", "this help · quit"),
)
GLOSSARY = (
    (CONTESTED, "Trust: two active notes on one subject disagree. Both are marked on every surface until resolved."),
    (SUPERSEDED, "Trust: replaced by a newer note. It cools one tier and is never shown as live."),
    ("stale: missing", "Freshness: a file it refers to is gone from the checkout. Ranked lower, still reachable."),
    ("moved: a → b", "Freshness: the file was renamed; git's rename map says where it went."),
    ("drifted: f:x", "Freshness: the code the note names changed since it was written; `cortex reanchor ID` once "
                     "it still holds."),
    ("● new", "Arrived live: a contest opened or a reference went stale since this view opened. The Overview tab "
              "counts them; highlighting one in its pane marks it seen."),
    ("tokens/budget", "Economy: what an injection cost against its channel budget (150 session brief, 450 brief, "
                      "600 recall, 800 state). Saved counts only recorded evidence."),
)


class HelpDialog(ModalScreen[None]):
    """Keys and labels, one screen."""

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
    BINDINGS = [Binding("escape", "close", "Close"), Binding("question_mark", "close", "Close", show=False),
                Binding("q", "close", "Close", show=False)]
    """Any of escape, ? or q closes help."""

    def compose(self) -> ComposeResult:
        """Keys, then the glossary, each as a two-column grid (descriptions wrap under themselves)."""
        with VerticalScroll(id="help-box") as box:
            box.border_title = "Cortex — help"
            box.border_subtitle = "esc close"
            yield Static("Keys", classes="help-heading")
            with Grid(classes="help-grid"):
                for key, text in KEYS:
                    yield Static(key, classes="help-key", markup=False)
                    yield Static(text, markup=False)
            yield Static("What the labels mean", classes="help-heading")
            with Grid(classes="help-grid", id="glossary"):
                for label, text in GLOSSARY:
                    yield Static(label, classes="help-key", markup=False)
                    yield Static(text, markup=False)
            yield Static(
                "Everything here comes from the engine the agent's surfaces use; this view books nothing, "
                "reinforces nothing, and never creates a store by being opened.", id="help-footnote")

    def action_close(self) -> None:
        """Close help."""
        self.dismiss(None)
