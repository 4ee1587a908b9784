"""Where the project wires Cortex itself, so a user-level or plugin wiring stands down: the one rule SessionStart
(`hookentry.project_wires_cortex`), the hook scripts (`cortex_defers` in `hooks/cortex-lib.sh`, through the mark
`engage` writes) and `cortex doctor` use. Standard library only; reads files, writes nothing.

The project wires Cortex when one of its settings files (`.claude/settings.json`, `.claude/settings.local.json`)
holds a real hook entry, `hooks.PostToolUse[].hooks[].command`, whose command runs the project's own capture script
(`$CLAUDE_PROJECT_DIR/…/cortex-capture.sh`, as `cortex install --scope project` writes it), and that script is a
regular file inside the project reached through no link. Text elsewhere in the file (a `"_note"`), another event,
a script that is missing, a link, or a path outside the project does not count: the user's capture keeps running.
"""

from __future__ import annotations

import json
import os
import shlex
import stat

from cortex_engine.base.records import record

CAPTURE_SCRIPT = "cortex-capture.sh"
PROJECT_FILES = ("settings.json", "settings.local.json")
_PROJECT_VARS = ("${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR")
_SHELLS = ("bash", "sh")
STANDDOWN = "standdown"
"""The second line of the runtime folder's `engaged` mark (`standdown=<key>`) when the project wires Cortex: the
hook scripts read it instead of parsing settings on every tool call."""


@record(frozen=True)  # not `dataclasses`: SessionStart and one-shot recall import this module
class ProjectCapture:
    """The project's own capture wiring: the settings file holding it, its command, and the script it runs."""

    settings: str
    command: str
    script: str


def _commands(data: object) -> list[str]:
    """Every PostToolUse command hook of a parsed settings object."""
    hooks = data.get("hooks") if isinstance(data, dict) else None
    groups = hooks.get("PostToolUse") if isinstance(hooks, dict) else None
    found: list[str] = []
    for group in groups if isinstance(groups, list) else []:
        entries = group.get("hooks") if isinstance(group, dict) else None
        for hook in entries if isinstance(entries, list) else []:
            if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                found.append(hook["command"])
    return found


def _linked(root: str, path: str) -> bool:
    """Whether any component of `path` below `root` is a link (or `path` leaves `root`)."""
    rel = os.path.relpath(path, root)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return True
    at = root
    for part in rel.split(os.sep):
        at = os.path.join(at, part)
        if os.path.islink(at):
            return True
    return False


def _project_script(command: str, root: str) -> str | None:
    """The project's capture script a command runs: a token naming `cortex-capture.sh` under `$CLAUDE_PROJECT_DIR`,
    expanded, when it is a regular file inside the project reached through no link."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        return None
    for index, token in enumerate(tokens):
        if token.replace("\\", "/").rsplit("/", 1)[-1] != CAPTURE_SCRIPT:
            continue
        if index and tokens[index - 1].rsplit("/", 1)[-1] not in _SHELLS:
            continue  # named, not run (`echo …/cortex-capture.sh`)
        var = next((v for v in _PROJECT_VARS if token.startswith(v + "/")), None)
        if var is None:
            continue
        path = os.path.normpath(root + token[len(var) :])
        if not _linked(root, path) and os.path.isfile(path):
            return path
    return None


def project_capture(project_dir: str | None) -> ProjectCapture | None:
    """The project's own capture wiring, or None (see the module docstring). `project_dir` is the project root
    (`$CLAUDE_PROJECT_DIR`); without an absolute one nothing stands down."""
    if not project_dir or not os.path.isabs(project_dir):
        return None
    root = os.path.realpath(project_dir)
    if os.path.islink(os.path.join(root, ".claude")):  # a checkout's own folder, never one it points at
        return None
    for name in PROJECT_FILES:
        path = os.path.join(root, ".claude", name)
        try:
            data = json.loads(_read_plain(path).decode("utf-8-sig"))
        except (OSError, ValueError, RecursionError):
            continue
        for command in _commands(data):
            script = _project_script(command, root)
            if script is not None:
                return ProjectCapture(path, command, script)
    return None


SETTINGS_MAX = 1 << 20
"""The most of a project settings file read (Claude Code's are a few KiB; a larger one is not ours to parse)."""


def _read_plain(path: str) -> bytes:
    """A regular file's bytes, never through a link (a clone may commit `.claude/settings.json` as a link to any
    file) and never blocking on a FIFO planted in its place: OSError for anything else."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(SETTINGS_MAX + 1)
    finally:
        os.close(fd)
    if len(data) > SETTINGS_MAX:
        raise OSError(f"{path}: larger than {SETTINGS_MAX} bytes")
    return data
