"""`cortex serve`: the engine headless over stdio as an MCP server (with `mcp_transport`, all that imports `mcp`).

Every tool makes the same engine call as the matching CLI command and returns the text the CLI prints.
Calls share one warm engine for the server's working directory, under one lock (plain tools run in
worker threads): its store connection and git location are kept, its scope is re-read from HEAD on
every call so a branch switch or a commit made since is seen, and it is reopened when the git directory
or the store file is replaced or the store's schema changed; the checkout inventory refreshes itself
when HEAD or the index moves. Every tool output is booked in the token ledger exactly once: the surfaces (`state`,
`recall`, `brief`) book themselves, everything else is booked here. Expected failures (a `CortexError`, a refused store)
come back as tool errors carrying their message; stdout carries nothing but the protocol. Every request is answered: one
whose text the SDK would drop unanswered (not JSON, nested too deep, not one JSON-RPC request, a lone UTF-16 surrogate
in its text or its id: `wire.screen`) gets an error (`mcp_transport`), and the server goes on serving; one still in
flight when the client closes stdin is answered before the server exits.
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.message import SessionMessage
from pydantic import Field, ValidationError
from typing_extensions import TypedDict

from cortex_engine.adapters.mcp_transport import serve_stdio
from cortex_engine.adapters.wire import INSTRUCTIONS, SERVER_NAME, SERVER_VERSION, claim_stdin, tool_answer
from cortex_engine.base.errors import CortexError, StoreUnavailable
from cortex_engine.base.labels import CONTESTED, GLOSSARY, reference
from cortex_engine.engine import MAX_BUDGET, MIN_BUDGET, open_engine, semantic_installed
from cortex_engine.results import ROUTE, messages, store_error

if TYPE_CHECKING:
    from cortex_engine.engine import Engine


DISENGAGED = "Cortex disengaged. Event logging and gates disabled for this session."

NoteKind = Literal["insight", "decision", "intent", "blocker", "focus"]
Status = Literal["resolved", "superseded"]
Detail = Literal["none", "scores"]
T = TypeVar("T")

StateBudget = Annotated[
    int, Field(ge=MIN_BUDGET, le=MAX_BUDGET, description="Most tokens the answer may use (default 800).")
]
RecallBudget = Annotated[
    int, Field(ge=MIN_BUDGET, le=MAX_BUDGET, description="Most tokens the answer may use (default 600).")
]
BriefBudget = Annotated[
    int, Field(ge=MIN_BUDGET, le=MAX_BUDGET, description="Most tokens the answer may use (default 450).")
]


ANNOTATIONS: dict[str, tuple[bool, bool, bool]] = {
    # tool: (readOnlyHint, destructiveHint, idempotentHint); openWorldHint is False for every tool (local only).
    # A read books its tokens in the ledger and reinforces what it showed: bookkeeping, not a change the agent makes.
    "cortex_route": (True, False, True),
    "cortex_state": (True, False, True),
    "cortex_recall": (True, False, True),
    "cortex_brief": (True, False, True),
    "cortex_suggest_notes": (True, False, True),
    "cortex_validate_memory": (True, False, True),
    "cortex_read_ledger": (True, False, True),
    "cortex_search_ledger": (True, False, True),
    "cortex_note": (False, False, False),
    "cortex_resolve": (False, True, False),
    "cortex_reanchor": (False, True, True),
    "cortex_engage": (False, False, True),
    "cortex_disengage": (False, False, True),
    "cortex_summarize": (False, False, False),
}
"""How each tool behaves, for the client (MCP tool annotations)."""


class Suggestion(TypedDict):
    """A note worth saving: its kind, subject, text, how sure the classifier is, and the evidence lines."""

    kind: str
    subject: str | None
    content: str
    confidence: float
    evidence: list[str]


class Suggestions(TypedDict):
    """`cortex_suggest_notes`: the session looked at and what it suggests."""

    session_id: str | None
    suggestions: list[Suggestion]


class ReferenceCounts(TypedDict):
    """How many file references are in each state."""

    exists: int
    missing: int
    moved: int
    unknown: int


class ValidatedItem(TypedDict):
    """One memory's verdict: its validity and label, each reference and anchor with its status."""

    id: str
    kind: str
    subject: str | None
    scope_key: str
    validity: str
    label: str | None
    references: list[dict[str, Any]]
    anchors: list[dict[str, Any]]


class ValidationReport(TypedDict):
    """`cortex_validate_memory`: how many memories were checked, stale and drifted, and each one's verdict."""

    topic: str | None
    checked: int
    stale: int
    drifted: int
    references: ReferenceCounts
    items: list[ValidatedItem]


class ShownItem(TypedDict):
    """One memory a surface showed: its id, kind, subject, every label it carries, and the tokens its lines took."""

    id: str
    kind: str
    subject: str | None
    labels: list[str]
    tokens: int


class RecallAnswer(TypedDict):
    """`cortex_recall` as data, beside its text: the topic, the budget, what the text spent, and each item shown."""

    topic: str
    budget: Annotated[int, Field(description="Most tokens the answer could use.")]
    tokens: Annotated[int, Field(description="Tokens the text spent (never more than the budget).")]
    items: list[ShownItem]


class StateAnswer(TypedDict):
    """`cortex_state` as data, beside its text: the budget, what the text spent, and each item shown."""

    budget: Annotated[int, Field(description="Most tokens the answer could use.")]
    tokens: Annotated[int, Field(description="Tokens the text spent (never more than the budget).")]
    items: list[ShownItem]


def answered(text: str, data: dict[str, Any]) -> types.CallToolResult:
    """A tool's text, exactly as a plain tool returns it, with `data` as its structured content."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=data)


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

    def booked_json(
        self, channel: str, call: Callable[[Engine], dict[str, Any]], *, consulted: bool = False
    ) -> dict[str, Any]:
        """`booked` for an answer that is data: the JSON text the client receives is what is booked."""
        found: dict[str, Any] = {}

        def text(engine: Engine) -> str:
            found.update(call(engine))
            return json.dumps(found, indent=2, ensure_ascii=False)

        self.booked(channel, text, consulted=consulted)
        return found

    def surface(self, call: Callable[[Engine], Any]) -> str:
        """Run a surface method (it books and marks consulted itself) and return its text."""
        return str(self.rendered(call).text)

    def rendered(self, call: Callable[[Engine], Any]) -> Any:
        """Run a surface method (it books and marks consulted itself) and return the surface."""
        with self.engine() as engine:
            return call(engine)


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
            problems.append(
                f"parameter {param} must be {message}"
                if err["msg"].startswith("Input should be")
                else f"parameter {param}: {message}"
            )
    return f"{tool}: " + "; ".join(problems)


def tool_error_text(tool: str, message: str) -> str:
    """Every tool error, whatever raised it, reads `<tool>: <one line>` (one prefix for every tool)."""
    line = " ".join(message.split()).removeprefix(f"Error executing tool {tool}: ")
    return line if line.startswith(f"{tool}: ") else f"{tool}: {line}"


class CortexServer(MCPServer):
    """The SDK's server, with every tool error in one shape (`<tool>: …`) and argument errors in MCP words."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Call a tool; a schema violation becomes a one-line ToolError naming the tool and the parameters."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(argument_problem(name, exc.__cause__)) from exc.__cause__
            raise ToolError(tool_error_text(name, str(exc))) from exc


def build_server(cwd: str, opener: Callable[[str], Engine] = open_engine) -> MCPServer:
    """The MCP server with the Cortex tools (the seed's 13 and `cortex_reanchor`), serving the store of `cwd`."""
    tools = CortexTools(cwd, opener)
    atexit.register(tools.close)
    server: MCPServer = CortexServer(
        SERVER_NAME, version=SERVER_VERSION, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    def tool(**kw: Any) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """`server.tool`, with the docstring's indentation removed (inspect.cleandoc) for the description,
        `{contested}`, `{drifted}` and `{labels}` filled in from the one label vocabulary (`base/labels.py`), and
        the tool's behaviour hints from `ANNOTATIONS`."""

        def register(fn: Callable[..., T]) -> Callable[..., T]:
            text = (
                inspect.cleandoc(fn.__doc__ or "")
                .replace("{contested}", CONTESTED)
                .replace("{labels}", GLOSSARY)
                .replace("{drifted}", reference("drifted: …"))
            )
            read_only, destructive, idempotent = ANNOTATIONS[fn.__name__]
            hints = types.ToolAnnotations(
                read_only_hint=read_only,
                destructive_hint=destructive,
                idempotent_hint=idempotent,
                open_world_hint=False,
            )
            return server.tool(description=text, annotations=hints, **kw)(fn)

        return register

    @tool(structured_output=False)
    def cortex_route() -> str:
        """Explain what Cortex remembers and which cortex_* tool answers what. Call once at the start of work."""
        return tools.booked("route", lambda e: ROUTE, consulted=True)

    @tool()
    def cortex_state(budget: StateBudget = 800) -> Annotated[types.CallToolResult, StateAnswer]:
        """The branch's working state: this session's notes first, then the snapshot, decisions and evidence.

        Call at the start of a task or after a break to see where the work stands.
        """
        return answered(*tool_answer("cortex_state", tools.rendered(lambda e: e.state(budget))))

    @tool(structured_output=False)
    def cortex_note(
        kind: Annotated[
            NoteKind,
            Field(
                description="decision: a choice made; intent: what you will do next; blocker: what "
                "stops progress; focus: the current goal; insight: a fact learned."
            ),
        ],
        content: Annotated[str, Field(min_length=1, description="The note itself, one or two sentences.")],
        subject: Annotated[
            str | None,
            Field(
                description="What the note is about, a few words (e.g. 'queue engine'). "
                "Required for every kind except insight."
            ),
        ] = None,
        alternatives: Annotated[
            list[str] | None, Field(description="Options considered and rejected, each with why.")
        ] = None,
    ) -> str:
        """Record a durable note. A decision on a subject supersedes earlier ones, unless it contradicts an
        active decision: then both are marked {contested} until someone calls cortex_resolve.
        """

        def write(engine: Engine) -> str:
            return messages.note_written(engine.note(kind, content, subject, alternatives))

        return tools.booked("note", write)

    @tool(structured_output=False)
    def cortex_resolve(
        note_id: Annotated[
            str | None,
            Field(description="The note (or memory item) id to close; required when the subject is contested."),
        ] = None,
        subject: Annotated[
            str | None, Field(description="Close the active note on this subject instead of naming an id.")
        ] = None,
        status: Annotated[
            Status, Field(description="resolved: it no longer applies; superseded: replaced by something newer.")
        ] = "resolved",
        replacement: Annotated[
            str | None, Field(description="Text of the note that replaces it (same kind and subject).")
        ] = None,
    ) -> str:
        """Mark a note resolved or superseded, optionally writing its replacement. Closes a contest when
        one side is resolved. Give note_id or subject.
        """

        def resolve(engine: Engine) -> str:
            return messages.resolved(engine.resolve(note_id, subject=subject, status=status, replacement=replacement))

        return tools.booked("resolve", resolve)

    @tool()
    def cortex_recall(
        topic: Annotated[str, Field(min_length=1, description="What you want evidence about, in a few words.")],
        budget: RecallBudget = 600,
        detail: Annotated[Detail, Field(description="scores: also show each line's ranking score.")] = "none",
        limit: Annotated[
            int | None,
            Field(
                ge=1, le=50, description="Show at most this many items (1-50); by default as many as fit the budget."
            ),
        ] = None,
    ) -> Annotated[types.CallToolResult, RecallAnswer]:
        """Evidence for a topic: a lead line, then timestamped lines labelled {labels} when they no longer
        simply hold. Call before deciding something earlier work may have settled.
        """
        surface = tools.rendered(lambda e: e.recall(topic, budget, None if detail == "none" else detail, limit=limit))
        return answered(*tool_answer("cortex_recall", surface))

    @tool(structured_output=False)
    def cortex_brief(
        topic: Annotated[str, Field(min_length=1, description="The task or area to brief on.")],
        for_agent: Annotated[
            str | None, Field(description="Who the brief is for (e.g. 'reviewer', a subagent type).")
        ] = None,
        budget: BriefBudget = 450,
    ) -> str:
        """A smaller, decisions-first brief on a topic, e.g. to paste into a subagent's prompt before delegating."""
        return tools.surface(lambda e: e.brief(topic, for_agent, budget))

    @tool(structured_output=True)
    def cortex_suggest_notes(
        session_id: Annotated[str | None, Field(description="A session id; default the current session.")] = None,
    ) -> Suggestions:
        """Suggest notes worth saving from a session's activity. Writes nothing; save with cortex_note."""
        return tools.booked_json("suggest_notes", lambda e: e.suggest_notes(session_id))  # type: ignore[return-value]

    @tool(structured_output=True)
    def cortex_validate_memory(
        topic: Annotated[
            str | None,
            Field(description="Check the memories about this topic; default every memory that names a file."),
        ] = None,
    ) -> ValidationReport:
        """Audit memories' file references against the checkout as it is now (exists, missing, moved) and their
        anchors (drifted). Deletes nothing.
        """
        return tools.booked_json(
            "validate_memory",
            lambda e: e.validate_memory(topic or None),  # type: ignore[return-value]
            consulted=bool(topic),
        )

    @tool(structured_output=False)
    def cortex_reanchor(
        item_id: Annotated[
            str,
            Field(
                min_length=1,
                description="The drifted memory's id (or its note id, or an "
                "8+ character prefix), as cortex_validate_memory lists it.",
            ),
        ],
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
            Field(
                description="Searches to check: each {pattern, path?, glob?, type?, caseInsensitive?, multiline?}, "
                "or just the pattern."
            ),
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
        what: Annotated[
            str | None, Field(description="One line on what this session did, to lead the summary.")
        ] = None,
    ) -> str:
        """Write this session's summary now (a checkpoint) and return it."""
        return tools.booked("summarize", lambda e: e.summarize(what or None))

    return server


EMBED_DELAY = 5.0
"""Seconds the server waits before it first embeds: a session's first calls never share the CPU with the encoder."""
EMBED_EVERY = 30.0
"""Seconds between the server's looks for items without a vector (its own connection, off every tool call)."""
EMBED_SLICE = 256
"""Items embedded per look at most (a few seconds on one core), so a backfill never holds the CPU for long."""


class BackgroundEmbedder:
    """The warm server's embedder: a daemon thread that gives new items their vectors, off the tools' path.

    Runs only with the semantic extra installed; a model failing its hash, a busy or missing store, or any other
    error leaves recall lexical for what is not embedded and is logged once, never raised into the server.
    """

    def __init__(self, cwd: str) -> None:
        """Embed the store of `cwd` until `stop` (a store that does not exist yet is waited for, not created)."""
        self.cwd = cwd
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cortex-embed", daemon=True)
        self._warned = False

    def start(self) -> None:
        """Start the thread, when the semantic extra is installed."""
        if semantic_installed():
            self._thread.start()

    def stop(self) -> None:
        """Ask the thread to end after its current batch."""
        self._stop.set()

    def _run(self) -> None:
        if self._stop.wait(EMBED_DELAY):
            return
        while True:
            try:
                with open_engine(self.cwd, create=False) as engine:
                    if engine.embedding_backlog():
                        engine.embed_pending(limit=EMBED_SLICE)
            except StoreUnavailable:
                pass  # no store yet: the first tool call makes it
            except Exception as exc:  # noqa: BLE001 - a background helper: lexical recall must go on regardless
                if not self._warned:
                    self._warned = True
                    logging.getLogger("cortex.embed").warning("embedding new items stopped: %s", exc)
            if self._stop.wait(EMBED_EVERY):
                return


def main(
    cwd: str | None = None,
    *,
    stdin: IO[str] | None = None,
    preamble: list[str] | None = None,
    answered: list[dict[str, Any]] | None = None,
    engine: Engine | None = None,
) -> int:
    """Serve the store of `cwd` over stdio until the client closes the connection (see `serve.main`); `engine` is
    the one `serve` opened to answer early calls, which the tools go on with."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="cortex serve: %(levelname)s %(message)s")
    where = os.path.realpath(cwd or os.getcwd())
    handed = [engine] if engine is not None else []

    def opener(path: str) -> Engine:
        return handed.pop() if handed else open_engine(path)

    server = build_server(where, opener)
    wire = stdin if stdin is not None else claim_stdin()
    embedder = BackgroundEmbedder(where)
    embedder.start()
    try:
        anyio.run(serve_stdio, server, wire, preamble or [], answered or [])
    except KeyboardInterrupt:
        return 130
    finally:
        embedder.stop()
    return 0


TOOL_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tool_table.json")
"""What `serve` answers to `tools/list` before the SDK is loaded (see `serve.recorded_tools`)."""


def _answer_in_session(lowlevel: Any, version: str, request: dict[str, Any]) -> dict[str, Any]:
    """The result the SDK sends to `request` (id 2) in a real session over memory streams negotiated at `version`
    (initialize, initialized, the request), as it goes on the wire."""

    async def answer() -> dict[str, Any]:
        send, inbound = anyio.create_memory_object_stream[Any](8)
        outbound, receive = anyio.create_memory_object_stream[Any](8)
        lines = [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "table", "version": "1"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, **request},
        ]
        # The streams are closed on the way out (after the session is cancelled): left to the collector, each
        # would warn that it was never closed.
        async with send, inbound, outbound, receive, anyio.create_task_group() as group:
            group.start_soon(lowlevel.run, inbound, outbound, lowlevel.create_initialization_options())
            for line in lines:
                await send.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(line)))
            sent: dict[str, Any] = {}
            while sent.get("id") != 2:
                sent = json.loads((await receive.receive()).message.model_dump_json(by_alias=True, exclude_unset=True))
            group.cancel_scope.cancel()
        return dict(sent["result"])

    return anyio.run(answer)


def tool_table() -> dict[str, dict[str, Any]]:
    """The `tools/list` result the SDK sends for each protocol version it negotiates, as it goes on the wire
    (a real session over memory streams: initialize, initialized, tools/list)."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    lowlevel = build_server(os.getcwd())._lowlevel_server  # noqa: SLF001 - the session the stdio transport runs
    return {
        version: _answer_in_session(lowlevel, version, {"method": "tools/list"})
        for version in HANDSHAKE_PROTOCOL_VERSIONS
    }


class SampleAnswer(TypedDict):
    """The structured content of the sample call (`call_envelopes`)."""

    k: str


SAMPLE_TEXT = "T"
SAMPLE_DATA = {"k": "v"}
"""The text and structured content of the sample call whose answer `call_envelopes` records."""


def call_envelopes() -> dict[str, dict[str, Any]]:
    """For each protocol version, the result the SDK sends for a tool that answers `SAMPLE_TEXT` with
    `SAMPLE_DATA` as structured content (a server named and stamped as Cortex's, as it goes on the wire): the shape
    `serve` fills in to answer an early `cortex_recall` or `cortex_state` exactly as the SDK would."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    sample: MCPServer = CortexServer(SERVER_NAME, version=SERVER_VERSION, instructions=INSTRUCTIONS)

    @sample.tool()
    def sample_tool() -> Annotated[types.CallToolResult, SampleAnswer]:
        return answered(SAMPLE_TEXT, dict(SAMPLE_DATA))

    lowlevel = sample._lowlevel_server  # noqa: SLF001 - the session the stdio transport runs
    call = {"method": "tools/call", "params": {"name": "sample_tool", "arguments": {}}}
    return {version: _answer_in_session(lowlevel, version, call) for version in HANDSHAKE_PROTOCOL_VERSIONS}


def write_tool_table(path: str = TOOL_TABLE) -> bool:
    """Rewrite `tool_table.json` from the SDK's answers (each distinct result once); True when it changed."""
    table = tool_table()
    bodies: list[dict[str, Any]] = []
    by_version: dict[str, int] = {}
    for version, result in table.items():
        if result not in bodies:
            bodies.append(result)
        by_version[version] = bodies.index(result)
    document = {
        "comment": "Generated by `python -m cortex_engine.adapters.mcp_server --write-tool-table`; do not edit. "
        "What `cortex serve` answers to tools/list before the MCP SDK is loaded, per protocol version, and the "
        "shape of a tool's answer (text and structured content) it fills in for an early cortex_recall or "
        "cortex_state.",
        "by_version": by_version,
        "bodies": bodies,
        "call_envelopes": call_envelopes(),
    }
    text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
    try:
        with open(path, encoding="utf-8") as current:
            if current.read() == text:
                return False
    except OSError:
        pass
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
    return True


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-tool-table"]:
        print("wrote cortex_engine/adapters/tool_table.json" if write_tool_table() else "the tool table is current")
        raise SystemExit(0)
    raise SystemExit(main())
