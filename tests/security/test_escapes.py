"""Raw ESC/BEL never reach the terminal or the agent, and `cortex log cmd` never stores them."""

from __future__ import annotations

import re
from pathlib import Path

from cortex_engine.engine import describe_store

from ..conftest import Repo
from .conftest import Host, serve, text_of

ESC = "\x1b]0;owned\x07\x1b[2J\x1b[31m\x9b31m\u200b"
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b]")


def test_for_agent_summarize_and_logged_commands_carry_no_escapes(host: Host, repo: Repo, tmp_path: Path) -> None:
    """`brief --for`, MCP `for_agent` and `cortex_summarize(what)` print none; `log cmd` stores none."""
    host.session_start()
    assert host.cortex("note", "--kind", "decision", "--subject", "queue", "use kafka for the queue").code == 0
    logged = host.cortex("log", "cmd", "--cmd", f"make queue{ESC}", "--stderr", f"boom{ESC}", "--exit", "2")
    assert logged.code == 0, logged.err
    brief = host.cortex("brief", "queue", "--for", f"reviewer{ESC}")
    summary = host.cortex("summarize", f"queue work{ESC}")

    async def script(session) -> tuple[str, str]:
        mcp_brief = await session.call_tool("cortex_brief", {"topic": "queue", "for_agent": f"reviewer{ESC}"})
        mcp_summary = await session.call_tool("cortex_summarize", {"what": f"queue work{ESC}"})
        return text_of(mcp_brief), text_of(mcp_summary)

    mcp_brief, mcp_summary = serve(repo, tmp_path, script)
    outputs = {
        "brief --for": brief.out,
        "summarize": summary.out,
        "mcp for_agent": mcp_brief,
        "mcp summarize": mcp_summary,
    }
    assert all("queue" in out for out in outputs.values()), outputs  # each really rendered the seeded text
    assert {name: RAW.findall(out) for name, out in outputs.items() if RAW.search(out)} == {}
    store = Path(str(describe_store(repo.path).path))
    stored = b"".join(p.read_bytes() for p in store.parent.iterdir() if p.name.startswith(store.name))
    assert b"make queue" in stored and b"owned" not in stored  # the command is stored, its escapes are not, whole
    # Sequences, not single bytes: 0x1b and 0x07 also occur in SQLite's own page bytes.
    sequences = (b"\x1b]0;", b"owned\x07", b"\x1b[2J", b"\x1b[31m", b"\xc2\x9b31m", b"\xe2\x80\x8b")
    assert [c for c in sequences if c in stored] == []
