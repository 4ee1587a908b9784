"""Author text in the operator TUI is never markup and never reaches the terminal raw (markup-shaped subjects,
escapes, bidi controls).

One hostile store (subjects shaped like Textual markup, a captured command holding an ANSI escape, a note holding
U+202E) is walked through every screen and dialog: the app must not crash or quit, must show each string literally
in titles and bodies, and must draw no escape or bidi override. The store is written the way an older Cortex wrote
it (raw text put back after capture), so the TUI is tested on its own, whatever capture strips on the way in.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from cortex_engine.engine import Engine

from .conftest import Repo
from .test_tui_snapshots import NOW, highlight, settle

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

HOSTILE_SUBJECTS = ("close [/] tag", "list[int]", "[WIP] parser", "[bold red]x[/]", "[@click=app.quit]boom[/]")
ESCAPED_COMMAND = "pytest \x1b[31mRED\x1b]0;pwned\x07 done"


def _escape_removed(text: str) -> bool:
    """The escaped command is shown, its escape sequences removed whole: no `[31m` or window title left behind."""
    return "RED" in text and "[31m" not in text and "pwned" not in text


BIDI = "review \u202eecnalab\u202c the ledger"


def seed_hostile(path: Path) -> None:
    """Notes on every hostile subject, a contest on the click one, and raw escapes as an older store held them."""
    with Engine(path, clock=lambda: NOW) as engine:
        for subject in HOSTILE_SUBJECTS[:4]:
            engine.note("decision", f"keep {subject} as written in src/{len(subject)}.py", subject)
        engine.note("decision", "use the [bold red]x[/] flag for releases", HOSTILE_SUBJECTS[4])
        engine.note("decision", "do not use the [bold red]x[/] flag for releases", HOSTILE_SUBJECTS[4])
        engine.note("insight", "placeholder for the bidi text")
        engine.log_event("cmd", command="pytest placeholder", exit_code=1, stderr="failed")
        db_path = engine.identity.db_path
        assert len(engine.contests()) == 1
    # What a store written before capture stripped controls holds (the TUI must be safe on its own): written
    # through a plain connection, past the engine's cleaning choke point, as an older Cortex would have left it.
    raw = sqlite3.connect(db_path)
    try:
        raw.execute("UPDATE notes SET content=? WHERE content='placeholder for the bidi text'", (BIDI,))
        raw.execute(
            "UPDATE memory_items SET text=? WHERE text LIKE 'insight: placeholder for the bidi%'", (f"insight: {BIDI}",)
        )
        raw.execute("UPDATE memory_items SET text=replace(text, 'pytest placeholder', ?)", (ESCAPED_COMMAND,))
        raw.execute(
            "UPDATE command_runs SET command_summary=replace(command_summary, 'pytest placeholder', ?)",
            (ESCAPED_COMMAND,),
        )
        raw.commit()
        assert raw.execute("SELECT COUNT(*) FROM memory_items WHERE text LIKE '%' || char(27) || '%'").fetchone()[0]
    finally:
        raw.close()


@pytest.fixture
def hostile(repo: Repo) -> Repo:
    """The `repo` fixture with the hostile store."""
    seed_hostile(repo.path)
    return repo


def title_text(widget: Any) -> str:
    """A widget's border title as drawn (the getter returns it escaped as markup)."""
    from textual.content import Content

    return Content.from_markup(widget.border_title or "").plain


def drawn(app: Any) -> str:
    """The characters drawn on the current screen (the screenshot's text, without styles)."""
    from unittest import mock

    from rich.console import Console

    with mock.patch.object(Console, "export_svg", lambda console, **_: console.export_text(styles=False)):
        return str(app.export_screenshot())


def assert_nothing_raw(app: Any) -> None:
    """No escape, bell or bidi override is drawn."""
    svg = drawn(app)
    for char in ("\x1b", "\x07", "\u202e", "\u202c"):
        assert char not in svg, repr(char)


def test_hostile_text_on_every_screen_and_dialog(hostile: Repo) -> None:
    """Overview, memory (every row inspected), edit, delete, resolve, search, activity and a session: literal text,
    nothing raw."""
    from textual.widgets import Input, Static, TextArea

    from cortex_tui.app import make_app
    from cortex_tui.dialogs.delete_dialog import DeleteDialog
    from cortex_tui.dialogs.edit_dialog import EditDialog
    from cortex_tui.dialogs.resolve_dialog import ResolveDialog
    from cortex_tui.dialogs.search_dialog import SearchDialog
    from cortex_tui.dialogs.session_dialog import SessionDialog
    from cortex_tui.screens.main import MainScreen
    from cortex_tui.widgets.inspection_view import InspectionView
    from cortex_tui.widgets.memory_browser import MemoryBrowser

    app = make_app(hostile.path, clock=lambda: NOW, live=False)
    errors: list[str] = []
    original = app.notify

    def notify(message: str, *, severity: str = "information", **kw: Any) -> None:
        if severity == "error":
            errors.append(message)
        original(message, severity=severity, **kw)  # type: ignore[arg-type]

    app.notify = notify  # type: ignore[method-assign]

    async def close_dialog(pilot: Any) -> None:
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)

    async def run() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert_nothing_raw(app)
            await pilot.press("c")
            await settle(pilot)
            assert isinstance(app.screen, ResolveDialog)
            assert title_text(app.screen.query_one("#resolve-box")) == f"Resolve the contest on “{HOSTILE_SUBJECTS[4]}”"
            assert "use the [bold red]x[/] flag" in drawn(app)
            await close_dialog(pilot)

            await pilot.press("2")
            await settle(pilot)
            browser = app.screen.query_one(MemoryBrowser)
            inspection = app.screen.query_one(InspectionView)
            shown_titles = set()
            for title in sorted({row.title for row in browser.rows.values()}):
                await highlight(pilot, title)
                shown_titles.add(title_text(inspection))
                assert_nothing_raw(app)
            for subject in HOSTILE_SUBJECTS:
                assert f"Inspection · Decision · {subject.lower()}" in shown_titles  # subjects are stored lowercased

            await highlight(pilot, HOSTILE_SUBJECTS[0])
            await pilot.press("e")
            await settle(pilot)
            assert isinstance(app.screen, EditDialog)
            assert title_text(app.screen.query_one("#edit-box")) == f"Edit “{HOSTILE_SUBJECTS[0]}”"
            await close_dialog(pilot)

            command = next(row.title for row in browser.rows.values() if "RED" in row.title)
            await highlight(pilot, command)
            text = str(inspection.query_one("#inspection-text", Static).content)
            assert "\x1b" not in text and _escape_removed(text)
            await pilot.press("e")
            await settle(pilot)
            assert isinstance(app.screen, EditDialog)
            assert "\x1b" not in app.screen.query_one("#edit-text", TextArea).text
            assert_nothing_raw(app)
            await close_dialog(pilot)
            await pilot.press("d")
            await settle(pilot)
            assert isinstance(app.screen, DeleteDialog)
            assert _escape_removed(str(app.screen.query_one("#delete-text", Static).content))
            assert_nothing_raw(app)
            await close_dialog(pilot)

            await highlight(pilot, HOSTILE_SUBJECTS[4])
            await pilot.click("#inspection", offset=(16, 0))  # on the title: a live @click would quit the app
            await settle(pilot)
            assert app.is_running and isinstance(app.screen, MainScreen)

            await pilot.press("slash")
            await settle(pilot)
            assert isinstance(app.screen, SearchDialog)
            app.screen.query_one("#search-input", Input).value = "[bold red]x[/]"
            await pilot.press("enter")
            await settle(pilot)
            assert title_text(app.screen.query_one("#search-result")) == "Rendered recall · “[bold red]x[/]”"
            assert_nothing_raw(app)
            await close_dialog(pilot)

            await pilot.press("3")
            await settle(pilot)
            assert_nothing_raw(app)
            await pilot.press("enter")  # the session that wrote every hostile note and ran the escaped command
            await settle(pilot)
            assert isinstance(app.screen, SessionDialog)
            assert _escape_removed(drawn(app)) and f"[{HOSTILE_SUBJECTS[4].lower()}]" in drawn(app)
            assert_nothing_raw(app)
            await close_dialog(pilot)
            assert app.is_running

    asyncio.run(run())
    assert errors == []


def test_every_author_string_reaches_the_screen_through_the_text_helpers() -> None:
    """No f-string is parsed as markup anywhere in the TUI: titles and markup take literals or $variables only."""
    root = Path(__file__).resolve().parent.parent / "cortex_tui"
    offenders = []
    pattern = re.compile(r"(border_(sub)?title\s*=\s*\(?\s*f[\"']|from_markup\(\s*f[\"']|Static\(\s*f[\"'])")
    for path in sorted(root.rglob("*.py")):
        for match in pattern.finditer(path.read_text()):
            offenders.append(f"{path.relative_to(root)}: {match.group(0)}")
    assert offenders == []
