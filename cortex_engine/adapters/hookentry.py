"""Hook entry: one Cortex process per hook event that needs the store (never per ordinary tool call).

The Claude Code hook protocol lives here and nowhere else: the engine answers in plain text, and this
adapter puts each answer into the JSON the host expects on stdout (`hookSpecificOutput`, a Stop hook's
`decision`)."""

from __future__ import annotations

import json
import os

from cortex_engine.engine import engaged_worktree, open_engine
from cortex_engine.engine import project_wires_cortex as project_wires_cortex  # the SessionStart stand-down rule

ACTIONS = (
    "dispatch-pre",
    "subagent-start",
    "subagent-stop",
    "guard-memory",
    "end-of-turn",
    "reflect-pre",
    "reflect-prompt",
)
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
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    )


def block_output(reason: str) -> str:
    """A Stop hook's answer that keeps the turn going with `reason` ("" lets it end)."""
    return json.dumps({"decision": "block", "reason": reason}) if reason else ""


def run(action: str, payload: dict[str, object]) -> str:
    """Handle one hook event; returns exactly what the host expects on stdout ('' for nothing)."""
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not os.path.isdir(cwd):
        return ""
    worktree = engaged_worktree(cwd)
    if worktree is None:
        return ""
    host = found if isinstance(found := payload.get("session_id"), str) else ""
    with open_engine(worktree) as engine:
        if action == "dispatch-pre":
            engine.dispatch_pre(payload)
            return ""
        if action == "subagent-start":
            return context_output("SubagentStart", engine.subagent_start(payload))
        if action == "subagent-stop":
            engine.subagent_stop(payload)
            return ""
        if action == "guard-memory":
            return deny_output(engine.guard_memory(payload))
        if action == "end-of-turn":
            if payload.get("stop_hook_active") is True:
                return ""
            return block_output(engine.end_of_turn(payload))
        if action == "reflect-prompt":
            prompt = found if isinstance(found := payload.get("prompt"), str) else ""
            return context_output("UserPromptSubmit", engine.consult_hint(prompt, engine.host_session(host)))
        if action == "reflect-pre":
            tool = payload.get("tool_name")
            tool_input = found if isinstance(found := payload.get("tool_input"), dict) else {}
            if tool in EDIT_TOOLS:
                path = tool_input.get("file_path") or tool_input.get("notebook_path") or ""
                if isinstance(path, str) and path:
                    return context_output("PreToolUse", engine.whisper("edit", path, engine.host_session(host)))
            return ""
    return ""
