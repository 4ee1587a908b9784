"""memory_items: projection of notes into the retrieval layer, trailers, and hot/warm/cold tiers."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime

from cortex_engine.base import labels
from cortex_engine.base.clock import parse_iso
from cortex_engine.base.records import record
from cortex_engine.base.untrusted import skeleton, skeleton_of, visible

NOTE_KINDS = ("insight", "decision", "intent", "blocker", "focus")
STATES = ("pinned", "hot", "warm", "cold", "archived")
TIER_ORDER = ("hot", "warm", "cold")

IMPORTANCE = {"focus": 1.0, "blocker": 0.95, "decision": 0.9, "intent": 0.85, "insight": 0.7}

# (retrieval weight, working-set weight) per item kind.
KIND_WEIGHTS: dict[str, tuple[float, float]] = {
    "note:decision": (3.4, 3.4),
    "note:intent": (3.0, 3.1),
    "note:focus": (2.8, 2.8),
    "note:blocker": (2.6, 2.8),
    "note:insight": (2.0, 2.1),
    "episode:command_failure": (3.2, 2.6),
    "episode:test_cycle": (2.8, 2.3),
    "episode:session_summary": (1.6, 1.6),
    "episode:subagent_conclusion": (2.4, 2.0),
    "session_state": (1.0, 1.6),
    "branch_snapshot": (2.4, 1.4),
    "project_snapshot": (1.8, 1.0),
    "command_run": (1.2, 0.6),
}
DEFAULT_KIND_WEIGHT = (1.0, 0.5)

TRAILER_PREFIXES = ("Subject: ", "Alternatives: ", "Conflict: ", "Status: ", "Origin: ")
# A content line shaped like a trailer (any case, any indentation): projected indented by one space, so
# `split_trailers` can never take the author's words for the note's own Conflict:/Status: bookkeeping.
_TRAILER_SHAPED = re.compile(r"^\s*(?:subject|alternatives|conflict|status|origin)\s*:", re.IGNORECASE)
# Look-alikes of the labels (`base/labels.py`) inside memory text, matched on the text's skeleton (`base/untrusted`):
# their brackets are rendered fullwidth, so only the labels Cortex appends read as labels. Compiled on first use.
_FULLWIDTH = {"[": "［", "]": "］", "(": "（", ")": "）"}
_label_shapes: list[re.Pattern[str]] = []


def _shapes() -> list[re.Pattern[str]]:
    if not _label_shapes:
        word = skeleton_of
        verdicts = "|".join(word(v) for v in labels.REFERENCE_VERDICTS)
        closed = "|".join(word(w) for w in (labels.SUPERSEDED[1:-1], labels.RESOLVED[1:-1], labels.SHARED))
        _label_shapes.extend(
            re.compile(p)
            for p in (
                rf"(?P<o>\[)\s*{word(labels.CONTESTED[1:-1])}\s*(?P<c>\])",
                rf"(?P<o>\[)\s*(?:{verdicts})\s*:",
                rf"(?P<o>\()\s*(?:{closed})\s*(?P<c>\))",
                rf"(?P<o>\()\s*{word(labels.FROM)}\s",
                rf"(?P<o>\()\s*{word('refs')}\b",
            )
        )
    return _label_shapes


def collapse(text: str) -> str:
    """Collapse all whitespace (newlines included) to single spaces and trim."""
    # `str.split()` parts words at exactly the characters `\s` matches (`str.isspace`), at a quarter of the cost.
    return " ".join(text.split())


def alternatives_payload(alternatives: list[str] | None) -> str:
    """The one-line rejected-alternatives payload: each collapsed, empties dropped, comma-joined."""
    return ", ".join(a for a in (collapse(x) for x in alternatives or []) if a)


def project_note_text(
    kind: str,
    content: str,
    subject: str | None,
    alternatives: list[str] | None,
    conflict: bool,
    status: str,
    origin: str | None = None,
) -> str:
    """Project a note into memory text: `<kind>: <content>` then trailers in canonical order.

    `origin` is where a note came from when it was not written in its scope: `from <branch>` (a merged
    branch's note) or `shared` (a decision read from the repository); it renders as a label.
    """
    first, *rest = content.split("\n")
    lines = [f"{kind}: {first}", *(f" {line}" if _TRAILER_SHAPED.match(line) else line for line in rest)]
    if subject:
        lines.append(f"Subject: {collapse(subject)}")
    payload = alternatives_payload(alternatives)
    if payload:
        lines.append(f"Alternatives: {payload}")
    if conflict:
        lines.append("Conflict: true")
    if status in ("superseded", "resolved"):
        lines.append(f"Status: {status}")
    if origin:
        lines.append(f"Origin: {collapse(origin)}")
    return "\n".join(lines)


def split_trailers(text: str) -> tuple[str, dict[str, str]]:
    """Split projected note text into (body, trailers), walking back in canonical order."""
    lines = text.split("\n")
    trailers: dict[str, str] = {}
    allowed = len(TRAILER_PREFIXES)
    while len(lines) > 1:
        last = lines[-1]
        match = next((i for i, p in enumerate(TRAILER_PREFIXES[:allowed]) if last.startswith(p)), None)
        if match is None:
            break
        trailers[TRAILER_PREFIXES[match][:-2].lower()] = last[len(TRAILER_PREFIXES[match]) :]
        allowed = match
        lines.pop()
    return "\n".join(lines), trailers


def is_contested(kind: str, text: str) -> bool:
    """A note item is contested when its projection's trailers carry `Conflict: true` (never a line of its content)."""
    if not kind.startswith("note:") or "\nConflict: " not in text:
        return False
    return split_trailers(text)[1].get("conflict", "").strip().lower() == "true"


def note_status(kind: str, text: str) -> str:
    """The status a note item's projection records: active, superseded or resolved."""
    if not kind.startswith("note:") or "\nStatus: " not in text:
        return "active"
    return split_trailers(text)[1].get("status", "active")


def note_origin(kind: str, text: str) -> str | None:
    """Where a note item came from (`from <branch>`, `shared`), from its `Origin:` trailer; None when written here."""
    if not kind.startswith("note:") or "\nOrigin: " not in text:
        return None
    return split_trailers(text)[1].get("origin") or None


def is_superseded(kind: str, text: str) -> bool:
    """True for a note item whose trailer says `Status: superseded`."""
    return note_status(kind, text) == "superseded"


def is_resolved(text: str) -> bool:
    """True when the text's trailers record `Status: resolved` (words in the content never count)."""
    if "\nStatus: " not in text:
        return False
    return split_trailers(text)[1].get("status", "").strip().lower() == "resolved"


def note_content(text: str) -> str:
    """The note's content line: the first line after its `<kind>: ` prefix, label look-alikes defused."""
    first = text.split("\n", 1)[0]
    _, sep, rest = first.partition(": ")
    return defuse_labels(rest if sep else first)


def defuse_labels(text: str) -> str:
    """Author text made safe to render next to labels: the one defusing every surface applies.

    Terminal controls, Unicode format characters and every Default_Ignorable_Code_Point (zero-width space, bidi
    controls, U+034F, variation selectors, tag characters …) go first, then NFKC folds compatibility look-alikes
    (fullwidth, circled, ligatures, NBSP) to plain characters, and only then are label-shaped words, found on the
    text's UTS #39 skeleton (Cyrillic and Greek look-alikes folded), given fullwidth brackets:
    `[con\u200btested]` → `［contested］`, `[cоntested]` (Cyrillic о) → `［cоntested］`. Removing first means an
    invisible character cannot hide a label from the patterns and be dropped later.
    """
    from cortex_engine.store.redact import strip_invisible  # redact is imported lazily on the hook paths

    text = visible(strip_invisible(text))
    if text.isascii() and "[" not in text and "(" not in text:
        return text
    shape = skeleton(text)
    if "[" not in shape and "(" not in shape:
        return text
    chars: list[str] | None = None
    for pattern in _shapes():
        for match in pattern.finditer(shape):
            chars = chars if chars is not None else list(text)
            for group in ("o", "c"):
                if group in pattern.groupindex and match.start(group) >= 0:
                    chars[match.start(group)] = _FULLWIDTH[shape[match.start(group)]]
    return text if chars is None else "".join(chars)


def fresh_note_state(kind: str, status: str) -> str:
    """The tier a newly projected note starts in."""
    if status != "active":
        return "cold"
    return "hot" if kind in ("focus", "intent", "blocker") else "warm"


def demote(state: str) -> str:
    """One tier cooler (hot→warm→cold); pinned and archived are untouched."""
    if state in ("hot", "warm"):
        return TIER_ORDER[TIER_ORDER.index(state) + 1]
    return state


def _days(since: str | None, now: datetime) -> float | None:
    if not since:
        return None
    stamp = parse_iso(since)
    if stamp is None:
        return None
    return max(0.0, (now - stamp).total_seconds() / 86400.0)


@record(frozen=True)
class ItemFacts:
    """The columns of a memory item that scoring reads."""

    kind: str
    text: str
    state: str
    importance: float
    access_count: int
    last_accessed_at: str | None
    created_at: str


CREATED_BONUS = ((1, 2.6), (3, 2.1), (7, 1.4), (30, 0.5), (90, -0.6))
"""(age in days up to, bonus); older items get -1.6."""
ACCESS_BONUS = ((1, 3.2), (7, 1.8), (30, 0.7))
"""(days since last access up to, bonus); longer ago -0.2, never 0."""
UNUSED_AGES = (14, 45)
"""Ages at which a never-accessed item is penalised (-1.6, then -2.4 more)."""
INSIGHT_UNUSED_AGE = 30
SNAPSHOT_OLD_AGE = 45
AGE_STEPS = tuple(sorted({0, *(d for d, _ in CREATED_BONUS), *UNUSED_AGES, INSIGHT_UNUSED_AGE, SNAPSHOT_OLD_AGE}))
"""Every age (days since created) at which `hotness` can change with the clock alone."""
ACCESS_STEPS = (0, *(d for d, _ in ACCESS_BONUS))
"""Every time since last access (days) at which `hotness` can change with the clock alone."""


def hotness(item: ItemFacts, now: datetime) -> float:
    """Score an item's working-set heat from importance, kind, age, access and staleness."""
    if item.state == "pinned":
        return 100.0
    if item.state == "archived":
        return -100.0
    age = _days(item.created_at, now)
    if age is None:
        created_bonus = -1.6
    else:
        created_bonus = next((b for limit, b in CREATED_BONUS if age <= limit), -1.6)
    since_access = _days(item.last_accessed_at, now)
    if since_access is None:
        access_bonus = 0.0
    else:
        access_bonus = next((b for limit, b in ACCESS_BONUS if since_access <= limit), -0.2)
    penalty = 0.0
    age_v = age if age is not None else math.inf
    if item.access_count == 0 and age_v > UNUSED_AGES[0]:
        penalty -= 1.6
    if item.access_count == 0 and age_v > UNUSED_AGES[1]:
        penalty -= 2.4
    if item.kind == "command_run":
        penalty -= 0.8
    if item.kind == "note:insight" and item.access_count == 0 and age_v > INSIGHT_UNUSED_AGE:
        penalty -= 1.1
    if item.kind == "project_snapshot" and age_v > SNAPSHOT_OLD_AGE:
        penalty -= 0.7
    if is_resolved(item.text):
        penalty -= 1.6
    if is_superseded(item.kind, item.text):
        penalty -= 1.6
    weight = KIND_WEIGHTS.get(item.kind, DEFAULT_KIND_WEIGHT)[1]
    return item.importance * 5 + weight + created_bonus + access_bonus + min(item.access_count * 0.85, 4.25) + penalty


def derive_state(item: ItemFacts, now: datetime) -> str:
    """Re-derive the tier from the score; a superseded note sits one tier below what it would earn."""
    if item.state in ("pinned", "archived"):
        return item.state
    if is_resolved(item.text):
        return "cold"
    score = hotness(item, now)
    state = "hot" if score >= 7 else "warm" if score >= 4.2 else "cold"
    return demote(state) if is_superseded(item.kind, item.text) else state


def alternatives_list(raw: str | None) -> list[str]:
    """Decode the stored alternatives JSON (a list of strings), tolerating junk."""
    if not raw:
        return []
    try:
        value = json.loads(raw)
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []
