"""Operator keys for stale and drifted memory, driven by Textual's pilot with the store asserted afterwards.

On a Freshness item: `o` opens the file in $EDITOR at the drifted span (the app suspended around it), `m` rewrites
a moved path in the note (audited, refused if the note changed meanwhile). Elsewhere: `a` shows the audit trail as
word diffs, `Y` copies a memory's text, and letter keys act in dialogs (`a`/`b` keep a side, `y` saves an edit).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .conftest import Repo
from .test_tui_behaviour import FLUSH, NO_FLUSH, SMALL, _note_item, demo, drive, engine_for, spool_notes  # noqa: F401
from .test_tui_snapshots import highlight, settle

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def fake_editor(tmp_path: Path, name: str = "vim") -> tuple[Path, Path]:
    """An executable called `name` that writes its arguments, one a line, to a file; returns (editor, that file)."""
    out = tmp_path / "editor-argv.txt"
    editor = tmp_path / "bin" / name
    editor.parent.mkdir(exist_ok=True)
    editor.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{out}'\n")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    return editor, out


def record_suspends(app, events: list[str], argv: Path) -> None:  # noqa: ANN001 - a CortexApp
    """Replace the app's suspend (a headless driver cannot suspend) with one that records whether the editor ran
    inside it."""

    @contextmanager
    def suspend() -> Iterator[None]:
        events.append("suspend")
        yield
        events.append(f"resume (editor ran: {argv.exists()})")

    app.suspend = suspend


async def focus_freshness(app, pilot, label: str) -> dict:  # noqa: ANN001
    """Wait for the first freshness check, focus the pane and highlight the item whose label starts with `label`."""
    from textual.widgets import OptionList

    from cortex_tui.widgets.freshness_pane import FreshnessPane

    pane = app.screen.query_one(FreshnessPane)
    for _ in range(10):  # bounded: the first check is a worker the first load's result starts, not a timer
        if pane.flagged:
            break
        await settle(pilot)
    assert pane.flagged
    options = pane.query_one("#freshness-list", OptionList)
    options.focus()
    index = next(n for n, item in enumerate(pane.flagged) if item["label"].startswith(label))
    options.highlighted = index
    await settle(pilot)
    return pane.flagged[index]


def drifted_repo(repo: Repo) -> Path:
    """A note on `flush()` (line 5 of src/spool.py), whose body then changed: drifted."""
    head = "def other():\n    return 2\n\n\n"
    repo.write("src/spool.py", head + "def flush():\n    return 1\n")
    repo.commit("add the spool")
    with engine_for(repo.path) as engine:
        engine.note("decision", "flush() in src/spool.py runs at turn end", "spool flush")
    return repo.write("src/spool.py", head + "def flush():\n    return 42\n")


def test_o_opens_the_drifted_span_in_the_editor_with_the_app_suspended(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`o` on a drifted item runs $EDITOR with `+5 src/spool.py` (where flush() starts), inside the app's suspend."""
    path = drifted_repo(repo)
    editor, argv = fake_editor(tmp_path)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(editor))
    events: list[str] = []

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        record_suspends(app, events, argv)
        item = await focus_freshness(app, pilot, "drifted:")
        assert item["label"] == "drifted: src/spool.py:flush changed"
        assert app.screen.check_action("open_editor", ()) is True
        assert app.screen.check_action("rewrite_moved", ()) is False  # nothing moved: m is not offered
        await pilot.press("o")
        await settle(pilot)

    notes = drive(repo.path, steps, size=SMALL)
    assert events == ["suspend", "resume (editor ran: True)"]
    assert argv.read_text().splitlines() == ["+5", os.path.realpath(path)]
    assert not [n for n in notes if n[0] != "information"]


def test_o_without_an_editor_or_a_file_says_so_and_runs_nothing(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No $EDITOR, or one not on PATH: a notice naming the variable; a file gone from the checkout: a notice naming
    the file. Nothing is suspended and nothing runs."""
    repo.write("src/gone.py", "x = 1\n")
    repo.write("src/old.py", "y = 1\n")
    repo.commit("two files")
    with engine_for(repo.path) as engine:
        engine.note("insight", "the retry budget lives in src/gone.py")
        engine.note("insight", "the ledger format lives in src/old.py")
    repo.git("rm", "-q", "src/gone.py")
    repo.git("mv", "src/old.py", "src/new.py")
    repo.commit("delete one, rename the other")
    _, argv = fake_editor(tmp_path)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    events: list[str] = []

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        record_suspends(app, events, argv)
        await focus_freshness(app, pilot, "moved:")
        await pilot.press("o")
        await settle(pilot)
        monkeypatch.setenv("EDITOR", "no-such-editor-anywhere --wait")
        await pilot.press("o")
        await settle(pilot)
        await focus_freshness(app, pilot, "stale:")
        await pilot.press("o")
        await settle(pilot)

    notes = drive(repo.path, steps, size=SMALL)
    assert events == [] and not argv.exists()
    assert [(title, text) for severity, title, text in notes if severity == "warning"] == [
        ("No editor", "Set $EDITOR (for example `export EDITOR=vim`) to open files from Cortex. (src/new.py)"),
        ("No editor", "The editor 'no-such-editor-anywhere' from $EDITOR was not found on PATH. (src/new.py)"),
        (
            "Nothing to open",
            "src/gone.py is gone from the checkout (deleted, or renamed where git cannot follow); "
            "nothing to open · Enter shows the memory",
        ),
    ]


def test_editor_command_follows_each_editors_line_convention(tmp_path: Path) -> None:
    """vi-likes get `+N file`, VS Code `-g file:N`, helix `file:N`; an unknown editor the file only; arguments kept."""
    from cortex_tui.data.editor import EditorUnavailable, editor_command

    for name in ("nvim", "code", "hx", "myeditor"):
        fake_editor(tmp_path, name)
    env = {"PATH": str(tmp_path / "bin")}
    assert editor_command("/r/a.py", 7, {**env, "EDITOR": "nvim"}).argv == ["nvim", "+7", "/r/a.py"]
    assert editor_command("/r/a.py", 7, {**env, "EDITOR": "code --wait"}).argv == ["code", "--wait", "-g", "/r/a.py:7"]
    assert editor_command("/r/a.py", 7, {**env, "VISUAL": "hx", "EDITOR": "nvim"}).argv == ["hx", "/r/a.py:7"]
    unknown = editor_command("/r/a.py", 7, {**env, "EDITOR": "myeditor"})
    assert (unknown.argv, unknown.at_line) == (["myeditor", "/r/a.py"], False)
    assert editor_command("/r/a.py", None, {**env, "EDITOR": "nvim"}).argv == ["nvim", "/r/a.py"]
    for setting, message in (("", r"Set \$EDITOR"), ("vim 'unclosed", "does not parse"), ("nope", "not found on PATH")):
        with pytest.raises(EditorUnavailable, match=message):
            editor_command("/r/a.py", 7, {**env, "EDITOR": setting})


def moved_repo(repo: Repo) -> str:
    """A note naming src/spool.py, then `git mv` to src/capture_spool.py and a commit; returns the item id."""
    repo.write("src/spool.py", "def flush():\n    pass\n")
    repo.commit("add the spool")
    with engine_for(repo.path) as engine:
        note = engine.note("decision", "flush from src/spool.py at turn end", "spool flush")
    repo.git("mv", "src/spool.py", "src/capture_spool.py")
    repo.commit("rename the spool")
    return note.item_id


def test_m_rewrites_the_moved_path_in_the_note_audited(repo: Repo) -> None:
    """`m` on a moved item: the note names the new path, one `rewrite-moved` audit row, and the pane empties."""
    from cortex_tui.widgets.freshness_pane import FreshnessPane

    item_id = moved_repo(repo)

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        item = await focus_freshness(app, pilot, "moved:")
        assert item["label"] == "moved: src/spool.py → src/capture_spool.py"
        assert app.screen.check_action("rewrite_moved", ()) is True
        await pilot.press("m")
        await settle(pilot)
        assert app.screen.query_one(FreshnessPane).flagged == []

    notes = drive(repo.path, steps, size=SMALL)
    with engine_for(repo.path) as engine:
        shown = engine.inspect_memory(item_id)
    assert shown.item["text"].startswith("decision: flush from src/capture_spool.py at turn end")
    assert [(c["operation"], c["prior_text"]) for c in shown.corrections] == [
        ("rewrite-moved", "flush from src/spool.py at turn end")
    ]
    assert [(title, text.splitlines()[0]) for _, title, text in notes if "rewritten" in title] == [
        ("Moved path rewritten (audited)", f"rewrote {item_id}: src/spool.py → src/capture_spool.py")
    ]


def test_m_refuses_when_the_note_changed_since_the_pane_showed_it(repo: Repo) -> None:
    """The note is edited in another shell after the pane was drawn: `m` refuses, says why, and writes nothing."""
    item_id = moved_repo(repo)
    edited = "flush from src/spool.py at the end of the turn"

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await focus_freshness(app, pilot, "moved:")
        with engine_for(repo.path) as other:
            other.edit_memory(item_id, edited)
        await pilot.press("m")
        await settle(pilot)

    notes = drive(repo.path, steps, size=SMALL)
    refused = [text for severity, title, text in notes if title == "Not rewritten"]
    assert len(refused) == 1 and "changed since it was shown" in refused[0]
    with engine_for(repo.path) as engine:
        shown = engine.inspect_memory(item_id)
    assert shown.item["text"].startswith(f"decision: {edited}")
    assert [c["operation"] for c in shown.corrections] == ["edit"]


def test_a_shows_each_edit_as_a_word_diff(demo: Path) -> None:  # noqa: F811
    """After an edit, `a` on the Memory tab opens the audit trail: the removed words struck, the added ones bold."""
    from textual.widgets import Static

    from cortex_tui.dialogs.audit_dialog import AuditDialog

    target = _note_item(demo, "store reads")
    with engine_for(demo) as engine:
        engine.edit_memory(target, "move the read queries out of src/db/store.py into src/db/queries.py")

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("2")
        await settle(pilot)
        await highlight(pilot, "legacy login")
        assert app.screen.check_action("audit", ()) is False  # no correction: the key is not offered
        await highlight(pilot, "store reads")
        assert app.screen.check_action("audit", ()) is True
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, AuditDialog)
        content = app.screen.query_one("#audit-text", Static).content
        styled = {str(content)[span.start : span.end]: str(span.style) for span in content.spans}
        assert "edited" in str(content)
        assert "strike" in styled["a queries module"] and "bold" in styled["src/db/queries.py"]
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, AuditDialog)

    drive(demo, steps, size=SMALL)


def test_letters_copy_save_and_keep_a_side_but_type_into_text_fields(demo: Path) -> None:  # noqa: F811
    """`Y` copies the highlighted note's words (no kind prefix, no trailers); `y` still copies the id (as shown).
    In Edit, `y` typed in the text is text; with focus on the buttons, `y` saves through the audited edit.
    In Resolve, `b` asks and `b` again keeps side B; while the replacement field has focus, letters are typed.
    (One app does the three: the edit and the contest are on different notes.)"""
    from textual.widgets import Input, TextArea

    from cortex_tui.dialogs.edit_dialog import EditDialog
    from cortex_tui.dialogs.resolve_dialog import ResolveDialog

    copied: list[str] = []

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        app.copy_to_clipboard = copied.append
        await pilot.press("2")
        await settle(pilot)
        await highlight(pilot, "store reads")
        await pilot.press("Y")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)

        await pilot.press("e")
        await settle(pilot)
        area = app.screen.query_one("#edit-text", TextArea)
        await pilot.press("space", "y")
        await settle(pilot)
        assert isinstance(app.screen, EditDialog) and area.text.endswith(" y")
        app.screen.query_one("#save").focus()
        await pilot.press("y")
        await settle(pilot)
        assert not isinstance(app.screen, EditDialog)

        await pilot.press("1")  # the contest is on the Overview
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        field = app.screen.query_one("#replacement", Input)
        assert app.screen.focused is app.screen.query_one("#cancel")
        await pilot.press("tab")  # one Tab from Cancel reaches the replacement field
        await settle(pilot)
        assert app.screen.focused is field
        await pilot.press("a", "b")
        await settle(pilot)
        assert isinstance(app.screen, ResolveDialog) and field.value == "ab"
        field.value = ""
        app.screen.query_one("#cancel").focus()
        await pilot.press("b")  # one keystroke only asks: nothing is settled yet
        await settle(pilot)
        assert isinstance(app.screen, ResolveDialog) and app.screen.armed == "b"
        assert "press b again to keep B (A superseded)" in str(app.screen.query_one("#resolve-box").border_subtitle)
        assert str(app.screen.query_one("#keep-b").label) == "Confirm keep B"
        with engine_for(demo) as engine:
            assert len(engine.contests()) == 1
        await pilot.press("a")  # another letter moves the question, it does not settle
        await settle(pilot)
        assert isinstance(app.screen, ResolveDialog) and app.screen.armed == "a"
        await pilot.press("escape")  # escape takes the question back and keeps the dialog
        await settle(pilot)
        assert isinstance(app.screen, ResolveDialog) and app.screen.armed is None
        await pilot.press("b", "b")
        await settle(pilot)
        assert not isinstance(app.screen, ResolveDialog)

    drive(demo, steps, size=SMALL)
    assert copied == [
        "move the read queries out of src/db/store.py into a queries module",
        _note_item(demo, "store reads").split(":")[-1][:8],  # the id the inspection shows
    ]
    with engine_for(demo) as engine:
        shown = engine.inspect_memory(_note_item(demo, "store reads"))
    assert [(c["operation"], c["new_text"]) for c in shown.corrections] == [
        ("edit", "move the read queries out of src/db/store.py into a queries module y")
    ]
    sides = spool_notes(demo)
    assert (sides[NO_FLUSH]["status"], sides[FLUSH]["status"]) == ("active", "superseded")


def test_enter_on_a_stale_freshness_item_shows_the_memory(repo: Repo) -> None:
    """A stale item is no dead end: Enter opens the Memory tab on that memory, highlighted and inspected; the footer
    says so, and counts memories like the title."""
    from textual.widgets import DataTable

    from cortex_tui.widgets.freshness_pane import FreshnessPane
    from cortex_tui.widgets.memory_browser import MemoryBrowser

    repo.write("src/gone.py", "x = 1\n")
    repo.commit("add a file")
    with engine_for(repo.path) as engine:
        note = engine.note("decision", "keep the cache in src/gone.py", "cache home")
    (repo.path / "src" / "gone.py").unlink()
    repo.commit("delete it")
    seen: dict[str, object] = {}

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        item = await focus_freshness(app, pilot, "stale:")
        assert item["id"] == note.item_id
        pane = app.screen.query_one(FreshnessPane)
        seen["title"], seen["footer"] = str(pane.border_title), str(pane.border_subtitle)
        await pilot.press("enter")
        await settle(pilot)
        browser = app.screen.query_one(MemoryBrowser)
        table = browser.query_one("#memory-table", DataTable)
        seen["tab"] = app.screen.query_one("#tabs").active
        seen["focused"] = app.screen.focused is table
        seen["row"] = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    drive(repo.path, steps, size=SMALL)
    assert seen["tab"] == "memory" and seen["focused"] is True and seen["row"] == note.item_id
    assert "memories: 1 stale" in str(seen["title"])
    assert "⏎ show memory" in str(seen["footer"]) and "memory checked" in str(seen["footer"])


def test_u_asks_then_undoes_the_newest_operator_action(repo: Repo) -> None:
    """`u` asks first (nothing changes); `u` again takes the newest delete back through the audited `Engine.undo`;
    with nothing left to undo it says so."""
    with engine_for(repo.path) as engine:
        note = engine.note("decision", "keep the ledger append-only", "ledger format")
        engine.delete_memory(note.item_id, yes=True)
    seen: dict[str, object] = {}

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        await pilot.press("u")
        await settle(pilot)
        with engine_for(repo.path) as engine:
            seen["after one u"] = [i["id"] for i in engine.list_memory(limit=50).items]
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("u", "u")
        await settle(pilot)

    notes = drive(repo.path, steps, size=SMALL)
    assert note.item_id not in seen["after one u"]  # the first press only asked
    with engine_for(repo.path) as engine:
        assert note.item_id in [i["id"] for i in engine.list_memory(limit=50).items]
    titles = [title for _, title, _ in notes]
    assert titles.count("Undo?") == 2 and "Undone (audited)" in titles and titles[-1] == "Nothing undone"
