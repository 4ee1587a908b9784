"""Worker failures are never silent: an expected CortexError is notified with its message, anything else too."""

from __future__ import annotations

import traceback

from textual.dom import DOMNode
from textual.worker import Worker, WorkerState

from cortex_engine.base.errors import CortexError

from .data.text import one_line


def report_worker_failure(node: DOMNode, event: Worker.StateChanged) -> None:
    """Notify the error of a worker that failed (workers run with exit_on_error=False)."""
    if event.state != WorkerState.ERROR:
        return
    error = event.worker.error
    if isinstance(error, CortexError):
        node.app.notify(one_line(error.message), title=f"Cortex: {error.code}", severity="error", markup=False)
        return
    if error is not None:
        node.log.error("".join(traceback.format_exception(error)))
        node.app.notify(
            f"{type(error).__name__}: {error}",
            title=f"Unexpected error in {event.worker.name or 'a worker'}",
            severity="error",
            timeout=30,
            markup=False,
        )
