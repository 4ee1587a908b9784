"""`cortex serve` starts the SDK's import only once the wire is quiet, so early answers never compete with it."""

from __future__ import annotations

import threading

from cortex_engine.adapters.serve import QuietLoader


def test_the_import_waits_while_a_line_is_being_answered() -> None:
    """Busy from the start (the handshake is being answered): however short the quiet period, nothing loads until
    the reader waits again; ended before that, it never loads (the main thread imports what it needs itself)."""
    loaded = threading.Event()
    loader = QuietLoader(loaded.set, quiet=0.0)
    loader.busy()
    loader.end()
    assert not loaded.is_set() and not loader.started


def test_a_new_line_restarts_the_quiet_period() -> None:
    """Lines arriving back to back (a client sending its first call with the handshake) hold the import back."""
    loaded = threading.Event()
    loader = QuietLoader(loaded.set, quiet=3600.0)
    for _ in range(3):
        loader.idle()
        loader.busy()
    loader.idle()
    loader.end()
    assert not loaded.is_set() and not loader.started


def test_the_import_starts_once_the_reader_waits_quietly() -> None:
    """Once the reader waits with nothing new for the quiet period, the SDK's import runs in the background."""
    loaded = threading.Event()
    loader = QuietLoader(loaded.set, quiet=0.0)
    loader.idle()
    assert loaded.wait(30)
    loader.end()
    assert loader.started
