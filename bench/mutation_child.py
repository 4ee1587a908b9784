"""Lets mutmut's clean ("stats") run count the mutated functions a test reaches through a child process.

mutmut records which tests reach each mutated function in the pytest process: the trampoline in front of each
function, under `MUTANT_UNDER_TEST=stats`, loads mutmut's configuration from the working directory and adds the
function to that process's hits. A child process the test starts (`cortex ...` in a temp repository) inherits
`MUTANT_UNDER_TEST` and runs the same trampolines, but its working directory holds no mutmut configuration, so
the first hit raises `FileNotFoundError` and the test fails: mutmut then refuses to run at all. Were the child's
hits merely dropped, a function reached only through a child would run none of that test against its mutants.

`bench/mutation.py` copies this file into the mutants' working copy twice:

- as `sitecustomize.py`, which Python imports at the start of every process whose path holds that folder (a child
  finds the mutated code through the same `PYTHONPATH`): under a stats run it makes the trampoline append each
  function it reaches to a file of its own in the folder `CORTEX_MUTMUT_HITS` names, instead of recording in a
  configuration the child cannot find;
- as the pytest plugin `mutmut_children` (`-p`), which hands those hits to mutmut's record of the running test
  before mutmut files the test's hits away at its teardown.

In a mutant's run nothing changes: the child inherits the mutant's name, runs the mutated function, and a test
that then fails kills the mutant as it would in process.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

HITS = "CORTEX_MUTMUT_HITS"
"""The folder where child processes of a stats run write the functions they reached (set by the runner)."""


def _stats_folder() -> Path | None:
    """The hits folder when this process runs under mutmut's stats run and the runner named one; else None."""
    folder = os.environ.get(HITS)
    if not folder or os.environ.get("MUTANT_UNDER_TEST") != "stats":
        return None
    return Path(folder)


def install_in_child() -> None:
    """In a process that is not mutmut's own, make the stats trampoline write its hits to the hits folder."""
    folder = _stats_folder()
    if folder is None:  # mutmut's own processes start before it sets MUTANT_UNDER_TEST, and record in process
        return
    from mutmut.mutation import trampoline

    path = folder / f"{os.getpid()}.hits"
    seen: set[str] = set()

    def record(name: str, caller: str | None = None) -> None:
        del caller  # the call graph only serves mutmut's cache of verdicts, kept in its own process
        if name not in seen:
            seen.add(name)
            with path.open("a", encoding="utf-8") as out:  # one line each, written at once: a child may be killed
                out.write(name + "\n")

    trampoline.record_trampoline_hit = record  # type: ignore[attr-defined]


def child_hits(folder: Path) -> Iterator[str]:
    """Every function the children wrote since the last call; their files are removed once read."""
    for path in sorted(folder.glob("*.hits")):
        text = path.read_text(encoding="utf-8")
        path.unlink()
        yield from (line for line in text.splitlines() if line)


if __name__ == "sitecustomize":
    install_in_child()
else:  # the plugin (pytest is not imported at the start of every child: it is slow to import)
    import pytest

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(item: object, nextitem: object) -> None:
        """Add the hits of the children this test started to mutmut's record of the test (before mutmut reads
        it at its own teardown hook)."""
        del item, nextitem
        folder = _stats_folder()
        if folder is None or not folder.is_dir():
            return
        from mutmut.state import state

        state()._stats.update(child_hits(folder))
