"""The inbox: what arrived from outside (decision files by another author, imported notes), for the operator to
accept or reject. Nothing listed here is memory yet, and the agent is told only how many wait.

Every field is author text (file names, commit authors, the decision itself): shown literally through
`data.text`, never as markup. Accepting and rejecting go through the same engine calls as `cortex inbox`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker

from cortex_engine.base.errors import CortexError
from cortex_engine.results import defuse_labels

from ..data.text import clean, one_line, scope_label
from ..failures import report_worker_failure

if TYPE_CHECKING:
    from cortex_engine.results import Arrival

COLUMNS = (("id", 8), ("from", 6), ("file", 16), ("author", 16), ("would add", 60))
"""The table's columns and widths (the detail below says everything in full)."""


def said(text: object) -> str:
    """Author text on one line, control-free, with label look-alikes defused (it may pose as Cortex's own)."""
    return defuse_labels(one_line(text))


def line(text: object) -> Content:
    """Author text as literal content on one line, defused."""
    return Content(said(text))


def plain(text: object) -> Content:
    """Author text as literal content, line breaks kept, defused line by line."""
    return Content("\n".join(defuse_labels(clean(part)) for part in str(text or "").split("\n")).expandtabs(4))


class InboxScreen(Screen[None]):
    """Arrivals waiting for review: a table, the highlighted one in full below, keys to decide."""

    DEFAULT_CSS = """
    InboxScreen {
        & #inbox-intro { height: auto; padding: 0 1; color: $text-muted; }
        & #inbox-table { height: 1fr; min-height: 4; }
        & #inbox-detail-box { height: 1fr; border: round $accent; padding: 0 1; }
        & #inbox-status { height: auto; padding: 0 1; color: $success; }
    }
    """
    BINDINGS = [
        Binding("a", "accept", "Accept"),
        Binding("x", "reject", "Reject"),
        Binding("o", "open_file", "Open file"),
        Binding("g", "show_commit", "Commit"),
        Binding("escape", "close", "Back"),
        Binding("q", "close", "Back", show=False),
    ]
    """Accept or reject the highlighted arrival, open its file, show its commit, go back."""

    def __init__(self) -> None:
        """Nothing listed until the first read."""
        super().__init__()
        self.arrivals: list[Arrival] = []
        """What the table shows, in its order."""

    def compose(self) -> ComposeResult:
        """Intro, the table, the detail, the last verdict, the footer."""
        yield Static(
            "Arrivals from outside wait here for your review. None of them is memory until you accept it; "
            "the agent is told only how many wait.",
            id="inbox-intro",
        )
        table: DataTable[Any] = DataTable(id="inbox-table", cursor_type="row", zebra_stripes=True)
        for label, width in COLUMNS:
            table.add_column(label, width=width, key=label)
        yield table
        with VerticalScroll(id="inbox-detail-box") as box:
            box.border_title = "Arrival"
            yield Static("reading the inbox…", id="inbox-detail")
        yield Static("", id="inbox-status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Read the inbox."""
        self.load()

    @work(thread=True, exclusive=True, group="inbox", exit_on_error=False, name="read inbox")
    def load(self) -> None:
        """`Engine.inbox()` in a worker thread."""
        with self.app.target.open() as engine:  # type: ignore[attr-defined]
            found = engine.inbox()
        self.app.call_from_thread(self._show, found)

    def _show(self, found: list[Arrival]) -> None:
        self.arrivals = found
        table = self.query_one("#inbox-table", DataTable)
        table.clear()
        for arrival in found:
            where = said(arrival.path).rsplit("/", 1)[-1]
            subject = f"[{said(arrival.subject)}] " if arrival.subject else ""
            cells = (
                arrival.id[:8],
                arrival.channel,
                where,
                said(arrival.author or "—"),
                f"{arrival.kind}: {subject}{said(arrival.content)}",
            )
            table.add_row(*(Text(cell, no_wrap=True, overflow="ellipsis") for cell in cells), key=arrival.id)
        box = self.query_one("#inbox-detail-box")
        box.border_title = Content.assemble("Arrival · ", str(len(found)), " waiting") if found else "Arrival"
        if found:
            table.focus()
            self._detail(found[min(table.cursor_row, len(found) - 1)])
        else:
            self.query_one("#inbox-detail", Static).update("The inbox is empty: nothing waits for your review.")
        self.refresh_bindings()

    def _detail(self, arrival: Arrival) -> None:
        """The highlighted arrival in full: where it came from, then what it says (quoted, never a decision)."""
        rows: list[Content] = [
            Content.assemble(("from   ", "dim"), line(arrival.path)),
            Content.assemble(("commit ", "dim"), line(arrival.commit or "— (imported from a file)")),
            Content.assemble(("author ", "dim"), line(arrival.author or "—"), "  ", line(arrival.authored_at or "")),
            Content.assemble(("scope  ", "dim"), line(scope_label(arrival.scope_key))),
            Content(""),
            Content.assemble(
                ("would add ", "dim"),
                (arrival.kind, "bold"),
                *(((" on ", "dim"), line(arrival.subject)) if arrival.subject else ()),
            ),
            Content.assemble("“", plain(arrival.content), "”"),
        ]
        if arrival.alternatives:
            rows.append(Content.assemble(("rejected alternatives: ", "dim"), line("; ".join(arrival.alternatives))))
        self.query_one("#inbox-detail", Static).update(Content("\n").join(rows))

    def selected(self) -> Arrival | None:
        """The highlighted arrival."""
        table = self.query_one("#inbox-table", DataTable)
        if not self.arrivals or table.cursor_row < 0:
            return None
        return self.arrivals[min(table.cursor_row, len(self.arrivals) - 1)]

    @on(DataTable.RowHighlighted, "#inbox-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Follow the cursor."""
        found = self.selected()
        if found is not None:
            self._detail(found)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys that act on an arrival are dimmed when none is highlighted; Commit only for a decision file."""
        if action in ("accept", "reject", "open_file"):
            return True if self.selected() is not None else None
        if action == "show_commit":
            found = self.selected()
            return True if found is not None and found.commit else None
        return True

    # -- actions ----------------------------------------------------------------------------------------

    def action_accept(self) -> None:
        """Accept the highlighted arrival: it becomes a note under the usual rules."""
        found = self.selected()
        if found is not None:
            self.decide(found.id, True)

    def action_reject(self) -> None:
        """Reject the highlighted arrival: it never becomes a note."""
        found = self.selected()
        if found is not None:
            self.decide(found.id, False)

    @work(thread=True, exclusive=True, group="inbox-verdict", exit_on_error=False, name="decide arrival")
    def decide(self, arrival_id: str, accept: bool) -> None:
        """`Engine.accept_arrivals` / `reject_arrivals` for one arrival, then read the inbox again."""
        try:
            with self.app.target.open() as engine:  # type: ignore[attr-defined]
                done = (engine.accept_arrivals if accept else engine.reject_arrivals)([arrival_id])
                found = engine.inbox()
        except CortexError as exc:
            self.app.call_from_thread(
                self.notify, exc.message, title="Nothing changed", severity="warning", markup=False
            )
            return
        verdict = done[0]
        where = said(verdict.path).rsplit("/", 1)[-1]
        told = (
            f"Accepted {verdict.id[:8]} ({where}): it is memory now"
            if accept
            else f"Rejected {verdict.id[:8]} ({where}): it stays out of memory"
        )
        self.app.call_from_thread(self._decided, told, found)

    def _decided(self, told: str, found: list[Arrival]) -> None:
        self.query_one("#inbox-status", Static).update(Content(told))
        self._show(found)
        self.app.request_reload("inbox")  # type: ignore[attr-defined]

    def action_show_commit(self) -> None:
        """Show git's account of the commit the highlighted decision file came from."""
        found = self.selected()
        if found is not None and found.commit:
            self.commit(found.id)

    @work(thread=True, exclusive=True, group="inbox-commit", exit_on_error=False, name="show commit")
    def commit(self, arrival_id: str) -> None:
        """`Engine.arrival_commit` in a worker thread."""
        try:
            with self.app.target.open() as engine:  # type: ignore[attr-defined]
                text = engine.arrival_commit(arrival_id)
        except CortexError as exc:
            self.app.call_from_thread(self.notify, exc.message, title="No commit", severity="warning", markup=False)
            return
        self.app.call_from_thread(self.query_one("#inbox-detail", Static).update, plain(text))

    def action_open_file(self) -> None:
        """Open the file the highlighted arrival came from in $EDITOR."""
        found = self.selected()
        if found is not None:
            self.locate(found.id)

    @work(thread=True, exclusive=True, group="inbox-file", exit_on_error=False, name="locate arrival")
    def locate(self, arrival_id: str) -> None:
        """`Engine.arrival_file` in a worker thread."""
        try:
            with self.app.target.open() as engine:  # type: ignore[attr-defined]
                path = engine.arrival_file(arrival_id)
        except CortexError as exc:
            self.app.call_from_thread(
                self.notify, exc.message, title="Nothing to open", severity="warning", markup=False
            )
            return
        self.app.call_from_thread(self._open, path)

    def _open(self, path: str) -> None:
        """Hand the terminal to the editor (the app is suspended, then repainted)."""
        import subprocess

        from textual.app import SuspendNotSupported

        from ..data.editor import EditorUnavailable, editor_command

        try:
            call = editor_command(path, None)
        except EditorUnavailable as exc:
            self.notify(f"{exc} ({path})", title="No editor", severity="warning", markup=False)
            return
        try:
            with self.app.suspend():
                subprocess.call(call.argv, cwd=self.app.target.cwd)  # type: ignore[attr-defined]
        except SuspendNotSupported:
            self.notify(
                f"This terminal cannot be handed to an editor; open {path} yourself.",
                title="No editor",
                severity="warning",
                markup=False,
            )

    def action_close(self) -> None:
        """Back to the main screen."""
        self.app.pop_screen()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Unexpected failures are notified, never silent."""
        report_worker_failure(self, event)
