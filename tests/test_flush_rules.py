"""The spool replay's rules at their boundaries (found by mutation testing of `capture/flush.py`).

Each test writes spool lines as the hooks do, flushes through the engine, and reads what the store kept: which
reads count as complete, which exit statuses are believed, what a substituted read credits, and what a turn-end
flush may certify.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cortex_engine.adapters import cli
from cortex_engine.capture import flush
from cortex_engine.capture.flush import SPOOL, runtime_dir
from cortex_engine.engine import Engine

from .conftest import Repo
from .test_capture import bash_payload, read_payload

T = 1785700000


def spool(repo: Repo, *entries: dict[str, Any]) -> None:
    """Append spool lines as the capture hook writes them."""
    with (runtime_dir(repo.path) / SPOOL).open("a") as out:
        for entry in entries:
            out.write(json.dumps(entry) + "\n")


def line(payload: dict[str, Any], t: float | str = T, **extra: object) -> dict[str, Any]:
    """One spool line around a payload."""
    return {"v": 1, "t": t, "p": payload, **extra}


def digest_source(engine: Engine, rel: str) -> str:
    """Where the recorded digest of a read came from: the payload's content, or the file's bytes."""
    source: str = engine.conn.execute("SELECT source FROM content_digests WHERE path=?", (rel,)).fetchone()["source"]
    return source


def exit_code_of(engine: Engine, command: str) -> int | None:
    """The exit status the store recorded for a command."""
    code: int | None = engine.conn.execute(
        "SELECT exit_code FROM command_runs WHERE command_summary LIKE ?", (f"%{command}%",)
    ).fetchone()["exit_code"]
    return code


@pytest.mark.parametrize(
    ("file_fields", "tool_input", "source"),
    [
        ({}, {}, "payload"),  # no line numbers at all: a whole read
        ({"startLine": 1, "numLines": 10, "totalLines": 10}, {"limit": 2000}, "payload"),  # a limit that cut nothing
        ({"startLine": 1, "numLines": 3, "totalLines": 10}, {}, "file"),  # fewer lines than the file holds
        ({"startLine": 5}, {}, "file"),  # a slice from line 5
        ({"startLine": 1}, {"offset": 3}, "file"),
        ({"startLine": 1}, {"offset": 1}, "payload"),
        ({"startLine": 1}, {"offset": 0}, "payload"),
        ({"startLine": 1}, {"offset": 2}, "file"),
        ({}, {"limit": 5}, "file"),  # a limit without the counts that prove it cut nothing
        ({"numLines": 10}, {"limit": 5}, "file"),
        ({"totalLines": 10}, {"limit": 5}, "file"),
    ],
)
def test_only_a_read_the_payload_proves_whole_is_digested_from_its_content(
    live: Engine, repo: Repo, file_fields: dict[str, Any], tool_input: dict[str, Any], source: str
) -> None:
    repo.write("cfg.py", "line\n" * 10)
    payload = read_payload(repo, "cfg.py", "line\n" * 10)
    payload["tool_response"]["file"] = {"filePath": str(repo.path / "cfg.py"), "content": "line\n" * 10, **file_fields}
    payload["tool_input"].update(tool_input)
    spool(repo, line(payload))
    assert live.flush_spool().processed == 1
    assert digest_source(live, "cfg.py") == source


def test_a_read_response_without_a_file_object_is_read_from_the_response_itself(live: Engine, repo: Repo) -> None:
    repo.write("cfg.py", "NEW = 2\n")
    payload = read_payload(repo, "cfg.py", None)
    payload["tool_response"] = {"content": "OLD = 1\n", "numLines": 1, "totalLines": 1}
    spool(repo, line(payload))
    assert live.flush_spool().processed == 1
    assert digest_source(live, "cfg.py") == "payload"
    assert live.read_ledger(["cfg.py"])[0].verdict == "changed-since"


@pytest.mark.parametrize(
    ("error", "stored"),
    [
        ("Command exited with non-zero status code 4294967295", 4294967295),
        ("Command exited with non-zero status code 4294967296", 1),  # past 32 bits: no process returned it
        ("Command exited with non-zero status code -2147483648", -2147483648),
        ("Command exited with non-zero status code -2147483649", 1),
        ("Command exited with non-zero status code 64", 64),
    ],
)
def test_a_failure_keeps_the_status_a_process_could_have_returned(
    live: Engine, repo: Repo, error: str, stored: int
) -> None:
    spool(repo, line(bash_payload(repo, "make build", failed=True, error=error)))
    assert live.flush_spool().processed == 1
    assert exit_code_of(live, "make build") == stored


@pytest.mark.parametrize(
    ("code", "stored"),
    [(4294967295, 4294967295), (4294967296, 0), (-2147483648, -2147483648), (-2147483649, 0), ("3", 3), (True, 0)],
)
def test_a_success_payload_s_exit_code_is_believed_only_within_32_bits(
    live: Engine, repo: Repo, code: object, stored: int
) -> None:
    payload = bash_payload(repo, "make build")
    payload["tool_response"]["exit_code"] = code
    spool(repo, line(payload))
    assert live.flush_spool().processed == 1
    assert exit_code_of(live, "make build") == stored


def credit_line(
    repo: Repo, credit: dict[str, Any], *, session: str = "host-1", tool_use: str = "s-1"
) -> dict[str, Any]:
    """The line the substitution hook appends for a substituted read."""
    payload = {
        "session_id": session,
        "cwd": str(repo.path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_use_id": tool_use,
    }
    return line(payload, credit=credit)


@pytest.mark.parametrize(
    ("credit", "booked"),
    [
        ({"path": "a.py", "size": 0, "line": "x"}, True),
        ({"path": "a.py", "size": 2**53 - 1, "line": "x"}, True),
        ({"path": "a.py", "size": 2**53, "line": "x"}, False),
        ({"path": "a.py", "size": -1, "line": "x"}, False),
        ({"path": "a.py", "size": "12", "line": "x"}, False),
        ({"path": "", "size": 12, "line": "x"}, False),
        ({"path": 7, "size": 12, "line": "x"}, False),
        ({"path": "a.py", "size": 12, "line": None}, False),
        ({"path": "a.py", "size": 12}, False),
    ],
)
def test_a_substitution_credit_is_booked_only_with_its_evidence(
    live: Engine, repo: Repo, credit: dict[str, Any], booked: bool
) -> None:
    spool(repo, credit_line(repo, credit))
    result = live.flush_spool()
    assert (result.processed, result.skipped) == ((1, 0) if booked else (0, 1))
    assert result.errors == []  # refused by the rule, not by a crash the replay caught
    rows = live.conn.execute(
        "SELECT direction, evidence_ref, evidence_size FROM token_ledger "
        "WHERE channel='substitution' ORDER BY direction"
    ).fetchall()
    assert [tuple(r) for r in rows] == (
        [("injected", "a.py", credit["size"]), ("saved", "a.py", credit["size"])] if booked else []
    )


def test_a_credit_is_booked_to_the_host_session_s_primary_started_when_it_was_made(live: Engine, repo: Repo) -> None:
    """A credit from a host session the store has not seen starts that session's primary at the line's time."""
    spool(repo, credit_line(repo, {"path": "a.py", "size": 400, "line": "x"}, session="host-2"))
    assert live.flush_spool().processed == 1
    row = live.conn.execute(
        "SELECT s.host_session_id, s.started_at, t.timestamp FROM token_ledger t "
        "JOIN sessions s ON s.id = t.session_id WHERE t.channel='substitution'"
    ).fetchone()
    assert row["host_session_id"] == "host-2"
    assert row["started_at"] == row["timestamp"] and row["started_at"].startswith("2026-08-02")


@pytest.mark.parametrize(("edit_after", "certified"), [(0, False), (1, False), (-1, True)])
def test_a_turn_end_flush_certifies_a_read_only_if_nothing_changed_files_at_or_after_it(
    live: Engine, repo: Repo, edit_after: int, certified: bool
) -> None:
    repo.write("cfg.py", "A = 1\n")
    repo.write("other.py", "B = 1\n")
    edit = {
        "session_id": "host-1",
        "cwd": str(repo.path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_use_id": "e-1",
        "tool_input": {"file_path": str(repo.path / "other.py")},
    }
    spool(repo, line(read_payload(repo, "cfg.py", "A = 1\n"), T), line(edit, T + edit_after))
    live.flush_spool(turn_end=True)
    eligible = live.conn.execute("SELECT refund_eligible FROM content_digests WHERE path='cfg.py'").fetchone()[0]
    assert bool(eligible) is certified
    index = (runtime_dir(repo.path) / "index").read_text()
    assert (str(repo.path / "cfg.py") in index) is certified


def test_a_payload_the_replay_cannot_digest_is_skipped_with_its_reason_and_the_rest_kept(
    live: Engine, repo: Repo
) -> None:
    poison = read_payload(repo, "a.py", "x", tool_use="t-poison")
    poison["tool_input"]["file_path"] = str(repo.path / "a\0.py")  # a NUL in a path: no file can be named so
    spool(
        repo,
        line(bash_payload(repo, "echo one", tool_use="t-1")),
        line(poison),
        line(bash_payload(repo, "echo two", tool_use="t-2")),
    )
    result = live.flush_spool()
    assert (result.processed, result.skipped) == (2, 1)
    assert len(result.errors) == 1 and result.errors[0].endswith(": skipped a payload (ValueError)")
    assert live.conn.execute("SELECT COUNT(*) FROM command_runs").fetchone()[0] == 2
    assert live.conn.execute("SELECT COUNT(*) FROM events WHERE type='read'").fetchone()[0] == 0


def test_line_times_between_the_epoch_and_the_year_5138_are_kept(live: Engine, repo: Repo) -> None:
    spool(
        repo,
        line(bash_payload(repo, "echo early", tool_use="t-1"), 1),
        line(bash_payload(repo, "echo late", tool_use="t-2"), "99999999999,5"),
        line(bash_payload(repo, "echo never", tool_use="t-3"), 10**11),
        line(bash_payload(repo, "echo zero", tool_use="t-4"), 0),
        line(bash_payload(repo, "echo fraction", tool_use="t-5"), 1785700000.25),
        line(bash_payload(repo, "echo text", tool_use="t-6"), "1785700000.75"),
        line(bash_payload(repo, "echo huge", tool_use="t-7"), 10**400),
        line(bash_payload(repo, "echo infinite", tool_use="t-8"), float("inf")),
    )
    live.flush_spool()
    stamps = {r[0].split()[1]: r[1] for r in live.conn.execute("SELECT command_summary, timestamp FROM command_runs")}
    now = live.clock().isoformat()[:10]
    assert stamps["early"].startswith("1970-01-01T00:00:01")
    assert stamps["late"].startswith("5138-11-16")
    assert stamps["never"].startswith(now) and stamps["zero"].startswith(now)
    assert (stamps["fraction"], stamps["text"]) == ("2026-08-02T19:46:40.250Z", "2026-08-02T19:46:40.750Z")
    assert stamps["huge"].startswith(now) and stamps["infinite"].startswith(now)


def test_a_blob_pointer_is_replaced_by_its_payload_and_removed(live: Engine, repo: Repo) -> None:
    blobs = runtime_dir(repo.path) / "blobs"
    blobs.mkdir(exist_ok=True)
    name = "1785700000-1-12345.json"
    (blobs / name).write_text(json.dumps(bash_payload(repo, "echo big", tool_use="t-big")) + "\n")
    spool(repo, {"v": 1, "t": T, "blob": name})
    result = live.flush_spool()
    assert (result.processed, result.skipped) == (1, 0)
    assert not (blobs / name).exists()


def test_a_line_without_a_tool_use_id_is_kept_once_by_its_bytes(live: Engine, repo: Repo) -> None:
    payload = bash_payload(repo, "echo same")
    del payload["tool_use_id"]
    spool(repo, line(payload), line(payload), line(payload, T + 1))
    result = live.flush_spool()
    assert (result.processed, result.duplicates) == (2, 1)


def test_the_same_tool_use_in_two_events_is_two_lines(live: Engine, repo: Repo) -> None:
    failed = bash_payload(repo, "pytest -q", failed=True, tool_use="t-1")
    done = bash_payload(repo, "pytest -q", tool_use="t-1")
    spool(repo, line(failed), line(done), line(done, T + 5))
    result = live.flush_spool()
    assert (result.processed, result.duplicates) == (2, 1)


def test_unknown_tools_and_events_book_nothing(live: Engine, repo: Repo, tmp_path: Path) -> None:
    other = {**bash_payload(repo, "x", tool_use="t-1"), "tool_name": "WebFetch"}
    pre = {**bash_payload(repo, "echo y", tool_use="t-2"), "hook_event_name": "PreToolUse"}
    nameless = {**bash_payload(repo, "echo z", tool_use="t-3"), "tool_name": ""}
    spool(repo, line(other), line(pre), line(nameless))
    result = live.flush_spool()
    assert (result.processed, result.skipped) == (0, 3)
    assert live.conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("on_payload", "on_response", "stored"),
    [
        ({"exitCode": 5}, {}, 5),
        ({}, {"returncode": 7}, 7),
        ({}, {"exitCode": " 9 "}, 9),
        ({"exit_code": 2}, {"exit_code": 3}, 2),  # the payload's own field first
        ({}, {"exit_code": "1234567890123"}, 0),  # 13 digits: no status
        ({}, {"exit_code": "x1"}, 0),
    ],
)
def test_a_success_payload_s_exit_code_is_read_from_the_payload_then_the_response(
    live: Engine, repo: Repo, on_payload: dict[str, Any], on_response: dict[str, Any], stored: int
) -> None:
    payload = {**bash_payload(repo, "make build"), **on_payload}
    payload["tool_response"].update(on_response)
    spool(repo, line(payload))
    assert live.flush_spool().processed == 1
    assert exit_code_of(live, "make build") == stored


def test_a_bash_call_without_a_command_books_nothing(live: Engine, repo: Repo) -> None:
    spool(repo, line(bash_payload(repo, "", tool_use="t-1")), line(bash_payload(repo, "", failed=True, tool_use="t-2")))
    result = live.flush_spool()
    assert (result.processed, result.skipped) == (0, 2)
    assert live.conn.execute("SELECT COUNT(*) FROM command_runs").fetchone()[0] == 0


def test_a_failure_without_a_response_keeps_no_output_but_its_error(live: Engine, repo: Repo) -> None:
    spool(repo, line(bash_payload(repo, "make build", failed=True, error="Exit code 2\nno rule to make target")))
    live.flush_spool()
    row = live.conn.execute("SELECT exit_code, stdout_tail, stderr_tail FROM command_runs").fetchone()
    assert row["exit_code"] == 2 and row["stdout_tail"] is None and "no rule to make target" in row["stderr_tail"]


def test_a_failing_run_keeps_its_output_tails_from_the_response(live: Engine, repo: Repo) -> None:
    payload = bash_payload(repo, "make build")
    payload["tool_response"].update(stdout="compiling\nout line", stderr="err line", exit_code=2)
    spool(repo, line(payload))
    live.flush_spool()
    row = live.conn.execute("SELECT exit_code, stdout_tail, stderr_tail FROM command_runs").fetchone()
    assert row["exit_code"] == 2 and "out line" in row["stdout_tail"] and "err line" in row["stderr_tail"]


def test_a_run_whose_response_is_not_an_object_reads_as_not_interrupted(live: Engine, repo: Repo) -> None:
    payload = bash_payload(repo, "make build")
    payload["tool_response"] = "done"
    spool(repo, line(payload))
    live.flush_spool()
    meta = json.loads(live.conn.execute("SELECT metadata_json FROM events WHERE type='cmd'").fetchone()[0])
    assert meta["interrupted"] is False and meta["exit_code"] == 0


def flush_cli(repo: Repo, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """`cortex flush-spool` in the worktree, in this process: its exit code and what it printed."""
    capsys.readouterr()
    code = cli.main(["-C", str(repo.path), "flush-spool", *args])
    return code, capsys.readouterr().out


# -- the command line ----------------------------------------------------------------------------------------------


def test_flush_spool_prints_what_it_did(live: Engine, repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    """`cortex flush-spool [--json]` reports the lines processed, skipped and seen before, and the claims read."""
    once = line(bash_payload(repo, "echo one", tool_use="t-1"))
    spool(repo, once, once, line(bash_payload(repo, "", tool_use="t-2")))
    code, out = flush_cli(repo, capsys, "--json")
    assert code == 0
    assert {k: v for k, v in json.loads(out).items() if k != "ok"} == {
        "processed": 1,
        "skipped": 1,
        "duplicates": 1,
        "claims": 1,
    }
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
    marker.write_bytes(key.encode() + b"\n\xff\xfe not utf-8\n")
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


def test_a_flush_from_a_subfolder_replays_its_worktree_s_spool(
    repo: Repo, live: Engine, make_engine: Callable[..., Engine]
) -> None:
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


# -- write_index: the digest index the substitution hook reads ---------------------------------------------------


def index_lines(repo: Repo) -> list[list[str]]:
    return [row.split("\t") for row in (runtime_dir(repo.path) / flush.INDEX).read_text().splitlines()]


def test_the_index_lists_each_certified_whole_read_of_an_active_primary_session_by_path(
    live: Engine, repo: Repo, tmp_path: Path
) -> None:
    """One line per file, `<absolute path>\\t<sha256>\\t<size>\\t<host session>`, sorted by path: whole reads by a
    host session's primary, certified at a turn's end; a subagent's read, a partial one, a name holding a tab, a
    file outside the worktree named absolute."""
    import hashlib

    outside = tmp_path / "outside.txt"
    outside.write_text("O\n")
    for rel, text in (("b.py", "B = 1\n"), ("a.py", "A = 22\n"), ("tab\there.py", "T\n"), ("sub.py", "S\n")):
        repo.write(rel, text)
    sub = read_payload(repo, "sub.py", "S\n", tool_use="t-sub", agent=("agent-1", "Explore"))
    far = read_payload(repo, "a.py", "O\n", tool_use="t-out")
    far["tool_input"]["file_path"] = far["tool_response"]["file"]["filePath"] = str(outside)
    spool(
        repo,
        line(read_payload(repo, "b.py", "B = 1\n", tool_use="t-b"), T),
        line(read_payload(repo, "a.py", "A = 22\n", tool_use="t-a"), T + 1),
        line(read_payload(repo, "tab\there.py", "T\n", tool_use="t-tab"), T + 2),
        line(sub, T + 3),
        line(far, T + 4),
    )
    assert live.flush_spool(turn_end=True).processed == 5
    digest = {text: hashlib.sha256(text.encode()).hexdigest() for text in ("A = 22\n", "B = 1\n", "O\n")}
    assert index_lines(repo) == [  # sorted as stored: the outside file by its absolute path, first
        [str(outside), digest["O\n"], "2", "host-1"],
        [str(repo.path / "a.py"), digest["A = 22\n"], "7", "host-1"],
        [str(repo.path / "b.py"), digest["B = 1\n"], "6", "host-1"],
    ]


def test_the_index_forgets_the_reads_of_an_ended_session_and_is_written_when_missing(live: Engine, repo: Repo) -> None:
    repo.write("a.py", "A = 1\n")
    spool(repo, line(read_payload(repo, "a.py", "A = 1\n", tool_use="t-a")))
    live.flush_spool(turn_end=True)
    assert [row[0] for row in index_lines(repo)] == [str(repo.path / "a.py")]
    live.start_session("host-2")  # a new session: host-1's primary is no longer active
    (runtime_dir(repo.path) / flush.INDEX).unlink()
    assert live.flush_spool().processed == 0
    assert index_lines(repo) == []
    (runtime_dir(repo.path) / flush.INDEX).write_text("stale\tline\t1\thost-1\n")
    live.flush_spool()  # nothing replayed and the index exists: it is left as it is
    assert index_lines(repo) == [["stale", "line", "1", "host-1"]]


# -- the spool lines: what is read, what is skipped ----------------------------------------------------------------


def write_spool(repo: Repo, data: bytes) -> None:
    (runtime_dir(repo.path) / SPOOL).write_bytes(data)


def raw_line(payload: dict[str, Any], t: float = T) -> bytes:
    return json.dumps(line(payload, t)).encode() + b"\n"


def commands_stored(engine: Engine) -> list[str]:
    return sorted(r[0] for r in engine.conn.execute("SELECT command_summary FROM command_runs"))


def test_blank_lines_are_not_lines_and_bad_ones_are_skipped_each_once(live: Engine, repo: Repo) -> None:
    good = [raw_line(bash_payload(repo, f"echo {n}", tool_use=f"t-{n}")) for n in range(3)]
    write_spool(
        repo,
        b"\n   \n"
        + good[0]
        + b"\xff\xfe not utf-8\n"
        + b"[1, 2]\n"
        + b'"text"\n'
        + b"{not json\n"
        + good[1]
        + b'{"v": 1, "t": 1, "p": [1]}\n'
        + b'{"v": 1, "t": 1}\n'
        + b"\t\r\n"
        + good[2],
    )
    result = live.flush_spool()
    assert (result.processed, result.skipped, result.duplicates, result.errors) == (3, 6, 0, [])
    assert commands_stored(live) == ["echo 0", "echo 1", "echo 2"]
    assert list((runtime_dir(repo.path) / flush.CLAIMS).iterdir()) == []


def test_a_torn_last_line_is_skipped_and_the_lines_before_it_kept(live: Engine, repo: Repo) -> None:
    torn = raw_line(bash_payload(repo, "echo torn", tool_use="t-torn")).rstrip(b"\n")
    write_spool(repo, raw_line(bash_payload(repo, "echo whole", tool_use="t-1")) + torn)
    result = live.flush_spool()
    assert (result.processed, result.skipped) == (1, 1)
    assert commands_stored(live) == ["echo whole"]
    assert list((runtime_dir(repo.path) / flush.CLAIMS).iterdir()) == []
    write_spool(repo, torn)  # a spool holding only a torn line
    assert (live.flush_spool().processed, commands_stored(live)) == (0, ["echo whole"])


def blob(repo: Repo, name: str, data: bytes) -> Path:
    folder = runtime_dir(repo.path) / flush.BLOBS
    folder.mkdir(exist_ok=True)
    (folder / name).write_bytes(data)
    return folder / name


def test_blob_pointers_are_read_only_by_the_hook_s_names_and_unusable_blobs_removed(live: Engine, repo: Repo) -> None:
    """A pointer line takes its payload from the blob it names (line breaks in the blob are ignored); a name the
    hook never makes is neither read nor removed; a missing, broken or non-object blob skips its line and goes."""
    payload = json.dumps(bash_payload(repo, "echo from blob", tool_use="t-blob"), indent=1).encode()
    good = blob(repo, "1785700000.5-12-345.json", payload.replace(b"\n", b"\r\n"))
    broken = blob(repo, "1785700001-12-345.json", b'{"session_id": ')
    listed = blob(repo, "1785700002-12-345.json", b"[1, 2]\n")
    foreign = blob(repo, "notes.json", json.dumps(bash_payload(repo, "echo foreign", tool_use="t-f")).encode())
    pointers = [
        {"v": 1, "t": T, "blob": name}
        for name in (good.name, broken.name, listed.name, foreign.name, "1785700003-12-345.json", 12345)
    ]
    write_spool(repo, b"".join(json.dumps(p).encode() + b"\n" for p in pointers))
    result = live.flush_spool()
    assert (result.processed, result.skipped) == (1, 5)
    assert commands_stored(live) == ["echo from blob"]
    assert [p.name for p in (good, broken, listed, foreign) if p.exists()] == ["notes.json"]


def test_a_line_carrying_its_payload_ignores_a_blob_it_names(live: Engine, repo: Repo) -> None:
    named = blob(repo, "1785700000-1-1.json", json.dumps(bash_payload(repo, "echo blob", tool_use="t-b")).encode())
    inline = {**line(bash_payload(repo, "echo inline", tool_use="t-i")), "blob": named.name}
    write_spool(repo, json.dumps(inline).encode() + b"\n")
    assert live.flush_spool().processed == 1
    assert commands_stored(live) == ["echo inline"]
    assert named.exists()


def test_lone_surrogates_anywhere_in_a_line_are_stored_as_replacement_characters(live: Engine, repo: Repo) -> None:
    """JSON may escape a lone UTF-16 surrogate (SQLite refuses one): each becomes U+FFFD, in keys and values at any
    depth, escaped in either case; a surrogate pair (one real character) and other escapes stay as they are."""
    payload = {
        "session_id": "host-1",
        "cwd": str(repo.path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Grep",
        "tool_use_id": "t-grep",
        "tool_input": {
            "pattern": "x\ud800y",
            "glob": [["\udfff"], {"k\udc00": ["x", "\ud83d\ude00\ud7ff", 5, None, True]}, "plain"],
        },
        "tool_response": {"numFiles": 0},
    }
    data = json.dumps(line(payload)).encode()
    assert b"\\ud800" in data
    write_spool(repo, data.replace(b"\\udfff", b"\\uDFFF") + b"\n")
    assert live.flush_spool().processed == 1
    meta = json.loads(live.conn.execute("SELECT metadata_json FROM events WHERE type='search'").fetchone()[0])
    assert meta["pattern"] == "x\ufffdy"
    assert meta["glob"] == [["\ufffd"], {"k\ufffd": ["x", "\U0001f600\ud7ff", 5, None, True]}, "plain"]


def test_a_line_without_surrogate_escapes_is_read_as_it_is(live: Engine, repo: Repo) -> None:
    payload = {**bash_payload(repo, "echo caf\u00e9 \\ud800", tool_use="t-1")}
    write_spool(repo, json.dumps(line(payload), ensure_ascii=False).encode() + b"\n")
    assert live.flush_spool().processed == 1
    assert commands_stored(live) == ["echo caf\u00e9 \\ud800"]


# -- a command's outputs -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("exit_code", [1, 2])
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_secret_cut_in_two_by_the_kept_tail_is_redacted_whole_first(
    live: Engine, repo: Repo, stream: str, exit_code: int
) -> None:
    """A failing build (any status but 0) keeps its outputs' last 2,000 characters; a token straddling that cut is
    redacted before the cut, so no fragment of it is kept."""
    token = "ghp_" + "Zq9x" * 9
    payload = bash_payload(repo, "make build")
    payload["tool_response"].update({stream: "start " + token + " " + "y" * 1_980, "exit_code": exit_code})
    spool(repo, line(payload))
    live.flush_spool()
    tail = live.conn.execute(f"SELECT {stream}_tail FROM command_runs").fetchone()[0]
    assert tail is not None and tail.endswith("y" * 1_980) and "[REDACTED]" in tail
    assert token[-12:] not in tail


# -- the replay: which calls are recorded, and as what ------------------------------------------------------------


def call(
    repo: Repo,
    tool: object,
    tool_input: object,
    *,
    tool_use: str,
    event: str | None = "PostToolUse",
    response: object = None,
    **extra: object,
) -> dict[str, Any]:
    """A hook payload for one tool call (no `hook_event_name` when `event` is None)."""
    payload: dict[str, Any] = {
        "session_id": "host-1",
        "cwd": str(repo.path),
        "tool_name": tool,
        "tool_use_id": tool_use,
        "tool_input": tool_input,
        **extra,
    }
    if event is not None:
        payload["hook_event_name"] = event
    if response is not None:
        payload["tool_response"] = response
    return payload


def events(engine: Engine) -> list[tuple[str, str | None, dict[str, Any]]]:
    """(type, target, metadata) of every stored event, in the order written."""
    return [
        (r[0], r[1], json.loads(r[2]))
        for r in engine.conn.execute("SELECT type, target, metadata_json FROM events ORDER BY timestamp, rowid")
    ]


def test_reads_are_recorded_with_their_window_and_digested_only_when_they_succeeded(live: Engine, repo: Repo) -> None:
    for rel in ("a.py", "b.py", "c.py"):
        repo.write(rel, f"{rel}\n")
    whole = read_payload(repo, "a.py", "a.py\n", tool_use="t-a")
    whole["tool_input"].update(offset=0, limit=2000, extra="not kept")
    by_path = call(repo, "Read", {"path": str(repo.path / "b.py")}, tool_use="t-b")
    failed = call(
        repo, "Read", {"file_path": str(repo.path / "c.py")}, tool_use="t-c", event="PostToolUseFailure", error="denied"
    )
    spool(
        repo,
        line(whole, T),
        line(by_path, T + 1),
        line(failed, T + 2),
        line(call(repo, "Read", {"offset": 3}, tool_use="t-none"), T + 3),
        line(call(repo, "Read", ["a.py"], tool_use="t-list"), T + 4),
    )
    result = live.flush_spool()
    assert (result.processed, result.skipped, result.errors) == (3, 2, [])  # refused by the rules, not by a crash
    assert events(live) == [("read", "a.py", {"offset": 0, "limit": 2000}), ("read", "b.py", {}), ("read", "c.py", {})]
    digested = {r[0]: r[1] for r in live.conn.execute("SELECT path, source FROM content_digests")}
    assert digested == {"a.py": "payload", "b.py": "file"}


def test_edits_are_recorded_by_tool_with_whether_they_failed(live: Engine, repo: Repo) -> None:
    spool(
        repo,
        *(
            line(p, T + n)
            for n, p in enumerate(
                [
                    call(repo, "Edit", {"file_path": str(repo.path / "a.py")}, tool_use="t-1"),
                    call(
                        repo,
                        "MultiEdit",
                        {"file_path": str(repo.path / "b.py")},
                        tool_use="t-2",
                        event="PostToolUseFailure",
                    ),
                    call(repo, "Write", {"file_path": str(repo.path / "c.py")}, tool_use="t-3"),
                    call(repo, "NotebookEdit", {"notebook_path": str(repo.path / "n.ipynb")}, tool_use="t-4"),
                    call(repo, "Edit", {"path": "d.py"}, tool_use="t-5", event=None),  # no event name: a PostToolUse
                    call(repo, "Edit", {"old_string": "x"}, tool_use="t-6"),  # no path: nothing to record
                    call(repo, "Edit", {"file_path": str(repo.path / "e.py")}, tool_use="t-7", event="PreToolUse"),
                    call(repo, "Edit", {"file_path": str(repo.path / "f.py")}, tool_use="t-8", event="Stop"),
                ]
            )
        ),
    )
    result = live.flush_spool()
    assert (result.processed, result.skipped) == (5, 3)
    assert events(live) == [
        ("edit", "a.py", {"failed": False}),
        ("edit", "b.py", {"failed": True}),
        ("write", "c.py", {"failed": False}),
        ("edit", "n.ipynb", {"failed": False}),
        ("edit", "d.py", {"failed": False}),
    ]


def test_searches_are_recorded_with_their_pattern_and_certified_empty_only_before_any_change(
    live: Engine, repo: Repo
) -> None:
    """A Grep that found nothing is certified empty (its census kept) unless the batch changed files at or after it;
    the stored pattern is redacted and cut to 200 characters."""
    repo.write("src/a.py", "x = 1\n")
    token = "ghp_" + "Zq9x" * 9
    empty = {"mode": "files_with_matches", "filenames": [], "numFiles": 0}
    spool(
        repo,
        line(
            call(
                repo,
                "Grep",
                {"pattern": "NOWHERE_FOUND", "path": "src", "glob": "*.py"},
                tool_use="t-1",
                response=empty,
            ),
            T,
        ),
        line(call(repo, "Grep", {"pattern": "P" * 300}, tool_use="t-2", response=empty), T + 1),
        line(
            call(repo, "Grep", {"pattern": f"key {token}"}, tool_use="t-3", response=empty, event="PostToolUseFailure"),
            T + 2,
        ),
        line(call(repo, "Grep", {"path": "src"}, tool_use="t-4"), T + 3),
    )
    result = live.flush_spool()
    assert (result.processed, result.skipped) == (3, 1)
    spool(
        repo,
        line(call(repo, "Grep", {"pattern": "LATER_CHANGED"}, tool_use="t-5", response=empty), T + 4),
        line(call(repo, "Edit", {"file_path": str(repo.path / "src" / "a.py")}, tool_use="t-6"), T + 4),
    )
    assert live.flush_spool().processed == 2
    searches = [e for e in events(live) if e[0] == "search"]
    assert searches == [
        ("search", "src", {"pattern": "NOWHERE_FOUND", "glob": "*.py", "certified_empty": True}),
        ("search", None, {"pattern": "P" * 200, "glob": None, "certified_empty": True}),
        ("search", None, {"pattern": "key [REDACTED]", "glob": None, "certified_empty": False}),
        ("search", None, {"pattern": "LATER_CHANGED", "glob": None, "certified_empty": False}),
    ]
    certified = sorted(r[0] for r in live.conn.execute("SELECT pattern FROM negative_results"))
    assert certified == ["NOWHERE_FOUND", "P" * 300]


def test_subagent_dispatches_are_recorded_by_what_they_were_asked(live: Engine, repo: Repo) -> None:
    spool(
        repo,
        *(
            line(p, T + n)
            for n, p in enumerate(
                [
                    call(
                        repo,
                        "Agent",
                        {"description": "find the \u200bflush " + "d" * 400, "subagent_type": "Explore"},
                        tool_use="t-1",
                    ),
                    call(repo, "Task", {"subagent_type": "Plan"}, tool_use="t-2"),
                    call(repo, "Task", {}, tool_use="t-3"),
                ]
            )
        ),
    )
    assert live.flush_spool().processed == 3
    assert events(live) == [
        ("agent", None, {"description": ("find the flush " + "d" * 400)[:300], "subagent_type": "Explore"}),
        ("agent", None, {"description": "Plan", "subagent_type": "Plan"}),
        ("agent", None, {"description": "subagent", "subagent_type": None}),
    ]


def test_a_subagent_s_calls_go_to_its_own_child_session_under_the_host_s_primary(live: Engine, repo: Repo) -> None:
    for rel in ("a.py", "b.py", "c.py"):
        repo.write(rel, "A\n")
    camel = read_payload(repo, "b.py", "A\n", tool_use="t-2")
    camel.update(agentId="agent-2", agentType="Plan")
    spool(
        repo,
        line(read_payload(repo, "a.py", "A\n", tool_use="t-1", agent=("agent-1", "Explore")), T),
        line(camel, T + 1),
        line(read_payload(repo, "c.py", "A\n", tool_use="t-3"), T + 2),
    )
    assert live.flush_spool().processed == 3
    rows = live.conn.execute(
        "SELECT s.agent_id, s.agent_type, p.host_session_id AS host, p.parent_session_id IS NULL AS primary_parent "
        "FROM events e JOIN sessions s ON s.id = e.session_id LEFT JOIN sessions p ON p.id = s.parent_session_id "
        "ORDER BY e.timestamp"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        ("agent-1", "Explore", "host-1", 1),
        ("agent-2", "Plan", "host-1", 1),
        (None, "primary", None, 1),
    ]
    primary = live.conn.execute(
        "SELECT id FROM sessions WHERE host_session_id='host-1' AND parent_session_id IS NULL AND status='active'"
    ).fetchall()
    assert len(primary) == 1
    digests = {r[0]: r[1] for r in live.conn.execute("SELECT path, agent_id FROM content_digests")}
    assert digests == {"a.py": "agent-1", "b.py": "agent-2", "c.py": None}


# -- claims, keys and the files a flush leaves ----------------------------------------------------------------------


def test_orphaned_claims_are_replayed_with_the_spool_and_nothing_else_in_claims_is_touched(
    live: Engine, repo: Repo
) -> None:
    """Claims a crashed flush left are finished (each counted) with the live spool; a file in claims/ that no flush
    named, and a folder named like a claim, are neither read nor removed."""
    claims = runtime_dir(repo.path) / flush.CLAIMS
    claims.mkdir(exist_ok=True)
    (claims / "00000000000000000001-42.jsonl").write_bytes(raw_line(bash_payload(repo, "echo first", tool_use="t-1")))
    (claims / "00000000000000000002-42.jsonl").write_bytes(raw_line(bash_payload(repo, "echo second", tool_use="t-2")))
    (claims / "notes.jsonl").write_bytes(raw_line(bash_payload(repo, "echo foreign", tool_use="t-3")))
    (claims / "00000000000000000003-42.jsonl").mkdir()
    spool(repo, line(bash_payload(repo, "echo live", tool_use="t-4")))
    result = live.flush_spool()
    assert (result.processed, result.claims) == (3, 3)
    assert commands_stored(live) == ["echo first", "echo live", "echo second"]
    assert sorted(p.name for p in claims.iterdir()) == ["00000000000000000003-42.jsonl", "notes.jsonl"]
    assert not (runtime_dir(repo.path) / SPOOL).exists()


def test_a_flush_with_nothing_to_replay_claims_nothing_and_lets_capture_resume(live: Engine, repo: Repo) -> None:
    folder = runtime_dir(repo.path)
    (folder / flush.PAUSED).write_text("paused\n")
    (folder / flush.FLUSH_AFTER).write_text("9999999999\n")
    result = live.flush_spool()
    assert (result.processed, result.skipped, result.duplicates, result.claims, result.errors) == (0, 0, 0, 0, [])
    assert not (folder / flush.PAUSED).exists() and not (folder / flush.FLUSH_AFTER).exists()
    assert (folder / flush.INDEX).read_text() == ""


def test_a_spool_that_is_a_link_is_never_claimed(live: Engine, repo: Repo, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(raw_line(bash_payload(repo, "echo planted", tool_use="t-1")))
    (runtime_dir(repo.path) / SPOOL).symlink_to(target)
    assert live.flush_spool().claims == 0
    assert target.exists() and commands_stored(live) == []


def test_lines_are_told_apart_by_event_and_tool_use_id_or_else_by_their_bytes(live: Engine, repo: Repo) -> None:
    """A tool-use id that is not a non-empty string does not name a line: such lines are keyed by their bytes, so
    two different ones both count and a repeated one counts once, in one flush or the next."""
    lines = [
        line(bash_payload(repo, "echo one", tool_use="t-1")),
        line({**bash_payload(repo, "echo two"), "tool_use_id": 5}),
        line({**bash_payload(repo, "echo three"), "tool_use_id": 5}),
        line({**bash_payload(repo, "echo four"), "tool_use_id": ""}),
        line({**bash_payload(repo, "echo five"), "tool_use_id": ""}),
        line({**bash_payload(repo, "echo one again", tool_use="t-1")}),  # the same call, seen again
        line({**bash_payload(repo, "echo one failed", tool_use="t-1"), "hook_event_name": "PostToolUseFailure"}),
    ]
    spool(repo, *lines)
    result = live.flush_spool()
    assert (result.processed, result.duplicates) == (6, 1)
    assert "echo one again" not in commands_stored(live)
    spool(repo, *lines)
    again = live.flush_spool()
    assert (again.processed, again.skipped, again.duplicates) == (0, 0, 7)


def test_hundreds_of_lines_seen_before_are_all_recognised(live: Engine, repo: Repo) -> None:
    lines = [line(bash_payload(repo, f"echo {n}", tool_use=f"t-{n}")) for n in range(1_203)]
    spool(repo, *lines)
    assert live.flush_spool().processed == 1_203
    spool(repo, *lines, line(bash_payload(repo, "echo new", tool_use="t-new")))
    result = live.flush_spool()
    assert (result.processed, result.duplicates) == (1, 1_203)


def test_a_tool_use_id_holding_a_secret_is_kept_redacted_and_still_tells_lines_apart(live: Engine, repo: Repo) -> None:
    token = "ghp_" + "Zq9x" * 9
    spool(
        repo,
        line(bash_payload(repo, "echo one", tool_use=f"t-{token}")),
        line(bash_payload(repo, "echo one again", tool_use=f"t-{token}")),
    )
    result = live.flush_spool()
    assert (result.processed, result.duplicates) == (1, 1)
    keys = [r[0] for r in live.conn.execute("SELECT key FROM spool_seen")]
    assert len(keys) == 1 and token not in keys[0]
    spool(repo, line(bash_payload(repo, "echo one later", tool_use=f"t-{token}")))
    assert live.flush_spool().duplicates == 1


@pytest.mark.parametrize(
    ("read_at", "edit_at", "certified"),
    [
        ("1785700000,5", "1785700000,4", True),  # a decimal comma: the read came after the edit
        ("1785700000,5", "1785700000,5", False),
        ("1785700000.5", "1785700000.6", False),
        (None, "1785700000", False),  # no time: it may have come after anything
        ("soon", "1785700000", False),
        ("1785700000", None, True),  # an edit with no time is no known change after the read
    ],
)
def test_a_read_is_certified_only_after_every_change_of_its_batch(
    live: Engine, repo: Repo, read_at: str | None, edit_at: str | None, certified: bool
) -> None:
    repo.write("cfg.py", "A = 1\n")
    read = {"v": 1, "p": read_payload(repo, "cfg.py", "A = 1\n")}
    edit = {"v": 1, "p": call(repo, "Edit", {"file_path": str(repo.path / "other.py")}, tool_use="t-e")}
    if read_at is not None:
        read["t"] = read_at
    if edit_at is not None:
        edit["t"] = edit_at
    (runtime_dir(repo.path) / SPOOL).write_text(json.dumps(edit) + "\n" + json.dumps(read) + "\n")
    assert live.flush_spool(turn_end=True).processed == 2
    eligible = live.conn.execute("SELECT refund_eligible FROM content_digests WHERE path='cfg.py'").fetchone()[0]
    assert bool(eligible) is certified


# -- commands --------------------------------------------------------------------------------------------------------


def command_rows(engine: Engine) -> list[dict[str, Any]]:
    """Each command as stored: its run row, its event's metadata, and whether it became a memory item."""
    rows = engine.conn.execute(
        "SELECT c.*, e.metadata_json, (SELECT COUNT(*) FROM memory_items m WHERE m.source_id = c.id) AS items "
        "FROM command_runs c JOIN events e ON e.id = c.event_id ORDER BY c.timestamp, c.rowid"
    ).fetchall()
    return [
        {**{k: r[k] for k in r.keys() if k != "metadata_json"}, "meta": json.loads(r["metadata_json"])} for r in rows
    ]


def test_a_command_s_run_and_event_hold_its_outcome(live: Engine, repo: Repo) -> None:
    failing = bash_payload(repo, "pytest tests/test_a.py", tool_use="t-1")
    failing["tool_input"]["run_in_background"] = True
    failing["tool_response"].update(stdout="collected 1\n1 failed", stderr="E   boom", interrupted=False, exit_code=1)
    spool(repo, line(failing))
    live.flush_spool()
    [row] = command_rows(live)
    assert row["meta"] == {
        "category": "test",
        "exit_code": 1,
        "safe_summary": "pytest tests/test_a.py",
        "files_touched": ["tests/test_a.py"],
        "interrupted": False,
        "background": True,
    }
    assert (
        row["category"],
        row["command_summary"],
        row["exit_code"],
        row["stdout_tail"],
        row["stderr_tail"],
        json.loads(row["files_touched_json"]),
        row["session_id"],
        row["scope_key"],
    ) == (
        "test",
        "pytest tests/test_a.py",
        1,
        "collected 1\n1 failed",
        "E   boom",
        ["tests/test_a.py"],
        live.ensure_session(),
        live.scope.key,
    )
    assert row["items"] == 1


@pytest.mark.parametrize(
    ("payload_fields", "response", "exit_code", "interrupted", "stderr"),
    [
        (
            {"error": "Command exited with non-zero status code 3", "is_interrupt": False},
            None,
            3,
            False,
            "Command exited with non-zero status code 3",
        ),
        ({"error": "Interrupted by user", "is_interrupt": True}, None, None, True, "Interrupted by user"),
        ({"error": "Interrupted: exit code 130", "is_interrupt": True}, None, 130, True, "Interrupted: exit code 130"),
        ({"error": "no status at all"}, None, 1, False, "no status at all"),
        ({"error": "exit code 000000000007"}, None, 7, False, "exit code 000000000007"),  # 12 digits are read
        ({"error": "exit code 0000000000007"}, None, 1, False, "exit code 0000000000007"),  # 13 are no status
        ({"error": "exit code 123456789012"}, None, 1, False, "exit code 123456789012"),  # past 32 bits
        (
            {"error": "exit code 2"},
            {"stdout": "out", "stderr": "the real error", "interrupted": True},
            2,
            True,
            "the real error",
        ),
        ({"error": "exit code 2"}, {"stdout": "out", "stderr": ""}, 2, False, "exit code 2"),
        ({}, None, 1, False, None),  # no error text: a failure all the same, with nothing to keep
    ],
)
def test_a_failure_event_s_status_interruption_and_error(
    live: Engine,
    repo: Repo,
    payload_fields: dict[str, Any],
    response: dict[str, Any] | None,
    exit_code: int | None,
    interrupted: bool,
    stderr: str | None,
) -> None:
    payload = {
        **call(repo, "Bash", {"command": "make build"}, tool_use="t-1", event="PostToolUseFailure", response=response),
        **payload_fields,
    }
    spool(repo, line(payload))
    assert live.flush_spool().processed == 1
    [row] = command_rows(live)
    assert (row["exit_code"], row["meta"]["exit_code"], row["meta"]["interrupted"]) == (
        exit_code,
        exit_code,
        interrupted,
    )
    assert row["stderr_tail"] == (stderr if exit_code not in (None, 0) else None)


def test_a_success_response_that_says_it_was_interrupted_is_kept_so(live: Engine, repo: Repo) -> None:
    payload = bash_payload(repo, "make build")
    payload["tool_response"].update(interrupted=True, stdout="half", exit_code=0)
    spool(repo, line(payload))
    live.flush_spool()
    [row] = command_rows(live)
    assert (row["exit_code"], row["meta"]["interrupted"], row["meta"]["background"]) == (0, True, False)


@pytest.mark.parametrize(
    ("command", "exit_code", "projected"),
    [
        ("ls -la", 0, False),
        ("cd src", 0, False),
        ("whoami", 0, False),  # hook noise: read, shell, other
        ("ls -la", 2, True),
        ("echo hi", 1, True),
        ("whoami", 1, True),  # a failing one is worth remembering
        ("pytest -q", 0, True),
        ("make build", 0, True),
        ("git commit -m x", 0, True),
        ("go run .", 0, True),
    ],
)
def test_only_commands_worth_remembering_become_memory(
    live: Engine, repo: Repo, command: str, exit_code: int, projected: bool
) -> None:
    payload = bash_payload(repo, command)
    payload["tool_response"]["exit_code"] = exit_code
    spool(repo, line(payload))
    live.flush_spool()
    [row] = command_rows(live)
    assert row["items"] == int(projected)


@pytest.mark.parametrize(
    ("command", "episode"),
    [("pytest -q", True), ("make build", True), ("git push", True), ("ls missing", False), ("echo x", False)],
)
def test_a_failing_test_build_or_git_command_opens_a_failure_episode(
    live: Engine, repo: Repo, command: str, episode: bool
) -> None:
    payload = bash_payload(repo, command)
    payload["tool_response"]["exit_code"] = 2
    spool(repo, line(payload))
    live.flush_spool()
    episodes = live.conn.execute("SELECT summary FROM episodes WHERE kind='command_failure'").fetchall()
    items = live.conn.execute("SELECT COUNT(*) FROM memory_items WHERE kind='episode:command_failure'").fetchone()[0]
    assert (len(episodes), items) == ((1, 1) if episode else (0, 0))


def test_a_test_run_passing_after_failing_records_the_cycle(live: Engine, repo: Repo) -> None:
    spool(
        repo,
        line(bash_payload(repo, "pytest -q", failed=True, tool_use="t-1"), T),
        line(bash_payload(repo, "pytest -q", tool_use="t-2"), T + 60),
    )
    live.flush_spool()
    cycles = live.conn.execute("SELECT COUNT(*) FROM episodes WHERE kind='test_cycle'").fetchone()[0]
    assert cycles == 1
    spool(
        repo,
        line(bash_payload(repo, "make build", failed=True, tool_use="t-3"), T + 120),
        line(bash_payload(repo, "make build", tool_use="t-4"), T + 180),
    )
    live.flush_spool()
    assert live.conn.execute("SELECT COUNT(*) FROM episodes WHERE kind='test_cycle'").fetchone()[0] == 1


# -- sessions and scopes ---------------------------------------------------------------------------------------------


def test_a_host_session_moving_between_worktrees_rotates_its_primary_each_time(
    live: Engine, repo: Repo, tmp_path: Path
) -> None:
    """One spool, a host session working in the main worktree, then a linked one, then the main one again: each
    move ends the primary it left and starts one in the scope it entered; each scope's snapshot names its files."""
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "feature", str(linked))
    (linked / "f.py").write_text("F\n")
    repo.write("m.py", "M\n")
    elsewhere = read_payload(repo, "m.py", "F\n", tool_use="t-2", cwd=linked)
    elsewhere["tool_input"]["file_path"] = elsewhere["tool_response"]["file"]["filePath"] = str(linked / "f.py")
    spool(
        repo,
        line(read_payload(repo, "m.py", "M\n", tool_use="t-1"), T),
        line(elsewhere, T + 1),
        line(call(repo, "Edit", {"file_path": str(repo.path / "m.py")}, tool_use="t-3"), T + 2),
    )
    assert live.flush_spool().processed == 3
    rows = live.conn.execute(
        "SELECT e.type, e.target, e.scope_key, s.id, s.status, s.scope_key AS session_scope "
        "FROM events e JOIN sessions s ON s.id = e.session_id ORDER BY e.timestamp"
    ).fetchall()
    assert [(r["type"], r["target"]) for r in rows] == [("read", "m.py"), ("read", "f.py"), ("edit", "m.py")]
    assert len({r["id"] for r in rows}) == 3
    assert [r["status"] for r in rows] == ["ended", "ended", "active"]
    main_key = live.scope.key
    assert [r["scope_key"] for r in rows][::2] == [main_key, main_key] and rows[1]["scope_key"] != main_key
    assert all(r["scope_key"] == r["session_scope"] for r in rows)
    snapshots = {
        r[0]: r[1] for r in live.conn.execute("SELECT source_id, text FROM memory_items WHERE kind='branch_snapshot'")
    }
    assert "Recent files: m.py" in snapshots[f"branch:{main_key}"]
    assert "Recent files: f.py" in snapshots[f"branch:{rows[1]['scope_key']}"]


def test_calls_of_two_host_sessions_go_to_their_own_primaries(live: Engine, repo: Repo) -> None:
    repo.write("a.py", "A\n")
    other = read_payload(repo, "a.py", "A\n", session="host-2", tool_use="t-2")
    numeric = {**read_payload(repo, "a.py", "A\n", tool_use="t-3"), "session_id": 77}
    spool(
        repo,
        line(read_payload(repo, "a.py", "A\n", tool_use="t-1"), T),
        line(other, T + 1),
        line(read_payload(repo, "a.py", "A\n", tool_use="t-4"), T + 2),
        line(numeric, T + 3),
    )
    assert live.flush_spool().processed == 4
    hosts = [
        r[0]
        for r in live.conn.execute(
            "SELECT s.host_session_id FROM events e JOIN sessions s ON s.id = e.session_id ORDER BY e.timestamp"
        )
    ]
    assert hosts == ["host-1", "host-2", "host-1", "77"]
    assert live.conn.execute("SELECT COUNT(*) FROM sessions WHERE host_session_id='host-1'").fetchone()[0] == 1


def test_a_flush_truncates_a_wal_grown_past_its_bound(
    live: Engine, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORTEX_WAL_MAX_BYTES", "65536")
    wal = Path(f"{live.identity.db_path}-wal")
    for n in range(40):
        live.note("insight", f"padding note {n} " + "lorem ipsum dolor " * 60)
    assert wal.stat().st_size > 65536
    spool(repo, line(bash_payload(repo, "echo one", tool_use="t-1")))
    done = live.flush_spool()
    assert (done.processed, done.checkpoint, wal.stat().st_size) == (1, "truncated", 0)
    assert live.flush_spool().checkpoint is None


@pytest.mark.parametrize(
    ("tool", "certified"),
    [
        ("Bash", False),
        ("Write", False),
        ("MultiEdit", False),
        ("NotebookEdit", False),
        ("Grep", True),
        ("Read", True),
        ("Task", True),
    ],
)
def test_only_tools_that_change_files_stop_an_earlier_read_being_certified(
    live: Engine, repo: Repo, tool: str, certified: bool
) -> None:
    repo.write("cfg.py", "A = 1\n")
    later = call(
        repo,
        tool,
        {"file_path": str(repo.path / "other.py"), "command": "touch other.py", "pattern": "x", "description": "look"},
        tool_use="t-later",
    )
    spool(repo, line(read_payload(repo, "cfg.py", "A = 1\n"), T), line(later, T + 1))
    live.flush_spool(turn_end=True)
    eligible = live.conn.execute("SELECT refund_eligible FROM content_digests WHERE path='cfg.py'").fetchone()[0]
    assert bool(eligible) is certified


def test_a_batch_redone_line_by_line_counts_each_line_once_and_books_the_poisonous_one_as_seen(
    live: Engine, repo: Repo
) -> None:
    """One payload the replay cannot digest: the batch is redone with each line isolated, and the counts are that
    redo's alone (the line skipped with its reason, the rest processed, skipped or duplicate once each); the blob
    behind a line is removed with its commit; the bad line is seen, so a later flush does not try it again."""
    poison = read_payload(repo, "a.py", "x", tool_use="t-poison")
    poison["tool_input"]["file_path"] = str(repo.path / "a\0.py")
    big = blob(
        repo, "1785700000-7-7.json", json.dumps(bash_payload(repo, "echo from blob", tool_use="t-blob")).encode()
    )
    good = line(bash_payload(repo, "echo one", tool_use="t-1"))
    spool(
        repo,
        good,
        {"v": 1, "t": T, "blob": big.name},
        line(poison),
        good,
        line(bash_payload(repo, "", tool_use="t-empty")),
    )
    result = live.flush_spool()
    assert (result.processed, result.skipped, result.duplicates) == (2, 2, 1)
    assert len(result.errors) == 1 and result.errors[0].endswith(": skipped a payload (ValueError)")
    assert commands_stored(live) == ["echo from blob", "echo one"]
    assert not big.exists()
    spool(repo, line(poison))
    again = live.flush_spool()
    assert (again.processed, again.skipped, again.duplicates, again.errors) == (0, 0, 1, [])


def test_only_a_pre_tool_use_line_books_a_substitution_credit(live: Engine, repo: Repo) -> None:
    """A credit on any other line is not the substitution hook's: the line is replayed as what it says it is."""
    repo.write("a.py", "A\n")
    spool(repo, line(read_payload(repo, "a.py", "A\n"), credit={"path": "a.py", "size": 400, "line": "x"}))
    assert live.flush_spool().processed == 1
    assert live.conn.execute("SELECT COUNT(*) FROM token_ledger WHERE channel='substitution'").fetchone()[0] == 0
    assert [e[:2] for e in events(live)] == [("read", "a.py")]


# -- what the replay's keys, claims and cwd fallback must still do --------------------------------


def test_a_line_without_an_event_name_is_the_same_call_as_one_with_an_empty_name(live: Engine, repo: Repo) -> None:
    """Both are replayed as a PostToolUse: the same tool-use id under either is one call, booked once."""
    nameless = bash_payload(repo, "echo once", tool_use="t-1")
    del nameless["hook_event_name"]
    spool(repo, line(nameless), line({**bash_payload(repo, "echo twice", tool_use="t-1"), "hook_event_name": ""}))
    result = live.flush_spool()
    assert (result.processed, result.duplicates) == (1, 1)
    assert commands_stored(live) == ["echo once"]


def test_the_lines_an_earlier_flush_booked_are_still_recognised(live: Engine, repo: Repo, make_engine) -> None:
    """`spool_seen` outlives a flush and an upgrade: a claim left by a crash after its commit is replayed against
    the keys booked then. Schema 15 booked `<event>:<tool-use id>` and `sha256:<the line's bytes>`; schema 16
    rewrites them as it migrates (a digest, and the bare SHA-256), so the replay books nothing twice."""
    import hashlib

    keyless = bash_payload(repo, "echo by its bytes")
    del keyless["tool_use_id"]
    raw = json.dumps(line(keyless)).encode()
    live.conn.execute(
        "INSERT INTO spool_seen(key, seen_at) VALUES (?, '2026-01-01T00:00:00.000Z'), (?, '2026-01-01T00:00:00.000Z')",
        ("PostToolUse:t-1", "sha256:" + hashlib.sha256(raw).hexdigest()),
    )
    live.conn.execute("UPDATE meta SET value='15' WHERE key='schema_version'")
    live.conn.commit()
    live.close()
    upgraded = make_engine(repo.path)
    assert sorted(k for (k,) in upgraded.conn.execute("SELECT key FROM spool_seen")) == sorted(
        [flush.spool_key("PostToolUse", "t-1"), hashlib.sha256(raw).hexdigest()]
    )
    write_spool(repo, raw_line(bash_payload(repo, "echo by its id", tool_use="t-1")) + raw + b"\n")
    result = upgraded.flush_spool()
    assert (result.processed, result.duplicates) == (0, 2)
    assert commands_stored(upgraded) == []


def test_a_line_whose_cwd_is_missing_or_gone_belongs_to_the_worktree_of_its_spool(
    live: Engine, repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook found the worktree by walking up from the cwd; the flush may run anywhere (here: outside git)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    no_cwd = call(repo, "Edit", {"file_path": str(repo.path / "a.py")}, tool_use="t-1")
    del no_cwd["cwd"]
    gone = call(repo, "Edit", {"file_path": str(repo.path / "b.py")}, tool_use="t-2", cwd=str(repo.path / "gone"))
    spool(repo, line(no_cwd, T), line(gone, T + 1))
    assert live.flush_spool().processed == 2
    rows = live.conn.execute("SELECT target, scope_key FROM events ORDER BY timestamp").fetchall()
    assert [tuple(r) for r in rows] == [("a.py", live.scope.key), ("b.py", live.scope.key)]


def test_the_counts_and_reasons_of_every_claim_add_up(live: Engine, repo: Repo) -> None:
    """Two orphaned claims and the live spool, each with a good line, a line that is not JSON, a payload the replay
    refuses, and a line seen before: the result counts every claim's lines, and a payload that could not be
    replayed is reported under the claim that held it."""
    claims = runtime_dir(repo.path) / flush.CLAIMS
    claims.mkdir(exist_ok=True)
    poison = read_payload(repo, "a.py", "x", tool_use="t-poison")
    poison["tool_input"]["file_path"] = str(repo.path / "a\0.py")
    first, second = "00000000000000000001-42.jsonl", "00000000000000000002-42.jsonl"
    (claims / first).write_bytes(
        raw_line(bash_payload(repo, "echo first", tool_use="t-1"))
        + b"{not json\n"
        + raw_line(bash_payload(repo, "", tool_use="t-2"))
        + raw_line(poison)
    )
    (claims / second).write_bytes(
        raw_line(bash_payload(repo, "echo second", tool_use="t-3"))
        + b"[1]\n"
        + raw_line(bash_payload(repo, "", tool_use="t-4"))
        + raw_line(bash_payload(repo, "echo first", tool_use="t-1"))
    )
    spool(
        repo,
        line(bash_payload(repo, "echo live", tool_use="t-5")),
        line(bash_payload(repo, "", tool_use="t-6")),
        line(bash_payload(repo, "echo second", tool_use="t-3")),
    )
    result = live.flush_spool()
    assert (result.processed, result.skipped, result.duplicates, result.claims) == (3, 6, 2, 3)
    assert result.errors == [f"{first}: skipped a payload (ValueError)"]
    assert commands_stored(live) == ["echo first", "echo live", "echo second"]


def test_a_torn_last_line_is_one_more_line_skipped_and_the_lines_before_it_are_read_once(
    live: Engine, repo: Repo
) -> None:
    torn = raw_line(bash_payload(repo, "echo torn", tool_use="t-torn")).rstrip(b"\n")
    write_spool(
        repo,
        raw_line(bash_payload(repo, "echo one", tool_use="t-1"))
        + b"{not json\n"
        + raw_line(bash_payload(repo, "echo two", tool_use="t-2"))
        + torn,
    )
    result = live.flush_spool()
    assert (result.processed, result.skipped, result.duplicates) == (2, 2, 0)
    assert commands_stored(live) == ["echo one", "echo two"]


def test_lines_a_hook_appends_to_the_claim_during_the_flush_are_replayed_by_it(live: Engine, repo: Repo) -> None:
    """A hook that opened the spool just before it was claimed appends to the claim: the flush reads on while the
    claim grows, and leaves nothing behind. (The append happens when the first line is stored, through a trigger.)"""
    claims = runtime_dir(repo.path) / flush.CLAIMS
    late = raw_line(bash_payload(repo, "echo late", tool_use="t-late"))
    appended: list[str] = []

    def append_once() -> int:
        if not appended:
            [claim] = list(claims.iterdir())
            with claim.open("ab") as out:
                out.write(late)
            appended.append(claim.name)
        return 0

    live.conn.create_function("append_to_claim", 0, append_once)
    live.conn.execute("CREATE TEMP TRIGGER grow AFTER INSERT ON main.command_runs BEGIN SELECT append_to_claim(); END")
    spool(repo, line(bash_payload(repo, "echo early", tool_use="t-early")))
    result = live.flush_spool()
    assert appended and (result.processed, result.skipped, result.duplicates) == (2, 0, 0)
    assert commands_stored(live) == ["echo early", "echo late"]
    assert list(claims.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a file away")
def test_a_claim_that_is_not_this_user_s_is_reported_and_kept(live: Engine, repo: Repo) -> None:
    claims = runtime_dir(repo.path) / flush.CLAIMS
    claims.mkdir(exist_ok=True)
    name = "00000000000000000001-42.jsonl"
    (claims / name).write_bytes(raw_line(bash_payload(repo, "echo planted", tool_use="t-1")))
    os.chown(claims / name, 65534, 65534)
    result = live.flush_spool()
    assert (result.processed, result.claims, commands_stored(live)) == (0, 1, [])
    assert len(result.errors) == 1 and result.errors[0].startswith(f"{name}: ")
    assert "not a regular file of this user" in result.errors[0]
    assert (claims / name).exists()


def test_a_file_whose_name_holds_a_line_break_is_left_out_of_the_index(live: Engine, repo: Repo) -> None:
    """The index is one line per file: a path with a line break in it would forge a second line. The files after
    it are listed all the same."""
    for rel in ("a.py", "new\nline.py", "z.py"):
        repo.write(rel, "A\n")
    spool(
        repo,
        line(read_payload(repo, "a.py", "A\n", tool_use="t-a"), T),
        line(read_payload(repo, "new\nline.py", "A\n", tool_use="t-nl"), T + 1),
        line(read_payload(repo, "z.py", "A\n", tool_use="t-z"), T + 2),
    )
    assert live.flush_spool(turn_end=True).processed == 3
    assert [row[0] for row in index_lines(repo)] == [str(repo.path / "a.py"), str(repo.path / "z.py")]


def test_a_read_named_relative_to_its_cwd_digests_the_file_there(
    live: Engine, repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path the host gave relative is read in the directory the tool ran in, wherever the flush runs."""
    import hashlib

    repo.write("src/a.py", "A = 1\n")
    monkeypatch.chdir(tmp_path)
    spool(repo, line(call(repo, "Read", {"file_path": "a.py"}, tool_use="t-1", cwd=str(repo.path / "src"))))
    result = live.flush_spool()
    assert (result.processed, result.errors) == (1, [])
    row = live.conn.execute("SELECT path, sha256, byte_size, source FROM content_digests").fetchone()
    assert tuple(row) == ("a.py", hashlib.sha256(b"A = 1\n").hexdigest(), 6, "file")


def test_only_a_passing_test_run_records_a_test_cycle(live: Engine, repo: Repo) -> None:
    """A command that is not a test, arriving after the session's newest event (its line stamped earlier, as a
    parallel call's may be), records no cycle even though the session's timeline ends in one."""
    spool(
        repo,
        line(bash_payload(repo, "pytest -q", failed=True, tool_use="t-1"), T),
        line(bash_payload(repo, "pytest -q", tool_use="t-2"), T + 100),
    )
    live.flush_spool()
    spool(
        repo,
        line(bash_payload(repo, "echo done", tool_use="t-3"), T - 50),
        line(bash_payload(repo, "make build", tool_use="t-4"), T - 40),
    )
    assert live.flush_spool().processed == 2
    assert live.conn.execute("SELECT COUNT(*) FROM episodes WHERE kind='test_cycle'").fetchone()[0] == 1


def test_each_test_cycle_is_its_own_episode_pointing_at_the_run_that_ended_it(live: Engine, repo: Repo) -> None:
    spool(
        repo,
        *(line(bash_payload(repo, "pytest -q", failed=n % 2 == 0, tool_use=f"t-{n}"), T + 60 * n) for n in range(4)),
    )
    live.flush_spool()
    passes = [
        r[0]
        for r in live.conn.execute(
            "SELECT e.id FROM events e JOIN command_runs c ON "
            "c.event_id = e.id WHERE c.exit_code = 0 ORDER BY e.timestamp"
        )
    ]
    cycles = [
        json.loads(r[0])["event_id"]
        for r in live.conn.execute("SELECT metadata_json FROM episodes WHERE kind='test_cycle' ORDER BY created_at")
    ]
    assert len(passes) == 2 and cycles == passes


def test_a_lone_surrogate_in_a_path_or_a_session_id_is_stored_as_a_replacement_character(
    live: Engine, repo: Repo
) -> None:
    """Not only in what the replay cleans itself (patterns, commands): a file path and a host session id go to the
    store as they came, and SQLite refuses a lone surrogate."""
    edit = {
        **call(repo, "Edit", {"file_path": str(repo.path / "a\ud800.py")}, tool_use="t-1"),
        "session_id": "host-\udc00",
    }
    write_spool(repo, json.dumps(line(edit)).encode() + b"\n")
    result = live.flush_spool()
    assert (result.processed, result.errors) == (1, [])
    rows = live.conn.execute(
        "SELECT e.target, s.host_session_id FROM events e JOIN sessions s ON s.id = e.session_id"
    ).fetchall()
    assert [tuple(r) for r in rows] == [("a\ufffd.py", "host-\ufffd")]


def test_a_blob_s_line_breaks_are_dropped_even_inside_its_strings(live: Engine, repo: Repo) -> None:
    """A blob is one JSON value however it was wrapped: a CR or LF anywhere in it, inside a string too, is no part
    of the payload."""
    payload = json.dumps(bash_payload(repo, "echo wrapped", tool_use="t-wrap")).encode()
    wrapped = blob(repo, "1785700000-3-3.json", payload.replace(b"echo wrapped", b"echo wr\r\nap\rp\ned"))
    write_spool(repo, json.dumps({"v": 1, "t": T, "blob": wrapped.name}).encode() + b"\n")
    assert (live.flush_spool().processed, commands_stored(live)) == (1, ["echo wrapped"])


def test_a_command_s_item_is_projected_from_its_row_as_stored(live: Engine, repo: Repo) -> None:
    """The flush projects a command run from the values it has just written, as the choke point stored them (not
    read back): over commands and outputs holding secrets, escape sequences and invisible characters, every
    command item reads exactly as the stored row composes, and holds none of what the store never keeps."""
    token = "ghp_" + "Zq9x" * 9
    noisy = "\x1b[31mFAILED\x1b[0m tests/test_a.py::t \u200b"
    payloads = []
    for n, (command, out, err) in enumerate(
        [
            (f"pytest tests/test_a.py --token {token}", noisy, f"auth {token} rejected"),
            ("make build\u202e", "", "\x1b[1merror\x1b[0m: src/b.c:3"),
            (f"git push https://user:{token}@example.com/r.git", "", "denied"),
            ("npm test", f"ok {noisy}", ""),
        ]
    ):
        payload = bash_payload(repo, command, tool_use=f"t-{n}")
        payload["tool_response"] = {"stdout": out, "stderr": err, "exit_code": 1 + n % 2, "interrupted": False}
        payloads.append(line(payload))
    spool(repo, *payloads)
    assert live.flush_spool().processed == 4
    rows = live.conn.execute(
        "SELECT r.*, m.text FROM command_runs r JOIN memory_items m ON m.id = 'command_runs:' || r.id ORDER BY r.rowid"
    ).fetchall()
    assert len(rows) == 4
    for row in rows:
        composed = [f"[{row['category']}] {row['command_summary']} (exit {row['exit_code']})"]
        files = json.loads(row["files_touched_json"])
        composed += [f"Files: {', '.join(files)}"] if files else []
        composed += [f"Stdout: {row['stdout_tail']}"] if row["stdout_tail"] else []
        composed += [f"Stderr: {row['stderr_tail']}"] if row["stderr_tail"] else []
        assert row["text"] == "\n".join(composed)
    stored = " ".join(row["text"] for row in rows)
    assert token not in stored and "\x1b" not in stored and "\u200b" not in stored and "\u202e" not in stored
