"""The operator app: the brief the agent gets, open contests, stale references and the working state."""

from __future__ import annotations

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid, VerticalScroll
from textual.widgets import Footer, Header, Static

from cortex_engine.engine import Engine, open_engine
from cortex_engine.errors import CortexError


class Pane(VerticalScroll):
    """A titled, scrollable pane of plain text."""

    DEFAULT_CSS = """
    Pane { border: round $primary; padding: 0 1; }
    """

    def __init__(self, title: str, pane_id: str) -> None:
        """Create the pane with its border title."""
        super().__init__(id=pane_id)
        self.border_title = title

    def compose(self) -> ComposeResult:
        """One Static body."""
        yield Static("loading…", classes="body", markup=False)

    def show(self, text: str) -> None:
        """Replace the pane's text."""
        self.query_one(".body", Static).update(text)


class CortexApp(App[None]):
    """Overview of one scope's memory: brief, contests, freshness, state."""

    CSS = """
    Grid { grid-size: 2 2; grid-gutter: 0 1; }
    """
    BINDINGS = [Binding("r", "refresh", "Refresh"), Binding("q", "quit", "Quit")]
    """Global keys."""

    def __init__(self, engine: Engine) -> None:
        """Bind the app to an open engine."""
        super().__init__()
        self.engine = engine
        self.title = "Cortex"
        self.sub_title = f"{engine.scope.label} · {engine.identity.db_path}"

    def compose(self) -> ComposeResult:
        """Header, four panes, footer."""
        yield Header()
        with Grid():
            yield Pane("Session brief", "brief")
            yield Pane("Contests", "contests")
            yield Pane("Freshness", "freshness")
            yield Pane("State", "state")
        yield Footer()

    def on_mount(self) -> None:
        """Load the panes."""
        self.action_refresh()

    def action_refresh(self) -> None:
        """Reload every pane from the engine."""
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load(self) -> None:
        """Read the engine in a worker thread and hand the texts to the UI thread."""
        engine = open_engine(self.engine.cwd, clock=self.engine.clock)
        try:
            brief = engine.preview_session_brief()
            contests = engine.contests()
            report = engine.validate_memory()
            state = engine.state()
        except CortexError as exc:
            self.call_from_thread(self.notify, exc.message, severity="error", title="Cortex")
            return
        finally:
            engine.close()
        brief_text = f"{brief.text or '(nothing: cold start)'}\n\n{brief.tokens}/{brief.budget} tokens"
        contest_lines = []
        for contest in contests:
            contest_lines.append(f"[{contest['subject']}]")
            for side in contest["sides"]:  # type: ignore[attr-defined]
                contest_lines.append(f"  {side['timestamp'][:16].replace('T', ' ')}Z  {side['content']}")
        stale = [f"{i['id']}\n  [{i['label']}]" for i in report["items"] if i["label"]]  # type: ignore[attr-defined]
        self.call_from_thread(self._show, brief_text, "\n".join(contest_lines) or "no open contests",
                              "\n".join(stale) or "every reference is current", state.text)

    def _show(self, brief: str, contests: str, freshness: str, state: str) -> None:
        self.query_one("#brief", Pane).show(brief)
        self.query_one("#contests", Pane).show(contests)
        self.query_one("#freshness", Pane).show(freshness)
        self.query_one("#state", Pane).show(state)


def run(cwd: str) -> int:
    """Open the app for a working directory; returns the exit code."""
    with open_engine(cwd) as engine:
        CortexApp(engine).run()
    return 0
