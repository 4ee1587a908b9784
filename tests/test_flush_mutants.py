"""The spool replay as a whole (issue 27: mutation testing of `capture/flush.py`, every function).

`tests/test_flush_rules.py` holds the replay's rules at their boundaries. These tests cover the rest of the module
through what it does, never how: the spool lines the hooks write (and lines they never would), a flush through
the engine or `cortex flush-spool`, and what the store and the runtime folder hold afterwards. The flush is being
made faster (issue 30), so nothing here counts statements, batches or transactions.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from cortex_engine import cli
from cortex_engine.capture import flush
from cortex_engine.capture.flush import SPOOL, runtime_dir
from cortex_engine.engine import Engine

from .conftest import Repo
from .test_capture import bash_payload, live, read_payload  # noqa: F401 - `live` is a fixture
from .test_flush_rules import T, line, spool


def flush_cli(repo: Repo, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """`cortex flush-spool` in the worktree, in this process: its exit code and what it printed."""
    capsys.readouterr()
    code = cli.main(["-C", str(repo.path), "flush-spool", *args])
    return code, capsys.readouterr().out


# -- the command line ----------------------------------------------------------------------------------------------


def test_flush_spool_prints_what_it_did(live: Engine, repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    """`cortex flush-spool [--json]` reports the lines processed, skipped and seen before, and the claims read."""
    spool(repo, line(bash_payload(repo, "echo one", tool_use="t-1")), line(bash_payload(repo, "echo one", tool_use="t-1")),
          line(bash_payload(repo, "", tool_use="t-2")))
    code, out = flush_cli(repo, capsys, "--json")
    assert code == 0
    assert {k: v for k, v in json.loads(out).items() if k != "ok"} == {
        "processed": 1, "skipped": 1, "duplicates": 1, "claims": 1}
    spool(repo, line(bash_payload(repo, "echo two", tool_use="t-3")))
    code, out = flush_cli(repo, capsys)
    assert (code, json.loads(out)) == (0, {"processed": 1, "skipped": 0, "duplicates": 0, "claims": 1})


# -- back_off: the store refused a flush -----------------------------------------------------------------------------


def test_a_refused_flush_makes_the_hooks_wait_ten_minutes_or_the_seconds_given(live: Engine, repo: Repo) -> None:
    folder = runtime_dir(repo.path)
    assert flush.back_off(folder, 1_000.75) is True
    assert (folder / flush.FLUSH_AFTER).read_text() == "1600\n"
    assert flush.back_off(folder, 1_000.75, 30) is True
    assert (folder / flush.FLUSH_AFTER).read_text() == "1030\n"
    assert flush.back_off(folder, 1_000.75, 0) is True
    assert (folder / flush.FLUSH_AFTER).read_text() == "1000\n"


def test_no_back_off_is_written_into_a_folder_that_is_not_trusted(live: Engine, repo: Repo, tmp_path: Path) -> None:
    """A runtime folder open to others, or none at all, gets no back-off file and the caller hears so."""
    folder = runtime_dir(repo.path)
    folder.chmod(0o755)
    assert flush.back_off(folder, 1_000.0) is False
    assert not (folder / flush.FLUSH_AFTER).exists()
    assert flush.back_off(tmp_path / "nowhere" / ".cortex", 1_000.0) is False
    assert not (tmp_path / "nowhere").exists()


# -- the runtime folder: found, engaged, trusted -----------------------------------------------------------------


def test_capture_is_engaged_only_under_this_machine_s_key(live: Engine, repo: Repo, tmp_path: Path) -> None:
    """Engaged: a trusted runtime folder whose marker's first line names this machine's key (from any subfolder)."""
    from cortex_engine.engine import engaged_worktree

    marker = runtime_dir(repo.path) / "engaged"
    repo.write("src/deep/x.py", "x = 1\n")
    assert engaged_worktree(str(repo.path / "src" / "deep")) == str(repo.path)
    assert flush.is_engaged(repo.path) is True
    key = marker.read_text().splitlines()[0]
    marker.write_text(key + "\nsomething written after it\n")
    assert flush.is_engaged(repo.path) is True
    marker.write_text("engaged=" + "0" * 32 + "\n")  # another machine's key
    assert flush.is_engaged(repo.path) is False
    marker.write_text("\n" + key + "\n")  # the key, but not on the first line
    assert flush.is_engaged(repo.path) is False
    marker.write_text(key + "\n")
    key_file = Path(os.environ["CORTEX_HOME"]) / "runtime.key"
    saved = key_file.read_bytes()
    key_file.unlink()  # no key on this machine: nothing is engaged, and asking creates none
    assert flush.is_engaged(repo.path) is False
    assert not key_file.exists()
    key_file.write_bytes(saved)
    marker.unlink()
    assert flush.is_engaged(repo.path) is False
    assert engaged_worktree(str(repo.path)) is None
    assert flush.is_engaged(tmp_path) is False  # no runtime folder at all
    assert engaged_worktree(str(tmp_path)) is None


def test_a_runtime_folder_open_to_others_is_not_engaged_until_reclaimed(live: Engine, repo: Repo) -> None:
    """An older Cortex's 0755 folder: refused (with the reason), never engaged, its spool never replayed; reclaiming
    empties it but for the substitution setting and closes it."""
    folder = runtime_dir(repo.path)
    assert flush.runtime_problem(repo.path) is None
    spool(repo, line(bash_payload(repo, "echo planted", tool_use="t-1")))
    (folder / flush.SUBSTITUTION).write_text("on\n")
    folder.chmod(0o755)
    problem = flush.runtime_problem(repo.path)
    assert problem is not None and problem.startswith("the runtime folder is not trusted: ")
    assert flush.is_engaged(repo.path) is False
    assert flush.reclaim(repo.path) is True
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (folder / flush.SUBSTITUTION).read_text() == "on\n" and not (folder / SPOOL).exists()
    assert flush.runtime_problem(repo.path) is None
    assert flush.reclaim(repo.path) is False  # nothing left to do
    assert live.flush_spool().processed == 0


def test_a_flush_from_a_subfolder_replays_its_worktree_s_spool(repo: Repo, live: Engine, make_engine) -> None:  # noqa: ANN001
    repo.write("src/app/main.py", "x = 1\n")
    spool(repo, line(bash_payload(repo, "echo from below", tool_use="t-1")))
    below = make_engine(repo.path / "src" / "app")
    assert below.flush_spool().processed == 1
    assert not (runtime_dir(repo.path) / SPOOL).exists()
    nested = repo.path / "src" / "app" / ".cortex"
    nested.mkdir()  # a folder of that name without the runtime's own .gitignore is not a runtime folder
    assert flush.find_runtime(str(repo.path / "src" / "app")) == runtime_dir(repo.path)
    assert flush.find_runtime(str(repo.path.parent)) is None
    assert flush.find_runtime(str(repo.path)) == runtime_dir(repo.path)
    link = repo.path.parent / "elsewhere"
    link.symlink_to(repo.path / "src" / "app")  # a cwd reached through a link is found where it really is
    assert flush.find_runtime(str(link)) == Path(os.path.realpath(runtime_dir(repo.path)))
