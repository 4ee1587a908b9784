"""`cortex uninstall` against temporary homes: install then uninstall leaves every user file as it
was, byte for byte (install's `.bak` copies aside); what install did not write stays; the store stays unless
`--purge` is confirmed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import Repo
from .install_helpers import backup_of, cortex

USER_SETTINGS = (
    '{\n    "model": "opus",\n    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}\n}\n'
)
USER_MCP = '{"numStartups": 3, "mcpServers": {"other": {"command": "other-server"}}, "projects": {}}'


def files(*roots: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under the roots (bytes and mode), `.bak` copies and the store left out."""
    found: dict[str, tuple[bytes, int]] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in (".git", ".cortex")]
            for name in filenames:
                if not name.endswith(".bak"):
                    path = Path(dirpath, name)
                    found[str(path)] = (path.read_bytes(), path.stat().st_mode)
    return found


@pytest.mark.parametrize("scope", ["user", "project"])
def test_install_then_uninstall_leaves_every_user_file_byte_identical(
    scope: str,
    repo: Repo,
    isolated_home: Path,
    bin_path: Path,
) -> None:
    """Hand-formatted settings with the user's own hook, a ~/.claude.json with another server, a project
    .mcp.json: after install + uninstall each is byte-identical and nothing install created is left."""
    claude = isolated_home / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(USER_SETTINGS)
    (isolated_home / ".claude.json").write_text(USER_MCP)
    (repo.path / ".claude").mkdir()
    (repo.path / ".claude" / "settings.json").write_text('{"permissions": {"allow": ["Bash(make:*)"]}}')
    (repo.path / ".mcp.json").write_text('{\n\t"mcpServers": {}\n}\n')
    before = files(isolated_home, repo.path)

    done = cortex(repo.path, "install", "--scope", scope, bin_path=bin_path)
    assert done.code == 0, done.out
    assert files(isolated_home, repo.path) != before
    gone = cortex(repo.path, "uninstall", "--scope", scope, "--json", bin_path=bin_path)
    assert gone.code == 0, gone.out + gone.err
    assert files(isolated_home, repo.path) == before
    statuses = {s["name"]: s["status"] for s in gone.data()["steps"]}
    assert statuses["settings"] == "restored" and statuses["mcp"] == "restored"
    assert list(Path(gone.data()["steps"][0]["path"]).parent.glob("cortex-*")) == []
    again = cortex(repo.path, "uninstall", "--scope", scope, bin_path=bin_path)
    assert "Nothing to remove" in again.out


def test_uninstall_keeps_what_install_did_not_write(repo: Repo, isolated_home: Path, bin_path: Path) -> None:
    """An edited script, a server registered by `claude mcp add`, and the user's later settings stay."""
    assert cortex(repo.path, "install", bin_path=bin_path).code == 0
    hooks = isolated_home / ".claude" / "hooks"
    (hooks / "cortex-capture.sh").write_text((hooks / "cortex-capture.sh").read_text() + "# mine\n")
    mcp = isolated_home / ".claude.json"
    mcp.write_text(
        json.dumps({"mcpServers": {"cortex": {"type": "stdio", "command": "cortex", "args": ["serve"], "env": {}}}})
    )
    settings = isolated_home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["theme"] = "dark"
    settings.write_text(json.dumps(data))
    store = cortex(repo.path, "inject-header", "--quiet", bin_path=bin_path)
    assert store.code == 0

    gone = cortex(repo.path, "uninstall", "--json", bin_path=bin_path).data()
    steps = {s["name"]: s for s in gone["steps"]}
    assert steps["hook:cortex-capture.sh"]["status"] == "kept" and (hooks / "cortex-capture.sh").exists()
    assert not (hooks / "cortex-reflect.sh").exists()
    assert steps["mcp"]["status"] == "kept" and "claude mcp remove" in steps["mcp"]["detail"]
    assert json.loads(mcp.read_text())["mcpServers"]["cortex"]["type"] == "stdio"
    assert json.loads(settings.read_text()) == {"theme": "dark"}
    assert backup_of(isolated_home / ".claude" / "settings.json").exists()
    assert list((isolated_home / ".cortex" / "projects").iterdir()), "the store stays without --purge"


def test_purge_asks_and_takes_yes(repo: Repo, isolated_home: Path, bin_path: Path) -> None:
    """--purge without a terminal or --yes refuses and changes nothing; with --yes the store goes."""
    assert cortex(repo.path, "inject-header", "--quiet", bin_path=bin_path).code == 0
    projects = isolated_home / ".cortex" / "projects"
    refused = cortex(repo.path, "uninstall", "--purge", bin_path=bin_path)
    assert refused.code == 1 and "confirm with --yes" in refused.err and refused.err.count("\n") == 1
    assert list(projects.iterdir()) and (repo.path / ".cortex").is_dir()
    dry = cortex(repo.path, "uninstall", "--purge", "--dry-run", bin_path=bin_path)
    assert dry.code == 0 and "this repository's store" in dry.out and list(projects.iterdir())
    assert "WOULD REMOVE" in dry.out and "GONE" not in dry.out  # a dry run speaks in the conditional
    done = cortex(repo.path, "uninstall", "--purge", "--yes", bin_path=bin_path)
    assert done.code == 0, done.err
    assert list(projects.iterdir()) == [] and not (repo.path / ".cortex").exists()
