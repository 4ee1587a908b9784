"""The README's first command: `cortex demo` seeds a real repository and the app opens on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cortex_engine.base.errors import Refused


def cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run this checkout's `cortex ARGS` (it must succeed)."""
    return subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
        env=env,
    )


def test_demo_says_where_it_writes_then_prints_a_contest_and_freshness(tmp_path: Path) -> None:
    """The first line names the repository and the store it is about to (re)create, and the store it names is the
    one the demo then uses; the seeded demo carries a contest, a superseded decision and stale/moved labels."""
    target = tmp_path / "demo"
    env = {**os.environ, "CORTEX_HOME": str(tmp_path / "home")}
    done = cli("demo", "--dir", str(target), "--json", env=env)
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"Cortex demo: writing a demo repository to {target.resolve()} and its store to ")
    store = cli("store", "--json", cwd=target, env=env)
    assert str(Path(json.loads(store.stdout)["path"]).parent) in first

    brief = json.loads(done.stdout)["session_brief"]
    assert brief["text"].startswith("Cortex memory (main):")
    assert brief["tokens"] <= 150
    assert sum("contested" in item["labels"] for item in brief["items"]) == 2
    recall = cli("recall", "login", "--json", cwd=target, env=env)
    labels = [label for item in json.loads(recall.stdout)["items"] for label in item["labels"]]
    assert "moved: src/auth/login_old.py → src/auth/login.py" in labels


def test_demo_refuses_a_foreign_directory(tmp_path: Path) -> None:
    """The demo never deletes a directory it did not create."""
    from cortex_engine.ops.demo import seed_demo

    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("precious")
    with pytest.raises(Refused):
        seed_demo(str(foreign))
    assert (foreign / "keep.txt").read_text() == "precious"


def test_demo_history_and_store_are_deterministic_under_cortex_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real git history (two branches, a rename, a deletion) and every kind of record the operator view shows; two
    seeds with the same CORTEX_NOW give the same commits and the same memory ids."""
    from cortex_engine.engine import open_engine
    from cortex_engine.ops.demo import FEATURE_BRANCH, seed_demo

    monkeypatch.setenv("CORTEX_NOW", "2026-08-02T18:00:00Z")
    seen = []
    for name in ("one", "two"):
        repo = seed_demo(str(tmp_path / name))
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True).stdout
        with open_engine(repo) as engine:
            ids = sorted(
                str(i["id"]) for i in engine.list_memory(limit=200).items if not str(i["id"]).startswith("branch_")
            )
        seen.append((head, ids))
    assert seen[0] == seen[1]
    assert len(seen[0][1]) > 15

    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=repo, capture_output=True, text=True, check=True).stdout

    # the second seed (the same as the first, as checked above) holds the history and the records
    assert set(git("branch", "--format=%(refname:short)").split()) == {"main", FEATURE_BRANCH}
    changes = git("log", "-M", "--name-status", "--format=", "main")
    assert "R100\tsrc/auth/login_old.py\tsrc/auth/login.py" in changes and "D\tsrc/query/recall.py" in changes
    with open_engine(repo) as engine:
        kinds = {item["kind"] for item in engine.list_memory(limit=200).items}
        assert {
            "note:decision",
            "note:blocker",
            "note:insight",
            "note:intent",
            "episode:command_failure",
            "episode:subagent_conclusion",
            "episode:session_summary",
            "command_run",
        } <= kinds
        assert [c["subject"] for c in engine.contests()] == ["spool flush policy"]
        superseded = engine.conn.execute("SELECT content FROM scoped_notes WHERE status='superseded'").fetchall()
        assert [row["content"] for row in superseded] == ["use rabbitmq for the queue engine"]
        report = engine.validate_memory(persist=False)
        labels = " ".join(str(item["label"]) for item in report["items"] if item["label"])
        assert "stale: missing src/query/recall.py" in labels
        assert "moved: src/auth/login_old.py → src/auth/login.py" in labels
        activity = engine.activity()
        assert any(row["parent_session_id"] for row in activity) and any(row["failures"] for row in activity)
        channels = engine.stats()["scope"]["channels"]
        assert {"session_brief", "recall", "brief", "state", "whisper", "subagent_brief"} <= set(channels)


def test_app_opens_on_the_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator app mounts on the demo and fills its panes from the engine."""
    import asyncio

    from textual.widgets import Static

    from cortex_engine.ops.demo import seed_demo
    from cortex_tui.app import make_app
    from cortex_tui.widgets.brief_pane import BriefPane
    from cortex_tui.widgets.contests_pane import ContestsPane

    from .test_tui_snapshots import settle

    monkeypatch.setenv("CORTEX_NOW", "2026-08-02T18:00:00Z")
    repo = seed_demo(str(tmp_path / "demo"))
    app = make_app(repo, live=False)

    async def drive() -> tuple[list[str], str]:
        async with app.run_test(size=(80, 24)) as pilot:  # what it checks is text, at any size
            await settle(pilot)
            contests = [c["subject"] for c in app.screen.query_one(ContestsPane).contests]
            brief = str(app.screen.query_one(BriefPane).query_one("#brief-text", Static).content)
        return contests, brief

    contests, brief = asyncio.run(drive())
    assert contests == ["spool flush policy"]
    assert brief.startswith("Cortex memory (main):")
