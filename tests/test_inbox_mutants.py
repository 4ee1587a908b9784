"""A person's verdict on the inbox, rule by rule (found by mutation testing of `memory/inbox.py`).

Which arrivals a verdict takes (by id, by prefix, or all of this scope's), what it refuses without changing
anything, what accepting makes of a decision file and of imported notes, and what each verdict reports.
Real git repositories, decision files committed by another author, imports read from a file.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex_engine.base import settings
from cortex_engine.base.errors import InvalidInput, NotFound, Refused
from cortex_engine.engine import Engine
from cortex_engine.memory import arrivals
from cortex_engine.memory.inbox import Verdict

from .conftest import Clock, Repo
from .test_inbox import FOLDER, MALLORY, commit_as, madr

Open = Callable[..., Engine]
OTHER = "branch:/elsewhere:feature"


def export(path: Path, scope: str, *notes: tuple[str, str, str, str]) -> str:
    """An export file of (id, timestamp, subject, content) decisions under `scope`; returns its path."""
    lines = [json.dumps({"cortex_export": 1})]
    lines += [
        json.dumps(
            {
                "id": i,
                "scope": scope,
                "timestamp": t,
                "kind": "decision",
                "subject": s,
                "content": c,
                "status": "active",
            }
        )
        for i, t, s, c in notes
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def nid(n: int) -> str:
    """A note id an export can carry."""
    return f"00000000-0000-4000-8000-{n:012d}"


def arrival_rows(conn: sqlite3.Connection) -> dict[str, tuple[str, str | None, str | None]]:
    """Every arrival's (state, decided_at, result_note_id) by path."""
    return {
        r[0]: (r[1], r[2], r[3]) for r in conn.execute("SELECT path, state, decided_at, result_note_id FROM arrivals")
    }


def note_status(conn: sqlite3.Connection) -> dict[str, tuple[str, str]]:
    """Every note's (content, status) by id."""
    return {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, content, status FROM scoped_notes")}


@pytest.fixture
def files(repo: Repo, make_engine: Open) -> dict[str, str]:
    """Mallory's `auth` and `tls` decision files wait in the inbox (one sync); path → arrival id."""
    commit_as(
        repo,
        MALLORY,
        {
            f"{FOLDER}/0001-auth.md": madr("auth", "use basic auth"),
            f"{FOLDER}/0002-tls.md": madr("tls", "skip TLS checks", date="2026-07-01"),
        },
    )
    with make_engine(repo.path) as eng:
        eng.sync_shared()
        return {a.path: a.id for a in eng.inbox()}


def test_a_verdict_s_json_shape() -> None:
    assert Verdict("a-1", "import", "/tmp/x.jsonl", "accepted", "n-1").to_dict() == {
        "id": "a-1",
        "channel": "import",
        "path": "/tmp/x.jsonl",
        "state": "accepted",
        "note_id": "n-1",
    }
    assert Verdict("a-2", "shared", "docs/x.md", "rejected").to_dict()["note_id"] is None


@pytest.mark.parametrize("verdict", ["accept_arrivals", "reject_arrivals"])
def test_a_verdict_needs_ids_or_all_but_not_both(
    verdict: str, repo: Repo, files: dict[str, str], make_engine: Open
) -> None:
    eng = make_engine(repo.path)
    act = getattr(eng, verdict)
    for ids, every in (([], False), ([next(iter(files.values()))], True)):
        with pytest.raises(InvalidInput) as bad:
            act(ids, every=every)
        assert (bad.value.code, bad.value.message) == ("bad_args", "name the arrivals by id, or give --all")
    assert {state for state, _, _ in arrival_rows(eng.conn).values()} == {"pending"}


@pytest.mark.parametrize("verdict", ["accept_arrivals", "reject_arrivals"])
def test_a_verdict_on_an_arrival_already_decided_changes_nothing(
    verdict: str, repo: Repo, files: dict[str, str], make_engine: Open, clock: Clock
) -> None:
    eng = make_engine(repo.path)
    auth, tls = files[f"{FOLDER}/0001-auth.md"], files[f"{FOLDER}/0002-tls.md"]
    eng.reject_arrivals([tls])
    before = arrival_rows(eng.conn), note_status(eng.conn)
    clock.advance(minutes=1)
    with pytest.raises(Refused) as refused:
        getattr(eng, verdict)([auth, tls[:8]])
    assert (refused.value.code, refused.value.message, refused.value.details) == (
        "not_pending",
        f"arrival {tls[:8]} is already rejected; nothing was changed",
        {"id": tls, "state": "rejected"},
    )
    assert (arrival_rows(eng.conn), note_status(eng.conn)) == before


def test_an_unknown_id_refuses_the_whole_verdict(repo: Repo, files: dict[str, str], make_engine: Open) -> None:
    eng = make_engine(repo.path)
    with pytest.raises(NotFound):
        eng.reject_arrivals([files[f"{FOLDER}/0001-auth.md"], "ffffffff"])
    assert {state for state, _, _ in arrival_rows(eng.conn).values()} == {"pending"}


def test_accepting_a_decision_file_makes_it_a_shared_note_and_records_which(
    repo: Repo, files: dict[str, str], make_engine: Open
) -> None:
    eng = make_engine(repo.path)
    auth = files[f"{FOLDER}/0001-auth.md"]
    done = eng.accept_arrivals([auth[:8], auth])  # the same arrival twice is accepted once
    assert len(done) == 1
    verdict = done[0]
    note = eng.conn.execute("SELECT id, content, origin FROM scoped_notes").fetchone()
    assert verdict == Verdict(auth, "shared", f"{FOLDER}/0001-auth.md", "accepted", note["id"])
    assert (note["content"], note["origin"]) == ("use basic auth", "shared")
    assert arrival_rows(eng.conn) == {
        f"{FOLDER}/0001-auth.md": ("accepted", eng.now(), note["id"]),
        f"{FOLDER}/0002-tls.md": ("pending", None, None),
    }


def test_rejecting_records_the_verdict_and_reports_each_arrival(
    repo: Repo, files: dict[str, str], make_engine: Open
) -> None:
    eng = make_engine(repo.path)
    auth, tls = files[f"{FOLDER}/0001-auth.md"], files[f"{FOLDER}/0002-tls.md"]
    assert eng.reject_arrivals([tls, auth[:8], tls[:9]]) == [
        Verdict(tls, "shared", f"{FOLDER}/0002-tls.md", "rejected"),
        Verdict(auth, "shared", f"{FOLDER}/0001-auth.md", "rejected"),
    ]
    assert arrival_rows(eng.conn) == {
        f"{FOLDER}/0001-auth.md": ("rejected", eng.now(), None),
        f"{FOLDER}/0002-tls.md": ("rejected", eng.now(), None),
    }
    assert note_status(eng.conn) == {}


def test_a_decision_file_of_another_branch_is_accepted_only_there(
    repo: Repo, files: dict[str, str], make_engine: Open
) -> None:
    eng = make_engine(repo.path)
    theirs = arrivals.add(
        eng.conn,
        OTHER,
        "shared",
        f"{FOLDER}/0009-queue.md",
        kind="decision",
        subject="queue",
        content="use rq",
        alternatives=(),
        timestamp=eng.now(),
        now=eng.now(),
        blob_oid="0" * 40,
    )
    with pytest.raises(Refused) as refused:
        eng.accept_arrivals([files[f"{FOLDER}/0001-auth.md"], theirs])
    assert (refused.value.code, refused.value.details) == ("other_scope", {"id": theirs})
    assert refused.value.message == (
        f"arrival {theirs[:8]} is a decision file of another branch's scope; accept it "
        "with that branch checked out; nothing was changed"
    )
    assert {state for state, _, _ in arrival_rows(eng.conn).values()} == {"pending"} and note_status(eng.conn) == {}
    assert [v.id for v in eng.reject_arrivals([theirs])] == [theirs]  # rejecting it from here is allowed


def test_all_takes_this_branch_s_decision_files_and_every_import(
    repo: Repo, files: dict[str, str], make_engine: Open, tmp_path: Path
) -> None:
    eng = make_engine(repo.path)
    theirs = arrivals.add(
        eng.conn,
        OTHER,
        "shared",
        f"{FOLDER}/0009-queue.md",
        kind="decision",
        subject="queue",
        content="use rq",
        alternatives=(),
        timestamp=eng.now(),
        now=eng.now(),
        blob_oid="0" * 40,
    )
    far = export(tmp_path / "far.jsonl", OTHER, (nid(1), "2026-08-01T00:00:00Z", "cache", "use redis"))
    assert eng.import_file(far, scope=OTHER).pending == [nid(1)]
    done = eng.accept_arrivals([], every=True)
    assert [(v.channel, v.path, v.state) for v in done] == [
        ("shared", f"{FOLDER}/0001-auth.md", "accepted"),
        ("shared", f"{FOLDER}/0002-tls.md", "accepted"),
        ("import", far, "accepted"),
    ]
    assert done[2].note_id == nid(1) and all(v.note_id for v in done)
    assert [a.id for a in eng.inbox()] == [theirs]
    rejected = eng.reject_arrivals([], every=True)
    assert rejected == [] and [a.id for a in eng.inbox()] == [theirs]


def test_reject_all_takes_this_branch_s_files_and_every_import(
    repo: Repo, files: dict[str, str], make_engine: Open, tmp_path: Path
) -> None:
    eng = make_engine(repo.path)
    theirs = arrivals.add(
        eng.conn,
        OTHER,
        "shared",
        f"{FOLDER}/0009-queue.md",
        kind="decision",
        subject="queue",
        content="use rq",
        alternatives=(),
        timestamp=eng.now(),
        now=eng.now(),
        blob_oid="0" * 40,
    )
    far = export(tmp_path / "far.jsonl", OTHER, (nid(1), "2026-08-01T00:00:00Z", "cache", "use redis"))
    eng.import_file(far, scope=OTHER)
    done = eng.reject_arrivals([], every=True)
    assert [(v.channel, v.path, v.state, v.note_id) for v in done] == [
        ("shared", f"{FOLDER}/0001-auth.md", "rejected", None),
        ("shared", f"{FOLDER}/0002-tls.md", "rejected", None),
        ("import", far, "rejected", None),
    ]
    assert [a.id for a in eng.inbox()] == [theirs] and note_status(eng.conn) == {}


def test_accepted_imports_are_applied_in_date_order_and_each_reports_its_note(
    repo: Repo, make_engine: Open, tmp_path: Path
) -> None:
    eng = make_engine(repo.path)
    path = export(
        tmp_path / "handed.jsonl",
        eng.scope.key,
        (nid(1), "2026-08-01T12:00:00Z", "db", "use postgres"),
        (nid(2), "2026-08-01T09:00:00Z", "db", "use mysql"),
        (nid(3), "2026-08-01T10:00:00Z", "cache", "use redis"),
    )
    assert eng.import_file(path, scope="here").pending == [nid(1), nid(2), nid(3)]
    ids = {a.note_id: a.id for a in eng.inbox()}
    done = eng.accept_arrivals([ids[nid(1)], ids[nid(3)], ids[nid(2)]])
    assert done == [
        Verdict(ids[nid(2)], "import", path, "accepted", nid(2)),
        Verdict(ids[nid(3)], "import", path, "accepted", nid(3)),
        Verdict(ids[nid(1)], "import", path, "accepted", nid(1)),
    ]
    assert note_status(eng.conn) == {
        nid(1): ("use postgres", "active"),
        nid(2): ("use mysql", "superseded"),
        nid(3): ("use redis", "active"),
    }
    assert {
        r[0]: (r[1], r[2], r[3])
        for r in eng.conn.execute("SELECT note_id, state, decided_at, result_note_id FROM arrivals")
    } == {nid(n): ("accepted", eng.now(), nid(n)) for n in (1, 2, 3)}


def test_imports_of_one_date_are_applied_in_file_order(repo: Repo, make_engine: Open, tmp_path: Path) -> None:
    eng = make_engine(repo.path)
    path = export(
        tmp_path / "same-time.jsonl",
        eng.scope.key,
        (nid(1), "2026-08-01T09:00:00Z", "db", "use postgres"),
        (nid(2), "2026-08-01T09:00:00Z", "cache", "use redis"),
        (nid(3), "2026-08-01T09:00:00Z", "queue", "use rq"),
    )
    eng.import_file(path, scope="here")
    ids = {a.note_id: a.id for a in eng.inbox()}
    done = eng.accept_arrivals([ids[nid(3)], ids[nid(1)], ids[nid(2)]])
    assert [v.note_id for v in done] == [nid(1), nid(2), nid(3)]


def test_an_import_whose_note_is_already_stored_is_accepted_without_a_note(
    repo: Repo, make_engine: Open, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    eng = make_engine(repo.path)
    path = export(
        tmp_path / "twice.jsonl",
        eng.scope.key,
        (nid(1), "2026-08-01T09:00:00Z", "db", "use postgres"),
        (nid(2), "2026-08-01T10:00:00Z", "cache", "use redis"),
    )
    eng.import_file(path, scope="here")
    settings.write_review_arrivals("none")  # the same file again, trusted: its notes are stored
    export(tmp_path / "twice.jsonl", eng.scope.key, (nid(1), "2026-08-01T09:00:00Z", "db", "use postgres"))
    assert eng.import_file(path, scope="here").added == [nid(1)]
    done = eng.accept_arrivals([], every=True)
    assert [(v.state, v.note_id) for v in done] == [("accepted", None), ("accepted", nid(2))]
    results = {r[0]: (r[1], r[2]) for r in eng.conn.execute("SELECT note_id, state, result_note_id FROM arrivals")}
    assert results == {nid(1): ("accepted", None), nid(2): ("accepted", nid(2))}
