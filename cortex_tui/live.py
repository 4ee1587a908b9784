"""Live refresh: watchdog on the store and runtime folders, plus a one-second `PRAGMA data_version` poll.

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
RUNTIME_FILES = ("spool.jsonl", "engaged")
CHANGES = ("modified", "created", "deleted", "moved")
"""Event types that mean content changed: every connection's open and close also touch the WAL (opened, attrib,
closed), and reacting to those would make each reload trigger the next."""
"""Files of the worktree's runtime folder whose change the operator should see (claims live in `claims/`)."""


class StoreWatcher:
    """Calls `on_change` when the store (or the worktree's capture state) changes; start() and close()."""

    def __init__(
        self,
        store_path: Path,
        runtime_dir: Path | None,
        on_change: Callable[[str], None],
        opener: Callable[[], Engine] | None,
        *,
        interval: float = POLL_SECONDS,
        use_watchdog: bool = True,
    ) -> None:
        """Prepare the watcher.

        Args:
            store_path: the store's database file (it may not exist yet).
            runtime_dir: the worktree's runtime folder (`.cortex/`), watched when present.
            on_change: called with a short reason from a watcher thread; must be thread-safe.
            opener: opens an engine for the poll thread; None polls only for the store file to appear.
            interval: seconds between polls.
            use_watchdog: False leaves only the poll (for file systems without notifications).
        """
        self.store_path = store_path
        self.runtime_dir = runtime_dir
        self.on_change = on_change
        self.opener = opener
        self.interval = interval
        self.use_watchdog = use_watchdog
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._observer: object | None = None

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
                if name in STORE_FILES or name in RUNTIME_FILES or f"{os.sep}claims{os.sep}" in path:
                    watcher.on_change(f"file:{name}")

        observer = Observer()
        handler = Handler()
        watched = 0
        for folder, recursive in ((self.store_path.parent, False), (self.runtime_dir, True)):
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
        last: tuple[object, ...] | None = None
        try:
            while not self._stop.is_set():
                exists = self.store_path.exists()
                version: int | None = None
                if exists and self.opener is not None:
                    try:
                        if engine is None:
                            engine = self.opener()
                        version = engine.data_version()
                    except Exception as exc:  # noqa: BLE001 - the poll is a fallback; the app's own load reports errors
                        log.warning("data_version poll failed: %s", exc)
                engaged = self.runtime_dir is not None and (self.runtime_dir / "engaged").is_file()
                probe = (exists, version, engaged)
                if last is not None and probe != last:
                    self.on_change("poll")
                last = probe
                self._stop.wait(self.interval)
        finally:
            if engine is not None:
                engine.close()
