"""`cortex gc`: dry run by default, --apply prunes, notes/snapshots/sessions/summaries never go."""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta
from pathlib import Path

import pytest

from cortex_engine.base.clock import iso
from cortex_engine.engine import Engine
from cortex_engine.store.database import scope_id

from .conftest import Clock, Repo
from .install_helpers import cortex

TABLES = ("notes", "sessions", "episodes", "memory_items", "events", "retrieval_log", "spool_seen", "token_ledger")


def counts(engine: Engine) -> dict[str, int]:
    return {t: engine.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}


@pytest.fixture
def aged(repo: Repo, make_engine, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> Engine:
    """A store with a summarized session 40 days old (notes, events, a recall), then a fresh session."""
    monkeypatch.setenv("CORTEX_GC_AUTO", "0")
    monkeypatch.setenv("CORTEX_GC_RETRIEVAL_LOG_KEEP", "1")
    engine = make_engine(repo.path)
    engine.start_session("host-old")
    engine.note("decision", "serve the api from src/api.py", "api serving")
    engine.note("insight", "the build cache lives in .cache")
    engine.recall("api serving")
    engine.recall("build cache")
    session = engine.current_session()["id"]
    with engine.conn:
        engine.conn.execute("BEGIN")
        for n in range(3):
            engine.conn.execute(
                "INSERT INTO events(id, session_id, scope_key, timestamp, type, target) VALUES (?,?,?,?,?,?)",
                (f"ev{n}", session, engine.scope.key, engine.now(), "read", "README.md"),
            )
        engine.conn.execute("INSERT INTO spool_seen(key, seen_at) VALUES ('PostToolUse:toolu_old', ?)", (engine.now(),))
    clock.advance(days=40)
    engine.start_session("host-new")  # ends and summarizes the old session (ended 40 days after it began)
    assert engine.conn.execute("SELECT COUNT(*) FROM episodes WHERE kind='session_summary'").fetchone()[0] == 1
    clock.advance(days=29)
    assert engine.gc().rules["events"].candidates == 0  # ended 29 days ago: not yet
    clock.advance(days=2)
    return engine


def test_dry_run_counts_and_deletes_nothing(aged: Engine) -> None:
    before = counts(aged)
    report = aged.gc()
    assert report.dry_run is True
    assert (report.rules["events"].candidates, report.rules["events"].deleted) == (3, 0)
    assert report.rules["retrieval_log"].candidates == 1  # two old rows, the newest one is always kept
    assert report.rules["spool_seen"].candidates == 1
    assert counts(aged) == before
    assert aged.conn.execute("SELECT value FROM meta WHERE key='last_gc_at'").fetchone() is None


def test_apply_prunes_and_never_touches_notes_sessions_summaries_or_the_ledger(aged: Engine) -> None:
    before = counts(aged)
    recall = aged.recall("api serving")
    assert "serve the api" in recall.text
    report = aged.gc(apply=True)
    after = counts(aged)
    assert (
        report.rules["events"].deleted,
        report.rules["retrieval_log"].deleted,
        report.rules["spool_seen"].deleted,
    ) == (3, 2, 1)
    assert after["events"] == before["events"] - 3
    for table in ("notes", "sessions", "episodes", "memory_items"):
        assert (table, after[table]) == (table, before[table])
    assert after["token_ledger"] == before["token_ledger"] + 1  # the recall above, nothing pruned
    assert aged.conn.execute("SELECT value FROM meta WHERE key='last_gc_at'").fetchone()[0] == aged.now()
    again = aged.gc(apply=True)
    assert all(rule.candidates == 0 for name, rule in again.rules.items())


def test_archived_items_go_but_archived_notes_and_snapshots_stay(aged: Engine) -> None:
    old = iso(aged.clock() - timedelta(days=200))
    with aged.conn:
        aged.conn.execute("BEGIN")
        aged.conn.execute("UPDATE memory_items SET state='archived', access_count=0, created_at=?", (old,))
        aged.conn.execute(
            "INSERT INTO memory_items(id, scope_type, scope_id, kind, text, state, created_at) "
            "VALUES ('cmd-old', 'branch', ?, 'command_run', '[test] pytest (exit 0)', 'archived', ?)",
            (scope_id(aged.conn, aged.scope.key), old),
        )
    kinds_before = sorted(r[0] for r in aged.conn.execute("SELECT kind FROM memory_items"))
    report = aged.gc(apply=True)
    assert report.rules["archived_memory_items"].deleted == 1
    kinds_after = sorted(r[0] for r in aged.conn.execute("SELECT kind FROM memory_items"))
    assert "command_run" in kinds_before and "command_run" not in kinds_after
    assert [k for k in kinds_after if k.startswith("note:")] == ["note:decision", "note:insight"]
    assert "episode:session_summary" in kinds_after and "branch_snapshot" in kinds_after


def test_recent_and_unsummarized_events_stay(
    repo: Repo, make_engine, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Events of the active session, however old, are never candidates."""
    monkeypatch.setenv("CORTEX_GC_AUTO", "0")
    engine = make_engine(repo.path)
    engine.start_session("h")
    with engine.conn:
        engine.conn.execute("BEGIN")
        engine.conn.execute(
            "INSERT INTO events(id, session_id, scope_key, timestamp, type, target) VALUES "
            "('e1', ?, ?, ?, 'read', 'README.md')",
            (engine.current_session()["id"], engine.scope.key, engine.now()),
        )
    clock.advance(days=400)
    assert engine.gc(apply=True).rules["events"].deleted == 0
    assert engine.conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 1


def test_orphaned_runtime_files_older_than_a_day(aged: Engine, repo: Repo) -> None:
    """Unreferenced old blobs and empty old claims go; a referenced blob and a pending claim stay."""
    runtime = repo.path / ".cortex"
    day_ago = time.time() - 2 * 86400
    orphan, kept = runtime / "blobs" / "1-1-1.json", runtime / "blobs" / "2-2-2.json"
    empty_claim, pending_claim = runtime / "claims" / "001-1.jsonl", runtime / "claims" / "002-1.jsonl"
    orphan.write_text("{}")
    kept.write_text("{}")
    empty_claim.write_text("")
    pending_claim.write_text(json.dumps({"v": 1, "t": 1, "blob": kept.name}) + "\n")
    fresh = runtime / "blobs" / "3-3-3.json"
    fresh.write_text("{}")
    for path in (orphan, kept, empty_claim, pending_claim):
        os.utime(path, (day_ago, day_ago))
    dry = aged.gc()
    assert (dry.rules["orphaned_blobs"].candidates, dry.rules["empty_claims"].candidates) == (1, 1)
    assert orphan.exists() and empty_claim.exists()
    aged.gc(apply=True)
    assert (orphan.exists(), kept.exists(), fresh.exists(), empty_claim.exists(), pending_claim.exists()) == (
        False,
        True,
        True,
        False,
        True,
    )


def test_auto_runs_at_session_start_at_most_once_a_day(
    repo: Repo, make_engine, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CORTEX_GC_AUTO", raising=False)
    engine = make_engine(repo.path)
    last = lambda: engine.conn.execute("SELECT value FROM meta WHERE key='last_gc_at'").fetchone()  # noqa: E731
    engine.start_session("a")
    first = last()[0]
    assert first == engine.now()
    clock.advance(hours=3)
    engine.start_session("b")
    assert last()[0] == first
    clock.advance(hours=22)
    engine.start_session("c")
    assert last()[0] == engine.now() != first


def test_auto_can_be_turned_off(repo: Repo, make_engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORTEX_GC_AUTO", "0")
    engine = make_engine(repo.path)
    engine.start_session("a")
    assert engine.conn.execute("SELECT value FROM meta WHERE key='last_gc_at'").fetchone() is None


def test_cli_dry_run_then_apply(aged: Engine, repo: Repo, clock: Clock) -> None:
    """`cortex gc` reports; `--apply` prunes."""
    aged.close()
    now = {"CORTEX_NOW": iso(clock.now)}
    dry = cortex(repo.path, "gc", "--json", env=now)
    assert dry.code == 0 and dry.data()["dry_run"] is True and dry.data()["events"] == {"candidates": 3, "deleted": 0}
    text = cortex(repo.path, "gc", env=now)
    assert "dry run: nothing deleted" in text.out and "  events" in text.out and "never pruned" in text.out
    applied = cortex(repo.path, "gc", "--apply", "--json", env=now)
    assert applied.data()["events"] == {"candidates": 3, "deleted": 3}


def test_cli_without_a_store_creates_none(tmp_path: Path) -> None:
    """A directory with no store gets no store from gc."""
    plain = tmp_path / "plain"
    plain.mkdir()
    run = cortex(plain, "gc")
    assert (run.code, run.out) == (0, "No store for this directory yet; nothing to collect.\n")
    assert not (Path(os.environ["CORTEX_HOME"]) / "projects").exists()


def _notes_one_by_one(engine: Engine, count: int) -> None:
    for n in range(count):
        engine.note("insight", f"note {n}: the pool in src/db/pool.ts times out after {n} seconds of {n % 7} retries")


def test_apply_tidies_the_full_text_index_and_recall_is_unchanged(
    repo: Repo, make_engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Notes written one by one leave the full-text index in many segments (every query looks each term up in each);
    applying gc merges them level by level, in steps whose used-up pages the next step reuses, and every recall
    reads the same."""
    from cortex_engine.store import queries

    monkeypatch.setenv("CORTEX_GC_AUTO", "0")
    engine = make_engine(repo.path)
    _notes_one_by_one(engine, 120)
    topics = ("src/db/pool.ts timeout", "retries", "note 42")
    before = {t: engine.recall(t, book=False).text for t in topics}
    segments = queries.fulltext_segments(engine.conn)
    assert segments is not None and segments > 6
    pages = engine.conn.execute("PRAGMA page_count").fetchone()[0]

    dry = engine.gc()
    assert (dry.fulltext_segments, dry.fulltext_merged) == (segments, None)
    assert queries.fulltext_segments(engine.conn) == segments
    report = engine.gc(apply=True)

    assert report.fulltext_segments == segments and report.fulltext_merged is not None
    assert report.fulltext_merged <= 2
    assert report.to_dict()["fulltext_merged"] == report.fulltext_merged
    assert f"full-text index {segments} segments, merged into {report.fulltext_merged}" in report.render()
    assert {t: engine.recall(t, book=False).text for t in topics} == before
    # merged in one statement, the index would be written whole beside the old segments before they were freed
    assert engine.conn.execute("PRAGMA page_count").fetchone()[0] - pages <= queries.FULLTEXT_MERGE_STEP
    statements: list[str] = []
    engine.conn.set_trace_callback(statements.append)
    try:
        again = engine.gc(apply=True)
    finally:
        engine.conn.set_trace_callback(None)
    assert not [s for s in statements if "'usermerge'" in s and s.startswith("INSERT")]  # the setting is kept
    assert again.fulltext_merged == again.fulltext_segments == report.fulltext_merged  # nothing left to merge
    engine.conn.execute("INSERT INTO memory_items_fts(memory_items_fts) VALUES ('integrity-check')")  # raises if not


@pytest.mark.parametrize("auto", ["1", "0"])
def test_every_session_start_tidies_the_index_with_or_without_retention(
    repo: Repo, make_engine, clock: Clock, monkeypatch: pytest.MonkeyPatch, auto: str
) -> None:
    from cortex_engine.store import queries

    monkeypatch.setenv("CORTEX_GC_AUTO", auto)
    engine = make_engine(repo.path)
    engine.start_session("a")  # the day's retention run, when on
    for n in range(400):  # until FTS5's own merging leaves more than six segments
        engine.note("insight", f"note {n}: the pool in src/db/pool.ts times out after {n} seconds")
        segments = queries.fulltext_segments(engine.conn)
        if segments is not None and segments > 6:
            break
    assert segments is not None and segments > 6
    clock.advance(hours=1)
    engine.start_session("b")  # tidies first, then ends session a (its summary and snapshot add a segment or two)
    left = queries.fulltext_segments(engine.conn)
    assert left is not None and left <= 4 < segments


def test_a_tidy_stops_at_its_page_budget_and_goes_on_at_the_next(
    repo: Repo, make_engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cortex_engine.store import queries

    monkeypatch.setenv("CORTEX_GC_AUTO", "0")
    monkeypatch.setattr(queries, "FULLTEXT_MERGE_STEP", 1)
    engine = make_engine(repo.path)
    for n in range(60):
        engine.note("insight", f"entry {n} " + " ".join(f"word{n}x{k}" for k in range(40)))
    segments = queries.fulltext_segments(engine.conn)
    assert segments is not None and segments > 6
    left = queries.tidy_fulltext(engine.conn, 1, 0)
    assert left is not None and left > 2  # one page of merging leaves most segments where they were
    finished = queries.tidy_fulltext(engine.conn, 10_000, 0)
    assert finished is not None and finished <= 2
    engine.conn.execute("INSERT INTO memory_items_fts(memory_items_fts) VALUES ('integrity-check')")
