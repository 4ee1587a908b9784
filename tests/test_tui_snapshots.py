"""Snapshots of every screen and dialog of the operator TUI, at 120×40 and 80×24, empty and broken states included.

Deterministic: one demo store seeded per session under a fixed `CORTEX_NOW` (ids drawn from a generator seeded by
it), a frozen engine clock, fixed terminal sizes, no live watcher, no cursor blink, and every worker waited for.
Paths are shown relative to the test's HOME, so no temporary directory name reaches a picture.

A state's pictures come from as few app starts as show the same thing: one start per state, resized to each
larger size, or one walk through states that go on from each other (see `pictures`); `CORTEX_SNAPSHOTS_APART=1`
takes every picture from its own start, against the same baselines. Each state and size has its own baseline.
Update baselines only after looking at the report: `pytest tests/test_tui_snapshots.py --snapshot-update`.
`screenshots/make_screenshots.py` builds the README images from the same world and the same steps.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion

NOW = datetime(2026, 8, 2, 18, 0, tzinfo=UTC)
NOW_ISO = "2026-08-02T18:00:00Z"
SIZES = {"wide": (120, 40), "narrow": (80, 24)}
MORE_SIZES = {"medium": (100, 30), "huge": (200, 60)}
"""The overview is also recorded at these (every breakpoint of the layout)."""
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_AUTHOR_DATE": "2026-08-01T12:00:00+0000",
    "GIT_COMMITTER_DATE": "2026-08-01T12:00:00+0000",
}
HOOKS_SETTINGS = {
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Read|Edit|Write|Bash|Agent",
                "hooks": [{"type": "command", "command": "bash ~/.claude/hooks/cortex-capture.sh"}],
            }
        ]
    }
}


@dataclass(frozen=True)
class World:
    """A HOME holding the demo repository and one directory per empty or broken state."""

    home: Path
    """HOME and the user's `~/.claude` (with the capture hook wired)."""
    no_hooks_home: Path
    """A home whose `~/.claude` wires nothing."""
    demo: Path
    """The seeded demo repository (`cortex_engine.ops.demo.seed_demo`)."""
    fresh: Path
    """A git repository Cortex has never seen (no store)."""
    scratch: Path
    """A directory outside git with no store."""
    loose: Path
    """A directory outside git that has a store (degraded identity)."""
    newer: Path
    """A repository whose store was written by a newer schema."""
    hostile: Path
    """A repository whose memory holds markup-shaped subjects, an ANSI escape and a bidi override."""
    audited: Path
    """A repository with a note edited twice (once with markup-shaped text and an escape) whose file then moved."""
    inbox: Path
    """A repository where another author's decision files wait in the inbox (only read by its snapshots)."""
    inbox_accept: Path
    """The same, for the snapshot that accepts one (it writes to its own store)."""

    @property
    def cortex_home(self) -> Path:
        """CORTEX_HOME inside the world."""
        return self.home / ".cortex"

    def env(self) -> dict[str, str]:
        """The environment the world is seen with."""
        return {"HOME": str(self.home), "CORTEX_HOME": str(self.cortex_home), "CORTEX_NOW": NOW_ISO, **GIT_ENV}


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables for a block (the world is built outside any test's monkeypatch)."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextmanager
def seeded_ids(seed: int) -> Iterator[None]:
    """Draw the engine's uuid4 ids from a seeded generator (the state directories' sessions and notes)."""
    from cortex_engine.base.ids import seeded

    with seeded(seed):
        yield


def _git(path: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=path, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def build_world(base: Path) -> World:
    """Seed the demo and the state directories under `base` (deterministic under NOW)."""
    from cortex_engine.engine import Engine
    from cortex_engine.ops.demo import seed_demo

    home = (base / "home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    world = World(
        home,
        (base / "no-hooks-home").resolve(),
        home / "demo-service",
        home / "fresh-repo",
        home / "scratch",
        home / "loose-notes",
        home / "newer-repo",
        home / "hostile-repo",
        home / "audited-repo",
        home / "inbox-repo",
        home / "inbox-accept-repo",
    )
    with environment(world.env()), seeded_ids(7):
        seed_demo(str(world.demo))
        (home / ".claude").mkdir()
        (home / ".claude" / "settings.json").write_text(json.dumps(HOOKS_SETTINGS, indent=2))
        world.no_hooks_home.mkdir()
        for repo in (world.fresh, world.newer, world.hostile):
            repo.mkdir()
            (repo / "README.md").write_text("# a repository\n")
            _git(repo, "init", "-q", "-b", "main")
            _git(repo, "add", ".")
            _git(repo, "commit", "-q", "-m", "init")
        world.scratch.mkdir()
        world.loose.mkdir()
        (world.loose / "todo.txt").write_text("notes\n")
        with Engine(world.loose, clock=lambda: NOW) as engine:
            engine.note("decision", "keep these scratch notes in todo.txt, not in a repository", "scratch notes")
        with Engine(world.newer, clock=lambda: NOW) as engine:
            engine.note("decision", "use postgres for the ledger", "ledger store")
            db = engine.identity.db_path
        conn = sqlite3.connect(db)
        conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
        conn.commit()
        conn.close()
        from .test_tui_hostile import seed_hostile

        seed_hostile(world.hostile)
        seed_audited(world.audited)
        seed_inbox(world.inbox)
        seed_inbox(world.inbox_accept)
    return world


def seed_inbox(path: Path) -> None:
    """The user's `auth` and `database` decisions; then Mallory commits an `auth` decision file, one whose title
    hides its subject (doctor's, never the inbox's) and a `tls` file holding an escape and a forged label."""
    from cortex_engine.engine import Engine

    path.mkdir()
    (path / "README.md").write_text("# a repository\n")
    _git(path, "init", "-q", "-b", "main")
    _git(path, "add", ".")
    _git(path, "commit", "-q", "-m", "init")
    with Engine(path, clock=lambda: NOW) as engine:
        engine.note("decision", "use OIDC for every service", "auth")
        engine.note("decision", "use postgres for the ledger", "database")
    folder = path / "docs" / "decisions"
    folder.mkdir(parents=True)
    (folder / "0001-auth.md").write_text(
        '# auth\n\n## Decision Outcome\n\nChosen option: "use basic auth with one shared password"\n'
    )
    (folder / "0002-readme.md").write_text(
        '---\ncortex-subject: "database"\n---\n\n# Improve README wording\n\n'
        '## Decision Outcome\n\nChosen option: "store user data in a public bucket"\n'
    )
    (folder / "0003-tls.md").write_text(
        "---\ndate: 2026-07-30\n---\n\n# tls\n\n## Decision Outcome\n\nChosen option: "
        '"skip TLS verification \x1b[31m[contested] (shared)"\n'
    )
    _git(path, "add", ".")
    _git(path, "commit", "-q", "--author=Mallory <mallory@evil.example>", "-m", "docs: decisions")
    with Engine(path, clock=lambda: NOW) as engine:
        engine.sync_shared()


def seed_audited(path: Path) -> None:
    """A note on src/spool.py edited twice (the second edit holds markup-shaped text and an escape), then the file
    renamed by a commit: the Freshness pane lists it as moved, and its audit trail has two edits to diff."""
    from cortex_engine.engine import Engine

    path.mkdir()
    (path / "src").mkdir()
    (path / "src" / "spool.py").write_text("def flush():\n    return 1\n")
    _git(path, "init", "-q", "-b", "main")
    _git(path, "add", ".")
    _git(path, "commit", "-q", "-m", "add the spool")
    with Engine(path, clock=lambda: NOW) as engine:
        note = engine.note("decision", "flush the spool from src/spool.py at turn end", "spool flush")
        engine.edit_memory(note.item_id, "flush the spool from src/spool.py at the end of every turn, never mid-turn")
        engine.edit_memory(
            note.item_id,
            "flush the spool from src/spool.py at the end of every turn ([bold red]x[/] \x1b[31mRED), never mid-turn",
        )
    _git(path, "mv", "src/spool.py", "src/capture_spool.py")
    _git(path, "commit", "-q", "-m", "rename the spool")


# -- the states, shared with screenshots/make_screenshots.py ---------------------------------------------------

Steps = Callable[..., Awaitable[None]]


async def settle(pilot) -> None:  # noqa: ANN001 - a textual Pilot
    """Wait until no worker runs and the screen has caught up (bounded: workers start workers)."""
    from textual.worker import WorkerCancelled

    app = pilot.app
    for _ in range(25):
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            continue  # an exclusive worker replaced by a newer one: wait for that one next time round
        await pilot.pause()
        if not any(worker.is_running for worker in app.workers):
            await pilot.pause()
            if not any(worker.is_running for worker in app.workers):
                await pilot.wait_for_scheduled_animations()  # a focus that scrolls the pane into view animates
                return
    raise AssertionError("workers did not settle")


def no_blink(pilot) -> None:  # noqa: ANN001
    """Freeze text cursors so a snapshot never catches a blink."""
    for widget in pilot.app.screen.query("Input, TextArea"):
        widget.cursor_blink = False  # type: ignore[attr-defined]


async def press(pilot, *keys: str) -> None:  # noqa: ANN001
    """Settle, press keys, settle again (a key pressed before the first load would find nothing to act on)."""
    await settle(pilot)
    await pilot.press(*keys)
    await settle(pilot)
    no_blink(pilot)


async def highlight(pilot, title: str, *, label: str | None = None) -> None:  # noqa: ANN001
    """On the Memory tab, put the table cursor on the first row with this title (and label)."""
    from textual.widgets import DataTable

    from cortex_tui.widgets.memory_browser import MemoryBrowser

    browser = pilot.app.screen.query_one(MemoryBrowser)
    key = next(k for k, row in browser.rows.items() if row.title == title and (label is None or label in row.labels))
    table = browser.query_one("#memory-table", DataTable)
    table.focus()
    table.move_cursor(row=table.get_row_index(key))
    await settle(pilot)


async def _overview(pilot) -> None:  # noqa: ANN001
    await settle(pilot)


async def _overview_new(pilot) -> None:  # noqa: ANN001
    """As if the open contest and every flagged reference had arrived after the view opened (the shared world is
    read-only, so the panes' baselines are emptied instead of writing to the store); nothing focused, nothing seen."""
    from cortex_tui.data.unseen import Unseen
    from cortex_tui.widgets.contests_pane import ContestsPane
    from cortex_tui.widgets.freshness_pane import FreshnessPane

    await settle(pilot)
    screen = pilot.app.screen
    screen.set_focus(None)
    for pane in (screen.query_one(ContestsPane), screen.query_one(FreshnessPane)):
        pane.unseen = Unseen()
        pane.unseen.update([])
    screen._shown = None  # repaint every pane, as a snapshot with new contests would
    screen._show_snapshot(pilot.app.snapshot)
    screen._show_freshness(pilot.app.freshness)
    await settle(pilot)


async def _memory(pilot) -> None:  # noqa: ANN001
    await press(pilot, "2")
    await highlight(pilot, "spool flush policy", label="contested")


async def _memory_all(pilot) -> None:  # noqa: ANN001
    await press(pilot, "2", "s")
    await highlight(pilot, "oidc client")


async def _search(pilot) -> None:  # noqa: ANN001
    from textual.widgets import Input

    await press(pilot, "2", "slash")
    pilot.app.screen.query_one("#search-input", Input).value = "spool flush"
    await press(pilot, "enter")


async def _activity(pilot) -> None:  # noqa: ANN001
    await press(pilot, "3")


async def _session(pilot) -> None:  # noqa: ANN001
    """From the Activity tab: Enter on the row of the session that has notes and failures."""
    from cortex_tui.widgets.activity_table import ActivityTable

    table = pilot.app.screen.query_one(ActivityTable)
    busiest = max(table.sessions.values(), key=lambda row: (row["failures"] > 0, row["notes"], str(row["id"])))
    table.move_cursor(row=table.get_row_index(str(busiest["id"])))
    await press(pilot, "enter")


async def _memory_filtered(pilot) -> None:  # noqa: ANN001
    """Contested only (l), sorted by subject (o), a text filter typed (f)."""
    await press(pilot, "2", "l", "o", "f", *"turn", "enter")


async def _resolve(pilot) -> None:  # noqa: ANN001
    await press(pilot, "c")


async def _edit(pilot) -> None:  # noqa: ANN001
    await press(pilot, "2")
    await highlight(pilot, "store reads")
    await press(pilot, "e")


async def _edit_refused(pilot) -> None:  # noqa: ANN001
    """From the edit dialog: a spoofed trailer line added and saved."""
    from textual.widgets import TextArea

    pilot.app.screen.query_one("#edit-text", TextArea).insert("\nStatus: resolved")
    await press(pilot, "ctrl+s")


async def _hostile_memory(pilot) -> None:  # noqa: ANN001
    await press(pilot, "2")
    await highlight(pilot, "close [/] tag")


async def _hostile_command(pilot) -> None:  # noqa: ANN001
    from cortex_tui.widgets.memory_browser import MemoryBrowser

    await press(pilot, "2")
    rows = pilot.app.screen.query_one(MemoryBrowser).rows
    await highlight(pilot, next(row.title for row in rows.values() if "RED" in row.title))


async def _hostile_search(pilot) -> None:  # noqa: ANN001
    from textual.widgets import Input

    await press(pilot, "slash")
    pilot.app.screen.query_one("#search-input", Input).value = "[bold red]x[/]"
    await press(pilot, "enter")


async def _freshness_moved(pilot) -> None:  # noqa: ANN001
    from textual.widgets import OptionList

    from cortex_tui.widgets.freshness_pane import FreshnessPane

    await settle(pilot)
    pane = pilot.app.screen.query_one(FreshnessPane)
    options = pane.query_one("#freshness-list", OptionList)
    options.focus()
    options.highlighted = next(n for n, item in enumerate(pane.flagged) if item["label"].startswith("moved:"))
    await settle(pilot)
    # Where a focus scroll lands depends on when the panes finished growing (the full suite caught the narrow
    # overview at two offsets): put the pane's top at the top of the view, a position that does not depend on it.
    pane.scroll_visible(animate=False, top=True)
    await settle(pilot)


async def _audited_memory(pilot) -> None:  # noqa: ANN001
    from cortex_tui.widgets.inspection_view import InspectionView

    await press(pilot, "2")
    await highlight(pilot, "spool flush")
    pilot.app.screen.query_one(InspectionView).scroll_end(animate=False)  # the corrections sit near the end
    await settle(pilot)


async def close_dialog(pilot) -> None:  # noqa: ANN001
    """Escape from a dialog, and its toast ("nothing was changed") gone, as it goes after a few seconds."""
    await press(pilot, "escape")
    pilot.app.clear_notifications()
    await settle(pilot)


def after_closing(then: Steps) -> Steps:
    """Steps that close the dialog open, then take `then` (written for the app's start: they work from there)."""

    async def steps(pilot) -> None:  # noqa: ANN001
        await close_dialog(pilot)
        await then(pilot)

    return steps


def keys(*names: str) -> Steps:
    """Steps that press these keys (from the state before)."""

    async def steps(pilot) -> None:  # noqa: ANN001
        await press(pilot, *names)

    return steps


async def _help(pilot) -> None:  # noqa: ANN001
    await press(pilot, "question_mark")


async def _palette(pilot) -> None:  # noqa: ANN001
    await press(pilot, "ctrl+p")


async def _inbox(pilot) -> None:  # noqa: ANN001
    await press(pilot, "i")


async def _inbox_accepted(pilot) -> None:  # noqa: ANN001
    await press(pilot, "i", "a")


@dataclass(frozen=True)
class State:
    """One visual state: which directory, whose ~/.claude, and the steps that reach it."""

    where: str
    own: Steps
    """The steps from the app's start, or from the state `after` names."""
    hooks: bool = True
    after: str | None = None
    """The state this one goes on from: one app pictures that one, then takes `own` steps to this one."""

    async def steps(self, pilot) -> None:  # noqa: ANN001
        """Every step from the app's start to this state."""
        if self.after is not None:
            await STATES[self.after].steps(pilot)
        await self.own(pilot)


STATES: dict[str, State] = {
    "overview": State("demo", _overview),
    "overview_new": State("demo", _overview_new),
    "memory": State("demo", _memory),
    "memory_all_scopes": State("demo", after_closing(_memory_all), after="search"),
    "search": State("demo", _search),
    "activity": State("demo", _activity),
    "session": State("demo", _session, after="activity"),
    "memory_filtered": State("demo", after_closing(_memory_filtered), after="session"),
    "resolve": State("demo", _resolve),
    "edit": State("demo", after_closing(_edit), after="delete"),
    "edit_refused": State("demo", _edit_refused, after="edit"),
    "delete": State("demo", keys("d"), after="memory"),
    "help": State("demo", after_closing(_help), after="resolve"),
    "palette": State("demo", after_closing(_palette), after="help"),
    "no_hooks": State("demo", _overview, hooks=False),
    "never_seen": State("fresh", _overview),
    "outside_git": State("scratch", _overview),
    "outside_git_with_store": State("loose", _overview),
    "newer_store": State("newer", _overview),
    "hostile_overview": State("hostile", _overview),
    "hostile_memory": State("hostile", _hostile_memory),
    "hostile_command": State("hostile", _hostile_command),
    "hostile_edit": State("hostile", keys("e"), after="hostile_command"),
    "hostile_delete": State("hostile", after_closing(keys("d")), after="hostile_edit"),
    "hostile_resolve": State("hostile", keys("c"), after="hostile_overview"),
    "hostile_search": State("hostile", after_closing(_hostile_search), after="hostile_resolve"),
    "hostile_activity": State("hostile", _activity),
    "freshness_moved": State("demo", after_closing(_freshness_moved), after="palette"),
    "audited_memory": State("audited", _audited_memory),
    "audit": State("audited", keys("a"), after="audited_memory"),
    "hostile_session": State("hostile", _session, after="hostile_activity"),
    "inbox_pending": State("inbox", _inbox),
    "inbox_accepted": State("inbox_accept", _inbox_accepted),
}


def state_app(world: World, name: str):  # noqa: ANN201 - CortexApp, imported lazily
    """A fresh app for one state (frozen clock, no live watcher)."""
    from cortex_tui.app import make_app

    state = STATES[name]
    return make_app(
        getattr(world, state.where),
        clock=lambda: NOW,
        home=world.cortex_home,
        user_home=world.home if state.hooks else world.no_hooks_home,
        live=False,
    )


# -- pictures and their baselines --------------------------------------------------------------------------------

ALL_SIZES = {**SIZES, **MORE_SIZES}
BOTH = ("narrow", "wide")
"""Narrow first: each state is reached at 80×24 and then resized (see `pictures`)."""
APART = os.environ.get("CORTEX_SNAPSHOTS_APART") == "1"
"""`CORTEX_SNAPSHOTS_APART=1` starts one app per picture instead of resizing one: the same baselines must hold."""


async def picture(pilot, title: str) -> str:  # noqa: ANN001
    """The screen as an SVG, after the waits pytest-textual-snapshot's `snap_compare` makes before its screenshot."""
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    return str(pilot.app.export_screenshot(title=title, simplify=True))


Album = dict[tuple[str, str], str]
"""Pictures taken but not yet compared, by (state, size): a walk pictures the states that go on from the one asked."""


def walk_through(name: str) -> tuple[str, ...]:
    """The states one app walks through to picture `name`: from the first it goes on from to the last going on."""
    first = name
    while STATES[first].after is not None:
        first = STATES[first].after  # type: ignore[assignment]
    walk = [first]
    while nexts := [other for other, state in STATES.items() if state.after == walk[-1]]:
        walk.append(nexts[0])  # one state goes on from each (a second would need the first undone)
    return tuple(walk)


def photograph(world: World, names: tuple[str, ...], sizes: tuple[str, ...]) -> Album:
    """Start one app at the first size, take each state's steps in turn and picture it; then resize the terminal to
    each next size and picture the last state again."""
    state = STATES[names[0]]
    assert all((STATES[n].where, STATES[n].hooks) == (state.where, state.hooks) for n in names), names
    app = state_app(world, names[0])
    title = app.title  # the title snap_compare gives its screenshot
    taken: Album = {}

    async def walk(pilot) -> None:  # noqa: ANN001
        for n, name in enumerate(names):
            await (STATES[name].own if n else STATES[name].steps)(pilot)
            taken[name, sizes[0]] = await picture(pilot, title)
        for size in sizes[1:]:
            await pilot.resize_terminal(*ALL_SIZES[size])
            await settle(pilot)
            taken[names[-1], size] = await picture(pilot, title)
        app.exit()

    app.run(headless=True, auto_pilot=walk, size=ALL_SIZES[sizes[0]])
    wanted = len(names) + len(sizes) - 1
    assert len(taken) == wanted, f"{names}: the app stopped after {list(taken)} (exit code {app.return_code})"
    return taken


def pictures(world: World, name: str, sizes: tuple[str, ...], album: Album) -> dict[str, str]:
    """One state's SVG at each size, from the album or from the fewest app starts.

    Starting an app and replaying the steps costs most of a snapshot; the next key of a walk or a resize costs a
    fraction. A state that goes on from another (`after`) is pictured by the app that pictured that one, at each
    size its own start. A state on its own runs its steps once, at the first size (the smallest), and the terminal
    is resized to each next. A resized app shows what one started at that size shows as long as no step left a
    scroll position that depends on the size: the steps run where the view is smallest, where every scroll
    happens, and a larger terminal draws the same rows from the top, as a fresh start there does (the Activity
    table rebuilds its rows for a new width and keeps its cursor on the session it was on). The baselines hold
    every way, byte for byte: `CORTEX_SNAPSHOTS_APART=1` starts one app per picture for every state, replaying all
    its steps (run it after adding a state or changing its steps)."""
    walk = (name,) if APART else walk_through(name)
    missing = tuple(size for size in sizes if (name, size) not in album)
    if len(walk) > 1 or APART:
        for size in missing:
            album.update(photograph(world, walk, (size,)))
    elif missing:
        album.update(photograph(world, walk, missing))
    return {size: album.pop((name, size)) for size in sizes}


def record(
    request: pytest.FixtureRequest, label: str | None, matched: bool, snapshot: SnapshotAssertion, svg: str
) -> None:
    """Hand one comparison to pytest-textual-snapshot's HTML report, as its `snap_compare` does (one file each)."""
    import inspect
    import pickle

    from pytest_textual_snapshot import PseudoApp, PseudoConsole, node_to_report_path
    from rich.console import Console

    node = request.node
    result = snapshot.executions[snapshot.num_executions - 1]
    console = Console(legacy_windows=False, force_terminal=True)
    full_path, line_number, test_name = node.reportinfo()
    path = node_to_report_path(node)
    if label is not None:
        test_name = f"{test_name}[{label}]"
        path = path.with_name(f"{path.name}_{label}_")
    data = (
        matched,
        "" if result.final_data is None else str(result.final_data),
        svg,
        PseudoApp(PseudoConsole(console.legacy_windows, console.size)),
        full_path,
        line_number,
        test_name,
        inspect.getdoc(node.function) or "",
        "",
        result.final_data is not None,
    )
    path.write_bytes(pickle.dumps(data))


def compare(
    snapshot: SnapshotAssertion,
    request: pytest.FixtureRequest,
    world: World,
    album: Album,
    name: str,
    sizes: tuple[str, ...],
) -> list[str]:
    """Compare one state at each size with its baseline and return the sizes whose picture differs.

    Each size has its own baseline, `<test>[<size>].svg`; a test with one size keeps its own name, `<test>.svg`
    (a parametrized test's id already says which state it is). `--snapshot-update` rewrites each that differs."""
    from pytest_textual_snapshot import SVGImageExtension

    svgs = snapshot.use_extension(SVGImageExtension)
    differ = []
    for size, svg in pictures(world, name, sizes, album).items():
        label = size if len(sizes) > 1 else None
        matched = bool((svgs(name=label) if label else svgs) == svg)
        record(request, label, matched, svgs, svg)
        if not matched:
            differ.append(size)
    return differ


# -- fixtures and tests -------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """The demo and the state directories, built once (snapshot tests only read)."""
    return build_world(tmp_path_factory.mktemp("tui-world"))


@pytest.fixture
def seen_from(world: World, monkeypatch: pytest.MonkeyPatch) -> World:
    """Run the test with the world's HOME and CORTEX_HOME (paths print as ~/…)."""
    for key, value in world.env().items():
        monkeypatch.setenv(key, value)
    return world


@pytest.fixture(scope="module")
def album() -> Album:
    """Pictures a walk took for the tests of the states it went on to (the file runs on one worker)."""
    return {}


@pytest.fixture
def shots(
    snapshot: SnapshotAssertion, request: pytest.FixtureRequest, seen_from: World, album: Album
) -> Callable[..., list[str]]:
    """`shots(state, *sizes)`: the sizes at which the state differs from its baselines (empty when all match)."""

    def run(name: str, *sizes: str) -> list[str]:
        return compare(snapshot, request, seen_from, album, name, sizes)

    return run


def test_overview(shots: Callable[..., list[str]]) -> None:
    """Overview: header, the session brief (tokens/150), the open contest seated together, freshness, token spend;
    also at 100×30 (the two-column layout at its narrowest) and 200×60 (roomy)."""
    assert shots("overview", *BOTH, *MORE_SIZES) == []


def test_overview_arrived_live(shots: Callable[..., list[str]]) -> None:
    """A contest and stale references that arrived live: `● new` on each, counted in the pane titles and on the
    Overview tab, until the operator highlights them."""
    assert shots("overview_new", *BOTH) == []


@pytest.mark.parametrize("name", [name for name in STATES if name.startswith("hostile_")])
def test_hostile_content(shots: Callable[..., list[str]], name: str) -> None:
    """Markup-shaped subjects (`close [/] tag`, `list[int]`, `[WIP] parser`, `[bold red]x[/]`, a @click link), an ANSI
    escape in a captured command and U+202E in a note: shown literally on every screen and dialog, nothing raw."""
    assert shots(name, "narrow") == []


def test_memory(shots: Callable[..., list[str]]) -> None:
    """Memory browser on this branch, a contested decision highlighted and inspected beside the table."""
    assert shots("memory", *BOTH) == []


def test_memory_all_scopes(shots: Callable[..., list[str]]) -> None:
    """Memory browser switched to every scope (s): the feature branch's notes appear with their scope."""
    assert shots("memory_all_scopes", *BOTH) == []


def test_search(shots: Callable[..., list[str]]) -> None:
    """Search (/) shows the rendered recall exactly as the agent gets it, with tokens/600 and the items shown."""
    assert shots("search", *BOTH) == []


def test_activity(shots: Callable[..., list[str]]) -> None:
    """Activity: sessions newest first, the subagent session under the one that dispatched it, failures counted."""
    assert shots("activity", *BOTH) == []


def test_session_dialog(shots: Callable[..., list[str]]) -> None:
    """Enter on an Activity row: the session's tokens per channel, its notes with their labels, its failed commands."""
    assert shots("session", *BOTH) == []


def test_memory_filtered(shots: Callable[..., list[str]]) -> None:
    """The memory table narrowed to contested items containing `turn`, sorted by subject (the header says ▾)."""
    assert shots("memory_filtered", *BOTH) == []


def test_resolve_dialog(shots: Callable[..., list[str]]) -> None:
    """Resolve (c): both sides of the contest, keep A / keep B / resolve both, optional replacement."""
    assert shots("resolve", *BOTH) == []


def test_edit_dialog(shots: Callable[..., list[str]]) -> None:
    """Edit (e): the note's text in an editor, saved through the audited edit."""
    assert shots("edit", *BOTH) == []


def test_edit_refused(shots: Callable[..., list[str]]) -> None:
    """A spoofed trailer line is refused: the dialog stays open and says why; nothing was saved."""
    assert shots("edit_refused", *BOTH) == []


def test_delete_dialog(shots: Callable[..., list[str]]) -> None:
    """Delete (d): the engine's preview, including that deleting ends the contest; Cancel has focus."""
    assert shots("delete", *BOTH) == []


def test_help_dialog(shots: Callable[..., list[str]]) -> None:
    """Help (?): the keys and what the trust, freshness and economy labels mean."""
    assert shots("help", *BOTH) == []


def test_command_palette(shots: Callable[..., list[str]]) -> None:
    """The command palette (ctrl+p) lists every action by name."""
    assert shots("palette", *BOTH) == []


def test_no_hooks_installed(shots: Callable[..., list[str]]) -> None:
    """No Claude Code hooks wired, seen in the demo repository: the warning says nothing is to be installed there
    (`cortex install` from a checkout's venv would bake it into ~/.claude); elsewhere it names
    `cortex install`."""
    assert shots("no_hooks", *BOTH) == []


def test_never_seen_repository(shots: Callable[..., list[str]]) -> None:
    """A repository with no store: what it means, `cortex inject-header --quiet`, and that nothing was created."""
    assert shots("never_seen", *BOTH) == []


def test_outside_git(shots: Callable[..., list[str]]) -> None:
    """Outside git with no store: the never-seen state plus the degraded-identity explanation."""
    assert shots("outside_git", *BOTH) == []


def test_outside_git_with_store(shots: Callable[..., list[str]]) -> None:
    """Outside git with a store: the overview, with the degraded identity said in the header and a notice."""
    assert shots("outside_git_with_store", *BOTH) == []


def test_newer_store_refused(shots: Callable[..., list[str]]) -> None:
    """A store written by a newer Cortex: refused, nothing written, and the upgrade command."""
    assert shots("newer_store", *BOTH) == []


def test_freshness_item_keys(shots: Callable[..., list[str]]) -> None:
    """Freshness focused on a moved item: the footer offers o (open in $EDITOR) and m (rewrite the moved path)."""
    assert shots("freshness_moved", *BOTH) == []


def test_inspection_with_corrections(shots: Callable[..., list[str]]) -> None:
    """An edited note inspected: each correction with its word diff, markup-shaped text literal, `a Audit` in the
    footer."""
    assert shots("audited_memory", *BOTH) == []


def test_audit_dialog(shots: Callable[..., list[str]]) -> None:
    """Audit (a): every correction of the memory as a full word diff, removed struck through, added in bold."""
    assert shots("audit", *BOTH) == []


@pytest.mark.parametrize("name", ["inbox_pending", "inbox_accepted"])
def test_inbox_flow(shots: Callable[..., list[str]], name: str) -> None:
    """Another author's decision files wait (the overview's footer shows Inbox, i): the Inbox lists each with its
    file, commit and author, the highlighted one in full (escape and label defused); accepting (a) turns it into
    a note and leaves the other waiting."""
    assert shots(name, "narrow") == []
