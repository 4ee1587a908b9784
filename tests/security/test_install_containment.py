"""A project-scope install writes only inside the project: a repository can commit a link anywhere on the path of
what install writes (`.claude/settings.json` → `~/.claude/settings.json`, `.claude/hooks` → elsewhere, a script →
`~/.bashrc`, a dangling link to `~/.ssh/authorized_keys`), and every one is refused, `--force` or not, dry run or
not, with a one-line error naming the link and where it points; no byte changes anywhere. The files install
replaces are kept under Cortex's home, never in a work tree."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ..conftest import Repo
from ..install_helpers import backup_of, cortex, cortex_bin


def _snapshot(*roots: Path) -> dict[str, tuple[str, bytes]]:
    """Every entry under the roots: links as their target (never followed), files as their bytes and mode."""
    found: dict[str, tuple[str, bytes]] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for name in [*dirnames, *filenames]:
                path = os.path.join(dirpath, name)
                if os.path.islink(path):
                    found[path] = ("link", os.readlink(path).encode())
                elif os.path.isfile(path):
                    with open(path, "rb") as handle:
                        found[path] = (oct(os.lstat(path).st_mode), handle.read())
                else:
                    found[path] = ("dir", b"")
    return found


SHAPES = {
    "settings.json to the user's settings": (".claude/settings.json", "home:.claude/settings.json"),
    ".claude to the user's .claude": (".claude", "home:.claude"),
    ".mcp.json to the user's .claude.json": (".mcp.json", "home:.claude.json"),
    ".claude/hooks to a folder outside": (".claude/hooks", "outside:hooks"),
    "cortex-lib.sh to ~/.bashrc": (".claude/hooks/cortex-lib.sh", "home:.bashrc"),
    "dangling capture script to authorized_keys": (".claude/hooks/cortex-capture.sh", "home:.ssh/authorized_keys"),
    "dangling .mcp.json": (".mcp.json", "outside:nothing-yet.json"),
    "link inside the repository": (".claude/settings.json", "repo:elsewhere.json"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("flags", [(), ("--force",), ("--dry-run",)], ids=["plain", "force", "dry-run"])
def test_a_link_on_the_path_of_a_project_install_is_refused_and_nothing_changes(
    repo: Repo, isolated_home: Path, tmp_path: Path, shape: str, flags: tuple[str, ...]
) -> None:
    home = isolated_home
    outside = tmp_path / "outside"
    (outside / "hooks").mkdir(parents=True)
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"theme": "dark"}\n')
    (home / ".claude.json").write_text('{"numStartups": 3}\n')
    (home / ".bashrc").write_text("export PS1='$ '\n")
    (home / ".ssh").mkdir()
    (repo.path / "elsewhere.json").write_text("{}\n")
    link, aim = SHAPES[shape]
    where, _, rel = aim.partition(":")
    target = {"home": home, "outside": outside, "repo": repo.path}[where] / rel
    at = repo.path / link
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(target)
    before = _snapshot(home, outside, repo.path)
    run = cortex(repo.path, "install", "--scope", "project", *flags, bin_path=cortex_bin(tmp_path))
    assert run.code == 1 and run.err.startswith("cortex: ") and run.err.count("\n") == 1, run.out + run.err
    assert f"{link} in the repository is a link to {target}" in run.err
    assert _snapshot(home, outside, repo.path) == before


def test_dry_run_names_the_real_target_of_a_linked_user_file(repo: Repo, isolated_home: Path, tmp_path: Path) -> None:
    """A user-scope settings file kept in a dotfiles folder (a link) is written where it points; the dry run says
    where that is, and the backup goes under Cortex's home, not into the dotfiles folder."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    real.write_text('{"theme": "dark"}\n')
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude" / "settings.json").symlink_to(real)
    bin_path = cortex_bin(tmp_path)
    dry = cortex(repo.path, "install", "--dry-run", "--json", bin_path=bin_path).data()
    action = {a["name"]: a for a in dry["actions"]}["settings"]
    assert action["real_path"] == str(real)
    assert str(real) in cortex(repo.path, "install", "--dry-run", bin_path=bin_path).out
    assert cortex(repo.path, "install", bin_path=bin_path).code in (0, 1)
    assert (isolated_home / ".claude" / "settings.json").is_symlink()
    assert json.loads(real.read_text())["theme"] == "dark" and "hooks" in json.loads(real.read_text())
    assert sorted(p.name for p in dotfiles.iterdir()) == ["claude-settings.json"]
    assert json.loads(backup_of(real).read_text()) == {"theme": "dark"}


def test_a_project_install_keeps_what_it_replaces_under_cortex_home_not_in_the_work_tree(
    repo: Repo, isolated_home: Path, tmp_path: Path
) -> None:
    """Replacing the project's own settings and an old script leaves no `.bak` in the work tree (one `git add -A`
    from being committed): the earlier bytes are under `$CORTEX_HOME/backups`, private to the user."""
    settings = repo.path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"env": {"TEAM": "x"}}\n')
    script = repo.path / ".claude" / "hooks" / "cortex-reflect.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/bash\necho an old build\n")
    run = cortex(repo.path, "install", "--scope", "project", bin_path=cortex_bin(tmp_path))
    assert "refused" not in run.out, run.out + run.err
    assert [p for p in repo.path.rglob("*.bak*") if ".git" not in p.parts] == []
    assert json.loads(backup_of(settings).read_text()) == {"env": {"TEAM": "x"}}
    assert backup_of(script).read_text() == "#!/bin/bash\necho an old build\n"
    assert oct((isolated_home / ".cortex" / "backups").stat().st_mode & 0o777) == "0o700"


def test_a_project_uninstall_never_edits_through_a_link(repo: Repo, isolated_home: Path, tmp_path: Path) -> None:
    """`cortex uninstall --scope project` holds the same boundary: a project settings file linked to the user's is
    not edited (the user's own Cortex wiring would be taken out), and the refusal names the link."""
    bin_path = cortex_bin(tmp_path)
    assert cortex(repo.path, "install", bin_path=bin_path).code in (0, 1)
    user = isolated_home / ".claude" / "settings.json"
    (repo.path / ".claude").mkdir()
    (repo.path / ".claude" / "settings.json").symlink_to(user)
    before = _snapshot(isolated_home, repo.path)
    run = cortex(repo.path, "uninstall", "--scope", "project", bin_path=bin_path)
    assert run.code == 1 and ".claude/settings.json in the repository is a link to" in run.err, run.out + run.err
    assert _snapshot(isolated_home, repo.path) == before
