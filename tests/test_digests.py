"""The read digests of the flush at their boundaries (`capture/digests.py`).

What a Read put in the agent's context is recorded as a digest: of the payload's content when the payload proves
the read was whole, else of the file's bytes. Each test reads the row the store kept, or what the public helpers
answer, at the edges: the 2 MiB ceiling, a final newline the host dropped, a file that cannot be read, a read
repeated.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from cortex_engine.capture.digests import DIGEST_CEILING, absolute_path, digest_file, read_content, record_digest
from cortex_engine.engine import Engine

from .conftest import Repo

AT = "2026-08-02T18:00:00Z"
LATER = "2026-08-02T19:00:00Z"


def sha(data: bytes) -> str:
    """The hex sha256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def session_of(engine: Engine) -> str:
    """The id of the session the `live` fixture started."""
    row = engine.conn.execute("SELECT id FROM sessions").fetchone()
    return str(row["id"])


def record(
    engine: Engine, rel: str, content: str | None, *, at: str = AT, agent: str | None = None, **kw: Any
) -> dict[str, Any] | None:
    """Record a read of `rel` (in the engine's worktree) and return the row the store kept for it."""
    abs_path = os.path.join(engine.scope.worktree, rel)
    record_digest(engine.conn, engine.scope, session_of(engine), agent, rel, abs_path, content, at, **kw)
    row = engine.conn.execute(
        "SELECT * FROM content_digests WHERE scope_key=? AND path=?", (engine.scope.key, rel)
    ).fetchone()
    return dict(row) if row is not None else None


# --- absolute_path and read_content


def test_a_relative_path_is_joined_to_the_directory_the_tool_ran_in() -> None:
    assert absolute_path("src/a.py", "/work/repo") == "/work/repo/src/a.py"
    assert absolute_path("/etc/hosts", "/work/repo") == "/etc/hosts"


@pytest.mark.parametrize("response", [None, "text", ["content"], 3])
def test_a_response_that_is_not_an_object_proves_nothing(response: object) -> None:
    assert read_content({}, response) is None


@pytest.mark.parametrize(
    "response",
    [
        {"content": 3},
        {"content": None},
        {},
        {"file": {"content": b"bytes"}},
        {"file": {"numLines": 1}},
    ],
)
def test_content_that_is_not_text_proves_nothing(response: dict[str, Any]) -> None:
    assert read_content({}, response) is None


def test_content_is_read_from_the_file_object_or_else_from_the_response_itself() -> None:
    assert read_content({}, {"file": {"content": "inner"}, "content": "outer"}) == "inner"
    assert read_content({}, {"file": "not an object", "content": "outer"}) == "outer"
    # the counts are read from where the content was: a cut read inside the file object is refused
    assert read_content({}, {"file": {"content": "inner", "numLines": 1, "totalLines": 2}}) is None


@pytest.mark.parametrize(
    ("file_fields", "tool_input", "whole"),
    [
        ({"startLine": None}, {}, True),
        ({"startLine": 0}, {}, False),
        ({"startLine": 2}, {}, False),
        ({}, {"offset": None}, True),
        ({}, {"offset": -1}, False),
        ({"numLines": 10, "totalLines": 10}, {}, True),
        ({"numLines": 11, "totalLines": 10}, {}, True),  # more lines than the file: nothing was cut
        ({"numLines": 9, "totalLines": 10}, {}, False),
        ({"numLines": 9}, {}, True),  # a count without a total proves no cut, and no limit was asked
        ({"totalLines": 10}, {}, True),
        ({"numLines": "9", "totalLines": 10}, {}, True),  # counts that are not numbers prove no cut either
        ({"numLines": 9, "totalLines": "10"}, {}, True),
        ({"numLines": 10, "totalLines": 10}, {"limit": 10}, True),
        ({"numLines": 10, "totalLines": 10}, {"limit": None}, True),
        ({"numLines": 10}, {"limit": 10}, False),
        ({"totalLines": 10}, {"limit": 10}, False),
        ({"numLines": "10", "totalLines": 10}, {"limit": 10}, False),
        ({}, {"limit": 0}, False),
    ],
)
def test_a_read_is_whole_only_when_its_fields_prove_it(
    file_fields: dict[str, Any], tool_input: dict[str, Any], whole: bool
) -> None:
    response = {"file": {"content": "body\n", **file_fields}}
    assert read_content(tool_input, response) == ("body\n" if whole else None)


# --- digest_file


def test_a_file_is_digested_up_to_and_including_the_ceiling(tmp_path: Path) -> None:
    at = tmp_path / "at.bin"
    at.write_bytes(b"a" * DIGEST_CEILING)
    over = tmp_path / "over.bin"
    over.write_bytes(b"a" * (DIGEST_CEILING + 1))
    assert digest_file(str(at)) == (sha(b"a" * DIGEST_CEILING), DIGEST_CEILING, False)
    assert digest_file(str(over)) == (None, DIGEST_CEILING + 1, True)
    assert DIGEST_CEILING == 2 * 1024 * 1024


def test_what_is_not_a_readable_file_has_no_digest(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for name in ("folder", "pipe", "dangling", "missing"):
        assert (name, digest_file(str(tmp_path / name))) == (name, (None, None, False))
    (tmp_path / "empty").write_bytes(b"")
    assert digest_file(str(tmp_path / "empty")) == (sha(b""), 0, False)


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc: a regular file whose read fails")
def test_a_file_that_opens_but_cannot_be_read_has_no_digest_and_is_not_oversize() -> None:
    assert digest_file("/proc/self/mem") == (None, None, False)  # reading it at offset 0 fails with EIO


# --- record_digest


def test_a_whole_read_records_the_digest_of_its_content(live: Engine, repo: Repo) -> None:
    repo.write("cfg.py", "NEW = 2\n")  # changed since the read: the content is what the agent saw
    row = record(live, "cfg.py", "OLD = é\n", agent="agent-7")
    assert row == {
        "scope_key": live.scope.key,
        "path": "cfg.py",
        "sha256": sha("OLD = é\n".encode()),
        "byte_size": 9,
        "session_id": session_of(live),
        "agent_id": "agent-7",
        "oversize": 0,
        "read_count": 1,
        "source": "payload",
        "refund_eligible": 0,
        "recorded_at": AT,
    }


def test_a_final_newline_the_host_dropped_is_taken_from_the_file(live: Engine, repo: Repo) -> None:
    repo.write("cfg.py", "VALUE = 'é'\n")
    row = record(live, "cfg.py", "VALUE = 'é'")
    assert row is not None
    assert (row["sha256"], row["byte_size"], row["source"]) == (sha("VALUE = 'é'\n".encode()), 13, "payload")


@pytest.mark.parametrize(
    "on_disk",
    [
        "VALUE = 1x",  # one byte longer, but not by a newline
        "VALUE = 1\n\n",  # a newline more than the host could have dropped
        "VALUE = 1",  # exactly the content
        "VALUE = 2\n",  # the same length plus one, other content
    ],
)
def test_a_file_that_is_not_the_content_plus_a_newline_leaves_the_content_s_digest(
    live: Engine, repo: Repo, on_disk: str
) -> None:
    repo.write("cfg.py", on_disk)
    row = record(live, "cfg.py", "VALUE = 1")
    assert row is not None
    assert (row["sha256"], row["byte_size"], row["source"]) == (sha(b"VALUE = 1"), 9, "payload")


def test_content_without_its_file_keeps_the_content_s_digest(live: Engine) -> None:
    row = record(live, "gone.py", "VALUE = 1")
    assert row is not None
    assert (row["sha256"], row["byte_size"], row["source"], row["oversize"]) == (sha(b"VALUE = 1"), 9, "payload", 0)


def test_content_is_digested_up_to_and_including_the_ceiling(live: Engine, repo: Repo) -> None:
    at = record(live, "at.txt", "a" * DIGEST_CEILING)
    repo.write("over.txt", "a" * DIGEST_CEILING + "\n")  # a file one newline longer is not read for a payload over it
    over = record(live, "over.txt", "a" * DIGEST_CEILING + "é")
    assert at is not None and over is not None
    assert (at["sha256"], at["byte_size"], at["oversize"]) == (sha(b"a" * DIGEST_CEILING), DIGEST_CEILING, 0)
    assert (over["sha256"], over["byte_size"], over["oversize"], over["source"]) == (
        None,
        DIGEST_CEILING + 2,
        1,
        "payload",
    )


def test_a_read_without_whole_content_records_the_file(live: Engine, repo: Repo) -> None:
    repo.write("cfg.py", "ON DISK\n")
    row = record(live, "cfg.py", None)
    assert row is not None
    assert (row["sha256"], row["byte_size"], row["oversize"], row["source"]) == (sha(b"ON DISK\n"), 8, 0, "file")


def test_an_oversize_file_is_recorded_without_a_digest_and_a_missing_one_not_at_all(live: Engine, repo: Repo) -> None:
    repo.write("big.bin", "a" * (DIGEST_CEILING + 1))
    big = record(live, "big.bin", None)
    assert big is not None
    assert (big["sha256"], big["byte_size"], big["oversize"], big["source"]) == (None, DIGEST_CEILING + 1, 1, "file")
    assert record(live, "missing.py", None) is None


def test_a_read_again_replaces_the_digest_and_counts_the_reads(live: Engine, repo: Repo) -> None:
    repo.write("cfg.py", "ON DISK\n")
    first = record(live, "cfg.py", "FIRST\n", agent="agent-1", refund_eligible=True)
    assert first is not None and (first["refund_eligible"], first["read_count"]) == (1, 1)
    repo.write("cfg.py", "a" * (DIGEST_CEILING + 1))
    again = record(live, "cfg.py", None, at=LATER)
    assert again == {
        "scope_key": live.scope.key,
        "path": "cfg.py",
        "sha256": None,
        "byte_size": DIGEST_CEILING + 1,
        "session_id": session_of(live),
        "agent_id": None,
        "oversize": 1,
        "read_count": 2,
        "source": "file",
        "refund_eligible": 0,
        "recorded_at": LATER,
    }
    third = record(live, "cfg.py", "THIRD\n", agent="agent-3", refund_eligible=True)
    assert third is not None
    assert (
        third["sha256"],
        third["byte_size"],
        third["oversize"],
        third["source"],
        third["agent_id"],
        third["refund_eligible"],
        third["read_count"],
        third["recorded_at"],
    ) == (sha(b"THIRD\n"), 6, 0, "payload", "agent-3", 1, 3, AT)


def test_a_file_whose_size_says_less_than_it_holds_is_read_to_its_end() -> None:
    """/proc reports a size of 0 for files that hold text: the digest is of all of it, not of nothing."""
    path = Path("/proc/self/cmdline")
    if not path.exists():
        pytest.skip("needs Linux's /proc")
    assert digest_file(str(path)) == (sha(path.read_bytes()), 0, False)


# --- relative_path: the file key a read or an edit is booked under, through symlinks


def _reference_key(path: str, worktree: str) -> str:
    """The key by its definition: realpath of the whole path, relative to the worktree's realpath when inside."""
    normalized = os.path.normpath(path.replace("\\", "/"))
    if not os.path.isabs(normalized):
        return normalized
    real, root = os.path.realpath(normalized), os.path.realpath(worktree)
    if real == root or not real.startswith(root + os.sep):
        return real
    return os.path.relpath(real, root).replace(os.sep, "/")


def test_a_file_key_resolves_symlinks_anywhere_in_the_path_as_realpath_does(tmp_path: Path) -> None:
    """Every combination of a linked worktree, linked folders, linked and dangling files, missing parts and a file
    where a folder should be gives the key realpath gives (the folder is resolved once, the last part per file)."""
    import random

    from cortex_engine.capture import digests

    real = tmp_path / "real"
    (real / "src" / "deep").mkdir(parents=True)
    (real / "src" / "a.py").write_text("a")
    (real / "src" / "deep" / "b.py").write_text("b")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_text("o")
    (tmp_path / "wt").symlink_to(real)  # the worktree itself reached through a link
    (real / "lib").symlink_to(real / "src")  # a folder linked inside the worktree
    (real / "out").symlink_to(outside)  # a folder linked outside it
    (real / "src" / "alias.py").symlink_to(real / "src" / "deep" / "b.py")  # a file linked inside
    (real / "src" / "escape.py").symlink_to(outside / "o.py")  # a file linked outside
    (real / "src" / "dangling.py").symlink_to(real / "nowhere.py")
    (real / "src" / "loop.py").symlink_to(real / "src" / "loop.py")
    parts = [
        "src",
        "lib",
        "out",
        "deep",
        "a.py",
        "b.py",
        "alias.py",
        "escape.py",
        "dangling.py",
        "loop.py",
        "missing",
        "o.py",
        "..",
        ".",
    ]
    rng = random.Random(7)
    paths = [
        str(base / "/".join(rng.choice(parts) for _ in range(rng.randint(1, 4))))
        for _ in range(400)
        for base in (rng.choice([real, tmp_path / "wt", outside]),)
    ]
    paths += ["relative/x.py", str(tmp_path / "wt"), str(real), "/", str(real / "src" / "a.py" / "under-a-file")]
    digests.relative_path.cache_clear()
    for worktree in (str(real), str(tmp_path / "wt")):
        got = [digests.relative_path(p, worktree) for p in paths]
        assert got == [_reference_key(p, worktree) for p in paths]
    inside = [p for p in got if not os.path.isabs(p)]
    assert len(set(inside)) > 20  # the sample reaches many keys inside the worktree, through links and not
    assert "src/deep/b.py" in got and str(outside / "o.py") in got


def test_keying_many_files_of_one_folder_looks_at_each_file_once_and_the_folder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder's real path is resolved once for all its files, present or missing (a flush books thousands of
    reads in a few folders): about one `lstat` per file, not one per component of its path."""
    from cortex_engine.capture import digests

    folder = tmp_path.joinpath("a", "b", "c", "d", "e", "f")
    folder.mkdir(parents=True)
    for n in range(40):
        (folder / f"present_{n}.py").write_text("x")
    names = [str(folder / f"present_{n}.py") for n in range(40)] + [str(folder / f"missing_{n}.py") for n in range(40)]
    calls = []
    real_lstat = os.lstat
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: (calls.append(path), real_lstat(path, *a, **k))[1])
    digests.relative_path.cache_clear()
    digests._real_folder.cache_clear()
    keys = [digests.relative_path(name, str(tmp_path)) for name in names]
    assert keys == [os.path.relpath(name, tmp_path) for name in names]
    depth = len(folder.parts)
    assert depth > 8
    assert len(calls) <= len(names) + 2 * depth  # a walk of every component per file would be 80 x depth
