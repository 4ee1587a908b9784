"""Hook entry: one Cortex process per hook event that needs the store (never per ordinary tool call).

The Claude Code hook protocol lives here and nowhere else: the engine answers in plain text, and this
adapter puts each answer into the JSON the host expects on stdout (`hookSpecificOutput`, a Stop hook's
`decision`)."""

from __future__ import annotations

import json
import os

from cortex_engine.capture.flush import find_runtime, is_engaged
from cortex_engine.engine import Engine, open_engine
from cortex_engine.base.lazy import LazyModule

agents = LazyModule("capture.agents")
reflex = LazyModule("capture.reflex")

ACTIONS = ("dispatch-pre", "subagent-start", "subagent-stop", "guard-memory", "end-of-turn", "reflect-pre", "reflect-prompt")
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")


def context_output(event: str, text: str) -> str:
    """Text added to the agent's context for a hook event ("" for nothing to add)."""
    if not text:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def deny_output(reason: str) -> str:
    """A PreToolUse denial with its reason ("" lets the call through)."""
    if not reason:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                              "permissionDecisionReason": reason}})


def block_output(reason: str) -> str:
    """A Stop hook's answer that keeps the turn going with `reason` ("" lets it end)."""
    return json.dumps({"decision": "block", "reason": reason}) if reason else ""


def _session(engine: Engine, payload: dict) -> str:
    """The primary session for the payload's host session (created if the store has none)."""
    from cortex_engine.capture.flush import primary_session
    from cortex_engine.store.database import transaction

    host = payload.get("session_id") if isinstance(payload.get("session_id"), str) else ""
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
            return context_output("SubagentStart", agents.subagent_start(engine, payload))
        if action == "subagent-stop":
            engine.flush_spool()
            agents.subagent_stop(engine, payload)
            return ""
        if action == "guard-memory":
            return deny_output(agents.guard(engine, payload))
        if action == "end-of-turn":
            if payload.get("stop_hook_active") is True:
                return ""
            engine.flush_spool(turn_end=True)
            transcript = payload.get("transcript_path")
            if isinstance(transcript, str) and transcript:
                engine.replay_transcript_failures(transcript, payload)
            if os.environ.get("CORTEX_STOP_NUDGE", "").strip().lower() == "off":
                return ""
            return block_output(agents.end_of_turn_nudge(engine, _session(engine, payload)))
        if action == "reflect-prompt":
            prompt = payload.get("prompt") if isinstance(payload.get("prompt"), str) else ""
            return context_output("UserPromptSubmit", reflex.consult_hint(engine, _session(engine, payload), prompt))
        if action == "reflect-pre":
            tool = payload.get("tool_name")
            tool_input = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
            if tool in EDIT_TOOLS:
                path = tool_input.get("file_path") or tool_input.get("notebook_path") or ""
                if isinstance(path, str) and path:
                    from cortex_engine.capture.flush import relative_path

                    line = reflex.whisper(engine, _session(engine, payload), "edit",
                                          relative_path(path, engine.scope.worktree))
                    return context_output("PreToolUse", line)
            return ""
    return ""
