"""The TUI tests' shared worlds, built once per test process and copied for each test instead of rebuilt.

A store is keyed by its repository's path, so the seeded demo is restored at one path fixed for the process (each
test that takes it gets it as `seed_demo` left it, under its own CORTEX_HOME): a file copy costs a fraction of the
six sessions, thirteen git commands and hundreds of store writes that seeding takes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .test_tui_snapshots import NOW_ISO, environment

_DEMO: dict[str, Path] = {}
"""`repo`: where the demo lives while a test runs; `template`: the repository as seeded; `home`: its CORTEX_HOME."""


def _demo_template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Seed the demo once (under `CORTEX_NOW`, so deterministic) and keep the repository and its CORTEX_HOME."""
    if not _DEMO:
        from cortex_engine.ops.demo import seed_demo

        base = tmp_path_factory.mktemp("demo-template")
        repo, home = base / "demo-service", base / "cortex-home"
        with environment({"CORTEX_HOME": str(home), "CORTEX_NOW": NOW_ISO}):
            seed_demo(str(repo))
        template = base / "template"
        repo.rename(template)
        _DEMO.update(repo=repo.resolve(), template=template, home=home)
    return _DEMO


def fresh_demo(tmp_path_factory: pytest.TempPathFactory, cortex_home: Path) -> Path:
    """The seeded demo repository, as `seed_demo` leaves it, with its store under `cortex_home`; returns its path.

    Whatever the last test did to the repository or its store is gone: both are copied again from the template.
    """
    demo = _demo_template(tmp_path_factory)
    repo = demo["repo"]
    if os.path.lexists(repo):
        shutil.rmtree(repo)
    shutil.copytree(demo["template"], repo, symlinks=True)
    shutil.copytree(demo["home"], cortex_home, symlinks=True, dirs_exist_ok=True)
    # The copies have new inodes and change times: refresh the index now, so no git the app runs rewrites it (a
    # watched index that changes would be heard as a checkout).
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=repo, check=True, capture_output=True)
    return repo
