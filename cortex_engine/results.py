"""What the facade hands its adapters: the result types `Engine` returns and the few display rules that every
face (CLI, MCP, TUI) must apply the same way. Adapters import these from here, never from a stage folder, so a
stage can be reorganised without touching a screen (issue 15; `tests/test_imports.py` holds the boundary).

Standard library only at import: each name is defined in its stage and only re-exported here."""

from __future__ import annotations

from cortex_engine.memory.inspection import Deletion, Inspection, Page, scope_label
from cortex_engine.memory.items import KIND_WEIGHTS, STATES, collapse, note_content, split_trailers
from cortex_engine.memory.notes import Resolution
from cortex_engine.query import messages
from cortex_engine.query.economy import fmt_tokens
from cortex_engine.query.render import humanize_kind, strip_control
from cortex_engine.query.surfaces import Surface
from cortex_engine.scope.identity import cortex_home, read_head

__all__ = [
    "KIND_WEIGHTS", "STATES", "Deletion", "Inspection", "Page", "Resolution", "Surface", "collapse", "cortex_home",
    "fmt_tokens", "humanize_kind", "messages", "note_content", "read_head", "scope_label", "split_trailers",
    "strip_control",
]
