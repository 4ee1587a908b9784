"""`records.record` behaves as the dataclasses it replaces on the hot paths: construction, defaults, factories,
frozen assignment, value equality and hashing, repr, `replace`, slots, and declaration errors."""

from __future__ import annotations

from typing import ClassVar

import pytest

from cortex_engine.base.records import FrozenRecordError, field, fields, record, replace


@record(frozen=True)
class Point:
    """A frozen record with a plain default, a factory default and a class variable."""

    x: int
    label: str = "p"
    tags: list[str] = field(default_factory=list)
    KIND: ClassVar[str] = "point"


@record(frozen=True)
class Tagged(Point):
    """A subclass adds a field after its base's."""

    weight: float = 1.0


@record
class Tally:
    """A mutable record."""

    counts: dict[str, int] = field(default_factory=dict)
    total: int = 0


@record(frozen=True, slots=True)
class Slim:
    """A frozen record with slots."""

    a: int
    b: int = 2


def test_construction_defaults_and_factories() -> None:
    assert Point(1) == Point(1, "p", [])
    assert Point(x=2, label="q").label == "q"
    first, second = Point(1), Point(1)
    first.tags.append("a")
    assert second.tags == []  # a fresh list per instance, as default_factory promises
    assert fields(Tagged) == ("x", "label", "tags", "weight") and Tagged(1, weight=3.0).weight == 3.0
    assert Point.KIND == "point" and "KIND" not in fields(Point)
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, nope=2)  # type: ignore[call-arg]


def test_frozen_records_refuse_assignment_and_hash_by_value() -> None:
    point = Point(1, "p", [])
    with pytest.raises(FrozenRecordError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del point.label  # type: ignore[misc]
    assert hash(Slim(1)) == hash(Slim(1, 2)) and len({Slim(1), Slim(1), Slim(2)}) == 2
    assert Point(1) != Tagged(1) and Point(1) != (1, "p", [])
    assert repr(Tagged(1)) == "Tagged(x=1, label='p', tags=[], weight=1.0)"


def test_mutable_records_assign_and_are_unhashable() -> None:
    tally = Tally()
    tally.total += 1
    tally.counts["a"] = 1
    assert tally == Tally({"a": 1}, 1) and Tally().counts == {}
    with pytest.raises(TypeError):
        hash(tally)


def test_replace_and_slots() -> None:
    assert replace(Point(1, "p"), label="q") == Point(1, "q")
    with pytest.raises(TypeError):
        replace(Point(1), nope=1)
    slim = Slim(1)
    assert not hasattr(slim, "__dict__") and replace(slim, b=5) == Slim(1, 5)


def test_a_required_field_after_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="without a default"):

        @record
        class Bad:
            """Out of order."""

            a: int = 1
            b: int  # type: ignore[misc]
