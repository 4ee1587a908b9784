"""The engine and the hook paths stay light: no textual, mcp, rich, watchdog or sqlite_utils."""

from __future__ import annotations

import ast
import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import GIT_ENV

ROOT = Path(__file__).resolve().parent.parent

HEAVY = ("textual", "mcp", "rich", "watchdog", "sqlite_utils", "numpy", "onnxruntime", "tokenizers")
"""UI, protocol and admin libraries, and the semantic extra's encoder stack (only the server, `cortex embed` and a
recall on a store with vectors load it)."""

UNNEEDED = ("uuid", "platform", "logging", "secrets", "mcp_types")

ENGINE_MODULES = (
    "cortex_engine",
    "cortex_engine.adapters.cli",
    "cortex_engine.engine",
    "cortex_engine.query.messages",
    "cortex_engine.ops.demo",
    "cortex_engine.adapters.hookentry",
    "cortex_engine.ops.evaluation",
    "cortex_engine.memory.transfer",
    "cortex_engine.ops.uninstall",
    "cortex_engine.ops.plugin",
    "cortex_engine.adapters.completion",
    "cortex_engine.adapters.progress",
    "cortex_engine.ops.doctor",
    "cortex_engine.adapters.serve",
    "cortex_engine.semantic.extra",
)
HOOK_PATHS = (("inject-header", "--quiet"), ("reflect", "--event", "prompt", "--prompt", "fix the bug"))
HOOK_PATHS += (("flush-spool",), ("hook", "reflect-pre"))
ONE_SHOT_PATHS = (("recall", "queue"), ("inject-header", "--quiet"), ("note", "--kind", "insight", "x"))
DATACLASS_FREE_PATHS = (("recall", "queue"), ("inject-header", "--quiet"))

FORKER = """
import os, sys
args = sys.argv[1:]
for n in range(0, len(args), 3):
    cwd, home, code = args[n : n + 3]
    read, write = os.pipe()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.dup2(write, 1)
        os.chdir(cwd)
        os.environ.update(HOME=home, CORTEX_HOME=os.path.join(home, ".cortex"))
        status = 0
        try:
            exec(code, {"__name__": "__main__"})
        except BaseException:
            import traceback
            traceback.print_exc()
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read().decode().strip().splitlines()
    _, status = os.waitpid(pid, 0)
    print(f"{status}\t{said[-1] if said else ''}", flush=True)
"""
"""Runs each case's code in a process of its own, forked from an interpreter that has imported nothing but what
Python starts with: each case sees exactly the modules a fresh `python -c` would load, and the interpreter's
start-up is paid once instead of once per case."""


def _probe(module: str) -> str:
    """Code that imports `module` and prints which heavy libraries are loaded."""
    return f"import sys, {module}; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"


def _run_cli(argv: tuple[str, ...], watched: tuple[str, ...]) -> str:
    """Code that runs `cortex argv` with an empty stdin and prints `LOADED`, the watched modules loaded, the exit."""
    return (
        "import sys, io\nfrom cortex_engine.adapters import cli\nsys.stdin = io.StringIO('')\n"
        f"code = cli.main({list(argv)!r})\n"
        f"print('LOADED', ' '.join(m for m in {watched!r} if m in sys.modules), code)"
    )


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory, repo_template: Path) -> dict[tuple[str, object], str]:
    """(probe, case) -> the last line the case printed in a fresh interpreter: every module import, the `--help`
    check and each command path in a repository and a home of its own (a copy of the `repo` fixture's repository)."""
    base = tmp_path_factory.mktemp("fresh")
    help_code = (
        "import sys\nfrom cortex_engine.adapters import cli\n"
        "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('textual' in sys.modules)"
    )
    cases: list[tuple[tuple[str, object], str, bool]] = [(("module", m), _probe(m), False) for m in ENGINE_MODULES]
    cases.append((("help", None), help_code, False))
    cases += [(("hook", argv), _run_cli(argv, HEAVY), True) for argv in HOOK_PATHS]
    cases += [(("one-shot", argv), _run_cli(argv, UNNEEDED), True) for argv in ONE_SHOT_PATHS]
    cases += [
        (("dataclasses", argv), _run_cli(argv, ("dataclasses", "inspect")), True) for argv in DATACLASS_FREE_PATHS
    ]
    args: list[str] = []
    for n, (_, code, in_repo) in enumerate(cases):
        home = base / f"case-{n}" / "home"
        home.mkdir(parents=True)
        cwd = base / f"case-{n}" / "repo"
        if in_repo:
            shutil.copytree(repo_template, cwd, symlinks=True)
        else:
            cwd = ROOT
        args += [str(cwd), str(home), code]
    env = {key: value for key, value in os.environ.items() if key not in ("CLAUDECODE", "CORTEX_NOW")}
    env.update(
        GIT_ENV, CORTEX_SEMANTIC="0", PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    )
    done = subprocess.run([sys.executable, "-c", FORKER, *args], capture_output=True, text=True, env=env, check=True)
    lines = done.stdout.splitlines()
    assert len(lines) == len(cases), done.stderr
    results = {}
    for (key, _, _), line in zip(cases, lines, strict=True):
        status, said = line.split("\t", 1)
        assert status == "0", (key, done.stderr)
        results[key] = said
    return results


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_engine_imports_no_heavy_modules(module: str, fresh: dict[tuple[str, object], str]) -> None:
    """Importing the engine (or the CLI entry) loads none of the UI/protocol libraries."""
    assert fresh[("module", module)].strip() == ""


def test_cli_help_does_not_load_textual(fresh: dict[tuple[str, object], str]) -> None:
    """`cortex --help` pays for no UI import."""
    assert fresh[("help", None)].strip().endswith("False")


@pytest.mark.parametrize("argv", HOOK_PATHS)
def test_hook_paths_import_nothing_heavy(argv: tuple[str, ...], fresh: dict[tuple[str, object], str]) -> None:
    """The paths hooks run (inject-header, reflect, flush-spool, hook) load no UI, protocol or admin library."""
    assert fresh[("hook", argv)].strip() == "LOADED  0"


@pytest.mark.parametrize("argv", ONE_SHOT_PATHS)
def test_one_shot_paths_skip_stdlib_modules_they_do_not_need(
    argv: tuple[str, ...], fresh: dict[tuple[str, object], str]
) -> None:
    """One-shot commands pay for no `uuid` (it imports `platform`), `logging` or `secrets` import."""
    assert fresh[("one-shot", argv)].strip() == "LOADED  0"


@pytest.mark.parametrize("argv", DATACLASS_FREE_PATHS)
def test_recall_and_session_start_build_no_dataclasses(
    argv: tuple[str, ...], fresh: dict[tuple[str, object], str]
) -> None:
    """`dataclasses` (and the `inspect`, `ast`, `dis` it imports) cost ~1 ms per class plus ~10 ms to load: the
    one-shot recall and SessionStart paths declare their value classes with `records.record` instead."""
    assert fresh[("dataclasses", argv)].strip() == "LOADED  0"


@functools.cache
def _parsed(path: Path) -> ast.Module:
    """A source file's syntax tree, parsed once per run (the checks below walk the same files; none changes it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
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

        def add(target: str, into: set[str] = graph[name], name: str = name) -> None:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                into.add(target)

        def walk(node: ast.AST, home: str = home) -> None:
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
                elif (
                    isinstance(child, ast.Call)
                    and ast.unparse(child.func).endswith("LazyModule")
                    and child.args
                    and isinstance(child.args[0], ast.Constant)
                    and isinstance(child.args[0].value, str)
                ):
                    add(f"cortex_engine.{child.args[0].value}")
                walk(child)

        walk(_parsed(path))
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
    """No module imports, however lazily, a module that imports it back: layers stay layers."""
    graph = _import_graph()
    assert len(graph) > 60 and graph["cortex_engine.adapters.cli"]  # the walk really saw the package
    assert "cortex_engine.capture.agents" in graph["cortex_engine.engine"]  # a lazy handle, in TYPE_CHECKING's else
    assert _cycles(graph) == []


def test_the_cycle_check_sees_a_lazy_cycle() -> None:
    """The checker itself: a function-level import back up the graph is a cycle."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


# The stage folders, bottom to top: a stage imports only itself and the stages below it.
STAGES = ("base", "store", "scope", "memory", "semantic", "query", "capture")
FACADE = ("cortex_engine", "cortex_engine.engine", "cortex_engine.engine_core", "cortex_engine.operator")
ADAPTER_LIBRARIES = ("textual", "mcp", "rich", "watchdog", "pydantic", "starlette", "uvicorn", "httpx")


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "cortex_engine" and len(parts) > 2 and parts[1] in STAGES else None


def _layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that goes up: a stage into a higher stage, the facade, an adapter, `ops` or the TUI, and
    the facade into an adapter, `ops` or the TUI."""
    wrong = []
    for module, targets in sorted(graph.items()):
        stage = _stage(module)
        for target in sorted(targets):
            up = _stage(target)
            if stage is not None and (up is None or STAGES.index(up) > STAGES.index(stage)):
                wrong.append(f"{module} -> {target}")
            elif module in FACADE and up is None and target not in FACADE:
                wrong.append(f"{module} -> {target}")
    return wrong


def _external_imports(path: Path) -> set[str]:
    """Top-level names of every module a file imports, at any depth, `if TYPE_CHECKING:` blocks excluded."""
    found: set[str] = set()

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name.split(".")[0] for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                found.add(child.module.split(".")[0])
            walk(child)

    walk(_parsed(path))
    return found


def test_stages_import_only_downwards_and_the_facade_imports_no_adapter() -> None:
    """base < store < scope < memory < semantic < query < capture; the facade sits on them; adapters and ops on it."""
    graph = _import_graph()
    assert sum(1 for module in graph if _stage(module)) > 30  # the walk really saw the stage folders
    assert _layer_violations(graph) == []


def test_the_layer_check_sees_an_upward_import() -> None:
    """The checker itself: memory reaching into query, a stage into the facade, the facade into the CLI."""
    graph = {
        "cortex_engine.memory.notes": {"cortex_engine.query.render", "cortex_engine.base.clock"},
        "cortex_engine.capture.flush": {"cortex_engine.engine"},
        "cortex_engine.engine": {"cortex_engine.adapters.cli", "cortex_engine.store.database"},
    }
    assert _layer_violations(graph) == [
        "cortex_engine.capture.flush -> cortex_engine.engine",
        "cortex_engine.engine -> cortex_engine.adapters.cli",
        "cortex_engine.memory.notes -> cortex_engine.query.render",
    ]


def test_no_stage_and_not_the_facade_imports_an_adapter_library() -> None:
    """ "The engine imports no textual, mcp, rich or watchdog" holds by structure: only adapters may, lazily."""
    engine = ROOT / "cortex_engine"
    paths = [
        *[p for stage in STAGES for p in (engine / stage).rglob("*.py")],
        engine / "engine.py",
        engine / "engine_core.py",
        engine / "operator.py",
        engine / "__init__.py",
    ]
    assert len(paths) > 30
    offenders = {str(p.relative_to(ROOT)): sorted(_external_imports(p) & set(ADAPTER_LIBRARIES)) for p in paths}
    assert {p: libs for p, libs in offenders.items() if libs} == {}


def test_every_adapter_reaches_the_engine_only_through_the_facade() -> None:
    """The TUI, the CLI, the MCP server and the hook entry import the facade (`engine`, `operator`), its result
    types (`results`), `base`, each other and `ops`; never a stage module directly."""
    graph = _import_graph()
    faces = ("cortex_tui", "cortex_engine.adapters")
    reached = {
        (module, target)
        for module, targets in graph.items()
        if module.startswith(faces)
        for target in targets
        if target.startswith("cortex_engine")
    }
    assert ("cortex_engine.adapters.handlers.common", "cortex_engine.engine") in reached  # the CLI's handlers
    assert {(m, t) for m, t in reached if _stage(t) is not None and not t.startswith("cortex_engine.base")} == set()


def test_every_result_name_resolves_to_its_stage() -> None:
    """`results` re-exports lazily: each listed name imports from the stage that defines it."""
    from cortex_engine import results

    assert len(results.__all__) > 20
    missing = [name for name in results.__all__ if getattr(results, name, None) is None]
    assert missing == []
    assert results.strip_control.__module__ == "cortex_engine.query.render"
    with pytest.raises(AttributeError):
        results.not_a_result  # noqa: B018 - the attribute access is the test


def test_results_names_its_exports_literally() -> None:
    """A computed `__all__` hid the re-exported names from mypy --strict and ruff. It is a literal list,
    naming exactly what the TYPE_CHECKING imports bring and what the lazy table resolves."""
    from cortex_engine import results

    tree = ast.parse((ROOT / "cortex_engine" / "results.py").read_text(encoding="utf-8"))
    [assigned] = [
        n.value
        for n in tree.body
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)
    ]
    listed = ast.literal_eval(assigned)  # a computed value raises here
    imported = {
        alias.asname or alias.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("cortex_engine.")
        for alias in n.names
    }
    assert sorted(listed) == sorted(imported) == sorted(results._HOME)


def test_the_labels_are_spelled_in_one_module() -> None:
    """`[contested]`, `(superseded)`, `(resolved)` and the `[stale|moved|drifted: …]` shapes are written only in
    `base/labels.py`: rendering, defusing and every text shown about them quote it, so none can drift apart.
    (Docstrings may name a label; no string the code shows or compares may spell one.)"""
    literal = re.compile(r"\[contested\]|\((?:superseded|resolved)\)|\[(?:stale|moved|drifted):")
    sources = [p for package in ("cortex_engine", "cortex_tui") for p in sorted((ROOT / package).rglob("*.py"))]
    assert len(sources) > 60
    found = []
    for path in sources:
        if path.name == "labels.py":
            continue
        tree = _parsed(path)
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        found += [
            f"{path.relative_to(ROOT)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and literal.search(node.value)
        ]
    assert found == []


def _repeated_module_names() -> dict[str, set[str]]:
    paths = [p for package in ("cortex_engine", "cortex_tui") for p in (ROOT / package).rglob("*.py")]
    names: dict[str, set[str]] = {}
    for path in paths:
        if path.name != "__init__.py" and "__pycache__" not in path.parts:
            names.setdefault(path.stem, set()).add(str(path.relative_to(ROOT)))
    return {name: where for name, where in names.items() if len(where) > 1}


def test_module_names_repeat_only_where_this_table_says_why() -> None:
    """A newcomer who greps for `reports` finds two modules only when ARCHITECTURE.md says why they share it."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("### Names that repeat", 1)[1].split("\n## ", 1)[0]
    explained = {m.group(1) for m in re.finditer(r"^\| `(\w+)` \|", section, re.M)}
    assert explained  # the table was found and read
    assert set(_repeated_module_names()) == explained


def test_the_adapters_sit_in_their_own_folder() -> None:
    """The package root holds the facade only: the faces live in `adapters/`."""
    root_modules = sorted(p.name for p in (ROOT / "cortex_engine").glob("*.py"))
    assert len(root_modules) <= 6, root_modules
    assert "cli.py" not in root_modules and (ROOT / "cortex_engine" / "adapters" / "cli.py").is_file()


def _doc_section(heading: str) -> str:
    """One `###` section of ARCHITECTURE.md, up to the next heading."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    return re.split(r"\n#{2,3} ", text.split(f"### {heading}\n", 1)[1], maxsplit=1)[0]


def _module_name(cell: str) -> str:
    """`ops/evaluation/gate` → `cortex_engine.ops.evaluation.gate`; `cortex_tui/...` stays its own package."""
    dotted = cell.strip().strip("`").replace("/", ".")
    return dotted if dotted.startswith("cortex_tui") else f"cortex_engine.{dotted}"


def _reach_table() -> set[tuple[str, str]]:
    """The permitted reach past the facade, as ARCHITECTURE.md lists it: (module, what it may import)."""
    rows = re.findall(
        r"^\| (`[\w/]+`) \| ((?:`[\w/]+`(?:, )?)+) \|", _doc_section("What reaches past the facade"), re.M
    )
    return {
        (_module_name(module), _module_name(t)) for module, targets in rows for t in re.findall(r"`[\w/]+`", targets)
    }


def _reach_past_the_facade(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """What needs a reason: an `ops` module importing a stage module other than `base`, an adapter importing `ops`,
    and `ops` importing an adapter (never permitted: the table lists no adapter as a target)."""
    faces = ("cortex_tui", "cortex_engine.adapters")
    reach = set()
    for module, targets in graph.items():
        for target in targets:
            stage = _stage(target)
            if module.startswith("cortex_engine.ops") and (
                (stage is not None and stage != "base") or target.startswith(faces)
            ):
                reach.add((module, target))
            elif module.startswith(faces) and target.startswith("cortex_engine.ops"):
                reach.add((module, target))
    return reach


def _reach_mismatch(reach: set[tuple[str, str]], table: set[tuple[str, str]]) -> dict[str, list[str]]:
    return {
        "beyond the table": sorted(f"{m} -> {t}" for m, t in reach - table),
        "listed, unused": sorted(f"{m} -> {t}" for m, t in table - reach),
    }


def test_ops_and_the_adapters_reach_past_the_facade_only_as_listed() -> None:
    """`ops` reaches a stage, and an adapter reaches `ops`, exactly where ARCHITECTURE.md's table says why."""
    table = _reach_table()
    assert ("cortex_tui.data.target", "cortex_engine.ops.presence") in table  # the table was found and read
    assert ("cortex_engine.ops.backup", "cortex_engine.store.database") in table
    reach = _reach_past_the_facade(_import_graph())
    assert _reach_mismatch(reach, table) == {"beyond the table": [], "listed, unused": []}


def test_the_reach_check_sees_an_unlisted_reach_and_a_stale_row() -> None:
    """The checker itself: `ops` into a stage or an adapter, an adapter into `ops`, each unlisted, is caught, as is a
    listed reach no code makes; `base` and the facade need no row."""
    graph = {
        "cortex_engine.ops.install": {
            "cortex_engine.memory.notes",
            "cortex_engine.base.errors",
            "cortex_engine.engine",
        },
        "cortex_engine.ops.doctor": {"cortex_engine.adapters.cli", "cortex_engine.ops.presence"},
        "cortex_tui.app": {"cortex_engine.ops.demo", "cortex_engine.operator"},
        "cortex_engine.ops.backup": {"cortex_engine.store.database"},
    }
    table = {
        ("cortex_engine.ops.backup", "cortex_engine.store.database"),
        ("cortex_engine.ops.wiring", "cortex_engine.scope.identity"),
    }
    assert _reach_mismatch(_reach_past_the_facade(graph), table) == {
        "beyond the table": [
            "cortex_engine.ops.doctor -> cortex_engine.adapters.cli",
            "cortex_engine.ops.install -> cortex_engine.memory.notes",
            "cortex_tui.app -> cortex_engine.ops.demo",
        ],
        "listed, unused": ["cortex_engine.ops.wiring -> cortex_engine.scope.identity"],
    }


def test_the_stage_table_names_every_module_of_its_folder() -> None:
    """ "Where each stage lives" names each module of each stage folder and of `ops/`: a module added without a
    line there fails here."""
    section = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8").split("## Where each stage lives", 1)[1]
    rows = dict(re.findall(r"^\| `(\w+)/` \| (.*?) \| [^|]*\|$", section.split("\n### ", 1)[0], re.M))
    assert set(STAGES) | {"ops"} <= set(rows)  # the table was found and read
    unnamed = {
        folder: sorted(
            name
            for path in (ROOT / "cortex_engine" / folder).rglob("*.py")
            if path.name != "__init__.py"
            and f"`{(name := path.relative_to(ROOT / 'cortex_engine' / folder).with_suffix('').parts[-1])}`"
            not in rows[folder]
        )
        for folder in (*STAGES, "ops")
    }
    assert {folder: names for folder, names in unnamed.items() if names} == {}


_IDENT = r"[A-Za-z_]\w*"


@functools.cache
def _top_level(path: Path) -> dict[str, ast.AST]:
    """A module's top-level names (functions, classes, assignments, imports) and what defines each (parsed once per
    run: the checks ask for the same modules many times)."""
    names: dict[str, ast.AST] = {}
    for node in _parsed(path).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            names.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update({(a.asname or a.name).split(".")[0]: node for a in node.names})
    return names


def _has_chain(path: Path, chain: list[str], sources: dict[str, Path]) -> bool:
    """Whether `Class.method` (or a bare name) is defined at the top of the module at `path`; a method a class
    inherits from a base class defined in the packages counts."""
    found = _top_level(path).get(chain[0])
    if found is None:
        return False
    for name in chain[1:]:
        if not isinstance(found, ast.ClassDef):
            return False
        members = {getattr(n, "name", None) or getattr(getattr(n, "target", None), "id", None): n for n in found.body}
        if name in members:
            found = members[name]
            continue
        bases = [ast.unparse(b) for b in found.bases]
        return any(
            _has_chain(p, [base, name], sources) for base in bases for p in sources.values() if base in _top_level(p)
        )
    return True


def _module_file(name: str) -> Path | None:
    """`query/surfaces` → its file (`cortex_tui/live` too, and a package's `__init__.py`)."""
    for base in (ROOT, ROOT / "cortex_engine"):
        for candidate in (base / f"{name}.py", base / name / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


@functools.cache
def _source_words() -> str:
    """Every source, JSON table, hook script and pyproject.toml as one text (read once per run)."""
    return " ".join(
        p.read_text(encoding="utf-8")
        for pattern in ("cortex_engine/**/*.py", "cortex_engine/**/*.json", "cortex_tui/**/*.py", "hooks/*.sh")
        for p in ROOT.glob(pattern)
    ) + (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def _uncited(code: list[str], tests: list[str], sources: dict[str, Path]) -> list[str]:
    """What a rule row cites that does not exist: a `stage/module.name[.member]`, a `module.name`, a bare name
    defined nowhere near the module cited before it, a file; in the test column, a file or a `::test_` in it.

    Words that are not names (`--force`, `reads=True`, a column, a shell function) are looked up as words in the
    sources: only a name no longer written anywhere is reported."""
    wrong: list[str] = []
    stems: dict[str, list[Path]] = {}
    for path in sources.values():
        stems.setdefault(path.stem, []).append(path)
    words = _source_words()
    last: Path | None = None
    for token in code:
        dotted = re.fullmatch(rf"((?:{_IDENT}/)+{_IDENT})(?:\.({_IDENT}(?:\.{_IDENT})*))?", token)
        if dotted and not token.endswith(".py"):
            last = _module_file(dotted.group(1))
            if last is None or (dotted.group(2) and not _has_chain(last, dotted.group(2).split("."), sources)):
                wrong.append(token)
        elif re.fullmatch(r"[\w/.-]+\.(py|sh|json|toml)", token):
            here = [p for p in (ROOT / token, ROOT / "cortex_engine" / token) if p.is_file()]
            here += [p for p in ROOT.glob(f"cortex_engine/**/{token}")]
            if not here:
                wrong.append(token)
            last = here[0] if here and token.endswith(".py") else last
        elif member := re.fullmatch(rf"({_IDENT})\.({_IDENT}(?:\.{_IDENT})*)", token):
            head, chain = member.group(1), token.split(".")
            homes = stems.get(head, [])
            if not (
                any(_has_chain(p, chain[1:], sources) for p in homes)
                or (last is not None and _has_chain(last, chain, sources))
                or any(_has_chain(p, chain, sources) for p in sources.values())
            ):
                wrong.append(token)
        elif re.fullmatch(_IDENT, token):
            if not ((last is not None and _has_chain(last, [token], sources)) or re.search(rf"\b{token}\b", words)):
                wrong.append(token)
    test_file: Path | None = None
    for token in tests:
        cited = re.fullmatch(r"((?:[\w.-]+/)*[\w.-]+\.py)?::(test_\w+)", token) or re.fullmatch(r"()(test_\w+)", token)
        if cited:
            test_file = ROOT / cited.group(1) if cited.group(1) else test_file
            defined = test_file is not None and test_file.is_file() and cited.group(2) in _top_level(test_file)
            if not defined:
                wrong.append(token)
        elif re.fullmatch(r"[\w/.*-]+\.(py|json|md)", token):
            if not list(ROOT.glob(token)):
                wrong.append(token)
            test_file = ROOT / token if token.startswith("tests/") else test_file
    return wrong


def _rule_rows() -> list[tuple[list[str], list[str]]]:
    """The backticked names of each row of "Rules that hold everywhere": (enforced in, test)."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## Rules that hold everywhere", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith("| rule |"):
            cells = re.split(r"\|(?=(?:[^`]*`[^`]*`)*[^`]*$)", line.strip().strip("|"))
            if len(cells) == 3:
                rows.append((re.findall(r"`([^`]+)`", cells[1]), re.findall(r"`([^`]+)`", cells[2])))
    return rows


def _package_sources() -> dict[str, Path]:
    return {
        str(p.relative_to(ROOT)): p
        for package in ("cortex_engine", "cortex_tui")
        for p in (ROOT / package).rglob("*.py")
    }


def test_every_name_the_rule_table_cites_exists() -> None:
    """Each function, class, module, file and test the rule table names is there to read: a rename that leaves
    the table behind fails here."""
    rows = _rule_rows()
    assert len(rows) > 40 and sum(len(code) + len(tests) for code, tests in rows) > 150  # the table was read
    sources = _package_sources()
    assert [(code, wrong) for code, tests in rows if (wrong := _uncited(code, tests, sources))] == []


def test_the_citation_check_sees_a_renamed_function_module_file_and_test() -> None:
    """The checker itself: every kind of stale citation is reported, the live ones beside them are not."""
    sources = _package_sources()
    live = ["query/render.clip", "assemble_sections", "scope/identity.Scope.label", "Engine.review_policy"]
    live += ["capture/runtime.py", "notes.retire", "--force", "scoped_notes"]
    stale = ["query/render.clip_line", "fit_label_tail", "query/rendering.clip", "Scope.labels", "capture/runtimes.py"]
    stale += ["notes.retired", "cortex_gone_word", "ops/evaluation.compare"]  # the last: a package, not its module
    tests = [
        "tests/test_imports.py::test_the_import_graph_has_no_cycle",
        "::test_no_such_test",
        "tests/test_nothing.py",
    ]
    assert _uncited(live + stale, tests, sources) == [*stale, "::test_no_such_test", "tests/test_nothing.py"]
