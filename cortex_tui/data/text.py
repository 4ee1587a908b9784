"""Small formatting helpers for the operator view (presentation only; the engine decides every label)."""

from __future__ import annotations

from datetime import datetime

from cortex_engine.clock import parse_iso
from cortex_engine.economy import fmt_tokens
from cortex_engine.memory import collapse, note_content, split_trailers
from cortex_engine.render import humanize_kind, strip_control

__all__ = [
    "ago", "age", "first_line", "fmt_tokens", "humanize_kind", "label_tags", "one_line", "scope_label", "short_id",
    "short_kind",
]

SHORT_KINDS = {
    "episode:command_failure": "failure", "episode:session_summary": "summary", "episode:subagent_conclusion": "subagent",
    "episode:test_cycle": "test cycle", "command_run": "command", "branch_snapshot": "snapshot",
    "project_snapshot": "project", "session_state": "state",
}


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


def short_id(value: object) -> str:
    """The first eight characters of an id (sessions, notes), or a dash."""
    text = str(value or "")
    return text.split(":")[-1][:8] if text else "—"


def scope_label(key: str) -> str:
    """A scope key as a person reads it: the branch, `detached@abc1234`, or `project`.

    Git forbids `:` in ref names, so a branch is whatever follows the key's last colon.
    """
    kind, _, rest = key.partition(":")
    if kind == "branch":
        return rest.rsplit(":", 1)[-1]
    if kind == "detached":
        return f"detached@{rest.rsplit(':', 1)[-1][:7]}"
    return "project"


def one_line(text: object) -> str:
    """Author-supplied text on one control-free line."""
    return collapse(strip_control(str(text or "")))


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


def short_kind(kind: str) -> str:
    """A kind in one short word: `decision`, `failure`, `summary`, `subagent`, …"""
    if kind.startswith("note:"):
        return kind.split(":", 1)[1]
    return SHORT_KINDS.get(kind, kind.split(":")[-1].replace("_", " "))


def label_tags(labels: list[str] | tuple[str, ...]) -> str:
    """Labels as short tags for a table cell (`stale: missing a.py` → `stale`); the inspection has the paths."""
    tags: list[str] = []
    for label in labels:
        tag = label.split(":", 1)[0].strip()
        if tag and tag not in tags:
            tags.append(tag)
    return " ".join(tags)
