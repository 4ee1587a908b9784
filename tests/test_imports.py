"""The engine and the hook paths stay light: no textual, mcp, rich, watchdog or sqlite_utils."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

HEAVY = ("textual", "mcp", "rich", "watchdog", "sqlite_utils")


@pytest.mark.parametrize(
    "module",
    ["cortex_engine", "cortex_engine.cli", "cortex_engine.engine", "cortex_engine.messages", "cortex_engine.demo",
     "cortex_engine.hookentry", "cortex_engine.evaluation", "cortex_engine.transfer", "cortex_engine.uninstall",
     "cortex_engine.plugin", "cortex_engine.completion", "cortex_engine.progress", "cortex_engine.doctor",
     "cortex_engine.serve"],
)
def test_engine_imports_no_heavy_modules(module: str) -> None:
    """Importing the engine (or the CLI entry) loads none of the UI/protocol libraries."""
    code = f"import sys, {module}; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_cli_help_does_not_load_textual() -> None:
    """`cortex --help` pays for no UI import."""
    code = (
        "import sys\nfrom cortex_engine import cli\n"
        "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('textual' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().endswith("False")


@pytest.mark.parametrize(
    "argv",
    [["inject-header", "--quiet"], ["reflect", "--event", "prompt", "--prompt", "fix the bug"], ["flush-spool"],
     ["hook", "reflect-pre"]],
)
def test_hook_paths_import_nothing_heavy(argv: list[str], repo) -> None:  # noqa: ANN001 - conftest fixture
    """The paths hooks run (inject-header, reflect, flush-spool, hook) load no UI, protocol or admin library."""
    code = (
        "import sys, io\nfrom cortex_engine import cli\nsys.stdin = io.StringIO('')\n"
        f"code = cli.main({argv!r})\n"
        f"print('LOADED', ' '.join(m for m in {HEAVY!r} if m in sys.modules), code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo.path)
    assert done.stdout.strip().splitlines()[-1] == "LOADED  0"


UNNEEDED = ("uuid", "platform", "logging", "secrets", "mcp_types")


@pytest.mark.parametrize("argv", [["recall", "queue"], ["inject-header", "--quiet"], ["note", "--kind", "insight", "x"]])
def test_one_shot_paths_skip_stdlib_modules_they_do_not_need(argv: list[str], repo) -> None:  # noqa: ANN001
    """One-shot commands pay for no `uuid` (it imports `platform`), `logging` or `secrets` import."""
    code = (
        "import sys, io\nfrom cortex_engine import cli\nsys.stdin = io.StringIO('')\n"
        f"code = cli.main({argv!r})\n"
        f"print('LOADED', ' '.join(m for m in {UNNEEDED!r} if m in sys.modules), code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo.path)
    assert done.stdout.strip().splitlines()[-1] == "LOADED  0"


def _import_graph(packages: tuple[str, ...] = ("cortex_engine", "cortex_tui")) -> dict[str, set[str]]:
    """Module → the package modules it imports, at any depth (function-level and LazyModule imports count;
    `if TYPE_CHECKING:` blocks do not, they never run; their `else:` does)."""
    modules: dict[str, Path] = {}
    for package in packages:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        home = name if path.name == "__init__.py" else name.rpartition(".")[0]

        def add(target: str, into: set[str] = graph[name]) -> None:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                into.add(target)

        def walk(node: ast.AST) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    walk(ast.Module(body=child.orelse, type_ignores=[]))  # the `else:` runs (lazy handles)
                    continue
                if isinstance(child, ast.Import):
                    for alias in child.names:
                        add(alias.name)
                elif isinstance(child, ast.ImportFrom):
                    base = child.module or ""
                    if child.level:
                        anchor = home.split(".")[: len(home.split(".")) - (child.level - 1)]
                        base = ".".join([*anchor, *([base] if base else [])])
                    for alias in child.names:
                        add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
                elif (isinstance(child, ast.Call) and ast.unparse(child.func).endswith("LazyModule") and child.args
                      and isinstance(child.args[0], ast.Constant) and isinstance(child.args[0].value, str)):
                    add(f"{home}.{child.args[0].value}")
                walk(child)

        walk(ast.parse(path.read_text(encoding="utf-8")))
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative enough for this size)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_cycle() -> None:
    """No module imports, however lazily, a module that imports it back (issue 15): layers stay layers."""
    graph = _import_graph()
    assert len(graph) > 60 and graph["cortex_engine.cli"]  # the walk really saw the package
    assert "cortex_engine.agents" in graph["cortex_engine.engine"]  # a lazy handle, in TYPE_CHECKING's else
    assert _cycles(graph) == []


def test_the_cycle_check_sees_a_lazy_cycle() -> None:
    """The checker itself: a function-level import back up the graph is a cycle."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
