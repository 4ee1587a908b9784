"""The capability map an agent reads to pick the right Cortex tool."""

from __future__ import annotations

from cortex_engine.base.labels import GLOSSARY, reference

STATE_BY_ADAPTER = {"mcp": "cortex_state", "cli": "cortex state"}
"""The working set, named in the words of the surface a hint is read on (a CLI user has no MCP tools)."""

ROUTE = "\n".join(
    [
        "Cortex route: ambient memory for coding agents.",
        "- cortex_state: the branch's working set (current-session notes, snapshot, decisions, evidence); 800 tokens.",
        f"- cortex_recall(topic): evidence for a topic, every line labelled {GLOSSARY} when it no longer simply holds.",
        "- cortex_brief(topic, for_agent): a smaller decisions-first "
        "brief, e.g. before delegating to a subagent; 450 tokens.",
        "- cortex_note(kind, content, subject, alternatives): record an insight, decision, intent, blocker or focus.",
        "- cortex_resolve(note_id | subject, status, replacement): close a contest or retire a note; a person decides.",
        "- cortex_read_ledger(paths): already read and unchanged? Verdicts come from re-hashing, never from mtime.",
        "- cortex_search_ledger(queries): did this search already find nothing, and would it still?",
        "- cortex_validate_memory(topic), cortex_suggest_notes, "
        "cortex_summarize: audit, suggest (never writes), checkpoint.",
        f"- cortex_reanchor(item_id): a {reference('drifted: …')} "
        "memory you checked still holds: anchor it to the code "
        "as it is now.",
        "- cortex_engage / cortex_disengage: turn capture and the unprompted hints on or off for this worktree.",
    ]
)
