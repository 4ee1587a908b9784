"""The Cortex operator app: a live view of one branch's memory, with keys to resolve, edit and delete.

The app owns no rules: every figure and every change goes through the engine API the CLI uses. Reads run
in thread workers, each opening its own engine (SQLite connections never cross threads), and results come
back as messages. Changes made by other processes (hooks, the MCP server, the CLI) arrive through
`live.StoreWatcher` and are coalesced into one reload at a time. The watcher starts as soon as the first load
(started on mount) has located the store, restarts when the store appears or goes, and stops on unmount.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual import on, work
from textual.actions import parse
from textual.app import App, SystemCommand
from textual.reactive import var
from textual.screen import ModalScreen, Screen
from textual.worker import Worker, WorkerState, get_current_worker

from cortex_engine.base.clock import Clock, clock_from_env
from cortex_engine.base.errors import StoreRefused

from .data.snapshot import Snapshot, load_snapshot
from .data.target import StoreTarget
from .events import FreshnessReady, SnapshotReady, StoreChanged, StoreUnavailable
from .failures import report_worker_failure
from .keys import Key, KeyCommands, help_rows, key_action, label, screen_keys
from .live import StoreWatcher
from .screens.main import MainScreen
from .screens.state import StateScreen
from .widgets.memory_browser import PAGE, ROOMY

FRESHNESS_SHOWN = 200
SETTLE_SECONDS = 0.15
"""A store change waits this long for the rest of its burst (one flush commits several times) before a reload."""


TERMINAL_CHECK_SECONDS = 0.5
"""How often the TUI checks that its terminal is still there. Between a hang-up and the next check Textual's input
thread reads end-of-file in a loop at a full core, so the check is frequent (one `tcgetattr`, microseconds): a TUI
started, painted and hung up on used 2.5 CPU-seconds before it quit with a check every 2 seconds, 1.1 with one every
0.5 (tests/test_tui_terminal.py)."""


class CortexApp(App[None]):
    """The operator's side terminal: brief, contests, freshness, spend, memory and activity, kept live."""

    CSS_PATH = "app.tcss"
    TITLE = "Cortex"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide"), (ROOMY, "-roomy")]
    """Below 100 the overview stacks; from ROOMY the Memory tab puts the inspection beside the table."""
    BINDINGS = [
        Key("f1", "help", "Help", show=False, title="Help", tooltip="this help: the keys and what the labels mean"),
    ]
    """Global keys beyond Textual's (ctrl+q quit, ctrl+p palette); screens own the feature keys."""
    COMMANDS = {KeyCommands}
    """The command palette: every documented key's action, found by its name or its description."""

    snapshot: var[Snapshot | None] = var(None, init=False)
    """The newest store read (None until the first load)."""
    freshness: var[tuple[dict[str, Any], dict[str, str]] | None] = var(None, init=False)
    """The newest freshness report and the text of its flagged items."""
    generation: var[int] = var(0, init=False)
    """Bumped each time a snapshot is applied."""
    memory_generation: var[int] = var(0, init=False)
    """Bumped when an applied snapshot's memory mark differs from the last one: widgets that list memory reload on
    it. A store write that touched only sessions, events or the ledger (a spool flush of reads) leaves it alone."""

    def __init__(
        self, target: StoreTarget, *, live: bool = True, poll_interval: float = 1.0, page_size: int = PAGE
    ) -> None:
        """Bind the app to a store target.

        Args:
            target: the working directory (and clock, homes) whose store is shown.
            live: watch the store and poll data_version (off for deterministic screenshots).
            poll_interval: seconds between data_version polls.
            page_size: rows a page of the Memory tab lists.
        """
        super().__init__()
        self.target = target
        self.live = live
        self.poll_interval = poll_interval
        self.page_size = page_size
        self._requested = 0
        self._loading = False
        self._pending = False
        self._fresh_loading = False
        self._fresh_pending = False
        self._announce = False
        self._watcher: StoreWatcher | None = None
        self._watch_key: tuple[object, ...] | None = None
        self._state: tuple[str, str, str] | None = None
        self._settling: str | None = None
        """The reason of a store change waiting out SETTLE_SECONDS (None: nothing waits)."""

    # -- lifecycle ------------------------------------------------------------------------------------

    def on_mount(self) -> None:
        """Paint the main screen at once, then read the store in a worker; use and keep the operator's theme."""
        from .data.view_settings import load_theme

        saved = load_theme(self.target.home)
        if saved in self.available_themes:
            self.theme = saved
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.push_screen(MainScreen())
        self.request_reload("start")
        if not self.is_headless and sys.__stdin__ is not None and sys.__stdin__.isatty():
            self.set_interval(TERMINAL_CHECK_SECONDS, self._check_terminal, name="terminal check")

    def _check_terminal(self) -> None:
        """Quit when the terminal hung up. A side terminal closed under a running TUI (a tmux pane killed, a
        window closed by a program that held the pty) does not always send SIGHUP, and then the input thread
        reads end-of-file in a loop, using a core for nothing. A terminal that hung up answers EIO."""
        import termios

        try:
            termios.tcgetattr(sys.__stdin__.fileno())  # type: ignore[union-attr]
        except (termios.error, OSError, ValueError):
            self.log.warning("terminal hung up: quitting")
            self.exit(return_code=1)

    def _theme_changed(self, theme: Any) -> None:
        """Remember the theme chosen in the palette for the next start."""
        from .data.view_settings import save_theme

        save_theme(self.target.home, str(theme.name))

    def on_unmount(self) -> None:
        """Stop watching."""
        self._stop_watcher()

    # -- loading --------------------------------------------------------------------------------------

    def request_reload(self, reason: str = "refresh") -> None:
        """Reload from the store: one load at a time, and at most one more queued behind it."""
        self.log.debug("reload requested", reason=reason)
        if self._loading:
            self._pending = True
            return
        self._loading = True
        self._requested += 1
        self.load(self._requested)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False, name="load store")
    def load(self, generation: int) -> None:
        """Describe the store (never creating it), then read a snapshot through the engine."""
        worker = get_current_worker()
        if not os.path.isdir(self.target.cwd):  # deleted under us: its store may exist, but nothing here reaches it
            self.post_message(StoreUnavailable("deleted", None, None))
            return
        info = self.target.describe()
        hooks = self.target.hooks()
        if not info.exists:
            self.post_message(StoreUnavailable("missing", info, hooks))
            return
        try:
            engine = self.target.open()
        except StoreRefused as exc:
            self.post_message(StoreUnavailable("refused", info, hooks, exc.message, exc.code))
            return
        with engine:
            snapshot = load_snapshot(engine, generation, hooks)
        if not worker.is_cancelled:
            self.post_message(SnapshotReady(snapshot))

    def request_freshness(self, *, announce: bool = False) -> None:
        """Re-check references against the checkout (coalesced like reloads)."""
        self._announce = self._announce or announce
        if self._fresh_loading:
            self._fresh_pending = True
            return
        self._fresh_loading = True
        announce, self._announce = self._announce, False
        self.check_freshness(self.generation, announce)

    @work(thread=True, exclusive=True, group="freshness", exit_on_error=False, name="check freshness")
    def check_freshness(self, generation: int, announce: bool) -> None:
        """`Engine.validate_memory(persist=False)`: the report, nothing written."""
        from cortex_engine.operator import item_texts

        worker = get_current_worker()
        with self.target.open() as engine:
            report = engine.validate_memory(persist=False)
            items: list[dict[str, object]] = report["items"]  # type: ignore[assignment]
            flagged = [str(item["id"]) for item in items if item.get("label")][:FRESHNESS_SHOWN]
            texts = item_texts(engine, flagged)
        if not worker.is_cancelled:
            self.post_message(FreshnessReady(generation, {**report, "texts": texts}, announce))

    # -- results --------------------------------------------------------------------------------------

    @on(SnapshotReady)
    def _snapshot_ready(self, message: SnapshotReady) -> None:
        """Apply a snapshot (a stale one, from an older request, is dropped)."""
        snapshot = message.snapshot
        if self.snapshot is not None and snapshot.generation < self.snapshot.generation:
            return
        if self._state is not None:
            self._state = None
            self._swap_screen(MainScreen())
            self.call_after_refresh(self._apply, snapshot)
        else:
            self._apply(snapshot)
        self._ensure_watcher(
            Path(snapshot.info.path),
            Path(str(snapshot.status["worktree"])) / ".cortex",
            True,
            Path(snapshot.git_dir) if snapshot.git_dir else None,
        )

    def _apply(self, snapshot: Snapshot) -> None:
        """Show a snapshot; memory views and the freshness report are read again only when memory changed."""
        previous = self.snapshot
        self.snapshot = snapshot
        self.generation += 1
        if previous is None or previous.memory_mark != snapshot.memory_mark or not snapshot.memory_mark:
            self.memory_generation += 1
            self.request_freshness()

    @on(FreshnessReady)
    def _freshness_ready(self, message: FreshnessReady) -> None:
        """Show a freshness report; announce it when the operator asked for it."""
        report = dict(message.report)
        texts = report.pop("texts")
        self.freshness = (report, texts)
        if message.announce:
            from cortex_engine.results import messages

            self.notify(messages.freshness_summary(report), title="Freshness re-validated", markup=False)

    @on(StoreUnavailable)
    def _store_unavailable(self, message: StoreUnavailable) -> None:
        """No store to show: explain, and keep watching for it (a deleted directory: watch nothing, `r` looks again)."""
        key = (message.state, message.code, message.message)
        if self._state != key:
            self._state = key
            self._swap_screen(
                StateScreen(message.state, self.target, message.info, message.hooks, message.message, message.code)
            )
        if message.state == "deleted":
            self._stop_watcher()
            self._settling = None  # changes heard before it stopped: nothing is there to reload
            self._pending = False
        elif message.info is not None:
            self._ensure_watcher(Path(message.info.path), None, False)

    def _swap_screen(self, screen: Screen[Any]) -> None:
        """Show another main screen: close any dialog first (it belonged to the state being replaced)."""
        while isinstance(self.screen, ModalScreen):
            self.pop_screen()
        self.switch_screen(screen)

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        """Another process changed the store or the checkout: once the burst settles, reload what depends on it.
        A change still queued from a watcher that has been stopped since (the folder was deleted) is dropped."""
        if self._watcher is None:
            return
        if self._settling is None:
            self._settling = message.reason
            self.set_timer(SETTLE_SECONDS, self._settled)
        elif StoreChanged(self._settling).can_replace(message):
            self._settling = message.reason  # a change that reloads more than the one waiting

    def _settled(self) -> None:
        """The burst is over: a checkout change re-checks freshness, anything else reloads the snapshot."""
        reason, self._settling = self._settling, None
        if reason is None:
            return
        if StoreChanged(reason).checkout_only:
            self.request_freshness()
        else:
            self.request_reload(reason)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Report failures; run the reload that was queued behind a finished one."""
        report_worker_failure(self, event)
        if event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        if event.worker.group == "load":
            self._loading = False
            if self._pending:
                self._pending = False
                self.request_reload("queued")
        elif event.worker.group == "freshness":
            self._fresh_loading = False
            if self._fresh_pending:
                self._fresh_pending = False
                self.request_freshness()

    # -- live -----------------------------------------------------------------------------------------

    def _ensure_watcher(self, store: Path, runtime: Path | None, has_store: bool, git_dir: Path | None = None) -> None:
        """(Re)start the watcher when what it should watch changed."""
        if not self.live:
            return
        key = (store, runtime, has_store, git_dir)
        if key == self._watch_key:
            return
        self._stop_watcher()
        self._watch_key = key
        self._watcher = StoreWatcher(
            store,
            runtime,
            self._changed_elsewhere,
            self.target.open if has_store else None,
            git_dir=git_dir,
            interval=self.poll_interval,
        )
        self._watcher.start()

    def _changed_elsewhere(self, reason: str) -> None:
        """Called from the watcher's threads: only post_message is thread-safe."""
        self.post_message(StoreChanged(reason))

    def _stop_watcher(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
            self._watch_key = None

    # -- actions and commands ---------------------------------------------------------------------------

    def action_refresh(self) -> None:
        """Reload everything now."""
        self.request_reload("key")
        self.notify("Reloading from the store.", title="Refresh", timeout=2)

    def action_help(self) -> None:
        """Show the keys of the screen underneath, and what the labels mean."""
        from .dialogs.help_dialog import HelpDialog

        palette = (
            self.COMMAND_PALETTE_BINDING,
            "command palette: every key's action by name; typing matches these descriptions too",
        )  # Textual's own binding: rebinding it would take the footer's hint
        self.push_screen(HelpDialog([*help_rows(screen_keys(self.screen)), palette]))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Every titled key of the screen (and the app) by name in the command palette, then Textual's own."""
        titles = set()
        for key in screen_keys(screen):
            if key.live_only and not screen.check_action(*parse(key.action)[1:]):
                continue
            if key.title and key.title not in titles:
                titles.add(key.title)
                yield SystemCommand(
                    key.title,
                    f"{key.tooltip[:1].upper()}{key.tooltip[1:]} ({label(key)})",
                    key_action(screen, key.action),
                )
        yield from super().get_system_commands(screen)


def make_app(
    cwd: str | os.PathLike[str],
    *,
    clock: Clock | None = None,
    home: Path | None = None,
    user_home: Path | None = None,
    live: bool = True,
    poll_interval: float = 1.0,
    page_size: int = PAGE,
) -> CortexApp:
    """Build the app for a working directory (the CLI, the tests and the screenshot script share this).

    `page_size`: rows a page of the Memory tab lists (a test pages through a few dozen items instead of thousands).
    """
    target = StoreTarget(os.path.realpath(os.fspath(cwd)), clock or clock_from_env(), home, user_home)
    return CortexApp(target, live=live, poll_interval=poll_interval, page_size=page_size)


def run(cwd: str) -> int:
    """Open the app for a working directory; returns the exit code."""
    make_app(cwd).run()
    return 0


if __name__ == "__main__":
    raise SystemExit(run(os.getcwd()))
