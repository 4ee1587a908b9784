"""`cortex install` never overwrites a backup: not the user's own `.bak`, not one an earlier install made; its own go
under Cortex's home, never beside the file."""

from __future__ import annotations

import json
from pathlib import Path

from ..conftest import Repo
from ..install_helpers import backup_of, cortex, cortex_bin, settings


def test_existing_backups_are_kept_and_the_next_free_name_is_used(
    repo: Repo, isolated_home: Path, tmp_path: Path
) -> None:
    """The user's `settings.json.bak` and `.claude.json.bak` (and a `.bak.1`) survive byte for byte; the copy
    install makes of each file it changes goes under Cortex's home, never beside it; a second change numbers on."""
    home = isolated_home
    bin_path = cortex_bin(tmp_path)
    user_settings = home / ".claude" / "settings.json"
    user_settings.parent.mkdir(parents=True)
    user_settings.write_text(json.dumps({"model": "opus"}))
    claude_json = home / ".claude.json"
    claude_json.write_text(json.dumps({"numStartups": 3}))
    own = {
        home / ".claude" / "settings.json.bak": b"my own settings backup\n",
        home / ".claude" / "settings.json.bak.1": b"and an older one\n",
        home / ".claude.json.bak": b"my own claude.json backup\n",
    }
    for path, data in own.items():
        path.write_bytes(data)

    run = cortex(repo.path, "install", bin_path=bin_path)
    assert run.code == 0, run.out + run.err
    assert {path: path.read_bytes() for path in own} == own
    assert settings(backup_of(user_settings)) == {"model": "opus"}
    assert settings(backup_of(claude_json)) == {"numStartups": 3}
    assert sorted(p.name for p in home.rglob("*.bak*") if ".cortex" not in p.parts) == sorted(p.name for p in own)

    user_settings.write_text(json.dumps({"model": "sonnet"}))  # the user edits the file and Cortex's hooks go
    assert cortex(repo.path, "install", bin_path=bin_path).code == 0
    assert settings(backup_of(user_settings, 1)) == {"model": "sonnet"}
    assert settings(backup_of(user_settings)) == {"model": "opus"}
    assert {path: path.read_bytes() for path in own} == own
