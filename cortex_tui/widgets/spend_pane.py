"""The token spend pane: injected, saved, net and ratio, spend per channel against budget, and recent sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from ..data.text import fmt_tokens

if TYPE_CHECKING:
    from cortex_engine.operator import ChannelSpend

    from ..data.snapshot import Snapshot

CHANNEL_NAMES = {
    "session_brief": "session brief",
    "recall": "recall",
    "brief": "brief",
    "state": "state",
    "whisper": "whisper",
    "subagent_brief": "subagent brief",
    "tools": "tools",
}
BAR = 10
SPARKS = "▁▂▃▄▅▆▇█"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def _bar(largest: int, budget: int | None) -> Content:
    """The largest single injection against the channel's budget, as a 10-cell bar."""
    if not budget:
        return Content.from_markup("[dim]" + "·" * BAR + "[/]")
    filled = min(BAR, round(BAR * largest / budget))
    style = "$error" if largest > budget else "$success" if largest else "$foreground-muted"
    return Content.assemble(("█" * filled, style), ("░" * (BAR - filled), "dim"))


def sparkline(values: list[int]) -> Content:
    """Injected tokens per recent session, oldest to newest, as a row of eighth-block bars with the figures."""
    if not values:
        return Content.from_markup("[dim]recent sessions: none yet[/]")
    peak = max(values) or 1
    bars = " ".join(SPARKS[min(len(SPARKS) - 1, round((len(SPARKS) - 1) * v / peak))] * 2 for v in values)
    return Content.assemble(
        ("sessions ", "dim"),
        (bars, "$accent"),
        (f"  last {len(values)}, newest right · peak {fmt_tokens(max(values))}", "dim"),
    )


WIDE_CHANNEL_LINE = 54
"""Columns a channel line takes with its bar; a narrower pane (two columns at 100) leaves the bar out."""


class SpendPane(Vertical):
    """Economy at a glance, every figure from `Engine.stats()` and the ledger's per-channel totals."""

    DEFAULT_CSS = """
    SpendPane {
        & > #spend-text { height: auto; }
        & > #spend-history { height: auto; margin-top: 1; }
    }
    """
    BORDER_TITLE = "Token spend"
    can_focus = True
    """Focusable, so Tab reaches it and scrolls it into view where the overview stacks (narrow terminals)."""

    def compose(self) -> ComposeResult:
        """Figures, then the per-session chart."""
        yield Static("loading…", id="spend-text")
        yield Static("", id="spend-history")

    _shown: Snapshot | None = None

    def on_resize(self) -> None:
        """A pane too narrow for the bars shows the channel table without them (nothing wraps)."""
        if self._shown is not None:
            self.show_snapshot(self._shown)

    def show_snapshot(self, snapshot: Snapshot) -> None:
        """Fill the figures from the snapshot."""
        self._shown = snapshot
        roomy = not self.content_size.width or self.content_size.width >= WIDE_CHANNEL_LINE
        stats = snapshot.stats
        session, scope = stats.get("session"), stats["scope"]
        lines = [Content.from_markup("[dim]            injected    saved      net   ratio[/]")]
        for name, figures in (("session", session), ("scope", scope)):
            if not isinstance(figures, dict):
                lines.append(Content.assemble((f"{name:<10}", "bold"), ("  no session yet", "dim")))
                continue
            lines.append(
                Content(
                    f"{name:<10}  {fmt_tokens(figures['injected']):>8} {fmt_tokens(figures['saved']):>8} "
                    f"{fmt_tokens(figures['net']):>8} {_ratio(figures['ratio']):>7}"
                ).stylize("bold", 0, 10)
            )
        if scope["saved"] == 0:
            lines.append(Content.from_markup("[dim]saved is credited only with recorded evidence (none yet)[/]"))
        lines.append(Content(""))
        lines.append(
            Content.from_markup(
                "[dim]channel         largest / budget     session    scope[/]"
                if roomy
                else "[dim]channel         largest  session   scope[/]"
            )
        )
        session_by = {c.channel: c for c in snapshot.session_spend}
        for spend in snapshot.scope_spend:
            lines.append(self._channel_line(spend, session_by.get(spend.channel), roomy))
        self.query_one("#spend-text", Static).update(Content("\n").join(lines))
        history = list(reversed([int(h["injected"]) for h in stats.get("history", [])]))
        self.query_one("#spend-history", Static).update(sparkline(history))

    @staticmethod
    def _channel_line(scope: ChannelSpend, session: ChannelSpend | None, roomy: bool = True) -> Content:
        """`recall  ███░░  269/600   263   768` (without the bar where the pane is narrow)."""
        name = CHANNEL_NAMES.get(scope.channel, scope.channel)
        budget = f"{scope.largest}/{scope.budget}" if scope.budget else f"{scope.largest}/—"
        if not scope.injections:
            budget = f"—/{scope.budget}" if scope.budget else "—"
        here = fmt_tokens(session.tokens) if session is not None and session.injections else "—"
        total = fmt_tokens(scope.tokens) if scope.injections else "—"
        if not roomy:
            return Content(f"{name:<15} {budget:>7} {here:>8} {total:>7}")
        return Content.assemble(
            f"{name:<15} ",
            _bar(scope.largest, scope.budget),
            f" {budget:>8} {here:>9} {total:>8}",
        )
