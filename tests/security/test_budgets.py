"""Every surface is within its budget for any input, `--budget` included; long text is cut, not lost.

A note of 19,600 characters made recall return 4,901 tokens against 600 (and against `--budget 20`), and a
100 KB subject made state 275,025 tokens against 800. Properties below write notes of random sizes and check
every surface (recall, brief, state, session brief, header, subagent brief, reflex whisper) and the MCP tools.
"""

from __future__ import annotations

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortex_engine.adapters.mcp_server import build_server
from cortex_engine.base.tokens import estimate_tokens
from cortex_engine.capture import reflex
from cortex_engine.engine import Engine
from cortex_engine.query.surfaces import BUDGETS

from ..conftest import Repo, Served, examples
from .conftest import Host, text_of

WORDS = "the queue engine keeps its retries bounded because the broker drops late acks under load "


def _text(lead: str, size: int) -> str:
    return (f"{lead} " + WORDS * (size // len(WORDS) + 1))[: max(size, len(lead))].strip()


NOTE = st.tuples(
    st.sampled_from(["decision", "intent", "blocker", "insight", "focus"]),
    st.integers(1, 20_000),
    st.integers(1, 200),
    st.lists(st.integers(1, 600), max_size=3),
)
BUDGET = st.one_of(st.none(), st.integers(20, 3_000))


def _write(engine: Engine, note: tuple[str, int, int, list[int]], serial: int) -> None:
    kind, size, subject_size, alternatives = note
    subject = _text(f"kiwi{serial}", subject_size)
    engine.note(kind, _text("kiwi", size), subject, [_text("rejected", n) for n in alternatives])


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(notes=st.lists(NOTE, min_size=1, max_size=3), budget=BUDGET, agent_size=st.integers(0, 3_000))
def test_every_surface_holds_its_budget_for_any_note_size(engine: Engine, notes, budget, agent_size) -> None:
    """Property: for notes of 1–20,000 characters, subjects up to the cap and any budget, no surface overruns."""
    for note in notes:
        _write(engine, note, engine.conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0])
    session = engine.ensure_session()
    agent = _text("reviewer", agent_size) if agent_size else None
    shown = {
        "recall": (engine.recall("kiwi queue", budget, book=False), budget or BUDGETS["recall"]),
        "brief": (engine.brief("kiwi queue", agent, budget, book=False), budget or BUDGETS["brief"]),
        "state": (engine.state(budget, book=False), budget or BUDGETS["state"]),
        "session_brief": (engine.session_brief(budget, book=False), budget or BUDGETS["session_brief"]),
        "header": (engine.header(budget), budget or BUDGETS["header"]),
    }
    over = {
        name: (estimate_tokens(s.text), limit) for name, (s, limit) in shown.items() if estimate_tokens(s.text) > limit
    }
    sub = engine.brief_for_subagent("kiwi queue", "general-purpose", "", session)
    if estimate_tokens(sub) > BUDGETS["subagent_brief"]:
        over["subagent_brief"] = (estimate_tokens(sub), BUDGETS["subagent_brief"])
    line = engine.whisper("edit", "kiwi", session)
    if len(line) > reflex.WHISPER_CHARS:
        over["whisper"] = (len(line), reflex.WHISPER_CHARS)
    assert over == {}
    assert shown["recall"][0].items  # never vacuous: the top item is always shown


def test_a_long_first_item_is_cut_with_a_pointer_to_its_text(engine: Engine) -> None:
    """A 19,600-character note: recall is ≤ 600 tokens by default and ≤ 20 with budget 20, cut with `…` and
    the command that shows the whole text; the whole text is still stored."""
    written = engine.note("decision", _text("kiwi", 19_600), "queue engine")
    default = engine.recall("kiwi queue", book=False)
    tiny = engine.recall("kiwi queue", 20, book=False)
    state = engine.state(20, book=False)
    assert (
        estimate_tokens(default.text) <= 600 and estimate_tokens(tiny.text) <= 20 and estimate_tokens(state.text) <= 20
    )
    assert "…" in default.text and f"inspect-memory {written.item_id}" in default.text
    assert "…" in tiny.text and [i.id for i in tiny.items] == [written.item_id]
    stored = engine.conn.execute("SELECT content FROM scoped_notes WHERE id=?", (written.id,)).fetchone()[0]
    assert len(stored) == len(_text("kiwi", 19_600))


def test_a_subject_over_the_cap_is_refused_naming_the_limit(engine: Engine) -> None:
    """A 100 KB subject is refused at write time with the limit in the message; nothing is written."""
    from cortex_engine.base.errors import InvalidInput

    with pytest.raises(InvalidInput, match="limit is 200"):
        engine.note("decision", "use kafka", "s" * 100_000)
    assert engine.conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0] == 0


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(note=NOTE, budget=st.integers(20, 3_000))
def test_mcp_tools_hold_their_budgets_for_any_note_size(repo: Repo, note, budget) -> None:
    """Property over the MCP tools (the server's own tool dispatch): recall, brief, state, engage within budget."""
    server = build_server(str(repo.path))

    async def call(name: str, args: dict) -> str:
        result = await server.call_tool(name, args)
        assert not result.is_error, result
        return text_of(result)

    kind, size, subject_size, alternatives = note

    async def run() -> dict[str, tuple[int, int]]:
        await call(
            "cortex_note",
            {
                "kind": kind,
                "content": _text("kiwi", size),
                "subject": _text("kiwi", subject_size),
                "alternatives": [_text("rejected", n) for n in alternatives],
            },
        )
        texts = {
            "cortex_recall": (await call("cortex_recall", {"topic": "kiwi queue", "budget": budget}), budget),
            "cortex_recall default": (await call("cortex_recall", {"topic": "kiwi queue"}), BUDGETS["recall"]),
            "cortex_brief": (
                await call("cortex_brief", {"topic": "kiwi", "for_agent": _text("r", size), "budget": budget}),
                budget,
            ),
            "cortex_state": (await call("cortex_state", {"budget": budget}), budget),
            "cortex_engage": (await call("cortex_engage", {}), BUDGETS["state"]),
        }
        return {name: (estimate_tokens(text), limit) for name, (text, limit) in texts.items()}

    sizes = anyio.run(run)
    assert {name: pair for name, pair in sizes.items() if pair[0] > pair[1]} == {}


def test_mcp_over_stdio_cuts_long_notes_and_refuses_long_subjects_and_summaries(served: Served) -> None:
    """A real client over stdio: a 19,600-character note within budget; a 100 KB subject and a 100 KB
    `cortex_summarize(what)` are tool errors that name the limit (on the shared server: nothing else notes kiwi)."""

    async def script(session) -> tuple[str, str, str, str]:
        await session.call_tool(
            "cortex_note", {"kind": "decision", "content": _text("kiwi", 19_600), "subject": "queue"}
        )
        recall = text_of(await session.call_tool("cortex_recall", {"topic": "kiwi queue", "budget": 20}))
        subject = await session.call_tool("cortex_note", {"kind": "decision", "content": "x", "subject": "s" * 100_000})
        summary = await session.call_tool("cortex_summarize", {"what": "w" * 100_000})
        return recall, text_of(subject) if subject.is_error else "", text_of(summary) if summary.is_error else "", ""

    (recall, subject_error, summary_error, _), stray = served.run(script)
    assert stray == []
    assert estimate_tokens(recall) <= 20 and "…" in recall
    assert "limit is 200" in subject_error
    assert "limit is 500" in summary_error


def test_cli_refuses_a_long_subject_and_summary_in_one_line(host: Host, repo: Repo) -> None:
    """`cortex note` with a 100 KB subject and `cortex summarize` with a 100 KB description: exit 1, one
    `cortex:` line naming the limit, nothing stored."""
    host.session_start()
    note = host.cortex("note", "--kind", "decision", "--subject", "s" * 100_000, "use kafka")
    summary = host.cortex("summarize", "w" * 100_000)
    assert (note.code, note.err.count("\n")) == (1, 1) and note.err.startswith("cortex: subject is 100000 characters")
    assert "the limit is 200" in note.err
    assert (summary.code, summary.err.count("\n")) == (1, 1) and "the limit is 500" in summary.err
    assert "no active session" not in summary.out.lower() and host.cortex("list-memory", "--json").data()["total"] == 0
