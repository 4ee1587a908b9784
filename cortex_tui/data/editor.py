"""How to open a file at a line in the operator's editor (`$VISUAL`, else `$EDITOR`), as an argument list."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass

PLUS_LINE = frozenset(
    {
        "vi",
        "vim",
        "nvim",
        "gvim",
        "mvim",
        "view",
        "nano",
        "pico",
        "emacs",
        "emacsclient",
        "micro",
        "kak",
        "joe",
        "jed",
        "mg",
        "ne",
        "vis",
        "ed",
        "ex",
    }
)
"""Editors that take `+LINE FILE` (the vi convention)."""
COLON_LINE = frozenset({"subl", "sublime_text", "zed", "hx", "helix"})
"""Editors that take `FILE:LINE`."""
GOTO_LINE = frozenset({"code", "code-insiders", "codium", "cursor", "windsurf"})
"""Editors that take `-g FILE:LINE` (VS Code and its forks)."""


class EditorUnavailable(Exception):
    """No editor is configured, or the configured one cannot be run; the message says what to do."""


@dataclass(frozen=True)
class EditorCall:
    """The command to run, and whether it was told the line (unknown editors get the file only)."""

    argv: list[str]
    at_line: bool


def editor_command(path: str, line: int | None, environ: Mapping[str, str] | None = None) -> EditorCall:
    """The command that opens `path` (at `line`, when the editor is known to take one) in the operator's editor.

    Raises:
        EditorUnavailable: neither `$VISUAL` nor `$EDITOR` is set, it does not parse, or its program is not found.
    """
    env = os.environ if environ is None else environ
    setting = (env.get("VISUAL") or env.get("EDITOR") or "").strip()
    if not setting:
        raise EditorUnavailable("Set $EDITOR (for example `export EDITOR=vim`) to open files from Cortex.")
    try:
        words = shlex.split(setting)
    except ValueError as exc:
        raise EditorUnavailable(f"$EDITOR does not parse as a command ({exc}): {setting}") from exc
    if not words or shutil.which(words[0], path=env.get("PATH")) is None:
        raise EditorUnavailable(f"The editor {words[0] if words else setting!r} from $EDITOR was not found on PATH.")
    name = os.path.basename(words[0]).lower().removesuffix(".exe")
    if line is None or line < 1:
        return EditorCall([*words, path], False)
    if name in PLUS_LINE:
        return EditorCall([*words, f"+{line}", path], True)
    if name in COLON_LINE:
        return EditorCall([*words, f"{path}:{line}"], True)
    if name in GOTO_LINE:
        return EditorCall([*words, "-g", f"{path}:{line}"], True)
    return EditorCall([*words, path], False)
