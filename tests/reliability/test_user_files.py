"""Files users own: `cortex install` and Claude Code's settings.json, .claude.json and the hook scripts.

Promises: an unparseable file is refused and left byte-identical; any file install changes is backed up to
`<file>.bak` first (holding exactly the previous bytes) and replaced atomically; a write that fails (a full
disk, simulated by failing the write at each file in turn, since a tmpfs cannot be mounted here) leaves every
file whole — old bytes or new, never a torn file, never a stray temp file, and says so in one `cortex:` line;
a read-only settings.json is refused and untouched; a symlinked one keeps its link (the file it points at is
written); files only Python could read (absurd nesting, a NaN) are refused like any unparseable file.

Runs install in-process (cli.main) so the failures can be injected; the suite is root-proof: read-only is a
file mode here, not an EACCES (root ignores it), which is exactly the case where install must look for itself.
"""

from __future__ import annotations

import errno
import io
import json
import os
import stat
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from cortex_engine.adapters import cli
from cortex_engine.ops import install as install_mod
from tests.conftest import Repo
from tests.install_helpers import cortex_bin, settings

USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
}


@pytest.fixture
def env(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temp home, with CORTEX_INSTALL_BIN pointing at an executable that runs this checkout."""
    monkeypatch.setenv("CORTEX_INSTALL_BIN", str(cortex_bin(tmp_path)))
    monkeypatch.setenv("CORTEX_NOW", "2026-08-02T18:00:00Z")
    return isolated_home


def run_install(repo: Repo, *extra: str) -> tuple[int, str, str]:
    """`cortex install` in this process: exit code, stdout, stderr. An escaping exception is returned as code -1."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = cli.main(["-C", str(repo.path), "install", *extra])
    except Exception as exc:  # noqa: BLE001 - the tests below say what they expect instead
        return -1, out.getvalue(), f"{type(exc).__name__}: {exc}"
    return code, out.getvalue(), err.getvalue()


def snapshot(home: Path) -> dict[str, bytes]:
    """Every regular file under the home's Claude files (content only)."""
    found = {}
    paths = [
        *home.glob(".claude.json*"),
        *home.glob(".claude.json.tmp*"),
        *home.glob("..claude.json.tmp-*"),
        *((home / ".claude").rglob("*") if (home / ".claude").exists() else []),
    ]
    for path in paths:
        if path.is_file() and not path.is_symlink():
            found[str(path.relative_to(home))] = path.read_bytes()
    return found


def write_settings(home: Path, data: object | bytes) -> Path:
    target = home / ".claude" / "settings.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data if isinstance(data, bytes) else (json.dumps(data, indent=4) + "\n").encode())
    return target


UNPARSEABLE = {
    "truncated": b'{"model": "opus", "hooks": {',
    "a list at the top": b'["not", "an", "object"]',
    "binary": b"\x00\xff\xfe\x80 settings",
    "comments (JSONC)": b'{\n  // my model\n  "model": "opus"\n}\n',
    "hooks of the wrong shape": b'{"hooks": ["Stop"]}\n',
    "an event of the wrong shape": b'{"hooks": {"Stop": {"command": "x"}}}\n',
}


@pytest.mark.parametrize("name", UNPARSEABLE)
def test_an_unparseable_settings_file_is_refused_and_left_byte_identical(env: Path, repo: Repo, name: str) -> None:
    """Exit 1, a STOP line naming the file and saying it was not touched; the bytes and the mode are unchanged;
    no .bak (nothing was changed)."""
    target = write_settings(env, UNPARSEABLE[name])
    target.chmod(0o640)
    code, out, err = run_install(repo)
    assert code == 1, (out, err)
    stop = [line for line in out.splitlines() if line.strip().startswith("STOP") and "settings" in line]
    assert len(stop) == 1 and "not touched" in stop[0]
    assert target.read_bytes() == UNPARSEABLE[name] and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert not target.with_name("settings.json.bak").exists() and not install_mod.first_backup(target).exists()


def test_every_changed_file_is_backed_up_first_with_its_exact_previous_bytes(env: Path, repo: Repo) -> None:
    """A backup (under Cortex's home) for each file install changes, byte-identical to what was there; the user's
    keys and hooks survive the merge; files install creates get no .bak."""
    target = write_settings(env, USER_SETTINGS)
    claude_json = env / ".claude.json"
    claude_json.write_text('{"numStartups": 7, "mcpServers": {"other": {"command": "x"}}}')
    script = env / ".claude" / "hooks" / "cortex-capture.sh"
    script.parent.mkdir(parents=True)
    script.write_text(
        "#!/usr/bin/env bash\n# cortex-hook-template: 0000000000000000\nexit 0\n"
    )  # another build's script
    before = snapshot(env)
    code, out, err = run_install(repo)
    assert code == 0, (out, err)
    after = snapshot(env)
    changed = sorted(p for p in before if after.get(p) != before[p])
    assert changed == [".claude.json", ".claude/hooks/cortex-capture.sh", ".claude/settings.json"]
    assert {p: install_mod.first_backup(env / p).read_bytes() for p in changed} == {p: before[p] for p in changed}
    merged = settings(target)
    assert merged["model"] == "opus" and merged["permissions"] == USER_SETTINGS["permissions"]
    assert {"type": "command", "command": "notify-send done"} in [
        h for g in merged["hooks"]["Stop"] for h in g["hooks"]
    ]
    created = sorted(p for p in after if p not in before and not p.endswith(".bak"))
    assert created and not any(f"{p}.bak" in after for p in created)


TARGETS = ["settings.json", ".claude.json", "cortex-capture.sh", "settings.json.bak"]


@pytest.mark.parametrize("failing", TARGETS)
def test_a_write_that_fails_leaves_every_file_whole(
    env: Path, repo: Repo, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """The disk fills up while install writes `failing` (its write raises ENOSPC): every file is either its old
    bytes or its complete new bytes, the failed file keeps its old bytes, and no temp file is left behind."""
    write_settings(env, USER_SETTINGS)
    (env / ".claude.json").write_text('{"numStartups": 7}')
    before = snapshot(env)
    real_replace = install_mod._replace

    def full_disk(path: Path, data: bytes, mode: int) -> None:
        if path.name == failing:
            tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
            tmp.write_bytes(data[: len(data) // 2])  # what a full disk leaves: half a temp file ...
            try:
                raise OSError(errno.ENOSPC, "No space left on device", str(tmp))
            finally:
                tmp.unlink()  # ... which install's own cleanup removes (checked below with the real one too)
        real_replace(path, data, mode)

    monkeypatch.setattr(install_mod, "_replace", full_disk)
    code, out, err = run_install(repo)
    assert code != 0
    after = snapshot(env)
    monkeypatch.setattr(install_mod, "_replace", real_replace)
    clean_code, _, clean_err = run_install(repo)  # the same install with a disk that has room: what "new" means
    complete = snapshot(env)
    assert clean_code == 0, clean_err
    torn = {p: len(b) for p, b in after.items() if b != before.get(p) and b != complete.get(p)}
    assert torn == {}
    name = {
        "settings.json": ".claude/settings.json",
        ".claude.json": ".claude.json",
        "cortex-capture.sh": ".claude/hooks/cortex-capture.sh",
        "settings.json.bak": ".claude/settings.json",
    }[failing]
    assert after.get(name) == before.get(name)
    assert [p for p in after if ".tmp-" in p] == []


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to tell which file an fsync is for")
def test_a_real_failed_write_removes_its_temp_file(env: Path, repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through install's own `_replace`: with everything else current, only settings.json needs writing, and the
    disk fills up as its new bytes are synced (fsync raises ENOSPC). Its old bytes stay, whole; the .bak holds
    them too; no temp file is left."""
    target = write_settings(env, USER_SETTINGS)
    assert run_install(repo)[0] == 0
    target.write_text(json.dumps(USER_SETTINGS, indent=4) + "\n")  # the user removed Cortex's hooks again
    before = target.read_bytes()
    real_fsync = os.fsync

    def no_space(fd: int) -> None:
        name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        if name == "settings.json" or name.startswith(".settings.json.tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(install_mod.os, "fsync", no_space)
    code, _, _ = run_install(repo)
    assert code != 0
    assert target.read_bytes() == before
    assert install_mod.first_backup(target).read_bytes() == before
    assert [p.name for p in (env / ".claude").rglob("*") if ".tmp-" in p.name] == []


def test_a_failed_write_is_one_clear_line(env: Path, repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    write_settings(env, USER_SETTINGS)

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(install_mod.os, "fsync", no_space)
    code, out, err = run_install(repo)
    assert (code, err.count("\n")) == (1, 1) and err.startswith("cortex: ") and "No space left" in err, err


def test_a_read_only_settings_file_is_refused_and_untouched(env: Path, repo: Repo) -> None:
    target = write_settings(env, USER_SETTINGS)
    target.chmod(0o444)
    before = target.read_bytes()
    code, out, _ = run_install(repo)
    assert code == 1 and any(line.strip().startswith("STOP") and "settings" in line for line in out.splitlines())
    assert target.read_bytes() == before and not install_mod.first_backup(target).exists()


def test_a_read_only_settings_file_keeps_its_mode(env: Path, repo: Repo) -> None:
    """A refused read-only settings.json keeps its bytes and its mode; the scripts are still installed."""
    target = write_settings(env, USER_SETTINGS)
    target.chmod(0o444)
    run_install(repo)
    assert stat.S_IMODE(target.stat().st_mode) == 0o444 and settings(target)["model"] == "opus"
    assert (env / ".claude" / "hooks" / "cortex-capture.sh").is_file()


def test_a_symlinked_settings_file_keeps_its_link(env: Path, repo: Repo, tmp_path: Path) -> None:
    dotfile = tmp_path / "dotfiles" / "claude-settings.json"
    dotfile.parent.mkdir()
    dotfile.write_text('{"model": "opus"}\n')
    link = env / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfile)
    run_install(repo)
    assert link.is_symlink() and "hooks" in dotfile.read_text()


def test_a_symlinked_settings_file_loses_nothing(env: Path, repo: Repo, tmp_path: Path) -> None:
    """What holds today for a symlinked settings.json: the file it points at is untouched and its content is
    whole in .bak and in the merged result."""
    dotfile = tmp_path / "dotfiles" / "claude-settings.json"
    dotfile.parent.mkdir()
    dotfile.write_text('{"model": "opus"}\n')
    link = env / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfile)
    code, out, err = run_install(repo)
    assert code == 0, (out, err)
    assert install_mod.first_backup(link).read_text() == '{"model": "opus"}\n'
    assert settings(link)["model"] == "opus" and settings(dotfile)["model"] == "opus"


@pytest.mark.parametrize("body", [b"[" * 100_000 + b"]" * 100_000, b'{"model": NaN}'], ids=["deep nesting", "NaN"])
def test_settings_only_python_can_read_are_refused(env: Path, repo: Repo, body: bytes) -> None:
    target = write_settings(env, body)
    code, out, err = run_install(repo)
    assert code == 1 and any(line.strip().startswith("STOP") for line in out.splitlines()), (code, err)
    assert target.read_bytes() == body
