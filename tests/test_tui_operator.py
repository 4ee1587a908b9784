"""Operator requests of issue 17 (part 1), driven by keys: narrowing the memory table by label and text, sorting it,
the marker on contests and stale references that arrived live, and the Activity drill-down.

Each test seeds its own demo store, runs the app headless with a frozen clock (see `test_tui_behaviour.drive`), and
checks what the screen's widgets hold after the keys.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_tui_behaviour import demo, drive, engine_for  # noqa: F401 - `demo` is a fixture
from .test_tui_snapshots import settle

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def _titles(app) -> list[str]:  # noqa: ANN001
    from cortex_tui.widgets.memory_browser import MemoryBrowser

    return [row.title for row in app.screen.query_one(MemoryBrowser).rows.values()]


def test_memory_table_narrows_by_label_and_text_and_sorts(demo: Path) -> None:  # noqa: F811
    """`l` walks the label filters, `f` types a literal text filter (letters typed there are text, not keys), `o` and
    `O` and a header click sort; every page agrees with the engine's listing under the same filters."""
    from textual.widgets import DataTable
    from textual.widgets.data_table import ColumnKey

    from cortex_tui.widgets.memory_browser import MemoryBrowser

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("2")
        await settle(pilot)
        browser = app.screen.query_one(MemoryBrowser)
        everything = len(browser.rows)
        seen: dict[str, set[tuple[str, ...]]] = {}
        for _ in range(4):
            await pilot.press("l")
            await settle(pilot)
            seen[str(browser.label)] = {row.labels for row in browser.rows.values()}
        assert seen["contested"] == {("contested",)} and len(browser.rows) == 1  # superseded, after contested
        assert all(any(label.startswith("stale:") for label in labels) for labels in seen["stale"]) and seen["stale"]
        assert seen["drifted"] == set()
        assert _titles(app) == ["queue engine"]
        await pilot.press("l")
        await settle(pilot)
        assert browser.label is None and len(browser.rows) == everything

        await pilot.press("f", *"spool", "e", "d", "enter")  # `e` and `d` are text here, never edit or delete
        await settle(pilot)
        assert browser.text == "spooled" and browser.rows == {}
        assert not notes  # no dialog opened, nothing announced
        await pilot.press("f", *"spool", "enter")  # `f` selects the old text: typing replaces it
        await settle(pilot)
        with engine_for(demo) as engine:
            listed = engine.list_memory(scopes=engine.scope_keys, text="spool", limit=200)
            by_subject = engine.list_memory(scopes=engine.scope_keys, text="spool", sort="subject", limit=200)
            reversed_subject = engine.list_memory(scopes=engine.scope_keys, text="spool", sort="subject", reverse=True,
                                                  limit=200)
        assert list(browser.rows) == [item["id"] for item in listed.items] and browser.rows
        assert app.focused is browser.query_one("#memory-table")

        await pilot.press("o")  # Age → Subject, the next sortable column to its right
        await settle(pilot)
        assert browser.sort == ("subject", False) and list(browser.rows) == [i["id"] for i in by_subject.items]
        table = browser.query_one("#memory-table", DataTable)
        assert str(table.columns[ColumnKey("Subject")].label) == "Subject ▾"
        await pilot.press("O")
        await settle(pilot)
        assert browser.sort == ("subject", True) and list(browser.rows) == [i["id"] for i in reversed_subject.items]
        assert list(browser.rows) != [i["id"] for i in by_subject.items]
        assert str(table.columns[ColumnKey("Subject")].label) == "Subject ▴"
        table.post_message(DataTable.HeaderSelected(table, ColumnKey("Kind"), 0, table.columns[ColumnKey("Kind")].label))
        await settle(pilot)
        assert browser.sort == ("kind", False)
        kinds = [table.get_row(key)[0].plain for key in browser.rows]
        assert kinds == sorted(kinds)

    drive(demo, steps)


def test_a_search_hit_clears_label_text_and_sort(demo: Path) -> None:  # noqa: F811
    """Opening a search hit shows it on whichever page holds it: a filter that hides it is cleared first."""
    from cortex_tui.widgets.memory_browser import MemoryBrowser

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("2", "l")
        await settle(pilot)
        browser = app.screen.query_one(MemoryBrowser)
        await pilot.press("o")
        await settle(pilot)
        hidden = next(item_id for item_id in _ids_of(demo, "queue engine") if item_id not in browser.rows)
        browser.reveal(hidden)
        await settle(pilot)
        assert (browser.label, browser.text, browser.sort) == (None, "", ("created", False))
        assert browser.highlighted_id() == hidden

    drive(demo, steps)


def _ids_of(repo: Path, subject: str) -> list[str]:
    with engine_for(repo) as engine:
        return [str(item["id"]) for item in engine.list_memory(limit=200).items if item["subject"] == subject]
