"""Resolve a contest: both sides shown; keep one (the other is superseded), or resolve both; optional replacement."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static
from textual.worker import Worker, get_current_worker

from cortex_engine.base.errors import CortexError

from ..data.text import ago, line, one_line, short_id
from ..failures import report_worker_failure

if TYPE_CHECKING:
    from cortex_engine.results import Resolution

LETTERS = "ABCDEFGH"


def outcome(result: Resolution) -> str:
    """`Decision [spool flush policy] 1a2b3c4d marked superseded. Contest closed.` (one line per note changed)."""
    subject = f" [{one_line(result.subject)}]" if result.subject else ""
    text = f"{result.kind.capitalize()}{subject} {short_id(result.id)} marked {result.status}."
    if result.cleared_contest:
        text += " Contest closed."
    if result.replacement_id:
        text += f" Replaced by note {short_id(result.replacement_id)}."
    return text


class ResolveDialog(ModalScreen[str | None]):
    """Shows every side of one contest and closes it through `Engine.resolve`; dismisses with the outcome text."""

    DEFAULT_CSS = """
    ResolveDialog {
        align: center middle;
        & > #resolve-box {
            width: 96; max-width: 100%; height: auto; max-height: 100%;
            border: thick $error; background: $surface; padding: 0 1;
        }
        #resolve-sides { height: auto; max-height: 18; }
        .side { border: round $primary; height: auto; padding: 0 1; margin-bottom: 0; }
        #resolve-help { color: $text-muted; margin: 1 0 0 0; }
        #replacement { margin: 0 0 1 0; }
        #resolve-error { color: $error; height: auto; }
        #resolve-buttons { height: auto; align-horizontal: right; }
        #resolve-buttons > Button { margin-left: 1; }
    }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("pageup", "scroll_sides(-1)", "Scroll sides", show=False),
        Binding("pagedown", "scroll_sides(1)", "Scroll sides", show=False),
        *(Binding(letter.lower(), f"keep('{letter.lower()}')", f"Keep {letter}", show=False) for letter in LETTERS),
    ]
    """Escape leaves the contest open; a letter asks to keep that side and the same letter again confirms it, as
    delete asks first (a button keeps its side at once); letters are text while typing a replacement."""

    HINT = "a/b keep a side (asks first) · tab replacement · esc cancel"

    def __init__(self, contest: dict[str, Any], now: datetime) -> None:
        """Bind the dialog to one contest as `Engine.contests()` reported it."""
        super().__init__()
        self.contest = contest
        self.now = now
        self.sides: list[dict[str, Any]] = list(contest["sides"])
        self.armed: str | None = None
        """The letter whose side a first press asked to keep; the second press of it settles the contest."""

    def compose(self) -> ComposeResult:
        """Both sides, the replacement field, and one button per way out."""
        subject = one_line(self.contest["subject"]) or "(no subject)"
        with Vertical(id="resolve-box") as box:
            box.border_title = Content.assemble("Resolve the contest on “", line(subject), "”")
            box.border_subtitle = self.HINT
            # Not in the focus chain: one Tab from Cancel reaches the replacement field; pageup/pagedown scroll it.
            with VerticalScroll(id="resolve-sides", can_focus=False):
                for letter, side in zip(LETTERS, self.sides, strict=False):
                    body = Static(line(side["content"]), classes="side")
                    body.border_title = Content(f"{letter} · {side['kind']} · {ago(side['timestamp'], self.now)}")
                    body.border_subtitle = Content(
                        f"from session {short_id(side['session_id'])} · note {short_id(side['id'])}"
                    )
                    yield body
            yield Static(
                "Keep one side: the other is marked superseded (it cools, never vanishes). Resolve both: both are "
                "closed. A replacement is written as the new note on this subject, and every side is superseded by it.",
                id="resolve-help",
            )
            yield Input(placeholder="Replacement text (optional)", id="replacement")
            yield Static("", id="resolve-error")
            with Horizontal(id="resolve-buttons"):
                for letter, _side in zip(LETTERS, self.sides, strict=False):
                    yield Button(f"Keep {letter}", id=f"keep-{letter.lower()}", classes="keep", variant="primary")
                yield Button(
                    "Resolve both" if len(self.sides) == 2 else "Resolve all", id="resolve-all", variant="warning"
                )
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        """Focus Cancel first, so a stray Enter never closes a contest."""
        self.query_one("#cancel", Button).focus()

    @on(Input.Changed, "#replacement")
    def _replacement_changed(self, event: Input.Changed) -> None:
        """With a replacement only 'replace all' makes sense: the keep buttons are disabled."""
        has_text = bool(event.value.strip())
        if has_text and self.armed:
            self._arm(None)
        for button in self.query(".keep").results(Button):
            button.disabled = has_text
        self.query_one("#resolve-all", Button).label = (
            ("Replace both" if len(self.sides) == 2 else "Replace all")
            if has_text
            else ("Resolve both" if len(self.sides) == 2 else "Resolve all")
        )

    @on(Input.Submitted, "#replacement")
    def _replacement_submitted(self, event: Input.Submitted) -> None:
        """Enter in the replacement field: with text, go to the button that writes it (Enter there confirms);
        empty, say what the field is for. Never a silent key, never a contest closed by one stray Enter."""
        event.stop()
        if not event.value.strip():
            self._say("Type the note that replaces every side, or keep a side with its letter (a/b).")
            return
        button = self.query_one("#resolve-all", Button)
        button.focus()
        self._say(f"Enter again to {str(button.label).lower()} with this text; esc cancels.")

    def _say(self, text: str) -> None:
        self.query_one("#resolve-error", Static).update(Content(text))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Take back a side asked for; otherwise leave the contest open."""
        if self.armed:
            self._arm(None)
            return
        self.dismiss(None)

    @on(Button.Pressed, "#resolve-all")
    def _resolve_all(self) -> None:
        replacement = self.query_one("#replacement", Input).value.strip() or None
        self.apply(None, replacement)

    @on(Button.Pressed, ".keep")
    def _keep(self, event: Button.Pressed) -> None:
        """A button is pressed on purpose (focus starts on Cancel): it keeps its side at once."""
        letter = (event.button.id or "")[-1]
        self.apply(str(self.sides[LETTERS.lower().index(letter)]["id"]), None)

    def action_scroll_sides(self, direction: int) -> None:
        """Page the sides up or down (they are not in the focus chain)."""
        sides = self.query_one("#resolve-sides", VerticalScroll)
        (sides.scroll_page_down if direction > 0 else sides.scroll_page_up)(animate=False)

    def action_keep(self, letter: str) -> None:
        """Ask to keep the side with this letter, or, asked already, keep it (the others are superseded)."""
        found = self.query(f"#keep-{letter}").results(Button)
        button = next(iter(found), None)
        if button is None or button.disabled:
            return
        if self.armed != letter:
            self._arm(letter)
            return
        self.apply(str(self.sides[LETTERS.lower().index(letter)]["id"]), None)

    def _arm(self, letter: str | None) -> None:
        """Show which side the next press keeps; `None` disarms (the replacement was typed, or Escape)."""
        self.armed = letter
        for other, _side in zip(LETTERS, self.sides, strict=False):
            button = self.query_one(f"#keep-{other.lower()}", Button)
            button.label = f"Confirm keep {other}" if other.lower() == letter else f"Keep {other}"
        box = self.query_one("#resolve-box", Vertical)
        if letter is None:
            box.border_subtitle = self.HINT
            return
        upper = letter.upper()
        others = "/".join(other for other, _side in zip(LETTERS, self.sides, strict=False) if other != upper)
        box.border_subtitle = Content(f"press {letter} again to keep {upper} ({others} superseded) · esc cancel")

    @work(thread=True, exclusive=True, group="resolve", exit_on_error=False, name="resolve contest")
    def apply(self, keep: str | None, replacement: str | None) -> None:
        """Close the contest through the engine (in a worker thread); errors stay in the dialog."""
        from cortex_engine.operator import resolve_contest

        worker = get_current_worker()
        try:
            with self.app.target.open() as engine:  # type: ignore[attr-defined]
                results = resolve_contest(
                    engine, [str(s["id"]) for s in self.sides], keep=keep, replacement=replacement
                )
        except CortexError as exc:
            self.app.call_from_thread(self._refused, exc.message)
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self.dismiss, "\n".join(outcome(r) for r in results))

    def _refused(self, message: str) -> None:
        self.query_one("#resolve-error", Static).update(Content(f"Not resolved: {' '.join(message.split())}"))
        self.app.notify(" ".join(message.split()), title="Contest not resolved", severity="error", markup=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Unexpected failures are notified, never silent."""
        report_worker_failure(self, event)
