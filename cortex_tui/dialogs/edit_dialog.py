"""Edit a memory's text in a text editor; saved through the engine's audited edit (a spoofed trailer is refused)."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea
from textual.worker import Worker, get_current_worker

from cortex_engine.base.errors import CortexError

from ..data.memory_ref import MemoryRef
from ..data.text import clean, line, one_line
from ..failures import report_worker_failure


class EditDialog(ModalScreen[str | None]):
    """Loads the editable text, saves with `Engine.edit_memory()`; dismisses with the outcome text, or None."""

    DEFAULT_CSS = """
    EditDialog {
        align: center middle;
        & > #edit-box {
            width: 96; max-width: 100%; height: auto; max-height: 100%;
            border: thick $primary; background: $surface; padding: 0 1;
        }
        #edit-help { color: $text-muted; }
        #edit-text { height: 10; margin: 1 0 0 0; }
        #edit-error { color: $error; height: auto; margin: 1 0 0 0; }
        #edit-error.-empty { display: none; }
        #edit-buttons { height: auto; align-horizontal: right; margin-top: 1; }
        #edit-buttons > Button { margin-left: 1; }
    }
    """
    BINDINGS = [
        Binding("ctrl+s", "save", "Save"),
        Binding("escape", "cancel", "Cancel"),
        Binding("y", "save", "Save", show=False),
    ]
    """Save or leave without changing anything; `y` saves too once focus is off the text (in it, y is a letter)."""

    def __init__(self, memory: MemoryRef) -> None:
        """Edit one memory item."""
        super().__init__()
        self.memory = memory

    def compose(self) -> ComposeResult:
        """Explanation, the editor, the refusal line and the buttons."""
        with Vertical(id="edit-box") as box:
            box.border_title = Content.assemble("Edit “", line(self.memory.title), "”")
            box.border_subtitle = "ctrl+s save (y from the buttons) · esc cancel"
            yield Static(
                "The corrected text replaces the memory's text; the prior text is kept in the audit log and shown "
                "under corrections. Only the words change: its subject, status and contest stay as they are.",
                id="edit-help",
            )
            yield TextArea("", id="edit-text", soft_wrap=True, show_line_numbers=False, disabled=True)
            yield Static("", id="edit-error", classes="-empty")
            with Horizontal(id="edit-buttons"):
                yield Button("Save", id="save", variant="primary", disabled=True)
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        """Load the current text."""
        self.load_text()

    @work(thread=True, exclusive=True, group="edit", exit_on_error=False, name="load text to edit")
    def load_text(self) -> None:
        """Read the editable text (a note's content, else the item's text) in a worker thread."""
        from cortex_engine.operator import editable_text

        try:
            with self.app.target.open() as engine:  # type: ignore[attr-defined]
                text = editable_text(engine, self.memory.item_id)
        except CortexError as exc:  # deleted since it was highlighted: say so, offer nothing to save
            self.app.call_from_thread(self._refused, f"this memory is gone: {exc.message}", exc.code)
            return
        self.app.call_from_thread(self._loaded, text)

    def _loaded(self, text: str) -> None:
        area = self.query_one("#edit-text", TextArea)
        area.load_text(clean(text))  # no raw escape reaches the terminal (a stored command may hold one)
        area.disabled = False
        self.query_one("#save", Button).disabled = False
        area.focus()
        area.move_cursor(area.document.end)

    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        """Save through the audited edit."""
        if not self.query_one("#save", Button).disabled:
            self.save(self.query_one("#edit-text", TextArea).text)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Leave without saving."""
        self.dismiss(None)

    @work(thread=True, exclusive=True, group="edit", exit_on_error=False, name="save edit")
    def save(self, text: str) -> None:
        """`Engine.edit_memory()` in a worker thread; a refusal (spoofed trailer, empty text) stays in the dialog."""
        from cortex_engine.results import messages

        worker = get_current_worker()
        try:
            with self.app.target.open() as engine:  # type: ignore[attr-defined]
                result = engine.edit_memory(self.memory.item_id, text)
        except CortexError as exc:
            self.app.call_from_thread(self._refused, exc.message, exc.code)
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self.dismiss, messages.edited(result))

    def _refused(self, message: str, code: str) -> None:
        """Show why nothing was saved, in the dialog and as a notification."""
        line = " ".join(message.split())
        error = self.query_one("#edit-error", Static)
        error.update(Content.from_markup("[b]Not saved ($code):[/] $line", code=code, line=one_line(line)))
        error.set_class(False, "-empty")
        self.app.notify(line, title=f"Edit refused: {code}", severity="error", markup=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Unexpected failures are notified, never silent."""
        report_worker_failure(self, event)
