"""The mutation runner's rule for equivalent survivors (`bench/mutation.py:equivalent_by_rule`): a case change is
excused only where case cannot matter (SQL keywords and names, `sqlite3.Row` keys), never in a quoted SQL value,
a Python string compared in code, or a message."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _runner() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "bench" / "mutation.py"
    spec = importlib.util.spec_from_file_location("bench_mutation", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_mutation", module)
    spec.loader.exec_module(module)
    return module


CASES = [
    (
        """x = conn.execute("SELECT id FROM notes WHERE status='active'")""",
        """x = conn.execute("select id from notes where status='active'")""",
        True,
    ),
    (
        """x = conn.execute("SELECT id FROM notes WHERE status='active'")""",
        """x = conn.execute("SELECT ID FROM NOTES WHERE STATUS='ACTIVE'")""",
        False,
    ),
    (
        """    "AND status='active' ORDER BY kind='focus' DESC LIMIT 1",""",
        """    "and status='active' order by kind='focus' desc limit 1",""",
        True,
    ),
    ("""if a.status == "drifted" and b:""", """if a.status == "DRIFTED" and b:""", False),
    (
        """raise InvalidInput("derived from the note, not edited")""",
        """raise InvalidInput("DERIVED FROM THE NOTE, NOT EDITED")""",
        False,
    ),
    ("""y = row["id"]""", """y = row["ID"]""", True),
    (
        """found.append(Checkout(key, "not in a git repository"))""",
        """found.append(Checkout(key, "NOT IN A GIT REPOSITORY"))""",
        False,
    ),
    ("""q = f"AND m.id=? AND {in_scopes(n, 'a.')}\"""", """q = f"AND m.id=? AND {in_scopes(n, 'A.')}\"""", True),
    ("""moved.append({"anchor": a, "end": b})""", """moved.append({"anchor": a, "END": b})""", False),
    ("""conn.execute("savepoint cortex_entry")""", """conn.execute("SAVEPOINT CORTEX_ENTRY")""", True),
    ("""where = f" AND {in_scopes(n, 'a.')}\"""", """where = f" AND {in_scopes(n, 'A.')}\"""", True),
    ("""done.append({"from": old, "to": new})""", """done.append({"FROM": old, "to": new})""", False),
    ("""    "## Context and problem statement",""", """    "## CONTEXT AND PROBLEM STATEMENT",""", False),
    ("""    "problem=null, seen_at=excluded.seen_at",""", """    "PROBLEM=NULL, SEEN_AT=EXCLUDED.SEEN_AT",""", True),
]


@pytest.mark.parametrize(("before", "after", "equivalent"), CASES)
def test_case_changes_are_excused_only_where_case_cannot_matter(before: str, after: str, equivalent: bool) -> None:
    diff = f"-{before}\n+{after}"
    assert (_runner().equivalent_by_rule(diff) is not None) is equivalent


TOY_TEST = '''
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_double_in_a_child_process(tmp_path):
    """The function is reached only by a child process, started in a folder with no mutmut configuration."""
    child = subprocess.run(
        [sys.executable, "-c", "from cortex_engine.toy import LABEL, double; print(LABEL, double(3))"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert child.stdout.split() == ["2", "6"], child.stderr
'''


def test_a_mutant_reached_only_through_a_child_process_is_run_and_killed(tmp_path: Path) -> None:
    """A test that starts the code in a child process (as the CLI tests start `cortex` in a temp repository,
    whose import calls a mutated function) takes part in mutmut's clean run, counts as reaching the function,
    and kills its mutants: the child cannot find mutmut's configuration from its working directory."""
    runner = _runner()
    work = tmp_path / "toy"
    (work / "cortex_engine").mkdir(parents=True)
    (work / "cortex_engine" / "__init__.py").write_text("")
    (work / "cortex_engine" / "toy.py").write_text(
        "def double(x: int) -> int:\n    return x * 2\n\n\nLABEL = double(1)  # called as the module is imported\n"
    )
    (work / "tests").mkdir()
    (work / "tests" / "test_toy.py").write_text(TOY_TEST)
    (work / "pyproject.toml").write_text('[project]\nname = "toy"\nversion = "0"\n')
    runner.configure("toy.py", ["tests/test_toy.py"], work)
    runner.mutate(work, jobs=1, only=[], budget=300)
    outcome = runner.outcomes("toy.py", work)
    assert outcome, (work / "mutmut.log").read_text()[-3000:]
    assert set(outcome.values()) == {"killed"}, outcome


def test_every_module_and_test_file_the_runner_names_exists() -> None:
    """A module or test file renamed since the runner's table was written would fail its run only when reached."""
    root = Path(__file__).resolve().parent.parent
    missing = [
        path
        for module, tests in _runner().MODULES.items()
        for path in [f"cortex_engine/{module}", *tests]
        if not (root / path).is_file()
    ]
    assert missing == []
