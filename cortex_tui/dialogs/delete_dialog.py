"""Delete a memory: the engine's preview in a confirmation dialog; nothing is deleted without confirming."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static
from textual.worker import Worker, get_current_worker

from cortex_engine.base.errors import CortexError

from ..data.memory_ref import MemoryRef
from ..data.text import body, humanize_kind, line, one_line, plain, scope_label
from ..failures import report_worker_failure

if TYPE_CHECKING:
    from cortex_engine.results import Deletion

SOURCES = {
    "notes": "the note",
    "command_runs": "the command run",
    "episodes": "the episode",
    "branch_snapshots": "the branch snapshot",
}
"""What a memory was made from, in words (never the table's name)."""


class DeleteDialog(ModalScreen[str | None]):
    """Shows `Engine.delete_memory(yes=False)`; Delete runs it with `yes=True`. Dismisses with the outcome, or None."""

    DEFAULT_CSS = """
    DeleteDialog {
        align: center middle;
        & > #delete-box {
            width: 90; max-width: 100%; height: auto; max-height: 100%;
            border: thick $error; background: $surface; padding: 0 1;
        }
        #delete-preview { height: auto; max-height: 16; }
        #delete-error { color: $error; height: auto; }
        #delete-buttons { height: auto; align-horizontal: right; margin-top: 1; }
        #delete-buttons > Button { margin-left: 1; }
    }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("y", "confirm", "Delete", show=False)]
    """Escape deletes nothing; y confirms once the preview is shown (like pressing Delete)."""

    def __init__(self, memory: MemoryRef) -> None:
        """Preview deleting one memory item."""
        super().__init__()
        self.memory = memory

    def compose(self) -> ComposeResult:
        """The preview, then Delete / Cancel (Cancel focused)."""
        with Vertical(id="delete-box") as box:
            box.border_title = Content.assemble("Delete “", line(self.memory.title), "”?")
            box.border_subtitle = "nothing is deleted until you press Delete (y) · esc cancel"
            with VerticalScroll(id="delete-preview"):
                yield Static("loading the preview…", id="delete-text")
            yield Static("", id="delete-error")
            with Horizontal(id="delete-buttons"):
                yield Button("Delete", id="confirm", variant="error", disabled=True)
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        """Ask the engine what a delete would remove; Cancel has focus."""
        self.query_one("#cancel", Button).focus()
        self.preview()

    @work(thread=True, exclusive=True, group="delete", exit_on_error=False, name="delete preview")
    def preview(self) -> None:
        """`Engine.delete_memory(yes=False)` in a worker thread (deletes nothing); a memory gone since is said so."""
        try:
            with self.app.target.open() as engine:  # type: ignore[attr-defined]
                result = engine.delete_memory(self.memory.item_id, yes=False)
        except CortexError as exc:
            self.app.call_from_thread(self._gone, exc.message)
            return
        self.app.call_from_thread(self._show_preview, result)

    def _gone(self, message: str) -> None:
        """The highlighted memory no longer exists (deleted elsewhere): nothing to delete."""
        self.query_one("#delete-text", Static).update(
            Content(f"This memory is gone (changed since it was shown): {one_line(message)}")
        )
        self._refused(message)

    def _show_preview(self, result: Deletion) -> None:
        lines = [
            Content.from_markup("[b]This deletes:[/]"),
            Content(f"  kind        {humanize_kind(result.kind)} ({result.kind})"),
        ]
        if result.subject:
            lines.append(Content(f"  subject     {one_line(result.subject)}"))
        lines.append(Content(f"  scope       {scope_label(result.scope_key)}"))
        lines.append(Content(f"  references  {result.references} removed with it"))
        if result.source:
            made_from = SOURCES.get(result.source.split("/", 1)[0].split(":", 1)[0], "the record it was made from")
            lines.append(Content(f"  made from   {made_from} (deleted too)"))
        if result.contested:
            lines.append(
                Content.from_markup(
                    "  [b $warning]contest     deleting this ends the contest on “$subject”[/]",
                    subject=one_line(result.subject),
                )
            )
        lines += [
            Content(""),
            Content.from_markup("[b]text[/]"),
            plain(body(result.kind, result.text)),
            Content(""),
            Content.from_markup("[dim]The prior text is kept in the audit log: u (cortex undo) brings it back.[/]"),
        ]
        self.query_one("#delete-text", Static).update(Content("\n").join(lines))
        self.query_one("#confirm", Button).disabled = False

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Delete nothing."""
        self.dismiss(None)

    @on(Button.Pressed, "#confirm")
    def action_confirm(self) -> None:
        """Delete, if the preview was shown (the button is enabled only then)."""
        button = self.query_one("#confirm", Button)
        if button.disabled:
            return
        button.disabled = True
        self.delete()

    @work(thread=True, exclusive=True, group="delete", exit_on_error=False, name="delete")
    def delete(self) -> None:
        """`Engine.delete_memory(yes=True)` in a worker thread (audited)."""
        from cortex_engine.results import messages

        worker = get_current_worker()
        try:
            with self.app.target.open() as engine:  # type: ignore[attr-defined]
                result = engine.delete_memory(self.memory.item_id, yes=True)
        except CortexError as exc:
            self.app.call_from_thread(self._refused, exc.message)
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self.dismiss, messages.deletion(result))

    def _refused(self, message: str) -> None:
        line = " ".join(message.split())
        self.query_one("#delete-error", Static).update(Content(f"Not deleted: {line}"))
        self.app.notify(line, title="Delete failed", severity="error", markup=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Unexpected failures are notified, never silent."""
        report_worker_failure(self, event)
