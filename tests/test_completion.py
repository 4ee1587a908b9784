"""`cortex completion bash|zsh|fish`: generated from the parser, and working in a real bash."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def script(shell: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", "completion", shell],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def complete(source: str, *words: str, cwd: Path | None = None) -> list[str]:
    """What bash offers for the command line `words` (the last word is the one being completed)."""
    line = " ".join(f"'{w}'" for w in words)
    body = f'{source}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _cortex\nprintf "%s\\n" "${{COMPREPLY[@]}}"\n'
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", body], capture_output=True, text=True, timeout=30, cwd=cwd
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_bash_completes_commands_options_and_choices() -> None:
    """Sub-commands, a sub-command's options, an option's fixed choices, and a positional's choices."""
    source = script("bash")
    assert {"export", "import", "uninstall", "completion"} <= set(complete(source, "cortex", ""))
    assert complete(source, "cortex", "un") == ["undo", "uninstall"]
    assert {"--format", "--scope", "--output"} <= set(complete(source, "cortex", "export", "--"))
    assert complete(source, "cortex", "export", "--format", "") == ["jsonl", "markdown"]
    assert complete(source, "cortex", "-C", "/tmp", "completion", "f") == ["fish"]
    assert complete(source, "cortex", "uninstall", "--p") == ["--purge"]


def test_bash_completes_paths_and_suggested_values(tmp_path: Path) -> None:
    """`cortex import` offers files (it inserted `-`), and `note --kind` / `install --scope` their values."""
    source = script("bash")
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "notes.jsonl").write_text("")
    assert sorted(complete(source, "cortex", "import", "", cwd=work)) == ["docs", "notes.jsonl"]
    assert complete(source, "cortex", "import", "no", cwd=work) == ["notes.jsonl"]
    assert complete(source, "cortex", "export", "-o", "n", cwd=work) == ["notes.jsonl"]
    assert complete(source, "cortex", "-C", "", cwd=work) == ["docs"]
    assert complete(source, "cortex", "note", "--kind", "") == ["insight", "decision", "intent", "blocker", "focus"]
    assert complete(source, "cortex", "install", "--scope", "") == ["user", "project"]
    assert complete(source, "cortex", "import", "--s") == ["--scope"]
    assert complete(source, "cortex", "recall", "--scope", "") == []  # free text: nothing made up


def test_every_listed_command_completes_with_its_help() -> None:
    """Every command `--help` lists completes in bash, and carries its one-line help in fish and zsh."""
    from cortex_engine.adapters.cli import COMMANDS

    listed = [c for c in COMMANDS if not c.hidden]
    assert {c.name for c in listed} <= set(complete(script("bash"), "cortex", ""))
    fish, zsh = script("fish"), script("zsh")
    for cmd in listed:
        assert f"-a '{cmd.name}' -d '{cmd.help}'" in fish.replace("\\'", "'"), cmd.name
        assert f"'{cmd.name}:{cmd.help}'" in zsh.replace("'\\''", "'"), cmd.name
    assert " -d ''" not in fish  # no option of any command goes undescribed
    assert "-l kind -x -a 'insight decision intent blocker focus' -d" in fish


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_parse(shell: str) -> None:
    """Each script names every sub-command, and parses in its shell where that shell is installed."""
    text = script(shell)
    assert "uninstall" in text and "export" in text and "jsonl markdown" in text
    if shutil.which(shell):
        done = subprocess.run([shell, "-n"], input=text, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr


def test_unknown_shell_is_a_usage_error() -> None:
    """A shell Cortex has no script for: exit 2 with one `cortex:` line."""
    done = subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", "completion", "tcsh"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2 and done.stderr.startswith("cortex: ") and done.stderr.count("\n") == 1


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed here")
def test_fish_completes_with_descriptions_paths_and_values(tmp_path: Path) -> None:
    """In a real fish: a command comes with its help (descriptions were empty), `import` offers files, an option's
    values come without files, and -C offers directories only."""
    source = tmp_path / "cortex.fish"
    source.write_text(script("fish"))
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "notes.jsonl").write_text("")

    def offered(line: str) -> list[str]:
        done = subprocess.run(
            ["fish", "--no-config", "-c", f"source {source}; complete -C '{line}'"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    from cortex_engine.adapters.cli import COMMAND_BY_NAME

    assert offered("cortex imp") == [f"import\t{COMMAND_BY_NAME['import'].help}"]
    assert sorted(offered("cortex import ")) == ["docs/", "notes.jsonl"]
    assert [line.split("\t")[0] for line in offered("cortex install --scope ")] == ["project", "user"]
    assert [line.split("\t")[0] for line in offered("cortex -C ")] == ["docs/"]
