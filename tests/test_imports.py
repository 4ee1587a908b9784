"""The engine and the hook paths stay light: no textual, mcp, rich, watchdog or sqlite_utils."""

from __future__ import annotations

import subprocess
import sys

import pytest

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
