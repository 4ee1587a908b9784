"""The operator TUI driven by keys (Textual's pilot), with the store asserted afterwards.

Each test seeds its own demo store (they write), runs the app headless with a frozen clock, and checks what the
engine holds once the keys are pressed: a contest resolved, an edit audited, a spoofed edit refused, a delete done
only after confirming, and a never-seen repository left without a store. (An external write appearing live, no
key pressed, is checked in test_tui_changed_world.py with the other live updates.)
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from cortex_engine.base.errors import InvalidInput, NotFound
from cortex_engine.engine import Engine, describe_store

from .conftest import Repo
from .test_tui_snapshots import NOW, NOW_ISO, highlight, settle
from .tui_fixtures import fresh_demo

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture
def demo(tmp_path_factory: pytest.TempPathFactory, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The seeded demo repository, as `seed_demo` leaves it, its store in this test's CORTEX_HOME (it may change
    both: they are copied from a template seeded once)."""
    monkeypatch.setenv("CORTEX_NOW", NOW_ISO)
    return fresh_demo(tmp_path_factory, isolated_home / ".cortex")


SMALL = (80, 24)
"""The smallest terminal the app is laid out for: the size of a test that reads state, not layout (a frame costs in
proportion to its cells)."""


def engine_for(repo: Path) -> Engine:
    """A second engine on the same store, as another process would open it."""
    return Engine(repo, clock=lambda: NOW)


def drive(
    repo: Path,
    steps: Callable[[Any, Any, list[tuple[str, str, str]]], Awaitable[None]],
    *,
    live: bool = False,
    page_size: int | None = None,
    size: tuple[int, int] = (120, 40),
) -> list[tuple[str, str, str]]:
    """Run the app on `repo`, apply `steps(app, pilot, notes)`, and return every notification (severity, title,
    text). `page_size`: rows a Memory page lists (None: the app's own); `size`: the terminal's (a test that does not
    depend on it runs smaller: every frame drawn costs in proportion to the cells)."""
    from cortex_tui.app import make_app

    sized = {} if page_size is None else {"page_size": page_size}
    app = make_app(repo, clock=lambda: NOW, live=live, poll_interval=0.2, **sized)
    notes: list[tuple[str, str, str]] = []
    original = app.notify

    def notify(
        message: str,
        *,
        title: str = "",
        severity: str = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        notes.append((severity, title, message))
        original(message, title=title, severity=severity, timeout=timeout, markup=markup)  # type: ignore[arg-type]

    app.notify = notify  # type: ignore[method-assign] - record what the operator is told

    async def run() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await steps(app, pilot, notes)

    asyncio.run(run())
    return notes


def spool_notes(repo: Path) -> dict[str, sqlite3.Row]:
    """The two sides of the demo's contest, by content."""
    with engine_for(repo) as engine:
        rows = engine.conn.execute("SELECT * FROM scoped_notes WHERE subject='spool flush policy'").fetchall()
    return {row["content"]: row for row in rows}


FLUSH = "flush the spool at turn end from src/capture/spool.py"
NO_FLUSH = "do not flush the spool at turn end"


def test_resolve_keep_one_side_supersedes_the_other(demo: Path) -> None:
    """c opens both sides; Keep A leaves A active and marks B superseded; the contest is gone from the overview."""
    from cortex_tui.dialogs.resolve_dialog import ResolveDialog
    from cortex_tui.widgets.contests_pane import ContestsPane

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, ResolveDialog)
        assert [side["content"] for side in app.screen.sides] == [FLUSH, NO_FLUSH]
        await pilot.click("#keep-a")
        await settle(pilot)
        assert not isinstance(app.screen, ResolveDialog)
        assert app.screen.query_one(ContestsPane).contests == []

    notes = drive(demo, steps, size=SMALL)
    sides = spool_notes(demo)
    assert (sides[FLUSH]["status"], sides[FLUSH]["conflict"]) == ("active", 0)
    assert (sides[NO_FLUSH]["status"], sides[NO_FLUSH]["conflict"]) == ("superseded", 0)
    with engine_for(demo) as engine:
        assert engine.contests() == []
    assert any(title == "Contest resolved" and "superseded. Contest closed." in text for _, title, text in notes)


def test_resolve_both_with_a_replacement(demo: Path) -> None:
    """A replacement supersedes both sides and becomes the one active note on the subject."""
    from textual.widgets import Input

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("c")
        await settle(pilot)
        app.screen.query_one("#replacement", Input).value = "flush the spool only when it passes 256 KiB"
        await settle(pilot)
        assert app.screen.query_one("#keep-a").disabled
        await pilot.click("#resolve-all")
        await settle(pilot)

    drive(demo, steps, size=SMALL)
    sides = spool_notes(demo)
    assert {c: (r["status"], r["conflict"]) for c, r in sides.items()} == {
        FLUSH: ("superseded", 0),
        NO_FLUSH: ("superseded", 0),
        "flush the spool only when it passes 256 KiB": ("active", 0),
    }


def _note_item(repo: Path, subject: str) -> str:
    with engine_for(repo) as engine:
        row = engine.conn.execute("SELECT id FROM notes WHERE subject=?", (subject,)).fetchone()
    return f"notes:{row['id']}"


def test_the_palette_lists_every_key_and_a_cancelled_resolve_a_refused_edit_and_revalidate_change_nothing(
    demo: Path,
) -> None:
    """The palette offers resolve, edit, delete, search, re-validate, refresh, help and quit. It matched titles only
    ("stale" found nothing). It and the help dialog are read from the bindings, so every documented key of the screen
    is in both.

    Then, in the same app: escape leaves the contest open, and says so. An edit whose last line is shaped like a
    trailer is refused: the dialog stays open with the reason; the store is untouched. v re-checks every reference
    (nothing persisted) and says what it found. (None of these changes the store.)"""
    from textual.widgets import Static, TextArea

    from cortex_tui.dialogs.edit_dialog import EditDialog
    from cortex_tui.keys import Key, help_rows, label, screen_keys

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        found: set[str] = set()
        for provider_type in app.COMMANDS:
            provider_class = provider_type if isinstance(provider_type, type) else provider_type()
            provider = provider_class(app.screen)
            found |= {str(hit.text or hit.match_display) async for hit in provider.search("stale")}
        assert {"Re-validate freshness", "Show overview", "Filter memory by label"} <= found
        keys = screen_keys(app.screen)
        assert all(isinstance(b, Key) and b.tooltip for b in type(app.screen).BINDINGS)  # each key documents itself
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {
            "Resolve contest",
            "Edit memory",
            "Delete memory",
            "Search memory",
            "Re-validate freshness",
            "Refresh",
            "Help",
            "Quit",
        } <= titles
        assert {k.title for k in keys if k.title and not k.live_only} <= titles
        assert {"Copy id", "Next page", "Reverse sort"} <= titles and "Inbox" not in titles  # nothing waits
        await pilot.press("question_mark")
        await settle(pilot)
        shown = {str(s.render()) for s in app.screen.query(".help-key")}
        assert {label(k) for k in keys} <= {word for row in shown for word in row.split()}
        assert [row for row in help_rows(keys) if row[0] == "enter"]  # the Activity table's own key too
        await pilot.press("escape")  # the help dialog closes
        await settle(pilot)

        await pilot.press("c")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert {r["conflict"] for r in spool_notes(demo).values()} == {1}

        await pilot.press("2")
        await settle(pilot)
        await highlight(pilot, "store reads")
        await pilot.press("e")
        await settle(pilot)
        app.screen.query_one("#edit-text", TextArea).load_text("move the queries\nStatus: resolved")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, EditDialog)
        assert "spoofed_trailer" in str(app.screen.query_one("#edit-error", Static).content)
        with engine_for(demo) as engine:
            result = engine.inspect_memory(_note_item(demo, "store reads"))
        assert result.corrections == []
        assert result.item["text"].startswith(
            "intent: move the read queries out of src/db/store.py into a queries module"
        )
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, EditDialog)

        await pilot.press("v")
        await settle(pilot)

    with engine_for(demo) as engine:
        before = engine.conn.execute("SELECT COUNT(*) FROM memory_references WHERE checked_at IS NOT NULL").fetchone()[
            0
        ]
    notes = drive(demo, steps, size=SMALL)
    assert {r["conflict"] for r in spool_notes(demo).values()} == {1}
    assert ("information", "Resolve", "Contest left open: nothing was changed.") in notes
    assert [(sev, title) for sev, title, _ in notes if sev == "error"] == [("error", "Edit refused: spoofed_trailer")]
    assert [text for _, title, text in notes if title == "Freshness re-validated"] == [
        "checked 16 memories; 2 stale; references: 14 exists, 2 missing, 3 moved, 0 unknown"
    ]
    with engine_for(demo) as engine:
        after = engine.conn.execute("SELECT COUNT(*) FROM memory_references WHERE checked_at IS NOT NULL").fetchone()[0]
    assert after == before


def test_edit_is_saved_through_the_audited_edit_and_delete_happens_only_after_confirming(demo: Path) -> None:
    """e, new text, ctrl+s: the note reads the new text and inspection shows the correction with the prior text.
    Then on another note, d shows the engine's preview; escape deletes nothing; d then Delete removes the item,
    audited. (One app does both: they touch different notes.)"""
    from textual.widgets import Button, Static, TextArea

    from cortex_tui.dialogs.delete_dialog import DeleteDialog
    from cortex_tui.dialogs.edit_dialog import EditDialog
    from cortex_tui.widgets.inspection_view import InspectionView
    from cortex_tui.widgets.memory_browser import MemoryBrowser

    new = "move the read queries out of src/db/store.py into src/db/queries.py"
    target = _note_item(demo, "legacy login")

    def exists() -> bool:
        with engine_for(demo) as engine:
            try:
                engine.inspect_memory(target)
            except NotFound:
                return False
        return True

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("2")
        await settle(pilot)
        await highlight(pilot, "store reads")
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, EditDialog)
        area = app.screen.query_one("#edit-text", TextArea)
        assert area.text == "move the read queries out of src/db/store.py into a queries module"
        area.load_text(new)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not isinstance(app.screen, EditDialog)
        shown = str(app.screen.query_one(InspectionView).query_one("#inspection-text", Static).content)
        assert (
            "corrections" in shown
            and "diff: move the read queries out of src/db/store.py into a queries module src/db/queries.py" in shown
        )

        await highlight(pilot, "legacy login")
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, DeleteDialog)
        assert not app.screen.query_one("#confirm", Button).disabled
        assert exists()
        await pilot.press("escape")
        await settle(pilot)
        assert exists()
        await pilot.press("d")
        await settle(pilot)
        await pilot.click("#confirm")
        await settle(pilot)
        assert not isinstance(app.screen, DeleteDialog)
        assert target not in app.screen.query_one(MemoryBrowser).rows

    notes = drive(demo, steps, size=SMALL)
    with engine_for(demo) as engine:
        result = engine.inspect_memory(_note_item(demo, "store reads"))
    assert result.item["text"].startswith(f"intent: {new}")
    assert [(c["operation"], c["prior_text"], c["new_text"]) for c in result.corrections] == [
        ("edit", "move the read queries out of src/db/store.py into a queries module", new)
    ]
    assert any(title == "Memory edited (audited)" for _, title, _ in notes)
    assert not exists()
    with engine_for(demo) as engine:
        audit = engine.conn.execute(
            "SELECT operation FROM memory_corrections WHERE memory_item_id=?", (target,)
        ).fetchall()
    assert [row["operation"] for row in audit] == ["delete"]
    titles = [title for _, title, _ in notes]
    assert titles.index("Delete") < titles.index("Memory deleted (audited)")


def test_a_never_seen_repository_gets_no_store_until_a_session_starts(repo: Repo) -> None:
    """Opening the TUI creates nothing; when a session creates the store, the app switches to it live."""
    from cortex_tui.screens.main import MainScreen
    from cortex_tui.screens.state import StateScreen

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        assert isinstance(app.screen, StateScreen)
        assert not Path(describe_store(repo.path).path).exists()
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, StateScreen)
        assert not Path(describe_store(repo.path).path).exists()
        with engine_for(repo.path) as engine:
            engine.start_session("host-1")
            engine.note("decision", "keep the store in WAL mode", "store mode")
        for _ in range(100):
            if isinstance(app.screen, MainScreen) and app.snapshot is not None:
                break
            await pilot.pause(0.05)
        assert isinstance(app.screen, MainScreen)
        assert app.snapshot.status["items"] >= 1

    drive(repo.path, steps, live=True, size=SMALL)


def test_a_newer_store_is_refused_and_left_untouched(repo: Repo) -> None:
    """A store written by a newer schema is explained, and checking again writes nothing to it."""
    from cortex_tui.screens.state import StateScreen

    with engine_for(repo.path) as engine:
        engine.note("decision", "use postgres for the ledger", "ledger store")
        db = engine.identity.db_path
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    conn.commit()
    conn.close()

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        assert isinstance(app.screen, StateScreen)
        assert app.screen.code == "newer_schema"
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, StateScreen)

    drive(repo.path, steps, size=SMALL)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "99"
    conn.close()


def test_hook_detection_reads_settings_only(tmp_path: Path, repo: Repo) -> None:
    """The capture hook is found in ~/.claude or the project's .claude settings; nothing is written there."""
    from cortex_engine.ops.presence import hooks_installed

    home = tmp_path / "somebody"
    assert not hooks_installed(str(repo.path), home).installed
    assert not (home / ".claude").exists()
    (repo.path / "src").mkdir()
    repo.write(".claude/settings.json", '{"hooks": {"PostToolUse": [{"hooks": [{"command": "x/cortex-capture.sh"}]}]}}')
    found = hooks_installed(str(repo.path / "src"), home)
    assert (found.installed, found.where) == (True, str(repo.path / ".claude" / "settings.json"))


def test_resolve_contest_refuses_a_side_that_is_not_in_it(demo: Path) -> None:
    """Keeping a note that is not a side of the contest is refused before anything changes."""
    from cortex_engine.operator import resolve_contest

    with engine_for(demo) as engine:
        sides = [s["id"] for s in engine.contests()[0]["sides"]]
        with pytest.raises(InvalidInput):
            resolve_contest(engine, sides, keep="not-a-side")
        with pytest.raises(InvalidInput):
            resolve_contest(engine, sides, keep=sides[0], replacement="both at once")
        assert len(engine.contests()) == 1
