"""The header: which repository, branch and worktree, the store's health, capture, and the current session."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from ..data.text import ago, count, fit_parts, short_id

if TYPE_CHECKING:
    from ..data.snapshot import Snapshot
    from ..data.target import StoreTarget


class StatusHeader(Widget):
    """Two lines an operator reads first: identity (repo · branch · worktree) and health (store · capture · session)."""

    DEFAULT_CSS = """
    StatusHeader {
        height: 2;
        background: $panel;
        padding: 0 1;
        & > Static { height: 1; width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    }
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Nothing shown yet."""
        super().__init__(*args, **kwargs)
        self._parts: dict[str, list[tuple[Content, int]]] = {}
        """Each line's parts with the rank at which it gives way (0 never), kept to refit on resize."""

    def compose(self) -> ComposeResult:
        """The identity line and the health line."""
        yield Static(Content.from_markup("[b $accent]Cortex[/]  opening the store…"), id="identity-line")
        yield Static("", id="health-line")

    def show_snapshot(self, snapshot: Snapshot, target: StoreTarget, now: datetime | None = None) -> None:
        """Fill both lines from a loaded snapshot (ages against `now`, default the snapshot's clock)."""
        status = snapshot.status
        if status.get("branch"):
            where = Content.from_markup("[b]$branch[/]", branch=str(status["branch"]))
        elif status.get("head_oid"):
            where = Content.from_markup("[b $warning]detached@$oid[/]", oid=str(status["head_oid"])[:7])
        else:
            where = Content.from_markup("[b $warning]no branch (outside git)[/]")
        self._parts["identity-line"] = [
            (Content.from_markup("[b $accent]Cortex[/]  "), 0),
            (Content.from_markup("[b]$repo[/]", repo=snapshot.repo), 0),
            (Content.assemble("  ⎇ ", where), 0),
            (
                Content.from_markup("  [dim]worktree[/] $path", path=target.shorten(str(status.get("worktree") or ""))),
                1,
            ),
        ]
        items, contests = int(status.get("items") or 0), len(snapshot.contests)
        if snapshot.info.degraded:
            store = Content.from_markup("[$warning]● store: degraded identity (outside git)[/]")
        else:
            store = Content.from_markup("[$success]● store ok[/]")
        counts = Content.from_markup(
            "  [dim]$items · $contests[/]",
            items=count(items, "item"),
            contests=count(contests, "open contest"),  # what the Contests pane counts, not contested notes
        )
        engaged = (
            Content.from_markup("   [$success]● engaged[/]")
            if status.get("engaged")
            else Content.from_markup("   [$warning]○ not engaged[/] [dim](capture off)[/]")
        )
        if status.get("session"):
            session = Content.from_markup(
                "   session [b]$id[/] [dim]· $age[/]",
                id=short_id(status["session"]),
                age=ago(status.get("session_started_at"), now or snapshot.now),
            )
        else:
            session = Content.from_markup("   [dim]no active session[/]")
        self._parts["health-line"] = [(store, 0), (counts, 2), (engaged, 0), (session, 1)]
        self._fit()

    def _fit(self) -> None:
        """Paint both lines, leaving out whole parts that do not fit (never a part cut mid-word)."""
        width = self.content_region.width or self.app.size.width - 2
        for line_id, parts in self._parts.items():
            self.query_one(f"#{line_id}", Static).update(fit_parts(parts, width))

    def on_resize(self) -> None:
        """Refit at the new width."""
        if self._parts:
            self._fit()

    def show_unavailable(self, title: str, detail: str, target: StoreTarget) -> None:
        """Fill both lines when there is no store to show (never seen, or refused)."""
        self._parts = {}
        self.query_one("#identity-line", Static).update(
            Content.from_markup("[b $accent]Cortex[/]  [dim]$cwd[/]", cwd=target.shorten(target.cwd))
        )
        self.query_one("#health-line", Static).update(
            Content.from_markup("[$warning]● $title[/]  [dim]$detail[/]", title=title, detail=detail)
        )
