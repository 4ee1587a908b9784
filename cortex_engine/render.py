"""Rendering: memory lines with their trust labels, and budgeted assembly of the surfaces."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from .clock import parse_iso, ts_min
from .freshness import Validation
from .memory import collapse, is_contested, is_resolved, is_superseded, note_content, note_origin, split_trailers

SNIPPET_CHARS = 260
ALTERNATIVES_CHARS = 240
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def strip_control(text: str) -> str:
    """Remove terminal control characters (ESC, lone CR, …) but keep tabs and newlines."""
    return _CONTROL.sub("", text)


def subject_tag(subject: str | None, *, lead: bool = False) -> str:
    """`[subject] ` (or ` [subject]` with lead) on one line with control characters removed; '' for none."""
    if not subject:
        return ""
    clean = collapse(strip_control(subject))
    return f" [{clean}]" if lead else f"[{clean}] "


def humanize_kind(kind: str) -> str:
    """`note:decision` → `Decision`, `episode:command_failure` → `Command failure`, …"""
    if kind.startswith("note:") or kind.startswith("episode:"):
        name = kind.split(":", 1)[1]
    else:
        name = {"branch_snapshot": "snapshot", "project_snapshot": "project", "command_run": "command"}.get(kind, kind)
    name = name.replace("_", " ")
    return name[:1].upper() + name[1:]


def age_text(created_at: str, now: datetime) -> str:
    """`today`, `<N>d ago` up to 30 days, else the date."""
    stamp = parse_iso(created_at)
    if stamp is None:
        return "unknown age"
    days = (now - stamp).total_seconds() / 86400.0
    if days < 1:
        return "today"
    if days <= 30:
        return f"{int(days)}d ago"
    return created_at[:10]


def snippet(text: str, max_lines: int) -> str:
    """The first non-empty trimmed lines joined by ` | `, capped at 260 characters."""
    lines = [line.strip() for line in strip_control(text).split("\n") if line.strip()][:max_lines]
    joined = " | ".join(lines)
    return joined if len(joined) <= SNIPPET_CHARS else joined[: SNIPPET_CHARS - 1] + "…"


def item_labels(kind: str, text: str, validation: Validation | None) -> list[str]:
    """The trust labels of one item as separate strings (contested, superseded, resolved, origin, stale, moved)."""
    labels = []
    if is_contested(kind, text):
        labels.append("contested")
    if kind.startswith("note:"):
        if is_superseded(kind, text):
            labels.append("superseded")
        elif is_resolved(text):
            labels.append("resolved")
        origin = note_origin(kind, text)
        if origin:
            labels.append(origin)
    if validation is not None and validation.label:
        labels.extend(validation.label.split("; "))
    return labels


def origin_suffix(kind: str, text: str) -> str:
    """` (from <branch>)` or ` (shared)` for a note that was not written in the scope showing it, else ''."""
    origin = note_origin(kind, text)
    return f" ({strip_control(origin)})" if origin else ""


def note_label_suffix(kind: str, text: str) -> str:
    """The status labels a note line ends with: ` [contested]`, ` (superseded)` or ` (resolved)`; '' for none."""
    suffix = ""
    if is_contested(kind, text):
        suffix += " [contested]"
    if is_superseded(kind, text):
        suffix += " (superseded)"
    elif kind.startswith("note:") and is_resolved(text):
        suffix += " (resolved)"
    return suffix


def label_suffix(kind: str, text: str, validation: Validation | None) -> str:
    """Every label of one item as its line carries them: status labels, the origin, then `[stale: …]`/`[moved: …]`."""
    ref_label = f" [{validation.label}]" if validation is not None and validation.label else ""
    return note_label_suffix(kind, text) + origin_suffix(kind, text) + ref_label


def render_memory_line(row: dict, validation: Validation | None, max_lines: int) -> str:
    """One memory as a line, carrying every trust label it has."""
    kind, text = row["kind"], row["text"]
    ref_label = f" [{validation.label}]" if validation is not None and validation.label else ""
    if kind.startswith("note:"):
        subject = subject_tag(row["subject"])
        body, _ = split_trailers(text)
        content = collapse(strip_control(note_content(body)))
        line = f"{humanize_kind(kind)} [{ts_min(row['created_at'])}]: {subject}{content}"
        return line + label_suffix(kind, text, validation)
    if kind in ("session_state", "episode:session_summary"):
        return f"[session state] {snippet(text, max_lines)}{ref_label}"
    if kind == "project_snapshot":
        return f"[project state] {snippet(text, max_lines)}"
    subject = subject_tag(row["subject"])
    return f"{humanize_kind(kind)}: {subject}{snippet(text, max_lines)}{ref_label}"


def alternatives_line(kind: str, text: str) -> str | None:
    """`  already rejected: …` for a note that records rejected alternatives, else None."""
    if not kind.startswith("note:"):
        return None
    payload = collapse(strip_control(split_trailers(text)[1].get("alternatives", "")))
    if not payload:
        return None
    if len(payload) > ALTERNATIVES_CHARS:
        payload = payload[: ALTERNATIVES_CHARS - 1].rstrip() + "…"
    return f"  already rejected: {payload}"


@dataclass
class Entry:
    """One evidence line and its optional continuation (rejected alternatives)."""

    line: str
    continuation: str | None = None
    item_id: str | None = None


@dataclass
class Assembled:
    """What a budgeted assembly kept."""

    text: str
    kept: list[Entry] = field(default_factory=list)
    dropped: int = 0


def assemble_budgeted(lead: str | None, entries: list[Entry], budget: int, hint: Callable[[int], str]) -> Assembled:
    """Place lines within `budget`: the first evidence line always, alternatives only with what is left.

    The budget is held on the rendered text itself (every character, the newlines between lines and the
    trimmed-count hint included), so with more than one line kept the text's own estimate never exceeds it;
    only a first line that alone overruns is placed anyway (with the lead and the hint).
    """
    limit = budget * 4
    chars = len(lead) if lead else 0
    lines = 1 if lead else 0

    def cost(text: str) -> int:
        return len(text) + (1 if lines else 0)

    kept: list[Entry] = []
    for entry in entries:
        if kept and chars + cost(entry.line) > limit:
            break
        chars += cost(entry.line)
        lines += 1
        kept.append(entry)
    dropped = len(entries) - len(kept)
    tail = None
    if dropped:
        tail = hint(dropped)
        while len(kept) > 1 and chars + len(tail) + 1 > limit:
            chars -= len(kept.pop().line) + 1
            lines -= 1
            dropped += 1
            tail = hint(dropped)
        chars += len(tail) + 1
        lines += 1
    continued: set[int] = set()
    for index, entry in enumerate(kept):
        if entry.continuation is None:
            continue
        if chars + len(entry.continuation) + 1 > limit:
            break
        continued.add(index)
        chars += len(entry.continuation) + 1
    out = [lead] if lead else []
    for index, entry in enumerate(kept):
        out.append(entry.line)
        if index in continued and entry.continuation is not None:
            out.append(entry.continuation)
    if tail:
        out.append(tail)
    return Assembled("\n".join(out), kept, dropped)


def sections_trimmed(count: int) -> str:
    """The trailer state prints for sections that did not fit."""
    return f"…{count} section{'s' if count != 1 else ''} trimmed (cortex_recall(topic) for more)"


def assemble_sections(sections: list[str], budget: int) -> tuple[str, list[int]]:
    """Place whole sections: the first always; a later one that does not fit is skipped, the walk goes on.

    Sections are joined by a blank line, and the trailer counting what was skipped is charged too, so with
    more than one section kept the rendered text never exceeds the budget.
    """
    limit = budget * 4
    kept: list[int] = []
    chars = 0
    for index, section in enumerate(sections):
        cost = len(section) + (2 if kept else 0)
        if kept and chars + cost > limit:
            continue
        kept.append(index)
        chars += cost
    while len(kept) < len(sections) and len(kept) > 1 and chars + 2 + len(sections_trimmed(len(sections) - len(kept))) > limit:
        chars -= len(sections[kept.pop()]) + 2
    parts = [sections[i] for i in kept]
    if len(kept) < len(sections):
        parts.append(sections_trimmed(len(sections) - len(kept)))
    return "\n\n".join(parts), kept


def shorten(text: str, limit: int) -> str:
    """Collapse whitespace and cut to `limit` characters with an ellipsis."""
    text = collapse(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
