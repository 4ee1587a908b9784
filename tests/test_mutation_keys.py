"""Judged-equivalent mutants are keyed by what they change (`bench/mutation_keys.py`), never by mutmut's number:
a reformat keeps a judgement, an edit to the function retires it, and a change two mutants make excuses neither."""

from __future__ import annotations

import importlib.util
import json
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


CLASS_SOURCE = """
class Box:
    def add(self, a, b):
        return a + b


def total(a, b):
    return a + b
"""


def _checkout(tmp_path: Path, source: str, entries: list[dict[str, str]]) -> tuple[Path, Path]:
    """A checkout holding `cortex_engine/m.py` and an equivalents file with these entries."""
    (tmp_path / "cortex_engine").mkdir(exist_ok=True)
    (tmp_path / "cortex_engine" / "m.py").write_text(source, encoding="utf-8")
    record = tmp_path / "equivalent.json"
    record.write_text(json.dumps({"equivalent": entries}), encoding="utf-8")
    return tmp_path, record


def test_the_quick_digest_is_the_one_a_mutant_is_judged_by(tmp_path: Path) -> None:
    """`current_digest` reads the function (a method out of its class) without building mutants, and gives the
    digest `mutants_of` gives: an entry judged on a run passes the quick check until its function is edited."""
    keys = _keys()
    mutants = keys.mutants_of(CLASS_SOURCE)
    root, _ = _checkout(tmp_path, CLASS_SOURCE, [])
    for function in ("xǁBoxǁadd", "x_total"):
        judged_digest = next(m["digest"] for m in mutants.values() if m["function"] == function)
        assert keys.current_digest(root, "cortex_engine.m", function) == judged_digest
    assert keys.current_digest(root, "cortex_engine.m", "x_gone") is None


def test_a_stale_entry_fails_the_check_and_an_awaited_module_s_is_listed_apart(tmp_path: Path) -> None:
    """An entry whose function changed fails both checks (exit 1); one of a module under `AWAITING` is listed
    under its own heading and does not fail; a current entry passes both."""
    keys = _keys()
    mutants = keys.mutants_of(CLASS_SOURCE)
    target = next(m for m in mutants.values() if m["function"] == "x_total" and m["after"] == "return a - b")
    current = {**_entry(target), "module": "cortex_engine.m"}
    root, record = _checkout(tmp_path, CLASS_SOURCE, [current])
    assert keys.stale(root, record) == [] and keys.check(root, record) == []
    assert keys.report([], 1) == (["1 of 1 entries excuse exactly one mutant at this checkout"], 0)
    edited = CLASS_SOURCE.replace("def total(a, b):\n", "def total(a, b):\n    a = abs(a)\n")
    root, record = _checkout(tmp_path, edited, [current])
    quick, whole = keys.stale(root, record), keys.check(root, record)
    assert len(quick) == 1 and quick[0].startswith("cortex_engine.m.x_total: 'return a + b' -> 'return a - b'")
    assert len(whole) == 1 and whole[0].endswith("excuses nothing now")
    lines, code = keys.report(quick, 1)
    assert code == 1 and lines[0] == quick[0]
    keys.AWAITING["cortex_engine.awaited"] = "changing in parallel work"  # this loaded copy's own list
    awaited = quick[0].replace("cortex_engine.m.", "cortex_engine.awaited.", 1)
    lines, code = keys.report([awaited], 1)
    assert code == 0 and lines[1] == f"  {awaited}" and "awaiting judgement" in lines[0]


def test_every_judged_equivalent_is_judged_on_the_function_as_it_is() -> None:
    """The record at this checkout: no entry outside `AWAITING` was judged on another version of its function
    (`python bench/mutation_keys.py --check` rebuilds the mutants too: minutes, not part of the suite)."""
    keys = _keys()
    lines, code = keys.report(keys.stale(), len(keys.judged()))
    assert code == 0, "\n".join(lines)
