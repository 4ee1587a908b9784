"""Shown instead of the overview when there is no store to show: never seen, refused, or its directory deleted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Center, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..keys import Key
from ..widgets.status_header import StatusHeader

if TYPE_CHECKING:
    from cortex_engine.engine import StoreInfo
    from cortex_engine.operator import HookInstall

    from ..data.target import StoreTarget

FIXES = {
    "newer_schema": "Upgrade Cortex so it can read this store:  [b]pip install -U cortex-memory-layer[/]  "
    "then press [b]r[/].",
    "corrupt_schema_version": "Move the store aside ([b]cortex store[/] prints where); Cortex starts a fresh one at "
    "the next session. Then press [b]r[/].",
    "unreadable_store": "Move the store aside ([b]cortex store[/] prints where); Cortex starts a fresh one at the next "
    "session. Then press [b]r[/].",
}


class StateScreen(Screen[None]):
    """A repository never seen (no store yet), a store refused (newer or corrupt schema) or a directory deleted under
    the app: meaning and fix."""

    DEFAULT_CSS = """
    StateScreen {
        & #state-box {
            width: 96; max-width: 100%; height: auto; max-height: 1fr;
            border: round $warning; padding: 1 2; margin-top: 1;
        }
        &.-refused #state-box { border: round $error; }
    }
    """
    BINDINGS = [
        Key("r", "app.refresh", "Check again", title="Refresh", tooltip="look for the store again now"),
        Key("question_mark", "app.help", "Help", title="Help", tooltip="this help: the keys and what the labels mean"),
        Key("q", "app.quit", "Quit", tooltip="quit"),
    ]
    """Check again, help, quit."""

    def __init__(
        self,
        state: str,
        target: StoreTarget,
        info: StoreInfo | None,
        hooks: HookInstall | None,
        message: str = "",
        code: str = "",
    ) -> None:
        """Describe one unavailable state (`missing` or `refused`)."""
        super().__init__()
        self.state = state
        self.target = target
        self.info = info
        self.hooks = hooks
        self.message = message
        self.code = code

    def compose(self) -> ComposeResult:
        """Header, the explanation, footer."""
        yield StatusHeader()
        with VerticalScroll():
            with Center():
                yield Static(self._body(), id="state-box")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Fill the header and mark the kind of state."""
        title, detail, border = {
            "missing": ("no store yet", "watching for the first session…", "Never seen"),
            "deleted": ("directory deleted", "watching nothing", "Directory deleted"),
        }.get(self.state, ("store refused", self.code, "Cannot open the store"))
        self.query_one(StatusHeader).show_unavailable(title, detail, self.target)
        self.set_class(self.state != "missing", "-refused")
        self.query_one("#state-box", Static).border_title = border

    def _body(self) -> Content:
        """What it means and the command that fixes it."""
        cwd = self.target.shorten(self.target.cwd)
        place = "directory" if self.info is not None and self.info.degraded else "repository"
        lines: list[Content] = []
        if self.state == "deleted":
            lines += [
                Content.from_markup("[b $error]$cwd no longer exists.[/]", cwd=cwd),
                Content(""),
                Content.from_markup(
                    "The directory this view was opened in was deleted (or moved away). Its memory, if it had any, is "
                    "still in its store: open Cortex in the repository where it lives now. Nothing is watched any "
                    "more; press [b]r[/] to look again."
                ),
            ]
        elif self.state == "missing":
            lines += [
                Content.from_markup("[b]No Cortex memory for this $place yet.[/]", place=place),
                Content(""),
                Content.from_markup(
                    "Cortex keeps one store per repository and creates it at the first Claude Code session here "
                    "(the SessionStart hook runs [b]cortex inject-header --quiet[/]). Nothing has been recorded for "
                    "[b]$cwd[/] yet. Opening this view creates nothing: it is watching, and shows the memory as soon "
                    "as the store appears.",
                    cwd=cwd,
                ),
                Content(""),
                Content.from_markup("[b $accent]To start:[/] start a Claude Code session in this directory, or run"),
                Content.from_markup("    [b]cortex inject-header --quiet[/]"),
            ]
        else:
            lines += [
                Content.from_markup("[b $error]This store cannot be opened; nothing was written to it.[/]"),
                Content(""),
                Content(" ".join(self.message.split())),
                Content(""),
                Content.from_markup(
                    "[b $accent]Fix:[/] " + FIXES.get(self.code, "see [b]cortex store[/] and [b]cortex doctor[/].")
                ),
            ]
        if self.info is not None and self.info.degraded:
            lines += [
                Content(""),
                Content.from_markup(
                    "[b $warning]Outside git:[/] this directory is not in a git repository, so its store is keyed "
                    "by the directory itself and memory is not separated per branch. Run Cortex inside a repository "
                    "([b]git init[/]) for per-branch memory."
                ),
            ]
        if self.hooks is not None:
            lines.append(Content(""))
            if self.hooks.installed:
                lines.append(
                    Content.from_markup(
                        "[$success]● Hooks installed[/] [dim]($where)[/]", where=self.target.shorten(self.hooks.where)
                    )
                )
            else:
                lines.append(
                    Content.from_markup(
                        "[$warning]○ No Claude Code hooks found[/] in ~/.claude/settings.json or "
                        ".claude/settings.json: "
                        "sessions will not be captured. Fix: [b]$fix[/]",
                        fix=self.hooks.fix,
                    )
                )
        return Content("\n").join(lines)
