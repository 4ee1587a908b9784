"""A person's approval is a person's act: the one gate in front of every command that lets something from outside
into memory or takes back what a person did (`cortex inbox accept|reject`, `cortex undo`, lowering
`cortex review-policy`).

Such a command runs only with a terminal on stdin and on stdout, outside a coding agent's shell, and only after the
person types a code the prompt shows, drawn at random for each prompt: an agent's shell tool has no terminal, a
pipe or a script cannot know the code in advance, and an environment variable (set, unset or blank) decides
nothing on its own. Without a terminal the command says where to run it and changes nothing. The TUI is the other
place a person reviews (a key pressed there is a person). `backup` and `restore --force` stay scriptable.
"""

from __future__ import annotations

import secrets
import sys

from cortex_engine.base import settings
from cortex_engine.base.errors import Refused

CODE_LETTERS = "abcdefghjkmnpqrstuvwxyz"
"""The confirmation code's alphabet: lowercase letters without the look-alikes i, l and o."""
CODE_LENGTH = 4


def has_terminal() -> bool:
    """Whether a person can be at this process: stdin and stdout are terminals, and no agent's shell started it."""
    try:
        return sys.stdin.isatty() and sys.stdout.isatty() and not settings.in_agent_shell()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def require_person(what: str, command: str) -> None:
    """Refuse `what` unless a person can be at this terminal (checked before anything is opened or written).

    Raises:
        Refused: stdin or stdout is not a terminal, or the process runs in a coding agent's shell (`needs_person`).
    """
    if not has_terminal():
        raise Refused(
            f"{what} is the user's call, not the agent's or a script's: run `{command}` in your own terminal "
            "(stdin and stdout a terminal), or use the TUI (`cortex tui`); nothing was changed",
            code="needs_person",
        )


def confirm(lines: list[str], action: str) -> None:
    """Show what is about to happen, then wait for the person to type the code the prompt shows.

    Anything typed before the prompt appeared is discarded; the answer is one line from stdin.

    Raises:
        Refused: the answer is not the code, or stdin ended (`not_confirmed`); nothing was changed.
    """
    code = "".join(secrets.choice(CODE_LETTERS) for _ in range(CODE_LENGTH))
    _discard_typeahead()
    out = sys.stdout
    out.write("\n".join([*lines, f"Type {code} and press Enter to {action} (anything else cancels): "]))
    out.flush()
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError, UnicodeDecodeError):
        answer = ""
    if not answer.endswith("\n"):
        out.write("\n")
    if answer.strip() != code:
        raise Refused(f"not confirmed (the code was {code}); nothing was changed", code="not_confirmed")


def _discard_typeahead() -> None:
    """Drop what was typed (or fed) before the prompt: the answer must come after the person has read it."""
    try:
        import termios

        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    except (ImportError, OSError, ValueError, AttributeError):
        pass
