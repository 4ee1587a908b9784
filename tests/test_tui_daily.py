"""The operator's daily loop in the TUI: fixing a drifted or moved memory where it is shown, every key answering,
what the inspection and dialogs show (no stored trailers, no table names), and the layout at 80, 100 and 160."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_tui_behaviour import SMALL, demo, drive, engine_for  # noqa: F401 (demo: a fixture these tests take)
from .test_tui_snapshots import highlight, settle

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def _text(widget) -> str:  # noqa: ANN001 - a textual Static
    return str(widget.content)


def test_a_drifted_memory_shows_its_code_diff_and_n_reanchors_it(repo) -> None:  # noqa: ANN001 - conftest.Repo
    """The inspection shows the changed code as `inspect-memory` does; `n` re-anchors it (audited) and the label
    goes; pressed again, it says why it does not apply."""
    from textual.widgets import Static

    from cortex_tui.widgets.memory_browser import MemoryBrowser

    repo.write("src/spool.py", "def flush():\n    return 1\n\n\ndef other():\n    return 2\n")
    repo.commit("add the spool")
    with engine_for(repo.path) as engine:
        engine.note("decision", "flush() in src/spool.py runs at turn end", "spool flush")
    repo.write("src/spool.py", "def flush():\n    return 42\n\n\ndef other():\n    return 2\n")

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("2")
        await settle(pilot)
        browser = app.screen.query_one(MemoryBrowser)
        await highlight(pilot, "spool flush")
        [item_id] = [k for k, row in browser.rows.items() if row.title == "spool flush"]
        assert any(label.startswith("drifted") for label in browser.rows[item_id].labels)
        shown = _text(app.screen.query_one("#inspection-text", Static))
        assert "code" in shown and "drifted" in shown and "src/spool.py:flush" in shown
        assert "-    return 1" in shown and "+    return 42" in shown
        assert "n: re-anchor" in shown
        await pilot.press("n")
        await settle(pilot)
        assert any(title == "Re-anchored (audited)" for _, title, _ in notes), notes
        await highlight(pilot, "spool flush")
        assert not any(label.startswith("drifted") for label in browser.rows[item_id].labels)
        await pilot.press("n")
        await settle(pilot)
        assert notes[-1][1] == "Re-anchor memory" and "[drifted: …]" in notes[-1][2]

    drive(repo.path, steps, size=SMALL)
    with engine_for(repo.path) as engine:
        [item] = [i for i in engine.list_memory().items if i["subject"] == "spool flush"]
        assert [c["operation"] for c in engine.inspect_memory(str(item["id"])).corrections] == ["reanchor"]


def test_m_rewrites_a_moved_path_from_the_memory_tab_and_enter_in_the_resolve_field_never_closes_the_contest(
    demo: Path,  # noqa: F811
) -> None:
    """`l` reaches a `moved` filter that lists only moved memory; `m` on such a row rewrites its path (audited).

    In Resolve, empty, Enter says what the replacement field is for; with text, it moves to the button that writes
    it (Enter there replaces both sides). (One app does both: the moved note is not a side of the contest.)"""
    from textual.widgets import Button, Input, Select, Static

    from cortex_tui.dialogs.resolve_dialog import ResolveDialog
    from cortex_tui.widgets.memory_browser import MemoryBrowser

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("2")
        await settle(pilot)
        browser = app.screen.query_one(MemoryBrowser)
        for _ in range(6):  # every label, then all again: bounded
            await pilot.press("l")
            await settle(pilot)
            if browser.query_one("#label-filter", Select).value == "moved":
                break
        assert browser.query_one("#label-filter", Select).value == "moved"
        assert browser.rows and all(any(lb.startswith("moved") for lb in row.labels) for row in browser.rows.values())
        await highlight(pilot, "legacy login")
        await pilot.press("m")
        await settle(pilot)
        assert any(title == "Moved path rewritten (audited)" for _, title, _ in notes), notes

        await pilot.press("1")  # the contest is on the Overview
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ResolveDialog)
        dialog.query_one("#replacement", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert "Type the note that replaces" in _text(dialog.query_one("#resolve-error", Static))
        await pilot.press(*"flush at turn end only when the spool is large")
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is dialog and dialog.focused is dialog.query_one("#resolve-all", Button)
        assert "Enter again" in _text(dialog.query_one("#resolve-error", Static))
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, ResolveDialog)

    notes = drive(demo, steps, size=SMALL)
    with engine_for(demo) as engine:
        [item] = [i for i in engine.list_memory().items if i["subject"] == "legacy login"]
        assert "src/auth/login.py" in str(item["text"]) and "login_old.py" not in str(item["text"])
    assert any(title == "Contest resolved" for _, title, _ in notes)


def test_at_80_columns_the_demo_opens_unwarned_keys_say_why_and_dialogs_show_no_stored_form(
    demo: Path,  # noqa: F811
) -> None:
    """The demo's first screen says what the demo is (no warning the user cannot fix); the footer names ctrl+p on
    every tab, the Activity tab (its own `⏎ Session` key) included.

    On the Activity tab nothing is highlighted for a, m, n, Home and e: each says what it needs instead of nothing.

    A superseded decision: its text without `Status: superseded`, no `notes:` or `memory_corrections` anywhere;
    `y` copies the id the inspection shows, which `cortex inspect-memory` accepts.

    (One app at 80×24 walks the three: none of them writes, and the last two read text, not the layout.)"""

    from textual.widgets import Static

    from cortex_tui.widgets.notice_bar import NoticeBar

    from .test_cli import cortex

    shown: list[str] = []
    copied: list[str] = []
    seen: dict[str, str] = {}

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        for tab in ("1", "2", "3"):
            await pilot.press(tab)
            await settle(pilot)
            bar = app.screen.query_one(NoticeBar)
            assert "⚠" not in _text(bar) and "Demo" in _text(bar) and bar.has_class("-info"), tab
            assert app.screen.query(".-command-palette"), f"no palette hint in the footer at 80 columns ({tab})"
            shown.append(tab)

        # the Activity tab: no memory highlighted
        for key in ("a", "m", "n", "home", "e"):
            before = len(notes)
            await pilot.press(key)
            await settle(pilot)
            assert len(notes) == before + 1, (key, notes[before:])
            assert notes[-1][0] == "warning" and notes[-1][2], (key, notes[-1])

        app.copy_to_clipboard = copied.append
        await pilot.press("2")
        await settle(pilot)
        await highlight(pilot, "queue engine", label="superseded")
        seen["inspection"] = _text(app.screen.query_one("#inspection-text", Static))
        await pilot.press("y")
        await pilot.press("d")
        await settle(pilot)
        seen["delete"] = _text(app.screen.query_one("#delete-text", Static))
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        seen["edit"] = " ".join(_text(s) for s in app.screen.query(Static)) + app.screen.query_one("#edit-text").text
        await pilot.press("escape")

    drive(demo, steps, size=(80, 24))
    assert shown == ["1", "2", "3"]
    for name, text in seen.items():
        for stored in ("Status: ", "Conflict: ", "Subject: ", "notes:", "memory_corrections", "command_runs"):
            assert stored not in text, (name, stored, text)
    assert "superseded" in seen["inspection"] and "use rabbitmq" in seen["inspection"]
    [copy] = copied
    assert f"id         {copy}" in seen["inspection"]
    inspected = cortex(demo, "inspect-memory", copy)
    assert inspected.code == 0 and "use rabbitmq" in inspected.out


def test_the_spend_table_fits_at_100_and_the_memory_table_widens_at_160(demo: Path) -> None:  # noqa: F811
    """At 100 no channel line of the token table is wider than its pane (nothing wraps); at 160 the first line is
    wider than at 100 and every label tag fits its column."""
    import asyncio

    from textual.widgets import DataTable, Static
    from textual.widgets.data_table import ColumnKey

    from cortex_tui.app import make_app
    from cortex_tui.widgets.memory_browser import MemoryBrowser
    from cortex_tui.widgets.spend_pane import SpendPane

    from .test_tui_snapshots import NOW

    widths: dict[int, int] = {}

    async def run() -> None:
        app = make_app(demo, clock=lambda: NOW, live=False)
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            pane = app.screen.query_one(SpendPane)
            room = pane.content_size.width
            lines = _text(pane.query_one("#spend-text", Static)).splitlines()
            table = lines[lines.index(next(line for line in lines if line.startswith("channel"))) :]
            assert table and max(len(line) for line in table) <= room, (room, table)
            await pilot.press("2")
            for size in ((100, 30), (160, 45)):  # the same terminal, widened
                await pilot.resize_terminal(*size)
                await settle(pilot)
                browser = app.screen.query_one(MemoryBrowser)
                columns = browser.query_one("#memory-table", DataTable).columns
                widths[size[0]] = columns[ColumnKey("First line")].width
                rows = browser.rows.values()
                tags = max(len(" ".join(dict.fromkeys(lb.split(":")[0] for lb in r.labels))) for r in rows)
                assert columns[ColumnKey("Labels")].width >= tags, size

    asyncio.run(run())
    assert widths[160] >= widths[100] + 30, widths


def test_the_footer_keeps_the_palette_hint_whatever_keys_apply() -> None:
    """However many keys apply at once (a moved, drifted, corrected memory on a paged Memory tab with arrivals
    waiting), the footer leaves out keys, never the `^p palette` hint: at 80 columns it is what says that every
    action is one search away. The keys left out go in a stated order, then from the right."""
    from types import SimpleNamespace

    from cortex_tui.screens.main import FOOTER_YIELDS
    from cortex_tui.widgets.key_footer import fitted, key_width

    def key(display: str, description: str, action: str) -> SimpleNamespace:
        return SimpleNamespace(
            key_display=display, description=description, action=action, has_class=lambda name: False
        )

    keys = [
        key("⏎", "Session", "open_session"),
        key("c", "Resolve", "resolve"),
        key("e", "Edit", "edit"),
        key("d", "Delete", "delete"),
        key("/", "Search", "search"),
        key("f", "Filter", "filter_text"),
        key("s", "Scope", "cycle_scope"),
        key("v", "Validate", "revalidate"),
        key("m", "Fix path", "rewrite_moved"),
        key("r", "Reanchor", "reanchor"),
        key("a", "Audit", "audit"),
        key("i", "Inbox", "inbox"),
        key("n", "Next", "next_page"),
        key("?", "Help", "app.help"),
        key("q", "Quit", "app.quit"),
        key("1-3", "Tabs", "show_tab('overview')"),
    ]
    hint = SimpleNamespace(
        key_display="^p", description="palette", action=None, has_class=lambda name: name == "-command-palette"
    )
    for width in (60, 80, 100):
        kept = fitted([*keys, hint], width, FOOTER_YIELDS)  # type: ignore[list-item]
        shown = [k.action for k in kept]
        assert hint in kept and "app.help" in shown, (width, shown)
        assert sum(key_width(k) for k in kept) <= width, (width, shown)  # type: ignore[arg-type]
        assert shown[:3] == ["open_session", "resolve", "edit"], (width, shown)  # the keys on the left go last
