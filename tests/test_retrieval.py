"""Retrieval rules (`query/retrieval.py`) at their edges, checked through recall.

Each test states a rule of the ranking a user sees: the exact-anchor phrase, the dense side's share of the score
and its background floor, contested sides seated together, a superseded note never leading, ties broken by age.
The store, the rerank and the seating are the real ones; the dense retriever is the fixed one of
`test_hybrid_fusion` (its cosines are given).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cortex_engine.base import records
from cortex_engine.base.clock import iso
from cortex_engine.engine import Engine
from cortex_engine.memory.items import DEFAULT_KIND_WEIGHT, KIND_WEIGHTS
from cortex_engine.query import retrieval, surfaces
from cortex_engine.query.retrieval import DENSE_FLOOR, DENSE_WEIGHT, Descending
from cortex_engine.scope.freshness import RefVerdict, Validation
from cortex_engine.store.database import scope_id

from .conftest import Clock, Repo
from .test_hybrid_fusion import hybrid, neighbours, shown

# --- the exact anchor (a file path) is matched as one phrase ---------------------------------------------------


def test_an_exact_anchor_is_matched_as_its_words_in_order(engine: Engine) -> None:
    """The whisper's read: `src/DB/Pool.ts` finds the note naming that file, not one holding its words apart."""
    named = engine.note("insight", "src/db/pool.ts waits forever when the pool is exhausted").item_id
    engine.note("insight", "the pool in src has a db and ts files")
    query, _, found = surfaces.ranked(engine._context(), "src/DB/Pool.ts", 6, exact=True)
    assert query == '"src db pool ts"'
    assert [c.id for c in found] == [named]


def test_an_anchor_without_a_word_has_no_phrase(engine: Engine) -> None:
    engine.note("insight", "the pool waits")
    query, _, _ = surfaces.ranked(engine._context(), "/..//", 6, exact=True)
    assert query is None


# --- the dense side's share of the score -----------------------------------------------------------------------


def test_a_dense_hit_adds_its_cosine_over_the_floor_and_nothing_else_changes(engine: Engine) -> None:
    """DENSE_WEIGHT × (cosine − DENSE_FLOOR) for a hit, 0 for a lexical candidate the dense side did not find; the
    cosine is kept on the candidate (`--detail scores` shows it)."""
    hit = engine.note("insight", "the cache layer uses memcached on the staging hosts").item_id
    miss = engine.note("insight", "the cache layer keeps sessions warm across restarts").item_id
    plain = {c.id: c for c in surfaces.ranked(engine._context(), "cache layer", 8)[2]}
    fused = {c.id: c for c in surfaces.ranked(hybrid(engine, {hit: 0.62}), "cache layer", 8)[2]}
    assert fused[hit].score - plain[hit].score == pytest.approx(DENSE_WEIGHT * (0.62 - DENSE_FLOOR))
    assert fused[miss].score == pytest.approx(plain[miss].score)
    assert (fused[hit].dense, fused[miss].dense, plain[hit].dense) == (0.62, None, None)
    line = surfaces.recall(hybrid(engine, {hit: 0.62}), "cache layer", 600, detail="scores").text
    assert ", dense 0.62)" in line and line.count(", dense") == 1


def test_a_dense_hit_exactly_at_the_floor_is_a_candidate(engine: Engine) -> None:
    """Beside a full-text match, a dense-only hit needs DENSE_FLOOR, not more."""
    lexical = engine.note("insight", "the event bus replays on restart").item_id
    items = neighbours(engine, 2)
    order = shown(hybrid(engine, {items[0]: DENSE_FLOOR, items[1]: DENSE_FLOOR - 0.01}), "event bus replay")
    assert order == [lexical, items[0]]


def test_the_background_is_the_twentieth_best_neighbour(engine: Engine) -> None:
    """No word matches: a dense-only hit is kept when it stands STANDOUT over the 20th best cosine, counted from
    the best; with exactly 20 hits the 20th is the background (0.50 here, so the floor is 0.60)."""
    items = neighbours(engine, 20)
    cosines = {items[0]: 0.70, items[1]: 0.62, **{item: 0.55 for item in items[2:19]}, items[19]: 0.50}
    assert shown(hybrid(engine, cosines), "graphql federation gateway") == [items[0], items[1]]
    _, total, _ = surfaces.ranked(hybrid(engine, cosines), "graphql federation gateway", 8)
    assert total == 2  # the 18 left out are not counted as found
    assert engine.recall("graphql federation gateway", book=False).retrievers == ("lexical",)
    ctx = hybrid(engine, cosines)
    assert surfaces.recall(ctx, "graphql federation gateway", 600).retrievers == ("lexical", "dense")


def test_the_background_is_counted_from_the_best_in_a_bigger_store(engine: Engine) -> None:
    """Forty hits: twenty far below the rest do not lower the background."""
    items = neighbours(engine, 40)
    cosines = {items[0]: 0.70, **{item: 0.55 for item in items[1:20]}, **{item: 0.21 for item in items[20:]}}
    assert shown(hybrid(engine, cosines), "graphql federation gateway") == [items[0]]


def test_a_lazily_judged_hybrid_ranking_orders_as_judging_everything(engine: Engine, repo: Repo) -> None:
    """The dense side's score is the best case until the references are judged: a lazy top(n) is the first n of the
    fully judged ranking, with missing, fresh and no references among the candidates."""
    ids = []
    for n in range(24):
        name = f"src/queue_{n}.py"
        repo.write(name)
        ids.append(engine.note("insight", f"queue worker {n} retries" + (f" in {name}" if n % 3 else "")).item_id)
    repo.commit("files")
    for n in range(1, 24, 3):
        repo.path.joinpath(f"src/queue_{n}.py").unlink()
    cosines = {item: 0.25 + 0.01 * (i % 7) for i, item in enumerate(ids)}
    _, _, full = surfaces.rank_pool(hybrid(engine, cosines), "queue worker retries", 50)
    everything = [c.id for c in full.top(len(full))]
    assert len(everything) == 24 and len({c.truth for c in full.top(24)}) >= 2
    for n in range(1, 25):
        _, _, lazy = surfaces.rank_pool(hybrid(engine, cosines), "queue worker retries", 50)
        assert [c.id for c in lazy.top(n)] == everything[:n]


# --- a superseded note never leads ------------------------------------------------------------------------------


def test_when_every_top_match_is_superseded_the_best_current_one_leads(engine: Engine) -> None:
    """Twelve retired decisions match the topic better than anything current: the one current match, ranked
    thirteenth, is looked for past them (`Ranking.first`, deeper than one batch) and leads."""
    for i in range(12):
        subject = f"zone {chr(97 + i)}"
        engine.note("decision", f"parser cache eviction uses lru number {i}", subject)
        engine.note("decision", f"switched to a fifo queue, variant {i}", subject)
    current = engine.note("insight", "eviction happens nightly").item_id
    _, total, found = surfaces.ranked(engine._context(), "parser cache eviction", 1)
    assert total == 13
    assert [c.id for c in found] == [current]


# --- the seating rules, on candidates of a real store ------------------------------------------------------------


def _candidates(engine: Engine, topic: str) -> dict[str, retrieval.Candidate]:
    """Every candidate recall would rank for `topic` in the engine's scope, by item id."""
    return {c.id: c for c in surfaces.rank_pool(engine._context(), topic, 20)[2].top(40)}


Seat = Callable[[list[retrieval.Candidate]], list[retrieval.Candidate]]
Contest = tuple[dict[str, retrieval.Candidate], list[str]]


def _seat(seat: Seat, order: list[retrieval.Candidate]) -> list[str]:
    return [c.id for c in seat(order)]


@pytest.fixture
def contest(engine: Engine) -> Contest:
    """A three-way contest on `spool flush`, an insight on the same subject (not a side), two other decisions."""
    same_subject = engine.note("insight", "spool flush durations are graphed per turn end", "spool flush").item_id
    sides = [
        engine.note("decision", text, "spool flush").item_id
        for text in (
            "flush the spool at turn end always",
            "do not flush the spool at turn end always",
            "never flush the spool at turn end",
        )
    ]
    others = [
        engine.note("decision", f"the spool turn end {word} is logged", f"turn {word}").item_id
        for word in ("start", "stop")
    ]
    found = _candidates(engine, "spool turn end")
    assert [found[s].contested for s in sides] == [True] * 3 and not found[same_subject].contested
    return found, [*sides, same_subject, *others]


def test_later_sides_of_a_contest_are_pulled_up_behind_the_first_in_their_order(contest: Contest) -> None:
    found, (a, b, c, insight, x, y) = contest
    order = [found[i] for i in (a, x, c, b, y)]
    assert _seat(retrieval.seat_contested, order) == [a, c, b, x, y]
    assert _seat(retrieval.seat_contested, [found[i] for i in (a, b, c, x)]) == [a, b, c, x]


def test_a_side_already_seated_is_passed_over_and_the_rest_follow(contest: Contest) -> None:
    found, (a, b, c, insight, x, y) = contest
    assert _seat(retrieval.seat_contested, [found[i] for i in (a, x, b, y)]) == [a, b, x, y]


def test_only_contested_notes_pull_and_are_pulled(contest: Contest) -> None:
    """A note on the contest's subject that is no side of it neither pulls the sides nor is pulled by them."""
    found, (a, b, c, insight, x, y) = contest
    assert _seat(retrieval.seat_contested, [found[i] for i in (insight, x, a, y, b)]) == [insight, x, a, b, y]
    assert _seat(retrieval.seat_contested, [found[i] for i in (a, x, insight, b)]) == [a, b, x, insight]


def test_contested_sides_are_seated_together_only_within_their_scope(
    engine: Engine, repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """The same subject contested on another branch is another contest."""
    here = [
        engine.note("decision", t, "spool flush").item_id
        for t in ("flush the spool at turn end always", "do not flush the spool at turn end always")
    ]
    repo.git("checkout", "-q", "-b", "feature")
    feature = make_engine(repo.path)
    there = [
        feature.note("decision", t, "spool flush").item_id
        for t in ("flush the spool at turn end always", "do not flush the spool at turn end always")
    ]
    found = {**_candidates(engine, "spool flush"), **_candidates(feature, "spool flush")}
    assert found[here[0]].row["scope_key"] != found[there[0]].row["scope_key"]
    order = [found[i] for i in (here[0], there[0], here[1], there[1])]
    assert _seat(retrieval.seat_contested, order) == [here[0], here[1], there[0], there[1]]


def test_a_superseded_note_is_followed_by_its_own_replacement_only(
    engine: Engine, repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """The replacement pulled up is the active note of the same kind, subject and scope: not another decision, not
    an insight on the subject, not the same subject's decision on another branch."""
    old = engine.note("decision", "ingest batching uses kafka", "ingest").item_id
    new = engine.note("decision", "ingest batching uses a cron job", "ingest").item_id
    other = engine.note("decision", "ingest batching logs go to loki", "logging").item_id
    insight = engine.note("insight", "ingest batching took 3 s", "ingest").item_id
    bare = engine.note("insight", "ingest batching without a subject").item_id
    repo.git("checkout", "-q", "-b", "feature")
    feature = make_engine(repo.path)
    elsewhere = feature.note("decision", "ingest batching uses a queue", "ingest").item_id
    found = {**_candidates(engine, "ingest batching"), **_candidates(feature, "ingest batching")}
    seat = retrieval.seat_superseded
    assert _seat(seat, [found[i] for i in (bare, old, other, insight, elsewhere, new)]) == [
        bare,
        new,
        old,
        other,
        insight,
        elsewhere,
    ]
    assert _seat(seat, [found[i] for i in (old, bare, new)]) == [bare, new, old]  # never leads while bare matched
    assert _seat(seat, [found[i] for i in (bare, old, other, new, insight)]) == [bare, new, old, other, insight]
    assert _seat(seat, [found[i] for i in (bare, new, old)]) == [bare, new, old]
    assert _seat(seat, [found[i] for i in (bare, old, new)]) == [bare, new, old]  # even from just below it
    assert _seat(seat, [found[i] for i in (old, new)]) == [new, old]
    assert retrieval.supersession_group(found[bare]) is None
    assert retrieval.supersession_group(found[old]) == ("note:decision", "ingest", found[old].row["scope_key"])


def test_with_nothing_current_the_superseded_note_stays_first(engine: Engine) -> None:
    old = engine.note("decision", "ingest batching uses kafka", "ingest").item_id
    new = engine.note("decision", "ingest batching uses a cron job", "ingest").item_id
    found = _candidates(engine, "ingest batching")
    assert _seat(retrieval.seat_superseded, [found[old]]) == [old]
    assert _seat(retrieval.seat_superseded, []) == []
    assert new in found


# --- ties ------------------------------------------------------------------------------------------------------


def test_descending_orders_strings_in_reverse() -> None:
    days = ["2026-01-02", "2026-03-01", "2026-01-01"]
    assert sorted(map(Descending, days)) == ["2026-03-01", "2026-01-02", "2026-01-01"]
    assert Descending("b") < "a" and not Descending("a") < "b" and not Descending("a") < "a"


# --- the topic's terms, their weights and their coverage --------------------------------------------------------


def test_a_topic_s_terms_are_its_meaningful_words_and_compounds_once_each(engine: Engine) -> None:
    """Lowercased; one-letter words and function words dropped; a path or identifier one phrase; each term once."""
    # `it` and `s` of `it's` are a function word and a letter: dropped
    terms = retrieval.tokenize_topic("The a B Flush_Spool FLUSH flush flushing src/db/Pool.ts x9 it's")
    assert [(t.raw, t.stem, t.phrase) for t in terms] == [
        ("flush spool", "flush spool", True),
        ("flush", "flush", False),
        ("flushing", "flush", False),
        ("src db pool ts", "src db pool ts", True),
        ("x9", "x9", False),
    ]
    engine.note("insight", "flush_spool retries twice")
    # the identifier's words follow it as alternatives (`compound_parts`), each term once
    assert engine.recall("The FLUSH_spool flush", book=False).query == '"flush spool" OR "flush" OR "spool"'
    assert retrieval.tokenize_topic("") == [] and retrieval.fts_query([]) is None
    assert retrieval.fts_query(retrieval.tokenize_topic('say "hi" now')) == '"say" OR "hi" OR "now"'


def test_a_long_topic_keeps_its_first_32_terms() -> None:
    words = [f"w{n}" for n in range(40)]
    assert [t.raw for t in retrieval.tokenize_topic(" ".join(words))] == words[: retrieval.MAX_TOPIC_TOKENS]
    assert [t.raw for t in retrieval.tokenize_topic(" ".join(["dup"] * 5 + words))] == ["dup", *words[:31]]


def test_a_term_weighs_one_plus_its_idf_in_this_store(engine: Engine) -> None:
    """1 + ln(1 + (N − n + ½) / (n + ½)) for n of N items matching; counted again once the store changes."""
    for n in range(4):
        engine.note("insight", f"pager number {n} streams" + (" fast" if n == 0 else ""))
    total = engine.conn.execute("SELECT count(*) FROM memory_items").fetchone()[0]
    terms = retrieval.tokenize_topic("pager fast src/never.py")
    weights = retrieval.term_weights(engine.conn, terms)

    def idf(n: int, of: int) -> float:
        return 1 + math.log(1 + (of - n + 0.5) / (n + 0.5))

    assert weights == pytest.approx({"pager": idf(4, total), "fast": idf(1, total), "src never py": idf(0, total)})
    assert retrieval.term_weights(engine.conn, terms) == weights  # the counts held
    engine.note("insight", "the fast pager")
    again = retrieval.term_weights(engine.conn, terms)
    assert again == pytest.approx(
        {"pager": idf(5, total + 1), "fast": idf(2, total + 1), "src never py": idf(0, total + 1)}
    )
    assert retrieval.term_weights(engine.conn, []) == {}


def test_coverage_is_the_weighted_share_of_terms_found_as_words_or_stems() -> None:
    terms = retrieval.tokenize_topic("caching pool.ts timeout")
    weights = {"caching": 2.0, "pool ts": 3.0, "timeout": 5.0}
    assert retrieval.coverage(terms, weights, "Results are CACHED; timeout") == pytest.approx(7 / 10)
    assert retrieval.coverage(terms, weights, "pool.ts") == pytest.approx(3 / 10)
    assert retrieval.coverage(terms, weights, "ts pool times") == 0.0  # the phrase in order only
    assert retrieval.coverage(terms, weights, "apool.tsx") == 0.0
    assert retrieval.coverage(terms, {}, "caching") == pytest.approx(1 / 3)  # a term without a weight weighs 1
    assert retrieval.coverage([], {}, "anything") == 0.0
    assert retrieval.coverage(terms, {"caching": 0.0, "pool ts": 0.0, "timeout": 0.0}, "caching") == 0.0
    assert retrieval.coverage(retrieval.tokenize_topic("caching"), {}, "cached") == 1.0  # one term of weight 1


def test_a_topic_s_temporal_words_set_its_intent() -> None:
    assert retrieval.temporal_intent("the LATEST pool") == retrieval.Intent(True, False, False)
    assert retrieval.temporal_intent("what did we do previously") == retrieval.Intent(False, True, False)
    assert retrieval.temporal_intent("fixed bugs") == retrieval.Intent(False, False, True)
    assert retrieval.temporal_intent("now, the old one: closed?") == retrieval.Intent(True, True, True)
    assert retrieval.temporal_intent("bold golden recently") == retrieval.Intent(False, False, False)


def test_of_a_chain_of_replacements_the_active_one_is_pulled_up(engine: Engine) -> None:
    first, second, third = [
        engine.note("decision", f"ingest batching uses {tool}", "ingest").item_id
        for tool in ("kafka", "a cron job", "a queue")
    ]
    bare = engine.note("insight", "ingest batching without a subject").item_id
    found = _candidates(engine, "ingest batching")
    order = [found[i] for i in (bare, first, second, third)]
    assert _seat(retrieval.seat_superseded, order) == [bare, third, first, second]


def test_at_an_equal_score_the_more_important_item_ranks_first(engine: Engine) -> None:
    """A pinned item of no importance and a cold one of full importance score alike (3 points each way): the
    important one leads, whichever full-text order they came in."""
    first = engine.note("insight", "the nightly export job timed out").item_id
    second = engine.note("insight", "the nightly export job timed out").item_id
    for item, importance, state in ((first, 0.0, "pinned"), (second, 1.0, "cold")):
        engine.conn.execute("UPDATE memory_items SET importance=?, state=? WHERE id=?", (importance, state, item))
    engine.conn.commit()
    found = surfaces.ranked(engine._context(), "nightly export", 8)[2]
    assert [c.id for c in found] == [second, first]
    assert found[0].score == found[1].score


def test_at_an_equal_score_and_importance_the_newer_item_ranks_first(engine: Engine, clock: Clock) -> None:
    """Two notes found only by the dense side, alike in all but their dates (both after the clock, so equally
    recent): the newer one leads though the dense side listed the older one first."""
    engine.note("insight", "the event bus replays on restart")
    clock.advance(days=1)
    older = engine.note("insight", "queues drain before deploys").item_id
    clock.advance(days=1)
    newer = engine.note("insight", "queues drain before deploys").item_id
    clock.advance(days=-5)
    found = surfaces.ranked(hybrid(engine, {older: 0.5, newer: 0.5}), "event bus replay", 8)[2]
    assert [c.id for c in found][1:] == [newer, older]
    assert found[1].score == found[2].score and found[1].order > found[2].order


def test_recency_halves_at_a_week_and_an_unreadable_date_counts_as_a_year(engine: Engine, clock: Clock) -> None:
    """RECENCY_MAX / (1 + age in days / 7): two notes alike but for a week between them differ by exactly half of
    it; a date that cannot be read is a year old; a date after the clock is today."""
    week = engine.note("insight", "the nightly export job timed out").item_id
    clock.advance(days=7)
    today = engine.note("insight", "the nightly export job timed out").item_id
    unread = engine.note("insight", "the nightly export job timed out").item_id
    engine.conn.execute("UPDATE memory_items SET created_at='not a date' WHERE id=?", (unread,))
    engine.conn.commit()
    found = {c.id: c.score for c in surfaces.ranked(engine._context(), "nightly export", 8)[2]}
    assert found[today] - found[week] == pytest.approx(0.5, abs=1e-9)
    assert found[today] - found[unread] == pytest.approx(1 - 1 / (1 + 365 / 7), abs=1e-9)
    clock.advance(days=-3)
    found = {c.id: c.score for c in surfaces.ranked(engine._context(), "nightly export", 8)[2]}
    assert found[today] - found[week] == pytest.approx(1 - 1 / (1 + 4 / 7), abs=1e-9)


# --- the rerank's match terms -----------------------------------------------------------------------------------


def _ranked(ctx: surfaces.Context, topic: str) -> dict[str, retrieval.Candidate]:
    return {c.id: c for c in surfaces.ranked(ctx, topic, 8)[2]}


def test_the_match_counts_each_term_by_its_idf(engine: Engine) -> None:
    """The coverage part of the score is COVERAGE_WEIGHT × the IDF-weighted share of the topic's terms found."""
    common = [engine.note("insight", f"pager number {n} streams").item_id for n in range(4)]
    both = engine.note("insight", "the fast pager").item_id
    weights = retrieval.term_weights(engine.conn, retrieval.tokenize_topic("pager fast"))
    found = _ranked(engine._context(), "pager fast")
    assert found[both].lexical == pytest.approx(retrieval.COVERAGE_WEIGHT)
    share = weights["pager"] / (weights["pager"] + weights["fast"])
    assert found[common[0]].lexical == pytest.approx(retrieval.COVERAGE_WEIGHT * share)


def test_the_whole_topic_verbatim_adds_4_and_the_session_focus_1_5(engine: Engine) -> None:
    verbatim = engine.note("insight", "the export job timed out").item_id
    shuffled = engine.note("insight", "timed out: the job of export").item_id
    found = _ranked(engine._context(), "  Export Job timed OUT ")
    assert found[verbatim].lexical - found[shuffled].lexical == pytest.approx(4)
    focused = _ranked(records.replace(engine._context(), focus="Job Of"), "export job timed out")
    assert focused[shuffled].lexical - found[shuffled].lexical == pytest.approx(1.5)
    assert focused[verbatim].lexical == pytest.approx(found[verbatim].lexical)


def test_captured_evidence_repeated_word_for_word_is_one_candidate(engine: Engine) -> None:
    """The same command with the same output, captured twice, is one candidate; notes alike stay two."""
    now = engine.now()
    rows = [
        ("cmd:1", "command_run", "pytest", "pytest failed: cache warmup"),
        ("cmd:2", "command_run", "pytest", "pytest failed: cache warmup"),
        ("cmd:3", "command_run", "pytest", "pytest failed: cache warmup twice"),
        ("cmd:4", "command_run", "tox", "pytest failed: cache warmup"),
        ("cmd:5", "episode:command_failure", "pytest", "pytest failed: cache warmup"),
    ]
    engine.conn.executemany(
        "INSERT INTO memory_items(id, scope_type, scope_id, kind, subject, text, state, importance, created_at) "
        "VALUES (?, 'branch', ?, ?, ?, ?, 'warm', 0.5, ?)",
        [(i, scope_id(engine.conn, engine.scope.key), kind, subject, text, now) for i, kind, subject, text in rows],
    )
    engine.conn.commit()
    notes = [engine.note("insight", "pytest failed: cache warmup").item_id for _ in range(2)]
    found = _ranked(engine._context(), "pytest cache warmup")
    repeated = [i for i in ("cmd:1", "cmd:2") if i in found]
    assert len(repeated) == 1 and sorted(found) == sorted(["cmd:3", "cmd:4", "cmd:5", *notes, *repeated])


def test_of_captured_evidence_repeated_word_for_word_the_more_important_then_the_newer_is_kept(
    engine: Engine, clock: Clock
) -> None:
    """Repeats match the topic exactly alike, so the one kept is decided by the full-text order's tie-breaks: the
    more important first, then the newer. Of the equally important pair the newer is stored second, so the store's
    own order would keep the older."""
    key = scope_id(engine.conn, engine.scope.key)
    day, next_day = engine.now(), iso(clock.now + timedelta(days=1))
    rows = [
        ("cmd:a", "npm ci failed: lockfile drift", 0.9, day),
        ("cmd:b", "npm ci failed: lockfile drift", 0.2, next_day),
        ("cmd:c", "tox failed: lockfile drift", 0.5, day),
        ("cmd:d", "tox failed: lockfile drift", 0.5, next_day),
    ]
    for item, text, importance, created in rows:  # one by one: each repeat gets the next rowid
        engine.conn.execute(
            "INSERT INTO memory_items(id, scope_type, scope_id, kind, subject, text, state, importance, created_at) "
            "VALUES (?, 'branch', ?, 'command_run', 'ci', ?, 'warm', ?, ?)",
            (item, key, text, importance, created),
        )
    engine.conn.commit()
    clock.advance(days=2)
    assert sorted(_ranked(engine._context(), "lockfile drift")) == ["cmd:a", "cmd:d"]


def test_the_ranked_hits_of_any_pool_are_its_best_live_matches_whether_the_span_is_given_or_read(
    engine: Engine,
) -> None:
    """`ranked_hits` reads the span itself when not given one, for a pool of any size (not only a multiple of
    RANK_SPAN), and either way returns the best `pool` matches that are not archived, best first."""
    ids = [engine.note("insight", f"pool timeout case {i:03d}").item_id for i in range(12)]
    engine.conn.executemany("UPDATE memory_items SET state='archived' WHERE id=?", [(i,) for i in ids[::3]])
    engine.conn.commit()
    conn: sqlite3.Connection = engine.conn
    archived = {r[0] for r in conn.execute("SELECT rowid FROM memory_items WHERE state='archived'")}
    query = retrieval.fts_query(retrieval.tokenize_topic("pool timeout")) or ""
    keys = engine._context().scope_keys
    live = [h for h in retrieval.best_matches(conn, query, 100) if h[0] not in archived]
    assert len(archived) == 4 and len(live) == 8
    for pool in (1, 3, 5, 7, 8, 9):
        span = retrieval.best_matches(conn, query, pool * retrieval.RANK_SPAN)
        assert retrieval.ranked_hits(conn, query, keys, pool) == live[:pool]
        assert retrieval.ranked_hits(conn, query, keys, pool, span) == live[:pool]


def test_candidates_alike_in_everything_keep_their_full_text_order(engine: Engine) -> None:
    first = engine.note("insight", "the nightly export job timed out").item_id
    second = engine.note("insight", "the nightly export job timed out").item_id
    found = surfaces.ranked(engine._context(), "nightly export", 8)[2]
    assert {c.id for c in found} == {first, second} and found[0].score == found[1].score
    assert [c.order for c in found] == [0, 1]


def test_the_subject_and_the_text_are_read_as_one_lowercased_text(engine: Engine) -> None:
    """The topic verbatim in the subject earns the verbatim bonus; a term in the subject and one in the text both
    count as found, but BODY_SHARE of the coverage is earned by the body alone; a note without a subject earns
    nothing for one."""
    in_subject = engine.note("decision", "run it nightly", "Export Job").item_id
    split = engine.note("decision", "job runs nightly", "export").item_id
    bare = engine.note("insight", "export job runs nightly").item_id
    found = _ranked(engine._context(), "export job")
    subject_share = retrieval.coverage(
        retrieval.tokenize_topic("export job"),
        retrieval.term_weights(engine.conn, retrieval.tokenize_topic("export job")),
        "export",
    )
    body_only = (1 - retrieval.BODY_SHARE) * retrieval.COVERAGE_WEIGHT
    assert found[in_subject].lexical == pytest.approx(body_only + retrieval.SUBJECT_WEIGHT + 4)
    assert found[split].lexical == pytest.approx(
        body_only
        + retrieval.BODY_SHARE * retrieval.COVERAGE_WEIGHT * (1 - subject_share)
        + retrieval.SUBJECT_WEIGHT * subject_share
    )
    assert found[bare].lexical == pytest.approx(retrieval.COVERAGE_WEIGHT + 4)
    engine.note("insight", "the xxxx flag")
    assert max(c.lexical for c in _ranked(engine._context(), "xxxx").values()) == pytest.approx(
        retrieval.COVERAGE_WEIGHT + 4
    )


def _expected(engine: Engine, now: datetime, cand: retrieval.Candidate, topic: str, bm25: dict[int, float]) -> float:
    """The rerank's score as `rerank`'s docstring states it, from the row and the store's own bm25."""
    row = cand.row
    age = max(0.0, (now - datetime.fromisoformat(row["created_at"])).total_seconds() / 86400)
    words = set(topic.lower().split())
    temporal = 0.0
    if words & retrieval.RECENT_WORDS:
        temporal += max(0.0, 5 - math.log(1 + age) * 0.9)
    if words & retrieval.OLD_WORDS:
        temporal += min(5.0, math.log(1 + age) * 0.9)
    if words & retrieval.RESOLVED_WORDS:
        temporal += 8.0 if "\nStatus: resolved" in row["text"] else -2.0
    scope = 6.0 if row["scope_key"] == engine.scope.key else 2.0
    best = max(abs(b) for b in bm25.values())
    return float(
        cand.lexical
        + scope
        + KIND_WEIGHTS.get(cand.kind, DEFAULT_KIND_WEIGHT)[0]
        + 1 / (1 + age / 7)
        + temporal
        + retrieval.STATE_WEIGHT[row["state"]]
        + min(row["access_count"] * 0.1, 0.3)
        + cand.truth
        + row["importance"] * 3
        + 6.0 * abs(bm25[row["rowid"]]) / best
    )


@pytest.mark.parametrize(
    "topic",
    [
        "queue worker retries",
        "latest queue worker",
        "old queue worker",
        "resolved queue worker",
        "previously fixed queue worker now",
    ],
)
def test_the_score_is_the_sum_the_rerank_states(engine: Engine, clock: Clock, topic: str) -> None:
    """Match, scope, kind, recency, temporal intent, tier, use, truth, importance and bm25 share, each at its
    stated weight, for notes of different kinds, ages, tiers, uses, statuses and scopes."""
    old = engine.note("decision", "queue worker retries with backoff", "queue").item_id
    clock.advance(days=300)  # past the recent intent's zero and the old intent's cap
    engine.note("decision", "queue worker retries forever", "queue")
    clock.advance(days=3)
    fixed = engine.note("blocker", "queue worker crashed on retries", "crash").item_id
    engine.resolve(fixed)
    plain = engine.note("insight", "the queue worker retries are counted").item_id
    project = engine.note("insight", "queue worker dashboards").item_id
    clock.advance(days=2)
    engine.conn.execute("UPDATE memory_items SET access_count=2, state='hot', importance=0.9 WHERE id=?", (plain,))
    engine.conn.execute("UPDATE memory_items SET access_count=7, state='cold' WHERE id=?", (old,))
    project_key = next(k for k in engine._context().scope_keys if k.startswith("project:"))
    engine.conn.execute(
        "UPDATE memory_items SET scope_type='project', scope_id=? WHERE id=?",
        (scope_id(engine.conn, project_key), project),
    )
    engine.conn.commit()
    ctx = engine._context()
    query, _, found = surfaces.ranked(ctx, topic, 8)
    assert query is not None and len(found) == 5
    bm25 = dict(retrieval.ranked_hits(engine.conn, query, ctx.scope_keys, 40))
    for cand in found:
        assert cand.score == pytest.approx(_expected(engine, clock.now, cand, topic, bm25), abs=1e-9), cand.id
    by_id = {c.id: c for c in found}
    assert by_id[old].truth == -retrieval.SUPERSEDED_PENALTY and by_id[plain].truth == 0.0
    assert (by_id[plain].hot, by_id[old].hot) == (retrieval.STATE_WEIGHT["hot"], retrieval.STATE_WEIGHT["cold"])


def test_when_every_match_is_superseded_the_replacement_is_shown(engine: Engine) -> None:
    """Nothing current matches: the search for one ends at the bottom of the ranking, and what replaced the best
    retired decision is shown."""
    replacements = []
    for i in range(3):
        engine.note("decision", f"parser cache eviction uses lru number {i}", f"zone {chr(97 + i)}")
        replacements.append(engine.note("decision", f"switched to a fifo queue, variant {i}", f"zone {chr(97 + i)}"))
    _, total, found = surfaces.ranked(engine._context(), "parser cache eviction", 1)
    assert total == 3 and [c.id for c in found] == [replacements[0].item_id]


def test_captured_evidence_is_matched_on_its_subject_and_text_alike(engine: Engine) -> None:
    """A command's subject is not repeated in its text (a note's is, in its trailers): the topic verbatim in the
    subject earns the verbatim bonus, and the subject's last word and the text's first are two words."""
    engine.conn.executemany(
        "INSERT INTO memory_items(id, scope_type, scope_id, kind, subject, text, state, importance, created_at) "
        "VALUES (?, 'branch', ?, 'command_run', ?, ?, 'warm', 0.5, ?)",
        [
            (i, scope_id(engine.conn, engine.scope.key), subject, text, engine.now())
            for i, subject, text in (("cmd:1", "Export Job", "ran nightly"), ("cmd:2", "export", "job ran nightly"))
        ],
    )
    engine.conn.commit()
    found = _ranked(engine._context(), "export job")
    weights = retrieval.term_weights(engine.conn, retrieval.tokenize_topic("export job"))
    share = weights["export"] / (weights["export"] + weights["job"])
    assert found["cmd:1"].lexical == pytest.approx(retrieval.COVERAGE_WEIGHT + retrieval.SUBJECT_WEIGHT + 4)
    assert found["cmd:2"].lexical == pytest.approx(retrieval.COVERAGE_WEIGHT + retrieval.SUBJECT_WEIGHT * share)


def test_a_lexical_recall_names_its_one_retriever(engine: Engine) -> None:
    engine.note("insight", "the export job timed out")
    assert engine.recall("export job", book=False).retrievers == ("lexical",)


def test_references_are_judged_for_history_when_the_topic_asks_for_the_past(engine: Engine, repo: Repo) -> None:
    """A fresh reference adds TRUTH_MAX on top of what the rerank had; a missing one costs -4 - 1 for current truth
    but only -1.5 when the topic asks what was (`old`, `previously`)."""
    repo.write("src/kept.py")
    repo.write("src/gone.py")
    repo.commit("files")
    kept = engine.note("decision", "the export job lives in src/kept.py", "export").item_id
    gone = engine.note("insight", "the export job used src/gone.py").item_id
    repo.path.joinpath("src/gone.py").unlink()
    now = _ranked(engine._context(), "export job")
    assert (now[kept].truth, now[gone].truth) == (retrieval.TRUTH_MAX, -5.0)
    then = _ranked(engine._context(), "previously export job")
    assert (then[kept].truth, then[gone].truth) == (retrieval.TRUTH_MAX, -1.5)


def test_a_kind_without_a_weight_and_a_match_without_bm25_score_as_stated(engine: Engine) -> None:
    """An item of a kind the table does not list weighs DEFAULT_KIND_WEIGHT; a candidate the substring fallback
    found (no full-text match, so no bm25) earns nothing for bm25."""
    engine.conn.execute(
        "INSERT INTO memory_items(id, scope_type, scope_id, kind, subject, text, state, importance, created_at) "
        "VALUES ('odd:1', 'branch', ?, 'episode:unlisted', NULL, 'the reexported symbols', 'warm', 0.5, ?)",
        (scope_id(engine.conn, engine.scope.key), engine.now()),
    )
    engine.conn.commit()
    query, _, found = surfaces.ranked(engine._context(), "xported", 8)
    assert [c.id for c in found] == ["odd:1"]
    cand = found[0]
    assert cand.kind_weight == DEFAULT_KIND_WEIGHT[0]
    assert cand.score == pytest.approx(
        cand.lexical + 6.0 + DEFAULT_KIND_WEIGHT[0] + 1.0 + retrieval.STATE_WEIGHT["warm"] + 0.5 * 3 + cand.truth,
        abs=1e-9,
    )


def test_the_pool_is_five_times_the_list_at_least_20_and_the_fallback_four_times_at_least_16(engine: Engine) -> None:
    """How many candidates a read weighs (`--json`'s total): max(5 × limit, 20) full-text matches, else
    max(4 × limit, 16) items holding a topic word inside another."""
    now = engine.now()
    engine.conn.executemany(
        "INSERT INTO memory_items(id, scope_type, scope_id, kind, subject, text, state, importance, created_at) "
        "VALUES (?, 'branch', ?, 'note:insight', NULL, ?, 'warm', 0.5, ?)",
        [(f"n:{n}", scope_id(engine.conn, engine.scope.key), f"pager {n} reexported", now) for n in range(50)],
    )
    engine.conn.commit()
    ctx = engine._context()
    assert [surfaces.ranked(ctx, "pager", limit)[1] for limit in (1, 4, 5, 8)] == [20, 20, 25, 40]
    assert [surfaces.ranked(ctx, "xported", limit)[1] for limit in (1, 4, 5, 8)] == [16, 16, 20, 32]


def test_an_exact_anchor_of_two_words_is_one_phrase(engine: Engine) -> None:
    ran = engine.note("insight", "run npm test before a push").item_id
    engine.note("insight", "the test of npm packaging")
    query, _, found = surfaces.ranked(engine._context(), "npm test", 6, exact=True)
    assert query == '"npm test"' and [c.id for c in found] == [ran]


def test_the_substring_fallback_finds_a_word_or_its_stem_and_nothing_else(engine: Engine) -> None:
    """No full-text match: an item is kept when a topic word or its stem stands inside its subject or text, and
    only then (not across the line between them, not for a subject it does not have)."""
    engine.note("decision", "ship on fridays", "release")
    engine.note("insight", "the deploy is slow")
    assert surfaces.ranked(engine._context(), "xxxx", 8)[2] == []
    assert surfaces.ranked(engine._context(), "xx", 8)[2] == []
    inside = engine.note("insight", "prefetch autocached pages").item_id
    _, _, found = surfaces.ranked(engine._context(), "caching", 8)
    assert [c.id for c in found] == [inside]


# --- a lazy ranking settles a judged candidate only when nothing waiting could still pass it ----------------------


def test_a_waiting_candidate_whose_best_case_ties_a_judged_one_is_judged_before_that_one_is_settled() -> None:
    """`Ranking.top(n)` is the prefix of judging every candidate and sorting. Here a candidate left out of the first
    batch could at best tie the leader on score and importance, and it is newer: judged fresh, it leads, so the
    leader may not be settled before it is judged (the tie is exact: 2.0 + TRUTH_MAX is 5.0 in floating point)."""
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row

    def cand(item: str, base: float, created: str, order: int) -> retrieval.Candidate:
        row = db.execute(
            "SELECT ? AS id, 'insight' AS kind, 1 AS importance, ? AS created_at, 'project:x' AS scope_key",
            (item, created),
        ).fetchone()
        return retrieval.Candidate(row, None, Validation(), score=base + retrieval.TRUTH_MAX, base=base, order=order)

    fresh = Validation(refs=(RefVerdict("src/a.py", "file", "exists"),))

    class Judge:
        """Every candidate's references: only `late`'s are there (truth +3); the others name no file (0)."""

        def validate_many(self, items: list[tuple[str, str]]) -> dict[str, Validation]:
            return {item: fresh if item == "late" else Validation() for item, _ in items}

    def ranking() -> retrieval.Ranking:
        leader = cand("leader", 2.0 + retrieval.TRUTH_MAX, "2026-01-01T00:00:00Z", 0)
        fillers = [cand(f"f{i}", 4.5, f"2026-01-0{i + 2}T00:00:00Z", i + 1) for i in range(retrieval.CHECK_BATCH - 1)]
        late = cand("late", 2.0, "2026-06-01T00:00:00Z", retrieval.CHECK_BATCH)
        return retrieval.Ranking([leader, *fillers, late], Judge(), historical=False)  # type: ignore[arg-type]

    everything = [c.id for c in ranking().top(retrieval.CHECK_BATCH + 1)]
    assert everything[:2] == ["late", "leader"]
    for n in (1, 2):
        assert [c.id for c in ranking().top(n)] == everything[:n]


def test_a_qualified_name_also_matches_by_its_own_last_part(engine: Engine) -> None:
    """`httpx.HTTPStatusError` is found where the text says `HTTPStatusError` (text names a thing without its
    module as often as with it); a path or a file name keeps matching only whole (`pool.ts` does not match `ts`)."""
    named = engine.note("insight", "raise HTTPStatusError from raise_for_status").item_id
    apart = engine.note("insight", "the status page lists every error").item_id  # its words apart: ranked below
    tokens = retrieval.tokenize_topic("httpx.HTTPStatusError src/db/pool.ts pool.ts")
    assert [(t.raw, t.name) for t in tokens] == [
        ("httpx httpstatuserror", "httpstatuserror"),
        ("src db pool ts", None),
        ("pool ts", None),
    ]
    assert [c.id for c in surfaces.ranked(engine._context(), "httpx.HTTPStatusError", 8)[2]] == [named, apart]
    weights = retrieval.term_weights(engine.conn, tokens[:1])
    assert retrieval.coverage(tokens[:1], weights, "raise httpstatuserror now") == 1.0


def test_an_identifier_s_words_are_its_parts_a_path_or_file_name_has_none() -> None:
    """Dots, underscores, hyphens, slashes and case changes part an identifier's words; a path to a file, a URL, a
    file name and a version stay whole (the path topics' exactness); one-letter and function words are no part."""
    parts = {
        t.raw: t.parts
        for t in retrieval.tokenize_topic(
            "url.params maybe_install_uvloop CamelCase HTTPStatusError HTTP/2 request/response for-loops search_v2 "
            "src/db/pool.ts pool.ts www.example.com/a 0.23.2 SOCKS5 plain"
        )
    }
    assert parts == {
        "url params": ("url", "params"),
        "maybe install uvloop": ("maybe", "install", "uvloop"),
        "camelcase": ("camel", "case"),
        "httpstatuserror": ("http", "status", "error"),
        "http 2": ("http",),
        "request response": ("request", "response"),
        "for loops": ("loops",),
        "search v2": ("search", "v2"),
        "src db pool ts": (),
        "pool ts": (),
        "www example com a": (),
        "0 23 2": (),
        "socks5": (),
        "plain": (),
    }


def test_an_identifier_finds_what_says_its_words_apart_below_what_names_it_whole(engine: Engine) -> None:
    """`maybe_install_uvloop` finds the note that says "install uvloop" (matched whole only, it found nothing), and
    `FunctionAuth` the one that says "function auth"; the note naming the identifier still ranks first, and a
    word's part credit is at most PART_SHARE of the term."""
    whole = engine.note("insight", "maybe_install_uvloop runs on import").item_id
    apart = engine.note("insight", "install uvloop only when the event loop is created").item_id
    engine.note("insight", "the import order of the plugins")
    assert [c.id for c in surfaces.ranked(engine._context(), "maybe_install_uvloop", 8)[2]] == [whole, apart]
    camel = engine.note("insight", "the function auth flow signs each request").item_id
    assert [c.id for c in surfaces.ranked(engine._context(), "FunctionAuth", 8)[2]] == [camel]
    tokens = retrieval.tokenize_topic("maybe_install_uvloop")
    weights = {"maybe install uvloop": 4.0, "maybe": 1.0, "install": 1.0, "uvloop": 2.0}
    assert retrieval.coverage(tokens, weights, "Maybe_Install_UVLoop") == 1.0
    assert retrieval.coverage(tokens, weights, "installs uvloop") == pytest.approx(retrieval.PART_SHARE * 3 / 4)
    assert retrieval.coverage(tokens, weights, "loop installer") == 0.0


def test_fresh_references_earn_with_the_share_of_the_topic_the_item_says() -> None:
    """A note naming an existing file but saying a quarter of the topic no longer passes, on that alone, a note naming
    no file that matches better: fresh references vouch for what an item says (at least VOUCH_FLOOR of TRUTH_MAX);
    a note saying the whole topic still earns all of it."""
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row

    def cand(item: str, base: float, share: float, order: int) -> retrieval.Candidate:
        row = db.execute(
            "SELECT ? AS id, 'insight' AS kind, 0 AS importance, '2026-01-01T00:00:00Z' AS created_at, "
            "'project:x' AS scope_key",
            (item,),
        ).fetchone()
        return retrieval.Candidate(
            row,
            None,
            Validation(),
            score=base + retrieval.TRUTH_MAX,
            base=base,
            order=order,
            share=share,
        )

    fresh = Validation(refs=(RefVerdict("src/a.py", "file", "exists"),))

    class Judge:
        def validate_many(self, items: list[tuple[str, str]]) -> dict[str, Validation]:
            return {item: (Validation() if item == "better" else fresh) for item, _ in items}

    names_a_file = cand("names-a-file", 10.0, 0.25, 0)
    better = cand("better", 11.6, 0.75, 1)
    whole = cand("whole", 9.0, 1.0, 2)
    top = retrieval.Ranking([names_a_file, better, whole], Judge(), historical=False).top(3)  # type: ignore[arg-type]
    assert [c.id for c in top] == ["whole", "better", "names-a-file"]
    assert [c.truth for c in top] == [retrieval.TRUTH_MAX, 0.0, retrieval.VOUCH_FLOOR * retrieval.TRUTH_MAX]


_WORDS = st.sampled_from(["src/db", "pool.ts", "Time", "out", "timeout", "pools", "ΣΑΣ", "İstanbul", "a_b"])
_TEXTS = st.lists(st.one_of(_WORDS, st.text(max_size=6)), max_size=6).map("".join)


@given(_TEXTS, _TEXTS, st.sampled_from(["src/db/pool.ts", "timeout", "pool", "time out", "σας istanbul"]))
@example("see src/db", "pool.ts", "src/db/pool.ts")  # a phrase across the parts: their words in order
@example("Time", "out", "timeout")  # the newline parts words
def test_coverage_of_parts_read_apart_is_that_of_the_joined_text(first: str, then: str, topic: str) -> None:
    """The rerank reads a candidate's subject, body and trailers once each and joins what they say: that must
    score exactly as reading the text they make up, newline between."""
    tokens = retrieval.tokenize_topic(topic)
    weights = {t.raw: 1.0 + i for i, t in enumerate(tokens)}
    joined = retrieval._joined(retrieval.said(first), retrieval.said(then))
    assert retrieval.coverage(tokens, weights, joined) == retrieval.coverage(tokens, weights, first + "\n" + then)


def test_a_temporal_word_weighs_at_most_one_of_the_topic_s_other_terms(engine: Engine) -> None:
    """`latest` in a two-word topic adds the whole recency intent (TEMPORAL_MAX for an item made today); among
    five other terms it adds what one of them is worth, COVERAGE_WEIGHT / 5: in a sentence such as "X is now
    wrapped" the word is part of a statement, not a question about the newest item."""
    item = engine.note("insight", "queue worker retries backoff jitter").item_id

    def added(words: str) -> float:
        ctx = engine._context()
        return _ranked(ctx, f"latest {words}")[item].score - _ranked(ctx, words)[item].score

    assert added("worker queue") == pytest.approx(retrieval.TEMPORAL_MAX)  # not verbatim either way (+4)
    assert added("jitter backoff retries worker queue") == pytest.approx(retrieval.COVERAGE_WEIGHT / 5)
