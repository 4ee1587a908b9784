"""`Engine` is a facade: each method calls a stage; the SQL lives in the stages and the store layer.

Two checks: the source of `engine.py` (and `engine_core.py`) names no SQL and calls no `execute`, and, at run time, no
statement that reaches SQLite while an engine notes, recalls, reports and runs a session was issued from
`cortex_engine.engine`.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import cortex_engine.engine as engine_module
import cortex_engine.engine_core as core_module
from cortex_engine.engine import Engine

from .conftest import Repo

FACADE_SOURCES = (Path(engine_module.__file__), Path(core_module.__file__))
FACADE_MODULES = ("cortex_engine.engine", "cortex_engine.engine_core")
EXECUTE = {"execute", "executemany", "executescript"}
SQL = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|PRAGMA|WITH|CREATE|DROP|ALTER|REPLACE|BEGIN|COMMIT|VACUUM)\b"
    r"|\b(FROM|INTO|WHERE|JOIN)\s+[a-z_]"
)
"""A string that starts like a statement, or holds an upper-case clause keyword followed by a table or column."""


def sql_sites(source: str) -> list[str]:
    """Every `execute`-family call and every SQL-looking string literal (docstrings aside) in `source`."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EXECUTE:
            found.append(f"{node.lineno}: .{node.func.attr}(...)")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and SQL.search(node.value)
        ):
            found.append(f"{node.lineno}: {node.value[:60]!r}")
    return sorted(found, key=lambda site: int(site.split(":")[0]))


def test_the_detector_sees_sql() -> None:
    """The source check can fail: it finds an execute call and a statement literal, and passes prose."""
    sample = (
        'def f(conn):\n    """Read the rows from the store; set the tier."""\n'
        '    conn.execute("SELECT id FROM memory_items WHERE state=?", ("hot",))\n'
        '    q = "UPDATE notes SET status=?"\n'
    )
    assert [site.split(":")[0] for site in sql_sites(sample)] == ["3", "3", "4"]


def test_engine_source_holds_no_sql() -> None:
    """`engine.py` and its core call no `execute`/`executemany`/`executescript` and spell no statement."""
    assert {path.name: sql_sites(path.read_text(encoding="utf-8")) for path in FACADE_SOURCES} == {
        "engine.py": [],
        "engine_core.py": [],
    }


STAGES = ("base", "store", "scope", "memory", "semantic", "query", "capture")


def facade_imports(source: str) -> list[str]:
    """Every import of the facade (`cortex_engine.engine`, `engine_core`) in `source`, type-only ones included."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        found += [f"{node.lineno}: {name}" for name in names if name in FACADE_MODULES]
    return found


def test_no_stage_takes_the_engine() -> None:
    """Lower stages take what they need (a connection, a scope, a clock, a narrow protocol), never the `Engine`:
    not even its type is imported below the facade (gc, reflex and the subagent hooks once took it, which tied them
    to every facade change)."""
    root = FACADE_SOURCES[0].parent
    modules = [path for stage in STAGES for path in sorted((root / stage).rglob("*.py"))]
    assert len(modules) > 40
    offenders = {
        str(path.relative_to(root)): sites
        for path in modules
        if (sites := facade_imports(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}
    assert facade_imports("if TYPE_CHECKING:\n    from cortex_engine.engine import Engine\n") == [
        "2: cortex_engine.engine"
    ]


def test_engine_modules_are_small() -> None:
    """A facade, not a god object: under the module line ceiling (900 formatted lines)."""
    assert {path.name: len(path.read_text(encoding="utf-8").splitlines()) <= 900 for path in FACADE_SOURCES} == {
        "engine.py": True,
        "engine_core.py": True,
    }


def _issuer(frame: FrameType | None) -> str:
    """The module that issued a statement: the first frame above the connection's own wrapper."""
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name not in (__name__, "cortex_engine.store.redact", "sqlite3", "contextlib"):
            return name
        frame = frame.f_back
    return ""


def _traced(engine: Engine, issuers: list[tuple[str, str]]) -> None:
    def trace(statement: str) -> None:
        issuers.append((_issuer(sys._getframe(1)), statement))

    engine.conn.set_trace_callback(trace)


def test_no_statement_is_issued_from_the_engine_module(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """Driving the facade through a session, notes, the surfaces, the reports and a flush, every statement SQLite
    sees comes from a stage or the store layer, never from `cortex_engine.engine` or its core."""
    engine = make_engine(repo.path)
    issuers: list[tuple[str, str]] = []
    _traced(engine, issuers)
    engine.start_session("host-1")
    engine.ensure_session()
    engine.host_session("host-1")
    note = engine.note("decision", "Use WAL for the store", "storage")
    engine.note("decision", "Use rollback journal", "storage")
    engine.recall("store journal")
    engine.brief("storage")
    engine.state()
    engine.session_brief()
    engine.header()
    engine.refresh_tiers(force=True)
    engine.status()
    engine.activity()
    engine.contests()
    engine.memory_mark()
    engine.data_version()
    engine.stats()
    engine.suggest_notes()
    engine.validate_memory()
    engine.list_memory()
    engine.inspect_memory(note.id)
    engine.log_event("cmd", command="pytest", exit_code=1, stderr="boom")
    engine.flush_spool()
    engine.summarize("checkpoint")
    engine.consolidate()
    engine.delete_memory(note.id, yes=True)
    assert engine.rescope()
    engine.conn.set_trace_callback(None)
    assert len(issuers) > 50
    assert {who for who, _ in issuers} & {"cortex_engine.memory.tiers", "cortex_engine.capture.sessions"}
    assert [s for who, s in issuers if who in FACADE_MODULES] == []
    engine.close()
