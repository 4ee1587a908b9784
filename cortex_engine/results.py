"""What the facade hands its adapters: the result types `Engine` returns and the few display rules that every
face (CLI, MCP, TUI) must apply the same way. Adapters import these from here, never from a stage folder, so a
stage can be reorganised without touching a screen (`tests/test_imports.py` holds the boundary).

Each name is defined in its stage and only re-exported here, imported on first use: a one-shot command that
prints one error pays for `messages`, not for every stage listed below."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cortex_engine.capture.gc import GC_STEPS
    from cortex_engine.memory.arrivals import ARRIVAL_STATES, Arrival, describe_arrival
    from cortex_engine.memory.corrections import Deletion
    from cortex_engine.memory.inbox import Verdict
    from cortex_engine.memory.items import (
        KIND_WEIGHTS,
        NOTE_KINDS,
        STATES,
        collapse,
        defuse_labels,
        note_content,
        split_trailers,
    )
    from cortex_engine.memory.notes import Resolution
    from cortex_engine.memory.transfer import render_jsonl, render_markdown
    from cortex_engine.query import messages
    from cortex_engine.query.economy import fmt_tokens, render_stats
    from cortex_engine.query.inspection import Inspection, Location, text_diff
    from cortex_engine.query.listing import LABEL_FILTERS, LIST_MAX, Page, PageKey, scope_label
    from cortex_engine.query.render import humanize_kind, label_tag, short_kind, strip_control
    from cortex_engine.query.route import ROUTE
    from cortex_engine.query.surfaces import Surface
    from cortex_engine.scope.identity import cortex_home, read_head, shown_scope_key
    from cortex_engine.store.database import store_error

# name → the stage module that defines it ("" for the module itself)
_HOME = {
    "GC_STEPS": "capture.gc",
    "Arrival": "memory.arrivals",
    "ARRIVAL_STATES": "memory.arrivals",
    "describe_arrival": "memory.arrivals",
    "Verdict": "memory.inbox",
    "Deletion": "memory.corrections",
    "Inspection": "query.inspection",
    "Page": "query.listing",
    "scope_label": "query.listing",
    "Location": "query.inspection",
    "text_diff": "query.inspection",
    "PageKey": "query.listing",
    "LABEL_FILTERS": "query.listing",
    "LIST_MAX": "query.listing",
    "NOTE_KINDS": "memory.items",
    "KIND_WEIGHTS": "memory.items",
    "STATES": "memory.items",
    "collapse": "memory.items",
    "defuse_labels": "memory.items",
    "note_content": "memory.items",
    "split_trailers": "memory.items",
    "Resolution": "memory.notes",
    "render_jsonl": "memory.transfer",
    "render_markdown": "memory.transfer",
    "messages": "query.messages",
    "fmt_tokens": "query.economy",
    "render_stats": "query.economy",
    "humanize_kind": "query.render",
    "strip_control": "query.render",
    "label_tag": "query.render",
    "short_kind": "query.render",
    "ROUTE": "query.route",
    "Surface": "query.surfaces",
    "cortex_home": "scope.identity",
    "read_head": "scope.identity",
    "shown_scope_key": "scope.identity",
    "store_error": "store.database",
}

__all__ = [  # written out, not computed: mypy and ruff read a literal; a test keeps it equal to _HOME
    "ARRIVAL_STATES",
    "Arrival",
    "Deletion",
    "GC_STEPS",
    "Inspection",
    "KIND_WEIGHTS",
    "LABEL_FILTERS",
    "LIST_MAX",
    "Location",
    "NOTE_KINDS",
    "Page",
    "PageKey",
    "ROUTE",
    "Resolution",
    "STATES",
    "Surface",
    "Verdict",
    "collapse",
    "cortex_home",
    "defuse_labels",
    "describe_arrival",
    "fmt_tokens",
    "humanize_kind",
    "label_tag",
    "messages",
    "note_content",
    "read_head",
    "render_jsonl",
    "render_markdown",
    "render_stats",
    "scope_label",
    "short_kind",
    "shown_scope_key",
    "split_trailers",
    "store_error",
    "strip_control",
    "text_diff",
]


def __getattr__(name: str) -> object:
    """Import a re-exported name from its stage on first use."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"cortex_engine.{home}")
    value = module if name == home.rpartition(".")[2] else getattr(module, name)
    globals()[name] = value
    return value
