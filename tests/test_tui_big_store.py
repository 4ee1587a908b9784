"""The operator TUI on a 10,000-item store: startup, paging by key to the oldest page, and search.

The store is built once per session, fast: two notes through the engine (an open contest), then 10,000 command
runs, failures and insights written in one transaction, as capture leaves them (no note behind them). Everything is
deterministic (seeded ids, fixed timestamps, frozen clock, no live watcher), so the pictures are stable; the
behaviour test checks what the pictures cannot: where each page starts, and that End and Home land on the oldest
and the newest item.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from .test_tui_snapshots import GIT_ENV, NOW, NOW_ISO, environment, press, seeded_ids, settle

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

ITEMS = 10_000
"""Memory items written in bulk (the two notes and their items come on top)."""
AREAS = ("ledger", "spool", "capture", "render", "search", "hooks", "scope", "budget")


@dataclass(frozen=True)
class BigStore:
    """A HOME holding one repository whose store has ITEMS + 2 memory items."""

    home: Path
    repo: Path

    def env(self) -> dict[str, str]:
        """The environment the store is seen with (paths print as ~/…)."""
        return {"HOME": str(self.home), "CORTEX_HOME": str(self.home / ".cortex"), "CORTEX_NOW": NOW_ISO, **GIT_ENV}


def _bulk_rows(scope_type: str, scope: int) -> Iterator[tuple[object, ...]]:
    """ITEMS memory items, one a minute going back from NOW, oldest last; kinds and tiers in a fixed rotation."""
    tiers = ("hot", "warm", "warm", "cold", "archived")
    for n in range(ITEMS):
        area = AREAS[n % len(AREAS)]
        created = (NOW - timedelta(minutes=n + 1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        if n % 3 == 0:
            kind, text = "command_run", f"python -m pytest tests/test_{area}.py -q → exit 0 (run {n})"
        elif n % 3 == 1:
            kind, text = "episode:command_failure", f"make {area} failed: exit 2 after {n % 60} s (run {n})"
        else:
            kind, text = "note:insight", f"insight: the {area} path is hot under load; batch it (observation {n})"
        yield (f"big-{n:05d}", scope_type, scope, kind, text, tiers[n % len(tiers)], created)


def build_big_store(base: Path) -> BigStore:
    """The repository, an open contest through the engine, and ITEMS items in one transaction."""
    from cortex_engine.engine import Engine
    from cortex_engine.store.database import scope_id, transaction

    home = (base / "home").resolve()
    store = BigStore(home, home / "big-service")
    store.repo.mkdir(parents=True)
    (store.repo / "README.md").write_text("# big service\n")
    for args in (("init", "-q", "-b", "main"), ("add", "."), ("commit", "-q", "-m", "init")):
        subprocess.run(
            ["git", *args], cwd=store.repo, check=True, capture_output=True, env={**os.environ, **store.env()}
        )
    with environment(store.env()), seeded_ids(17), Engine(store.repo, clock=lambda: NOW) as engine:
        engine.note("decision", "flush the spool at every Stop hook", "spool flush policy")
        engine.note("decision", "do not flush the spool at every Stop hook", "spool flush policy")
        with transaction(engine.conn):
            engine.conn.executemany(
                "INSERT INTO memory_items(id, scope_type, scope_id, kind, text, state, importance, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, 0.5, ?)",
                _bulk_rows(engine.scope.type, scope_id(engine.conn, engine.scope.key)),
            )
        assert engine.list_memory(limit=1).total == ITEMS + 2
    return store


@pytest.fixture(scope="session")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> BigStore:
    """Built once: every test here only reads it."""
    return build_big_store(tmp_path_factory.mktemp("tui-big"))


@pytest.fixture
def seen_big(big_store: BigStore, monkeypatch: pytest.MonkeyPatch) -> BigStore:
    """Run with the store's HOME and CORTEX_HOME."""
    for key, value in big_store.env().items():
        monkeypatch.setenv(key, value)
    return big_store


def big_app(store: BigStore, **options: int):  # noqa: ANN201 - CortexApp, imported lazily
    """The app on the big store (frozen clock, no watcher); `options`: make_app's (a page size)."""
    from cortex_tui.app import make_app

    return make_app(
        store.repo, clock=lambda: NOW, home=store.home / ".cortex", user_home=store.home, live=False, **options
    )


async def _oldest_page(pilot) -> None:  # noqa: ANN001
    await press(pilot, "2", "end")


async def _search(pilot) -> None:  # noqa: ANN001
    from textual.widgets import Input

    await press(pilot, "slash")
    pilot.app.screen.query_one("#search-input", Input).value = "spool flush policy"
    await press(pilot, "enter")


def test_big_store_startup(snap_compare, seen_big: BigStore) -> None:
    """Startup on 10,002 items: the overview with its counts, the open contest and the brief."""
    assert snap_compare(big_app(seen_big), terminal_size=(120, 40), run_before=settle)


def test_big_store_oldest_page(snap_compare, seen_big: BigStore) -> None:
    """End on the Memory tab: the oldest page (9,803–10,002 of 10,002), its last row highlighted and inspected."""
    assert snap_compare(big_app(seen_big), terminal_size=(120, 40), run_before=_oldest_page)


def test_big_store_search(snap_compare, seen_big: BigStore) -> None:
    """Search among 10,002 items: the contest's two sides, ranked, as the agent's recall renders them."""
    assert snap_compare(big_app(seen_big), terminal_size=(120, 40), run_before=_search)


PAGE = 25
"""Rows a page lists in the paging test: keyed paging to the far end of 10,002 items costs the same at any page
size, and a short page draws a short table."""


def test_big_store_pages_by_key_to_either_end(seen_big: BigStore) -> None:
    """], [, End and Home move by key: each page starts where the last one ended, End shows the oldest item."""
    import asyncio

    from cortex_tui.widgets.memory_browser import MemoryBrowser

    seen: list[tuple[int, int, str | None]] = []

    async def run() -> None:
        app = big_app(seen_big, page_size=PAGE)
        async with app.run_test(size=(80, 24)) as pilot:  # the smallest supported: only positions are read
            await press(pilot, "2")
            browser = app.screen.query_one(MemoryBrowser)
            for keys in (
                (),
                ("right_square_bracket",),
                ("right_square_bracket",),
                ("left_square_bracket",),
                ("end",),
                ("left_square_bracket",),
                ("home",),
            ):
                await press(pilot, *keys)
                seen.append((browser.position, len(browser.rows), browser.highlighted_id()))

    asyncio.run(run())
    total = ITEMS + 2
    assert [(position, count) for position, count, _ in seen] == [
        (0, PAGE),
        (PAGE, PAGE),
        (2 * PAGE, PAGE),
        (PAGE, PAGE),
        (total - PAGE, PAGE),
        (total - 2 * PAGE, PAGE),
        (0, PAGE),
    ]
    assert seen[4][2] == f"big-{ITEMS - 1:05d}"  # End: the oldest item, highlighted
    assert seen[6][2] != seen[4][2] and seen[0][2] == seen[6][2]  # Home: back on the newest
