"""Judged-equivalent mutants are keyed by what they change (`bench/mutation_keys.py`), never by mutmut's number:
a reformat keeps a judgement, an edit to the function retires it, and a change two mutants make excuses neither."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("mutmut")  # in the test extra; a bare checkout without it skips

ROOT = Path(__file__).resolve().parent.parent


def _keys() -> ModuleType:
    """bench/mutation_keys.py, loaded as a module (bench/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("mutation_keys", ROOT / "bench" / "mutation_keys.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mutation_keys", module)
    spec.loader.exec_module(module)
    return module


SOURCE = '''
def total(a, b):
    """Add."""
    return a + b


def twice(a):
    x = a + 1
    y = a + 1
    return x * y
'''

REFORMATTED = '''
def total(
    a,
    b,
):
    """Add."""
    # a comment the formatter or an author added
    return (a
            + b)


def twice(a):
    x = a + 1
    y = a + 1
    return x * y
'''


def _entry(mutant: dict[str, str], reason: str = "judged") -> dict[str, str]:
    return {"module": "m", **mutant, "reason": reason}


def test_a_mutant_is_named_by_its_change_whatever_the_layout() -> None:
    """The same code laid out differently gives the same changes and digests; the change is the statement."""
    keys = _keys()
    plain, reformatted = keys.mutants_of(SOURCE), keys.mutants_of(REFORMATTED)
    assert sorted(map(str, plain.values())) == sorted(map(str, reformatted.values()))
    changes = {(m["before"], m["after"]) for m in plain.values() if m["function"] == "x_total"}
    assert ("return a + b", "return a - b") in changes


def test_an_entry_excuses_its_one_mutant_until_the_function_is_edited() -> None:
    """An entry excuses exactly the mutant it names; edit the function and it excuses nothing."""
    keys = _keys()
    mutants = keys.mutants_of(SOURCE)
    target = next(n for n, m in mutants.items() if m["function"] == "x_total" and m["after"] == "return a - b")
    entries = [_entry(mutants[target])]
    assert keys.excusing(entries, mutants, "m") == {target: "judged"}
    edited = keys.mutants_of(SOURCE.replace('"""Add."""', '"""Add."""\n    a = abs(a)'))
    assert any(m["after"] == "return a - b" for m in edited.values())  # the same change is still made...
    assert keys.excusing(entries, edited, "m") == {}  # ...but in a function nobody judged


def test_a_change_two_mutants_make_excuses_neither() -> None:
    """`x = a + 1` and `y = a + 1` are two statements: a change to one line is found by its text, and where the
    same text is changed in two places neither mutant is excused by one entry."""
    keys = _keys()
    mutants = keys.mutants_of(SOURCE)
    same = [n for n, m in mutants.items() if m["function"] == "x_twice" and m["before"] == "x = a + 1"]
    assert same
    entries = [_entry(mutants[n]) for n in same]
    assert set(keys.excusing(entries, mutants, "m")) == set(same)  # each names its own statement
    doubled = SOURCE.replace("    y = a + 1", "    x = a + 1")
    twins = keys.mutants_of(doubled)
    assert keys.excusing(entries, twins, "m") == {}


def test_the_runner_scores_a_survivor_by_its_judged_change() -> None:
    """bench/mutation.py's score: a survivor whose change and function digest match an entry is equivalent; the
    same survivor after an edit to its function is not killed and not excused."""
    keys = _keys()
    spec = importlib.util.spec_from_file_location("mutation_runner", ROOT / "bench" / "mutation.py")
    assert spec and spec.loader
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    mutants = keys.mutants_of(SOURCE)
    target = next(n for n, m in mutants.items() if m["function"] == "x_total" and m["after"] == "return a - b")
    name = f"cortex_engine.m.{target}"
    result = {"module": "m.py", "outcome": {name: "survived"}, "survivor_changes": {name: mutants[target]}}
    entry = {**_entry(mutants[target]), "module": "cortex_engine.m"}
    assert runner.score(result, [entry])["not_killed"] == []
    moved = {**result, "survivor_changes": {name: {**mutants[target], "digest": "another"}}}
    assert runner.score(moved, [entry])["not_killed"] == [name]
