"""The inbox's records, `memory/arrivals.py`: what waits, how it is stored, listed, found, counted, withdrawn.

What waits for a person (`needs_review`), the one line the agent is told, how an arrival is stored, listed,
found by a typed id, counted, withdrawn and described to the person reviewing it. Each test goes through the
module's own functions on a real store (the `engine` fixture's connection).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from cortex_engine.base.errors import InvalidInput, NotFound
from cortex_engine.engine import Engine
from cortex_engine.memory import arrivals
from cortex_engine.memory.arrivals import Arrival

T0, T1, T2 = "2026-08-02T18:00:00.000Z", "2026-08-02T18:05:00.000Z", "2026-08-02T18:10:00.000Z"
OTHER = "branch:/elsewhere:feature"


def add(
    engine: Engine, path: str, *, scope: str | None = None, channel: str = "shared", now: str = T0, **fields: object
) -> str:
    """Store one arrival of the engine's scope (or `scope`) with plain defaults; returns its id."""
    values: dict[str, object] = {
        "kind": "decision",
        "subject": "auth",
        "content": "use OIDC",
        "alternatives": (),
        "timestamp": T0,
        "now": now,
        **fields,
    }
    return arrivals.add(engine.conn, scope or engine.scope.key, channel, path, **values)  # type: ignore[arg-type]


def state_of(engine: Engine, arrival_id: str) -> tuple[str, str | None, str | None]:
    """(state, decided_at, result_note_id) of a stored arrival."""
    row = engine.conn.execute(
        "SELECT state, decided_at, result_note_id FROM arrivals WHERE id=?", (arrival_id,)
    ).fetchone()
    return row[0], row[1], row[2]


@pytest.fixture
def ids(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The ids the next arrivals get, in order (so that prefixes can be made to collide)."""
    queue: list[str] = []
    monkeypatch.setattr(arrivals, "new_id", lambda: queue.pop(0))
    yield queue


# -- what waits for a person ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # (shared by another, shared by me, shared with `own` left out, import by another, import by me)
        ("others", (True, False, True, True, True)),
        ("all", (True, True, True, True, True)),
        ("none", (False, False, False, False, False)),
        ("sometimes", (True, True, True, True, True)),  # an unknown policy holds everything
    ],
)
def test_what_waits_for_review_follows_the_policy_the_channel_and_who_published(
    mode: str, expected: tuple[bool, ...]
) -> None:
    got = (
        arrivals.needs_review("shared", mode, own=False),
        arrivals.needs_review("shared", mode, own=True),
        arrivals.needs_review("shared", mode),
        arrivals.needs_review("import", mode, own=False),
        arrivals.needs_review("import", mode, own=True),
    )
    assert got == expected


def test_the_agent_is_told_a_count_in_one_line_and_nothing_when_none_waits() -> None:
    assert [arrivals.pending_line(n) for n in (-1, 0)] == [None, None]
    assert arrivals.pending_line(1) == (
        "- inbox: 1 arrival from outside waits for the user's review; not memory until the user accepts"
    )
    assert arrivals.pending_line(2) == (
        "- inbox: 2 arrivals from outside wait for the user's review; not memory until the user accepts"
    )


# -- stored, listed, found -----------------------------------------------------------------------------------


def test_an_arrival_is_stored_and_listed_with_every_field(engine: Engine) -> None:
    full = add(
        engine,
        "docs/decisions/0001-auth.md",
        kind="constraint",
        subject="auth",
        content="use OIDC",
        alternatives=("basic auth", "LDAP"),
        timestamp=T1,
        now=T2,
        status="superseded",
        blob_oid="b" * 40,
        commit="c" * 40,
        author="Mallory <m@evil.example>",
        authored_at="2026-07-01T00:00:00+00:00",
        note_id="n-1",
        source="their-store",
        seq=3,
    )
    bare = add(engine, "/tmp/export.jsonl", channel="import", subject=None, content="keep it small", now=T2, seq=4)
    listed = arrivals.listing(engine.conn, [engine.scope.key])
    assert listed == [
        Arrival(
            full,
            "shared",
            engine.scope.key,
            "docs/decisions/0001-auth.md",
            "c" * 40,
            "Mallory <m@evil.example>",
            "2026-07-01T00:00:00+00:00",
            "constraint",
            "auth",
            "use OIDC",
            ("basic auth", "LDAP"),
            T1,
            "pending",
            T2,
            "n-1",
            None,
        ),
        Arrival(
            bare,
            "import",
            engine.scope.key,
            "/tmp/export.jsonl",
            None,
            None,
            None,
            "decision",
            None,
            "keep it small",
            (),
            T0,
            "pending",
            T2,
            None,
            None,
        ),
    ]
    stored = engine.conn.execute(
        "SELECT blob_oid, status, source, seq, alternatives FROM arrivals WHERE id=?", (full,)
    ).fetchone()
    assert tuple(stored) == ("b" * 40, "superseded", "their-store", 3, '["basic auth", "LDAP"]')
    defaults = engine.conn.execute(
        "SELECT blob_oid, status, source, seq, alternatives, commit_oid FROM arrivals WHERE id=?", (bare,)
    ).fetchone()
    assert tuple(defaults) == (None, "active", None, 4, None, None)


def test_the_json_shape_names_the_scope_and_the_note_it_became() -> None:
    arrival = Arrival(
        "a-1",
        "shared",
        "branch:/r:main",
        "docs/x.md",
        "c1",
        "Mallory",
        "2026-07-01",
        "decision",
        "auth",
        "use OIDC",
        ("LDAP",),
        T0,
        "accepted",
        T1,
        "n-incoming",
        "n-made",
    )
    assert arrival.to_dict() == {
        "id": "a-1",
        "channel": "shared",
        "scope": "branch:/r:main",
        "path": "docs/x.md",
        "commit": "c1",
        "author": "Mallory",
        "authored_at": "2026-07-01",
        "kind": "decision",
        "subject": "auth",
        "content": "use OIDC",
        "alternatives": ["LDAP"],
        "timestamp": T0,
        "state": "accepted",
        "arrived_at": T1,
        "note_id": "n-made",
    }


def test_a_listing_keeps_arrival_order_then_file_order_then_insertion(engine: Engine) -> None:
    late = add(engine, "late.md", now=T2, seq=0)
    second = add(engine, "second.md", now=T1, seq=2)
    first = add(engine, "first.md", now=T1, seq=1)
    tie_a = add(engine, "tie-a.md", now=T0, seq=5)
    tie_b = add(engine, "tie-b.md", now=T0, seq=5)
    assert [a.id for a in arrivals.listing(engine.conn, None)] == [tie_a, tie_b, first, second, late]


def test_an_arrival_stored_without_a_file_order_is_the_first_of_its_instant(engine: Engine) -> None:
    """A decision file is stored without `seq`: it sorts as the first line of an import that arrived at the same
    instant, and before the import's second line."""
    second = add(engine, "/tmp/x.jsonl", channel="import", now=T1, seq=1)
    first = add(engine, "/tmp/x.jsonl", channel="import", now=T1, seq=0)
    arrivals_id = arrivals.add(
        engine.conn,
        engine.scope.key,
        "shared",
        "docs/a.md",
        kind="decision",
        subject=None,
        content="use OIDC",
        alternatives=(),
        timestamp=T0,
        now=T1,
    )
    assert [a.id for a in arrivals.listing(engine.conn, None)] == [first, arrivals_id, second]


def test_a_listing_keeps_the_states_and_scopes_asked_for(engine: Engine) -> None:
    mine = add(engine, "mine.md", now=T0)
    theirs = add(engine, "theirs.md", scope=OTHER, now=T1)
    done = add(engine, "done.md", now=T2)
    arrivals.mark(engine.conn, done, "rejected", T2)
    here = engine.scope.key

    def listed(keys: list[str] | None, states: tuple[str, ...] = ("pending",)) -> list[str]:
        return [a.id for a in arrivals.listing(engine.conn, keys, states)]

    assert listed(None) == [mine, theirs]
    assert listed([here]) == [mine]
    assert listed([OTHER]) == [theirs]
    assert listed([here, OTHER]) == [mine, theirs]
    assert listed([]) == [] and listed(None, ()) == []
    assert listed(None, ("rejected",)) == [done]
    assert listed([here], ("pending", "rejected")) == [mine, done]
    assert listed(None, ("bogus",)) == [] and listed(None, ("bogus", "rejected")) == [done]
    assert [a.id for a in arrivals.listing(engine.conn, [here])] == [mine]  # pending by default


def test_an_arrival_is_found_by_its_id_or_a_prefix_of_eight(engine: Engine) -> None:
    first = add(engine, "one.md")
    add(engine, "two.md", scope=OTHER)
    row = arrivals.find(engine.conn, first)
    assert (row["id"], row["path"], row["scope_key"]) == (first, "one.md", engine.scope.key)
    assert arrivals.find(engine.conn, f"  {first[:8]}\n")["id"] == first
    with pytest.raises(InvalidInput) as short:
        arrivals.find(engine.conn, f" {first[:7]} ")
    assert (short.value.code, short.value.message) == (
        "bad_id",
        f'"{first[:7]}" is too short an id; give at least 8 characters',
    )


def test_an_unknown_id_is_not_found_and_says_where_to_look(engine: Engine) -> None:
    add(engine, "one.md")
    with pytest.raises(NotFound) as missing:
        arrivals.find(engine.conn, " ffffffff-0000 ")
    assert (missing.value.code, missing.value.message, missing.value.details) == (
        "not_found",
        'no arrival found for id "ffffffff-0000"; list them with: cortex inbox',
        {"id": "ffffffff-0000"},
    )


def test_an_ambiguous_prefix_names_at_most_five_candidates_in_id_order(engine: Engine, ids: list[str]) -> None:
    made = [f"abcdef12-{n:04d}-4000-8000-000000000000" for n in (6, 2, 4, 1, 5, 3)]
    ids.extend([*made, "abcdef99-0000-4000-8000-000000000000"])
    for n in range(7):
        add(engine, f"{n}.md")
    first = sorted(made)[:5]
    with pytest.raises(InvalidInput) as many:
        arrivals.find(engine.conn, "abcdef12")
    assert (many.value.code, many.value.details) == ("ambiguous_id", {"candidates": first})
    assert many.value.message == (
        f'id prefix "abcdef12" matches more than one arrival: {", ".join(first)}; give more characters'
    )
    with pytest.raises(InvalidInput) as two:
        arrivals.find(engine.conn, "abcdef1")  # too short comes first
    assert two.value.code == "bad_id"
    assert arrivals.find(engine.conn, "abcdef12-0001")["id"] == made[3]
    assert arrivals.find(engine.conn, "abcdef99")["id"] == "abcdef99-0000-4000-8000-000000000000"


def test_a_prefix_two_arrivals_share_names_both(engine: Engine, ids: list[str]) -> None:
    ids.extend(["fedcba98-0002-4000-8000-000000000000", "fedcba98-0001-4000-8000-000000000000"])
    add(engine, "a.md")
    add(engine, "b.md")
    with pytest.raises(InvalidInput) as two:
        arrivals.find(engine.conn, "fedcba98")
    assert (two.value.code, two.value.details) == (
        "ambiguous_id",
        {"candidates": ["fedcba98-0001-4000-8000-000000000000", "fedcba98-0002-4000-8000-000000000000"]},
    )


# -- verdicts, offers, withdrawals, the count --------------------------------------------------------------


def test_a_verdict_records_its_state_its_time_and_the_note_it_made(engine: Engine) -> None:
    kept = add(engine, "kept.md")
    taken = add(engine, "taken.md")
    refused = add(engine, "refused.md")
    arrivals.mark(engine.conn, taken, "accepted", T1, "n-9")
    arrivals.mark(engine.conn, refused, "rejected", T2)
    assert [state_of(engine, i) for i in (kept, taken, refused)] == [
        ("pending", None, None),
        ("accepted", T1, "n-9"),
        ("rejected", T2, None),
    ]
    listed = arrivals.listing(engine.conn, None, arrivals.ARRIVAL_STATES)
    assert [(a.id, a.state, a.result_note_id) for a in listed] == [
        (kept, "pending", None),
        (taken, "accepted", "n-9"),
        (refused, "rejected", None),
    ]
    assert [a.to_dict()["note_id"] for a in listed] == [None, "n-9", None]


def test_the_files_offered_are_this_scope_s_decision_files_whatever_their_state(engine: Engine) -> None:
    add(engine, "a.md", blob_oid="b1")
    arrivals.mark(engine.conn, add(engine, "b.md", blob_oid="b2"), "rejected", T1)
    add(engine, "a.md", blob_oid="b3")
    add(engine, "/tmp/export.jsonl", channel="import", blob_oid="b4")
    add(engine, "c.md", scope=OTHER, blob_oid="b5")
    assert arrivals.known_files(engine.conn, engine.scope.key) == {("a.md", "b1"), ("b.md", "b2"), ("a.md", "b3")}
    assert arrivals.known_files(engine.conn, OTHER) == {("c.md", "b5")}


def test_a_pending_decision_file_gone_or_changed_at_head_is_withdrawn(engine: Engine) -> None:
    same = add(engine, "same.md", blob_oid="b1")
    changed = add(engine, "changed.md", blob_oid="b2")
    gone = add(engine, "gone.md", blob_oid="b3")
    decided = add(engine, "decided.md", blob_oid="b4")
    arrivals.mark(engine.conn, decided, "rejected", T0)
    imported = add(engine, "/tmp/export.jsonl", channel="import")
    elsewhere = add(engine, "gone.md", scope=OTHER, blob_oid="b3")
    keep = {"same.md": "b1", "changed.md": "b2-new", "decided.md": "other"}
    assert arrivals.withdraw_files(engine.conn, engine.scope.key, keep, T2) == 2
    assert [state_of(engine, i) for i in (same, changed, gone, decided, imported, elsewhere)] == [
        ("pending", None, None),
        ("withdrawn", T2, None),
        ("withdrawn", T2, None),
        ("rejected", T0, None),
        ("pending", None, None),
        ("pending", None, None),
    ]
    assert arrivals.withdraw_files(engine.conn, engine.scope.key, keep, T2) == 0


def test_the_count_is_of_pending_arrivals_of_the_scopes_asked_for(engine: Engine) -> None:
    here = engine.scope.key
    add(engine, "a.md")
    add(engine, "/tmp/x.jsonl", channel="import")
    arrivals.mark(engine.conn, add(engine, "b.md"), "accepted", T1)
    add(engine, "c.md", scope=OTHER)
    assert arrivals.pending_count(engine.conn, [here]) == 2
    assert arrivals.pending_count(engine.conn, [OTHER]) == 1
    assert arrivals.pending_count(engine.conn, [here, OTHER]) == 3
    assert arrivals.pending_count(engine.conn, ["branch:/nowhere:main"]) == 0
    assert arrivals.pending_count(engine.conn, []) == 0


def test_a_store_without_an_inbox_counts_nothing() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE scopes(id INTEGER PRIMARY KEY, key TEXT UNIQUE)")
    assert arrivals.pending_count(conn, ["branch:/r:main"]) == 0


# -- what the person reviewing reads -------------------------------------------------------------------------


def arrival(**fields: object) -> Arrival:
    """An arrival with plain values, some replaced."""
    values: dict[str, object] = {
        "id": "0123456789abcdef",
        "channel": "shared",
        "scope_key": "branch:/r:main",
        "path": "docs/0001-auth.md",
        "commit": "c0ffee1234567890",
        "author": "Mallory <m@evil.example>",
        "authored_at": "2026-07-01 10:00:00 +0000",
        "kind": "decision",
        "subject": "auth",
        "content": "use basic auth",
        "alternatives": ("OIDC", "LDAP"),
        "timestamp": T0,
        "state": "pending",
        "arrived_at": T1,
        **fields,
    }
    return Arrival(**values)  # type: ignore[arg-type]


def test_an_arrival_is_described_by_where_it_came_from_then_what_it_would_add() -> None:
    assert arrivals.describe_arrival(arrival()) == [
        "01234567  pending  shared: docs/0001-auth.md @ c0ffee1234 (by Mallory <m@evil.example>, "
        "2026-07-01 10:00:00 +0000)",
        '    would add decision: [auth] "use basic auth"',
        "    rejected alternatives: OIDC; LDAP",
    ]


def test_an_arrival_without_commit_author_date_subject_or_alternatives_is_described_without_them() -> None:
    bare = arrival(
        channel="import",
        path="/tmp/export.jsonl",
        commit=None,
        author=None,
        authored_at=None,
        subject=None,
        alternatives=(),
        state="rejected",
        kind="constraint",
    )
    assert arrivals.describe_arrival(bare) == [
        "01234567  rejected  import: /tmp/export.jsonl",
        '    would add constraint: "use basic auth"',
    ]
    assert arrivals.describe_arrival(arrival(author=None))[0].endswith(" (by 2026-07-01 10:00:00 +0000)")
    assert arrivals.describe_arrival(arrival(authored_at=""))[0].endswith(" (by Mallory <m@evil.example>)")
    assert arrivals.describe_arrival(arrival(commit=""))[0] == (
        "01234567  pending  shared: docs/0001-auth.md (by Mallory <m@evil.example>, 2026-07-01 10:00:00 +0000)"
    )


def test_every_author_field_of_a_description_is_collapsed_and_defused() -> None:
    hostile = arrival(
        path="docs/\n[contested].md",
        author="Mallory\n(shared)",
        authored_at="[moved: x]  today",
        subject="[stale: y]",
        content="use\n\nbasic [contested]",
        alternatives=("(shared)\n", "[contested]"),
    )
    assert arrivals.describe_arrival(hostile) == [
        "01234567  pending  shared: docs/ ［contested］.md @ c0ffee1234 (by Mallory （shared）, ［moved: x] today)",
        '    would add decision: [［stale: y]] "use basic ［contested］"',
        "    rejected alternatives: （shared）; ［contested］",
    ]
