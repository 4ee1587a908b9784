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
