"""Rendering: memory lines with their trust labels, and budgeted assembly of the surfaces."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar, overload

from cortex_engine.base import labels
from cortex_engine.base.clock import parse_iso, ts_min
from cortex_engine.base.records import field, record
from cortex_engine.base.tokens import budget_chars, estimate_tokens
from cortex_engine.base.untrusted import quote_path
from cortex_engine.memory.items import (
    collapse,
    defuse_labels,
    is_contested,
    is_resolved,
    is_superseded,
    note_content,
    note_origin,
    split_trailers,
)
from cortex_engine.scope.freshness import Validation
from cortex_engine.store.redact import strip_invisible

if TYPE_CHECKING:
    import sqlite3

SNIPPET_CHARS = 260
ALTERNATIVES_CHARS = 240
SUBJECT_CHARS = 200  # as notes.MAX_SUBJECT_CHARS; a longer one (stored before the cap) is cut when shown
NOTE_LINE_CHARS = 600  # a note's content on one evidence line; the rest is one `inspect-memory` away
# One label as a line carries it, and the labels at the end of a rendered line: kept when the line is cut. Built from
# the one vocabulary, so a new verdict (`[drifted: …]` was one) or origin is kept like the others. A branch or file
# name inside a label is quoted (`base/untrusted.quote_path`), so it holds no `(`, `)`, `]` or newline.
_ONE_LABEL = (
    "|".join(map(re.escape, (*labels.STATUS, labels.origin(labels.SHARED))))
    + r"|\("
    + labels.FROM
    + r" [^()\n]*\)"
    + r"|\[(?:"
    + "|".join(labels.REFERENCE_VERDICTS)
    + r"): [^\]\n]*\]"
)
_LABEL_TAIL = re.compile(r"(?:\s(?:" + _ONE_LABEL + r"))+$")
_LABEL = re.compile(r"\s(" + _ONE_LABEL + r")")


def strip_control(text: str) -> str:
    """Remove terminal control characters (ESC, lone CR, …) and Unicode format characters; keep tabs and newlines."""
    return strip_invisible(text)


def inspect_pointer(item_id: str | None) -> str:
    """Where the whole text of a cut item is: ` (full text: cortex inspect-memory <id>)`; '' without an id."""
    return f" (full text: cortex inspect-memory {item_id})" if item_id else ""


def clip(text: str, room: int, pointer: str = "") -> str:
    """`text` within `room` characters: cut with a visible `…` and the pointer when it does not fit.

    The labels at its end are kept: whole when they fit beside 8 characters of text, else each cut like any
    other text, keeping its kind and a `…` (`[stale: missing src/aaaa…]`, `(from feature/aaaa…)`), the text
    keeping half the room. The pointer is dropped when even it does not fit; with no room at all the result is
    empty.
    """
    if len(text) <= room:
        return text
    if room <= 0:
        return ""
    found = _LABEL_TAIL.search(text)  # the labels Cortex appended (author text is defused) survive the cut
    tail = found.group(0) if found is not None else ""
    body = text[: len(text) - len(tail)]
    if len(tail) + 8 <= room:
        suffix = tail
    else:
        suffix = fit_labels(tail, room - min(len(body), max(8, room // 2)))
    room -= len(suffix)
    if len(pointer) + 8 > room:
        pointer = ""
    return body[: max(0, room - 1 - len(pointer))].rstrip() + "…" + pointer + suffix


def fit_labels(tail: str, room: int) -> str:
    """The labels of `tail` (each space-led) within `room` characters: each detail cut with `…` as far as it
    must, the longest first; when even the bare kinds do not fit, the first labels that do (status first)."""
    pieces = [labels.parts(m.group(1)) for m in _LABEL.finditer(tail)]
    need = [1 + len(o) + len(k) + len(c) + (1 if d else 0) for o, k, d, c in pieces]
    spare = room - sum(need)
    if spare < 0:
        out = ""
        for (o, k, d, c), n in zip(pieces, need, strict=True):
            if len(out) + n > room:
                break
            out += f" {o}{k}{'…' if d else ''}{c}"
        return out
    caps = [max(0, len(d) - 1) for _, _, d, _ in pieces]
    grant = [0] * len(caps)
    for position, index in enumerate(sorted(range(len(caps)), key=caps.__getitem__)):
        grant[index] = min(caps[index], spare // (len(caps) - position))
        spare -= grant[index]
    return "".join(
        f" {o}{k}{d if grant[i] >= len(d) - 1 else d[: grant[i]].rstrip() + '…'}{c}"
        for i, (o, k, d, c) in enumerate(pieces)
    )


def defuse(text: str) -> str:
    """Author text as every surface renders it (see `memory.defuse_labels`: invisible characters, NFKC, labels)."""
    return defuse_labels(text)


def subject_tag(subject: str | None, *, lead: bool = False) -> str:
    """`[subject] ` (or ` [subject]` with lead) on one line, defused: a subject never reads as a label; '' for none."""
    if not subject:
        return ""
    tag = defuse(f"[{clip(collapse(defuse(subject)), SUBJECT_CHARS)}]")
    return f" {tag}" if lead else f"{tag} "


def humanize_kind(kind: str) -> str:
    """`note:decision` → `Decision`, `episode:command_failure` → `Command failure`, …"""
    if kind.startswith("note:") or kind.startswith("episode:"):
        name = kind.split(":", 1)[1]
    else:
        name = {"branch_snapshot": "snapshot", "project_snapshot": "project", "command_run": "command"}.get(kind, kind)
    name = name.replace("_", " ")
    return name[:1].upper() + name[1:]


SHORT_KINDS = {
    "episode:command_failure": "failure",
    "episode:session_summary": "summary",
    "episode:subagent_conclusion": "subagent",
    "episode:test_cycle": "test cycle",
    "command_run": "command",
    "branch_snapshot": "snapshot",
    "project_snapshot": "project",
    "session_state": "state",
}


def short_kind(kind: str) -> str:
    """A kind in one short word, as the operator's table shows it and sorts it: `decision`, `failure`, `summary`, …"""
    if kind.startswith("note:"):
        return kind.split(":", 1)[1]
    return SHORT_KINDS.get(kind, kind.split(":")[-1].replace("_", " "))


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
    lines = [line.strip() for line in defuse(text).split("\n") if line.strip()][:max_lines]
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
        origin = origin_label(kind, text)
        if origin:
            labels.append(origin)
    label = validation.label if validation is not None else None
    if label:
        labels.extend(label.split("; "))
    return labels


def label_tag(label: str) -> str:
    """A label's name without its detail: `stale: missing a.py` → `stale`, `contested` stays (what filters match)."""
    return label.split(":", 1)[0].strip()


def origin_label(kind: str, text: str) -> str | None:
    """`from <branch>` (the branch name quoted when it is not plain) or `shared`; None for a note written here."""
    origin = note_origin(kind, text)
    if not origin:
        return None
    word, _, name = strip_control(origin).partition(" ")
    if word == labels.FROM and name:
        return f"{labels.FROM} {quote_path(name)}"
    return labels.SHARED if word == labels.SHARED and not name else f"{labels.FROM} {quote_path(origin)}"


def origin_suffix(kind: str, text: str) -> str:
    """` (from <branch>)` or ` (shared)` for a note that was not written in the scope showing it, else ''."""
    origin = origin_label(kind, text)
    return " " + labels.origin(origin) if origin else ""


def note_label_suffix(kind: str, text: str) -> str:
    """The status labels a note line ends with (`labels.CONTESTED`, `SUPERSEDED` or `RESOLVED`, space-led); '' for
    none."""
    suffix = ""
    if is_contested(kind, text):
        suffix += " " + labels.CONTESTED
    if is_superseded(kind, text):
        suffix += " " + labels.SUPERSEDED
    elif kind.startswith("note:") and is_resolved(text):
        suffix += " " + labels.RESOLVED
    return suffix


def reference_suffix(validation: Validation | None) -> str:
    """The freshness verdict (`labels.reference`) of an item whose references no longer simply hold, space-led, or
    ''."""
    label = validation.label if validation is not None else None
    return " " + labels.reference(label) if label else ""


def label_suffix(kind: str, text: str, validation: Validation | None) -> str:
    """Every label of one item as its line carries them: status labels, the origin, then `[stale: …]`/`[moved: …]`."""
    return note_label_suffix(kind, text) + origin_suffix(kind, text) + reference_suffix(validation)


def render_memory_line(row: sqlite3.Row | Mapping[str, Any], validation: Validation | None, max_lines: int) -> str:
    """One memory as a line, carrying every trust label it has (`row`: a `scoped_items` row, or a copy of one)."""
    kind, text = row["kind"], row["text"]
    if kind.startswith("note:"):
        subject = subject_tag(row["subject"])
        body, _ = split_trailers(text)
        content = clip(collapse(note_content(body)), NOTE_LINE_CHARS, inspect_pointer(row["id"]))
        line = f"{humanize_kind(kind)} [{ts_min(row['created_at'])}]: {subject}{content}"
        return line + label_suffix(kind, text, validation)
    ref_label = reference_suffix(validation)
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
    payload = collapse(defuse(split_trailers(text)[1].get("alternatives", "")))
    if not payload:
        return None
    if len(payload) > ALTERNATIVES_CHARS:
        payload = payload[: ALTERNATIVES_CHARS - 1].rstrip() + "…"
    return f"  already rejected: {payload}"


@record
class Entry:
    """One evidence line and its optional continuation (rejected alternatives)."""

    line: str
    continuation: str | None = None
    item_id: str | None = None


@record
class Assembled:
    """What a budgeted assembly kept."""

    text: str
    kept: list[Entry] = field(default_factory=list)
    dropped: int = 0


class Rendered(Sequence[Entry]):
    """`count` entries, each rendered on its first read (`render(index)`) and kept: given to `assemble_budgeted`,
    only the lines it reads are rendered, those kept and the one that no longer fit."""

    def __init__(self, count: int, render: Callable[[int], Entry]) -> None:
        """Hold `count` entries that `render` makes, best first."""
        self._count = count
        self._render = render
        self._made: dict[int, Entry] = {}

    def __len__(self) -> int:
        """How many entries there are, rendered or not."""
        return self._count

    @overload
    def __getitem__(self, index: int) -> Entry: ...

    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...

    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        """The entry at `index` (rendered now if it was not yet), or the entries of a slice."""
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        made = self._made.get(index)
        if made is None:
            made = self._made[index] = self._render(index)
        return made

    @property
    def rendered(self) -> int:
        """How many entries were rendered so far."""
        return len(self._made)


def assemble_budgeted(lead: str | None, entries: Sequence[Entry], budget: int, hint: Callable[[int], str]) -> Assembled:
    """Place lines within `budget`: the first evidence line always, alternatives only with what is left.

    `entries` are read in order and no further than the first line that does not fit (`Rendered` renders them
    as they are read), so a surface with more candidates than its budget shows renders only what it can show.

    The budget is held on the rendered text itself (every character, the newlines between lines and the
    trimmed-count hint included), so the text's own estimate never exceeds it. A first line that alone
    overruns is cut to fit, with `…` and where its whole text is (`inspect-memory <id>`); a lead too long
    to leave it room is cut first, and the trimmed-count hint goes before the first line would lose its pointer.
    """
    limit = budget_chars(budget)
    chars = len(lead) if lead else 0
    kept: list[Entry] = []

    def cost(text: str) -> int:
        return len(text) + (1 if lead or kept else 0)  # the newline before it, unless it is the first line

    for entry in entries:
        if kept and chars + cost(entry.line) > limit:
            break
        chars += cost(entry.line)
        kept.append(entry)
    dropped = len(entries) - len(kept)
    tail = None
    if dropped:
        tail = hint(dropped)
        while len(kept) > 1 and chars + len(tail) + 1 > limit:
            chars -= len(kept.pop().line) + 1
            dropped += 1
            tail = hint(dropped)
        chars += len(tail) + 1
    lines_out = [entry.line for entry in kept]
    if not kept and lead and len(lead) > limit:
        lead = clip(lead, limit)
    if kept and chars > limit:  # one line kept, and it overruns: cut the lead and the line to fit
        lead, lines_out[0], tail = _fit_first(lead, kept[0], tail, limit)
        chars = limit
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
        out.append(lines_out[index])
        if index in continued and entry.continuation is not None:
            out.append(entry.continuation)
    if tail:
        out.append(tail)
    return Assembled("\n".join(out), kept, dropped)


_Shown = TypeVar("_Shown")


def pack_degrading(
    attempts: Iterable[tuple[list[str], list[_Shown]]],
    budget: int,
    whole: Callable[[str, _Shown], bool] | None = None,
) -> tuple[list[str], list[_Shown]] | None:
    """The budget rule for a surface that gives way in steps: the first attempt whose lines fit `budget`.

    `attempts` are the surface's renderings from the fullest to the leanest (each with what it shows); they are
    rendered lazily and the walk stops at the first that fits. When none fits, the last is cut to fit: its first
    and last lines kept whole, its second line (the first entry, so only the first of what it shows) cut with `…`
    to the room left, the lines between dropped; that is the lean form of a list under a header with a pointer
    after it. `None` when even that cannot fit (or the last attempt has nothing between its first and last lines),
    or when the cut line no longer says what `whole(line, item)` asks of the item it shows (its labels and
    subject): an item listed as shown is shown with its labels, or not at all.
    """
    last: tuple[list[str], list[_Shown]] | None = None
    for lines, shown in attempts:
        if fits(lines, budget):
            return lines, shown
        last = (lines, shown)
    if last is None or len(last[0]) <= 2:
        return None
    lines, shown = last
    head, body, foot = lines[0], lines[1], lines[-1]
    cut = [head, clip(body, budget_chars(budget) - len(head) - len(foot) - 2), foot]
    if whole is not None and shown and not whole(cut[1], shown[0]):
        return None
    return (cut, shown[:1]) if fits(cut, budget) else None


def fits(lines: list[str], budget: int) -> bool:
    """Whether `lines`, joined by newlines as a surface renders them, cost at most `budget` tokens."""
    return estimate_tokens("\n".join(lines)) <= budget


def _fit_first(lead: str | None, first: Entry, tail: str | None, limit: int) -> tuple[str | None, str, str | None]:
    """Share `limit` characters between the lead, the one kept line and the hint, the line coming first."""
    pointer = inspect_pointer(first.item_id)
    if tail and limit - len(tail) - 1 < len(pointer) + 40:
        tail = None  # the hint is advice; the pointer to the cut item's text is not
    room = limit - (len(tail) + 1 if tail else 0)
    if lead:
        lead_room = max(room - 1 - len(first.line), room // 3)
        lead = clip(lead, lead_room) or None
        room -= len(lead) + 1 if lead else 0
    return lead, clip(first.line, room, pointer), tail


def sections_trimmed(count: int) -> str:
    """The trailer state prints for sections that did not fit."""
    return f"…{count} section{'s' if count != 1 else ''} trimmed (cortex_recall(topic) for more)"


def assemble_sections(
    sections: list[str], budget: int, pointers: list[str | None] | None = None
) -> tuple[str, list[int]]:
    """Place whole sections: the first always; a later one that does not fit is skipped, the walk goes on.

    Sections are joined by a blank line, and the trailer counting what was skipped is charged too, so the
    rendered text never exceeds the budget: a first section that alone overruns is cut to fit with `…` and,
    when `pointers` names its first item, where that item's whole text is.
    """
    limit = budget_chars(budget)
    kept: list[int] = []
    chars = 0
    for index, section in enumerate(sections):
        cost = len(section) + (2 if kept else 0)
        if kept and chars + cost > limit:
            continue
        kept.append(index)
        chars += cost
    while (
        len(kept) < len(sections)
        and len(kept) > 1
        and chars + 2 + len(sections_trimmed(len(sections) - len(kept))) > limit
    ):
        chars -= len(sections[kept.pop()]) + 2
    parts = [sections[i] for i in kept]
    trailer = sections_trimmed(len(sections) - len(kept)) if len(kept) < len(sections) else None
    if parts and chars + (len(trailer) + 2 if trailer else 0) > limit:  # only the first section, and it overruns
        if trailer and limit - len(trailer) - 2 < 80:
            trailer = None
        pointer = inspect_pointer(pointers[kept[0]] if pointers else None)
        parts = [clip(parts[0], limit - (len(trailer) + 2 if trailer else 0), pointer)]
    if trailer:
        parts.append(trailer)
    return "\n\n".join(parts), kept


def shorten(text: str, limit: int) -> str:
    """Collapse whitespace and cut to `limit` characters with an ellipsis."""
    text = collapse(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
