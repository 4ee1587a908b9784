"""The spool replay's rules at their boundaries (found by mutation testing of `capture/flush.py`).

Each test writes spool lines as the hooks do, flushes through the engine, and reads what the store kept: which
reads count as complete, which exit statuses are believed, what a substituted read credits, and what a turn-end
flush may certify.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
