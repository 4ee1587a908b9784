"""The engine and the hook paths stay light: no textual, mcp, rich, watchdog or sqlite_utils."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("textual", "mcp", "rich", "watchdog", "sqlite_utils")


@pytest.mark.parametrize(
    "module",
    ["cortex_engine", "cortex_engine.cli", "cortex_engine.engine", "cortex_engine.messages", "cortex_engine.demo"],
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
