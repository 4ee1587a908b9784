"""Retrieval: topic tokens, FTS5 candidates, the rerank, temporal intent and contested seating."""

from __future__ import annotations

import math
import re
import sqlite3
import weakref
from collections.abc import Callable
from datetime import datetime
from functools import cached_property, lru_cache

from cortex_engine.base.clock import parse_iso
from cortex_engine.base.records import record
from cortex_engine.memory.items import (
    DEFAULT_KIND_WEIGHT,
    KIND_WEIGHTS,
    is_contested,
    is_resolved,
    is_superseded,
    note_status,
    split_trailers,
)
from cortex_engine.scope.freshness import Validation, Validator
from cortex_engine.store import queries
from cortex_engine.store.database import in_scopes

FUNCTION_WORDS = frozenset(
    "a an the i me my we our ours us you your yours he him his she her hers it its they them their theirs this that "
    "these those am is are was were be been being do does did doing have has had having can could will would shall "
    "should may might must and or but if so nor of to in on at by for from with into onto as than what which who "
    "whom whose when where why how".split()
)
"""English function words: articles, pronouns, auxiliaries and modals, conjunctions, the commonest prepositions and the
question words.

Only these are dropped from a topic: a word that carries meaning (`fix`, `implement`, `now`, `old`) stays, and its
IDF in this store decides how much it counts.
"""
MAX_TOPIC_TOKENS = 32
"""Bounds the FTS expression for a pasted paragraph; terms are weighted by IDF, so a long topic dilutes nothing."""
_TOKEN = re.compile(r"[^\W_][\w./-]*")
_WORD = re.compile(r"[^\W_]+")
RECENT_WORDS = frozenset("latest current recent newest now".split())
OLD_WORDS = frozenset(
    "old older oldest previous previously prior history historical earlier formerly originally".split()
)
RESOLVED_WORDS = frozenset("resolved fixed closed done".split())
TEMPORAL_WORDS = RECENT_WORDS | OLD_WORDS | RESOLVED_WORDS
"""A topic's temporal words set its intent, which scores them; they stay in the full-text query (bm25 weighs them
like any word) but not in coverage, so `old` in `old search backend` cannot also count as a word to find."""
FTS_WEIGHT = 6.0
COVERAGE_WEIGHT = 12.0
SUBJECT_WEIGHT = 6.0
BODY_SHARE = 0.25
"""The share of COVERAGE_WEIGHT a note with a subject earns only for topic terms its body has (`rerank`).

On the reference's corpus, notes whose subject names a topic their content is not about (a revision filed under
another subject) took 2 of the top 8 for "rate limiting" at 1k: the subject alone gave them the full 12 + 6."""
TEMPORAL_MAX = 5.0
"""The most an asked-for recency (`latest`, `old`) adds. It weighs at most what one of the topic's other terms is
worth (COVERAGE_WEIGHT / their number): in "Long values in dict literals are now wrapped in parentheses", `now`
is a word of a statement, not a question about the newest item, and +5 for recency outweighed four matched terms
(psf/black's changelog against its commits, bench/RESULTS.md). A topic of one or two other terms keeps it whole."""
STATE_WEIGHT = {"pinned": 3.0, "hot": 0.4, "warm": 0.2, "cold": 0.0, "archived": -3.0}
"""Tier in the rerank. Hot, warm and cold follow age and use, so like recency they only break near-ties; pinned and
archived are an operator's choice and weigh as such."""
ACCESS_MAX = 0.3
SUPERSEDED_PENALTY = 3.0
"""A decision or intent that a newer note on its subject retired is not current truth: it ranks below the current one
(its tier used to carry this, but tiers now only break near-ties), and stays reachable for history, labelled."""
REINFORCEMENT_MAX = STATE_WEIGHT["hot"] - STATE_WEIGHT["cold"] + ACCESS_MAX
"""All that being shown can add to an item's score (a read makes it hot and counts an access): 0.7, well under what
one topic term adds (COVERAGE_WEIGHT times its IDF share), so being shown cannot by itself keep an item on top."""
RECENCY_MAX = 1.0
"""Recency by creation date breaks near-ties only: 1 point for an item made today, halved at a week, a tenth at two
months; a third of what one of four equally rare topic terms adds (COVERAGE_WEIGHT / 4 = 3), where it used to be
up to 2.2 points plus the tier's 2.0 and let weak new matches win."""


@record(frozen=True)
class TopicToken:
    """One query term: a word (its form and light stem), or a path, file name, identifier or compound as a phrase."""

    raw: str
    stem: str
    phrase: bool = False
    name: str | None = None
    """A qualified name's own last part (`httpx.HTTPStatusError` → `httpstatuserror`), which also matches: text
    names a thing without its module as often as with it."""
    parts: tuple[str, ...] = ()
    """An identifier's own words (`maybe_install_uvloop` → `maybe`, `install`, `uvloop`; `CamelCase` → `camel`,
    `case`), matched apart as well (`compound_parts`): what a text says of it without writing it whole."""


def tokenize_topic(topic: str) -> list[TopicToken]:
    """Lowercase and split into terms; drop one-letter words, function words and duplicates; at most MAX_TOPIC_TOKENS.

    A path, file name, identifier or hyphenated compound (`src/db/pool.ts`, `pool.ts`, `flush_spool`, `append-only`)
    is one term whose words must occur in order, not an OR of `src`, `db`, `pool` and `ts`, which match most of a code
    project's memory. An identifier also carries its words (`compound_parts`): they find and score what says them
    apart, below what names it whole.
    """
    tokens: list[TopicToken] = []
    seen: set[str] = set()
    for written in _TOKEN.findall(topic):
        match = written.lower()
        parts = _WORD.findall(match)
        if len(parts) > 1:
            found = [
                TopicToken(" ".join(parts), " ".join(parts), True, _qualified_name(match), compound_parts(written))
            ]
        else:
            found = [
                TopicToken(part, _stem(part), parts=compound_parts(written))
                for part in parts
                if len(part) > 1 and part not in FUNCTION_WORDS
            ]
        for token in found:
            if token.raw in seen:
                continue
            seen.add(token.raw)
            tokens.append(token)
            if len(tokens) == MAX_TOPIC_TOKENS:
                return tokens
    return tokens


QUALIFIED_NAME_MIN = 5
"""A dotted compound's last part counts as its name only from this length: `pool.ts`, `v1.2` and `e.g` end in an
extension or a fragment, not in the name of a thing."""


def _qualified_name(match: str) -> str | None:
    """The name a dotted qualified name ends in (`response.iter_bytes` → `iter bytes`); None for a path, a file name
    or a compound without dots."""
    if "/" in match or "." not in match.strip("."):
        return None
    last = match.strip(".").rsplit(".", 1)[1]
    words = _WORD.findall(last)
    return " ".join(words) if words and len(last) >= QUALIFIED_NAME_MIN else None


_CAMEL = re.compile(r"[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+")
"""An ASCII word's own words at its case changes, digits kept with the word before them: `HTTPStatusError` → `HTTP`,
`Status`, `Error`; `HTTP2Transport` → `HTTP2`, `Transport`; `SOCKS5` stays one."""
PART_SHARE = 0.5
"""The most of a compound term's weight its words earn when said apart (`coverage`), by their IDF-weighted share:
naming `url.params` whole always counts more than saying `params`. On the three commit-log replays 0.25 to 1 rank
alike (bench/RESULTS.md); what the parts mostly bring is entering the pool (`fts_query`)."""


def compound_parts(written: str) -> tuple[str, ...]:
    """The words an identifier is made of, as written in a topic (`url.params`, `maybe_install_uvloop`, `HTTP/2`,
    `CamelCase`), lowercased, each once, one-letter ones and function words left out; () for a plain word.

    A path or file name has none (`src/db/pool.ts`, `pool.ts`, a URL): it stays exact, as the path topics need.
    Neither has a number or a version (`3.12`, `0.23.2`): its parts are digits, not words.
    """
    stripped = written.strip("./-")
    if "/" in stripped and "." in stripped:
        return ()  # a path to a file, or a URL
    if "." in stripped and "/" not in stripped and _qualified_name(stripped.lower()) is None:
        return ()  # a file name, a version, an abbreviation
    words = [
        word.lower()
        for piece in _WORD.findall(stripped)
        for word in (_CAMEL.findall(piece) if piece.isascii() else [piece])
    ]
    if len(words) < 2:
        return ()
    kept: list[str] = []
    for word in words:
        if len(word) > 1 and word not in FUNCTION_WORDS and not word.isdigit() and word not in kept:
            kept.append(word)
    return tuple(kept)


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    from cortex_engine.memory.contradiction import (
        stem_lite,
    )  # the note rule's stemmer; imported on first use, not by every hook

    return stem_lite(word)


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _whole(token: TopicToken) -> tuple[str, ...]:
    """What matches a term whole: its words (in order), and a qualified name's own last part."""
    return (token.raw, token.name) if token.name else (token.raw,)


def fts_query(tokens: list[TopicToken]) -> str | None:
    """Each term double-quoted (a phrase when it has several words), OR-joined: no user text reaches FTS syntax.

    A compound's words follow it as alternatives (`compound_parts`), so what says `params` enters the pool for
    `url.params`; each term once."""
    if not tokens:
        return None
    terms = dict.fromkeys(term for t in tokens for term in (*_whole(t), *t.parts))
    return " OR ".join(_quoted(term) for term in terms)


def term_weights(conn: sqlite3.Connection, tokens: list[TopicToken]) -> dict[str, float]:
    """Each term's weight: 1 + its IDF in this store, ln(1 + (N − n + ½) / (n + ½)) for n of N items matching.

    A word most items contain weighs about one, a rare one many times that, so coverage counts information rather
    than words; the one keeps a word counting in a store too small for its rarity to mean anything.
    """
    if not tokens:
        return {}
    # The counts hold while the store is unchanged: nothing committed by another connection (data_version) and
    # nothing written by this one (total_changes). A warm engine's next recall of a phrase then costs no second
    # evaluation of it (a path's words are in most items: ~0.4 ms at 10k, bench/RESULTS.md).
    version = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)
    held = _TERM_COUNTS.get(conn)
    if held is None or held[0] != version:
        held = (version, {"": queries.item_count(conn)})
        _TERM_COUNTS[conn] = held
    counts = held[1]
    total = counts[""]
    weights: dict[str, float] = {}
    for token in tokens:
        # A compound's words are weighed as words: what each one's share of the compound's part credit is.
        for term, match in (
            (token.raw, " OR ".join(map(_quoted, _whole(token)))),
            *((p, _quoted(p)) for p in token.parts),
        ):
            if term in weights and term != token.raw:
                continue
            found = counts.get(match)
            if found is None:
                found = counts[match] = conn.execute(
                    "SELECT count(*) FROM memory_items_fts WHERE memory_items_fts MATCH ?", (match,)
                ).fetchone()[0]
            weights[term] = 1 + math.log(1 + (total - found + 0.5) / (found + 0.5))
    return weights


_TERM_COUNTS: weakref.WeakKeyDictionary[sqlite3.Connection, tuple[tuple[int, int], dict[str, int]]] = (
    weakref.WeakKeyDictionary()
)
"""Per connection: the store's version and the item count and each term's match count read at it."""


Said = tuple[list[str], set[str]]
"""A text's words in order and its word forms (each word and its stem): what `coverage` matches a topic against."""


_APART = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})
"""ASCII that is not a letter or a digit, as a space: what parts `_WORD`'s words in ASCII text."""


def said(text: str) -> Said:
    """The words of `text` (lowercased) and their forms, read once for every coverage pass that needs them."""
    text = text.lower()
    # ASCII text (most of it) splits where `_WORD` would, without the regular expression's cost per character.
    words = text.translate(_APART).split() if text.isascii() else _WORD.findall(text)
    forms = set(words)
    forms.update(map(_stem, list(forms)))  # each distinct word stemmed once
    return words, forms


_NOTHING_SAID: Said = ([], set())


def _joined(first: Said, then: Said) -> Said:
    """What two parts of one text say, the first's words before the second's."""
    if not first[0]:
        return then
    return first[0] + then[0], first[1] | then[1]


def coverage(tokens: list[TopicToken], weights: dict[str, float], text: str | Said) -> float:
    """The IDF-weighted share of the topic's terms that occur in `text` as whole words, 0 to 1.

    A word counts when the text has it or a word with its stem; a phrase when its words stand in order. `text`
    may be given as read already (`said`), so a candidate scored on its whole, its body and its subject splits
    each part into words once.
    """
    total = sum(weights.get(t.raw, 1.0) for t in tokens)
    if total <= 0:
        return 0.0
    words, forms = said(text) if isinstance(text, str) else text
    joined: str | None = None
    hit = 0.0
    for t in tokens:
        if t.phrase:
            if joined is None:
                joined = " " + " ".join(words) + " "
            found = f" {t.raw} " in joined or (t.name is not None and f" {t.name} " in joined)
        else:
            found = t.raw in forms or t.stem in forms
        if found:
            hit += weights.get(t.raw, 1.0)
        elif t.parts:
            # Its words said apart earn their IDF-weighted share of PART_SHARE of it: `params` says something of
            # `url.params`, less than `url.params` does.
            said_parts = sum(weights.get(p, 1.0) for p in t.parts if p in forms or _stem(p) in forms)
            if said_parts:
                hit += PART_SHARE * weights.get(t.raw, 1.0) * said_parts / sum(weights.get(p, 1.0) for p in t.parts)
    return hit / total


@record(frozen=True)
class Intent:
    """Temporal intent read from a topic."""

    recent: bool
    old: bool
    resolved: bool


def temporal_intent(topic: str) -> Intent:
    """Which temporal words the topic uses."""
    words = set(_WORD.findall(topic.lower()))
    return Intent(bool(words & RECENT_WORDS), bool(words & OLD_WORDS), bool(words & RESOLVED_WORDS))


@record
class Candidate:
    """A memory item under consideration, with its score parts.

    `base` is the score without the reference-truth term; `score` adds it once the item's references were judged.
    A `Ranking` judges only the candidates it has to.
    """

    row: sqlite3.Row
    bm25: float | None
    validation: Validation
    score: float = 0.0
    base: float = 0.0
    order: int = 0
    lexical: float = 0.0
    kind_weight: float = 0.0
    truth: float = 0.0
    hot: float = 0.0
    dense: float | None = None
    share: float = 1.0
    """The IDF-weighted share of the topic's terms the item says (`coverage`): what fresh references vouch for."""

    @cached_property
    def id(self) -> str:
        """The memory item id (read from the row once: ranking and seating ask for it hundreds of times)."""
        return str(self.row["id"])

    @cached_property
    def kind(self) -> str:
        """The memory item kind (e.g. `note:decision`)."""
        return str(self.row["kind"])

    @cached_property
    def ties(self) -> tuple[float, Descending, int]:
        """What orders equal scores (`_order_key`): importance, then newer first, then full-text order. None of it
        changes once ranked, and a ranking compares its candidates' keys ~150 times a recall: read once."""
        return (-self.row["importance"], Descending(self.row["created_at"]), self.order)

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


RANK_SPAN = 4
"""How many times the pool the first, unfiltered ranking keeps before the scope and archive filter (see
`ranked_hits`)."""


def best_matches(conn: sqlite3.Connection, query: str, span: int) -> list[tuple[int, float]]:
    """The best `span` full-text matches in the whole store, best first: (rowid, bm25)."""
    return [
        (int(h[0]), float(h[1]))
        for h in conn.execute(
            "SELECT rowid, bm25(memory_items_fts, 8.0, 1.5) AS score "
            "FROM memory_items_fts WHERE memory_items_fts MATCH ? "
            "ORDER BY score LIMIT ?",
            (query, span),
        )
    ]


def ranked_hits(
    conn: sqlite3.Connection,
    query: str,
    scope_keys: list[str],
    pool: int,
    hits: list[tuple[int, float]] | None = None,
) -> list[tuple[int, float]]:
    """The best `pool` full-text matches in these scopes that are not archived, best first: (rowid, bm25).

    bm25 over every match is most of a recall on a big store (each match reads its size row). SQLite keeps only
    the best rows of `ORDER BY bm25(…) LIMIT` as it goes, where `ORDER BY rank` sorts every match first, and a
    scope join in that statement looks up every match's row; so the matches are ranked alone, the best
    RANK_SPAN × `pool` kept, and those filtered. Only when that leaves fewer than `pool` while more matches exist
    does the statement that filters as it ranks decide; either way the result is the filtered top `pool`.
    `hits`: `best_matches` of the RANK_SPAN × `pool` span, when the caller read them already.
    """
    span = pool * RANK_SPAN
    if hits is None:
        hits = best_matches(conn, query, span)
    if not hits:
        return []
    inside = {
        r[0]
        for r in conn.execute(  # look the rows up by rowid, never walk a scope's index
            f"SELECT rowid FROM memory_items WHERE rowid IN ({','.join('?' * len(hits))}) AND state != 'archived' "
            f"AND {in_scopes(len(scope_keys), indexed=False)}",
            (*(h[0] for h in hits), *scope_keys),
        )
    }
    kept = [h for h in hits if h[0] in inside]
    if len(kept) >= pool or len(hits) < span:
        return kept[:pool]
    return [
        (int(h[0]), float(h[1]))
        for h in conn.execute(
            "SELECT f.rowid, f.rank FROM memory_items_fts f JOIN memory_items m ON m.rowid = f.rowid "
            "WHERE f.memory_items_fts MATCH ? AND f.rank MATCH 'bm25(8.0, 1.5)' AND m.state != 'archived' "
            f"AND {in_scopes(len(scope_keys), 'm.')} ORDER BY f.rank LIMIT ?",
            (query, *scope_keys, pool),
        )
    ]


def candidates(
    conn: sqlite3.Connection, scope_keys: list[str], tokens: list[TopicToken], limit: int, *, phrase: str | None = None
) -> tuple[str | None, list[tuple[sqlite3.Row, float | None]]]:
    """The best max(limit × 5, 20) FTS5 matches in these scopes (bm25, subject weighted over text), else a substring
    fallback.

    Ranked inside SQLite (`ranked_hits`): only the pool's rows are read whole (sorting whole rows of every match
    cost most of a recall).

    Args:
        phrase: match this exact anchor (e.g. a file path) as a phrase instead of OR-ing the topic's words.
    """
    query = phrase_query(phrase) if phrase else fts_query(tokens)
    rows: list[tuple[sqlite3.Row, float | None]] = []
    if query is not None:
        pool = max(limit * 5, 20)
        # The best `pool` matches are the first `pool` of the span's: SQLite's `ORDER BY … LIMIT` keeps the first
        # rows it met among equal scores (a sequence number breaks ties), whatever the limit, and the matches are
        # met in one order. Keeping fewer costs less (bm25 is read for every match either way), so the span is
        # ranked only when the pool alone does not do.
        first = best_matches(conn, query, pool)
        # Most often the best matches are all live items of these scopes: their rows, read with that filter, are
        # the pool, one statement. Otherwise `ranked_hits` filters the span, and the pool's rows are read after.
        found = (
            conn.execute(
                f"SELECT {ITEM_COLUMNS} FROM scoped_items m WHERE m.rowid IN ({','.join('?' * len(first))}) "
                f"AND m.state != 'archived' AND {in_scopes(len(scope_keys), 'm.', indexed=False)}",
                (*(h[0] for h in first), *scope_keys),
            ).fetchall()
            if first
            else []
        )
        if len(found) == len(first):
            rank_of = dict(first)
        else:
            span = best_matches(conn, query, pool * RANK_SPAN) if len(first) == pool else first
            rank_of = dict(ranked_hits(conn, query, scope_keys, pool, span))
            found = (
                conn.execute(
                    f"SELECT {ITEM_COLUMNS} FROM scoped_items m WHERE m.rowid IN ({','.join('?' * len(rank_of))})",
                    tuple(rank_of),
                ).fetchall()
                if rank_of
                else []
            )
        if rank_of:
            found.sort(key=lambda r: (rank_of[r["rowid"]], -r["importance"], Descending(r["created_at"])))
            rows = [(r, rank_of[r["rowid"]]) for r in found]
    if rows:
        return query, rows
    fallback = conn.execute(
        f"SELECT {ITEM_COLUMNS} FROM scoped_items m WHERE m.state != 'archived' AND {in_scopes(len(scope_keys), 'm.')} "
        f"ORDER BY m.importance DESC, m.created_at DESC, m.rowid DESC LIMIT ?",
        (*scope_keys, max(limit * 4, 16)),
    ).fetchall()
    kept: list[tuple[sqlite3.Row, float | None]] = []
    for r in fallback:
        hay = ((r["subject"] or "") + "\n" + r["text"]).lower()
        if not tokens or any(t.raw in hay or t.stem in hay for t in tokens):
            kept.append((r, None))
    return query, kept


def _days(value: str, now: datetime) -> float:
    stamp = parse_iso(value)
    return max(0.0, (now - stamp).total_seconds() / 86400.0) if stamp else 365.0


def _fts_shares(found: list[tuple[sqlite3.Row, float | None]]) -> dict[int, float]:
    """Each lexical candidate's full-text score by its index in `found` (dense-only and fallback ones have none).

    bm25() is negative and more negative is better: the strongest match in the set earns FTS_WEIGHT, the others
    their share of it (bm25 also saturates repeated words and normalises for length).
    """
    scores = {index: abs(bm25) for index, (_, bm25) in enumerate(found) if bm25}
    if not scores:
        return {}
    best = max(scores.values())
    return {index: FTS_WEIGHT * score / best for index, score in scores.items()}


def rerank(
    found: list[tuple[sqlite3.Row, float | None]],
    tokens: list[TopicToken],
    topic: str,
    scope_key: str,
    validator: Validator,
    now: datetime,
    *,
    focus: str | None = None,
    weights: dict[str, float] | None = None,
    dense: dict[int, tuple[int, float]] | None = None,
    lexical_size: int | None = None,
) -> Ranking:
    """Score candidates and rank them: how well each matches first, then what the store knows about it.

    Match: the IDF-weighted share of topic terms found as whole words (COVERAGE_WEIGHT) and in the subject
    (SUBJECT_WEIGHT), the whole topic verbatim (+4), the session focus (+1.5), bm25 relative to the best candidate
    (FTS_WEIGHT). Then scope, kind, importance, reference truth (stale references, superseded) and an asked-for temporal
    intent. Recency, tier and access count only break near-ties (RECENCY_MAX, STATE_WEIGHT, REINFORCEMENT_MAX). Notes
    with identical texts stay separate items (two notes saying the same thing on different days are two memories, each
    line dated); captured evidence with identical kind, subject and text (the same command, same output) is shown once,
    its repeats being counted by the episode that tracks them (`seen 2x`).

    References are judged lazily (`Ranking`): the truth term is the one part of the score that needs the
    checkout, so the order is settled from the best case down and only what is taken is judged.

    Args:
        weights: each term's IDF (`term_weights`); a term without one weighs 1.
        dense: the dense retriever's hits in these scopes, rowid → (rank, cosine): each one's cosine then adds to
            its score (`fuse`). `found[:lexical_size]` are the lexical candidates, the rest dense-only ones.
    """
    weights = weights or {}
    intent = temporal_intent(topic)
    content = [t for t in tokens if t.raw not in TEMPORAL_WORDS]
    lowered_topic = topic.strip().lower()
    # A temporal word counts at most as much as one of the topic's other terms (TEMPORAL_MAX).
    timing = min(1.0, COVERAGE_WEIGHT / len(content) / TEMPORAL_MAX) if content else 1.0
    fts_share = _fts_shares(found)
    ranked: list[Candidate] = []
    seen: set[tuple[str, str | None, str]] = set()
    unjudged = Validation()  # frozen: one stands for every candidate until its references are judged
    for index, (row, bm25) in enumerate(found):
        kind, text = str(row["kind"]), str(row["text"])
        note = kind.startswith("note:")
        if not note:
            key = (kind, row["subject"], text)
            if key in seen:
                continue
            seen.add(key)
        cand = Candidate(row, bm25, unjudged, order=len(ranked))
        subject = (row["subject"] or "").lower()
        combined = subject + "\n" + text.lower()
        if content:
            # Each part is split into words once for the three passes: the whole is the subject's words, then the
            # body's, then the trailers' (a newline parts words, so the whole's words are the parts' in order).
            in_subject = said(subject) if subject else _NOTHING_SAID
            body = split_trailers(text)[0] if note else text
            in_body = said(body.lower())
            in_text = in_body if len(body) == len(text) else _joined(in_body, said(text[len(body) :].lower()))
            cand.share = coverage(content, weights, _joined(in_subject, in_text))
            cand.lexical = COVERAGE_WEIGHT * cand.share
            if note and (subject or body != text):
                # What a note says weighs apart from how it is labelled: BODY_SHARE of the coverage term is earned
                # in its body alone (its subject and label trailers aside), so a note that carries the topic only
                # as its subject or origin ranks below notes that also say it. A note without trailers is its
                # body, and captured evidence's subject is its content (the command run): both unchanged.
                says = coverage(content, weights, in_body)
                cand.lexical = BODY_SHARE * COVERAGE_WEIGHT * says + (1 - BODY_SHARE) * cand.lexical
            if subject:
                cand.lexical += SUBJECT_WEIGHT * coverage(content, weights, in_subject)
        if lowered_topic and lowered_topic in combined:
            cand.lexical += 4
        if focus and focus.lower() in combined:
            cand.lexical += 1.5
        scope_score = 6.0 if row["scope_key"] == scope_key else (2.0 if not scope_key.startswith("project:") else 4.0)
        cand.kind_weight = KIND_WEIGHTS.get(kind, DEFAULT_KIND_WEIGHT)[0]
        age = _days(row["created_at"], now)
        recency = RECENCY_MAX / (1 + age / 7)
        temporal = 0.0
        if intent.recent:
            temporal += timing * max(0.0, TEMPORAL_MAX - math.log(1 + age) * 0.9)
        if intent.old:
            temporal += timing * min(TEMPORAL_MAX, math.log(1 + age) * 0.9)
        if intent.resolved:
            temporal += 8.0 if is_resolved(text) else -2.0
        cand.hot = STATE_WEIGHT.get(row["state"], 0.0)
        access = min(row["access_count"] * 0.1, ACCESS_MAX)
        if is_superseded(kind, text):
            cand.truth = -SUPERSEDED_PENALTY
        fts = fts_share.get(index, 0.0)
        cand.base = (
            cand.lexical
            + scope_score
            + cand.kind_weight
            + recency
            + temporal
            + cand.hot
            + access
            + cand.truth
            + row["importance"] * 3
            + fts
        )
        cand.score = best_case(cand)
        ranked.append(cand)
    dropped = 0
    if dense is not None:
        lexical_rows = {int(row["rowid"]) for row, _ in found[: len(found) if lexical_size is None else lexical_size]}
        kept = fuse(ranked, lexical_rows, dense)
        dropped, ranked = len(ranked) - len(kept), kept
    ranking = Ranking(ranked, validator, intent.old)
    ranking.dropped = dropped
    if dense is not None:
        ranking.retrievers = ("lexical", "dense")
    return ranking


DENSE_FLOOR = 0.2
"""The least cosine a dense hit needs to be a candidate: the encoder puts unrelated sentences at 0 to 0.15, so
below this a topic that matches nothing still says "No matches" rather than listing the nearest strangers."""
DENSE_WEIGHT = 14.0
"""Rerank points per unit of cosine above DENSE_FLOOR: a hit at 0.7 adds 7, a paraphrase at 0.3 adds 1.4.

The cosine is one more match feature beside coverage (COVERAGE_WEIGHT, 12) and bm25 (FTS_WEIGHT, 6), so a strong
lexical top keeps its lead over a merely similar note, and the dense side lifts the lexical candidates it agrees
with and adds the ones full-text search missed. Measured against reciprocal rank fusion (k = 60, any weight
0.25-1) on LoCoMo, the psf/black commit-log replay and the anchor corpus (bench/RESULTS.md); 12 to 16
rank alike there, so this is not fitted to one set."""
BACKGROUND_RANK = 20
"""Which neighbour stands for a store's background similarity to a topic (every read fetches at least 20)."""
STANDOUT = 0.1
"""How far above the background a dense-only hit must stand when full-text search found nothing.

Notes of one project all sit near one another (a topic about another technology still finds 20 of 1,000 notes at
0.26 and the nearest at 0.33), so a cosine over DENSE_FLOOR alone does not make a match; an answer found only by
meaning stands out from the rest (0.15 or more above the 20th neighbour in the anchor corpus). The background is
never below DENSE_FLOOR: when fewer than BACKGROUND_RANK hits pass the floor, the floor is the background and an
answer stands STANDOUT above it (it used to need the floor alone, so on a 1,000-note store "zzzz nonexistent
topic", whose 20th neighbour is at 0.16, listed its three nearest strangers at 0.20, and a small repository
answered it with its project overview at 0.21). Measured on
queries with no true match over the anchor corpus, the paraphrase suite's store and a three-note store, and the
paraphrase suite's answers found only by meaning (0.31 to 0.46): bench/RESULTS.md."""


def fuse(cands: list[Candidate], lexical_rows: set[int], dense: dict[int, tuple[int, float]]) -> list[Candidate]:
    """Add the dense similarity to each candidate's rerank score, in place; returns the candidates kept.

    A candidate's base (the lexical rerank's score: match, scope, kind, importance, recency, superseded) gains
    DENSE_WEIGHT × (cosine − DENSE_FLOOR) when the dense retriever found it among the read's scopes (filtered before
    they were ranked); the reference-truth term and the surfaces' seating rules (superseded never leading, contested
    sides together) apply after, unchanged. When full-text search found nothing, a dense-only hit is kept only if
    it stands STANDOUT above the store's background (its BACKGROUND_RANK-th hit, or DENSE_FLOOR when fewer hits
    pass the floor), else the topic has no match.
    """
    floor = DENSE_FLOOR
    if not any(int(c.row["rowid"]) in lexical_rows for c in cands):
        background = sorted((cosine for _, cosine in dense.values()), reverse=True)
        floor = max(DENSE_FLOOR, background[BACKGROUND_RANK - 1] if len(background) >= BACKGROUND_RANK else 0.0)
        floor += STANDOUT
    kept = []
    for cand in cands:
        hit = dense.get(int(cand.row["rowid"]))
        cand.dense = None if hit is None else hit[1]
        similarity = 0.0 if hit is None else DENSE_WEIGHT * (hit[1] - DENSE_FLOOR)
        cand.base = cand.base + similarity
        cand.score = best_case(cand)
        if int(cand.row["rowid"]) in lexical_rows or (hit is not None and hit[1] >= floor):
            kept.append(cand)
    return kept


VOUCH_FLOOR = 0.5
"""The least share of TRUTH_MAX fresh references earn, however little of the topic the item says (`Ranking.top`).

Scaled by the item's topic share alone (no floor), fresh references put a commit naming one changelog word and
existing files below the commit the line describes less often (httpx lexical R@10 83.0); but a captured conclusion
about the topic's code (`eval/suites/subagent-conclusion.json`) then fell below look-alikes naming no file. Half
keeps it and still halves the bonus of a note that says a quarter of the topic."""
TRUTH_MAX = 3.0
"""The most `Validation.ranking_score` can add (fresh references): a candidate not yet judged ranks as if it earned
it."""


def best_case(cand: Candidate) -> float:
    """The most a candidate not yet judged can score: its base and the most its references could earn.

    Fresh references earn `TRUTH_MAX` scaled by the share of the topic the item says (at least `VOUCH_FLOOR`, as
    `Ranking.top` applies it), so the bound is that and no more: a loose bound (`TRUTH_MAX` flat) left the pool's
    low-share candidates looking able to pass judged ones, and the ranking judged ~40 to settle 14.
    """
    return cand.base + TRUTH_MAX * max(VOUCH_FLOOR, cand.share)


CHECK_BATCH = 8
"""How many candidates a `Ranking` judges per batch (one `validate_many`: two queries and the git work it needs)."""


def _order_key(cand: Candidate) -> tuple[float, float, Descending, int]:
    """The ranking order: score, then importance, then newer first, then full-text order."""
    after = cand.ties
    return (-cand.score, after[0], after[1], after[2])


class Ranking:
    """The reranked candidates in their final order, whose references are judged only as deep as it is read.

    Every candidate's score is known but for the truth term, which `best_case` bounds. Unjudged candidates wait,
    best case first; judged ones are settled once none of those waiting could still pass them even at their best
    case. So `top(n)` returns exactly what judging every candidate and sorting would, judging a few batches of
    CHECK_BATCH instead of the whole pool (the freshness check costs stats, git walks and anchor reads per item).
    """

    def __init__(self, cands: list[Candidate], validator: Validator, historical: bool) -> None:
        """Hold `cands` (scored by `rerank`, none judged yet) for `validator` to judge on demand."""
        self._validator = validator
        self._historical = historical
        self._waiting = sorted(cands, key=_order_key)
        self._judged: list[Candidate] = []
        self._settled: list[Candidate] = []
        self.size = len(cands)
        self.retrievers: tuple[str, ...] = ("lexical",)
        self.dropped = 0
        """Dense-only candidates `fuse` left out (no full-text match and no standing out): not counted as found."""

    def __len__(self) -> int:
        """How many candidates there are (judged or not)."""
        return self.size

    def top(self, n: int) -> list[Candidate]:
        """The best `n` candidates in order, every one of them judged.

        A batch that settles nothing (every one judged fell below what still waits, as when a pool's references
        are all stale) makes the next one twice as large: a store whose references hold is judged CHECK_BATCH at
        a time, one whose references fail in fewer batches (each costs two statements), judging at most about
        twice as many as it must.
        """
        size = CHECK_BATCH
        while len(self._settled) < n and (self._waiting or self._judged):
            # `not waiting < judged`, never `<=`: tuples compare their first differing element with the operator
            # itself, and `Descending` reverses only `<`.
            if self._judged and (not self._waiting or not _order_key(self._waiting[0]) < _order_key(self._judged[0])):
                self._settled.append(self._judged.pop(0))
                size = CHECK_BATCH
                continue
            batch = self._waiting[: max(size, n - len(self._settled))]
            size *= 2
            del self._waiting[: len(batch)]
            validations = self._validator.validate_many([(c.id, str(c.row["scope_key"])) for c in batch])
            for cand in batch:
                cand.validation = validations[cand.id]
                truth = cand.validation.ranking_score(self._historical)
                if truth > 0:
                    # References that check out vouch for what the item says, so they earn with how much of the
                    # topic it says (at least VOUCH_FLOOR of it): a flat +3 let any note naming an existing file
                    # pass a better match naming none (commit logs queried by their changelogs, bench/RESULTS.md).
                    # Stale and drifted references cost in full.
                    truth *= max(VOUCH_FLOOR, cand.share)
                cand.truth += truth
                cand.score = cand.base + truth
            self._judged = sorted(self._judged + batch, key=_order_key)
        return self._settled[:n]

    def first(self, wanted: Callable[[Candidate], bool], start: int) -> Candidate | None:
        """The best candidate from rank `start` on that is `wanted`, judging deeper only as far as it must."""
        depth = start
        while True:
            found = next((c for c in self.top(depth)[start:] if wanted(c)), None)
            if found is not None or depth >= self.size:
                return found
            depth = min(self.size, max(depth * 2, start + CHECK_BATCH))


class Descending(str):
    """Sort helper: a string that orders in reverse."""

    def __lt__(self, other: str) -> bool:
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
        for other in items[i + 1 :]:
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
            for other in items[i + 1 :]:
                if (
                    other.id not in placed
                    and supersession_group(other) == group
                    and note_status(other.kind, other.row["text"]) == "active"
                ):
                    out.append(other)
                    placed.add(other.id)
                    break
        out.append(cand)
        placed.add(cand.id)
    return out
