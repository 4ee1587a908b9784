"""The rules of tier refreshing and reinforcement (found by mutation testing of `memory/tiers.py`).

`refresh` re-derives only the items whose tier can have changed: those whose age or last read crossed a step
of `hotness` since the last refresh, and the rows past its backfill cursor. To see which items a refresh
re-derived, the tests give items a wrong tier first: a refresh that re-derives an item corrects it, one that
does not leaves it wrong. `reinforce` books a use of what a surface showed, for live items only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from cortex_engine.base.clock import iso
from cortex_engine.engine import Engine
from cortex_engine.memory import tiers
from cortex_engine.memory.items import ItemFacts, derive_state

from .conftest import Clock, Repo

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)


@dataclass(frozen=True)
class Shown:
    """An item as a surface showed it."""

    id: str
    labels: tuple[str, ...] = ()


def refresh(engine: Engine, now: datetime, *, force: bool = False) -> int:
    """`tiers.refresh` of the engine's scope at `now`."""
    return tiers.refresh(engine.conn, engine.scope.key, engine.scope_keys, now, force=force)


def state(engine: Engine, item_id: str) -> str:
    """The stored tier of an item."""
    return str(engine.conn.execute("SELECT state FROM memory_items WHERE id=?", (item_id,)).fetchone()[0])


def spoil(engine: Engine, item_id: str, now: datetime) -> str:
    """Give an item a tier its facts do not earn at `now`, so a refresh that re-derives it shows; returns it."""
    found = engine.conn.execute(
        "SELECT kind, text, state, importance, access_count, last_accessed_at, created_at FROM memory_items WHERE id=?",
        (item_id,),
    ).fetchone()
    wrong = "hot" if derive_state(ItemFacts(*found), now) == "cold" else "cold"
    engine.conn.execute("UPDATE memory_items SET state=? WHERE id=?", (wrong, item_id))
    return wrong


def row(engine: Engine, item_id: str) -> tuple[int, str | None, str]:
    """(access count, last access, tier) of an item."""
    found = engine.conn.execute(
        "SELECT access_count, last_accessed_at, state FROM memory_items WHERE id=?", (item_id,)
    ).fetchone()
    return found[0], found[1], found[2]


def stamp(engine: Engine) -> str | None:
    """When the engine's scope was last refreshed, as the store records it."""
    found = engine.conn.execute("SELECT value FROM meta WHERE key=?", (f"tiers_derived:{engine.scope.key}",)).fetchone()
    return None if found is None else str(found[0])


def test_a_refresh_within_ten_minutes_of_the_last_does_nothing_unless_forced(engine: Engine, clock: Clock) -> None:
    start = clock.now
    refresh(engine, start, force=True)
    assert stamp(engine) == iso(start)
    assert refresh(engine, start + timedelta(seconds=599)) == 0
    assert stamp(engine) == iso(start)
    refresh(engine, start + timedelta(seconds=599), force=True)
    assert stamp(engine) == iso(start + timedelta(seconds=599))
    refresh(engine, start + timedelta(seconds=1199))
    assert stamp(engine) == iso(start + timedelta(seconds=1199))  # exactly 600 seconds after: it runs
    refresh(engine, start)  # a clock moved back: it runs
    assert stamp(engine) == iso(start)


def test_a_refresh_corrects_the_items_whose_age_crossed_a_step(engine: Engine, clock: Clock) -> None:
    note = engine.note("insight", "the cache warms lazily")
    created = clock.now
    refresh(engine, created + 14 * DAY - HOUR, force=True)  # the cursor is past every item now
    wrong = spoil(engine, note.item_id, created + 14 * DAY)
    assert refresh(engine, created + 14 * DAY - HOUR / 2, force=True) == 0
    assert state(engine, note.item_id) == wrong  # no step crossed: left as it was
    assert refresh(engine, created + 14 * DAY, force=True) == 1  # the 14-day step, reached exactly
    assert state(engine, note.item_id) != wrong


def test_an_age_step_reached_exactly_at_the_last_refresh_is_not_crossed_again(engine: Engine, clock: Clock) -> None:
    note = engine.note("insight", "the cache warms lazily")
    created = clock.now
    refresh(engine, created + 14 * DAY, force=True)
    wrong = spoil(engine, note.item_id, created + 14 * DAY + HOUR)
    assert refresh(engine, created + 14 * DAY + HOUR, force=True) == 0
    assert state(engine, note.item_id) == wrong
    assert refresh(engine, created + 30 * DAY, force=True) == 1  # the 30-day step of insights
    assert state(engine, note.item_id) != wrong


def test_a_refresh_corrects_the_items_whose_last_read_crossed_a_step(engine: Engine, clock: Clock) -> None:
    note = engine.note("insight", "the tokenizer stems queries too")
    clock.advance(hours=2)  # read two hours after it was written: no age step falls in the windows below
    engine.recall("tokenizer stems")
    read = clock.now
    assert row(engine, note.item_id)[2] == "hot"
    refresh(engine, read + DAY - HOUR, force=True)
    wrong = spoil(engine, note.item_id, read + DAY)
    assert refresh(engine, read + DAY - HOUR / 2, force=True) == 0
    assert state(engine, note.item_id) == wrong
    assert refresh(engine, read + DAY, force=True) == 1  # a day after the read, exactly
    assert state(engine, note.item_id) != wrong
    wrong = spoil(engine, note.item_id, read + DAY + HOUR)
    assert refresh(engine, read + DAY + HOUR, force=True) == 0  # that step is behind it now
    assert state(engine, note.item_id) == wrong


def test_the_backfill_takes_the_rows_past_its_cursor_and_keeps_the_cursor(engine: Engine, clock: Clock) -> None:
    old = engine.note("insight", "written before the refresh")
    refresh(engine, clock.now, force=True)
    new = engine.note("insight", "written after the refresh")
    old_wrong = spoil(engine, old.item_id, clock.now)
    new_wrong = spoil(engine, new.item_id, clock.now)
    assert refresh(engine, clock.now, force=True) == 1
    assert state(engine, old.item_id) == old_wrong and state(engine, new.item_id) != new_wrong
    new_wrong = spoil(engine, new.item_id, clock.now)
    assert refresh(engine, clock.now, force=True) == 0  # nothing new: the cursor stays where it was
    assert (state(engine, old.item_id), state(engine, new.item_id)) == (old_wrong, new_wrong)


def test_a_first_refresh_derives_every_item_of_the_scope(engine: Engine, clock: Clock) -> None:
    a = engine.note("insight", "first")
    b = engine.note("decision", "second", "second")
    engine.conn.execute("DELETE FROM meta WHERE key LIKE 'tiers_%'")
    wrong = (spoil(engine, a.item_id, clock.now), spoil(engine, b.item_id, clock.now))
    assert refresh(engine, clock.now) == 2
    assert state(engine, a.item_id) != wrong[0] and state(engine, b.item_id) != wrong[1]


def test_a_refresh_leaves_other_scopes_alone(repo: Repo, make_engine: Callable[..., Engine], clock: Clock) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    feature = make_engine(repo.path)
    theirs = feature.note("insight", "on the feature branch")
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)
    mine = main.note("insight", "on main")
    main.conn.execute("DELETE FROM meta WHERE key LIKE 'tiers_%'")
    wrong = (spoil(main, theirs.item_id, clock.now), spoil(main, mine.item_id, clock.now))
    assert refresh(main, clock.now) == 1
    assert state(main, theirs.item_id) == wrong[0] and state(main, mine.item_id) != wrong[1]


def test_a_read_books_a_use_of_live_items_only(engine: Engine, clock: Clock) -> None:
    live = engine.note("insight", "live insight")
    pinned = engine.note("insight", "pinned insight")
    archived = engine.note("insight", "archived insight")
    worded = engine.note("insight", "a note that says\nStatus: resolved")
    old = engine.note("decision", "use rabbitmq", "queue")
    engine.note("decision", "use kafka", "queue")  # supersedes `old`
    done = engine.note("blocker", "the build is red", "build")
    engine.resolve(done.id)
    stale = engine.note("insight", "about a missing file")
    for item, tier in ((pinned, "pinned"), (archived, "archived"), (live, "cold"), (worded, "cold")):
        engine.conn.execute("UPDATE memory_items SET state=? WHERE id=?", (tier, item.item_id))
    before = {i: row(engine, i) for i in (old.item_id, done.item_id, stale.item_id)}
    now = iso(clock.now + HOUR)
    shown = [
        Shown(i)
        for i in (
            live.item_id,
            pinned.item_id,
            archived.item_id,
            worded.item_id,
            old.item_id,
            done.item_id,
            "no-such-item",
        )
    ]
    shown += [Shown(stale.item_id, ("stale: missing a.py",)), Shown(live.item_id, ("moved: a.py -> b.py",))]
    tiers.reinforce(engine.conn, shown, now)
    assert row(engine, live.item_id) == (2, now, "hot")
    assert row(engine, pinned.item_id) == (1, now, "pinned")
    assert row(engine, archived.item_id) == (1, now, "archived")
    assert row(engine, worded.item_id) == (1, now, "hot")  # its words are not its status
    assert {i: row(engine, i) for i in before} == before


def test_nothing_shown_books_nothing(engine: Engine) -> None:
    note = engine.note("insight", "unread")
    before = row(engine, note.item_id)
    tiers.reinforce(engine.conn, [], iso(engine.clock()))
    assert row(engine, note.item_id) == before


def test_a_refresh_derives_the_tier_from_every_column_of_the_item(engine: Engine, clock: Clock) -> None:
    note = engine.note("decision", "use wal mode", "journal")
    # decision 3.4 + created 100 days ago -1.6 + read 20 days ago 0.7 + two uses 1.7 = 4.2: warm, and cold
    # without the last read (3.5), without the uses (2.5) or with the importance (+4.5: hot)
    engine.conn.execute(
        "UPDATE memory_items SET importance=0, access_count=2, last_accessed_at=?, created_at=?, state='cold' "
        "WHERE id=?",
        (iso(clock.now - 20 * DAY), iso(clock.now - 100 * DAY), note.item_id),
    )
    engine.conn.execute("DELETE FROM meta WHERE key LIKE 'tiers_%'")
    assert refresh(engine, clock.now) == 1
    assert state(engine, note.item_id) == "warm"
