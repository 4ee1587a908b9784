"""Subagent briefs, conclusions, the turn-end offer, the memory guard, and the unprompted hints."""

from __future__ import annotations

import json

import pytest

from cortex_engine.adapters import hookentry
from cortex_engine.capture import agents, reflex
from cortex_engine.engine import Engine

from .conftest import Repo

HOST = "claude-1"


@pytest.fixture
def live(repo: Repo, make_engine) -> Engine:
    """A started session with one decision from an earlier session and one from this one."""
    repo.write("src/api.py", "A = 1\n")
    repo.commit("api")
    earlier = make_engine(repo.path)
    earlier.start_session("claude-0")
    earlier.note("decision", "serve the api from src/api.py behind the gateway", "api serving")
    engine = make_engine(repo.path)
    engine.start_session(HOST)
    return engine


def dispatch(engine: Engine, description: str, agent_type: str = "general-purpose", prompt: str = "do it") -> None:
    agents.dispatch_pre(
        engine,
        {
            "session_id": HOST,
            "tool_name": "Agent",
            "tool_input": {"description": description, "subagent_type": agent_type, "prompt": prompt},
        },
    )


def start(engine: Engine, agent_id: str, agent_type: str = "general-purpose") -> str:
    return agents.subagent_start(engine, {"session_id": HOST, "agent_id": agent_id, "agent_type": agent_type})


def test_subagent_brief_when_exactly_one_dispatch_matches(live: Engine) -> None:
    """One matching dispatch: the child gets a brief within 150 tokens, booked to the child."""
    dispatch(live, "review the api serving design")
    text = start(live, "a1")
    assert "[api serving] serve the api from src/api.py behind the gateway" in text
    child = live.conn.execute("SELECT id FROM sessions WHERE agent_id='a1'").fetchone()["id"]
    booked = live.conn.execute("SELECT channel, tokens FROM token_ledger WHERE session_id=?", (child,)).fetchall()
    assert [(r["channel"], r["tokens"] <= 150) for r in booked] == [("subagent_brief", True)]


def test_subagent_brief_cap_is_enforced_on_the_brief_itself(live: Engine) -> None:
    """One very long memory cannot make an unasked-for brief exceed 150 tokens."""
    live.note("decision", "api serving: " + "a very long rationale about the gateway " * 60, "api gateway")
    dispatch(live, "review the api gateway")
    text = start(live, "a1")
    assert len(text) <= 600


def test_subagent_brief_silent_when_ambiguous_or_unmatched(live: Engine) -> None:
    """Two pending dispatches of one type: nothing is sent (a guess could brief the wrong job)."""
    dispatch(live, "review the api serving design")
    dispatch(live, "review the api serving design again")
    assert start(live, "a1") == ""
    assert start(live, "a2", agent_type="Explore") == ""
    assert live.conn.execute("SELECT COUNT(*) FROM sessions WHERE agent_id IN ('a1','a2')").fetchone()[0] == 2


def test_subagent_brief_silent_when_already_pasted(live: Engine) -> None:
    """If the parent already pasted the memory into the prompt, the brief is suppressed."""
    dispatch(
        live,
        "review the api serving design",
        prompt="Context: serve the api from src/api.py behind the gateway. Review it.",
    )
    assert start(live, "a1") == ""


@pytest.mark.parametrize("off", ["off", "0", "false"])
def test_subagent_brief_off_switch(live: Engine, monkeypatch: pytest.MonkeyPatch, off: str) -> None:
    """CORTEX_SUBAGENT_BRIEF=off (or any switch's off spelling) stops the recording and the brief."""
    monkeypatch.setenv("CORTEX_SUBAGENT_BRIEF", off)
    dispatch(live, "review the api serving design")
    assert start(live, "a1") == ""
    assert live.conn.execute("SELECT COUNT(*) FROM subagent_dispatches").fetchone()[0] == 0


def test_start_without_agent_id_or_primary_creates_nothing(live: Engine) -> None:
    """No agent id, or no active primary for the host session: silence, and no manufactured session."""
    before = live.conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    assert agents.subagent_start(live, {"session_id": HOST}) == ""
    assert agents.subagent_start(live, {"session_id": "unknown-host", "agent_id": "x"}) == ""
    assert live.conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == before


def test_conclusion_kept_trimmed_and_offered_once(live: Engine) -> None:
    """A long final answer is trimmed at 4000 characters and says so; the offer is made once."""
    start(live, "a1")
    long_answer = "We decided to cache the app graph per turn. " + "detail " * 1000
    agents.subagent_stop(live, {"session_id": HOST, "agent_id": "a1", "last_assistant_message": long_answer})
    summary = live.conn.execute("SELECT summary FROM episodes WHERE kind='subagent_conclusion'").fetchone()[0]
    assert summary.endswith("[trimmed at 4000 characters]")
    primary = live.current_session()["id"]
    nudge = agents.end_of_turn_nudge(live, primary)
    assert "- decision: We decided to cache the app graph per turn." in nudge
    assert agents.end_of_turn_nudge(live, primary) == ""
    assert (
        live.conn.execute("SELECT COUNT(*) FROM scoped_notes WHERE content LIKE '%cache the app graph%'").fetchone()[0]
        == 0
    )


def test_guard_refuses_a_subagent_retiring_earlier_work(live: Engine) -> None:
    """A subagent's decision on a subject held by an earlier session is denied, with the reason."""
    start(live, "a1")
    out = agents.guard(
        live,
        {
            "session_id": HOST,
            "agent_id": "a1",
            "tool_name": "mcp__cortex__cortex_note",
            "tool_input": {"kind": "decision", "subject": "API serving", "content": "serve directly"},
        },
    )
    assert out.startswith("Cortex refused this: a subagent may not retire memory from earlier work on this branch.")


@pytest.mark.parametrize(
    ("command", "verb"),
    [
        ("cortex delete-memory {id} --yes", "delete"),
        ('bash -c "cortex edit-memory {id} --text x"', "rewrite"),
        ("cortex note-resolve --id {id} --status superseded", "retire"),
    ],
)
def test_guard_reads_shell_commands(live: Engine, command: str, verb: str) -> None:
    """Memory-changing cortex commands inside Bash are caught, even one level inside bash -c."""
    start(live, "a1")
    note_id = live.conn.execute("SELECT id FROM notes").fetchone()["id"]
    out = agents.guard(
        live,
        {
            "session_id": HOST,
            "agent_id": "a1",
            "tool_name": "Bash",
            "tool_input": {"command": command.format(id=note_id)},
        },
    )
    assert f"a subagent may not {verb} memory" in out


def test_guard_refuses_a_subagent_reanchoring_earlier_work_over_mcp(live: Engine) -> None:
    """cortex_reanchor is guarded like `cortex reanchor ID` in Bash: a subagent may not rewrite an earlier note's
    anchor; the parent may, and the tool is in the guard's matcher of both install and the plugin."""
    from cortex_engine.ops.plugin import GUARD_MATCHER
    from cortex_engine.ops.wiring import WIRINGS

    start(live, "a1")
    note_id = live.conn.execute("SELECT id FROM notes").fetchone()["id"]
    call = {
        "session_id": HOST,
        "tool_name": "mcp__cortex__cortex_reanchor",
        "tool_input": {"item_id": f"notes:{note_id}"},
    }
    out = agents.guard(live, {**call, "agent_id": "a1"})
    assert "a subagent may not rewrite memory" in out
    assert agents.guard(live, call) == ""
    (guard,) = [w for w in WIRINGS if w.action == "guard-memory"]
    assert guard.covered_by(guard.matcher) and "mcp__cortex__cortex_reanchor" in guard.matcher.split("|")
    assert "mcp__.*__cortex_reanchor" in GUARD_MATCHER.split("|")


def test_guard_allows_parent_own_work_previews_and_other_subjects(live: Engine) -> None:
    """The parent is never blocked; nor a preview, nor memory this conversation wrote."""
    start(live, "a1")
    mine = live.note("decision", "cache tokens for an hour", "token cache")
    note_id = live.conn.execute("SELECT id FROM notes WHERE subject='api serving'").fetchone()["id"]
    base = {"session_id": HOST, "agent_id": "a1"}
    assert (
        agents.guard(
            live,
            {
                "session_id": HOST,
                "tool_name": "Bash",
                "tool_input": {"command": f"cortex delete-memory {note_id} --yes"},
            },
        )
        == ""
    )
    assert (
        agents.guard(live, {**base, "tool_name": "Bash", "tool_input": {"command": f"cortex delete-memory {note_id}"}})
        == ""
    )
    assert (
        agents.guard(live, {**base, "tool_name": "mcp__cortex__cortex_resolve", "tool_input": {"note_id": mine.id}})
        == ""
    )
    assert (
        agents.guard(
            live,
            {
                **base,
                "tool_name": "mcp__cortex__cortex_note",
                "tool_input": {"kind": "decision", "subject": "brand new", "content": "x"},
            },
        )
        == ""
    )


def test_consult_hint_at_most_once_and_never_after_a_consult(live: Engine) -> None:
    """The hint fires once for a memory-relevant prompt, and not at all once memory was consulted."""
    session = live.current_session()["id"]
    first = live.consult_hint("let's fix the failing gateway test", session)
    assert first == reflex.HINT
    assert live.consult_hint("fix it again", session) == ""
    live.start_session("claude-2")
    fresh = live.current_session()["id"]
    live.recall("gateway")
    assert live.consult_hint("fix the gateway", fresh) == ""


def test_whisper_needs_high_confidence_and_never_carries_superseded(live: Engine, repo: Repo) -> None:
    """Editing a file memory talks about whispers the note once; a superseded one is never whispered."""
    session = live.current_session()["id"]
    out = live.whisper("edit", "src/api.py", session)
    assert out.startswith("Cortex memory: Decision [2026-08-02 18:00Z]: [api serving] serve the api from src/api.py")
    assert live.whisper("edit", "src/api.py", session) == ""
    assert live.whisper("edit", "src/unrelated.py", session) == ""
    live.note("decision", "serve the api from src/api.py directly", "api serving")
    note = live.conn.execute("SELECT id FROM scoped_notes WHERE content LIKE '%directly%'").fetchone()["id"]
    live.resolve(note, status="superseded")
    other = live.current_session()["id"]
    live.start_session("claude-3")
    later = live.whisper("edit", "src/api.py", live.current_session()["id"])
    assert "directly" not in later
    assert other != live.current_session()["id"]


def test_the_hook_adapter_alone_speaks_the_wire_format() -> None:
    """The engine answers in text; `hookentry` wraps it as Claude Code expects, and says nothing for ""."""
    assert json.loads(hookentry.context_output("SubagentStart", "brief")) == {
        "hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "brief"}
    }
    assert json.loads(hookentry.deny_output("no")) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no",
        }
    }
    assert json.loads(hookentry.block_output("more")) == {"decision": "block", "reason": "more"}
    assert (hookentry.context_output("PreToolUse", ""), hookentry.deny_output(""), hookentry.block_output("")) == (
        "",
        "",
        "",
    )
