"""Warnings that change what the operator should trust: no hooks installed, identity outside git."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

if TYPE_CHECKING:
    from cortex_engine.engine import StoreInfo
    from cortex_engine.operator import HookInstall


class NoticeBar(Static):
    """One line per notice, each naming the command that fixes it; hidden when there is nothing to say."""

    DEFAULT_CSS = """
    NoticeBar {
        height: auto;
        padding: 0 1;
        background: $warning-muted;
        color: $text;
        &.-empty { display: none; }
        &.-info { background: $primary-muted; }
    }
    """

    def on_mount(self) -> None:
        """Start hidden."""
        self.set_class(True, "-empty")

    def show_notices(self, info: StoreInfo | None, hooks: HookInstall | None) -> None:
        """Say what is wrong with the setup, if anything."""
        lines: list[Content] = []
        calm = hooks is not None and hooks.demo and not (info is not None and info.degraded)
        if hooks is not None and hooks.demo:  # nothing to fix: say what the demo is, not a warning
            lines.append(
                Content.from_markup(
                    "[b]Demo[/]: seeded memory to explore, nothing captured here. Yours: [b]cortex install[/]"
                )
            )
        elif hooks is not None and not hooks.installed:
            lines.append(
                Content.from_markup(
                    "[b]⚠ No Claude Code hooks found[/]: nothing is captured. Fix: [b]$fix[/]", fix=hooks.fix
                )
            )
        if info is not None and info.degraded:
            lines.append(
                Content.from_markup(
                    "[b]⚠ Outside git[/]: memory is keyed by this directory, not per branch. Fix: [b]git init[/] "
                    "(see [b]cortex store[/])"
                )
            )
        self.update(Content("\n").join(lines))
        self.set_class(not lines, "-empty")
        self.set_class(calm, "-info")
