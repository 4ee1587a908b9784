"""The rest of `memory/sharing.py`'s rules the mutation run measured last (issue 27): what a sync does when git
lists a decision file at HEAD but cannot read it.

The other rules of the module are held by `tests/test_sharing_mutants.py`; this file only adds what its mutants
showed untested.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex_engine.engine import Engine
from cortex_engine.memory import sharing

from .conftest import Repo
from .test_sharing_mutants import FOLDER, MALLORY, commit_as, decision

Open = Callable[..., Engine]


def git_that_cannot_read_blobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `git` first on PATH that lists trees as git does but fails every `cat-file` (an object pruned or a pack
    gone between the two calls): the one way a listed file's content does not come back."""
    real = shutil.which("git")
    assert real is not None
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "git").write_text(f'#!/bin/sh\n[ "$1" = cat-file ] && exit 128\nexec "{real}" "$@"\n')
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")


def test_a_file_git_lists_but_cannot_read_is_malformed_with_that_reason(
        repo: Repo, make_engine: Open, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORTEX_REVIEW_ARRIVALS", "none")
    path = f"{FOLDER}/0001-queue.md"
    commit_as(repo, {path: decision("queue", "use rq")}, MALLORY)
    git_that_cannot_read_blobs(tmp_path, monkeypatch)
    eng = make_engine(repo.path)
    done = eng.sync_shared()
    assert (done.ran, done.added, done.malformed) == (True, (), ((path, "git could not read it at HEAD"),))
    assert done.to_dict()["malformed"] == [{"path": path, "problem": "git could not read it at HEAD"}]
    assert sharing.problems(eng.conn) == [(path, "git could not read it at HEAD")]
    assert eng.conn.execute("SELECT COUNT(*) FROM scoped_notes WHERE origin='shared'").fetchone()[0] == 0


def test_a_file_authored_with_the_repository_s_own_email_applies(
        repo: Repo, make_engine: Open, monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine's email is read in the repository (its own `user.email`), not wherever the process runs."""
    monkeypatch.delenv("GIT_AUTHOR_EMAIL")
    monkeypatch.delenv("GIT_COMMITTER_EMAIL")
    repo.git("config", "user.email", "Local@Repo.invalid")
    path = f"{FOLDER}/0001-queue.md"
    commit_as(repo, {path: decision("queue", "use rq")}, "Someone <local@repo.INVALID>")
    done = make_engine(repo.path).sync_shared()
    assert (done.added, done.pending) == ((path,), ())


def test_a_file_whose_last_commit_git_cannot_name_waits_without_one(
        repo: Repo, make_engine: Open, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`git log` fails: the file still waits for a person (nothing proves this machine wrote it), shown without
    a commit or an author rather than ending the sync."""
    path = f"{FOLDER}/0001-queue.md"
    commit_as(repo, {path: decision("queue", "use rq")}, MALLORY)
    eng = make_engine(repo.path)
    real = shutil.which("git")
    fake = tmp_path / "nolog"
    fake.mkdir()
    (fake / "git").write_text(f'#!/bin/sh\n[ "$1" = log ] && exit 128\nexec "{real}" "$@"\n')
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    done = eng.sync_shared()
    assert (done.added, done.pending) == ((), (path,))
    (arrival,) = eng.inbox()
    assert (arrival.path, arrival.commit, arrival.author, arrival.authored_at) == (path, None, None, None)
