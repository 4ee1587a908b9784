"""`cortex completion bash|zsh|fish`: shell completion written from the command table (`cli.COMMANDS`), so every
sub-command, option and value the CLI accepts completes, with its one-line help where the shell shows one, and
nothing it does not. A path argument completes files; free text completes nothing. Standard library only.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from cortex_engine.adapters.command_table import Arg, Command

SHELLS = ("bash", "zsh", "fish")


def _words(items: Sequence[str]) -> str:
    return " ".join(items)


def _options(cmd: Command) -> list[str]:
    return ["-h", "--help", *(flag for a in cmd.args if not a.positional for flag in a.flags)]


def _bash_value(arg: Arg) -> str:
    """The bash that completes one argument's value: its values, files, directories, or nothing (free text)."""
    if arg.offered():
        return f'COMPREPLY=($(compgen -W {shlex.quote(_words(arg.offered()))} -- "$cur"))'
    if arg.complete:
        return f"_cortex_paths {'-d' if arg.complete == 'dir' else '-f'}"
    return "COMPREPLY=()"


def bash(commands: Sequence[Command], global_args: Sequence[Arg]) -> str:
    """A bash completion script (`source <(cortex completion bash)`)."""
    values: list[str] = []
    options: list[str] = []
    positionals: list[str] = []
    for cmd in commands:
        name = shlex.quote(cmd.name)
        options.append(f'    {name}) COMPREPLY=($(compgen -W {shlex.quote(_words(_options(cmd)))} -- "$cur")) ;;')
        for a in cmd.args:
            if a.positional or not a.takes_value:
                continue
            pattern = "|".join(shlex.quote(f"{cmd.name} {flag}") for flag in a.flags)
            values.append(f"    {pattern}) {_bash_value(a)}; return ;;")
        # A command with a positional completes it (values, files, or nothing for free text) until a dash is
        # typed; a command without one offers its options.
        first = next((a for a in cmd.args if a.positional), None)
        if first is not None:
            positionals.append(f"      {name}) {_bash_value(first)}; return ;;")
    listed = _words(
        [c.name for c in commands if not c.hidden] + [f for a in global_args for f in a.flags] + ["-h", "--help"]
    )
    dirs = "|".join(f for a in global_args if a.complete == "dir" for f in a.flags)
    return "\n".join(
        [
            "# cortex bash completion: source <(cortex completion bash)",
            "_cortex_paths() {",
            "  compopt -o filenames 2>/dev/null",
            '  local IFS=$\'\\n\'; COMPREPLY=($(compgen "$1" -- "$cur"))',
            "}",
            "_cortex() {",
            '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" i',
            "  COMPREPLY=()",
            "  for ((i = 1; i < COMP_CWORD; i++)); do",
            '    case "${COMP_WORDS[i]}" in',
            f"      {dirs}) ((i++)) ;;",
            "      -*) ;;",
            '      *) cmd="${COMP_WORDS[i]}"; break ;;',
            "    esac",
            "  done",
            '  if [ -z "$cmd" ]; then',
            f'    case "$prev" in {dirs}) _cortex_paths -d; return ;; esac',
            f'    COMPREPLY=($(compgen -W {shlex.quote(listed)} -- "$cur")); return',
            "  fi",
            '  case "$cmd $prev" in',
            *values,
            "  esac",
            '  if [[ "$cur" != -* ]]; then',
            '    case "$cmd" in',
            *positionals,
            "    esac",
            "  fi",
            '  case "$cmd" in',
            *options,
            "  esac",
            "}",
            "complete -o default -F _cortex cortex",
            "",
        ]
    )


def _zsh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _zsh_help(text: str) -> str:
    """Help text inside an `_arguments` `[...]` (brackets and backslashes escaped, one line)."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _zsh_action(arg: Arg) -> str:
    label = (arg.kw.get("metavar") or arg.kw.get("dest") or arg.flags[-1].lstrip("-")).lower().replace(":", "")
    if arg.offered():
        action = "(" + " ".join(v.replace(" ", "\\ ") for v in arg.offered()) + ")"
    elif arg.complete:
        action = "_files -/" if arg.complete == "dir" else "_files"
    else:
        action = " "
    return f"{label}:{action}"


def _zsh_specs(cmd: Command) -> list[str]:
    specs = []
    for a in cmd.args:
        if a.positional:
            many = a.kw.get("nargs") in ("+", "*")
            specs.append(("*:" if many else ":") + _zsh_action(a))
            continue
        repeat = "*" if a.kw.get("action") == "append" else ""
        for flag in a.flags:
            spec = f"{repeat}{flag}[{_zsh_help(a.help)}]"
            specs.append(spec + (":" + _zsh_action(a) if a.takes_value else ""))
    return specs


def zsh(commands: Sequence[Command], global_args: Sequence[Arg]) -> str:
    """A native zsh completion script, commands and options described (`source <(cortex completion zsh)`, or saved
    as `_cortex` on `$fpath`)."""
    described = [_zsh_quote(f"{c.name}:{' '.join(c.help.split())}") for c in commands if not c.hidden]
    cases = []
    for cmd in commands:
        specs = " \\\n          ".join(_zsh_quote(s) for s in _zsh_specs(cmd))
        cases.append(f"      {_zsh_quote(cmd.name)}) _arguments -s \\\n          {specs} ;;")
    globals_ = [
        _zsh_quote(
            f"{flag}[{_zsh_help(a.help or 'show the version')}]" + (":" + _zsh_action(a) if a.takes_value else "")
        )
        for a in global_args
        for flag in a.flags
    ]
    return "\n".join(
        [
            "#compdef cortex",
            "# cortex zsh completion: source <(cortex completion zsh)",
            "_cortex() {",
            '  local curcontext="$curcontext" state line',
            "  typeset -A opt_args",
            "  local -a commands",
            "  commands=(",
            *(f"    {d}" for d in described),
            "  )",
            "  _arguments -C \\",
            *(f"    {g} \\" for g in globals_),
            "    '1:command:->command' \\",
            "    '*::argument:->argument'",
            "  case $state in",
            "    command) _describe -t commands 'cortex command' commands ;;",
            "    argument)",
            "      case $line[1] in",
            *cases,
            "      esac ;;",
            "  esac",
            "}",
            'if [ "${funcstack[1]}" = "_cortex" ]; then',
            '  _cortex "$@"',
            "else",
            "  compdef _cortex cortex",
            "fi",
            "",
        ]
    )


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish(commands: Sequence[Command], global_args: Sequence[Arg]) -> str:
    """A fish completion script (`cortex completion fish > ~/.config/fish/completions/cortex.fish`)."""
    lines = ["# cortex fish completion", "complete -c cortex -f"]
    for a in global_args:
        flags = " ".join(f"-l {f[2:]}" if f.startswith("--") else f"-s {f[1:]}" for f in a.flags)
        extra = " -x -a '(__fish_complete_directories)'" if a.complete == "dir" else ""
        described = _fish_quote(a.help or "show the version")
        lines.append(f"complete -c cortex -n __fish_use_subcommand {flags}{extra} -d {described}")
    for cmd in commands:
        if not cmd.hidden:
            lines.append(
                f"complete -c cortex -n __fish_use_subcommand -a {_fish_quote(cmd.name)} -d {_fish_quote(cmd.help)}"
            )
        seen = f"-n {_fish_quote('__fish_seen_subcommand_from ' + cmd.name)}"
        for a in cmd.args:
            if a.positional:
                if a.offered():
                    lines.append(
                        f"complete -c cortex {seen} -a {_fish_quote(_words(a.offered()))} -d {_fish_quote(a.help)}"
                    )
                elif a.complete:
                    lines.append(f"complete -c cortex {seen} -F")
                continue
            flags = " ".join(f"-l {f[2:]}" if f.startswith("--") else f"-s {f[1:]}" for f in a.flags)
            extra = ""
            if a.takes_value:  # -x: a value and no files; -r -F: a path
                extra = (
                    f" -x -a {_fish_quote(_words(a.offered()))}"
                    if a.offered()
                    else " -x -a '(__fish_complete_directories)'"
                    if a.complete == "dir"
                    else " -r -F"
                    if a.complete
                    else " -x"
                )
            lines.append(f"complete -c cortex {seen} {flags}{extra} -d {_fish_quote(a.help)}")
    return "\n".join(lines) + "\n"


def script(shell: str, commands: Sequence[Command], global_args: Sequence[Arg]) -> str:
    """The completion script for a shell (one of SHELLS)."""
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](commands, global_args)
