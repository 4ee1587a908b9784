"""`cortex serve`: the engine headless over stdio as an MCP server (the only module that imports `mcp`).

Every tool makes the same engine call as the matching CLI command and returns the text the CLI prints.
Calls share one warm engine for the server's working directory, under one lock (plain tools run in
worker threads): its store connection and git location are kept, its scope is re-read from HEAD on
every call so a branch switch or a commit made since is seen, and it is reopened when the git directory
or the store file is replaced or the store's schema changed; the checkout inventory refreshes itself
when HEAD or the index moves. Every tool output is booked in the token ledger exactly once: the surfaces (`state`, `recall`, `brief`) book themselves, everything else is
booked here. Expected failures (a `CortexError`, a refused store) come back as tool errors carrying
their message; stdout carries nothing but the protocol. Every request is answered: one whose text the
SDK would drop unanswered (not JSON, nested too deep, not one JSON-RPC request, a lone UTF-16 surrogate in
its text or its id: `wire.screen`) gets an error here, and the server goes on serving; one
still in flight when the client closes stdin is answered before the server exits.
"""

from __future__ import annotations

import atexit
import inspect
import json
import logging
import os
import sqlite3
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import Field, ValidationError

from cortex_engine.base.errors import CortexError
from cortex_engine.engine import MAX_BUDGET, MIN_BUDGET, open_engine
from cortex_engine.base.labels import CONTESTED, GLOSSARY, reference
from cortex_engine.results import ROUTE, messages, store_error
from cortex_engine.wire import (INSTRUCTIONS, INVALID_PARAMS, SERVER_NAME, SERVER_VERSION, Refusal, claim_stdin,
                               screen)

if TYPE_CHECKING:
    from cortex_engine.engine import Engine


DISENGAGED = "Cortex disengaged. Event logging and gates disabled for this session."

NoteKind = Literal["insight", "decision", "intent", "blocker", "focus"]
Status = Literal["resolved", "superseded"]
Detail = Literal["none", "scores"]
T = TypeVar("T")

StateBudget = Annotated[int, Field(ge=MIN_BUDGET, le=MAX_BUDGET, description="Most tokens the answer may use (default 800).")]
RecallBudget = Annotated[int, Field(ge=MIN_BUDGET, le=MAX_BUDGET, description="Most tokens the answer may use (default 600).")]
BriefBudget = Annotated[int, Field(ge=MIN_BUDGET, le=MAX_BUDGET, description="Most tokens the answer may use (default 450).")]


class CortexTools:
    """The engine calls behind the tools, on one warm engine per server, serialized by a lock."""

    def __init__(self, cwd: str, opener: Callable[[str], Engine] = open_engine) -> None:
        """Serve the store of `cwd` (the directory Claude Code started the server in)."""
        self.cwd = cwd
        self._open = opener
        self._lock = threading.Lock()
        self._engine: Engine | None = None

    def _warm(self) -> Engine:
        """The server's engine: kept between calls (store connection, git location), its scope re-read from
        HEAD on every call; reopened when the git directory or the store file went away or was replaced."""
        engine = self._engine
        if engine is not None and not engine.rescope():
            self.close()
            engine = None
        if engine is None:
            engine = self._engine = self._open(self.cwd)
        return engine

    def close(self) -> None:
        """Close the warm engine, if any (the next call opens a new one)."""
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()

    @contextmanager
    def engine(self) -> Iterator[Engine]:
        """The engine for one call; a `CortexError` becomes a tool error with its message.

        Plain tools run in worker threads: the lock keeps the one connection to one call at a time.
        """
        with self._lock:
            try:
                engine = self._warm()
                try:
                    yield engine
                except sqlite3.Error as exc:
                    self.close()  # a damaged or replaced store: the next call starts afresh
                    raise store_error(exc, engine.identity.db_path) from exc
            except CortexError as exc:
                raise ToolError(" ".join(messages.error_text(exc, "mcp").split())) from exc
            except sqlite3.OperationalError as exc:
                # Typically another process holding the write lock past the busy timeout: worth a retry.
                raise ToolError(f"the Cortex store is busy or unreadable ({exc}); try again in a moment") from exc

    def booked(self, channel: str, call: Callable[[Engine], str], *, consulted: bool = False) -> str:
        """Run `call` on an engine and book its text once on `channel` against the current session."""
        with self.engine() as engine:
            text = call(engine)
            if consulted:
                engine.mark_consulted()
            session = engine.current_session()
            engine.book_text(channel, text, session["id"] if session is not None else None)
            return text

    def surface(self, call: Callable[[Engine], Any]) -> str:
        """Run a surface method (it books and marks consulted itself) and return its text."""
        with self.engine() as engine:
            return str(call(engine).text)


def _as_list(value: list[T] | T) -> list[T]:
    """A bare value where a list is expected is a list of one."""
    return value if isinstance(value, list) else [value]


def _query(entry: dict[str, Any] | str) -> dict[str, Any]:
    """A search-ledger query; a bare string is a pattern."""
    return {"pattern": entry} if isinstance(entry, str) else dict(entry)


def argument_problem(tool: str, error: ValidationError) -> str:
    """A schema violation in MCP words: the tool, each parameter and what it accepts (no pydantic dump)."""
    problems = []
    for err in error.errors():
        param = ".".join(str(part) for part in err["loc"]) or "arguments"
        kind, ctx = err["type"], err.get("ctx") or {}
        if kind == "missing":
            problems.append(f"parameter {param} is required")
        elif kind == "literal_error":
            accepted = str(ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
            problems.append(f"parameter {param} must be one of {accepted}")
        else:
            message = str(err["msg"]).removeprefix("Input should be ").removeprefix("Value error, ")
            problems.append(f"parameter {param} must be {message}" if err["msg"].startswith("Input should be")
                            else f"parameter {param}: {message}")
    return f"{tool}: " + "; ".join(problems)


class CortexServer(MCPServer):
    """The SDK's server, with argument errors reported in MCP words and tool descriptions without indentation."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Call a tool; a schema violation becomes a one-line ToolError naming the tool and the parameters."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(argument_problem(name, exc.__cause__)) from exc.__cause__
            raise


def build_server(cwd: str, opener: Callable[[str], Engine] = open_engine) -> MCPServer:
    """The MCP server with the Cortex tools (the seed's 13 and `cortex_reanchor`), serving the store of `cwd`."""
    tools = CortexTools(cwd, opener)
    atexit.register(tools.close)
    server: MCPServer = CortexServer(SERVER_NAME, version=SERVER_VERSION, instructions=INSTRUCTIONS, log_level="WARNING")

    def tool(**kw: Any) -> Callable[[Callable[..., str]], Callable[..., str]]:
        """`server.tool`, with the docstring's indentation removed (inspect.cleandoc) for the description, and
        `{contested}`, `{drifted}` and `{labels}` filled in from the one label vocabulary (`base/labels.py`)."""
        def register(fn: Callable[..., str]) -> Callable[..., str]:
            text = (inspect.cleandoc(fn.__doc__ or "").replace("{contested}", CONTESTED).replace("{labels}", GLOSSARY)
                    .replace("{drifted}", reference("drifted: …")))
            return server.tool(description=text, **kw)(fn)
        return register

    @tool(structured_output=False)
    def cortex_route() -> str:
        """Explain what Cortex remembers and which cortex_* tool answers what. Call once at the start of work."""
        return tools.booked("route", lambda e: ROUTE, consulted=True)

    @tool(structured_output=False)
    def cortex_state(budget: StateBudget = 800) -> str:
        """The branch's working state: this session's notes first, then the snapshot, decisions and evidence.

        Call at the start of a task or after a break to see where the work stands.
        """
        return tools.surface(lambda e: e.state(budget))

    @tool(structured_output=False)
    def cortex_note(
        kind: Annotated[NoteKind, Field(description="decision: a choice made; intent: what you will do next; blocker: what "
                                                    "stops progress; focus: the current goal; insight: a fact learned.")],
        content: Annotated[str, Field(min_length=1, description="The note itself, one or two sentences.")],
        subject: Annotated[str | None, Field(description="What the note is about, a few words (e.g. 'queue engine'). "
                                                         "Required for every kind except insight.")] = None,
        alternatives: Annotated[list[str] | None, Field(description="Options considered and rejected, each with why.")] = None,
    ) -> str:
        """Record a durable note. A decision on a subject supersedes earlier ones, unless it contradicts an
        active decision: then both are marked {contested} until someone calls cortex_resolve.
        """
        def write(engine: Engine) -> str:
            return messages.note_written(engine.note(kind, content, subject, alternatives))

        return tools.booked("note", write)

    @tool(structured_output=False)
    def cortex_resolve(
        note_id: Annotated[str | None, Field(description="The note (or memory item) id to close; "
                                                         "required when the subject is contested.")] = None,
        subject: Annotated[str | None, Field(description="Close the active note on this subject instead of naming an id.")] = None,
        status: Annotated[Status, Field(description="resolved: it no longer applies; superseded: replaced by "
                                                    "something newer.")] = "resolved",
        replacement: Annotated[str | None, Field(description="Text of the note that replaces it (same kind and subject).")] = None,
    ) -> str:
        """Mark a note resolved or superseded, optionally writing its replacement. Closes a contest when
        one side is resolved. Give note_id or subject.
        """
        def resolve(engine: Engine) -> str:
            return messages.resolved(engine.resolve(note_id, subject=subject, status=status, replacement=replacement))

        return tools.booked("resolve", resolve)

    @tool(structured_output=False)
    def cortex_recall(
        topic: Annotated[str, Field(min_length=1, description="What you want evidence about, in a few words.")],
        budget: RecallBudget = 600,
        detail: Annotated[Detail, Field(description="scores: also show each line's ranking score.")] = "none",
        limit: Annotated[int | None, Field(ge=1, le=50, description="Show at most this many items (1-50); by "
                                                                     "default as many as fit the budget.")] = None,
    ) -> str:
        """Evidence for a topic: a lead line, then timestamped lines labelled {labels} when they no longer
        simply hold. Call before deciding something earlier work may have settled.
        """
        return tools.surface(lambda e: e.recall(topic, budget, None if detail == "none" else detail, limit=limit))

    @tool(structured_output=False)
    def cortex_brief(
        topic: Annotated[str, Field(min_length=1, description="The task or area to brief on.")],
        for_agent: Annotated[str | None, Field(description="Who the brief is for (e.g. 'reviewer', a subagent type).")] = None,
        budget: BriefBudget = 450,
    ) -> str:
        """A smaller, decisions-first brief on a topic, e.g. to paste into a subagent's prompt before delegating."""
        return tools.surface(lambda e: e.brief(topic, for_agent, budget))

    @tool(structured_output=False)
    def cortex_suggest_notes(
        session_id: Annotated[str | None, Field(description="A session id; default the current session.")] = None,
    ) -> str:
        """Suggest notes worth saving from a session's activity (JSON). Writes nothing; save with cortex_note."""
        return tools.booked("suggest_notes", lambda e: json.dumps(e.suggest_notes(session_id), indent=2, ensure_ascii=False))

    @tool(structured_output=False)
    def cortex_validate_memory(
        topic: Annotated[str | None, Field(description="Check the memories about this topic; default every memory "
                                                       "that names a file.")] = None,
    ) -> str:
        """Audit memories' file references against the checkout as it is now (JSON: exists, missing, moved).
        Deletes nothing.
        """
        return tools.booked(
            "validate_memory",
            lambda e: json.dumps(e.validate_memory(topic or None), indent=2, ensure_ascii=False),
            consulted=bool(topic),
        )

    @tool(structured_output=False)
    def cortex_reanchor(
        item_id: Annotated[str, Field(min_length=1, description="The drifted memory's id (or its note id, or an "
                                                                "8+ character prefix), as cortex_validate_memory lists it.")],
    ) -> str:
        """Re-anchor a memory labelled {drifted} to the code as it is now, once you have read the changed code
        and checked that the memory still holds (otherwise correct it with a new note). Audited; refused when
        nothing about the memory drifted.
        """
        return tools.booked("reanchor", lambda e: messages.reanchored(e.reanchor(item_id)))

    @tool(structured_output=False)
    def cortex_read_ledger(
        paths: Annotated[list[str] | str, Field(description="File paths, relative to the repository or absolute.")],
    ) -> str:
        """Were these files already read in this branch, and are they unchanged since? One verdict per file
        (unread, unchanged-since, changed-since, edited-by-you-since), decided by re-hashing. Skip re-reading
        a file whose verdict is unchanged-since.
        """
        return tools.booked("read_ledger", lambda e: "\n".join(v.line() for v in e.read_ledger(_as_list(paths))))

    @tool(structured_output=False)
    def cortex_search_ledger(
        queries: Annotated[
            list[dict[str, Any] | str] | str,
            Field(description="Searches to check: each {pattern, path?, glob?, type?, caseInsensitive?, multiline?}, "
                              "or just the pattern."),
        ],
    ) -> str:
        """Did this search already return nothing here, and provably still would? Verdicts: no-matches-at
        <head>, miss, or unknown. Skip a search whose verdict is no-matches.
        """
        usable = [_query(q) for q in (queries if isinstance(queries, list) else [queries])]
        if not any(isinstance(q.get("pattern"), str) and q["pattern"] for q in usable):
            raise ToolError("No usable queries: each needs a non-empty pattern.")

        def search(engine: Engine) -> str:
            return "\n".join(v.line() for v in engine.search_ledger(usable))

        return tools.booked("search_ledger", search)

    @tool(structured_output=False)
    def cortex_engage() -> str:
        """Re-enable Cortex capture and hints for this worktree, and return the working state."""
        def engage(engine: Engine) -> Any:
            engine.engage()
            return engine.state()

        return tools.surface(engage)

    @tool(structured_output=False)
    def cortex_disengage() -> str:
        """Turn Cortex capture, hints and gates off for this worktree until cortex_engage or the next session."""
        def disengage(engine: Engine) -> str:
            engine.disengage()
            return DISENGAGED

        return tools.booked("disengage", disengage)

    @tool(structured_output=False)
    def cortex_summarize(
        what: Annotated[str | None, Field(description="One line on what this session did, to lead the summary.")] = None,
    ) -> str:
        """Write this session's summary now (a checkpoint) and return it."""
        return tools.booked("summarize", lambda e: e.summarize(what or None))

    return server


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

    def __init__(self, stream: Any, in_flight: _InFlight, answered: dict[str, Any] | None = None) -> None:
        self._stream = stream
        self._in_flight = in_flight
        self._answered = answered

    async def send(self, item: Any) -> None:
        """Send `item`; when it answers a request, that request is no longer in flight.

        The SDK's own answer to an `initialize` that `serve` already answered is not sent again; when it
        differs from the one sent, the difference is logged (the SDK changed what it declares).
        """
        message = getattr(item, "message", None)
        answered = self._answered
        if answered is not None and message is not None and getattr(message, "id", None) == answered["id"]:
            self._answered = None
            mine = json.loads(json.dumps(answered))
            theirs = json.loads(message.model_dump_json(by_alias=True, exclude_none=True))
            if mine != theirs:
                logging.getLogger("cortex.serve").warning("initialize answered early differs from the SDK's: %s != %s",
                                                          json.dumps(mine), json.dumps(theirs))
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
        return types.JSONRPCResponse(jsonrpc="2.0", id=bad.request_id,
                                     result=result.model_dump(by_alias=True, exclude_unset=True))
    return types.JSONRPCError(jsonrpc="2.0", id=bad.request_id, error=types.ErrorData(code=bad.code, message=bad.message))


async def _serve_stdio(server: MCPServer, wire: IO[str], preamble: list[str], answered: dict[str, Any] | None) -> None:
    """`server.run("stdio")` over `wire` (already claimed from fd 0 by `wire.claim_stdin`), with every request
    answered even when the SDK cannot parse its text; `preamble` holds lines `serve` read before the SDK was
    loaded, and `answered` the `initialize` answer it already sent for the first of them.
    """
    stdin = _GuardedStdin(anyio.wrap_file(wire), preamble)
    lowlevel = server._lowlevel_server  # noqa: SLF001 - run_stdio_async offers no hook on unparseable lines
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]
        writer = _AnsweringWriter(write_stream, stdin.in_flight, answered)
        stdin.answer_on(writer)
        await lowlevel.run(read_stream, writer, lowlevel.create_initialization_options())


def main(cwd: str | None = None, *, stdin: IO[str] | None = None, preamble: list[str] | None = None,
         answered: dict[str, Any] | None = None) -> int:
    """Serve the store of `cwd` over stdio until the client closes the connection (see `serve.main`)."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="cortex serve: %(levelname)s %(message)s")
    server = build_server(os.path.realpath(cwd or os.getcwd()))
    wire = stdin if stdin is not None else claim_stdin()
    try:
        anyio.run(_serve_stdio, server, wire, preamble or [], answered)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
