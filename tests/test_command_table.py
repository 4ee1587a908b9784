"""One command table: the parser, `cortex --help`, completion and the README all follow `COMMANDS`.

The checks walk the argument parser itself, not a list kept beside it: a command registered any other way is caught.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from cortex_engine.adapters import cli
from cortex_engine.adapters.command_table import GROUPS, command, hidden

ROOT = Path(__file__).resolve().parent.parent


def parsed_commands(parser: argparse.ArgumentParser) -> set[str]:
    """Every sub-command the parser accepts (argparse has no public walk over its actions)."""
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(sub.choices)


def help_listing() -> dict[str, str]:
    """The commands `cortex --help` lists, each with the group it is listed under."""
    found: dict[str, str] = {}
    group = ""
    for line in cli.build_parser().format_help().splitlines():
        if line.endswith(":") and not line.startswith(" "):
            group = line[:-1]
        elif group in GROUPS and line.startswith("  ") and line.split():
            found[line.split()[0]] = group
    return found


def test_help_lists_every_command_the_parser_accepts_but_the_hidden() -> None:
    """Ten user commands were parsed but missing from `--help`; hidden ones must say why."""
    accepted = parsed_commands(cli.build_parser())
    rows = cli.COMMAND_BY_NAME
    deliberately_hidden = {name for name in accepted if name in rows and rows[name].hidden}
    assert deliberately_hidden == {
        "header",
        "inject-header",
        "flush-spool",
        "hook",
        "reflect",
        "evaluate",
        "note-resolve",
        "install-hooks",
    }
    assert all(rows[name].why_hidden for name in deliberately_hidden)
    listed = help_listing()
    assert set(listed) == accepted - deliberately_hidden
    assert {name: listed[name] for name in ("export", "import", "promote", "uninstall", "completion", "reanchor")} == {
        "export": "sharing",
        "import": "sharing",
        "promote": "sharing",
        "uninstall": "setup",
        "completion": "setup",
        "reanchor": "inspection and correction",
    }


def test_every_listed_command_is_in_the_readme() -> None:
    """A user reading the README finds every command `--help` lists."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [name for name in help_listing() if not re.search(rf"cortex {re.escape(name)}\b", readme)]
    assert missing == []


@pytest.mark.parametrize("name", ["inject-header", "flush-spool", "hook", "recall"])
def test_a_run_builds_only_its_own_command(name: str) -> None:
    """Hook paths stay fast: `build_parser(only=…)` registers the one sub-command being run."""
    assert parsed_commands(cli.build_parser(name)) == {name}


def test_a_row_without_a_group_or_a_reason_is_refused() -> None:
    """Registering a command wrongly fails at once, not by vanishing from help."""
    with pytest.raises(ValueError, match="group"):
        command("x", cli.cmd_status, "misc", "a command")
    with pytest.raises(ValueError, match="says why"):
        hidden("x", cli.cmd_status, "", "a command")
    with pytest.raises(ValueError, match="help"):
        command("x", cli.cmd_status, GROUPS[0], " ")
