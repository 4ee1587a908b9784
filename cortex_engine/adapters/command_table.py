"""The shape of `cli.COMMANDS`, the one table of `cortex` sub-commands. Standard library only (hook paths import it).

A row says everything any face of the command line needs: its name, the function it runs, the group `cortex --help`
lists it under (or why it is hidden), its one-line help, and its arguments with the values completion offers. The
argument parser, the grouped `--help`, the shell completions and the README check are all read from the rows, so a
command cannot be parsed and yet missing from help, or listed and yet not parsed.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from typing import Any, Literal

GROUPS = ("everyday", "inspection and correction", "sharing", "setup")
"""The blocks of `cortex --help`, in order."""
HIDDEN = "hidden"
"""The group of a command `--help` does not list (hook entry points, aliases): `hidden(...)` says why."""

Completes = Literal["", "file", "dir"]
Values = tuple[str, ...] | Callable[[], Sequence[str]]


class Arg:
    """One argument: argparse's flags and keywords, plus what completion offers for its value."""

    __slots__ = ("flags", "kw", "values", "complete")

    def __init__(
        self, flags: tuple[str, ...], kw: dict[str, Any], values: Values = (), complete: Completes = ""
    ) -> None:
        """Args:
        flags: `("--kind",)`, `("-o", "--output")`, or a positional's name.
        kw: passed to `add_argument` as written.
        values: values offered but not enforced by the parser (the engine checks them and says why); a callable
            is called only when a completion script is written, so a hook never imports the stage spelling them.
        complete: `file` or `dir` when the value is a path (completion offers files, or directories).
        """
        self.flags = flags
        self.kw = kw
        self.values = values
        self.complete = complete

    @property
    def positional(self) -> bool:
        """A positional argument (no leading dash)."""
        return not self.flags[0].startswith("-")

    @property
    def takes_value(self) -> bool:
        """The option is followed by a value (a flag such as --json is not)."""
        return self.kw.get("action") not in ("store_true", "store_false", "count", "version", "help")

    @property
    def help(self) -> str:
        """Its one-line help ('' when none)."""
        text = self.kw.get("help")
        return "" if text is None or text == argparse.SUPPRESS else str(text)

    def offered(self) -> tuple[str, ...]:
        """The values completion offers: the parser's choices, else the suggested values."""
        if self.kw.get("choices"):
            return tuple(str(c) for c in self.kw["choices"])
        return tuple(self.values() if callable(self.values) else self.values)


def arg(*flags: str, values: Values = (), complete: Completes = "", **kw: Any) -> Arg:
    """An argument of a command row, written as `add_argument` would take it."""
    return Arg(flags, kw, values, complete)


def lazy(module: str, name: str) -> Callable[[], Sequence[str]]:
    """Values spelled in an engine module, read only when a completion script is written."""
    return lambda: tuple(getattr(importlib.import_module(f"cortex_engine.{module}"), name))


JSON_ARG = arg("--json", action="store_true", help="print the result as JSON")


class Command:
    """One row of the command table: build it with `command()` or `hidden()`."""

    __slots__ = ("name", "run", "group", "help", "args", "json", "why_hidden", "reads")

    def __init__(
        self,
        name: str,
        run: Callable[[argparse.Namespace], int],
        group: str,
        help: str,
        args: tuple[Arg, ...] = (),
        json: bool = True,
        why_hidden: str = "",
        reads: bool = False,
    ) -> None:
        """Refuse a row that would be missing from help, or parsed without a description.

        Args:
            name: the sub-command.
            run: the `cmd_*` function it runs.
            group: one of GROUPS, or HIDDEN.
            help: the one line `--help` and completion show (and the sub-command's own `--help` description).
            args: its arguments (--json is added unless `json` is false: a UI or a protocol has no JSON answer).
            why_hidden: for a hidden command, why a user is not shown it.
            reads: a one-shot read: where no store exists it answers as an empty store would and creates none.
        """
        if group not in (*GROUPS, HIDDEN):
            raise ValueError(f"command {name!r}: group {group!r} is not one of {GROUPS} (or use hidden())")
        if (group == HIDDEN) != bool(why_hidden):
            raise ValueError(f"command {name!r}: a hidden command says why, and only a hidden one")
        if not help.strip():
            raise ValueError(f"command {name!r}: no one-line help")
        self.name = name
        self.run = run
        self.group = group
        self.help = help
        self.args = args + ((JSON_ARG,) if json else ())
        """Its arguments, --json included."""
        self.json = json
        self.why_hidden = why_hidden
        self.reads = reads

    @property
    def hidden(self) -> bool:
        """Left out of `--help` and of the completed command names."""
        return self.group == HIDDEN

    def add_to(self, sub: Any) -> argparse.ArgumentParser:
        """Register this command on argparse's sub-parsers action (whose parser class it uses); the parsed
        arguments carry `func` (the handler) and `reads` (the handler opens no store that does not exist)."""
        parser: argparse.ArgumentParser = sub.add_parser(self.name, description=self.help)
        for a in self.args:
            parser.add_argument(*a.flags, **a.kw)
        parser.set_defaults(func=self.run, json=False, reads=self.reads)
        return parser


def command(
    name: str,
    run: Callable[[argparse.Namespace], int],
    group: str,
    help: str,
    *args: Arg,
    json: bool = True,
    reads: bool = False,
) -> Command:
    """A row `cortex --help` lists under `group` (`reads`: a one-shot read, which never creates a store)."""
    return Command(name, run, group, help, args, json, reads=reads)


def hidden(
    name: str,
    run: Callable[[argparse.Namespace], int],
    why: str,
    help: str,
    *args: Arg,
    json: bool = True,
    reads: bool = False,
) -> Command:
    """A row `cortex --help` leaves out, and why (a hook entry point, an alias)."""
    return Command(name, run, HIDDEN, help, args, json, why, reads)


def grouped_help(commands: Sequence[Command]) -> str:
    """The epilog of `cortex --help`: one block per group, each listed command with its one-line help."""
    shown = [c for c in commands if not c.hidden]
    width = max(len(c.name) for c in shown) + 2
    blocks = ["cortex COMMAND --help shows one command's options."]
    for title in GROUPS:
        rows = [f"  {c.name.ljust(width)}{c.help}" for c in shown if c.group == title]
        if rows:
            blocks.append(f"{title}:\n" + "\n".join(rows))
    return "\n\n".join(blocks)
