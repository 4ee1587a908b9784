"""No secret and no raw terminal escape reaches the store, whichever path writes it.

Every shape of `secret_shapes` goes through every entry path (the real hook scripts with Claude Code
payloads, the `cortex` CLI, a real MCP client, imports, shared decision files, recall topics), then the
database file, its WAL and every runtime file are scanned for the secret bytes.

A path keeps only so much of a field (a Bash command 500 characters, an Agent description 300, an output tail 40
lines), so a shape past that would pass without being tried. Each path's shapes are therefore packed into as few
calls as its limit keeps whole, and each shape sits between two harmless canaries unique to the path and the shape:
both must be found in the store afterwards, or the shape never got there.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import uuid
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

from cortex_engine.engine import Engine, describe_store
from cortex_engine.store.redact import redact

from ..conftest import Repo
from ..terminal import at_terminal
from .conftest import Host, serve, text_of
from .secret_shapes import shapes


@dataclass(frozen=True)
class Entry:
    """One field of one entry path and how much of it the engine keeps."""

    name: str
    limit: int = 20_000  # characters kept from the field's start (from its end with `lines`)
    lines: int = 0  # an output tail: the last `lines` lines and `limit` characters are kept
    collapse: bool = False  # whitespace is collapsed before storing: a line break becomes a space
    refuses: bool = False  # a longer field is refused, not cut: the caller cuts a shape that cannot fit alone


# Redaction can lengthen a short secret ([REDACTED] is 10 characters): a chunk stays this far under a limit.
MARGIN = 24


def _canaries(entry: int, index: int) -> tuple[str, str]:
    """Two harmless words, unique to the entry path and the shape, placed on either side of the shape."""
    return f"cy{entry:02d}{index:03d}open", f"cy{entry:02d}{index:03d}shut"


def _eats_its_line(text: str) -> bool:
    """Whether the shape's redaction takes the rest of its line (a header value): in a collapsed field the canary
    after it is redacted with it, and nothing may follow it in the same call."""
    close = "cy99999shut"
    return close not in redact(f"{text} {close}")


class Plan:
    """Each entry path's calls: the shapes packed into as few fields as the path's limit keeps whole, each shape
    between its two canaries; `expected` says which canaries must be found stored afterwards."""

    def __init__(self, cases: list[tuple[str, str, str]]) -> None:
        self.cases = cases
        self.entries: list[Entry] = []
        self.expected: dict[tuple[str, str], list[str]] = {}
        self.eaters = {i for i, (_, text, _) in enumerate(cases) if _eats_its_line(text)}

    def fields(self, entry: Entry) -> list[list[str]]:
        """The path's calls, each a list of items (one per shape) to join into the field."""
        number = len(self.entries)
        self.entries.append(entry)
        room = entry.limit - MARGIN
        calls: list[list[str]] = []
        items: list[str] = []
        size = lines = 0
        for index, (name, text, _) in enumerate(self.cases):
            opening, closing = _canaries(number, index)
            item = f"{opening} {text}\n{closing}"
            if entry.collapse:
                item = " ".join(item.split())
            oversize = len(item) > room
            if oversize and entry.refuses:
                item = item[:room]
            wanted = [opening] if oversize or (entry.collapse and index in self.eaters) else [opening, closing]
            self.expected[(entry.name, name)] = wanted
            grows = len(item) + 1, item.count("\n") + 1
            if items and (size + grows[0] > room or (entry.lines and lines + grows[1] > entry.lines)):
                calls.append(items)
                items, size, lines = [], 0, 0
            items.append(item)
            size, lines = size + grows[0], lines + grows[1]
            if oversize or (entry.collapse and index in self.eaters):
                calls.append(items)
                items, size, lines = [], 0, 0
        if items:
            calls.append(items)
        return calls


def _canaries_in(blobs: list[bytes]) -> set[str]:
    """Every canary the blobs hold (one pass each)."""
    return {m.decode() for blob in blobs for m in re.findall(rb"cy\d{5}(?:open|shut)", blob)}


def _joined(calls: list[list[str]], sep: str = "\n") -> list[str]:
    """Each call's items as one field."""
    return [sep.join(items) for items in calls]


def _together(*columns: list, fill: object = None) -> list[tuple]:
    """Calls that carry several paths at once: as many as the path with the most, a missing field `fill`."""
    return list(zip_longest(*columns, fillvalue=fill))


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
    """Every shape through every entry path (hooks, CLI, MCP, import, shared decision files, recall topics), packed
    per path into as few calls as the path's limit keeps whole; afterwards each shape's canaries are found stored for
    every path (it really got there) and zero secret bytes are in the database, its WAL or any runtime file."""
    cases = [(name, f"case{i:03d} {text}", secret) for i, (name, text, secret) in enumerate(shapes())]
    plan = Plan(cases)
    host.session_start()

    # The capture hook: pure bash, each payload appended to the spool and flushed into the store at the turn's end.
    capture = "cortex-capture.sh"
    for command in _joined(plan.fields(Entry("hook: Bash command", 500, collapse=True))):
        host.fire(
            capture,
            "PostToolUseFailure",
            tool_name="Bash",
            tool_input={"command": command},
            error="Command exited with non-zero status code 1",
            is_interrupt=False,
        )
    for output in _joined(plan.fields(Entry("hook: failing command output", 2000, lines=40))):
        host.fire(
            capture,
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": "python -m pytest -q tests"},
            tool_response={"stdout": output, "stderr": output, "interrupted": False, "exit_code": 1},
        )
    for error in _joined(plan.fields(Entry("hook: failure error", 2000, lines=39))):
        host.fire(
            capture,
            "PostToolUseFailure",
            tool_name="Bash",
            tool_input={"command": "make build"},
            error=f"Command exited with non-zero status code 2\n{error}",
            is_interrupt=False,
        )
    for pattern in _joined(plan.fields(Entry("hook: Grep pattern", 200))):
        host.fire(
            capture,
            "PostToolUse",
            tool_name="Grep",
            tool_input={"pattern": pattern, "path": "src"},
            tool_response={"mode": "files_with_matches", "filenames": [], "numFiles": 0},
        )
    described = 0
    for tool in ("Agent", "Task"):
        for description in _joined(plan.fields(Entry(f"hook: {tool} description", 300))):
            described += 1
            host.fire(
                capture,
                "PostToolUse",
                tool_name=tool,
                tool_input={"description": description, "subagent_type": "general-purpose", "prompt": description},
                tool_response={"content": [{"type": "text", "text": "done"}]},
            )

    # The subagent hook starts `cortex hook ACTION`: the first call of each action goes through the script and a real
    # process, the rest straight to `cortex hook ACTION` in this process with the payload the script would pipe.
    dispatches = _together(
        _joined(plan.fields(Entry("hook: Agent dispatch description", 500))),
        _joined(plan.fields(Entry("hook: Agent dispatch prompt", 8192, collapse=True))),
        fill="dispatch",
    )
    for index, (description, prompt) in enumerate(dispatches):
        fields: dict[str, object] = {
            "tool_name": "Agent",
            "tool_use_id": f"toolu_d{index}",
            "tool_input": {"description": description, "subagent_type": "general-purpose", "prompt": prompt},
        }
        if index == 0:
            host.fire("cortex-subagent.sh", "PreToolUse", "dispatch-pre", **fields)
        else:
            host.hook("dispatch-pre", "PreToolUse", **fields)
    for index, conclusion in enumerate(_joined(plan.fields(Entry("hook: subagent conclusion", 4000)))):
        start = {"agent_id": f"agent-{index}", "agent_type": "general-purpose"}
        stop = {**start, "stop_hook_active": False, "last_assistant_message": conclusion}
        if index == 0:
            host.fire("cortex-subagent.sh", "SubagentStart", "subagent-start", **start)
            host.fire("cortex-subagent.sh", "SubagentStop", "subagent-stop", **stop)
        else:
            host.hook("subagent-start", "SubagentStart", **start)
            host.hook("subagent-stop", "SubagentStop", **stop)

    # The CLI, in this process (`run_in_process` holds it to the real executable's behaviour).
    noted = _together(
        _joined(plan.fields(Entry("cli: cortex note (content)"))),
        plan.fields(Entry("cli: cortex note (alternatives)", 2000, refuses=True)),
        _joined(plan.fields(Entry("cli: cortex edit-memory"))),
        fill=None,
    )
    for index, (content, alternatives, edit) in enumerate(noted):
        options = [arg for text in alternatives or [] for arg in ("--alternative", text)]
        run = host.cortex(
            "note", "--kind", "decision", "--subject", f"chunk {index}", *options, content or "x", "--json"
        )
        assert run.code == 0, run.err
        if edit is not None:
            edited = host.cortex("edit-memory", json.loads(run.out)["id"], "--text", edit)
            assert edited.code == 0, edited.err
    topics = _joined(plan.fields(Entry("cli: cortex recall (topic)")))
    for topic in topics:
        run = host.cortex("recall", topic)
        assert run.code == 0, run.err
    for command in _joined(plan.fields(Entry("cli: cortex log cmd", 500, collapse=True)), " && "):
        run = host.cortex("log", "cmd", "--cmd", command, "--stdout", command, "--stderr", command, "--exit", "1")
        assert run.code == 0, run.err
    host.fire("cortex-end-of-turn.sh", "Stop", stop_hook_active=False)

    # Imports and shared decision files: one record, bullet or file per shape.
    exported = [plan.fields(Entry(f"cli: cortex import (export {field})")) for field in ("content", "alternative")]
    sources = plan.fields(Entry("cli: cortex import (export source)"))
    records = [item for call in exported[0] for item in call]
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
                            "content": content,
                            "alternatives": [alternative],
                            "source": source,
                        }
                    )
                    for i, (content, alternative, source) in enumerate(
                        zip(
                            records,
                            [item for call in exported[1] for item in call],
                            [item for call in sources for item in call],
                            strict=True,
                        )
                    )
                ),
            ]
        )
        + "\n"
    )
    run = host.cortex("import", str(export), "--scope", "here")
    assert run.code == 0, run.err
    bullets = [item for call in plan.fields(Entry("cli: cortex import (CLAUDE.md)", collapse=True)) for item in call]
    memory = tmp_path / "CLAUDE.md"
    memory.write_text("# Secrets\n\n" + "\n\n".join(f"- {bullet}" for bullet in bullets) + "\n")
    run = host.cortex("import", str(memory))
    assert run.code == 0, run.err
    decided = [item for call in plan.fields(Entry("shared decision files (options)", collapse=True)) for item in call]
    for i, text in enumerate(decided):
        repo.write(f"docs/decisions/{i + 1:04d}-case.md", _decision_file(i, text))
    repo.commit("adr: secrets")
    run = host.cortex("sync", "--json")
    assert run.code == 0, run.err
    # Imports and others' decision files wait for a person, who accepts them at a terminal.
    run, prompted, _ = at_terminal(repo.path, "inbox", "accept", "--all", now=None)
    assert run.code == 0 and prompted == f"accept these {3 * len(cases)} arrivals", run.out

    # A real MCP client on `cortex serve`.
    notes = _together(
        _joined(plan.fields(Entry("mcp: cortex_note (content)"))),
        _joined(plan.fields(Entry("mcp: cortex_note (subject)", 200, collapse=True, refuses=True)), " "),
        plan.fields(Entry("mcp: cortex_note (alternatives)", 2000, refuses=True)),
    )
    summaries = _joined(plan.fields(Entry("mcp: cortex_summarize(what)", 500, collapse=True, refuses=True)), " ")
    mcp_topics = _joined(plan.fields(Entry("mcp: cortex_recall(topic)")))

    written: list[str] = []  # each summary as written (the next one replaces it in the store)

    async def script(session) -> list[str]:
        calls = [
            ("cortex_note", {"kind": "decision", "content": c or "x", "subject": s or "x", "alternatives": a or []})
            for c, s, a in notes
        ]
        calls += [("cortex_summarize", {"what": what}) for what in summaries]
        calls += [("cortex_recall", {"topic": topic}) for topic in mcp_topics]
        errors = []
        for tool, arguments in calls:
            result = await session.call_tool(tool, arguments)
            if result.is_error:
                errors.append(f"{tool}: {text_of(result)}")
            elif tool == "cortex_summarize":
                written.append(text_of(result))
        return errors

    assert serve(repo, tmp_path, script) == []

    store = describe_store(repo.path).path
    conn = sqlite3.connect(store)
    dump = "\n".join(conn.iterdump()).encode().lower()
    shared = conn.execute("SELECT COUNT(*) FROM notes WHERE origin='shared'").fetchone()[0]
    descriptions = conn.execute("SELECT COUNT(*) FROM events WHERE type='agent'").fetchone()[0]
    recalls = conn.execute("SELECT COUNT(*) FROM retrieval_log").fetchone()[0]
    conn.close()
    home = Path(str(store)).parents[2]
    files = _files_to_scan(repo, home)
    blobs = [p.read_bytes().lower() for p in files] + [dump]
    found = [(name, secret) for name, _, secret in cases if _leaks(secret, blobs)]
    if found:  # say where, to fix the path that leaked
        for name, secret in found:
            where = [str(f) for f, blob in zip(files, blobs, strict=False) if _leaks(secret, [blob])]
            print(name, where, _leaks(secret, [dump]), file=sys.stderr)
    # The positive control: the store itself (its rows, or its file and WAL for a row already consumed) holds every
    # canary that had to get through; a shape cut off by a limit, or never delivered, leaves its canary missing.
    # A summary replaces the one before it, so each is checked in the text `cortex_summarize` says it wrote.
    stored = _canaries_in([dump] + [p.read_bytes().lower() for p in files if p.name.startswith(Path(str(store)).name)])
    summarized = _canaries_in(["\n".join(written).lower().encode()])
    missing = [
        (path, shape, canary)
        for (path, shape), canaries in plan.expected.items()
        for canary in canaries
        if canary not in (summarized if "summarize" in path else stored)
    ]
    print(
        f"\nsecret shapes: {len(cases)}; entry paths: {len(plan.entries)}; shape x path tried: {len(plan.expected)}; "
        f"canaries missing: {len(missing)}; found: {len(found)}",
        file=sys.stderr,
    )
    assert missing == []
    # Only the canary after a shape may be spared, and only where the path cannot keep it: after a header value that
    # takes the rest of its line in a collapsed field, or after a shape longer than all the path keeps.
    spared = [(path, shape) for (path, shape), canaries in plan.expected.items() if len(canaries) == 1]
    assert 0 < len(plan.eaters) <= 6 and len(spared) <= 4 * len(plan.entries), spared
    assert len(plan.expected) == len(cases) * len(plan.entries)
    assert shared == len(cases) and descriptions == described
    assert recalls == len(mcp_topics) + len(topics)
    assert len(cases) >= 120 and len(plan.entries) == 24
    assert found == []
