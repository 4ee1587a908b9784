"""The MCP server's stdio transport: every request read from the wire is answered, even one the SDK cannot parse
(`wire.screen` refuses it here), and one still in flight when the client closes stdin is answered before the
server exits; `serve`'s early answers are not sent twice (a drift from the SDK's answer is logged).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import IO, TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from cortex_engine.adapters.wire import INVALID_PARAMS, Refusal, screen

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


# How long a server whose input has ended still waits for the answers to requests it already read.
DRAIN_SECONDS = 300.0


class _InFlight:
    """The ids of requests read from the wire and not answered yet, so stdin closing never drops one."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self._changed = anyio.Event()

    def read(self, line: str) -> None:
        """Note a request read from the wire; a cancellation withdraws the request it names (no answer is due)."""
        if '"id"' not in line and "cancelled" not in line:
            return
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return  # the SDK answers a malformed line itself, without an id to wait for
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return
        if "id" in message:
            self.ids.add(_id_key(message["id"]))
        elif message["method"] == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict):
                self.answered(params.get("requestId"))

    def answered(self, request_id: Any) -> None:
        """Note that `request_id` got its answer."""
        self.ids.discard(_id_key(request_id))
        self._changed.set()

    async def drained(self, limit: float = DRAIN_SECONDS) -> None:
        """Return once every request read has been answered (or after `limit` seconds, whatever is left)."""
        with anyio.move_on_after(limit):
            while self.ids:
                self._changed = anyio.Event()
                await self._changed.wait()


def _id_key(request_id: Any) -> Any:
    """A hashable key for a JSON-RPC id (a number and a string that look alike stay distinct)."""
    return (type(request_id).__name__, request_id) if isinstance(request_id, (int, str)) else repr(request_id)


class _AnsweringWriter:
    """The transport's write stream, noting each response's id in `_InFlight` once it is sent."""

    def __init__(self, stream: Any, in_flight: _InFlight, answered: list[dict[str, Any]] | None = None) -> None:
        self._stream = stream
        self._in_flight = in_flight
        self._answered = list(answered or [])

    async def send(self, item: Any) -> None:
        """Send `item`; when it answers a request, that request is no longer in flight.

        The SDK's own answer to a request that `serve` already answered (`initialize`, `tools/list`, `ping`) is not
        sent again; when it differs from the one sent, the difference is logged (the SDK changed what it declares,
        or the tool table is stale: `python -m cortex_engine.adapters.mcp_server --write-tool-table`).
        """
        message = getattr(item, "message", None)
        key = _id_key(getattr(message, "id", None)) if message is not None and not hasattr(message, "method") else None
        early = next((a for a in self._answered if key is not None and _id_key(a["id"]) == key), None)
        if early is not None and message is not None:
            self._answered.remove(early)
            mine = json.loads(json.dumps(early))
            theirs = json.loads(message.model_dump_json(by_alias=True, exclude_none=True))
            if mine != theirs:
                logging.getLogger("cortex.serve").warning(
                    "a request answered early differs from the SDK's answer: %s != %s",
                    json.dumps(mine)[:2000],
                    json.dumps(theirs)[:2000],
                )
            self._in_flight.answered(message.id)
            return
        await self._stream.send(item)
        if message is not None and not hasattr(message, "method") and hasattr(message, "id"):
            self._in_flight.answered(message.id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def __aenter__(self) -> _AnsweringWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stream.aclose()


class _GuardedStdin:
    """The wire's lines for the SDK, minus requests it could not parse; those are answered here with an error.

    At end of input the stream stays open until every request already read has been answered: the SDK ends
    its serving loop (cancelling handlers still running) as soon as its input ends.
    """

    def __init__(self, lines: Any, preamble: list[str] | None = None) -> None:
        self._lines = lines
        self._preamble = preamble or []
        self._answer: Any = None
        self._ready = anyio.Event()
        self.in_flight = _InFlight()

    def answer_on(self, write_stream: Any) -> None:
        """Where refusals go: the transport's write stream (known only once the transport is up)."""
        self._answer = write_stream
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        for line in self._preamble:
            async for passed in self._pass(line):
                yield passed
        async for line in self._lines:
            async for passed in self._pass(line):
                yield passed
        await self.in_flight.drained()

    async def _pass(self, line: str) -> AsyncIterator[str]:
        """`line` for the SDK, or nothing when it was answered here with a refusal (`wire.screen`)."""
        bad = screen(line)
        if bad is None:
            self.in_flight.read(line)
            yield line
            return
        await self._ready.wait()
        await self._answer.send(SessionMessage(_refusal(bad)))


def _refusal(bad: Refusal) -> types.JSONRPCMessage:
    """A tool call's is_error result for text it cannot hold, else a JSON-RPC error."""
    if bad.code == INVALID_PARAMS and bad.method == "tools/call" and bad.request_id is not None:
        result = types.CallToolResult(content=[types.TextContent(type="text", text=bad.message)], is_error=True)
        return types.JSONRPCResponse(
            jsonrpc="2.0", id=bad.request_id, result=result.model_dump(by_alias=True, exclude_unset=True)
        )
    return types.JSONRPCError(
        jsonrpc="2.0", id=bad.request_id, error=types.ErrorData(code=bad.code, message=bad.message)
    )


async def serve_stdio(server: MCPServer, wire: IO[str], preamble: list[str], answered: list[dict[str, Any]]) -> None:
    """`server.run("stdio")` over `wire` (already claimed from fd 0 by `wire.claim_stdin`), with every request
    answered even when the SDK cannot parse its text; `preamble` holds lines `serve` read before the SDK was
    loaded, and `answered` the answers it already sent to some of them (`initialize`, `tools/list`, `ping`).
    """
    stdin = _GuardedStdin(anyio.wrap_file(wire), preamble)
    lowlevel = server._lowlevel_server  # noqa: SLF001 - run_stdio_async offers no hook on unparseable lines
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]
        writer = _AnsweringWriter(write_stream, stdin.in_flight, answered)
        stdin.answer_on(writer)
        await lowlevel.run(read_stream, writer, lowlevel.create_initialization_options())
