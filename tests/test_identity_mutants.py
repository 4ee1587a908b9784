"""The rules of `scope/identity.py` that mutants were left alive on after the first tests.

How long git may take before the scope is decided without it, the locale a ref file is read in, and the
shortest branch name that storing could change. A `git` on `PATH` that sleeps past a time limit the test sets
(`identity.GIT_TIMEOUT_S`, read at each call) makes the limit observable without waiting ten seconds; the
process's `LC_CTYPE` set to `C` (where no bytes past ASCII decode) stands for a user's locale that is not UTF-8.
"""

from __future__ import annotations

import locale
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cortex_engine.scope import identity
from cortex_engine.scope.identity import BRANCH_TAG, branch_key, branch_tips, detect_scope, locate_git, read_head
from cortex_engine.store.redact import clean_text

from .conftest import Repo

OID = "0123456789abcdef0123456789abcdef01234567"


def slow_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str) -> None:
    """A `git` first on PATH that prints `answer` after `$FAKE_GIT_SLEEP` seconds (none by default)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    script = fake / "git"
    script.write_text(f'#!/bin/sh\nsleep "${{FAKE_GIT_SLEEP:-0}}"\nprintf "{answer}"\n', encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("FAKE_GIT_SLEEP", raising=False)


LIMIT_S = 2.0
"""The time limit the tests below set: long enough for a quick fake to answer on a loaded machine."""


def test_git_is_given_ten_seconds() -> None:
    """The limit itself: ten seconds (a hung git costs a hook at most that, then the scope is decided without it)."""
    assert identity.GIT_TIMEOUT_S == 10


def test_a_git_slower_than_the_time_limit_is_not_waited_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    slow_git(tmp_path, monkeypatch, f"{work}\\n{work}/.git\\n{work}/.git\\n")
    monkeypatch.setattr(identity, "GIT_TIMEOUT_S", LIMIT_S)
    found = locate_git(str(work))
    assert found is not None and found.worktree == os.path.realpath(work)  # the fake answers when it is quick
    monkeypatch.setenv("FAKE_GIT_SLEEP", str(2 * LIMIT_S))
    assert locate_git(str(work)) is None  # a hung git: the directory is taken as outside git, not waited on


def test_branch_tips_do_not_wait_for_a_git_slower_than_the_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_git(tmp_path, monkeypatch, f"{OID} refs/heads/main\\n")
    monkeypatch.setattr(identity, "GIT_TIMEOUT_S", LIMIT_S)
    assert branch_tips(str(tmp_path)) == {"main": OID}
    monkeypatch.setenv("FAKE_GIT_SLEEP", str(2 * LIMIT_S))
    assert branch_tips(str(tmp_path)) is None


@pytest.fixture
def ascii_locale() -> Iterator[None]:
    """The process's LC_CTYPE set to C: text read without a named encoding decodes ASCII only."""
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, before)


def test_a_packed_branch_named_past_ascii_is_resolved_in_any_locale(repo: Repo, ascii_locale: None) -> None:
    repo.git("checkout", "-q", "-b", "café")
    repo.git("pack-refs", "--all")
    oid = repo.git("rev-parse", "HEAD").strip()
    assert not (repo.path / ".git" / "refs" / "heads" / "café").exists()
    git_dir = str(repo.path / ".git")
    assert read_head(git_dir, git_dir) == ("café", oid)
    assert detect_scope(str(repo.path)).head_oid == oid


def test_a_loose_ref_holding_text_past_ascii_is_passed_over_in_any_locale(tmp_path: Path, ascii_locale: None) -> None:
    own, common = tmp_path / "own", tmp_path / "common"
    for base in (own, common):
        (base / "refs" / "heads").mkdir(parents=True)
    (own / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (own / "refs" / "heads" / "main").write_text("réf abîmée\n", encoding="utf-8")  # damaged: not an object id
    (common / "refs" / "heads" / "main").write_text(OID + "\n", encoding="utf-8")
    assert read_head(str(own), str(common)) == ("main", OID)


@pytest.mark.parametrize("name", ["sig=ab", "pwd=xy"])
def test_a_six_character_branch_name_that_storing_would_redact_gets_a_key_of_its_own(name: str) -> None:
    assert clean_text(name) != name  # six characters is the shortest a secret rule matches
    key = branch_key(name)
    assert clean_text(key) == key and BRANCH_TAG in key
    other = name[:-2] + "zz"
    assert branch_key(other) != key  # two such branches are two scopes, not one `[REDACTED]`
    assert branch_key("main12") == "main12" and branch_key("sig=a") == "sig=a"


def test_a_branch_packed_beside_one_whose_name_is_not_utf8_is_still_resolved(repo: Repo) -> None:
    """`git gc` packs every branch into packed-refs, names that are not UTF-8 (`caf\\xe9`) with the rest: HEAD's
    branch is still resolved there, and a loose ref holding such bytes is passed over like any other broken one."""
    subprocess.run([b"git", b"branch", b"caf\xe9"], cwd=repo.path, check=True, capture_output=True)
    repo.git("pack-refs", "--all")
    oid = repo.git("rev-parse", "HEAD").strip()
    git_dir = repo.path / ".git"
    assert read_head(str(git_dir), str(git_dir)) == ("main", oid)
    assert detect_scope(str(repo.path)).head_oid == oid
    subprocess.run([b"git", b"checkout", b"-q", b"caf\xe9"], cwd=repo.path, check=True, capture_output=True)
    assert read_head(str(git_dir), str(git_dir)) == ("caf\udce9", oid)
    (git_dir / "refs" / "heads" / "main").write_bytes(b"\xff\xfe not an oid\n")
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    assert read_head(str(git_dir), str(git_dir)) == ("main", oid)
