"""Freshness verdicts that mutation testing of `scope/freshness.py` found untested (issue 27, seventh round).

Each test reaches its rule through the engine or a `Validator` on a real git repository; MUTATION.md's seventh
round names the mutants each one kills.
"""

from __future__ import annotations

from collections.abc import Callable

from cortex_engine.engine import Engine
from cortex_engine.scope.freshness import Validator

from .conftest import Repo


def _project_note(repo: Repo, engine: Engine, text: str) -> str:
    """An insight of the project layer (imported from a CLAUDE.md and accepted), as its item id."""
    claude = repo.write("CLAUDE.md", f"# Layout\n\n{text}\n")
    engine.import_file(str(claude))
    engine.accept_arrivals([], every=True)
    row = engine.conn.execute("SELECT id, scope_key FROM scoped_notes").fetchone()
    assert row["scope_key"] == engine.project_key != engine.scope.key
    return f"notes:{row['id']}"


def test_a_project_layer_memory_is_judged_against_the_current_checkout(
        repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """Inside git the project layer's key is not the branch's, yet its references are checked against the
    checkout the engine stands in (as `checkouts` says): a gone file is stale, not unverified."""
    repo.write("src/app.py", "x = 1\n" * 5)
    repo.commit("app")
    engine = make_engine(repo.path)
    item = _project_note(repo, engine, "The work happens in src/app.py and src/gone.py always.")
    found = engine.inspect_memory(item)
    assert [(r["path"], r["status"]) for r in found.references] == [("src/app.py", "exists"),
                                                                     ("src/gone.py", "missing")]
    assert "[stale: missing src/gone.py]" in engine.recall("work happens", book=False).text
    # Another store's project layer has no checkout here: it stays unknown.
    validator = Validator(engine.conn, engine.scope)
    assert validator.judge("project:/elsewhere", "src/app.py", "file").status == "unknown"
    assert validator.judge(engine.project_key, "src/app.py", "file").status == "exists"
