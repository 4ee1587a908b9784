"""The user's (or the plugin's) Cortex hooks stand down only where the project really wires its own capture: a real
PostToolUse hook entry in the project's settings running the project's capture script, which exists inside the
project through no link (`capture.standdown`, the one rule of SessionStart, the hook scripts and doctor). A cloned
repository cannot silence the user's capture with a `"_note"`, a local settings file naming a missing script, a
script linked out of the project, another event or a command that only names the script; doctor says which."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import HOOK_TOOLS, Repo, tool_path
from ..install_helpers import commands, cortex, cortex_bin, settings

RUNS = 'bash "$CLAUDE_PROJECT_DIR/.claude/hooks/cortex-capture.sh"'
NOOP = "#!/bin/bash\nexit 0\n"


def _entry(command: str, event: str = "PostToolUse") -> dict:
    return {"hooks": {event: [{"matcher": "Read|Edit|Write|Bash", "hooks": [{"type": "command", "command": command}]}]}}


def _project(repo: Repo, tmp_path: Path, shape: str) -> None:
    """Commit-able project files of one shape into the repository."""
    claude = repo.path / ".claude"
    hooks = claude / "hooks"
    if shape == "real wiring":
        hooks.mkdir(parents=True)
        (hooks / "cortex-capture.sh").write_text(NOOP)
        (claude / "settings.json").write_text(json.dumps(_entry(RUNS)))
    elif shape == "a _note string":
        hooks.mkdir(parents=True)
        (hooks / "cortex-capture.sh").write_text(NOOP)
        (claude / "settings.json").write_text(json.dumps({"_note": RUNS}))
    elif shape == "local settings naming a missing script":
        claude.mkdir()
        (claude / "settings.local.json").write_text(json.dumps(_entry(RUNS)))
    elif shape == "script linked out of the project":
        hooks.mkdir(parents=True)
        (tmp_path / "elsewhere.sh").write_text(NOOP)
        (hooks / "cortex-capture.sh").symlink_to(tmp_path / "elsewhere.sh")
        (claude / "settings.json").write_text(json.dumps(_entry(RUNS)))
    elif shape == "hooks folder linked out of the project":
        claude.mkdir()
        (tmp_path / "outside-hooks").mkdir()
        (tmp_path / "outside-hooks" / "cortex-capture.sh").write_text(NOOP)
        (hooks).symlink_to(tmp_path / "outside-hooks")
        (claude / "settings.json").write_text(json.dumps(_entry(RUNS)))
    elif shape == "another event":
        hooks.mkdir(parents=True)
        (hooks / "cortex-capture.sh").write_text(NOOP)
        (claude / "settings.json").write_text(json.dumps(_entry(RUNS, "Stop")))
    elif shape == "a command that only names the script":
        hooks.mkdir(parents=True)
        (hooks / "cortex-capture.sh").write_text(NOOP)
        (claude / "settings.json").write_text(
            json.dumps(_entry('echo "$CLAUDE_PROJECT_DIR/.claude/hooks/cortex-capture.sh"'))
        )
    elif shape == "a nested command key":
        hooks.mkdir(parents=True)
        (hooks / "cortex-capture.sh").write_text(NOOP)
        (claude / "settings.json").write_text(json.dumps({"_note": {"hooks": [{"command": RUNS}]}}))
    else:
        raise AssertionError(shape)


HOSTILE = (
    "a _note string",
    "local settings naming a missing script",
    "script linked out of the project",
    "hooks folder linked out of the project",
    "another event",
    "a command that only names the script",
    "a nested command key",
)


def _user_hooks(repo: Repo, home: Path, tmp_path: Path) -> tuple[dict, dict[str, str]]:
    """A user-scope install, and the environment Claude Code gives its hooks in this project."""
    bin_path = cortex_bin(tmp_path)
    assert cortex(repo.path, "install", bin_path=bin_path).code in (0, 1)
    tools = Path(tool_path(tmp_path / "tools", (*HOOK_TOOLS, "sh", "bash", "git")))
    shutil.copy(bin_path, tools / "cortex")
    env = {
        "PATH": str(tools),
        "HOME": str(home),
        "CORTEX_HOME": os.environ["CORTEX_HOME"],
        "CLAUDE_PROJECT_DIR": str(repo.path),
        "CORTEX_NOW": "2026-08-02T18:00:00Z",
    }
    return settings(home / ".claude" / "settings.json"), env


def _fire(repo: Repo, env: dict[str, str], data: dict, event: str, payload: dict) -> None:
    body = json.dumps({"session_id": "s-1", "cwd": str(repo.path), "hook_event_name": event, **payload})
    for _, command in commands(data, event):
        done = subprocess.run(
            ["sh", "-c", command], input=body, text=True, capture_output=True, env=env, cwd=repo.path, timeout=60
        )
        assert done.returncode == 0, (command, done.stderr)


READ = {
    "tool_name": "Read",
    "tool_use_id": "t-read-1",
    "tool_input": {"file_path": "README.md"},
    "tool_response": {"type": "text"},
}


def _captured(repo: Repo, env: dict[str, str], user: dict) -> bool:
    """Start a session and make one tool call through the user's hooks only: whether it reached the spool."""
    _fire(repo, env, user, "SessionStart", {"source": "startup"})
    _fire(repo, env, user, "PostToolUse", READ)
    spool = repo.path / ".cortex" / "spool.jsonl"
    return spool.is_file() and "t-read-1" in spool.read_text()


@pytest.mark.parametrize("shape", HOSTILE)
def test_a_cloned_repository_cannot_silence_the_users_capture(
    repo: Repo, isolated_home: Path, tmp_path: Path, shape: str
) -> None:
    user, env = _user_hooks(repo, isolated_home, tmp_path)
    _project(repo, tmp_path, shape)
    assert _captured(repo, env, user), shape
    doctor = cortex(repo.path, "doctor")
    assert "stand down here" not in doctor.out, doctor.out


def test_a_project_that_wires_its_own_capture_stands_the_users_hooks_down_and_doctor_says_why(
    repo: Repo, isolated_home: Path, tmp_path: Path
) -> None:
    user, env = _user_hooks(repo, isolated_home, tmp_path)
    _project(repo, tmp_path, "real wiring")
    assert not _captured(repo, env, user)
    doctor = cortex(repo.path, "doctor")
    line = next(line for line in doctor.out.splitlines() if "stand down here" in line)
    assert "~/.claude/settings.json" in line and "cortex-capture.sh" in line and "PostToolUse" in line


def test_doctor_says_the_users_hooks_keep_capturing_beside_a_note(
    repo: Repo, isolated_home: Path, tmp_path: Path
) -> None:
    _user_hooks(repo, isolated_home, tmp_path)
    _project(repo, tmp_path, "a _note string")
    doctor = cortex(repo.path, "doctor")
    assert "keep capturing here" in doctor.out, doctor.out


@pytest.mark.parametrize(("local", "shared", "enabled"), [(False, True, False), (True, False, True)])
def test_the_local_settings_file_decides_whether_the_plugin_is_enabled(
    repo: Repo, isolated_home: Path, local: bool, shared: bool, enabled: bool
) -> None:
    """Claude Code's precedence: `.claude/settings.local.json` over `.claude/settings.json` over the user's."""
    from cortex_engine.ops.plugin import enabled_plugin

    claude = repo.path / ".claude"
    claude.mkdir()
    key = "cortex@cortex-memory-layer"
    (claude / "settings.local.json").write_text(json.dumps({"enabledPlugins": {key: local}}))
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {key: shared}}))
    found = enabled_plugin(str(repo.path), isolated_home)
    assert (found is not None) is enabled
    if found is not None:
        assert found.settings == claude / "settings.local.json"


@pytest.mark.parametrize("link", ["the settings file", "the .claude folder"])
def test_a_linked_settings_file_or_folder_never_stands_capture_down(repo: Repo, tmp_path: Path, link: str) -> None:
    """A clone may commit `.claude/settings.json` (or `.claude/` itself) as a link to a file that wires Cortex: the
    stand-down rule reads only the checkout's own regular files, so the user's capture keeps running."""
    from cortex_engine.capture.standdown import project_capture

    _project(repo, tmp_path, "real wiring")
    assert project_capture(str(repo.path)) is not None  # the real wiring stands down, read in place
    claude = repo.path / ".claude"
    if link == "the settings file":
        moved = tmp_path / "settings-elsewhere.json"
        (claude / "settings.json").rename(moved)
        (claude / "settings.json").symlink_to(moved)
    else:
        claude.rename(tmp_path / "claude-elsewhere")
        claude.symlink_to(tmp_path / "claude-elsewhere")
    assert project_capture(str(repo.path)) is None
