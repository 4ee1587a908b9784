"""Fallback for hosts that send no PostToolUseFailure: failed Bash calls found in the transcript's tail.

Claude Code fires PostToolUseFailure for a failing tool, and capture records it. An older host, or a hook
wiring without that event, leaves a failed test run unrecorded; at the end of a turn the tail of the
transcript is scanned for Bash calls whose result is an error, and each one the spool never saw is replayed
as the failure payload the host would have sent. The spool's idempotency key (`PostToolUseFailure:<id>`)
keeps a failure from being booked twice, whichever path reports it first.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

TAIL_BYTES = 256 * 1024
MAX_FAILURES = 50


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def failed_bash_calls(path: str) -> list[dict[str, str]]:
    """(tool_use_id, command, error text) of failed Bash calls in the last 256 KiB of a transcript, oldest first."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as handle:
            handle.seek(max(0, size - TAIL_BYTES))
            tail = handle.read().decode("utf-8", "replace")
    except OSError:
        return []
    commands: dict[str, str] = {}
    failures: list[dict[str, str]] = []
    for line in tail.splitlines():
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "tool_use" and part.get("name") == "Bash" and isinstance(part.get("id"), str):
                command = part.get("input", {}).get("command") if isinstance(part.get("input"), dict) else None
                if isinstance(command, str) and command:
                    commands[part["id"]] = command
            elif part.get("type") == "tool_result" and part.get("is_error") is True:
                use_id = part.get("tool_use_id")
                if isinstance(use_id, str) and use_id in commands:
                    failures.append(
                        {"tool_use_id": use_id, "command": commands[use_id], "error": _text(part.get("content"))}
                    )
    return failures[-MAX_FAILURES:]


def fallback_entries(path: str, payload: Mapping[str, object]) -> list[dict[str, Any]]:
    """Spool entries for the failures, shaped as the PostToolUseFailure payloads the host did not send; typed as
    `json.loads` reads a spool line, which is what the replay takes."""
    base = {key: payload[key] for key in ("session_id", "cwd", "transcript_path") if isinstance(payload.get(key), str)}
    return [
        {
            "v": 1,
            "p": {
                **base,
                "hook_event_name": "PostToolUseFailure",
                "tool_name": "Bash",
                "tool_use_id": failure["tool_use_id"],
                "tool_input": {"command": failure["command"]},
                "error": failure["error"][:4000] or "Command failed",
                "is_interrupt": False,
                "cortex_source": "transcript",
            },
        }
        for failure in failed_bash_calls(path)
    ]
