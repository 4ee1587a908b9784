"""The rest of `memory/sharing.py`'s rules the mutation run measured last: what a sync does when git
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

from cortex_engine.base import settings
from cortex_engine.engine import Engine
from cortex_engine.memory import sharing

from .conftest import Repo
from .test_sharing_mutants import FOLDER, MALLORY, OWN_ID, blob, commit_as, decision

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
    repo: Repo, make_engine: Open, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.write_review_arrivals("none")
    path = f"{FOLDER}/0001-queue.md"
    commit_as(repo, {path: decision("queue", "use rq")}, MALLORY)
    git_that_cannot_read_blobs(tmp_path, monkeypatch)
    eng = make_engine(repo.path)
    done = eng.sync_shared()
    assert (done.ran, done.added, done.malformed) == (True, (), ((path, "git could not read it at HEAD"),))
    assert done.to_dict()["malformed"] == [{"path": path, "problem": "git could not read it at HEAD"}]
    assert sharing.problems(eng.conn) == [(path, "git could not read it at HEAD")]
    assert eng.conn.execute("SELECT COUNT(*) FROM scoped_notes WHERE origin='shared'").fetchone()[0] == 0


def test_a_file_authored_with_the_repository_s_own_email_still_waits(
    repo: Repo, make_engine: Open, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git's author identity is a claim anyone (any environment) makes: a file committed under this machine's own
    `user.email` waits like any file this store did not publish."""
    monkeypatch.delenv("GIT_AUTHOR_EMAIL")
    monkeypatch.delenv("GIT_COMMITTER_EMAIL")
    repo.git("config", "user.email", "Local@Repo.invalid")
    path = f"{FOLDER}/0001-queue.md"
    commit_as(repo, {path: decision("queue", "use rq")}, "Someone <local@repo.INVALID>")
    done = make_engine(repo.path).sync_shared()
    assert (done.added, done.pending) == ((), (path,))


def test_a_file_whose_last_commit_git_cannot_name_waits_without_one(
    repo: Repo, make_engine: Open, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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


def test_a_skipped_entry_does_not_end_the_listing(repo: Repo) -> None:
    """Entries are listed in name order: a subfolder, or a file that is not a decision (not `.md`, or named with a
    control character), sorting first is passed over and the decision files after it are still listed."""
    repo.write(f"{FOLDER}/0000-drafts/0001-draft.md", "a draft in a subfolder\n")
    repo.write(f"{FOLDER}/0000-index.txt", "not a decision\n")
    repo.write(f"{FOLDER}/0000-\x1bx.md", "a control character\n")
    repo.write(f"{FOLDER}/0001-a.md", "a\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "decisions")
    assert sharing.files_at_head(str(repo.path), FOLDER) == {
        f"{FOLDER}/0001-a.md": (blob(repo, f"{FOLDER}/0001-a.md"), 2)
    }


def test_a_decision_file_named_with_a_tab_is_listed_whole(repo: Repo) -> None:
    """`ls-tree` separates an entry's fields from its path with a tab: a path holding a tab of its own is split at
    the first one."""
    path = f"{FOLDER}/0001-two\twords.md"
    repo.write(path, "a\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "decisions")
    assert sharing.files_at_head(str(repo.path), FOLDER) == {path: (blob(repo, path), 2)}


def test_a_decisions_folder_named_like_an_option_is_read_as_a_path(
    repo: Repo, make_engine: Open, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.write_review_arrivals("none")
    monkeypatch.setenv("CORTEX_DECISIONS_DIR", "-decisions")
    commit_as(repo, {"-decisions/0001-queue.md": decision("queue", "use rq")}, MALLORY)
    done = make_engine(repo.path).sync_shared()
    assert (done.ran, done.added) == (True, ("-decisions/0001-queue.md",))


def test_a_waiting_file_keeps_the_note_id_it_claims(repo: Repo, make_engine: Open) -> None:
    """Another author's file naming a `cortex-id` waits with that id recorded on its arrival."""
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq", f"cortex-id: {OWN_ID}\n")}, MALLORY)
    eng = make_engine(repo.path)
    assert eng.sync_shared().pending == (f"{FOLDER}/0001-q.md",)
    assert [(a.path, a.note_id) for a in eng.inbox()] == [(f"{FOLDER}/0001-q.md", OWN_ID)]


def test_a_configured_folder_that_is_not_utf8_is_read_with_a_replacement_character(repo: Repo) -> None:
    """`git config cortex.decisionsDir` holding bytes that are not UTF-8 is not a crash: the bad byte reads as
    U+FFFD, as every other name git hands over."""
    with (repo.path / ".git" / "config").open("ab") as config:
        config.write(b"[cortex]\n\tdecisionsDir = adr\xff\n")
    assert sharing.decisions_folder(str(repo.path)) == "adr\ufffd"


def test_a_published_file_is_the_users_own_only_while_its_decision_stands(repo: Repo, make_engine: Open) -> None:
    """The exact bytes `publish` wrote apply without review while the note they came from is active; once the user
    has resolved it, the same bytes committed again (a revert, a stale branch) wait for a person."""
    eng = make_engine(repo.path)
    note = eng.note("decision", "run jobs on rq", "queue").id
    (path,) = eng.publish([note])
    body = (repo.path / path).read_text(encoding="utf-8")
    (repo.path / path).unlink()
    eng.resolve(note, status="resolved")
    commit_as(repo, {path: body})
    eng.rescope()
    assert eng.sync_shared().pending == (path,)
