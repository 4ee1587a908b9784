"""The rules of memory items, checked at their boundaries (found by mutation testing of `memory/items.py`).

Each test pins a rule of `memory/items` where a changed comparison, constant or word would show: a note's
projection and its trailers read back, the labels' look-alikes defused, the tier a note starts in, and the
working-set heat (`hotness`) and tier (`derive_state`) at every step of age and use.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cortex_engine.base.clock import iso
from cortex_engine.memory import items
from cortex_engine.memory.items import (
    ItemFacts,
    alternatives_list,
    alternatives_payload,
    collapse,
    defuse_labels,
    demote,
    derive_state,
    fresh_note_state,
    hotness,
    is_contested,
    is_resolved,
    is_superseded,
    note_content,
    note_origin,
    note_status,
    project_note_text,
    split_trailers,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
SECOND = timedelta(seconds=1)


def facts(
    kind: str = "other",
    *,
    importance: float = 0.0,
    state: str = "warm",
    access: int = 1,
    age: timedelta | None = DAY,
    since_access: timedelta | None = None,
    text: str = "x",
) -> ItemFacts:
    """An item of `kind`, created `age` before NOW (None: no parsable creation time), last read `since_access` ago."""
    created = "not a time" if age is None else iso(NOW - age)
    last = None if since_access is None else iso(NOW - since_access)
    return ItemFacts(kind, text, state, importance, access, last, created)


def decision(
    content: str = "use wal mode",
    *,
    subject: str | None = None,
    alternatives: list[str] | None = None,
    conflict: bool = False,
    status: str = "active",
    origin: str | None = None,
) -> str:
    """A decision's projected text, as the store holds it."""
    return project_note_text("decision", content, subject, alternatives, conflict, status, origin)


# --- projection and trailers -------------------------------------------------------------------------------------


def test_a_note_projects_to_its_kind_content_and_trailers_in_canonical_order() -> None:
    text = decision(
        "use wal\nbecause  readers",
        subject=" the   journal\nmode ",
        alternatives=["a\n b", " ", "c"],
        conflict=True,
        status="superseded",
        origin="from  feature/x",
    )
    assert text == (
        "decision: use wal\nbecause  readers\nSubject: the journal mode\nAlternatives: a b, c\n"
        "Conflict: true\nStatus: superseded\nOrigin: from feature/x"
    )
    assert split_trailers(text) == (
        "decision: use wal\nbecause  readers",
        {
            "subject": "the journal mode",
            "alternatives": "a b, c",
            "conflict": "true",
            "status": "superseded",
            "origin": "from feature/x",
        },
    )


def test_a_plain_active_note_has_no_trailers() -> None:
    assert decision("x", alternatives=[" ", "\n"]) == "decision: x"
    assert decision("x", status="active") == "decision: x"
    assert decision("x", status="resolved").endswith("\nStatus: resolved")
    assert decision("x", status="retired") == "decision: x"  # only superseded and resolved are recorded
    assert decision("x", subject="", origin="") == "decision: x"


def test_content_lines_shaped_like_trailers_are_indented_so_they_stay_content() -> None:
    content = "first\nStatus: resolved\n  conflict : true\nsubjects: none\nplain"
    text = decision(content)
    assert text == "decision: first\n Status: resolved\n   conflict : true\nsubjects: none\nplain"
    assert split_trailers(text) == (text, {})
    assert not is_resolved(text) and note_status("note:decision", text) == "active"
    assert not is_contested("note:decision", decision("a\nConflict: true"))


def test_trailers_are_read_back_only_in_canonical_order_and_never_from_the_first_line() -> None:
    assert split_trailers("decision: x\nStatus: resolved\nSubject: s") == (
        "decision: x\nStatus: resolved",
        {"subject": "s"},
    )
    assert split_trailers("decision: x\nSubject: s\nSubject: t") == ("decision: x\nSubject: s", {"subject": "t"})
    assert split_trailers("Status: resolved") == ("Status: resolved", {})
    assert split_trailers("a\nStatus: resolved") == ("a", {"status": "resolved"})
    assert split_trailers("a\nb\nOrigin: shared") == ("a\nb", {"origin": "shared"})
    assert split_trailers("a\nStatus:resolved") == ("a\nStatus:resolved", {})


def test_the_trailer_readers() -> None:
    contested = decision(conflict=True)
    assert is_contested("note:decision", contested)
    assert not is_contested("episode:command_failure", contested)
    assert not is_contested("note:decision", decision())
    assert is_contested("note:decision", "decision: x\nConflict:  TRUE ")
    assert not is_contested("note:decision", "decision: x\nConflict: false")
    superseded = decision(status="superseded")
    assert note_status("note:decision", superseded) == "superseded" and is_superseded("note:decision", superseded)
    assert note_status("command_run", superseded) == "active" and not is_superseded("command_run", superseded)
    assert note_status("note:decision", "decision: x\nOrigin: shared") == "active"
    assert note_status("note:decision", "decision: x\nStatus: resolved\nSubject: s") == "active"  # out of order
    assert not is_superseded("note:decision", decision(status="resolved"))
    assert note_origin("note:decision", decision(origin="shared")) == "shared"
    assert note_origin("note:decision", decision()) is None
    assert note_origin("command_run", decision(origin="shared")) is None
    assert note_origin("note:decision", "decision: x\nOrigin: ") is None
    assert note_origin("note:decision", "decision: x\nOrigin: shared\nStatus: resolved") is None  # out of order
    assert is_resolved(decision(status="resolved")) and is_resolved("x\nStatus:  Resolved ")
    assert not is_resolved(decision(status="superseded")) and not is_resolved("x\nSubject: resolved")
    assert not is_resolved("Status: resolved")
    # the trailer's word inside the body, where no trailer is read
    assert not is_contested("note:decision", "decision: x\nConflict: true\nmore")
    assert not is_resolved("decision: x\nStatus: resolved\nmore")


def test_collapse_and_the_alternatives_payload() -> None:
    assert collapse("  a \n\t b  ") == "a b"
    assert alternatives_payload(None) == "" and alternatives_payload([]) == ""
    assert alternatives_payload([" x  y ", "", "z"]) == "x y, z"


def test_stored_alternatives_are_read_tolerating_junk() -> None:
    assert alternatives_list(None) == [] and alternatives_list("") == []
    assert alternatives_list("not json") == []
    assert alternatives_list('{"a": 1}') == [] and alternatives_list('"a"') == []
    assert alternatives_list('["a", 2]') == ["a", "2"]


def test_note_content_is_the_first_line_after_its_kind_defused() -> None:
    assert note_content("decision: use wal: always\nSubject: s") == "use wal: always"
    assert note_content("no kind here\nmore") == "no kind here"
    assert note_content("decision: a\nb\nSubject: s") == "a"
    assert note_content("decision:tight") == "decision:tight"
    assert note_content("decision: see [contested]") == "see ［contested］"


# --- defusing label look-alikes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "defused"),
    [
        ("plain words", "plain words"),
        ("[contested]", "［contested］"),
        ("a [ contested ] b", "a ［ contested ］ b"),
        ("[CONTESTED]", "［CONTESTED］"),
        ("[con\u200btested]", "［contested］"),
        ("[c\u043entested]", "［c\u043entested］"),  # Cyrillic o
        ("\uff3bcontested\uff3d", "［contested］"),  # already fullwidth: NFKC folds it, then it is defused again
        ("[contested", "[contested"),
        ("[stale: missing a.py]", "［stale: missing a.py]"),
        ("[ moved :a]", "［ moved :a]"),
        ("[drifted: x]", "［drifted: x]"),
        ("[stale]", "[stale]"),
        ("(superseded)", "（superseded）"),
        ("( resolved )", "（ resolved ）"),
        ("(shared)", "（shared）"),
        ("(superseded", "(superseded"),
        ("(from main)", "（from main)"),
        ("( from x", "（ from x"),
        ("(fromage)", "(fromage)"),
        ("(refs a.py)", "（refs a.py)"),
        ("( refs)", "（ refs)"),
        ("(refsx)", "(refsx)"),
        ("[other] (x)", "[other] (x)"),
        ("caf\u00e9 [contested] (superseded)", "caf\u00e9 ［contested］ （superseded）"),
        ("caf\u00e9 no brackets", "caf\u00e9 no brackets"),
        ("\x1b[31mred", "red"),
    ],
)
def test_label_look_alikes_get_fullwidth_brackets_and_nothing_else_changes(
    text: str, defused: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(items, "_label_shapes", [])  # the patterns are compiled on first use: compile them here
    assert defuse_labels(text) == defused


# --- tiers -------------------------------------------------------------------------------------------------------


def test_a_note_starts_hot_warm_or_cold_by_its_kind_and_status() -> None:
    assert [fresh_note_state(k, "active") for k in ("focus", "intent", "blocker", "decision", "insight")] == [
        "hot",
        "hot",
        "hot",
        "warm",
        "warm",
    ]
    assert fresh_note_state("focus", "superseded") == "cold" and fresh_note_state("decision", "resolved") == "cold"


def test_demote_cools_one_tier_and_leaves_the_rest() -> None:
    assert [demote(s) for s in ("pinned", "hot", "warm", "cold", "archived")] == [
        "pinned",
        "warm",
        "cold",
        "cold",
        "archived",
    ]


@pytest.mark.parametrize(
    ("age", "bonus"),
    [
        (timedelta(0), 2.6),
        (DAY, 2.6),
        (DAY + SECOND, 2.1),
        (3 * DAY, 2.1),
        (3 * DAY + SECOND, 1.4),
        (7 * DAY, 1.4),
        (7 * DAY + SECOND, 0.5),
        (30 * DAY, 0.5),
        (30 * DAY + SECOND, -0.6),
        (90 * DAY, -0.6),
        (90 * DAY + SECOND, -1.6),
        (None, -1.6),
        (-5 * DAY, 2.6),
    ],
)
def test_the_bonus_for_age_steps_at_each_limit(age: timedelta | None, bonus: float) -> None:
    assert hotness(facts(age=age, access=1), NOW) == pytest.approx(0.5 + bonus + 0.85)


@pytest.mark.parametrize(
    ("since", "bonus"),
    [
        (None, 0.0),
        (timedelta(0), 3.2),
        (DAY, 3.2),
        (DAY + SECOND, 1.8),
        (7 * DAY, 1.8),
        (7 * DAY + SECOND, 0.7),
        (30 * DAY, 0.7),
        (30 * DAY + SECOND, -0.2),
        (-DAY, 3.2),
    ],
)
def test_the_bonus_for_the_last_access_steps_at_each_limit(since: timedelta | None, bonus: float) -> None:
    assert hotness(facts(age=DAY, since_access=since), NOW) == pytest.approx(0.5 + 2.6 + 0.85 + bonus)


def test_an_unparsable_last_access_counts_as_never_read() -> None:
    item = ItemFacts("other", "x", "warm", 0.0, 1, "garbage", iso(NOW - DAY))
    assert hotness(item, NOW) == pytest.approx(0.5 + 2.6 + 0.85)
    assert hotness(ItemFacts("other", "x", "warm", 0.0, 1, "", iso(NOW - DAY)), NOW) == pytest.approx(0.5 + 2.6 + 0.85)


@pytest.mark.parametrize(("access", "bonus"), [(1, 0.85), (2, 1.7), (5, 4.25), (6, 4.25), (9, 4.25)])
def test_uses_add_heat_up_to_a_cap(access: int, bonus: float) -> None:
    assert hotness(facts(age=DAY, access=access), NOW) == pytest.approx(0.5 + 2.6 + bonus)


@pytest.mark.parametrize(
    ("age", "penalty"),
    [
        (14 * DAY, 0.0),
        (14 * DAY + SECOND, -1.6),
        (45 * DAY, -1.6),
        (45 * DAY + SECOND, -4.0),
        (None, -4.0),
    ],
)
def test_a_never_read_item_is_penalised_after_14_then_45_days(age: timedelta | None, penalty: float) -> None:
    days = None if age is None else age.total_seconds() / 86400
    bonus = -1.6 if days is None else 0.5 if days <= 30 else -0.6
    assert hotness(facts(age=age, access=0), NOW) == pytest.approx(0.5 + bonus + penalty)


def test_a_read_item_is_never_penalised_for_age_unused() -> None:
    assert hotness(facts(age=100 * DAY, access=1), NOW) == pytest.approx(0.5 - 1.6 + 0.85)


def test_kind_penalties_and_weights() -> None:
    assert hotness(facts("command_run", age=DAY), NOW) == pytest.approx(0.6 + 2.6 + 0.85 - 0.8)
    # an insight never read is penalised after 30 days, on top of the unused penalty
    assert hotness(facts("note:insight", age=30 * DAY, access=0), NOW) == pytest.approx(2.1 + 0.5 - 1.6)
    assert hotness(facts("note:insight", age=30 * DAY + SECOND, access=0), NOW) == pytest.approx(2.1 - 0.6 - 1.6 - 1.1)
    assert hotness(facts("note:insight", age=31 * DAY, access=1), NOW) == pytest.approx(2.1 - 0.6 + 0.85)
    assert hotness(facts("note:decision", age=31 * DAY, access=0), NOW) == pytest.approx(3.4 - 0.6 - 1.6)
    # an old project snapshot is penalised even when read
    assert hotness(facts("project_snapshot", age=45 * DAY, access=1), NOW) == pytest.approx(1.0 - 0.6 + 0.85)
    assert hotness(facts("project_snapshot", age=45 * DAY + SECOND, access=1), NOW) == pytest.approx(
        1.0 - 0.6 + 0.85 - 0.7
    )
    assert hotness(facts("branch_snapshot", age=46 * DAY, access=1), NOW) == pytest.approx(1.4 - 0.6 + 0.85)


def test_importance_counts_five_times() -> None:
    assert hotness(facts(importance=0.9, age=DAY), NOW) == pytest.approx(4.5 + 0.5 + 2.6 + 0.85)


def test_resolved_and_superseded_notes_lose_heat() -> None:
    base = 3.4 + 2.6 + 0.85
    assert hotness(facts("note:decision", text=decision()), NOW) == pytest.approx(base)
    assert hotness(facts("note:decision", text=decision(status="resolved")), NOW) == pytest.approx(base - 1.6)
    assert hotness(facts("note:decision", text=decision(status="superseded")), NOW) == pytest.approx(base - 1.6)
    assert hotness(facts("note:decision", text=decision(conflict=True)), NOW) == pytest.approx(base)


def test_pinned_and_archived_items_have_fixed_heat_and_keep_their_tier() -> None:
    assert hotness(facts(state="pinned", age=None, access=0), NOW) == 100.0
    assert hotness(facts(state="archived", importance=1.0), NOW) == -100.0
    assert derive_state(facts(state="pinned", age=None, access=0, text=decision(status="resolved")), NOW) == "pinned"
    assert derive_state(facts(state="archived", importance=1.0), NOW) == "archived"


def test_the_tier_is_hot_from_7_and_warm_from_4_2() -> None:
    # decision 3.4 + created 2 days ago 2.1 + last read 60 days ago -0.2 + two uses 1.7 = exactly 7.0
    hot = facts("note:decision", age=2 * DAY, access=2, since_access=60 * DAY)
    assert hotness(hot, NOW) == 7.0
    assert derive_state(hot, NOW) == "hot"
    just_under = facts("note:decision", age=3 * DAY + SECOND, access=2, since_access=60 * DAY)
    assert hotness(just_under, NOW) < 7 and derive_state(just_under, NOW) == "warm"
    # decision 3.4 + created 100 days ago -1.6 + last read 20 days ago 0.7 + two uses 1.7 = exactly 4.2
    warm = facts("note:decision", age=100 * DAY, access=2, since_access=20 * DAY)
    assert hotness(warm, NOW) == 4.2
    assert derive_state(warm, NOW) == "warm"
    cold = facts("note:decision", age=100 * DAY, access=2, since_access=31 * DAY)
    assert derive_state(cold, NOW) == "cold"


def test_a_superseded_note_sits_one_tier_below_and_a_resolved_one_is_cold() -> None:
    hot = facts("note:decision", importance=1.0, age=DAY, since_access=DAY)
    assert derive_state(hot, NOW) == "hot"
    assert (
        derive_state(
            facts("note:decision", importance=1.0, age=DAY, since_access=DAY, text=decision(status="superseded")), NOW
        )
        == "warm"
    )
    assert (
        derive_state(
            facts("note:decision", importance=1.0, age=DAY, since_access=DAY, text=decision(status="resolved")), NOW
        )
        == "cold"
    )
    warm = facts("note:decision", age=100 * DAY, access=2, since_access=20 * DAY, text=decision(status="superseded"))
    assert derive_state(warm, NOW) == "cold"
