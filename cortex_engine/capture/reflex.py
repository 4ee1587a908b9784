"""Unprompted hints: the consult hint (at most once per session) and the reflex whisper (high confidence)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from cortex_engine.base.clock import iso
from cortex_engine.memory.items import is_resolved, is_superseded
from cortex_engine.query import economy
from cortex_engine.query.render import clip, inspect_pointer, render_memory_line
from cortex_engine.store import queries
from cortex_engine.store.database import transaction

if TYPE_CHECKING:
    from cortex_engine.query.surfaces import Context

HINT = "Cortex may have prior context for this work — cortex_recall(topic) checks; cortex_state for broad state."
WHISPER_CHARS = 460
MIN_SCORE = 9.0
WHISPER_KINDS = ("note:decision", "note:blocker", "note:insight", "episode:command_failure")
_RELEVANT = re.compile(
    r"\b(resume|resumed|resuming|continue|continuing|again|earlier|previous|prior|follow[- ]?up|pick up|fix|debug|bug|"
    r"error|failure|failing|broken|regression|implement|plan|multi[- ]?step|decision|remember|memory|refactor)\b",
    re.IGNORECASE,
)


def flag(conn: sqlite3.Connection, session_id: str, key: str) -> str | None:
    """A per-session flag's value."""
    return queries.session_flag(conn, session_id, key)


def set_flag(conn: sqlite3.Connection, session_id: str, key: str, value: str = "1") -> None:
    """Set a per-session flag."""
    with transaction(conn):
        queries.set_session_flag(conn, session_id, key, value)


def consult_hint(conn: sqlite3.Connection, scope_key: str, session_id: str, prompt: str, now: str) -> str:
    """UserPromptSubmit: one line pointing at memory, at most once per session and never after a consult.

    Returns the line ("" for none), booked; the hook adapter (`hookentry`) puts it on the wire."""
    if flag(conn, session_id, "consulted") or flag(conn, session_id, "consult_hint"):
        return ""
    sessions = queries.primary_session_count(conn, scope_key)
    if not _RELEVANT.search(prompt) and sessions <= 1:
        return ""
    set_flag(conn, session_id, "consult_hint")
    economy.book_text(conn, scope_key, session_id, "consult_gate", HINT, now)
    return HINT


def whisper(conn: sqlite3.Connection, session_id: str, event: str, anchor: str, context: Callable[[], Context]) -> str:
    """PreToolUse: one remembered line about the file or command at hand, only when confidence is high.

    `context` gives the surfaces' context of the scope, refreshed; it is asked for only when the anchor is new to
    the session. Returns the line ("" for none), booked; the hook adapter (`hookentry`) puts it on the wire."""
    anchor_key = " ".join(anchor.replace("\\", "/").split()).lower()
    if not anchor_key:
        return ""
    focus_key = f"{event}:{anchor_key}"
    if flag(conn, session_id, f"reflex:{focus_key}"):
        return ""
    ctx = context()
    from cortex_engine.query.surfaces import ranked

    _, _, results = ranked(ctx, anchor, 6, exact=True)
    pick = None
    for cand in results:
        text = cand.row["text"]
        if cand.kind not in WHISPER_KINDS or cand.score < MIN_SCORE or cand.row["scope_key"] != ctx.scope_key:
            continue
        if is_superseded(cand.kind, text) or is_resolved(text):
            continue
        if anchor_key not in ((cand.row["subject"] or "") + "\n" + text).replace("\\", "/").lower():
            continue
        pick = cand
        break
    if pick is None:
        return ""
    line = "Cortex memory: " + render_memory_line(pick.row, pick.validation, 3)
    line = clip(line, WHISPER_CHARS, inspect_pointer(pick.id))  # its labels are kept whole
    set_flag(conn, session_id, f"reflex:{focus_key}")
    economy.book_text(conn, ctx.scope_key, session_id, "whisper", line, iso(ctx.now))
    return line
