"""What `cortex serve` says about itself and how it takes the stdio wire: shared by the early `initialize`
answer (`serve`) and the SDK server (`mcp_server`), so neither imports the other for them. Standard library only.
"""

from __future__ import annotations

import json
import os
import re
from typing import IO, Any, NamedTuple

from cortex_engine.base.labels import GLOSSARY

SERVER_NAME = "cortex"
SERVER_VERSION = "0.1.0"
INSTRUCTIONS = (
    "Cortex is this repository's local memory: decisions, blockers, intents and evidence from earlier sessions, "
    f"each labelled {GLOSSARY} when it no longer simply holds, and (from <branch>) or "
    "(shared) when it came from a merged branch or the repository's decisions folder. "
    "Call cortex_route once to see which tool answers what."
)


def claim_stdin() -> IO[str]:
    """The wire, read from a private duplicate of fd 0; fd 0 then points at the null device, as the SDK does
    for the streams it claims, so a child process (git) can never consume protocol bytes."""
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return open(wire, encoding="utf-8", errors="replace", closefd=True)


# JSON-RPC error codes (the SDK's own names, without importing it).
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
MAX_DEPTH = 128
"""The deepest a request may nest. The SDK's parser gives up near 200 levels and drops the line unanswered, so a
deeper request is refused here, before the SDK sees it; 128 levels is far more than any tool's arguments need."""
BAD_TEXT = (
    "the request's text holds a lone UTF-16 surrogate ({escape}), which is not valid Unicode; "
    "nothing was done — send the text as valid UTF-8"
)

# A JSON string (escapes kept), a structural character, or a bare scalar (number, true, false, null).
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]|[^\s\[\]{}:,"]+')
_NESTING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
# A `\uD800`-`\uDFFF` escape: the only way a lone surrogate reaches us (raw ones are invalid UTF-8, replaced).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class Refusal(NamedTuple):
    """A protocol error to answer a line with, because the SDK would drop the line without an answer."""

    request_id: str | int | None
    """The request's id when it can be written back (valid UTF-8), else None (JSON-RPC's null id)."""
    method: str | None
    code: int
    message: str


def screen(line: str) -> Refusal | None:
    """The error `line` must be answered with before the SDK sees it, or None when the SDK can take it.

    The SDK drops a line its parser rejects without answering, so a request would wait forever: text that is
    not JSON, nesting deeper than `MAX_DEPTH`, something other than one JSON-RPC 2.0 object, and a lone UTF-16
    surrogate anywhere (in the id too, which then cannot be echoed: the answer's id is null). Notifications and
    responses are never answered, as JSON-RPC says; their bad lines are left to the SDK.
    """
    text = line.strip()
    if not text:
        return None
    if _too_deep(text):
        request_id, method = _top_level(text)
        return Refusal(
            _writable(request_id),
            method,
            INVALID_REQUEST,
            f"the request nests deeper than {MAX_DEPTH} levels; nothing was done",
        )
    try:
        message = json.loads(text)
    except ValueError:
        return Refusal(None, None, PARSE_ERROR, "the line is not JSON; nothing was done")
    if not isinstance(message, dict):
        return Refusal(
            None,
            None,
            INVALID_REQUEST,
            "a request is one JSON-RPC 2.0 object (batches are not part of MCP); nothing was done",
        )
    if "id" not in message or ("method" not in message and ("result" in message or "error" in message)):
        return None  # a notification or a response: nobody waits for an answer
    request_id, method = message["id"], message.get("method")
    if isinstance(request_id, str) and _writable(request_id) is None:
        return Refusal(
            None,
            method if isinstance(method, str) else None,
            INVALID_REQUEST,
            "the request's id holds a lone UTF-16 surrogate, so no answer could carry it; nothing was done",
        )
    if (
        message.get("jsonrpc") != "2.0"
        or not isinstance(method, str)
        or _writable(request_id) is None
        or not isinstance(message.get("params", {}), dict)
    ):
        return Refusal(
            _writable(request_id),
            method if isinstance(method, str) else None,
            INVALID_REQUEST,
            "not a JSON-RPC 2.0 request (a string or integer id, a method name, params an object); nothing was done",
        )
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(message, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            escape = f"\\u{ord(exc.object[exc.start]):04x}"
            return Refusal(request_id, method, INVALID_PARAMS, BAD_TEXT.format(escape=escape))
    return None


def _too_deep(text: str) -> bool:
    """Whether `text` nests deeper than MAX_DEPTH (brackets inside strings do not count); linear in its length."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    depth = 0
    for token in _NESTING.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif char in "]}":
            depth -= 1
    return False


def _top_level(text: str) -> tuple[Any, str | None]:
    """The `id` and `method` members of the object `text` opens, read by scanning (it is too deep to parse)."""
    found: dict[str, Any] = {}
    depth, expecting = 0, False
    key: str | None = None
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth, key, expecting = depth + 1, (None if depth == 1 else key), (False if depth == 1 else expecting)
        elif token in ("]", "}"):
            depth -= 1
        elif depth != 1:
            continue
        elif token == ":":
            expecting = key is not None
        elif token == ",":
            key, expecting = None, False
        elif expecting:
            if key == "id" or key == "method":
                try:
                    found[key] = json.loads(token)
                except ValueError:
                    pass
            key, expecting = None, False
            if len(found) == 2:
                break
        else:
            try:
                name = json.loads(token) if token.startswith('"') else None
            except ValueError:
                name = None
            key = name if isinstance(name, str) else None
    method = found.get("method")
    return found.get("id"), method if isinstance(method, str) else None


def _writable(request_id: Any) -> str | int | None:
    """`request_id` when a response can carry it (a string in valid UTF-8, or an integer), else None."""
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        return None
    if isinstance(request_id, str):
        try:
            request_id.encode("utf-8")
        except UnicodeEncodeError:
            return None
    return request_id


def shown(surface: Any) -> dict[str, Any]:
    """The budget, the spend and the items of a rendered surface, as `cortex_recall` and `cortex_state` return them
    as structured content."""
    return {
        "budget": surface.budget,
        "tokens": surface.tokens,
        "items": [
            {"id": i.id, "kind": i.kind, "subject": i.subject, "labels": list(i.labels), "tokens": tokens}
            for i, tokens in zip(surface.items, surface.spent(), strict=True)
        ],
    }


def tool_answer(name: str, surface: Any) -> tuple[str, dict[str, Any]]:
    """The text and structured content of `cortex_recall` or `cortex_state` for a rendered surface."""
    data = shown(surface)
    return str(surface.text), ({"topic": surface.topic, **data} if name == "cortex_recall" else data)
