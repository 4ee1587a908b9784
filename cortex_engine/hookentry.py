"""Hook entry: one Cortex process per hook event that needs the store (never per ordinary tool call)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from . import settings
from .capture import find_runtime, is_engaged
from .engine import Engine, open_engine
from .lazy import LazyModule

if TYPE_CHECKING:  # the real modules, so that mypy checks every call through a lazy handle
    from . import agents
    from . import reflex
else:
    agents = LazyModule("agents")
    reflex = LazyModule("reflex")

ACTIONS = ("dispatch-pre", "subagent-start", "subagent-stop", "guard-memory", "end-of-turn", "reflect-pre", "reflect-prompt")
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")


def _session(engine: Engine, payload: dict) -> str:
    """The primary session for the payload's host session (created if the store has none)."""
    from .capture import primary_session
    from .store import transaction

    host = found if isinstance(found := payload.get("session_id"), str) else ""
    with transaction(engine.conn):
        return primary_session(engine.conn, engine.scope, host, engine.now())


def run(action: str, payload: dict) -> str:
    """Handle one hook event; returns exactly what the host expects on stdout ('' for nothing)."""
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not os.path.isdir(cwd):
        return ""
    runtime = find_runtime(cwd)
    if runtime is None or not is_engaged(runtime.parent):
        return ""
    with open_engine(runtime.parent) as engine:
        if action == "dispatch-pre":
            agents.dispatch_pre(engine, payload)
            return ""
        if action == "subagent-start":
            return agents.subagent_start(engine, payload)
        if action == "subagent-stop":
            engine.flush_spool()
            agents.subagent_stop(engine, payload)
            return ""
        if action == "guard-memory":
            return agents.guard(engine, payload)
        if action == "end-of-turn":
            if payload.get("stop_hook_active") is True:
                return ""
            engine.flush_spool(turn_end=True)
            transcript = payload.get("transcript_path")
            if isinstance(transcript, str) and transcript:
                engine.replay_transcript_failures(transcript, payload)
            if not settings.stop_nudge():
                return ""
            return agents.end_of_turn_nudge(engine, _session(engine, payload))
        if action == "reflect-prompt":
            prompt = found if isinstance(found := payload.get("prompt"), str) else ""
            return reflex.consult_hint(engine, _session(engine, payload), prompt)
        if action == "reflect-pre":
            tool = payload.get("tool_name")
            tool_input = found if isinstance(found := payload.get("tool_input"), dict) else {}
            if tool in EDIT_TOOLS:
                path = tool_input.get("file_path") or tool_input.get("notebook_path") or ""
                if isinstance(path, str) and path:
                    from .capture import relative_path

                    return reflex.whisper(engine, _session(engine, payload), "edit", relative_path(path, engine.scope.worktree))
            return ""
    return ""
