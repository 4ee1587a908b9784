"""Ids as people type them: a full id, a memory-item id (`notes:<id>`), or a unique prefix of ≥ 8 characters.

The one place every id-taking command (CLI, MCP, TUI) turns what it was given into a stored id, so a prefix
that the TUI shows (8 characters) works everywhere and an ambiguous one is refused the same way everywhere.
"""

from __future__ import annotations

import sqlite3

from .errors import InvalidInput

MIN_PREFIX = 8
"""The shortest prefix accepted (the TUI and `list-memory` show 8 characters)."""
MAX_CANDIDATES = 5
"""How many candidates an ambiguous-prefix error lists."""

_QUERIES = {
    # A note's id, or the note part of its memory-item id.
    "notes": "SELECT id FROM notes WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT ?",
    # A memory item's own id (`<table>:<source id>`) or the source id behind it.
    "memory_items": (
        "SELECT id FROM memory_items WHERE substr(id, 1, ?1) = ?2 OR substr(source_id, 1, ?1) = ?2 ORDER BY id LIMIT ?3"
    ),
}


def resolve_prefix(conn: sqlite3.Connection, table: str, prefix: str, *, what: str) -> str | None:
    """The one stored id in `table` that starts with `prefix`, or None when none does.

    Args:
        table: `notes` or `memory_items`.
        what: how the error names the thing (`note`, `memory item`).

    Raises:
        InvalidInput: the prefix matches more than one id (the error lists them).
    """
    raw = prefix.strip()
    if len(raw) < MIN_PREFIX:
        return None
    found = [str(r[0]) for r in conn.execute(_QUERIES[table], (len(raw), raw, MAX_CANDIDATES + 1))]
    if len(found) > 1:
        shown = ", ".join(found[:MAX_CANDIDATES]) + (", …" if len(found) > MAX_CANDIDATES else "")
        raise InvalidInput(f'id prefix "{raw}" matches more than one {what}: {shown}; give more characters',
                           code="ambiguous_id", candidates=found[:MAX_CANDIDATES])
    return found[0] if found else None
