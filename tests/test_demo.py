"""The README's first command: `cortex demo` seeds a real repository and the app opens on it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cortex_engine.errors import Refused


def test_demo_print_shows_contest_and_freshness(tmp_path: Path) -> None:
    """The seeded demo carries a contest, a superseded decision and stale/moved labels."""
    target = tmp_path / "demo"
    done = subprocess.run(
        [sys.executable, "-m", "cortex_engine.cli", "demo", "--dir", str(target), "--json"],
        capture_output=True, text=True, check=True,
    )
    payload = json.loads(done.stdout)
    brief = payload["session_brief"]
    assert brief["text"].startswith("Cortex memory (main):")
    assert brief["tokens"] <= 150
    assert sum("contested" in item["labels"] for item in brief["items"]) == 2
    recall = subprocess.run(
        [sys.executable, "-m", "cortex_engine.cli", "recall", "login", "--json"],
        capture_output=True, text=True, check=True, cwd=target,
    )
    labels = [label for item in json.loads(recall.stdout)["items"] for label in item["labels"]]
    assert "moved: src/auth/login_old.py → src/auth/login.py" in labels


def test_demo_refuses_a_foreign_directory(tmp_path: Path) -> None:
    """The demo never deletes a directory it did not create."""
    from cortex_engine.demo import seed_demo

    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("precious")
    with pytest.raises(Refused):
        seed_demo(str(foreign))
    assert (foreign / "keep.txt").read_text() == "precious"


def test_app_opens_on_the_demo(tmp_path: Path) -> None:
    """The operator app mounts and fills its panes from the engine."""
    import asyncio

    from cortex_engine.demo import seed_demo
    from cortex_engine.engine import open_engine
    from cortex_tui.app import CortexApp, Pane
    from textual.widgets import Static

    repo = seed_demo(str(tmp_path / "demo"))
    engine = open_engine(repo)
    app = CortexApp(engine)

    async def drive() -> tuple[str, str]:
        async with app.run_test(size=(120, 40)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            contests = str(app.query_one("#contests", Pane).query_one(Static).render())
            brief = str(app.query_one("#brief", Pane).query_one(Static).render())
        return contests, brief

    contests, brief = asyncio.run(drive())
    engine.close()
    assert "spool flush policy" in contests
    assert brief.startswith("Cortex memory (main):")
