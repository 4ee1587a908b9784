"""Live refresh: watchdog on the store, runtime and git folders, plus a one-second poll of the same.

What is watched is what the screen shows: store commits (`data_version`), the engaged marker and claims, and the
checkout (HEAD, the index, the branch's ref), whose changes move freshness verdicts. Spool appends are not watched:
nothing on screen depends on the spool until a flush commits it to the store, which the store watch sees.

No Textual here (the toolong pattern): the watcher calls `on_change` from its own threads and the
app turns that into a coalesced `StoreChanged` message. The poll is the fallback for file systems
where notifications do not arrive; it owns its own engine, opened and closed in the poll thread,
because SQLite connections must not cross threads.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cortex_engine.engine import Engine

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
STORE_FILES = ("cortex.db", "cortex.db-wal")
"""Files of the store folder whose change means a commit (the -shm index changes on reads too)."""
RUNTIME_FILES = ("engaged",)
"""Files of the worktree's runtime folder whose change the operator should see (claims live in `claims/`)."""
GIT_FILES = ("HEAD", "index")
"""Files of the worktree's git dir whose change moves freshness."""
REFLOG = ("logs", "HEAD")
"""The worktree's HEAD reflog: every commit, reset and checkout appends to it, so a commit is heard at once (the
branch's ref lives in the common dir and may be packed; without a reflog the poll still sees the commit)."""
CHANGES = ("modified", "created", "deleted", "moved")
"""Event types that mean content changed: every connection's open and close also touch the WAL (opened, attrib,
closed), and reacting to those would make each reload trigger the next."""
WAL = "cortex.db-wal"
CONNECTION_ONLY = ("created", "deleted")
"""What a WAL's creation and deletion mean: a connection opened on a store nobody else held open, or the last one
closed (its checkpoint already heard as the commits it copies). Neither is a commit, and with no other connection
holding the store (the poll's, after the file was replaced) each reload's own read made and removed the WAL: reacting
to that was a reload loop. A commit writes into the WAL ("modified"); a store put in place is heard on cortex.db."""


class StoreWatcher:
    """Calls `on_change` when the store (or the worktree's capture state) changes; start() and close()."""

    def __init__(
        self,
        store_path: Path,
        runtime_dir: Path | None,
        on_change: Callable[[str], None],
        opener: Callable[[], Engine] | None,
        *,
        git_dir: Path | None = None,
        interval: float = POLL_SECONDS,
        use_watchdog: bool = True,
    ) -> None:
        """Prepare the watcher.

        Args:
            store_path: the store's database file (it may not exist yet).
            runtime_dir: the worktree's runtime folder (`.cortex/`), watched when present.
            on_change: called with a short reason from a watcher thread; must be thread-safe.
            opener: opens an engine for the poll thread; None polls only for the store file to appear.
            git_dir: the worktree's git dir (HEAD and index), watched when given; changes are reported as
                `checkout` (index, ref) or `head` (HEAD itself: another branch, so another scope).
            interval: seconds between polls.
            use_watchdog: False leaves only the poll (for file systems without notifications).
        """
        self.store_path = store_path
        self.runtime_dir = runtime_dir
        self.git_dir = git_dir
        self.on_change = on_change
        self.opener = opener
        self.interval = interval
        self.use_watchdog = use_watchdog
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._observer: object | None = None
        self._heard = threading.Event()
        """Set when the observer reported a change: the poll then does not report the same change again."""

    def start(self) -> None:
        """Start the poll thread and, when the folders exist, the file-system observer."""
        self._thread = threading.Thread(target=self._poll, name="cortex-poll", daemon=True)
        self._thread.start()
        if self.use_watchdog:
            self._start_observer()

    def close(self) -> None:
        """Stop both and wait for them (briefly)."""
        self._stop.set()
        observer = self._observer
        if observer is not None:
            observer.stop()  # type: ignore[attr-defined]
            observer.join(timeout=2)  # type: ignore[attr-defined]
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _start_observer(self) -> None:
        """Watch the store folder and the runtime folder (watchdog is imported only here)."""
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        watcher = self

        class Handler(FileSystemEventHandler):
            """Forwards relevant file events as changes."""

            def on_any_event(self, event: FileSystemEvent) -> None:
                """Filter to commits and capture-state files; ignore reads' side files."""
                if event.event_type not in CHANGES or event.is_directory:
                    return
                path = os.fsdecode(event.dest_path or event.src_path)
                name = os.path.basename(path)
                if watcher.git_dir is not None and os.path.dirname(path) == str(watcher.git_dir):
                    if name in GIT_FILES:
                        watcher.on_change("head" if name == "HEAD" else "checkout")
                    return
                if watcher.git_dir is not None and path == str(watcher.git_dir.joinpath(*REFLOG)):
                    watcher.on_change("checkout")
                    return
                if name == WAL and event.event_type in CONNECTION_ONLY:
                    return
                if name in STORE_FILES or name in RUNTIME_FILES or f"{os.sep}claims{os.sep}" in path:
                    watcher._heard.set()
                    watcher.on_change(f"file:{name}")

        quiet_stop_race()
        observer = Observer()
        handler = Handler()
        watched = 0
        reflogs = self.git_dir / REFLOG[0] if self.git_dir is not None else None
        for folder, recursive in (
            (self.store_path.parent, False),
            (self.runtime_dir, True),
            (self.git_dir, False),
            (reflogs, False),
        ):
            if folder is not None and folder.is_dir():
                observer.schedule(handler, str(folder), recursive=recursive)
                watched += 1
        if not watched:
            return
        observer.daemon = True
        observer.start()
        self._observer = observer

    def _poll(self) -> None:
        """Every `interval`: the store's data_version, its existence, and the engaged marker."""
        engine: Engine | None = None
        opened: tuple[int, int] | None = None
        last: tuple[object, ...] | None = None
        try:
            while not self._stop.is_set():
                file = file_identity(self.store_path)
                exists = file is not None
                version: int | None = None
                if engine is not None and file != opened:  # replaced (a restore): its connection reads the old file
                    engine.close()
                    engine = None
                if exists and self.opener is not None:
                    try:
                        if engine is None:
                            engine = self.opener()
                            opened = file
                        version = engine.data_version()
                    except Exception as exc:  # noqa: BLE001 - the poll is a fallback; the app's own load reports errors
                        log.warning("data_version poll failed: %s", exc)
                engaged = self.runtime_dir is not None and (self.runtime_dir / "engaged").is_file()
                head, checkout = checkout_probe(self.git_dir)
                probe = (exists, (file, version), engaged, head, checkout)
                heard = self._heard.is_set()
                self._heard.clear()
                if last is not None and probe != last:
                    if probe[:4] != last[:4]:
                        if not heard or probe[3] != last[3]:  # the observer already reported this store change
                            self.on_change("poll")
                    else:
                        self.on_change("checkout")
                last = probe
                self._stop.wait(self.interval)
        finally:
            if engine is not None:
                engine.close()


INACTIVE = "called when the thread is inactive"
"""watchdog's inotify emitter logs this at error level when a read races its own stop: harmless, and with no
handler configured Python's last-resort handler printed it over the terminal on about one quit in ten."""


def _not_the_stop_race(record: logging.LogRecord) -> bool:
    """Keep every watchdog record but the stop race's."""
    return INACTIVE not in record.getMessage()


def quiet_stop_race() -> None:
    """Drop the emitter's stop-race record (only that one) before it reaches a handler; idempotent."""
    logger = logging.getLogger("watchdog.observers.inotify")
    if _not_the_stop_race not in logger.filters:
        logger.addFilter(_not_the_stop_race)


def file_identity(path: Path) -> tuple[int, int] | None:
    """Which file is at `path` (device and inode), None when there is none: a file put in place of another differs."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def checkout_probe(git_dir: Path | None) -> tuple[str | None, tuple[object, ...] | None]:
    """What HEAD says, and a cheap fingerprint of the index and the commit HEAD points at (no git process)."""
    if git_dir is None:
        return None, None
    from cortex_engine.results import read_head

    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None, None
    common = git_dir
    try:
        common = (git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        pass  # not a linked worktree: the git dir is the common dir
    try:
        index = (git_dir / "index").stat()
        index_mark: tuple[object, ...] = (index.st_mtime_ns, index.st_size, index.st_ino)
    except OSError:
        index_mark = ()
    return head, (read_head(str(git_dir), str(common))[1], *index_mark)
