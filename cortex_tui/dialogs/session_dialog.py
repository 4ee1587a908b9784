"""One session in full (Enter on an Activity row): its notes, its failed commands and the tokens injected into it."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.worker import Worker

from cortex_engine.base.errors import CortexError

from ..data.text import ago, first_line, fmt_tokens, label_tags, line, one_line, short_id, short_kind
from ..failures import report_worker_failure
from ..widgets.spend_pane import CHANNEL_NAMES

if TYPE_CHECKING:
    from cortex_engine.operator import SessionDetail

FAILURES_SHOWN = 50
"""At most this many failed commands are listed (the heading carries the count)."""


class SessionDialog(ModalScreen[None]):
    """`operator.session_detail()` for one session, read in a worker; a session gone since it was listed is said so."""

    DEFAULT_CSS = """
    SessionDialog {
        align: center middle;
        & > #session-box {
            width: 110; max-width: 100%; height: auto; max-height: 100%;
            border: thick $accent; background: $surface; padding: 0 1;
        }
        .session-heading { text-style: bold; margin-top: 1; }
        .session-body { height: auto; }
    }
    """
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("q", "close", "Close", show=False),
        Binding("enter", "close", "Close", show=False),
    ]
    """Escape, q or enter closes."""

    def __init__(self, session_id: str, now: datetime) -> None:
        """Show one session (ages relative to `now`)."""
        super().__init__()
        self.session_id = session_id
        self.now = now

    def compose(self) -> ComposeResult:
        """A header line, then spend, notes and failures (filled once read)."""
        with VerticalScroll(id="session-box") as box:
            box.border_title = Content.assemble("Session ", line(short_id(self.session_id)))
            box.border_subtitle = "esc close"
            yield Static("reading the session…", id="session-summary", classes="session-body")
            for part, heading in (("spend", "Tokens injected"), ("notes", "Notes"), ("failures", "Failures")):
                yield Static(heading, id=f"session-{part}-heading", classes="session-heading")
                yield Static("", id=f"session-{part}", classes="session-body")

    def on_mount(self) -> None:
        """Read the session."""
        self.load()

    @work(thread=True, exclusive=True, group="session", exit_on_error=False, name="session detail")
    def load(self) -> None:
        """`operator.session_detail()` in a worker thread (reads only)."""
        from cortex_engine.operator import session_detail

        try:
            with self.app.target.open() as engine:  # type: ignore[attr-defined]
                detail = session_detail(engine, self.session_id)
        except CortexError as exc:
            self.app.call_from_thread(self._gone, exc.message)
            return
        self.app.call_from_thread(self._show, detail)

    def _gone(self, message: str) -> None:
        """The session was removed (gc) since the table listed it."""
        self.query_one("#session-summary", Static).update(
            Content(f"This session is no longer stored ({one_line(message)}).")
        )

    def _show(self, detail: SessionDetail) -> None:
        """Fill every section; author text (focus, subjects, notes, commands) goes in as literal content."""
        session = detail.session
        self.query_one("#session-box").border_title = Content.assemble(
            "Session ", line(short_id(session["id"])), " · ", line(session["agent_type"])
        )
        started = ago(str(session["started_at"]), self.now)
        ended = "active" if session["status"] == "active" else f"ended {ago(str(session['ended_at'] or ''), self.now)}"
        summary = [
            Content(f"{session['id']} · started {started} · {ended}"),
            Content(
                f"reads {session['reads']} · edits {session['edits']} · commands {session['commands']} · "
                f"failures {session['failures']} · notes {session['notes']} · "
                f"tokens injected {fmt_tokens(int(str(session['tokens'])))}"
            ),
        ]
        if session.get("focus"):
            summary.append(Content.assemble(("focus ", "dim"), line(session["focus"])))
        self.query_one("#session-summary", Static).update(Content("\n").join(summary))
        self.query_one("#session-spend", Static).update(self._spend(detail))
        self.query_one("#session-notes-heading", Static).update(f"Notes ({len(detail.notes)})")
        self.query_one("#session-notes", Static).update(self._notes(detail.notes))
        self.query_one("#session-failures-heading", Static).update(f"Failures ({len(detail.failures)})")
        self.query_one("#session-failures", Static).update(self._failures(detail.failures))

    @staticmethod
    def _spend(detail: SessionDetail) -> Content:
        """One line per channel that injected anything: injections, tokens, largest against the budget."""
        used = [spend for spend in detail.spend if spend.injections]
        if not used:
            return Content("Nothing was injected into this session.").stylize("dim")
        lines = []
        for spend in used:
            budget = f"/{spend.budget}" if spend.budget else ""
            over = spend.budget is not None and spend.largest > spend.budget
            lines.append(
                Content.assemble(
                    f"{CHANNEL_NAMES.get(spend.channel, spend.channel):<15}",
                    f"{spend.injections:>4}× {fmt_tokens(spend.tokens):>7} tokens · largest ",
                    (f"{spend.largest}{budget}", "$text-error" if over else ""),
                )
            )
        return Content("\n").join(lines)

    def _notes(self, notes: list[dict[str, Any]]) -> Content:
        """Each note: kind, subject, its content line and its labels."""
        if not notes:
            return Content("No notes from this session are stored.").stylize("dim")
        lines = []
        for note in notes:
            kind = str(note["kind"])
            tags = label_tags(note["labels"])
            lines.append(
                Content.assemble(
                    (f"{short_kind(kind):<9}", "dim"),
                    (ago(str(note["created_at"]), self.now).ljust(9), "dim"),
                    (f"[{one_line(note['subject'])}] " if note.get("subject") else "", "bold"),
                    first_line(kind, str(note["text"])),
                    (f"  {tags}" if tags else "", "bold $text-warning"),
                )
            )
        return Content("\n").join(lines)

    def _failures(self, failures: list[dict[str, Any]]) -> Content:
        """Each failed command: exit code, age and the command; the last line of its stderr under it."""
        if not failures:
            return Content("No command failed in this session.").stylize("dim")
        lines = []
        for failure in failures[:FAILURES_SHOWN]:
            lines.append(
                Content.assemble(
                    (f"exit {failure['exit_code']:<4}", "$text-error"),
                    (ago(str(failure["timestamp"]), self.now).ljust(9), "dim"),
                    one_line(failure["command"]),
                )
            )
            tail = [part for part in str(failure["stderr_tail"]).splitlines() if part.strip()]
            if tail:
                lines.append(Content.assemble("          ", (one_line(tail[-1]), "dim")))
        if len(failures) > FAILURES_SHOWN:
            lines.append(Content(f"… and {len(failures) - FAILURES_SHOWN} more").stylize("dim"))
        return Content("\n").join(lines)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Failures are notified, never silent."""
        report_worker_failure(self, event)

    def action_close(self) -> None:
        """Close."""
        self.dismiss(None)
