"""The audit trail of one memory: every correction, each edit shown as a word diff of the prior and the new text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.worker import Worker

from cortex_engine.base.clock import ts_min
from cortex_engine.base.errors import CortexError

from ..data.memory_ref import MemoryRef
from ..data.text import diff_content, line, one_line, plain
from ..failures import report_worker_failure

if TYPE_CHECKING:
    from cortex_engine.results import Inspection

OPERATIONS = {"edit": "edited", "rewrite-moved": "moved path rewritten", "reanchor": "re-anchored", "delete": "deleted"}
"""How each audited operation reads in the trail (an unknown one is shown by its stored name)."""


class AuditDialog(ModalScreen[None]):
    """Reads `Engine.inspect_memory()` and shows its corrections oldest first, removed words struck, added in bold."""

    DEFAULT_CSS = """
    AuditDialog {
        align: center middle;
        & > #audit-box {
            width: 100; max-width: 100%; height: auto; max-height: 100%;
            border: thick $accent; background: $surface; padding: 0 1;
        }
        #audit-trail { height: auto; max-height: 30; }
    }
    """
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("q", "close", "Close", show=False),
        Binding("a", "close", "Close", show=False),
    ]
    """Escape, q or a again closes the trail."""

    def __init__(self, memory: MemoryRef) -> None:
        """The trail of one memory item."""
        super().__init__()
        self.memory = memory

    def compose(self) -> ComposeResult:
        """The trail, loaded by a worker."""
        with Vertical(id="audit-box") as box:
            box.border_title = Content.assemble("Audit trail of “", line(self.memory.title), "”")
            box.border_subtitle = "esc close · removed struck through, added in bold"
            with VerticalScroll(id="audit-trail"):
                yield Static("reading the audit log…", id="audit-text")

    def on_mount(self) -> None:
        """Read the corrections."""
        self.load()

    @work(thread=True, exclusive=True, group="audit", exit_on_error=False, name="read audit trail")
    def load(self) -> None:
        """`Engine.inspect_memory` in a worker thread (a read: nothing is reinforced)."""
        try:
            with self.app.target.open() as engine:  # type: ignore[attr-defined]
                result = engine.inspect_memory(self.memory.item_id)
        except CortexError as exc:
            self.app.call_from_thread(self._show_lines, [Content(f"This memory is gone: {one_line(exc.message)}")])
            return
        self.app.call_from_thread(self._show, result)

    def _show(self, result: Inspection) -> None:
        from cortex_engine.results import text_diff

        lines: list[Content] = []
        if not result.corrections:
            lines.append(Content.from_markup("[dim]No correction has been recorded for this memory.[/]"))
        for corr in result.corrections:
            operation = str(corr["operation"])
            lines.append(
                Content.assemble((ts_min(str(corr["at"])), "dim"), "  ", (OPERATIONS.get(operation, operation), "bold"))
            )
            prior, new = corr["prior_text"], corr["new_text"]
            if prior is not None and new is not None:
                lines.append(diff_content(text_diff(str(prior), str(new))))
            elif prior is not None:
                lines += [Content.from_markup("[dim]the text was:[/]"), plain(prior)]
            lines.append(Content(""))
        self._show_lines(lines)

    def _show_lines(self, lines: list[Content]) -> None:
        self.query_one("#audit-text", Static).update(Content("\n").join(lines))

    def action_close(self) -> None:
        """Close the trail."""
        self.dismiss(None)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Unexpected failures are notified, never silent."""
        report_worker_failure(self, event)
