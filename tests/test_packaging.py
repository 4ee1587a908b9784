"""A non-editable install (a built wheel, as pipx installs it) ships what Cortex reads at run time: the hook
templates land in the data directory `wiring.templates_dir()` falls back to (issue 21)."""

from __future__ import annotations

import fnmatch
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
