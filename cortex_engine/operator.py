"""Operator reads and one composite action for the TUI, over the Engine API. Standard library only.

These are the few things the operator view needs that the Engine does not answer in one call:
the shape of "is capture wired here" (decided in `ops.presence`), spend per channel against each
channel's budget, the editable text of an item, and closing a contest
(keep one side, or resolve every side) through `Engine.resolve`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cortex_engine.base.tokens import estimate_tokens
from cortex_engine.capture.reflex import WHISPER_CHARS
from cortex_engine.query.inspection import find_item
from cortex_engine.query.render import item_labels
from cortex_engine.query.surfaces import BUDGETS
from cortex_engine.scope.freshness import Validator
from cortex_engine.store import queries

if TYPE_CHECKING:
    from cortex_engine.engine import Engine
    from cortex_engine.memory.notes import Resolution

CHANNELS = ("session_brief", "recall", "brief", "state", "whisper", "subagent_brief")
"""The named injection channels, in the order the operator reads them; every other channel counts as `tools`."""
TOOLS = "tools"
CHANNEL_BUDGETS: dict[str, int | None] = {
    **{name: BUDGETS[name] for name in ("session_brief", "recall", "brief", "state", "subagent_brief")},
    "whisper": estimate_tokens("x" * WHISPER_CHARS),
    TOOLS: None,
}
"""The per-injection budget of each channel (the whisper is capped in characters; tools have none)."""


@dataclass(frozen=True)
class HookInstall:
    """Whether Claude Code captures sessions here, and what wires the capture hook (`ops.presence` decides)."""

    installed: bool
    where: str | None
    checked: tuple[str, ...]
    via: str = "settings"
    """`settings` (a settings file lists the hook) or `plugin` (the enabled Cortex plugin declares it)."""
    fix: str = "cortex install"
    """What to run when nothing captures (plain text); the demo repository needs nothing, and says so."""
    demo: bool = False
    """The seeded demo repository: no capture is expected there, so nothing is wrong."""


@dataclass(frozen=True)
class ChannelSpend:
    """Injected tokens on one channel: how many injections, their total, the largest, and the budget."""

    channel: str
    injections: int
    tokens: int
    largest: int
    budget: int | None


def channel_spend(engine: Engine, session_id: str | None = None, *, tree: bool = True) -> list[ChannelSpend]:
    """Injected spend per channel for a session tree (the session and its subagents), or the whole scope.

    Args:
        session_id: a primary session; None for the scope's cumulative spend.
        tree: count the session's subagent sessions too (False: the session's own injections only).
    """
    if session_id is None:
        rows = queries.injected_by_channel(engine.conn, scope_key=engine.scope.key)
    elif tree:
        rows = queries.injected_by_channel(engine.conn, session_tree=session_id)
    else:
        rows = queries.injected_by_channel(engine.conn, session=session_id)
    totals: dict[str, list[int]] = {name: [0, 0, 0] for name in (*CHANNELS, TOOLS)}
    for row in rows:
        slot = totals[row["channel"] if row["channel"] in CHANNELS else TOOLS]
        slot[0] += row["n"]
        slot[1] += row["total"]
        slot[2] = max(slot[2], row["top"])
    return [ChannelSpend(name, n, total, top, CHANNEL_BUDGETS[name]) for name, (n, total, top) in totals.items()]


def injected_tokens(engine: Engine, session_ids: Sequence[str]) -> dict[str, int]:
    """Tokens injected into each listed session (its own injections, every channel), in one query."""
    if not session_ids:
        return {}
    return queries.injected_per_session(engine.conn, list(session_ids))


@dataclass(frozen=True)
class SessionDetail:
    """What one session did, for the operator's drill-down: its notes, its failed commands and its token spend."""

    session: dict[str, object]
    """The session's `Engine.activity()` row (reads, edits, commands, failures, notes, tokens)."""
    notes: list[dict[str, object]]
    """Its notes still stored, oldest first: item id, kind, subject, text, created_at and trust labels."""
    failures: list[dict[str, object]]
    """Its commands that exited non-zero, oldest first: timestamp, category, command, exit code, stderr tail."""
    spend: list[ChannelSpend]
    """Tokens injected into this session itself, per channel."""


def session_detail(engine: Engine, session_id: str) -> SessionDetail:
    """One session of this scope in full (the Activity drill-down). Reads only.

    Raises:
        NotFound: no such session in this scope (gone since it was listed, or another scope's).
    """
    from cortex_engine.base.errors import NotFound

    found = engine.activity(1, session_id=session_id)
    if not found:
        raise NotFound(f'no session "{session_id}" in this scope', id=session_id)
    items = queries.session_note_items(engine.conn, session_id)
    judged = Validator(engine.conn, engine.scope).validate_many([(str(r["id"]), str(r["scope_key"])) for r in items])
    notes = [
        {
            "id": r["id"],
            "kind": r["kind"],
            "subject": r["subject"],
            "text": r["text"],
            "created_at": r["created_at"],
            "labels": item_labels(str(r["kind"]), str(r["text"]), judged.get(str(r["id"]))),
        }
        for r in items
    ]
    failures = [
        {
            "timestamp": r["timestamp"],
            "category": r["category"],
            "command": r["command_summary"],
            "exit_code": r["exit_code"],
            "stderr_tail": r["stderr_tail"] or "",
        }
        for r in queries.session_failures(engine.conn, session_id)
    ]
    return SessionDetail(found[0], notes, failures, channel_spend(engine, session_id, tree=False))


def editable_text(engine: Engine, item_id: str) -> str:
    """The text an edit replaces: a note's content (without its trailers), else the item's text.

    Raises:
        NotFound: no such item.
    """
    row = find_item(engine.conn, item_id)
    if row["source_table"] == "notes":
        content = queries.note_content(engine.conn, row["source_id"])
        if content is not None:
            return content
    return str(row["text"])


def resolve_contest(
    engine: Engine, sides: Sequence[str], *, keep: str | None = None, replacement: str | None = None
) -> list[Resolution]:
    """Close a contest through `Engine.resolve`: keep one side (the others are superseded), or resolve every side.

    With a replacement, every side is superseded and the replacement is written as the new note on the subject.

    Raises:
        InvalidInput: `keep` is not one of `sides`, a replacement given with `keep`, or an empty replacement.
        NotFound: a side no longer exists.
        Refused: `contest_changed`, the contest is no longer exactly `sides` (nothing was written).
    """
    from cortex_engine.base.errors import InvalidInput

    if keep is not None and keep not in sides:
        raise InvalidInput("the side to keep is not part of this contest", code="bad_args")
    if keep is not None and replacement is not None:
        raise InvalidInput(
            "a replacement supersedes every side; it cannot be combined with keeping one", code="bad_args"
        )
    # The first write checks, in its transaction, that the contest is still exactly these sides: a dialog left open
    # while another shell resolved it must not supersede the survivor (zero active decisions) or act on a new side.
    if keep is not None:
        others = [side for side in sides if side != keep]
        results = [engine.resolve(others[0], status="superseded", expected_sides=sides)]
        return results + [engine.resolve(side, status="superseded") for side in others[1:]]
    status = "superseded" if replacement is not None else "resolved"
    results = [engine.resolve(sides[0], status=status, replacement=replacement, expected_sides=sides)]
    results += [engine.resolve(side, status=status) for side in sides[1:]]
    return results


def item_texts(engine: Engine, item_ids: Sequence[str]) -> dict[str, str]:
    """The stored text of each listed item (a report names items by id; the operator reads their words)."""
    return queries.item_texts(engine.conn, item_ids)
