"""`cortex completion bash|zsh|fish`: shell completion generated from the argument parser itself, so every
sub-command, option and fixed choice the CLI accepts completes, and nothing it does not. Standard library only.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass

SHELLS = ("bash", "zsh", "fish")


@dataclass(frozen=True)
class Command:
    """One sub-command: its help, its options (with their fixed choices) and its positional choices."""

    name: str
    help: str
    options: tuple[tuple[str, tuple[str, ...], bool, str], ...]
    """(option string, choices, takes a value, help)."""
    positional: tuple[str, ...]


def commands(parser: argparse.ArgumentParser) -> tuple[list[str], list[Command]]:
    """(global options, sub-commands) read from the parser."""
    globals_: list[str] = []
    found: list[Command] = []
    for action in parser._actions:  # argparse has no public walk over its actions
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                options = []
                positional: list[str] = []
                for sub_action in sub._actions:
                    choices = tuple(str(c) for c in (sub_action.choices or ()))
                    if sub_action.option_strings:
                        takes = sub_action.nargs != 0
                        for option in sub_action.option_strings:
                            options.append((option, choices, takes, sub_action.help or ""))
                    else:
                        positional.extend(choices)
                found.append(Command(name, helps.get(name, ""), tuple(options), tuple(positional)))
        else:
            globals_.extend(action.option_strings)
    return globals_, found


def _words(items: list[str] | tuple[str, ...]) -> str:
    return " ".join(items)


def bash(parser: argparse.ArgumentParser) -> str:
    """A bash completion script (`source <(cortex completion bash)`)."""
    globals_, cmds = commands(parser)
    cases = []
    values = []
    for cmd in cmds:
        words = [o for o, _, _, _ in cmd.options] + list(cmd.positional)
        cases.append(f"    {shlex.quote(cmd.name)}) opts={shlex.quote(_words(words))} ;;")
        for option, choices, _, _ in cmd.options:
            if choices:
                values.append(f"    {shlex.quote(cmd.name + ' ' + option)}) COMPREPLY=($(compgen -W "
                              f"{shlex.quote(_words(choices))} -- \"$cur\")); return ;;")
    names = _words([c.name for c in cmds])
    return "\n".join([
        "# cortex bash completion: source <(cortex completion bash)",
        "_cortex() {",
        '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" opts="" i',
        "  for ((i = 1; i < COMP_CWORD; i++)); do",
        '    case "${COMP_WORDS[i]}" in',
        "      -C|--cwd) ((i++)) ;;",
        "      -*) ;;",
        '      *) cmd="${COMP_WORDS[i]}"; break ;;',
        "    esac",
        "  done",
        '  if [ -z "$cmd" ]; then',
        f'    COMPREPLY=($(compgen -W {shlex.quote(names + " " + _words(globals_))} -- "$cur")); return',
        "  fi",
        '  case "$cmd $prev" in',
        *values,
        "  esac",
        '  case "$cmd" in',
        *cases,
        "  esac",
        '  COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
        "}",
        "complete -o default -F _cortex cortex",
        "",
    ])


def zsh(parser: argparse.ArgumentParser) -> str:
    """A zsh completion script: the bash one through zsh's bashcompinit (`source <(cortex completion zsh)`)."""
    return "#compdef cortex\nautoload -U +X bashcompinit && bashcompinit\n" + bash(parser)


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish(parser: argparse.ArgumentParser) -> str:
    """A fish completion script (`cortex completion fish > ~/.config/fish/completions/cortex.fish`)."""
    _, cmds = commands(parser)
    lines = ["# cortex fish completion", "complete -c cortex -f"]
    for cmd in cmds:
        lines.append(f"complete -c cortex -n __fish_use_subcommand -a {_fish_quote(cmd.name)} -d {_fish_quote(cmd.help)}")
        seen = f"-n {_fish_quote('__fish_seen_subcommand_from ' + cmd.name)}"
        for option, choices, takes, help_text in cmd.options:
            flag = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
            extra = f" -r -a {_fish_quote(_words(choices))}" if choices else (" -r -F" if takes else "")
            lines.append(f"complete -c cortex {seen} {flag}{extra} -d {_fish_quote(help_text)}")
        if cmd.positional:
            lines.append(f"complete -c cortex {seen} -a {_fish_quote(_words(cmd.positional))}")
    return "\n".join(lines) + "\n"


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    """The completion script for a shell (one of SHELLS)."""
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](parser)
