"""How the dense side joins the lexical rerank, with a fixed dense retriever instead of the encoder.

The cosines are given, so each test states exactly what the encoder would have said; the store, the lexical
rerank and the seating are the real ones.
"""

from __future__ import annotations

from cortex_engine.base import records
from cortex_engine.engine import Engine
from cortex_engine.query import retrieval, surfaces


def rowids(engine: Engine) -> dict[str, int]:
    """Memory item id → rowid."""
    return {str(r[1]): int(r[0]) for r in engine.conn.execute("SELECT rowid, id FROM memory_items")}


def hybrid(engine: Engine, cosines: dict[str, float]) -> surfaces.Context:
    """The engine's context with a dense retriever that answers `cosines` (item id → cosine), best first."""
    by_rowid = {rowids(engine)[item]: cosine for item, cosine in cosines.items()}

    def search(conn: object, keys: list[str], topic: str, k: int, include: object = ()) -> list[tuple[int, float]]:
        best = sorted(by_rowid.items(), key=lambda hit: -hit[1])[:k]
        near = {rowid for rowid, _ in best}
        extra = [(r, c) for r, c in by_rowid.items() if r in include and r not in near]  # type: ignore[operator]
        return best + sorted(extra)

    return records.replace(engine._context(), dense=search)


def shown(ctx: surfaces.Context, topic: str, limit: int = 8) -> list[str]:
    """The recall order's item ids."""
    return [c.id for c in surfaces.ranked(ctx, topic, limit)[2]]


def test_a_strong_lexical_top_keeps_its_lead_over_a_weaker_match_the_dense_side_prefers(engine: Engine) -> None:
    """Rank fusion let a note matching one topic word overtake the note matching them all, because the encoder
    ranked it first (and the better match under its floor); as a feature of the rerank, similarity lifts a note,
    but not past a far better match."""
    exact = engine.note("insight", "flush_spool retries twice when the store is busy, then leaves the spool").item_id
    partial = engine.note("insight", "the spool is emptied after every turn by the detached process").item_id
    ctx = hybrid(engine, {partial: 0.62})
    assert shown(engine._context(), "spool retries busy store")[0] == exact
    order = shown(ctx, "spool retries busy store")
    assert order[:2] == [exact, partial]


def test_dense_similarity_lifts_the_lexical_candidate_it_agrees_with(engine: Engine) -> None:
    """Two notes matching the topic's words alike: the one the encoder finds closer ranks first."""
    first = engine.note("insight", "the cache layer uses memcached on the staging hosts").item_id
    second = engine.note("insight", "the cache layer keeps sessions warm across restarts").item_id
    lexical = shown(engine._context(), "cache layer")
    assert set(lexical[:2]) == {first, second}
    later = lexical[1]
    assert shown(hybrid(engine, {later: 0.7, lexical[0]: 0.25}), "cache layer")[0] == later


def neighbours(engine: Engine, count: int) -> list[str]:
    """`count` notes of one project that share no word with the topics below."""
    return [
        engine.note("insight", f"service number {i} answers health checks on port {8000 + i}").item_id
        for i in range(count)
    ]


def test_a_topic_matching_nothing_lists_no_dense_neighbours_that_do_not_stand_out(engine: Engine) -> None:
    """A store's notes are all somewhat alike: when no word matches, 25 neighbours between 0.21 and 0.33 are the
    store's background, not answers, and recall says there is no match."""
    items = neighbours(engine, 25)
    cosines = {item: 0.33 - 0.005 * i for i, item in enumerate(items)}
    _, total, found = surfaces.ranked(hybrid(engine, cosines), "graphql federation gateway", 8)
    assert found == [] and total == 0  # nor are they counted as candidates (the TUI and --json say how many)


def test_a_dense_answer_standing_out_from_the_background_is_kept_when_no_word_matches(engine: Engine) -> None:
    """The same store, one note far closer than the rest: it alone is shown."""
    items = neighbours(engine, 25)
    cosines = {item: 0.33 - 0.005 * i for i, item in enumerate(items)}
    cosines[items[-1]] = 0.5
    assert shown(hybrid(engine, cosines), "graphql federation gateway") == [items[-1]]


def test_in_a_small_store_a_dense_answer_must_stand_out_from_the_floor(engine: Engine) -> None:
    """Too few notes to have a background: the floor is the background, and a dense-only answer stands STANDOUT
    above it (a small repository's project overview at 0.21 from "zzzz nonexistent topic" is no answer)."""
    items = neighbours(engine, 3)
    cosines = {items[0]: 0.35, items[1]: 0.27, items[2]: retrieval.DENSE_FLOOR + 0.01}
    assert shown(hybrid(engine, cosines), "event streaming choice") == [items[0]]
    assert shown(hybrid(engine, {items[1]: 0.27, items[2]: 0.21}), "zzzz nonexistent topic") == []


def test_the_background_counts_neighbours_under_the_floor(engine: Engine) -> None:
    """Twenty-five neighbours, three just over the floor and the rest under it (a 1,000-note store's answer to
    "zzzz nonexistent topic"): fewer than twenty pass the floor, so the floor is the background, and the three
    nearest strangers are not answers."""
    items = neighbours(engine, 25)
    cosines = {item: (0.204 if i < 3 else 0.19 - 0.002 * i) for i, item in enumerate(items)}
    assert shown(hybrid(engine, cosines), "zzzz nonexistent topic") == []


def test_a_lexical_candidate_beyond_the_dense_top_k_still_gets_its_similarity(engine: Engine) -> None:
    """Similarity is a feature of every lexical candidate, not only of those among the k nearest: on a store with
    many notes near the topic, which match just made the dense top k is noise, and one that just missed it must not
    lose its whole lift to one that made it."""
    near = engine.note("insight", "the cache warmup job primes the product pages").item_id
    missed = engine.note("insight", "the cache warmup job primes the search pages").item_id
    fillers = [engine.note("insight", f"tenant {i} owns region {i}").item_id for i in range(45)]
    cosines = {near: 0.95, missed: 0.85, **{item: 0.9 for item in fillers}}
    _, _, ranking = surfaces.rank_pool(hybrid(engine, cosines), "cache warmup", 8)
    by_id = {c.id: c for c in ranking.top(len(ranking))}
    assert by_id[missed].dense == 0.85  # the dense top 40 holds `near` and 39 fillers, not `missed`
    assert [c.id for c in ranking.top(2)] == [near, missed]
