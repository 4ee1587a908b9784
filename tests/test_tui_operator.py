"""What an operator asks of the TUI, driven by keys: narrowing the memory table by label and text, sorting it,
the marker on contests and stale references that arrived live, and the Activity drill-down.

Each test seeds its own demo store, runs the app headless with a frozen clock (see `test_tui_behaviour.drive`), and
checks what the screen's widgets hold after the keys.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_tui_behaviour import SMALL, demo, drive, engine_for  # noqa: F401 - `demo` is a fixture
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
        for _ in range(5):
            await pilot.press("l")
            await settle(pilot)
            seen[str(browser.label)] = {row.labels for row in browser.rows.values()}
        assert seen["contested"] == {("contested",)} and len(browser.rows) == 1  # superseded, after contested
        assert all(any(label.startswith("stale:") for label in labels) for labels in seen["stale"]) and seen["stale"]
        assert all(any(label.startswith("moved:") for label in labels) for labels in seen["moved"]) and seen["moved"]
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
            reversed_subject = engine.list_memory(
                scopes=engine.scope_keys, text="spool", sort="subject", reverse=True, limit=200
            )
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
        table.post_message(
            DataTable.HeaderSelected(table, ColumnKey("Kind"), 0, table.columns[ColumnKey("Kind")].label)
        )
        await settle(pilot)
        assert browser.sort == ("kind", False)
        kinds = [table.get_row(key)[0].plain for key in browser.rows]
        assert kinds == sorted(kinds)

    drive(demo, steps, size=SMALL)


def _ids_of(repo: Path, subject: str) -> list[str]:
    with engine_for(repo) as engine:
        return [str(item["id"]) for item in engine.list_memory(limit=200).items if item["subject"] == subject]


def test_enter_on_a_session_opens_its_notes_failures_and_spend(demo: Path) -> None:  # noqa: F811
    """Enter on an Activity row opens that session (the first row's in full: it did nothing before): its own injected
    tokens (the row's Tokens cell agrees with the ledger), its stored notes with their labels, and its failed
    commands; escape closes; a session gone says so."""
    from textual.widgets import Static

    from cortex_tui.dialogs.session_dialog import SessionDialog
    from cortex_tui.widgets.activity_table import ActivityTable

    with engine_for(demo) as engine:
        ledger = {
            str(r[0]): int(r[1])
            for r in engine.conn.execute(
                "SELECT session_id, SUM(tokens) FROM token_ledger WHERE direction='injected' GROUP BY session_id"
            )
        }
        busy = engine.conn.execute(  # a session that failed a command and wrote a side of the open contest
            "SELECT session_id FROM scoped_notes WHERE conflict=1 AND session_id IN "
            "(SELECT session_id FROM command_runs WHERE exit_code != 0)"
        ).fetchone()[0]
        failed = [
            str(r[0])
            for r in engine.conn.execute(
                "SELECT command_summary FROM command_runs WHERE session_id=? AND exit_code != 0", (busy,)
            )
        ]
        subjects = [
            str(r[0]) for r in engine.conn.execute("SELECT subject FROM scoped_notes WHERE session_id=?", (busy,))
        ]

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("3")
        await settle(pilot)
        table = app.screen.query_one(ActivityTable)
        tokens = {key.value: table.get_row(key)[8].plain for key in table.rows}
        assert tokens == {sid: str(ledger.get(sid, "·")) for sid in tokens} and any(v != "·" for v in tokens.values())
        await pilot.press("enter")  # the first row, as the tab opens
        await settle(pilot)
        assert isinstance(app.screen, SessionDialog)
        first = str(app.screen.query_one("#session-summary", Static).render())
        assert "reads " in first and "failures " in first
        await pilot.press("escape")
        await settle(pilot)
        table.move_cursor(row=table.get_row_index(busy))
        await pilot.press("enter")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, SessionDialog) and dialog.session_id == busy

        def text(part: str) -> str:
            return str(dialog.query_one(f"#session-{part}", Static).render())

        assert all(command in text("failures") for command in failed) and failed
        assert all(subject in text("notes") for subject in subjects) and subjects
        assert "contested" in text("notes")
        assert f"tokens injected {ledger[busy]}" in text("summary")
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is not dialog
        with engine_for(demo) as engine:  # gone since the table listed it (gc): the dialog says so, nothing else
            engine.conn.execute("DELETE FROM sessions WHERE id=?", (busy,))
        await pilot.press("enter")
        await settle(pilot)
        assert "no longer stored" in str(app.screen.query_one("#session-summary", Static).render())

    drive(demo, steps, size=SMALL)


def test_session_detail_reads_only_this_scopes_sessions(repo, make_engine) -> None:  # noqa: ANN001
    """The drill-down never shows another branch's session (a stale id from another scope is not found)."""
    from cortex_engine.base.errors import NotFound
    from cortex_engine.operator import session_detail

    main = make_engine(repo.path)
    main.note("decision", "use kafka for the queue engine", "queue engine")
    main.log_event("cmd", command="pytest -q", exit_code=2, stderr="E   boom\n")
    session = str(main.current_session()["id"])
    detail = session_detail(main, session)
    assert [n["subject"] for n in detail.notes] == ["queue engine"]
    assert [(f["command"], f["exit_code"], f["stderr_tail"].strip()) for f in detail.failures] == [
        ("pytest -q", 2, "E   boom")
    ]
    assert detail.session["id"] == session and detail.session["tokens"] == sum(s.tokens for s in detail.spend)
    repo.git("checkout", "-q", "-b", "feature")
    with pytest.raises(NotFound):
        session_detail(make_engine(repo.path), session)


def test_contests_and_stale_references_that_arrive_live_are_marked_until_seen(demo: Path) -> None:  # noqa: F811
    """What was there at start is not news; a contest opened and a file deleted while the view is open are marked
    `● new` (pane titles and the Overview tab count them) until the operator highlights them in the focused list."""
    from textual.widgets import OptionList

    from cortex_tui.widgets.contests_pane import ContestsPane
    from cortex_tui.widgets.freshness_pane import FreshnessPane

    from .test_tui_hostile import drawn, title_text

    referenced = demo / "src" / "capture" / "spool.py"
    assert referenced.exists()

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        contests, fresh = app.screen.query_one(ContestsPane), app.screen.query_one(FreshnessPane)
        tab = app.screen.query_one("#tabs").get_tab("overview")
        assert (len(contests.unseen), len(fresh.unseen), tab.label.plain) == (0, 0, "Overview")
        assert fresh.flagged and contests.contests and "● new" not in drawn(app)  # flagged at start: not news
        with engine_for(demo) as other:
            other.note("decision", "use sqlite for the ledger", "ledger store")
            other.note("decision", "do not use sqlite for the ledger", "ledger store")
        referenced.unlink()
        app.request_reload("test")
        await settle(pilot)
        new_flags = [key for key, item in fresh._by_key.items() if "spool.py" in str(item["label"])]
        assert (len(contests.unseen), len(fresh.unseen)) == (1, len(new_flags)) and new_flags
        assert title_text(contests).endswith("· 2 open · 1 new")
        assert title_text(fresh).endswith(f" · {len(new_flags)} new")
        assert tab.label.plain == f"Overview ● {1 + len(new_flags)} new" and drawn(app).count("● new") >= 2
        await pilot.press("3")  # the marker is on the Overview tab's label, wherever the operator is
        await settle(pilot)
        assert f"Overview ● {1 + len(new_flags)} new" in drawn(app)
        await pilot.press("1")
        await settle(pilot)

        options = contests.query_one(OptionList)
        options.focus()
        await settle(pilot)
        assert len(contests.unseen) == 1  # focus alone shows the highlighted (old) contest, not the new one
        options.highlighted = options.get_option_index("contest:ledger store")
        await settle(pilot)
        assert len(contests.unseen) == 0 and title_text(contests).endswith("· 2 open")
        assert tab.label.plain == f"Overview ● {len(new_flags)} new"

        fresh_list = fresh.query_one(OptionList)
        fresh_list.highlighted = fresh_list.get_option_index(new_flags[0])  # highlighted without focus: not seen
        await settle(pilot)
        assert len(fresh.unseen) == len(new_flags)
        fresh_list.focus()  # focus: the highlighted one is seen; then each one the operator moves onto
        await settle(pilot)
        assert len(fresh.unseen) == len(new_flags) - 1
        for key in new_flags[1:]:
            fresh_list.highlighted = fresh_list.get_option_index(key)
            await settle(pilot)
        assert len(fresh.unseen) == 0 and tab.label.plain == "Overview" and "● new" not in drawn(app)
        app.request_reload("again")  # seen stays seen across reloads
        await settle(pilot)
        assert (len(contests.unseen), len(fresh.unseen)) == (0, 0)

    drive(demo, steps)  # the full size: it checks what is drawn, and what is not


def test_filter_commands_from_another_tab_show_the_memory_tab_and_a_search_hit_clears_the_filters(
    demo: Path,  # noqa: F811
) -> None:
    """The palette runs `Filter memory by text` from the Overview: the Memory tab shows and its text input has focus
    (never a widget on a hidden tab); the filter keys themselves do nothing off the Memory tab. Then opening a search
    hit shows it on whichever page holds it: a filter that hides it (label, text, sort) is cleared first."""
    from cortex_tui.widgets.memory_browser import MemoryBrowser

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("l", "o")
        await settle(pilot)
        browser = app.screen.query_one(MemoryBrowser)
        assert (browser.label, browser.sort) == (None, ("created", False))
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "Filter memory by text")
        command.callback()
        await settle(pilot)
        assert app.screen.query_one("#tabs").active == "memory"
        assert app.focused is browser.query_one("#text-filter")
        await pilot.press(*"kafka", "escape")
        await settle(pilot)
        assert app.focused is browser.query_one("#memory-table") and browser.text == "kafka"
        assert {row.title for row in browser.rows.values()} == {"queue engine"}

        await pilot.press("l")
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        assert browser.label is not None and browser.sort != ("created", False)
        hidden = next(item_id for item_id in _ids_of(demo, "queue engine") if item_id not in browser.rows)
        browser.reveal(hidden)
        await settle(pilot)
        assert (browser.label, browser.text, browser.sort) == (None, "", ("created", False))
        assert browser.highlighted_id() == hidden

    drive(demo, steps, size=SMALL)


def test_narrow_terminals_cut_nothing_in_the_header_the_activity_table_or_the_search_hint(
    demo: Path,  # noqa: F811
) -> None:
    """At 60 columns the header's lines were cut mid-word (`… session 5743…`); now whole parts give way in a stated
    order (the counts, then the session; the worktree path on the identity line) and nothing is cut.

    At 80×24 the Activity table's Focus column was off the right edge; the counts now take one-letter heads (the
    tooltip names them) and Focus takes what is left. At 120 the full heads come back.

    At 80×24 the hint under a recall ran past the dialog ('… to open one in'); it now fits whole.

    (One app is resized through the three: each check reads only what is on screen.)"""
    from textual.widgets import Static

    from cortex_tui.widgets.activity_table import ActivityTable
    from cortex_tui.widgets.status_header import StatusHeader

    lines: dict[int, list[str]] = {}
    seen: dict[int, tuple[list[str], int, int]] = {}
    hint: dict[str, int | str] = {}
    chosen: list[str | None] = []

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        for width in (120, 56):
            await pilot.resize_terminal(width, 24)
            await settle(pilot)
            header = app.screen.query_one(StatusHeader)
            lines[width] = [
                str(header.query_one(f"#{name}", Static).render()) for name in ("identity-line", "health-line")
            ]

        await pilot.press("3")
        await settle(pilot)
        table = app.screen.query_one(ActivityTable)
        table.move_cursor(row=table.row_count - 1)  # the oldest session, not where a rebuilt table would start
        await settle(pilot)
        chosen.append(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        for width, height in ((80, 24), (120, 40)):
            await pilot.resize_terminal(width, height)
            await settle(pilot)
            table = app.screen.query_one(ActivityTable)
            heads = [str(column.label) for column in table.columns.values()]
            used = sum(column.get_render_width(table) for column in table.columns.values())
            seen[width] = (heads, used, table.scrollable_content_region.width)
            chosen.append(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

        await pilot.resize_terminal(80, 24)
        await pilot.press("slash", *"spool flush", "enter")
        await settle(pilot)
        shown = app.screen.query_one("#search-hint", Static)
        hint["text"], hint["room"] = str(shown.render()), shown.content_region.width

    drive(demo, steps, size=SMALL)
    assert "open contest" in lines[120][1] and "session" in lines[120][1]
    identity, health = lines[56]
    assert "worktree" not in identity and "⎇ main" in identity
    assert "store ok" in health and "engaged" in health and "open contest" not in health
    assert all(len(text) <= width - 2 and "…" not in text for width, texts in lines.items() for text in texts)

    # The columns are rebuilt at each width, the rows with them: the cursor stays on the session it was on.
    assert len(chosen) == 3 and chosen[0] is not None and len(set(chosen)) == 1
    heads, used, room = seen[80]
    assert heads[-1] == "Focus" and "R" in heads and used <= room
    assert "Reads" in seen[120][0] and seen[120][1] <= seen[120][2]

    assert "shown to the agent" in str(hint["text"]) and len(str(hint["text"])) <= int(hint["room"])
