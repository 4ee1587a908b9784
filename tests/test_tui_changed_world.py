"""Dialogs and highlights when the store changes under them (and a resolve against a contest that changed).

A dialog left open while another shell changes its target refuses and says so; the engine itself checks that a
contest is still the one the caller saw; highlights follow the item, not the row position, across live updates.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cortex_engine.base.errors import Refused

from .test_tui_behaviour import FLUSH, NO_FLUSH, SMALL, _note_item, demo, drive, engine_for, spool_notes  # noqa: F401
from .test_tui_snapshots import NOW, highlight, settle

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def test_engine_refuses_a_resolve_against_a_contest_that_changed(demo: Path) -> None:  # noqa: F811
    """`expected_sides` is checked in the write: a closed contest or a new side refuses, and nothing is written."""
    from cortex_engine.operator import resolve_contest

    with engine_for(demo) as engine:
        seen = [str(s["id"]) for s in engine.contests()[0]["sides"]]
        flush, no_flush = seen
        engine.resolve(flush, status="superseded")  # another shell kept the other side
        with pytest.raises(Refused) as refused:
            resolve_contest(engine, seen, keep=flush)
        assert refused.value.code == "contest_changed"
        assert "changed since it was shown" in refused.value.message and "no longer open" in refused.value.message
        with pytest.raises(Refused):
            engine.resolve(no_flush, status="superseded", expected_sides=seen)
    sides = spool_notes(demo)
    assert (sides[FLUSH]["status"], sides[NO_FLUSH]["status"]) == ("superseded", "active")


def test_engine_refuses_when_a_side_joined_the_contest(demo: Path) -> None:  # noqa: F811
    """A third side arriving after the dialog opened is not superseded or kept blindly."""
    with engine_for(demo) as engine:
        seen = [str(s["id"]) for s in engine.contests()[0]["sides"]]
        engine.conn.execute("UPDATE notes SET conflict=1, status='active' WHERE subject='spool flush policy'")
        engine.note("decision", "flush the spool every ten seconds", "spool flush policy")
        engine.conn.execute("UPDATE notes SET conflict=1 WHERE subject='spool flush policy' AND status='active'")
        engine.conn.commit()
        current = [str(s["id"]) for s in engine.contests()[0]["sides"]]
        assert len(current) == 3
        with pytest.raises(Refused):
            engine.resolve(seen[1], status="superseded", expected_sides=seen)
        assert [str(s["id"]) for s in engine.contests()[0]["sides"]] == current
        engine.resolve(seen[1], status="superseded", expected_sides=current)  # what the caller sees now: accepted


def test_resolve_edit_and_delete_dialogs_refuse_what_changed_elsewhere(demo: Path) -> None:  # noqa: F811
    """Dialog open, the contest resolved from another shell, then Keep A: refused, said, one decision stays active.
    The highlighted memory deleted from another shell: edit says it is gone; delete's preview says so too. (One app
    walks both: they touch different memory.)"""
    from textual.widgets import Button, Static, TextArea

    from cortex_tui.dialogs.delete_dialog import DeleteDialog
    from cortex_tui.dialogs.edit_dialog import EditDialog
    from cortex_tui.dialogs.resolve_dialog import ResolveDialog

    target = _note_item(demo, "legacy login")

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, ResolveDialog)
        with engine_for(demo) as other:
            other.resolve(str(app.screen.sides[0]["id"]), status="superseded")
        await pilot.click("#keep-a")
        await settle(pilot)
        assert isinstance(app.screen, ResolveDialog)
        assert "changed since it was shown" in str(app.screen.query_one("#resolve-error", Static).content)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ResolveDialog)

        await pilot.press("2")
        await settle(pilot)
        await highlight(pilot, "legacy login")
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, EditDialog)
        app.screen.query_one("#edit-text", TextArea).load_text("drop the legacy login entirely")
        with engine_for(demo) as other:
            other.delete_memory(target, yes=True)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, EditDialog)
        assert "not_found" in str(app.screen.query_one("#edit-error", Static).content)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, DeleteDialog)
        assert "This memory is gone" in str(app.screen.query_one("#delete-text", Static).content)
        assert app.screen.query_one("#confirm", Button).disabled

    notes = drive(demo, steps, size=SMALL)
    sides = spool_notes(demo)
    assert (sides[FLUSH]["status"], sides[NO_FLUSH]["status"]) == ("superseded", "active")
    assert not any(title == "Contest resolved" for _, title, _ in notes)
    assert any(title == "Contest not resolved" and "changed since it was shown" in text for _, title, text in notes)
    assert any(sev == "error" and title.startswith("Edit refused") for sev, title, _ in notes)


def test_spool_appends_reload_nothing_and_a_contest_written_elsewhere_arrives_under_the_highlight(
    demo: Path,  # noqa: F811
) -> None:
    """Hook events only append to the spool, which nothing on screen shows: no reload. Another engine writes a
    contest: the overview shows it within a bounded wait, no key pressed (the store commit reloads), and as it sorts
    above the highlighted one the highlight (and so `c`) stays on the same contest."""
    from textual.widgets import OptionList

    from cortex_tui.widgets.contests_pane import ContestsPane

    spool = demo / ".cortex" / "spool.jsonl"

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        pane = app.screen.query_one(ContestsPane)
        assert [c["subject"] for c in pane.contests] == ["spool flush policy"]
        assert pane.selected_contest()["subject"] == "spool flush policy"
        for _ in range(40):  # let the watcher start and the first load finish (bounded)
            await pilot.pause(0.05)
        await settle(pilot)
        loads = app._requested
        for n in range(5):
            with spool.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"p": {"tool_name": "Read", "n": n}}) + "\n")
            await pilot.pause(0.3)  # more than the poll interval: a watched spool would have reloaded by now
        await settle(pilot)
        assert app._requested == loads
        with engine_for(demo) as other:
            other.note("decision", "use sqlite for the ledger", "ledger store")
            other.note("decision", "do not use sqlite for the ledger", "ledger store")
        for _ in range(100):  # bounded: at most ~5 s for a change that should take well under one
            if len(pane.contests) == 2:
                break
            await pilot.pause(0.05)
        assert len(pane.contests) == 2 and app._requested > loads
        assert sorted(c["subject"] for c in pane.contests) == ["ledger store", "spool flush policy"]
        assert [c["subject"] for c in pane.contests] == ["ledger store", "spool flush policy"]
        assert pane.query_one(OptionList).highlighted != 0
        assert pane.selected_contest()["subject"] == "spool flush policy"
        assert app.screen.contest_for(app.screen.selection())["subject"] == "spool flush policy"

    drive(demo, steps, live=True, size=SMALL)


def test_freshness_follows_a_commit_that_renames_a_referenced_file(repo) -> None:  # noqa: ANN001 - conftest.Repo
    """`git mv` + commit with no key pressed: the Freshness pane shows the move (the checkout is watched)."""
    import time

    from cortex_tui.widgets.freshness_pane import FreshnessPane

    repo.write("src/spool.py", "def flush():\n    pass\n")
    repo.commit("add the spool")
    with engine_for(repo.path) as engine:
        engine.note("decision", "flush from src/spool.py at turn end", "spool flush")

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        pane = app.screen.query_one(FreshnessPane)
        for _ in range(100):  # the first freshness check, bounded
            if pane.border_title and "0 stale" in pane.border_title:
                break
            await pilot.pause(0.05)
        assert pane.flagged == []
        repo.git("mv", "src/spool.py", "src/capture_spool.py")
        repo.commit("rename the spool module")
        started = time.monotonic()
        for _ in range(200):  # bounded: at most ~10 s under a loaded machine; the target is under 2 s
            if pane.flagged:
                break
            await pilot.pause(0.05)
        elapsed = time.monotonic() - started
        assert [item["label"] for item in pane.flagged] == ["moved: src/spool.py → src/capture_spool.py"]
        print(f"freshness updated {elapsed:.2f}s after the commit")

    drive(repo.path, steps, live=True, size=SMALL)


def test_search_opens_from_every_tab_and_down_moves_into_the_results(demo: Path) -> None:  # noqa: F811
    """`/` on Overview, Memory or Activity opens recall; ↓ from the topic moves into the items; enter opens one."""
    from textual.widgets import Input, OptionList

    from cortex_tui.dialogs.search_dialog import SearchDialog
    from cortex_tui.widgets.memory_browser import MemoryBrowser

    opened: list[str] = []

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        for tab in ("1", "2", "3"):
            await pilot.press(tab)
            await settle(pilot)
            await pilot.press("slash")
            await settle(pilot)
            assert isinstance(app.screen, SearchDialog), tab
            app.screen.query_one("#search-input", Input).value = "spool flush"
            await pilot.press("enter")
            await settle(pilot)
            await pilot.press("down")
            await settle(pilot)
            items = app.screen.query_one("#search-items", OptionList)
            assert app.screen.focused is items and items.highlighted == 0, tab
            picked = app.screen.surface.items[0].id
            await pilot.press("enter")
            await settle(pilot)
            assert not isinstance(app.screen, SearchDialog), tab
            assert app.screen.query_one("#tabs").active == "memory", tab
            assert app.screen.query_one(MemoryBrowser).highlighted_id() == picked, tab
            opened.append(tab)

    drive(demo, steps, size=SMALL)
    assert opened == ["1", "2", "3"]


def test_open_in_browser_finds_an_item_beyond_the_first_page(repo) -> None:  # noqa: ANN001 - conftest.Repo
    """The search hit is the oldest of 13 items, past a first page of 10: the browser opens a page at it; Home and
    End jump by key. (Pages of 10 rows: paging is the same at the app's 200, with fewer notes to write.)"""
    from datetime import timedelta

    from textual.widgets import Input, Static

    from cortex_engine.engine import Engine
    from cortex_tui.widgets.memory_browser import MemoryBrowser

    size, total = 10, 13
    moment = [NOW - timedelta(days=1)]
    with Engine(repo.path, clock=lambda: moment[0]) as engine:
        engine.note("insight", "the zebra migration needs a dry run first")
        for n in range(total - 1):
            moment[0] += timedelta(minutes=1)
            engine.note("insight", f"routine observation number {n} about the build")
        oldest = engine.list_memory(limit=size, offset=size).items[-1]["id"]

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("slash")
        await settle(pilot)
        app.screen.query_one("#search-input", Input).value = "zebra migration"
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.surface.items[0].id == oldest
        await pilot.press("down", "enter")
        await settle(pilot)
        browser = app.screen.query_one(MemoryBrowser)
        assert (browser.position, browser.highlighted_id()) == (total - 1, oldest)
        await pilot.press("home")
        await settle(pilot)
        assert (browser.position, browser.query_one("#memory-table").cursor_row) == (0, 0)
        await pilot.press("end")
        await settle(pilot)
        assert (browser.position, browser.highlighted_id()) == (total - size, oldest)
        assert str(browser.query_one("#page-info", Static).content) == "4–13 of 13 · newest first"
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert browser.position == 0 and len(browser.rows) == size
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert (browser.position, len(browser.rows)) == (size, total - size)
        assert not browser.next_page()

    drive(repo.path, steps, page_size=size, size=SMALL)


def test_freshness_lists_a_note_whose_function_changed_as_drifted(repo) -> None:  # noqa: ANN001 - conftest.Repo
    """A note naming `flush()` in src/spool.py: once the function's body changes, the pane lists it, drifted."""
    from cortex_tui.widgets.freshness_pane import FreshnessPane

    repo.write("src/spool.py", "def flush():\n    return 1\n\n\ndef other():\n    return 2\n")
    repo.commit("add the spool")
    with engine_for(repo.path) as engine:
        engine.note("decision", "flush() in src/spool.py runs at turn end", "spool flush")
    repo.write("src/spool.py", "def flush():\n    return 42\n\n\ndef other():\n    return 2\n")

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        pane = app.screen.query_one(FreshnessPane)
        for _ in range(200):  # the first freshness check, bounded
            if pane.flagged:
                break
            await pilot.pause(0.05)
        assert [item["label"] for item in pane.flagged] == ["drifted: src/spool.py:flush changed"]
        assert "1 drifted" in str(pane.border_title) and "0 moved" in str(pane.border_title)
        await pilot.press("v")
        for _ in range(200):  # the announced re-check, bounded
            if any(title == "Freshness re-validated" for _, title, _ in notes):
                break
            await pilot.pause(0.05)

    notes = drive(repo.path, steps, live=True, size=SMALL)
    # One freshness sentence; the TUI's copy left out the drifted count the CLI's gave.
    from .test_cli import cortex

    [said] = [text for _, title, text in notes if title == "Freshness re-validated"]
    assert "1 drifted" in said and said == cortex(repo.path, "validate-memory").out.splitlines()[0]


def test_a_deleted_repository_stops_the_watcher_and_says_so(demo: Path) -> None:  # noqa: F811
    """The directory the app watches is deleted: one screen says so, nothing is watched, polled or created any more."""
    import shutil

    from textual.widgets import Static

    from cortex_engine.engine import describe_store
    from cortex_tui.events import StoreChanged
    from cortex_tui.screens.state import StateScreen

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("2")  # the Memory tab: its page and inspection workers open engines too
        for _ in range(40):  # let the watcher start (bounded)
            if app._watcher is not None:
                break
            await pilot.pause(0.05)
        assert app._watcher is not None
        shutil.rmtree(demo)
        for _ in range(100):  # the watcher sees HEAD go within a poll (0.2 s here); bounded at ~5 s
            if isinstance(app.screen, StateScreen):
                break
            await pilot.pause(0.05)
        await settle(pilot)
        assert isinstance(app.screen, StateScreen) and app.screen.state == "deleted"
        assert "no longer exists" in str(app.screen.query_one("#state-box", Static).content)
        assert app._watcher is None
        loads = app._requested
        app.post_message(StoreChanged("poll"))  # one the stopped watcher posted just before it stopped
        for _ in range(5):
            await pilot.pause(0.2)  # a poll interval each: a live watcher would have asked for a reload by now
        assert app._requested == loads and app._watcher is None
        await pilot.press("r")  # checking again finds it still gone, and still watches nothing
        await settle(pilot)
        assert isinstance(app.screen, StateScreen) and app._watcher is None

    notes = drive(demo, steps, live=True, size=SMALL)
    assert not Path(describe_store(str(demo)).path).exists()  # no store made up for the vanished path
    assert not [title for _, title, _ in notes if "bad_cwd" in title]


def test_a_commit_that_leaves_the_index_alone_is_heard_without_the_poll(repo) -> None:  # noqa: ANN001 - conftest.Repo
    """`git reset --soft` moves the branch (HEAD's reflog grows) but not the index: the watcher hears it at once."""
    import threading

    from cortex_tui.live import StoreWatcher

    repo.write("a.txt", "one\n")
    repo.commit("one")
    repo.write("a.txt", "two\n")
    repo.commit("two")
    heard: list[str] = []
    checkout = threading.Event()

    def on_change(reason: str) -> None:
        heard.append(reason)
        if reason == "checkout":
            checkout.set()

    watcher = StoreWatcher(
        repo.path / "no-store" / "cortex.db", None, on_change, None, git_dir=repo.path / ".git", interval=3600
    )  # the poll probes once at start, then not again during this test
    watcher.start()
    try:
        repo.git("reset", "-q", "--soft", "HEAD~1")
        assert checkout.wait(10), heard
    finally:
        watcher.close()


def test_a_store_write_reloads_only_what_it_touched_and_keeps_the_view(demo: Path) -> None:  # noqa: F811
    """A flush of a Read event reloads the overview only; a new note reloads the memory page (the highlighted item
    kept by id, still the one inspected, at the same place on screen) and re-checks freshness."""
    import json

    from textual.widgets import DataTable

    from cortex_tui.widgets.memory_browser import MemoryBrowser

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        checks: list[bool] = []
        original = app.request_freshness

        def counted(*, announce: bool = False) -> None:
            checks.append(announce)
            original(announce=announce)

        app.request_freshness = counted
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#memory-table", DataTable)
        browser = app.screen.query_one(MemoryBrowser)
        table.move_cursor(row=table.row_count - 1)
        await settle(pilot)
        kept, scroll, on_screen = browser.highlighted_id(), table.scroll_y, table.cursor_row - table.scroll_y
        assert kept is not None and scroll > 0
        rows = len(browser.rows)
        for _ in range(40):  # the watcher is up once the first load located the store (bounded)
            if app._watcher is not None:
                break
            await pilot.pause(0.05)
        generation, memory = app.generation, app.memory_generation

        with (demo / ".cortex" / "spool.jsonl").open("a", encoding="utf-8") as out:
            out.write(
                json.dumps(
                    {
                        "v": 1,
                        "t": 1785693600,
                        "p": {
                            "session_id": "other",
                            "cwd": str(demo),
                            "hook_event_name": "PostToolUse",
                            "tool_name": "Read",
                            "tool_use_id": "read-1",
                            "tool_input": {"file_path": str(demo / "README.md")},
                        },
                    }
                )
                + "\n"
            )
        with engine_for(demo) as other:
            before = other.memory_mark()
            other.flush_spool()
            assert other.memory_mark() == before  # what this test relies on: the flush wrote no memory
        for _ in range(100):  # bounded: the overview reloads within a poll
            if app.generation > generation:
                break
            await pilot.pause(0.05)
        await settle(pilot)
        assert app.generation > generation and app.memory_generation == memory and checks == []

        with engine_for(demo) as other:
            other.note("insight", "the ledger compaction runs nightly")
        for _ in range(100):
            if app.memory_generation > memory:
                break
            await pilot.pause(0.05)
        await settle(pilot)
        assert app.memory_generation > memory and checks == [False]
        # The new note lands above: the highlighted row stays where it was on screen, under the same item.
        assert (browser.highlighted_id(), table.cursor_row - table.scroll_y) == (kept, on_screen)
        assert len(browser.rows) == rows + 1
        assert app.screen.selection().item_id == kept

    drive(demo, steps, live=True, size=SMALL)


def test_a_repository_that_loses_its_git_folder_under_the_viewer_gets_no_store_made_up(repo) -> None:  # noqa: ANN001
    """The viewer opens engines from many workers; once `.git` is gone (a repository half-deleted, or moved
    away, under it) the folder names a different store, keyed by its path. Every worker's open is refused with
    one line and nothing is created; the repository's own store is left as it was."""
    import shutil

    from cortex_engine.base.errors import StoreUnavailable
    from cortex_engine.engine import describe_store
    from cortex_tui.data.target import StoreTarget

    with engine_for(repo.path) as engine:
        engine.note("decision", "keep the viewer read-only", "viewer")
    kept = Path(describe_store(str(repo.path)).path)
    target = StoreTarget(str(repo.path))
    with target.open() as engine:  # the store that exists opens as before
        assert engine.identity.db_path == kept
    shutil.rmtree(repo.path / ".git")
    made_up = Path(describe_store(str(repo.path)).path)
    assert made_up != kept and not made_up.exists()
    with pytest.raises(StoreUnavailable) as refused:
        target.open()
    assert refused.value.code == "store_missing" and "nothing was created" in refused.value.message
    assert not made_up.exists() and not made_up.parent.exists()
    assert kept.exists()


def test_the_watchers_stop_race_prints_nothing_but_other_watchdog_errors_still_do(repo) -> None:  # noqa: ANN001
    """watchdog's inotify emitter logs 'queue_events() called when the thread is inactive' when a read races its
    stop; with no handler, Python's last resort printed it over the terminal on about one quit in ten. A started
    watcher drops that record, and only that one, before any handler sees it."""
    import logging

    from cortex_tui.live import StoreWatcher

    watcher = StoreWatcher(
        repo.path / "no-store" / "cortex.db", None, lambda reason: None, None, git_dir=repo.path / ".git", interval=3600
    )
    watcher.start()
    watcher.close()
    heard: list[str] = []

    class Listen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            heard.append(record.getMessage())

    emitter = logging.getLogger("watchdog.observers.inotify")
    listen = Listen()
    emitter.addHandler(listen)
    try:
        emitter.error("InotifyEmitter.queue_events() called when the thread is inactive")
        emitter.error("something else went wrong")
    finally:
        emitter.removeHandler(listen)
    assert heard == ["something else went wrong"]


def test_a_store_restored_under_the_viewer_reloads_once_then_rests(demo: Path, tmp_path: Path) -> None:  # noqa: F811
    """`cortex restore --force` puts a new file in place: the viewer reloads for it, then its own reads (which make
    and remove the new store's WAL while nothing else holds it open) do not set off another reload, and again."""
    from cortex_engine.ops.backup import backup, restore

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        for _ in range(40):  # let the watcher start (bounded)
            if app._watcher is not None:
                break
            await pilot.pause(0.05)
        await settle(pilot)
        backup(str(demo), str(tmp_path / "kept.db"))
        loads = app._requested
        restore(str(demo), str(tmp_path / "kept.db"), force=True)
        for _ in range(100):  # the restore is heard (bounded at ~5 s)
            if app._requested > loads:
                break
            await pilot.pause(0.05)
        assert app._requested > loads
        for _ in range(4):
            await pilot.pause(0.3)  # more than the poll interval and the settle time: a loop would reload here
        await settle(pilot)
        heard = app._requested
        for _ in range(6):
            await pilot.pause(0.3)
        await settle(pilot)
        assert app._requested == heard

    drive(demo, steps, live=True, size=SMALL)


def test_a_read_that_makes_and_removes_the_wal_is_not_heard_as_a_change(tmp_path: Path) -> None:
    """Opening the only connection on a WAL store creates its -wal file and closing it removes it: no commit, so
    the watcher reports nothing for it. A marker file in the same folder, written before and after (one watch, so
    its events arrive in order), proves the watch was listening and that the reads' events have arrived."""
    import sqlite3
    import threading

    from cortex_tui.live import StoreWatcher

    store = tmp_path / "cortex.db"
    conn = sqlite3.connect(store)
    conn.execute("PRAGMA journal_mode=wal")
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    assert not (tmp_path / "cortex.db-wal").exists()
    heard: list[str] = []
    marked = threading.Event()

    def on_change(reason: str) -> None:
        heard.append(reason)
        if reason == "file:engaged":
            marked.set()

    marker = tmp_path / "engaged"
    watcher = StoreWatcher(store, None, on_change, None, interval=3600)
    watcher.start()
    try:
        for _ in range(100):  # the observer's watch is set up in its own thread: write until it is heard
            marker.write_text("listening\n", encoding="utf-8")
            if marked.wait(0.1):
                break
        assert marked.is_set(), heard
        marked.clear()
        heard.clear()
        for _ in range(3):
            reader = sqlite3.connect(store)
            reader.execute("SELECT count(*) FROM t").fetchone()
            assert (tmp_path / "cortex.db-wal").exists()
            reader.close()
            assert not (tmp_path / "cortex.db-wal").exists()
        marker.write_text("read\n", encoding="utf-8")
        assert marked.wait(10), heard
        assert set(heard) == {"file:engaged"}, heard
    finally:
        watcher.close()
