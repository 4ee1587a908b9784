"""`cortex serve` start-up: answer the client's `initialize` before the MCP SDK is imported.

Importing the official `mcp` SDK costs about a second of CPU (its package imports the client, every
protocol version's pydantic models and the HTTP transports), far past the half second a client should
wait for `initialize`. The answer to `initialize` depends on nothing the SDK computes at run time: the
server's name, version, instructions and capabilities are fixed, and the protocol version follows the
SDK's own rule over the SDK's own version registry (read here from `mcp_types/version.py` without
importing the package). So the first line is read and, when it is a well-formed `initialize`, answered
here; then the SDK is imported and served the same line as well, so its session state is exactly what it
would be, and its own answer to that line is compared with ours and dropped (`mcp_server` does that).
Anything else on the first line goes to the SDK untouched.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from cortex_engine.adapters.wire import INSTRUCTIONS, SERVER_NAME, SERVER_VERSION, claim_stdin, tool_answer

# What the SDK's MCPServer declares for a server that registers tools only (checked against the SDK's own
# answer on every start: a mismatch is logged by `mcp_server`).
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
    "tools": {"listChanged": False},
}


def handshake_versions() -> tuple[str, ...] | None:
    """The protocol versions the installed SDK negotiates through `initialize`, newest last; None if unknown.

    Read as a literal from the SDK's `mcp_types/version.py` (parsed, not executed or imported: importing
    `mcp_types` loads every protocol model).
    """
    try:
        spec = importlib.util.find_spec("mcp_types")
        if spec is None or not spec.submodule_search_locations:
            return None
        path = os.path.join(list(spec.submodule_search_locations)[0], "version.py")
        with open(path, encoding="utf-8") as source:
            tree = ast.parse(source.read(), path)
        versions: object = None
        target: ast.expr
        value: ast.expr | None
        for node in tree.body:
            if isinstance(node, ast.AnnAssign):
                target, value = node.target, node.value
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            else:
                continue
            if isinstance(target, ast.Name) and target.id == "HANDSHAKE_PROTOCOL_VERSIONS" and value is not None:
                versions = ast.literal_eval(value)
    except (OSError, SyntaxError, ValueError, TypeError, ImportError, UnicodeDecodeError):
        return None
    if isinstance(versions, tuple) and versions and all(isinstance(v, str) for v in versions):
        return versions
    return None


def initialize_answer(line: str, versions: tuple[str, ...]) -> dict[str, Any] | None:
    """The JSON-RPC answer to `line` when it is a well-formed `initialize` request, else None (the SDK decides)."""
    if "initialize" not in line or "\\u" in line:
        return None  # not a handshake, or escapes (a lone surrogate?) better left to the SDK's guarded path
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize" or message.get("jsonrpc") != "2.0":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)) or not isinstance(params, dict):
        return None
    requested, client = params.get("protocolVersion"), params.get("clientInfo")
    if (
        not isinstance(requested, str)
        or not isinstance(params.get("capabilities"), dict)
        or not isinstance(client, dict)
    ):
        return None
    if not isinstance(client.get("name"), str) or not isinstance(client.get("version"), str) or "_meta" in params:
        return None  # an unusual handshake: the SDK validates and answers it itself
    result = {
        "protocolVersion": requested if requested in versions else versions[-1],
        "capabilities": CAPABILITIES,
        "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION},
        "instructions": INSTRUCTIONS,
    }
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


EARLY_METHODS = ("tools/list", "ping")
"""Requests answered before the SDK is loaded once `initialize` was: their answers are fixed (a client
asks `tools/list` right after the handshake, and waited 2-7 s for the SDK import on a loaded machine)."""


def early_answer(line: str, version: str) -> dict[str, Any] | None:
    """The answer to `line` when it is a plain `tools/list` (no cursor) or `ping`, else None (the SDK decides).

    The tool list is from `tool_table.json`, the SDK's own answer for the negotiated `version`, recorded when the tools
    change (an unknown version is left to the SDK); the SDK is still
    served the line and its answer is compared with this one and dropped (`mcp_server`), so a drift is logged.
    """
    if not any(method in line for method in EARLY_METHODS) or "\\u" in line:
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") not in EARLY_METHODS:
        return None
    request_id, params = message.get("id"), message.get("params", {})
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)) or params not in ({}, None):
        return None  # a cursor, `_meta` or anything unusual: the SDK validates and answers it itself
    if message["method"] == "ping":
        return {"jsonrpc": "2.0", "id": request_id, "result": {}}
    result = recorded_tools(version)
    return None if result is None else {"jsonrpc": "2.0", "id": request_id, "result": result}


TOOL_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tool_table.json")


def recorded_tools(version: str) -> dict[str, Any] | None:
    """The SDK's `tools/list` result for a negotiated protocol version, as recorded in `tool_table.json` (written
    by `python -m cortex_engine.adapters.mcp_server --write-tool-table`); None for a version it does not hold."""
    try:
        with open(TOOL_TABLE, encoding="utf-8") as source:
            table = json.load(source)
        result = table["bodies"][table["by_version"][version]]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None
    return result if isinstance(result, dict) else None


CALL_DEFAULTS: dict[str, dict[str, Any]] = {
    "cortex_recall": {"budget": 600, "detail": "none", "limit": None},
    "cortex_state": {"budget": 800},
}
"""The tools `serve` can answer before the SDK is loaded, with their arguments' defaults (as `mcp_server` declares
them): a session's first call is usually one of them, and it no longer waits for the SDK's import."""


def _int_in(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def call_arguments(line: str) -> tuple[object, str, dict[str, Any]] | None:
    """(id, tool, arguments with defaults) when `line` is a plainly valid `tools/call` of `cortex_recall` or
    `cortex_state`, else None: anything the SDK would coerce, refuse or treat specially is left to it."""
    if "tools/call" not in line or "\\u" in line:
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "tools/call":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)) or not isinstance(params, dict):
        return None
    name, arguments = params.get("name"), params.get("arguments", {})
    if set(params) - {"name", "arguments"} or name not in CALL_DEFAULTS or not isinstance(arguments, dict):
        return None
    from cortex_engine.engine import MAX_BUDGET, MIN_BUDGET

    given = {**CALL_DEFAULTS[str(name)], **arguments}
    if set(given) != set(CALL_DEFAULTS[str(name)]) | ({"topic"} if name == "cortex_recall" else set()):
        return None
    if not _int_in(given["budget"], MIN_BUDGET, MAX_BUDGET):
        return None
    if name == "cortex_recall" and not (
        isinstance(given["topic"], str)
        and given["topic"]
        and given["detail"] in ("none", "scores")
        and (given["limit"] is None or _int_in(given["limit"], 1, 50))
    ):
        return None
    return request_id, str(name), given


def early_call(line: str, version: str, cwd: str, warm: list[Any]) -> dict[str, Any] | None:
    """The answer to an early `cortex_recall` or `cortex_state`, made by the engine directly and shaped as the SDK
    shapes a tool's answer for `version` (`tool_table.json`'s recorded envelope); None when the SDK must answer it
    (anything unusual, an engine error, no envelope for the version). The line is then not given to the SDK: the
    call ran once, booked once."""
    call = call_arguments(line)
    envelope = _envelope(version)
    if call is None or envelope is None:
        return None
    request_id, name, args = call
    try:
        engine = _warm(cwd, warm)
        if name == "cortex_recall":
            detail = None if args["detail"] == "none" else args["detail"]
            surface = engine.recall(args["topic"], args["budget"], detail, limit=args["limit"])
        else:
            surface = engine.state(args["budget"])
    except Exception:  # noqa: BLE001 - the SDK answers the call itself, with its error shape
        for engine in warm:
            engine.close()
        warm.clear()
        return None
    text, data = tool_answer(name, surface)
    result = json.loads(json.dumps(envelope))
    result["content"][0]["text"] = text
    if "structuredContent" in result:
        result["structuredContent"] = data
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _warm(cwd: str, warm: list[Any]) -> Any:
    """The engine early calls share (as the SDK's tools share theirs, which it becomes): opened once, its scope
    re-read from HEAD on every call, reopened when the repository or the store was replaced."""
    if warm and not warm[0].rescope():
        warm.pop().close()
    if not warm:
        from cortex_engine.engine import open_engine

        warm.append(open_engine(os.path.realpath(cwd or os.getcwd())))
    return warm[0]


def _envelope(version: str) -> dict[str, Any] | None:
    """The recorded shape of a tool's answer for `version`, when it is the plain one `early_call` knows how to fill."""
    try:
        with open(TOOL_TABLE, encoding="utf-8") as source:
            envelope = json.load(source)["call_envelopes"][version]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(envelope, dict) or envelope.get("content") != [{"text": "T", "type": "text"}]:
        return None
    if set(envelope) - {"content", "isError", "structuredContent"} or envelope.get("isError") is not False:
        return None
    if envelope.get("structuredContent", {"k": "v"}) != {"k": "v"}:
        return None
    return envelope


def _notification(line: str) -> bool:
    """Whether `line` is a notification (`notifications/…`, no id): nothing to answer, it waits for the SDK."""
    if "notifications/" not in line:
        return False
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return (
        isinstance(message, dict)
        and "id" not in message
        and str(message.get("method", "")).startswith("notifications/")
    )


def _send(answer: dict[str, Any]) -> None:
    sys.stdout.buffer.write((json.dumps(answer, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
    sys.stdout.buffer.flush()


QUIET_SECONDS = 0.05
"""How long the wire must stay quiet (every line read answered, none waiting) before the SDK import starts."""


class QuietLoader:
    """Runs `load` (the SDK's import, about a second of CPU) in a background thread once the wire has gone quiet.

    A client that sends its first call with the handshake (all at once) would otherwise have that call answered
    while the import competes with it for the interpreter, which doubled the time to the first answer. The reader
    marks each line it takes with `busy()` and each wait for the next with `idle()`; the import starts after
    `quiet` seconds of `idle` with no new line. `end()` stops a loader that has not started and waits for one that
    has (the main thread then imports whatever is left itself).
    """

    def __init__(self, load: Callable[[], None], quiet: float = QUIET_SECONDS) -> None:
        self._load, self._quiet = load, quiet
        self._changed = threading.Condition()
        self._busy, self._lines, self._ended = True, 0, False
        self.started = False
        self._thread = threading.Thread(target=self._run, name="cortex-sdk-import", daemon=True)
        self._thread.start()

    def busy(self) -> None:
        """A line was read: hold the import back while it is answered."""
        with self._changed:
            self._busy, self._lines = True, self._lines + 1

    def idle(self) -> None:
        """The reader waits for the next line."""
        with self._changed:
            self._busy = False
            self._changed.notify_all()

    def end(self) -> None:
        """No more waiting for quiet: stop if the import has not started, else let it finish."""
        with self._changed:
            self._ended = True
            self._changed.notify_all()
        self._thread.join()

    def _run(self) -> None:
        with self._changed:
            while True:
                if self._ended:
                    return
                if self._busy:
                    self._changed.wait()
                    continue
                seen = self._lines
                self._changed.wait(self._quiet)
                if self._ended:
                    return
                if not self._busy and seen == self._lines:
                    break
            self.started = True
        self._load()


def _import_sdk() -> None:
    """Import the SDK server (its errors are reported by the main thread, which imports it again)."""
    try:
        importlib.import_module("cortex_engine.adapters.mcp_server")
    except Exception:  # noqa: BLE001 - the main thread imports it again and reports the error itself
        pass


def main(cwd: str | None = None) -> int:
    """Serve the store of `cwd` over stdio: `initialize`, then `tools/list`, `ping` and a plain recall or state,
    answered at once; the SDK loads in the background once the wire goes quiet and takes over at the first request
    that needs it (or at end of input)."""
    stdin = claim_stdin()
    first = stdin.readline()
    versions = handshake_versions()
    answer = initialize_answer(first, versions) if first and versions else None
    preamble = [first] if first else []
    answered: list[dict[str, Any]] = []
    warm: list[Any] = []
    """The engine early calls opened, handed to the SDK's tools (one repository lookup for the whole session)."""
    if answer is not None:
        _send(answer)
        answered.append(answer)
        loading = QuietLoader(_import_sdk)
        version = answer["result"]["protocolVersion"]
        while True:
            loading.idle()
            line = stdin.readline()
            loading.busy()
            if not line:
                break
            called = early_call(line, version, cwd or os.getcwd(), warm)
            if called is not None:
                _send(called)  # answered by the engine; the SDK never sees this call (it would run it again)
                continue
            preamble.append(line)
            early = early_answer(line, version)
            if early is not None:
                _send(early)
                answered.append(early)
            elif line.strip() and not _notification(line):
                break  # a request only the SDK can answer: hand it everything read so far
        loading.end()
    from cortex_engine.adapters.mcp_server import main as serve_sdk

    return serve_sdk(cwd, stdin=stdin, preamble=preamble, answered=answered, engine=warm[0] if warm else None)
