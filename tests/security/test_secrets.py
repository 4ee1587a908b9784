"""No secret and no raw terminal escape reaches the store, whichever path writes it.

Every shape of `secret_shapes` goes through every entry path (the real hook scripts with Claude Code
payloads, the `cortex` CLI, a real MCP client, imports, shared decision files, recall topics), then the
database file, its WAL and every runtime file are scanned for the secret bytes.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import uuid
from pathlib import Path

from cortex_engine.engine import Engine, describe_store

from ..conftest import Repo
from ..terminal import at_terminal
from .conftest import Host, serve, text_of
from .secret_shapes import shapes

CHUNK = 8
HOOK_CHUNK = 4


def _chunks(items: list, size: int = CHUNK) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _files_to_scan(repo: Repo, home: Path) -> list[Path]:
    """The store (db, WAL, shm), every file under the runtime folder and under CORTEX_HOME."""
    found = [p for p in (repo.path / ".cortex").rglob("*") if p.is_file()]
    found += [p for p in home.rglob("*") if p.is_file()]
    return sorted(set(found))


def _leaks(secret: str, blobs: list[bytes]) -> bool:
    """Whether the secret, or a 12-character piece of its middle, is in any blob (case-insensitively: FTS
    lowercases)."""
    middle = secret[len(secret) // 2 - 6 : len(secret) // 2 + 6]
    needles = {secret.lower().encode(), middle.lower().encode()}
    return any(needle in blob for blob in blobs for needle in needles)


def test_a_recall_topic_is_redacted_before_its_query_is_derived(engine: Engine) -> None:
    """A topic holding a key, bracketed or not, leaves neither the key nor its tokenized
    body (`sk ant api03 …`) in retrieval_log, through recall and brief alike."""
    engine.note("decision", "rotate the deploy key every quarter", "deploy key")
    key = "sk-ant-api03-" + "Zq7lX9" * 15 + "AA"
    for topic in (f"[deploy key {key}]", f"deploy key {key}", f"deploy\u200b key {key}"):
        engine.recall(topic)
        engine.brief(topic)
    rows = [" ".join(map(str, r)).lower() for r in engine.conn.execute("SELECT topic, query_text FROM retrieval_log")]
    assert len(rows) == 6
    assert [r for r in rows if "zq7lx9" in r or "\u200b" in r] == []


def _decision_file(number: int, text: str) -> str:
    """A MADR decision file whose title, subject, chosen option and a considered option carry `text`."""
    line = " ".join(text.split())
    return (
        f"---\nstatus: accepted\ndate: 2026-08-01\n---\n\n# {line[:150]}\n\n## Considered Options\n\n"
        f"* {line}\n* keep case{number:03d} as it is\n\n## Decision Outcome\n\nChosen option: {json.dumps(line)}\n"
    )


def test_every_secret_shape_through_every_entry_path_leaves_no_bytes(host: Host, repo: Repo, tmp_path: Path) -> None:
    """Every shape × 18 entry paths (hooks, CLI, MCP, import, shared decision files, recall topics); afterwards
    zero secret bytes in the database, its WAL or any runtime file."""
    cases = [(name, f"case{i:03d} {text}", secret) for i, (name, text, secret) in enumerate(shapes())]
    host.session_start()
    tried: dict[str, int] = {}

    def count(path: str, n: int = 1) -> None:
        tried[path] = tried.get(path, 0) + n

    capture = "cortex-capture.sh"
    for chunk in _chunks(cases, HOOK_CHUNK):
        joined = "\n".join(text for _, text, _ in chunk)
        host.fire(
            capture,
            "PostToolUseFailure",
            tool_name="Bash",
            tool_input={"command": joined},
            error="Command exited with non-zero status code 1",
            is_interrupt=False,
        )
        count("hook: Bash command", len(chunk))
        host.fire(
            capture,
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": "python -m pytest -q tests"},
            tool_response={"stdout": joined, "stderr": joined, "interrupted": False, "exit_code": 1},
        )
        count("hook: failing command output", len(chunk))
        host.fire(
            capture,
            "PostToolUseFailure",
            tool_name="Bash",
            tool_input={"command": "make build"},
            error=f"Command exited with non-zero status code 2\n{joined}",
            is_interrupt=False,
        )
        count("hook: failure error", len(chunk))
        host.fire(
            capture,
            "PostToolUse",
            tool_name="Grep",
            tool_input={"pattern": joined, "path": "src"},
            tool_response={"mode": "files_with_matches", "filenames": [], "numFiles": 0},
        )
        count("hook: Grep pattern", len(chunk))
        for tool in ("Agent", "Task"):
            host.fire(
                capture,
                "PostToolUse",
                tool_name=tool,
                tool_input={"description": joined, "subagent_type": "general-purpose", "prompt": joined},
                tool_response={"content": [{"type": "text", "text": "done"}]},
            )
            count(f"hook: {tool} description", len(chunk))
    for index, chunk in enumerate(_chunks(cases)):
        joined = "\n".join(text for _, text, _ in chunk)
        agent = f"agent-{index}"
        host.fire(
            "cortex-subagent.sh",
            "PreToolUse",
            "dispatch-pre",
            tool_name="Agent",
            tool_use_id=f"toolu_d{index}",
            tool_input={"description": joined, "subagent_type": "general-purpose", "prompt": joined},
        )
        count("hook: Agent dispatch (description, prompt)", len(chunk))
        host.fire("cortex-subagent.sh", "SubagentStart", "subagent-start", agent_id=agent, agent_type="general-purpose")
        host.fire(
            "cortex-subagent.sh",
            "SubagentStop",
            "subagent-stop",
            agent_id=agent,
            agent_type="general-purpose",
            stop_hook_active=False,
            last_assistant_message=joined,
        )
        count("hook: subagent conclusion", len(chunk))
        alternatives = [arg for _, text, _ in chunk for arg in ("--alternative", text)]
        run = host.cortex("note", "--kind", "decision", "--subject", f"chunk {index}", *alternatives, joined, "--json")
        assert run.code == 0, run.err
        count("cli: cortex note (content, alternatives)", len(chunk))
        edited = host.cortex(
            "edit-memory", json.loads(run.out)["id"], "--text", "\n".join(text for _, text, _ in reversed(chunk))
        )
        assert edited.code == 0, edited.err
        count("cli: cortex edit-memory", len(chunk))
        run = host.cortex("recall", " ".join(joined.split()))
        assert run.code == 0, run.err
        count("cli: cortex recall (topic)", len(chunk))
        run = host.cortex(
            "log",
            "cmd",
            "--cmd",
            " && ".join(text for _, text, _ in chunk),
            "--stdout",
            joined,
            "--stderr",
            joined,
            "--exit",
            "1",
        )
        assert run.code == 0, run.err
        count("cli: cortex log cmd", len(chunk))
    host.fire("cortex-end-of-turn.sh", "Stop", stop_hook_active=False)

    export = tmp_path / "in.jsonl"
    export.write_text(
        "\n".join(
            [
                json.dumps({"cortex_export": 1}),
                *(
                    json.dumps(
                        {
                            "id": str(uuid.UUID(int=i + 1)),
                            "scope": "x",
                            "timestamp": "2026-08-01T00:00:00Z",
                            "kind": "decision",
                            "subject": f"imported {i}",
                            "content": text,
                            "alternatives": [text],
                            "source": text,
                        }
                    )
                    for i, (_, text, _) in enumerate(cases)
                ),
            ]
        )
        + "\n"
    )
    run = host.cortex("import", str(export), "--scope", "here")
    assert run.code == 0, run.err
    count("cli: cortex import (export: content, alternatives, source)", len(cases))
    memory = tmp_path / "CLAUDE.md"
    memory.write_text("# Secrets\n\n" + "\n\n".join(f"- {' '.join(text.split())}" for _, text, _ in cases) + "\n")
    run = host.cortex("import", str(memory))
    assert run.code == 0, run.err
    count("cli: cortex import (CLAUDE.md)", len(cases))
    for i, (_, text, _) in enumerate(cases):
        repo.write(f"docs/decisions/{i + 1:04d}-case.md", _decision_file(i, text))
    repo.commit("adr: secrets")
    run = host.cortex("sync", "--json")
    assert run.code == 0, run.err
    count("shared decision files (title, decision, options)", len(cases))
    # Imports and others' decision files wait for a person, who accepts them at a terminal.
    run, prompted, _ = at_terminal(repo.path, "inbox", "accept", "--all", now=None)
    assert run.code == 0 and prompted == f"accept these {3 * len(cases)} arrivals", run.out
    count("cli: cortex inbox accept --all (every arrival above)", 3 * len(cases))

    async def script(session) -> list[str]:
        errors = []
        for name, text, _ in cases:
            subject = " ".join(text.split())[:200]
            result = await session.call_tool(
                "cortex_note", {"kind": "decision", "content": text, "subject": subject, "alternatives": [text]}
            )
            if result.is_error:
                errors.append(f"{name}: {text_of(result)}")
            result = await session.call_tool("cortex_summarize", {"what": " ".join(text.split())[:400]})
            if result.is_error:
                errors.append(f"{name}: {text_of(result)}")
            result = await session.call_tool("cortex_recall", {"topic": text})
            if result.is_error:
                errors.append(f"{name}: {text_of(result)}")
        return errors

    assert serve(repo, tmp_path, script) == []
    count("mcp: cortex_note (content, subject, alternatives)", len(cases))
    count("mcp: cortex_summarize(what)", len(cases))
    count("mcp: cortex_recall(topic)", len(cases))

    store = describe_store(repo.path).path
    conn = sqlite3.connect(store)
    dump = "\n".join(conn.iterdump()).encode()
    notes = conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0]
    shared = conn.execute("SELECT COUNT(*) FROM notes WHERE origin='shared'").fetchone()[0]
    descriptions = conn.execute("SELECT COUNT(*) FROM events WHERE type='agent'").fetchone()[0]
    recalls = conn.execute("SELECT COUNT(*) FROM retrieval_log").fetchone()[0]
    conn.close()
    home = Path(str(store)).parents[2]
    blobs = [p.read_bytes().lower() for p in _files_to_scan(repo, home)] + [dump.lower()]
    found = [(name, secret) for name, _, secret in cases if _leaks(secret, blobs)]
    if found:  # say where, to fix the path that leaked
        files = _files_to_scan(repo, home)
        for name, secret in found:
            where = [str(f) for f, blob in zip(files, blobs, strict=False) if _leaks(secret, [blob])]
            print(name, where, _leaks(secret, [dump.lower()]), file=sys.stderr)
    pairs = sum(tried.values())
    print(
        f"\nsecret shapes: {len(cases)}; entry paths: {len(tried)}; shape x path tried: {pairs}; found: {len(found)}",
        file=sys.stderr,
    )
    unstored = [name for i, (name, _, _) in enumerate(cases) if f"case{i:03d} ".encode() not in dump]
    assert unstored == []  # every shape really reached the store
    assert notes >= 4 * len(cases) and shared == len(cases) and descriptions == 2 * len(_chunks(cases, HOOK_CHUNK))
    assert recalls == len(cases) + len(_chunks(cases))
    assert len(cases) >= 120 and len(tried) == 19
    assert found == []
