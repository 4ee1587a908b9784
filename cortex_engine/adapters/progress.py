"""Progress for long CLI work: rich's bar on stderr when stderr is a terminal, nothing at all otherwise.

Only the CLI adapter opens a bar; the engine takes a plain `tick(n)` callback, so neither the engine nor a
hook path imports rich (it is imported here, inside `progress`, and only when a bar will be drawn).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Tick = Callable[[int], None]
MIN_ITEMS = 1000
"""Below this many items the work is over before a bar would help."""


def _nothing(n: int = 1) -> None:
    """The tick of work shown by no bar."""


def wanted(as_json: bool) -> bool:
    """A bar is drawn only for a person: stderr is a terminal and the output is not `--json`."""
    return not as_json and sys.stderr.isatty()


@contextmanager
def progress(label: str, total: int, *, enabled: bool, min_items: int = MIN_ITEMS) -> Iterator[Tick]:
    """Yield a `tick(n)` that advances a transient bar of `total` steps (a no-op when not `enabled` or small)."""
    if not enabled or total < min_items:
        yield _nothing
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)

        def tick(n: int = 1) -> None:
            """Advance the bar by `n` steps."""
            bar.advance(task, n)

        yield tick
