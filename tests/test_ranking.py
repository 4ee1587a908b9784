"""Ranking causes from the ranking issue: each test pins one cause with a query and the rank it must give."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cortex_engine.engine import Engine
from cortex_engine.query import surfaces
from cortex_engine.query.retrieval import CHECK_BATCH
from cortex_engine.scope.freshness import Validation, Validator
from cortex_engine.store.database import scope_id

from .conftest import GIT_ENV, Clock, Repo
from .test_cli import cortex


def _subjects(engine: Engine, topic: str) -> list[str | None]:
    return [item.subject for item in engine.recall(topic).items]


def test_meaningful_words_are_not_stop_words(engine: Engine, clock: Clock) -> None:
    """`implement` is searched: of three pager notes, the one that says "implement streaming pager" comes first,
    though the other two are newer (the old stop list dropped `implement` and recency chose)."""
    engine.note("decision", "implement streaming pager", "pager a")
    clock.advance(days=20)
    engine.note("decision", "streaming pager flushes on resize", "pager b")
    clock.advance(days=20)
    engine.note("decision", "pager streaming mode for logs", "pager c")
    assert _subjects(engine, "Implement streaming pager.")[0] == "pager a"


def test_identical_texts_stay_separate_items(engine: Engine, clock: Clock) -> None:
    """Two notes with the same words on different days are two memories, and recall shows both."""
    engine.note("insight", "the nightly export job timed out")
    clock.advance(days=3)
    engine.note("insight", "the nightly export job timed out")
    assert len(engine.recall("nightly export").items) == 2


def test_path_topic_matches_the_path_not_its_parts(engine: Engine) -> None:
    """`src/db/pool.ts timeout` finds the note about that file before notes that hold `src`, `db`, `pool`, `ts` and
    `timeout` apart (an OR of the path's parts ranked those first)."""
    for n in range(4):
        engine.note("insight", f"db timeout {n} raised for src/api/pool.ts and src/api/db.ts")
    engine.note("insight", "src/db/pool.ts waits forever when the pool is exhausted")
    top = engine.recall("src/db/pool.ts timeout").items[0]
    assert "src/db/pool.ts" in engine.conn.execute("SELECT text FROM memory_items WHERE id=?", (top.id,)).fetchone()[0]


def test_being_shown_cannot_keep_an_item_on_top(engine: Engine, clock: Clock) -> None:
    """An item recalled over and over (hot, many accesses) does not stay above a better match that is cold."""
    engine.note("insight", "cache eviction runs hourly from the scheduler")
    clock.advance(days=90)
    engine.note("insight", "cache eviction policy is least recently used")
    clock.advance(days=90)
    engine.refresh_tiers(force=True)
    weaker = engine.conn.execute("SELECT id FROM memory_items WHERE text LIKE '%hourly%'").fetchone()[0]
    engine.conn.execute(
        "UPDATE memory_items SET access_count=200, state='hot', last_accessed_at=? WHERE id=?", (engine.now(), weaker)
    )
    engine.conn.commit()
    assert engine.recall("cache eviction policy nightly budget", book=False).items[0].id != weaker


def _bulk(engine: Engine, count: int, tag: str) -> None:
    """`count` newer warm items inserted as rows (fast), so the note under test is not among the newest 500."""
    now = engine.now()
    engine.conn.executemany(
        "INSERT INTO memory_items(id, scope_type, scope_id, kind, subject, text, state, importance, created_at) "
        "VALUES (?, 'branch', ?, 'note:insight', NULL, ?, 'warm', 0.7, ?)",
        [
            (f"bulk:{tag}:{n}", scope_id(engine.conn, engine.scope.key), f"insight: filler {tag} {n}", now)
            for n in range(count)
        ],
    )
    engine.conn.commit()


def _state(engine: Engine, text: str) -> str:
    return engine.conn.execute("SELECT state FROM memory_items WHERE text LIKE ?", (f"%{text}%",)).fetchone()[0]


def test_tiers_follow_the_data_not_the_newest_500(engine: Engine, clock: Clock) -> None:
    """A note with 600 newer items above it still cools when its age says so (the refresh took the newest 500)."""
    engine.note("insight", "the gateway router drops idle sockets")
    clock.advance(days=1)
    _bulk(engine, 600, "a")
    clock.advance(days=120)
    engine.refresh_tiers(force=True)
    assert _state(engine, "gateway router") == "cold"


def test_a_step_crossed_since_the_last_refresh_is_derived(engine: Engine, clock: Clock) -> None:
    """After a refresh, an item whose age crosses a step is re-derived however many items were written since."""
    engine.note("insight", "the gateway router drops idle sockets")
    engine.refresh_tiers(force=True)
    clock.advance(days=100)
    _bulk(engine, 2100, "b")
    engine.refresh_tiers(force=True)
    assert _state(engine, "gateway router") == "cold"


def test_recall_limit_caps_the_list(repo: Repo, engine: Engine) -> None:
    """`cortex recall --limit 5` returns five of twelve matches; without it all twelve fit the budget and show."""
    for n in range(12):
        engine.note("insight", f"the parser rejects input case {n}")
    engine.close()
    capped = json.loads(cortex(repo.path, "recall", "parser", "--limit", "5", "--json").out)
    assert len(capped["items"]) == 5 and capped["tokens"] <= capped["budget"]
    assert len(json.loads(cortex(repo.path, "recall", "parser", "--json").out)["items"]) == 12


def test_default_recall_fills_its_budget_past_eight(engine: Engine) -> None:
    """Sixty short matches: the default recall shows items until the next line would overrun 600 tokens (it used to
    stop at eight, about 200 tokens), says how many more matched, and its first eight are `--limit 8`'s."""
    for n in range(60):
        engine.note("insight", f"the parser rejects input case {n}")
    full = engine.recall("parser rejects input", book=False)
    assert 8 < len(full.items) < 40
    assert full.tokens <= full.budget < full.tokens + 30  # a line (about 25 tokens here) would overrun it
    assert "more matches trimmed" in full.text.splitlines()[-1]
    assert [i.id for i in full.items[:8]] == [
        i.id for i in engine.recall("parser rejects input", book=False, limit=8).items
    ]


def test_recall_judges_only_the_references_it_shows(
    engine: Engine, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forty matches that each name a file: a 120-token recall shows a few and judges little more than the first
    depth it renders, not all forty of the candidate pool (the freshness check is what a deeper list costs)."""
    for n in range(40):
        repo.write(f"src/parser_{n}.py")
        engine.note("insight", f"the parser in src/parser_{n}.py rejects input case {n}")
    judged: list[str] = []
    real = Validator.validate_many

    def counting(self: Validator, items: list[tuple[str, str]]) -> dict[str, Validation]:
        judged.extend(item_id for item_id, _ in items)
        return real(self, items)

    monkeypatch.setattr(Validator, "validate_many", counting)
    shown = engine.recall("parser rejects input", budget=120, book=False)
    assert 1 <= len(shown.items) < surfaces.RECALL_LIMIT
    assert len(judged) <= surfaces.RECALL_LIMIT + CHECK_BATCH < 40  # the first depth rendered, and one batch more


def test_a_pool_of_stale_references_is_judged_in_growing_batches(
    engine: Engine, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forty matches naming files the checkout lacks: each judged one falls below every candidate still waiting, so
    settling the top judges the whole pool; batches that settle nothing grow, so that takes three batches (8, 16,
    16), not five, and the order is unchanged (`test_lazy_ranking_orders_as_judging_everything`)."""
    for n in range(40):
        engine.note("insight", f"the parser in src/gone_{n}.py rejects input case {n}")
    batches: list[int] = []
    real = Validator.validate_many

    def counting(self: Validator, items: list[tuple[str, str]]) -> dict[str, Validation]:
        if items:  # seating asks for the replacements of superseded notes too (none here)
            batches.append(len(items))
        return real(self, items)

    monkeypatch.setattr(Validator, "validate_many", counting)
    shown = engine.recall("parser rejects input", book=False, limit=8)
    assert len(shown.items) == 8 and all("stale" in " ".join(i.labels) for i in shown.items)
    assert batches == [CHECK_BATCH, 2 * CHECK_BATCH, 40 - 3 * CHECK_BATCH]


def test_lazy_ranking_orders_as_judging_everything(engine: Engine, repo: Repo) -> None:
    """The best n of a lazily judged ranking are the first n of the fully judged one, for every n: candidates whose
    references are missing, moved or fresh sit among ones without references."""
    for n in range(30):
        name = f"src/queue_{n}.py"
        repo.write(name)
        engine.note("insight", f"queue worker {n} retries" + (f" in {name}" if n % 3 else ""))
    repo.commit("files")
    for n in range(1, 30, 4):
        repo.path.joinpath(f"src/queue_{n}.py").unlink()
    ctx = engine._context()
    _, _, full = surfaces.rank_pool(ctx, "queue worker retries", 50)
    everything = [c.id for c in full.top(len(full))]
    assert len(everything) == 30 and len({c.truth for c in full.top(30)}) >= 3
    for n in range(1, 31):
        _, _, lazy = surfaces.rank_pool(engine._context(), "queue worker retries", 50)
        assert [c.id for c in lazy.top(n)] == everything[:n]


def test_matches_out_of_scope_cannot_crowd_the_pool(engine: Engine) -> None:
    """Two hundred stronger matches on another branch and archived here fill the first, unfiltered ranking many times
    over: recall still finds the three weaker matches of this scope, and only those."""
    now = engine.now()
    here, elsewhere = scope_id(engine.conn, engine.scope.key), scope_id(engine.conn, "branch:elsewhere")
    engine.conn.executemany(
        "INSERT INTO memory_items(id, scope_type, scope_id, kind, subject, text, state, importance, created_at) "
        "VALUES (?, 'branch', ?, 'note:insight', 'parser', ?, ?, 0.7, ?)",
        [
            (
                f"bulk:{n}",
                elsewhere if n % 2 else here,
                "parser parser rejects input",
                "warm" if n % 2 else "archived",
                now,
            )
            for n in range(200)
        ],
    )
    engine.conn.executemany(  # important items that do not match: the substring fallback would see only these
        "INSERT INTO memory_items(id, scope_type, scope_id, kind, subject, text, state, importance, created_at) "
        "VALUES (?, 'branch', ?, 'note:insight', NULL, ?, 'warm', 0.95, ?)",
        [(f"filler:{n}", here, f"unrelated filler {n}", now) for n in range(40)],
    )
    engine.conn.commit()
    mine = {engine.note("insight", f"the parser is slow on case {n}").item_id for n in range(3)}
    assert {item.id for item in engine.recall("parser rejects input", book=False).items} == mine


def test_term_counts_are_read_once_per_store_state(engine: Engine) -> None:
    """A warm engine weighs a topic's terms by counts it read at this store state: recalling the same topic again
    evaluates no term a second time (a path phrase is most of a recall's SQL), and a write reads them anew."""
    engine.note("insight", "the pool in src/db/pool.py times out after five seconds")
    statements: list[str] = []
    engine.conn.set_trace_callback(statements.append)
    try:
        counts = []
        for write in (False, False, True):
            if write:
                engine.note("insight", "another note about src/db/pool.py")
            statements.clear()
            engine.recall("src/db/pool.py timeout", book=False)
            counts.append(sum("SELECT count(*) FROM memory_items_fts" in s for s in statements))
    finally:
        engine.conn.set_trace_callback(None)
    assert counts == [2, 0, 2]


STRONGER_ELSEWHERE = 300
"""Out-of-scope matches that outrank every match in scope: more than the first, unfiltered ranking keeps (160)."""


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """Built once: main holds two weak matches for "parser cache" and 200 more important items that do not match;
    branch `feature` holds STRONGER_ELSEWHERE items that match it far better."""
    from cortex_engine.store.database import transaction

    base = tmp_path_factory.mktemp("crowded")
    path = base / "repo"
    path.mkdir()
    for args in (("init", "-q", "-b", "main"), ("commit", "-q", "--allow-empty", "-m", "init")):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True, env={**os.environ, **GIT_ENV})
    with Engine(path, home=base / "home", clock=Clock()) as engine:
        own = [
            engine.note(
                "insight",
                f"the tokenizer pipeline rebuilds its parser cache on run {n} of every long "
                "session, which the profiler blamed for the slow start",
            ).item_id
            for n in (1, 2)
        ]
        feature = engine.scope.key.rsplit(":", 1)[0] + ":feature"
        with transaction(engine.conn):
            inside, outside = scope_id(engine.conn, engine.scope.key), scope_id(engine.conn, feature)
            engine.conn.executemany(
                "INSERT INTO memory_items(id, scope_type, scope_id, "
                "kind, subject, text, state, importance, created_at) "
                "VALUES (?, 'branch', ?, ?, ?, ?, 'hot', ?, '2026-08-02T17:00:00.000Z')",
                [
                    *(
                        (f"far-{n}", outside, "note:decision", "parser cache", f"parser cache parser cache ({n})", 0.9)
                        for n in range(STRONGER_ELSEWHERE)
                    ),
                    *(
                        (f"near-{n}", inside, "note:decision", f"queue {n}", f"use a bounded queue for job {n}", 1.0)
                        for n in range(200)
                    ),
                ],
            )
    return path, base / "home", own


def test_recall_finds_its_own_matches_under_hundreds_of_stronger_ones_elsewhere(crowded) -> None:  # noqa: ANN001
    """Every one of the first ranking's 160 best matches is on another branch; the statement that
    filters by scope as it ranks must still find main's own two (and only main's)."""
    path, home, own = crowded
    with Engine(path, home=home, clock=Clock()) as engine:
        surface = engine.recall("parser cache", book=False)
    assert sorted(item.id for item in surface.items) == sorted(own)
