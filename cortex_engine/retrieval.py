"""Retrieval: topic tokens, FTS5 candidates, the rerank, temporal intent and contested seating."""

from __future__ import annotations

import math
import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime

from .clock import parse_iso
from .freshness import Validation, Validator
from .memory import KIND_WEIGHTS, DEFAULT_KIND_WEIGHT, is_contested, is_resolved, note_status

LOW_SIGNAL = frozenset(
    "a all an and are as at be by can continue could did do does fix fixed fixes fixing for from has have implement "
    "implemented implementation in is it just latest now of old on or plan please recent resolved should that the "
    "this to was were when will with without work would".split()
)
MAX_TOPIC_TOKENS = 12
_TOKEN = re.compile(r"[a-z0-9][a-z0-9._/-]*")
_SPLIT = re.compile(r"[._/-]+")
RECENT_WORDS = frozenset("latest current recent newest now".split())
OLD_WORDS = frozenset("old older oldest previous previously prior history historical earlier formerly originally".split())
RESOLVED_WORDS = frozenset("resolved fixed closed done".split())
FTS_WEIGHT = 6.0
STATE_WEIGHT = {"pinned": 3.0, "hot": 2.2, "warm": 1.2, "cold": 0.2, "archived": -3.0}


@dataclass(frozen=True)
class TopicToken:
    """One query token: its raw form and its light stem."""

    raw: str
    stem: str


def tokenize_topic(topic: str) -> list[TopicToken]:
    """Lowercase, split compounds, drop short and low-signal words and duplicates; at most 12 tokens."""
    from .contradiction import stem_lite  # the note rule's stemmer; imported on first use, not by every hook

    tokens: list[TopicToken] = []
    seen: set[str] = set()
    for match in _TOKEN.findall(topic.lower()):
        for part in _SPLIT.split(match):
            if len(part) <= 1 or part in LOW_SIGNAL or part in seen:
                continue
            seen.add(part)
            tokens.append(TopicToken(part, stem_lite(part)))
            if len(tokens) == MAX_TOPIC_TOKENS:
                return tokens
    return tokens


def fts_query(tokens: list[TopicToken]) -> str | None:
    """Each raw token double-quoted, OR-joined: no user text ever reaches FTS syntax unquoted."""
    if not tokens:
        return None
    return " OR ".join('"' + t.raw.replace('"', '""') + '"' for t in tokens)


@dataclass(frozen=True)
class Intent:
    """Temporal intent read from a topic."""

    recent: bool
    old: bool
    resolved: bool


def temporal_intent(topic: str) -> Intent:
    """Which temporal words the topic uses (unsplit raw matches)."""
    words = set(_TOKEN.findall(topic.lower()))
    return Intent(bool(words & RECENT_WORDS), bool(words & OLD_WORDS), bool(words & RESOLVED_WORDS))


@dataclass
class Candidate:
    """A memory item under consideration, with its score parts."""

    row: sqlite3.Row
    bm25: float | None
    validation: Validation
    score: float = 0.0
    lexical: float = 0.0
    kind_weight: float = 0.0
    truth: float = 0.0
    hot: float = 0.0

    @property
    def id(self) -> str:
        """The memory item id."""
        return str(self.row["id"])

    @property
    def kind(self) -> str:
        """The memory item kind (e.g. `note:decision`)."""
        return str(self.row["kind"])

    @property
    def contested(self) -> bool:
        """Whether the projection says contested."""
        return is_contested(self.kind, self.row["text"])


ITEM_COLUMNS = (
    "m.rowid AS rowid, m.id, m.session_id, m.scope_type, m.scope_key, m.kind, m.source_table, m.source_id, "
    "m.subject, m.text, m.state, m.importance, m.access_count, m.last_accessed_at, m.created_at"
)


def phrase_query(anchor: str) -> str | None:
    """An FTS5 phrase for an exact anchor such as a path: its words in order, each quoted away from syntax."""
    words = re.findall(r"[a-z0-9]+", anchor.lower())
    if not words:
        return None
    return '"' + " ".join(words) + '"'


def candidates(
    conn: sqlite3.Connection, scope_keys: list[str], tokens: list[TopicToken], limit: int, *, phrase: str | None = None
) -> tuple[str | None, list[tuple[sqlite3.Row, float | None]]]:
    """FTS5 candidates in these scopes (bm25 with subject weighted over text), else a substring fallback.

    Args:
        phrase: match this exact anchor (e.g. a file path) as a phrase instead of OR-ing the topic's words.
    """
    query = phrase_query(phrase) if phrase else fts_query(tokens)
    marks = ",".join("?" * len(scope_keys))
    rows: list[tuple[sqlite3.Row, float | None]] = []
    if query is not None:
        found = conn.execute(
            f"SELECT {ITEM_COLUMNS}, bm25(memory_items_fts, 8.0, 1.5) AS rank FROM memory_items_fts "
            f"JOIN memory_items m ON m.rowid = memory_items_fts.rowid "
            f"WHERE memory_items_fts MATCH ? AND m.state != 'archived' AND m.scope_key IN ({marks}) "
            f"ORDER BY rank ASC, m.importance DESC, m.created_at DESC LIMIT ?",
            (query, *scope_keys, max(limit * 5, 20)),
        ).fetchall()
        rows = [(r, float(r["rank"])) for r in found]
    if rows:
        return query, rows
    fallback = conn.execute(
        f"SELECT {ITEM_COLUMNS} FROM memory_items m WHERE m.state != 'archived' AND m.scope_key IN ({marks}) "
        f"ORDER BY m.importance DESC, m.created_at DESC LIMIT ?",
        (*scope_keys, max(limit * 4, 16)),
    ).fetchall()
    kept = []
    for r in fallback:
        hay = ((r["subject"] or "") + "\n" + r["text"]).lower()
        if not tokens or any(t.raw in hay or t.stem in hay for t in tokens):
            kept.append((r, None))
    return query, kept


def _days(value: str, now: datetime) -> float:
    stamp = parse_iso(value)
    return max(0.0, (now - stamp).total_seconds() / 86400.0) if stamp else 365.0


def rerank(
    found: list[tuple[sqlite3.Row, float | None]],
    tokens: list[TopicToken],
    topic: str,
    scope_key: str,
    validator: Validator,
    now: datetime,
    *,
    focus: str | None = None,
) -> list[Candidate]:
    """Score candidates (lexical, scope, kind, recency, temporal, tier, access, truth, importance, fts) and sort."""
    intent = temporal_intent(topic)
    lowered_topic = topic.strip().lower()
    validations = validator.validate_many([(r["id"], r["scope_key"]) for r, _ in found])
    best_bm25 = max((abs(b) for _, b in found if b is not None), default=0.0)
    ranked: list[Candidate] = []
    seen: set[tuple[str, str | None, str]] = set()
    for row, bm25 in found:
        cand = Candidate(row, bm25, validations[row["id"]])
        subject = (row["subject"] or "").lower()
        combined = subject + "\n" + row["text"].lower()
        if tokens:
            hits = sum(1 for t in tokens if t.raw in combined or t.stem in combined)
            subject_hits = sum(1 for t in tokens if t.raw in subject or t.stem in subject) if subject else 0
            cand.lexical = 12 * hits / len(tokens) + 3 * subject_hits
        if lowered_topic and lowered_topic in combined:
            cand.lexical += 4
        if focus and focus.lower() in combined:
            cand.lexical += 1.5
        scope_score = 6.0 if row["scope_key"] == scope_key else (2.0 if not scope_key.startswith("project:") else 4.0)
        cand.kind_weight = KIND_WEIGHTS.get(cand.kind, DEFAULT_KIND_WEIGHT)[0]
        age = _days(row["created_at"], now)
        recency = 2.2 if age <= 1 else 1.4 if age <= 7 else 0.8 if age <= 30 else 0.2
        temporal = 0.0
        if intent.recent:
            temporal += max(0.0, 5 - math.log(1 + age) * 0.9)
        if intent.old:
            temporal += min(5.0, math.log(1 + age) * 0.9)
        if intent.resolved:
            temporal += 8.0 if is_resolved(row["text"]) else -2.0
        cand.hot = STATE_WEIGHT.get(row["state"], 0.0)
        access = min(row["access_count"] * 0.15, 1.5)
        cand.truth = cand.validation.ranking_score(intent.old)
        # bm25() is negative and more negative is better: the strongest match in the set earns FTS_WEIGHT,
        # the others their share of it (this carries the term rarity that the plain hit count lacks).
        fts = FTS_WEIGHT * abs(bm25) / best_bm25 if bm25 is not None and best_bm25 > 0 else 0.0
        cand.score = (
            cand.lexical + scope_score + cand.kind_weight + recency + temporal + cand.hot + access + cand.truth
            + row["importance"] * 3 + fts
        )
        key = (cand.kind, row["subject"], row["text"])
        if key in seen:
            continue
        seen.add(key)
        ranked.append(cand)
    ranked.sort(key=lambda c: (-c.score, -c.row["importance"], _desc(c.row["created_at"])))
    return ranked


class _desc(str):
    """Sort helper: a string that orders in reverse."""

    def __lt__(self, other: str) -> bool:  # type: ignore[override]
        return str.__gt__(self, other)


def seat_contested(items: list[Candidate]) -> list[Candidate]:
    """Keep rank 0 fixed; after each contested note pull up later contested notes on its subject and scope."""
    out: list[Candidate] = []
    placed: set[str] = set()
    for i, cand in enumerate(items):
        if cand.id in placed:
            continue
        out.append(cand)
        placed.add(cand.id)
        if not cand.contested or not cand.row["subject"]:
            continue
        for other in items[i + 1:]:
            if (
                other.id not in placed
                and other.contested
                and other.row["subject"] == cand.row["subject"]
                and other.row["scope_key"] == cand.row["scope_key"]
            ):
                out.append(other)
                placed.add(other.id)
    return out


def supersession_group(cand: Candidate) -> tuple[str, str, str] | None:
    """(kind, subject, scope) of a note with a subject: the notes that can supersede one another; else None."""
    if not cand.kind.startswith("note:") or not cand.row["subject"]:
        return None
    return (cand.kind, str(cand.row["subject"]), str(cand.row["scope_key"]))


def seat_superseded(items: list[Candidate]) -> list[Candidate]:
    """No superseded note ranks above the active note that replaced it: that one is pulled up just before it.

    And a superseded note never leads while anything that is not superseded matched: the best such item is
    placed first. This is an ordering rule over what the rerank returned, not a score: scores are untouched.
    """
    if items and note_status(items[0].kind, items[0].row["text"]) == "superseded":
        current = next((c for c in items if note_status(c.kind, c.row["text"]) != "superseded"), None)
        if current is not None:
            items = [current, *(c for c in items if c.id != current.id)]
    out: list[Candidate] = []
    placed: set[str] = set()
    for i, cand in enumerate(items):
        if cand.id in placed:
            continue
        group = supersession_group(cand)
        if group is not None and note_status(cand.kind, cand.row["text"]) == "superseded":
            for other in items[i + 1:]:
                if (other.id not in placed and supersession_group(other) == group
                        and note_status(other.kind, other.row["text"]) == "active"):
                    out.append(other)
                    placed.add(other.id)
                    break
        out.append(cand)
        placed.add(cand.id)
    return out
