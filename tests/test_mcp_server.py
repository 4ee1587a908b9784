"""`cortex serve` as a real subprocess, driven over stdio by the mcp SDK's own client (2.x)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from cortex_engine.adapters.mcp_server import DISENGAGED
from cortex_engine.base.tokens import estimate_tokens
from cortex_engine.engine import describe_store
from cortex_engine.query.route import ROUTE

from .conftest import GIT_ENV, Repo, Served, run_in_process

ROOT = Path(__file__).resolve().parent.parent
NOW = "2026-08-02T18:00:00Z"
TOOLS = {
    "cortex_route",
    "cortex_state",
    "cortex_note",
    "cortex_resolve",
    "cortex_recall",
    "cortex_brief",
    "cortex_suggest_notes",
    "cortex_validate_memory",
    "cortex_read_ledger",
    "cortex_search_ledger",
    "cortex_engage",
    "cortex_disengage",
    "cortex_summarize",
    "cortex_reanchor",
}
T = TypeVar("T")


def serve(repo: Repo, tmp_path: Path, script: Callable[[ClientSession], Awaitable[T]]) -> tuple[T, list[object]]:
    """Start `cortex serve` in the repo, run `script` against an initialized session; returns its result and
    anything on the server's stdout that was not a protocol message."""
    stray: list[object] = []

    async def handler(message: object) -> None:
        if isinstance(message, Exception):
            stray.append(message)

    async def main() -> T:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "cortex_engine.adapters.cli", "serve"],
            cwd=str(repo.path),
            env={
                "HOME": os.environ["HOME"],
                "CORTEX_HOME": os.environ["CORTEX_HOME"],
                "CORTEX_NOW": NOW,
                "PYTHONPATH": str(ROOT),
            },
        )
        with (tmp_path / "serve.stderr").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, message_handler=handler) as session:
                    await session.initialize()
                    return await script(session)

    return anyio.run(main), stray


def text(result: Any) -> str:
    """The text of a tool result."""
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def text_of(result: dict[str, Any]) -> str:
    """The text of a tool result as it goes on the wire."""
    return "".join(c["text"] for c in result["content"] if c.get("type") == "text")


def ledger_rows(repo: Repo, after: int = 0) -> list[tuple[str, int]]:
    """(channel, tokens) of every token-ledger row of the repo's store past row `after`, in order."""
    conn = sqlite3.connect(describe_store(repo.path).path)
    try:
        query = "SELECT channel, tokens FROM token_ledger WHERE id > ? ORDER BY id"
        return [(r[0], r[1]) for r in conn.execute(query, (after,))]
    finally:
        conn.close()


def ledger_end(repo: Repo) -> int:
    """The id of the repo's last token-ledger row (0 before the store exists)."""
    path = describe_store(repo.path).path
    if not Path(path).exists():
        return 0
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT coalesce(max(id), 0) FROM token_ledger").fetchone()[0])
    finally:
        conn.close()


def test_lists_every_tool_with_typed_schemas(served: Served) -> None:
    """The seed's 13 tools and cortex_reanchor are listed with enums for kinds/statuses/detail and bounded budgets;
    stdout holds only protocol."""

    async def script(session: ClientSession) -> dict[str, dict]:
        listed = await session.list_tools()
        return {t.name: {"schema": t.input_schema, "description": t.description} for t in listed.tools}

    tools, stray = served.run(script)
    assert set(tools) == TOOLS
    assert stray == []
    note = tools["cortex_note"]["schema"]
    assert note["properties"]["kind"]["enum"] == ["insight", "decision", "intent", "blocker", "focus"]
    assert set(note["required"]) == {"kind", "content"}
    assert tools["cortex_resolve"]["schema"]["properties"]["status"]["enum"] == ["resolved", "superseded"]
    assert tools["cortex_recall"]["schema"]["properties"]["detail"]["enum"] == ["none", "scores"]
    for name, default in (("cortex_state", 800), ("cortex_recall", 600), ("cortex_brief", 450)):
        budget = tools[name]["schema"]["properties"]["budget"]
        assert (name, budget["minimum"], budget["maximum"], budget["default"]) == (name, 20, 20000, default)
    assert tools["cortex_recall"]["schema"]["required"] == ["topic"]
    limit = tools["cortex_recall"]["schema"]["properties"]["limit"]
    number = next(s for s in limit["anyOf"] if s["type"] == "integer")
    assert (number["minimum"], number["maximum"], limit["default"]) == (1, 50, None)  # None: the budget decides
    assert "[contested]" in tools["cortex_note"]["description"]
    assert all(tools[name]["description"] for name in TOOLS)


def test_contested_notes_recall_resolve_and_read_ledger(served: Served) -> None:
    """Two contradicting decisions are both [contested] in recall; resolving one closes the contest."""

    async def script(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["first"] = await session.call_tool(
            "cortex_note", {"kind": "decision", "subject": "queue engine", "content": "use kafka for the queue engine"}
        )
        out["second"] = await session.call_tool(
            "cortex_note",
            {"kind": "decision", "subject": "queue engine", "content": "do not use kafka for the queue engine"},
        )
        out["recall"] = await session.call_tool("cortex_recall", {"topic": "queue engine"})
        loser = re.search(r"^  - (\S+) \[", text(out["second"]), re.MULTILINE)
        assert loser is not None, text(out["second"])
        out["resolve"] = await session.call_tool("cortex_resolve", {"note_id": loser.group(1), "status": "superseded"})
        out["after"] = await session.call_tool("cortex_recall", {"topic": "queue engine"})
        out["ledger"] = await session.call_tool("cortex_read_ledger", {"paths": ["README.md"]})
        out["bare"] = await session.call_tool("cortex_read_ledger", {"paths": "README.md"})
        return out

    start = ledger_end(served.repo)
    out, stray = served.run(script)
    assert stray == []
    assert not any(r.is_error for r in out.values())
    assert text(out["first"]).startswith("Noted (decision[queue engine]) [2026-08-02 18:00Z]: use kafka")
    assert "Contested — opposes 1 active decision on this subject." in text(out["second"])
    contested = [line for line in text(out["recall"]).splitlines()[1:] if line.endswith("[contested]")]
    assert len(contested) == 2
    assert text(out["resolve"]) == "Marked decision[queue engine] as superseded. Contest closed."
    assert "[contested]" not in text(out["after"])
    assert text(out["ledger"]) == text(out["bare"]) == "README.md: unread"
    rows = ledger_rows(served.repo, start)
    assert [c for c, _ in rows] == ["note", "note", "recall", "resolve", "recall", "read_ledger", "read_ledger"]
    assert rows[0][1] == estimate_tokens(text(out["first"]))


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(served: Served) -> None:
    """Schema violations and engine refusals come back as is_error results with a useful message."""

    async def script(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("cortex_note", {"kind": "opinion", "content": "x"}),
            await session.call_tool("cortex_note", {"kind": "decision", "content": "use kafka"}),
            await session.call_tool("cortex_recall", {"topic": "queue", "budget": 5}),
            await session.call_tool("cortex_resolve", {"note_id": "no-such-note"}),
            await session.call_tool("cortex_search_ledger", {"queries": [{"pattern": ""}]}),
            await session.call_tool("cortex_route", {}),
        ]

    start = ledger_end(served.repo)
    results, stray = served.run(script)
    assert stray == []
    bad_kind, no_subject, low_budget, missing, no_query, route = results
    assert [r.is_error for r in results] == [True, True, True, True, True, False]
    assert "kind" in text(bad_kind) and "decision" in text(bad_kind)
    assert "Subject is required for decision notes" in text(no_subject)
    assert "budget" in text(low_budget) and "greater than or equal to 20" in text(low_budget)
    assert "no-such-note" in text(missing)
    assert "No usable queries: each needs a non-empty pattern." in text(no_query)
    assert text(route) == ROUTE
    assert [c for c, _ in ledger_rows(served.repo, start)] == ["route"]


def test_engage_disengage_route_summarize_and_search(served: Served) -> None:
    """Disengage returns its message and removes the marker; engage returns the state; each is booked once."""

    async def script(session: ClientSession) -> dict[str, Any]:
        out = {
            "note": await session.call_tool(
                "cortex_note", {"kind": "blocker", "subject": "ci", "content": "ci is red on main"}
            )
        }
        out["disengage"] = await session.call_tool("cortex_disengage", {})
        out["engaged_after_disengage"] = (served.repo.path / ".cortex" / "engaged").is_file()
        out["engage"] = await session.call_tool("cortex_engage", {})
        out["search"] = await session.call_tool(
            "cortex_search_ledger", {"queries": ["NoSuchSymbol", {"pattern": "Other"}]}
        )
        out["summarize"] = await session.call_tool("cortex_summarize", {"what": "triaged the red build"})
        out["suggest"] = await session.call_tool("cortex_suggest_notes", {})
        out["validate"] = await session.call_tool("cortex_validate_memory", {"topic": "ci"})
        return out

    start = ledger_end(served.repo)
    out, stray = served.run(script)
    assert stray == []
    assert not any(r.is_error for k, r in out.items() if k != "engaged_after_disengage")
    assert text(out["disengage"]) == DISENGAGED
    assert out["engaged_after_disengage"] is False
    assert (served.repo.path / ".cortex" / "engaged").is_file()
    assert "ci is red on main" in text(out["engage"])
    assert text(out["search"]).splitlines() == ["NoSuchSymbol: miss", "Other: miss"]
    assert text(out["summarize"]).startswith("triaged the red build")
    assert '"suggestions"' in text(out["suggest"]) and '"checked"' in text(out["validate"])
    channels = [c for c, _ in ledger_rows(served.repo, start)]
    assert channels == ["note", "disengage", "state", "search_ledger", "summarize", "suggest_notes", "validate_memory"]


def test_tool_text_is_what_the_cli_prints(served: Served) -> None:
    """The MCP tool and the CLI command print the same words for the same engine call."""

    async def script(session: ClientSession) -> list[str]:
        return [
            text(await session.call_tool("cortex_route", {})),
            text(await session.call_tool("cortex_read_ledger", {"paths": ["README.md", "missing.py"]})),
        ]

    (route, ledger), _ = served.run(script)
    for args, expected in ((["route"], route), (["read-ledger", "README.md", "missing.py"], ledger)):
        done = run_in_process(served.repo.path, args, {"CORTEX_NOW": NOW})
        assert (args, done.code, done.out) == (args, 0, expected + "\n")


def serve_once(
    repo: Repo, lines: list[str], timeout: float = 60, path: str | None = None
) -> tuple[list[dict], str, int]:
    """Start `cortex serve`, write `lines` and close stdin at once; every JSON message it printed, its stderr,
    and its exit code. A server that hangs fails the test through the timeout instead of stalling it."""
    env = {
        "HOME": os.environ["HOME"],
        "CORTEX_HOME": os.environ["CORTEX_HOME"],
        "CORTEX_NOW": NOW,
        "PYTHONPATH": str(ROOT),
        "PATH": path or os.environ["PATH"],
    }
    done = subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", "serve"],
        cwd=repo.path,
        env=env,
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()], done.stderr, done.returncode


@contextmanager
def home_of_its_own(base: Path, template: Path) -> Iterator[Repo]:
    """For a module fixture (made before the autouse `isolated_home` of the test that first asks for it): a copy of
    the `template` repository under `base`, with HOME and CORTEX_HOME under `base` while the block runs."""
    home = base / "home"
    home.mkdir()
    path = base / "repo"
    shutil.copytree(template, path, symlinks=True)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))
        env.setenv("CORTEX_HOME", str(home / ".cortex"))
        env.setenv("CORTEX_SEMANTIC", "0")
        env.setenv("PYTHONPATH", str(ROOT))
        env.delenv("CORTEX_NOW", raising=False)
        env.delenv("CLAUDECODE", raising=False)
        for key, value in GIT_ENV.items():
            env.setenv(key, value)
        yield Repo(path)


def request(ident: int | str, method: str, params: dict[str, Any] | None = None) -> str:
    """One JSON-RPC request line."""
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, **({"params": params} if params else {})})


def tool_call(ident: int, name: str, arguments: dict[str, Any]) -> str:
    """A `tools/call` request line."""
    return request(ident, "tools/call", {"name": name, "arguments": arguments})


@pytest.fixture(scope="module")
def closed_at_once(tmp_path_factory: pytest.TempPathFactory, repo_template: Path) -> tuple[list[dict], str, int, str]:
    """One `cortex serve` sent initialize, initialized, five recalls, a note and a route all at once, its stdin
    then closed, with a `git` first on PATH that logs its arguments: every message, stderr, exit code and the log."""
    base = tmp_path_factory.mktemp("closed-at-once")
    shim = base / "shim"
    shim.mkdir()
    log = base / "git.log"
    real_git = shutil.which("git")
    (shim / "git").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real_git}" "$@"\n')
    (shim / "git").chmod(0o755)
    lines = [*_handshake()]
    lines += [tool_call(n, "cortex_recall", {"topic": f"queue {n}"}) for n in range(1, 6)]
    lines.append(tool_call(6, "cortex_note", {"kind": "insight", "content": "kafka keeps order per partition"}))
    lines.append(tool_call(7, "cortex_route", {}))
    with home_of_its_own(base, repo_template) as repo:
        messages, stderr, code = serve_once(repo, lines, path=f"{shim}:{os.environ['PATH']}")
    return messages, stderr, code, log.read_text()


def test_a_request_in_flight_when_stdin_closes_is_still_answered(
    closed_at_once: tuple[list[dict], str, int, str],
) -> None:
    """A client that sends initialize, initialized and its tool calls, then closes its end, gets every answer."""
    messages, stderr, code, _ = closed_at_once
    answers = {m["id"]: m for m in messages if "id" in m}
    assert sorted(answers) == [0, 1, 2, 3, 4, 5, 6, 7], (messages, stderr)
    assert "serverInfo" in answers[0]["result"]
    assert "kafka keeps order" in answers[6]["result"]["content"][0]["text"]
    assert "cortex_recall" in answers[7]["result"]["content"][0]["text"]
    assert code == 0 and "Traceback" not in stderr


def test_warm_calls_reuse_one_engine_and_run_git_once_to_locate_the_repository(
    closed_at_once: tuple[list[dict], str, int, str],
) -> None:
    """Five recalls and a note in one server locate the repository with git once, not once per call."""
    messages, stderr, _, log = closed_at_once
    assert sorted(m["id"] for m in messages) == [0, 1, 2, 3, 4, 5, 6, 7], stderr
    located = [line for line in log.splitlines() if line.startswith("rev-parse")]
    assert len(located) == 1, located


HANDSHAKE_VERSIONS = ("oldest", "newest", "2026-07-28", "1999-01-01")
"""The versions a server is started with: the oldest and newest the SDK knows, and unknown ones after and before."""


@pytest.fixture(scope="module")
def handshakes(tmp_path_factory: pytest.TempPathFactory, repo_template: Path) -> dict[str, tuple[list[dict], str, int]]:
    """Per protocol version offered, one `cortex serve` sent initialize (id "start"), initialized, tools/list, ping
    and a route call at once: every message, its stderr and exit code."""
    from cortex_engine.adapters.serve import handshake_versions

    known = handshake_versions()
    assert known is not None
    chosen = {"oldest": known[0], "newest": known[-1]}
    runs: dict[str, tuple[list[dict], str, int]] = {}
    with home_of_its_own(tmp_path_factory.mktemp("handshakes"), repo_template) as repo:
        for name in HANDSHAKE_VERSIONS:
            version = chosen.get(name, name)
            offer = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
            lines = [
                request("start", "initialize", offer),
                json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                request(1, "tools/list"),
                request(2, "ping"),
                tool_call(3, "cortex_route", {}),
            ]
            runs[version] = serve_once(repo, lines)
    return runs


def test_initialize_is_answered_once_and_exactly_as_the_sdk_would(
    handshakes: dict[str, tuple[list[dict], str, int]],
) -> None:
    """`serve` answers `initialize` before loading the SDK; the SDK's own answer (compared, then dropped) agrees
    for the oldest and newest protocol version it knows and for versions it does not know, before and after them
    (a server costs a CPU-second: the versions between are checked against the SDK's registry in this process)."""
    from cortex_engine.adapters.serve import handshake_versions, initialize_answer

    known = handshake_versions()
    assert known is not None and {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} <= set(known)
    for version in known:
        line = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "r", "version": "1"}},
            }
        )
        answer = initialize_answer(line, known)
        assert answer is not None and answer["result"]["protocolVersion"] == version
    assert list(handshakes) == [known[0], known[-1], "2026-07-28", "1999-01-01"]
    for version, (messages, stderr, code) in handshakes.items():
        assert [m.get("id") for m in messages] == ["start", 1, 2, 3], (version, messages)
        result = messages[0]["result"]
        assert (
            result["serverInfo"] == {"name": "cortex", "version": "0.1.0"} and "cortex_route" in result["instructions"]
        )
        assert result["protocolVersion"] == (version if version < "2026" and version > "2000" else "2025-11-25")
        assert "differs" not in stderr and "Traceback" not in stderr and code == 0, stderr


def test_tools_list_is_answered_from_the_table_exactly_as_the_sdk_would(
    handshakes: dict[str, tuple[list[dict], str, int]],
) -> None:
    """`tools/list` (and `ping`) are answered before the SDK is loaded, from `tool_table`; the SDK's own
    answer (compared, then dropped) agrees, and the table is what the SDK lists now. Every tool carries the four
    behaviour hints; the JSON tools declare an output schema."""
    from cortex_engine.adapters.mcp_server import ANNOTATIONS, tool_table
    from cortex_engine.adapters.serve import recorded_tools

    sdk = tool_table()
    recorded = {version: recorded_tools(version) for version in sdk}
    assert sdk == recorded, "stale: run python -m cortex_engine.adapters.mcp_server --write-tool-table"
    assert len(handshakes) == len(HANDSHAKE_VERSIONS)
    for messages, stderr, code in handshakes.values():
        assert [m.get("id") for m in messages] == ["start", 1, 2, 3], messages
        negotiated = messages[0]["result"]["protocolVersion"]
        assert messages[1]["result"] == recorded[negotiated] and messages[2]["result"] == {}
        assert "differs" not in stderr and "Traceback" not in stderr and code == 0, stderr
    messages = next(iter(handshakes.values()))[0]
    tools = {t["name"]: t for t in messages[1]["result"]["tools"]}
    assert set(tools) == TOOLS == set(ANNOTATIONS)
    hints = {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
    assert all(set(t["annotations"]) == hints and t["annotations"]["openWorldHint"] is False for t in tools.values())
    assert (
        tools["cortex_recall"]["annotations"]["readOnlyHint"]
        and tools["cortex_resolve"]["annotations"]["destructiveHint"]
    )
    assert {name for name, t in tools.items() if "outputSchema" in t} == {
        "cortex_suggest_notes",
        "cortex_validate_memory",
        "cortex_recall",
        "cortex_state",
    }


def test_a_warm_server_follows_a_branch_switch_and_sees_other_writers(served: Served) -> None:
    """Between two calls of one server: a branch switch moves the next note to the new branch's scope, and a
    note the CLI wrote in another process (this one) is found by the next recall."""
    repo = served.repo

    def note(content: str) -> Callable[[ClientSession], Awaitable[Any]]:
        async def script(session: ClientSession) -> Any:
            return await session.call_tool("cortex_note", {"kind": "insight", "content": content})

        return script

    async def recall(session: ClientSession) -> str:
        return text(await session.call_tool("cortex_recall", {"topic": "zeppelin"}))

    served.run(note("first note on the main branch"))
    repo.git("checkout", "-q", "-b", "feature/warm")
    try:
        served.run(note("second note on the feature branch"))
        written = run_in_process(
            repo.path, ["note", "--kind", "insight", "zeppelin written by another process"], {"CORTEX_NOW": NOW}
        )
        assert written.code == 0, written.err
        recalled, stray = served.run(recall)
    finally:
        repo.git("checkout", "-q", "main")  # the next test sharing the server starts on main again
    assert stray == [] and "zeppelin written by another process" in recalled
    conn = sqlite3.connect(describe_store(repo.path).path)
    try:
        scopes = dict(conn.execute("SELECT content, scope_key FROM scoped_notes"))
    finally:
        conn.close()
    assert not scopes["first note on the main branch"].endswith(":feature/warm")
    assert scopes["second note on the feature branch"].endswith(":feature/warm")


def test_reanchor_matches_the_cli_and_is_audited(repo: Repo, tmp_path: Path) -> None:
    """cortex_reanchor on a drifted note: the CLI's words, the note fresh again, one `reanchor` audit row, the
    output booked once; a second call and an unknown id are tool errors with the engine's message."""
    from .test_anchors import HEADS, LANGS

    path, target, other, _ = LANGS["python"]
    repo.write(path, HEADS["python"] + target + "\n" + other)
    repo.commit("session")
    noted = run_in_process(
        repo.path,
        ["note", "--kind", "decision", "--subject", "tokens", "refresh_token() in src/auth/session.py adds one"],
        {"CORTEX_NOW": NOW},
    )
    assert noted.code == 0, noted.err
    repo.write(path, HEADS["python"] + target.replace("+ 1", "+ 2") + "\n" + other)
    repo.commit("add two instead")
    conn = sqlite3.connect(describe_store(repo.path).path)
    (item_id,) = conn.execute("SELECT id FROM memory_items WHERE kind='note:decision'").fetchone()
    conn.close()

    async def script(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("cortex_validate_memory", {}),
            await session.call_tool("cortex_reanchor", {"item_id": item_id}),
            await session.call_tool("cortex_validate_memory", {}),
            await session.call_tool("cortex_reanchor", {"item_id": item_id}),
            await session.call_tool("cortex_reanchor", {"item_id": "no-such-id"}),
        ]

    (before, done, after, again, unknown), stray = serve(repo, tmp_path, script)
    assert stray == [] and not done.is_error
    assert json.loads(text(before))["drifted"] == 1 and json.loads(text(after))["drifted"] == 0
    assert text(done) == (
        f"re-anchored {item_id}: src/auth/session.py:refresh_token (lines 3-5)\n"
        "(the prior anchor is kept in the audit log; see inspect-memory)"
    )
    assert again.is_error and "has no drifted anchor" in text(again)
    assert unknown.is_error and 'no memory item found for id "no-such-id"' in text(unknown)
    conn = sqlite3.connect(describe_store(repo.path).path)
    audit = [r[0] for r in conn.execute("SELECT operation FROM memory_corrections WHERE memory_item_id=?", (item_id,))]
    conn.close()
    assert audit == ["reanchor"]
    assert [channel for channel, _ in ledger_rows(repo) if channel == "reanchor"] == ["reanchor"]


def test_mcp_edges_answer_what_happened_with_one_error_shape(served: Served) -> None:
    """An unknown session, a path outside the worktree and a 3-character id are errors that say so; a
    missing file is `missing`, not `unread`; JSON answers come back as structured content; every error reads
    `<tool>: …`."""
    calls = [
        ("cortex_suggest_notes", {"session_id": "no-such-session"}),
        ("cortex_read_ledger", {"paths": ["/etc/passwd"]}),
        ("cortex_resolve", {"note_id": "abc"}),
        ("cortex_search_ledger", {"queries": [{"pattern": ""}]}),
        ("cortex_note", {"kind": "opinion", "content": "x"}),
        ("cortex_read_ledger", {"paths": ["README.md", "gone.py"]}),
        ("cortex_validate_memory", {}),
    ]

    async def script(session: ClientSession) -> list[Any]:
        return [await session.call_tool(name, args) for name, args in calls]

    results, stray = served.run(script)
    assert stray == []
    *errors, ledger, validated = results
    assert [r.is_error for r in errors] == [True] * len(errors) and not ledger.is_error and not validated.is_error
    for (name, _), result in zip(calls, errors, strict=False):
        assert text(result).startswith(f"{name}: ") and f"{name}: {name}" not in text(result), text(result)
        assert "Error executing tool" not in text(result)
    session_error, outside, short, _, _ = (text(r) for r in errors)
    assert 'no session "no-such-session"' in session_error and "note ids" not in session_error
    assert "outside this worktree" in outside
    assert "at least 8 characters" in short
    assert text(ledger).splitlines() == ["README.md: unread", "gone.py: missing"]
    assert validated.structured_content is not None and validated.structured_content["checked"] == 0
    assert json.loads(text(validated)) == validated.structured_content


def _raw_serve(repo: Repo, lines: list[str], pythonpath: str = str(ROOT)) -> tuple[list[str], str, int]:
    """`cortex serve` fed `lines` at once: its stdout lines exactly as written, its stderr and exit code."""
    env = {
        "HOME": os.environ["HOME"],
        "CORTEX_HOME": os.environ["CORTEX_HOME"],
        "CORTEX_NOW": NOW,
        "PYTHONPATH": pythonpath,
        "PATH": os.environ["PATH"],
    }
    done = subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", "serve"],
        cwd=repo.path,
        env=env,
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return [line for line in done.stdout.splitlines() if line.strip()], done.stderr, done.returncode


def _handshake(version: str = "2025-06-18") -> list[str]:
    return [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        ),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]


EARLY_CALLS = [
    {"name": "cortex_recall", "arguments": {"topic": "queue engine", "budget": 300}},
    {"name": "cortex_state", "arguments": {}},
]


@pytest.fixture(scope="module")
def early_and_late(tmp_path_factory: pytest.TempPathFactory, repo_template: Path) -> dict[str, Any]:
    """Two contested decisions, then the same recall and state (ids 7 and 8) sent to three servers over the same
    store: `early` right after the handshake (the engine answers before the SDK loads), `by_sdk` after a
    `resources/list` and a `tools/list` only the SDK answers, and `without_sdk` (the recall alone) with an SDK that
    cannot be imported; the ledger's channels after each of the first two, and the CLI's `recall --peek` of the
    same topic and budget after the SDK's answers."""
    base = tmp_path_factory.mktemp("early-and-late")
    runs: dict[str, Any] = {}
    requests = [
        json.dumps({"jsonrpc": "2.0", "id": 7 + n, "method": "tools/call", "params": c})
        for n, c in enumerate(EARLY_CALLS)
    ]
    with home_of_its_own(base, repo_template) as repo:
        runs["noted"] = [
            run_in_process(
                repo.path, ["note", "--kind", "decision", "--subject", "queue engine", content], {"CORTEX_NOW": NOW}
            )
            for content in ("use kafka for the queue engine", "do not use kafka for the queue engine")
        ]
        store = Path(describe_store(repo.path).path).parent
        kept = {folder: base / "kept" / str(n) for n, folder in enumerate((store, repo.path / ".cortex"))}
        for folder, copy in kept.items():
            if folder.exists():
                shutil.copytree(folder, copy)
        runs["early"] = _raw_serve(repo, [*_handshake(), *requests])
        runs["early_ledger"] = [c for c, _ in ledger_rows(repo)]
        for folder, copy in kept.items():  # the same store and runtime state again: reads reinforce what they show
            shutil.rmtree(folder, ignore_errors=True)
            if copy.exists():
                shutil.copytree(copy, folder)
        # The same calls after requests only the SDK answers: the SDK answers them.
        sdk_first = [request(5, "resources/list"), request(6, "tools/list")]
        runs["by_sdk"] = _raw_serve(repo, [*_handshake(), *sdk_first, *requests])
        runs["sdk_ledger"] = [c for c, _ in ledger_rows(repo)]
        runs["cli"] = run_in_process(
            repo.path, ["recall", "--peek", "--budget", "300", "queue engine"], {"CORTEX_NOW": NOW}
        )
        broken = base / "broken"
        (broken / "mcp").mkdir(parents=True)
        (broken / "mcp" / "__init__.py").write_text("raise ImportError('no SDK here')\n")
        runs["without_sdk"] = _raw_serve(repo, [*_handshake(), requests[0]], f"{broken}{os.pathsep}{ROOT}")
    return runs


def by_id(lines: list[str], *ids: int) -> list[str]:
    """The lines answering `ids`, in the order of their ids (the SDK may answer concurrent calls in either order)."""
    return sorted((line for line in lines if json.loads(line).get("id") in ids), key=lambda x: json.loads(x)["id"])


def test_recall_and_state_carry_their_items_as_structured_content_beside_the_same_text(
    early_and_late: dict[str, Any],
) -> None:
    """A client can act on a label without parsing a line: recall and state return each item's id, kind, labels and
    tokens, the budget and what the text spent, as structured content matching their output schema; the text is
    the one the CLI prints."""
    import jsonschema

    lines, stderr, code = early_and_late["by_sdk"]
    assert code == 0, stderr
    listed = [json.loads(line)["result"] for line in by_id(lines, 6)]
    assert len(listed) == 1, lines
    schemas = {t["name"]: t.get("outputSchema") for t in listed[0]["tools"]}
    out = dict(zip(("recall", "state"), (json.loads(line)["result"] for line in by_id(lines, 7, 8)), strict=True))
    cli = early_and_late["cli"]
    assert cli.code == 0, cli.err
    assert text_of(out["recall"]) == cli.out.rstrip("\n")
    for name in ("recall", "state"):
        result = out[name]
        data = result.get("structuredContent")
        assert not result.get("isError") and data is not None, name
        jsonschema.validate(data, schemas[f"cortex_{name}"])
        assert data["budget"] == (300 if name == "recall" else 800)
        assert data["tokens"] == estimate_tokens(text_of(result)) <= data["budget"]
        assert len(data["items"]) == 2, data
        for item in data["items"]:
            assert set(item) >= {"id", "kind", "labels", "tokens"}
            assert item["kind"] == "note:decision" and "contested" in item["labels"]
            assert 0 < item["tokens"] < data["tokens"]


def test_an_early_recall_is_answered_without_the_sdk_exactly_as_the_sdk_answers_it(
    early_and_late: dict[str, Any],
) -> None:
    """A session's first `tools/call` (cortex_recall, cortex_state) is answered by the engine before the SDK is
    loaded: byte for byte the line the SDK sends for the same call on the same store, booked once; with an SDK that
    cannot even be imported, that first answer still comes."""
    for noted in early_and_late["noted"]:
        assert noted.code == 0, noted.err
    early, stderr, code = early_and_late["early"]
    assert code == 0 and "differs" not in stderr and "Traceback" not in stderr, stderr
    assert early_and_late["early_ledger"] == ["recall", "state"]  # each call ran once
    by_sdk, stderr, code = early_and_late["by_sdk"]
    assert code == 0, stderr
    # The SDK may run the two calls concurrently, so they are booked in either order: each exactly once.
    assert sorted(early_and_late["sdk_ledger"]) == ["recall", "state"]
    mine, theirs = by_id(early, 7, 8), by_id(by_sdk, 7, 8)
    assert len(mine) == 2 and mine == theirs, "\n".join(mine + theirs)
    assert json.loads(mine[0])["result"]["structuredContent"]["items"]
    without_sdk, stderr, _ = early_and_late["without_sdk"]
    assert [json.loads(line).get("id") for line in without_sdk] == [0, 7], stderr
    assert json.loads(without_sdk[1])["result"]["content"][0]["text"].startswith(
        json.loads(mine[0])["result"]["content"][0]["text"].split("\n", 1)[0]
    )


def test_the_recorded_call_envelopes_are_what_the_sdk_sends_now() -> None:
    """`tool_table.json` holds the SDK's shape of a tool's answer per protocol version: stale when the SDK changes."""
    from cortex_engine.adapters.mcp_server import call_envelopes
    from cortex_engine.adapters.serve import TOOL_TABLE

    recorded = json.loads(Path(TOOL_TABLE).read_text(encoding="utf-8"))["call_envelopes"]
    assert recorded == call_envelopes(), "stale: run python -m cortex_engine.adapters.mcp_server --write-tool-table"
