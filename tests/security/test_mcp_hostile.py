"""`cortex serve` answers every request, hostile text included, with an error result and no traceback."""

from __future__ import annotations

import json
import os
import queue
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession

from cortex_engine.engine import describe_store

from ..conftest import Repo
from ..test_mcp_server import NOW, ROOT, serve, text

WAIT = 60.0
"""Seconds to wait for an answer: a server that never answers fails the test instead of hanging it."""


class RawServer:
    """`cortex serve` driven with raw JSON-RPC lines, for bytes the SDK's client refuses to send."""

    def __init__(self, repo: Repo) -> None:
        env = {
            "HOME": os.environ["HOME"],
            "CORTEX_HOME": os.environ["CORTEX_HOME"],
            "CORTEX_NOW": NOW,
            "PYTHONPATH": str(ROOT),
            "PATH": os.environ["PATH"],
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cortex_engine.adapters.cli", "serve"],
            cwd=repo.path,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, raw: str) -> None:
        """Write one line (already JSON) to the server."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw.encode("ascii") + b"\n")
        self.proc.stdin.flush()

    def answer(self, request_id: int) -> dict[str, Any]:
        """The response to `request_id` (raises queue.Empty when none comes in time)."""
        while True:
            message = json.loads(self.lines.get(timeout=WAIT))
            if message.get("id") == request_id:
                return message

    def close(self) -> str:
        """Stop the server; its stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.stderr.read().decode("utf-8", "replace")


def _call(request_id: int, tool: str, arguments: str) -> str:
    """A tools/call line with `arguments` given as raw JSON text (escapes kept exactly as written)."""
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"{tool}","arguments":{arguments}}}}}'
    )


def test_a_lone_surrogate_gets_an_error_result_and_the_server_goes_on(repo: Repo) -> None:
    """`cortex_note(content="a\\ud800b")` is answered with an is_error result (nothing stored); the next call works."""
    server = RawServer(repo)
    try:
        server.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
            )
        )
        assert "result" in server.answer(0)
        server.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        server.send(_call(1, "cortex_note", r'{"kind":"insight","content":"a\ud800b"}'))
        server.send(_call(2, "cortex_note", r'{"kind":"decision","subject":"q\udc00","content":"use kafka"}'))
        server.send('{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"\\ud800"}}')
        server.send(_call(4, "cortex_note", r'{"kind":"insight","content":"kafka keeps order per partition"}'))
        refused = [server.answer(1)["result"], server.answer(2)["result"]]
        listed = server.answer(3)
        stored = server.answer(4)["result"]
    finally:
        stderr = server.close()
    for result in refused:
        assert result["isError"] is True
        assert "lone UTF-16 surrogate" in result["content"][0]["text"]
    assert listed["error"]["code"] == -32602 and "surrogate" in listed["error"]["message"]
    assert not stored.get("isError") and "kafka keeps order" in stored["content"][0]["text"]
    assert "Traceback" not in stderr
    conn = sqlite3.connect(describe_store(repo.path).path)
    try:
        assert [r[0] for r in conn.execute("SELECT content FROM scoped_notes")] == ["kafka keeps order per partition"]
    finally:
        conn.close()


def test_a_nul_in_a_path_is_a_clear_error_result(repo: Repo, tmp_path: Path) -> None:
    """Paths with a NUL (read ledger, search ledger) get an is_error result naming the problem, no traceback."""

    async def script(session: ClientSession) -> list[Any]:
        with anyio.fail_after(WAIT):
            return [
                await session.call_tool("cortex_read_ledger", {"paths": ["src/a\x00b.py"]}),
                await session.call_tool("cortex_search_ledger", {"queries": [{"pattern": "x", "path": "src\x00"}]}),
                await session.call_tool("cortex_read_ledger", {"paths": ["README.md"]}),
            ]

    (nul_read, nul_search, fine), stray = serve(repo, tmp_path, script)
    assert stray == []
    for result in (nul_read, nul_search):
        assert result.is_error
        assert "contains a NUL character" in text(result)
    assert not fine.is_error and "README.md" in text(fine)
    stderr = (tmp_path / "serve.stderr").read_text()
    assert "Traceback" not in stderr and "unexpected exception" not in stderr


def test_every_request_is_answered_however_it_is_framed(repo: Repo) -> None:
    """A lone surrogate as the request id, a request nested 5,000 levels deep, a line cut short, a
    batch, a float id and a request nested just past what the SDK parses each get a protocol error (with the id
    when it can be written back, else null), and the server goes on serving."""
    server = RawServer(repo)
    nested = '"arguments":{"kind":"insight","content":'
    try:
        server.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
            )
        )
        assert "result" in server.answer(0)
        server.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        answers = []
        for line in (
            '{"jsonrpc":"2.0","id":"\\ud800","method":"tools/list"}',
            '{"jsonrpc":"2.0","id":"a\\udc00b","method":"tools/call","params":{"name":"cortex_route","arguments":{}}}',
            '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"cortex_note",'
            + nested
            + "[" * 5000
            + "]" * 5000
            + "}}}",
            '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"cortex_note",'
            + nested
            + "[" * 190
            + "]" * 190
            + "}}}",
            '{"jsonrpc":"2.0","id":7,"method":"tools/list"',
            '[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]',
            '{"jsonrpc":"2.0","id":9.5,"method":"tools/list"}',
        ):
            server.send(line)
            answers.append(json.loads(server.lines.get(timeout=WAIT)))
        server.send(_call(10, "cortex_note", '{"kind":"insight","content":"kafka keeps order per partition"}'))
        stored = server.answer(10)["result"]
    finally:
        stderr = server.close()
    assert [(a.get("id"), a["error"]["code"]) for a in answers] == [
        (None, -32600),
        (None, -32600),
        (5, -32600),
        (6, -32600),
        (None, -32700),
        (None, -32600),
        (None, -32600),
    ]
    assert all(a["jsonrpc"] == "2.0" and a["error"]["message"] for a in answers)
    assert not stored.get("isError") and "kafka keeps order" in stored["content"][0]["text"]
    assert "Traceback" not in stderr
