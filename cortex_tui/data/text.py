"""Small formatting helpers for the operator view (presentation only; the engine decides every label).

Every author-supplied string (a subject, a note's text, a captured command, a typed topic) reaches the screen
through `clean`, `one_line`, `plain` or `line`: never as markup, and without terminal controls or bidi overrides.
Stores written before capture stripped those on the way in are shown safely too.
"""

from __future__ import annotations

import re
from datetime import datetime

from textual.content import Content

from cortex_engine.base.clock import parse_iso
from cortex_engine.results import (
    collapse,
    fmt_tokens,
    humanize_kind,
    label_tag,
    note_content,
    scope_label,
    short_kind,
    split_trailers,
    strip_control,
)

__all__ = [
    "ago",
    "age",
    "clean",
    "count",
    "diff_content",
    "first_line",
    "fmt_tokens",
    "humanize_kind",
    "label_tags",
    "line",
    "one_line",
    "plain",
    "scope_label",
    "short_id",
    "short_kind",
]

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (but tab and newline) and C1 controls: ESC sequences, BEL, OSC …
    "\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]"  # bidi and invisible format
)
"""Characters never drawn as they are: terminal controls and the Unicode format characters that reorder or hide
text (U+202E RIGHT-TO-LEFT OVERRIDE makes a line read backwards)."""


def ago(stamp: str | None, now: datetime) -> str:
    """`just now`, `25m ago`, `3h ago`, `12d ago`, or the date beyond 60 days."""
    when = parse_iso(stamp) if stamp else None
    if when is None:
        return "never"
    seconds = (now - when).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h ago"
    if seconds < 60 * 86400:
        return f"{int(seconds // 86400)}d ago"
    return str(stamp)[:10]


def count(n: int, singular: str, plural: str | None = None) -> str:
    """`1 memory`, `2 memories`, `1,204 items`."""
    return f"{n:,} {singular if n == 1 else plural or singular + 's'}"


def short_id(value: object) -> str:
    """The first eight characters of an id (sessions, notes), or a dash."""
    text = str(value or "")
    return text.split(":")[-1][:8] if text else "—"


def clean(text: object) -> str:
    """Author-supplied text without terminal controls or bidi/format characters (newlines and tabs kept)."""
    return _UNSAFE.sub("", strip_control(str(text or "")))


def one_line(text: object) -> str:
    """Author-supplied text on one control-free line."""
    return collapse(clean(text))


def plain(text: object) -> Content:
    """Author-supplied text as literal content (never parsed as markup), cleaned, line breaks kept."""
    return Content(clean(text).expandtabs(4))


def line(text: object) -> Content:
    """Author-supplied text as literal content on one line (border titles, cells, list entries)."""
    return Content(one_line(text))


def body(kind: str, text: str) -> str:
    """What a memory says, for a person: a note's text without its stored trailers (`Subject:`, `Conflict: true`,
    `Status: superseded`, which the inspection shows as its own rows), else the text as stored."""
    return split_trailers(text)[0] if kind.startswith("note:") else text


def first_line(kind: str, text: str) -> str:
    """The body of an item without its `kind:` prefix and trailers, on one line."""
    if kind.startswith("note:"):
        return one_line(note_content(split_trailers(text)[0]))
    return one_line(text.split("\n", 1)[0])


def age(stamp: str | None, now: datetime) -> str:
    """A compact age for table cells: `25m`, `5h`, `9d`, `6w`, `4mo`."""
    when = parse_iso(stamp) if stamp else None
    if when is None:
        return "?"
    seconds = max(0.0, (now - when).total_seconds())
    steps = ((3600, "m", 60), (48 * 3600, "h", 3600), (14 * 86400, "d", 86400), (60 * 86400, "w", 7 * 86400))
    for limit, unit, size in steps:
        if seconds < limit:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds // (30 * 86400))}mo"


def label_tags(labels: list[str] | tuple[str, ...]) -> str:
    """Labels as short tags for a table cell (`stale: missing a.py` → `stale`); the inspection has the paths."""
    tags: list[str] = []
    for label in labels:
        tag = label_tag(label)
        if tag and tag not in tags:
            tags.append(tag)
    return " ".join(tags)


DIFF_STYLES = {"-": "$text-error strike", "+": "$text-success bold", "=": ""}
"""How a word diff's runs are drawn: removed struck through, added in bold (never colour alone)."""


def diff_content(runs: list[tuple[str, str]] | list[list[str]], *, flat: bool = False) -> Content:
    """A word diff (`inspection.text_diff` runs of `=`, `-`, `+`) as literal content; `flat` puts it on one line."""
    parts: list[Content] = []
    previous = "="
    for op, text in runs:
        if op == "+" and previous == "-":
            parts.append(Content(" "))  # a removed word and its replacement stay two words on screen
        previous = op
        shown = one_line(text) if flat else clean(text).expandtabs(4)
        if flat and text[:1].isspace():
            shown = " " + shown
        if flat and text[-1:].isspace() and shown:
            shown += " "
        parts.append(Content(shown).stylize(DIFF_STYLES.get(op, "")) if DIFF_STYLES.get(op) else Content(shown))
    return Content.assemble(*parts)


def fit_parts(parts: list[tuple[Content, int]], width: int) -> Content:
    """Join `(part, rank)` pairs in order, leaving out whole parts, highest rank first, until the rest fits `width`.

    Rank 0 parts are never left out (a line that still does not fit is cut by its widget as before); a part is
    never cut mid-word here, so a narrow header reads `Cortex  repo  ⎇ main` rather than `…  worktree /ho…`.
    """
    kept = list(parts)
    while sum(part.cell_length for part, _ in kept) > width:
        rank = max(rank for _, rank in kept)
        if rank == 0:
            break
        drop = max(n for n, (_, r) in enumerate(kept) if r == rank)
        del kept[drop]
    return Content.assemble(*(part for part, _ in kept))
