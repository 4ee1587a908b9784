"""The freshness verdicts' rules at their boundaries (issue 27: mutation testing of `scope/freshness.py`).

A `Validation` gathers what the checkout says about one item's references and anchors; every surface reads its
label (`[stale: …]`, `[moved: …]`, `[drifted: …]`), its one-word validity and its ranking term from here.
"""

from __future__ import annotations

import pytest

from cortex_engine.scope.freshness import AnchorVerdict, RefVerdict, Validation
from cortex_engine.scope.inventory import parse_renames as _parse_renames


def ref(path: str, status: str, moved_to: str | None = None) -> RefVerdict:
    """One file reference's verdict."""
    return RefVerdict(path, "file", status, moved_to)


def anchor(name: str, status: str) -> AnchorVerdict:
    """One anchor's verdict (`name` as labels show it, `path:symbol`)."""
    path = name.split(":", 1)[0]
    return AnchorVerdict(1, name, path, path, name.split(":", 1)[1], 1, 3, "h", None, status)


def test_the_label_names_up_to_three_missing_then_counts_the_rest() -> None:
    three = Validation(refs=tuple(ref(f"f{n}.py", "missing") for n in range(3)))
    assert three.label == "stale: missing f0.py, f1.py, f2.py"
    four = Validation(refs=tuple(ref(f"f{n}.py", "missing") for n in range(3)) + (ref("x.py", "exists"),),
                      anchors=(anchor("g.py:run", "missing"),))
    assert four.label == "stale: missing f0.py, f1.py, f2.py, +1 more"


def test_the_label_names_up_to_two_moves_and_two_drifts() -> None:
    two = Validation(refs=(ref("a.py", "moved", "b.py"), ref("c.py", "moved", "d.py")),
                     anchors=(anchor("e.py:f", "drifted"), anchor("g.py:h", "drifted")))
    assert two.label == "moved: a.py → b.py, c.py → d.py; drifted: e.py:f changed, g.py:h changed"
    three = Validation(refs=(ref("a.py", "moved", "b.py"), ref("c.py", "moved", "d.py"), ref("x.py", "moved", "y.py")),
                       anchors=(anchor("e.py:f", "drifted"), anchor("g.py:h", "drifted"), anchor("i.py:j", "drifted")))
    assert three.label == ("moved: a.py → b.py, c.py → d.py, +1 more; "
                           "drifted: e.py:f changed, g.py:h changed, +1 more")


def test_the_label_orders_stale_moved_drifted_and_quotes_names() -> None:
    v = Validation(refs=(ref("a b.py", "moved", "c.py"), ref("gone.py", "missing"), ref("ok.py", "exists"),
                         ref("u.py", "unknown")),
                   anchors=(anchor("k.py:f", "drifted"), anchor("k.py:g", "fresh")))
    assert v.label == 'stale: missing gone.py; moved: "a b.py" → c.py; drifted: k.py:f changed'
    assert Validation(refs=(ref("ok.py", "exists"), ref("u.py", "unknown"))).label is None
    assert Validation().label is None


def test_counts_add_the_anchors_only_for_drifted_and_missing() -> None:
    v = Validation(refs=(ref("a.py", "missing"), ref("b.py", "exists")),
                   anchors=(anchor("b.py:f", "missing"), anchor("b.py:g", "drifted"), anchor("b.py:h", "fresh")))
    assert (v.count("missing"), v.count("drifted"), v.count("exists"), v.count("fresh")) == (2, 1, 1, 0)
    assert v.stale and v.drifted and not v.all_missing


def test_all_missing_needs_references_and_every_one_gone() -> None:
    assert Validation(refs=(ref("a.py", "missing"), ref("b.py", "missing"))).all_missing
    assert not Validation(refs=(ref("a.py", "missing"), ref("b.py", "moved", "c.py"))).all_missing
    assert not Validation().all_missing
    assert not Validation(anchors=(anchor("a.py:f", "missing"),)).all_missing
    assert Validation(anchors=(anchor("a.py:f", "missing"),)).stale


@pytest.mark.parametrize(("refs", "anchors", "validity"), [
    ((), (), "no file refs"),
    (("missing", "unknown"), ("drifted",), "stale refs"),
    (("exists", "unknown"), ("drifted",), "code drifted"),
    (("exists", "unknown", "moved"), (), "refs unverified"),
    (("exists", "moved"), (), "refs moved"),
    (("exists",), ("fresh",), "refs OK"),
])
def test_validity_is_the_worst_verdict_in_one_word(refs: tuple[str, ...], anchors: tuple[str, ...],
                                                   validity: str) -> None:
    v = Validation(refs=tuple(ref(f"f{n}.py", s, "g.py" if s == "moved" else None) for n, s in enumerate(refs)),
                   anchors=tuple(anchor(f"f0.py:s{n}", s) for n, s in enumerate(anchors)))
    assert v.validity == validity


@pytest.mark.parametrize(("refs", "drifts", "current", "historical"), [
    ((), 0, 0.0, 0.0),
    (("exists",), 0, 3.0, 3.0),
    (("moved",), 0, 3.0, 3.0),
    (("unknown",), 0, 0.0, 0.0),
    (("exists",), 1, -1.0, -0.5),
    (("exists",), 2, -3.0, -1.0),
    (("exists",), 3, -3.0, -1.0),
    (("missing",), 0, -5.0, -1.5),
    (("missing", "missing"), 0, -6.0, -3.0),
    (("missing",) * 4, 0, -8.0, -6.0),
    (("missing",) * 5, 0, -8.0, -7.5),
    (("missing", "exists"), 1, -5.0, -1.5),  # drift alongside a missing file ranks as the missing file
])
def test_the_ranking_term_is_graduated_and_capped(refs: tuple[str, ...], drifts: int, current: float,
                                                  historical: float) -> None:
    v = Validation(refs=tuple(ref(f"f{n}.py", s, "g.py" if s == "moved" else None) for n, s in enumerate(refs)),
                   anchors=tuple(anchor(f"f0.py:s{n}", "drifted") for n in range(drifts)))
    assert (v.ranking_score(False), v.ranking_score(True)) == (current, historical)


def test_each_path_has_its_verdict_in_the_json() -> None:
    v = Validation(refs=(ref("a.py", "moved", "b c.py"), ref("u.py", "unknown"), ref("ok.py", "exists")),
                   anchors=(anchor("a.py:f", "drifted"), anchor("a.py:g", "fresh"), anchor("a.py:h", "missing")))
    assert v.verdicts == [
        {"path": "a.py", "verdict": "moved", "to": '"b c.py"'},
        {"path": "u.py", "verdict": "unverified", "to": None},
        {"path": "ok.py", "verdict": "exists", "to": None},
        {"path": "a.py:f", "verdict": "drifted", "to": None},
        {"path": "a.py:h", "verdict": "missing", "to": None},
    ]


def test_renames_are_read_from_git_s_nul_separated_status() -> None:
    out = "M\0a.py\0R100\0old.py\0new.py\0C75\0x.py\0y.py\0D\0gone.py\0\0R090\0b.py\0c.py\0"
    assert _parse_renames(out) == [("old.py", "new.py"), ("b.py", "c.py")]
    assert _parse_renames("R100\0old.py") == []
    assert _parse_renames("") == []
