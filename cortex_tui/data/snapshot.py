"""One read of the store for the overview, header and activity: every figure comes from an Engine call."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cortex_engine.engine import Engine, StoreInfo
    from cortex_engine.operator import ChannelSpend, HookInstall
    from cortex_engine.results import Surface


@dataclass(frozen=True)
class Snapshot:
    """What the store said at one moment, seen from the app's working directory (read in a worker thread)."""

    generation: int
    """Which load produced this (newer loads win)."""
    now: datetime
    """The engine clock when it was read (ages are relative to it)."""
    repo: str
    """The repository's label (the store's name)."""
    info: StoreInfo
    """Where the store is and how its identity was derived."""
    hooks: HookInstall
    """Whether Claude Code's settings wire the capture hook."""
    status: dict[str, Any]
    """`Engine.status()`: engaged, worktree, branch, session, counts."""
    brief: Surface
    """`Engine.preview_session_brief()`: exactly what SessionStart injects, not booked."""
    contests: list[dict[str, Any]]
    """`Engine.contests()`: every open contest of this scope, sides seated together."""
    stats: dict[str, Any]
    """`Engine.stats()`: injected/saved/net/ratio for the session and the scope, history, health."""
    session_spend: list[ChannelSpend] = field(default_factory=list)
    """Spend per channel for the newest session tree."""
    scope_spend: list[ChannelSpend] = field(default_factory=list)
    """Spend per channel for the whole scope."""
    activity: list[dict[str, Any]] = field(default_factory=list)
    """`Engine.activity()`: sessions and subagent sessions, newest first."""
    git_dir: str | None = None
    """The worktree's git dir (HEAD, index), watched for checkout changes; None outside git."""
    memory_mark: tuple[object, ...] = ()
    """`Engine.memory_mark()`: unchanged means the memory table and the freshness report need not be read again."""
    inbox: int = 0
    """How many arrivals from outside wait for the operator's review (`Engine.inbox()`): the Inbox key shows then."""

    def contest_of(self, note_id: str | None) -> dict[str, Any] | None:
        """The open contest a note is a side of, if any."""
        if not note_id:
            return None
        for contest in self.contests:
            if any(side["id"] == note_id for side in contest["sides"]):
                return contest
        return None


def load_snapshot(engine: Engine, generation: int, hooks: HookInstall) -> Snapshot:
    """Read everything the overview shows, through the engine API (nothing is booked or reinforced)."""
    from cortex_engine.operator import channel_spend

    status = engine.status()
    brief = engine.preview_session_brief()
    contests = engine.contests()
    stats = engine.stats()
    session = stats.get("session")
    session_id = session["id"] if isinstance(session, dict) else None
    return Snapshot(
        generation=generation,
        now=engine.clock(),
        repo=engine.identity.label,
        info=engine.store_info(),
        hooks=hooks,
        status=status,
        brief=brief,
        contests=contests,
        stats=stats,
        session_spend=channel_spend(engine, session_id) if session_id else [],
        scope_spend=channel_spend(engine),
        activity=engine.activity(40),
        git_dir=engine.scope.git_dir,
        memory_mark=engine.memory_mark(),
        inbox=len(engine.inbox()),
    )
