"""What `cortex install` writes into Claude Code and `cortex doctor` checks: hook templates, their stamps,
the hook wiring table, and the settings files Claude Code merges. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from cortex_engine.base import settings

SCRIPTS = (
    "cortex-capture.sh",
    "cortex-end-of-turn.sh",
    "cortex-reflect.sh",
    "cortex-subagent.sh",
    "cortex-substitute.sh",
)
LIBRARY = "cortex-lib.sh"
TEMPLATES = (*SCRIPTS, LIBRARY)
BIN_PLACEHOLDER = "__CORTEX_BIN__"
STAMP_PLACEHOLDER = "__CORTEX_TEMPLATE_ID__"
STAMP_LINE = re.compile(r"^# cortex-hook-template: (\S*)[ \t]*$", re.MULTILINE)
BAKED_BIN = re.compile(r'^CORTEX_BIN="\$\{CORTEX_BIN:-([^\n"]*)\}"[ \t]*$', re.MULTILINE)
INSTALL_BIN_ENV = settings.INSTALL_BIN
SERVER_NAME = "cortex"
# What portable scripts (project scope, the plugin) call: `cortex` as found on PATH when the hook runs, so a
# committed script works on every teammate's machine; a hook finding none exits 0 and does nothing.
PORTABLE_BIN = "$(command -v cortex)"
PORTABLE_COMMAND = "cortex"
PROJECT_DIR_VAR = "$CLAUDE_PROJECT_DIR"
PLUGIN_ROOT_VAR = "${CLAUDE_PLUGIN_ROOT}"

# Characters the shell would expand (or that end the quoting) inside `bash "<dir>/script"` and
# `CORTEX_BIN="${CORTEX_BIN:-<bin>}"`: a path holding one would resolve somewhere else while looking right.
UNSAFE_DIR_CHARS = ("$", "`", "\\", '"', "\n")
UNSAFE_BIN_CHARS = (*UNSAFE_DIR_CHARS, "}")

CAPTURE_TOOLS = "Read|Edit|Write|MultiEdit|NotebookEdit|Bash|Grep|Agent"


@dataclass(frozen=True)
class Wiring:
    """One hook wiring: an event, its matcher (None = every tool) and the command it runs."""

    event: str
    matcher: str | None
    script: str | None
    action: str | None = None

    @property
    def key(self) -> str:
        """What identifies this wiring inside a command: the script and its action, or `inject-header`."""
        if self.script is None:
            return "inject-header"
        return f"{self.script} {self.action}" if self.action else self.script

    @property
    def label(self) -> str:
        """`<event> <script>[ <action>]` for reports."""
        return f"{self.event} {self.key}"

    def command(self, hooks_dir: str, cortex_bin: str) -> str:
        """The command text written into settings."""
        if self.script is None:
            # The project's own wiring says so: a user-level or plugin SessionStart stands down beside it.
            flag = " --from-project" if hooks_dir.startswith(PROJECT_DIR_VAR) else ""
            if cortex_bin == PORTABLE_COMMAND:
                # Found on PATH when the hook runs: a machine without it gets a silent no-op, like the scripts.
                return f"{PORTABLE_COMMAND} inject-header --quiet{flag} 2>/dev/null || true"
            return f'"{cortex_bin}" inject-header --quiet{flag}'
        tail = f" {self.action}" if self.action else ""
        return f'bash "{hooks_dir}/{self.script}"{tail}'

    def covered_by(self, matcher: object) -> bool:
        """Whether a settings matcher selects every tool this wiring needs (absent, empty or `*` = all)."""
        if matcher in (None, "", "*"):
            return True
        if self.matcher is None or not isinstance(matcher, str):
            return False
        return all(matcher_selects(matcher, tool) for tool in self.matcher.split("|"))

    def missing_tools(self, matcher: object) -> list[str]:
        """The tools of this wiring that a settings matcher does not select."""
        if self.matcher is None or matcher in (None, "", "*"):
            return []
        if not isinstance(matcher, str):
            return self.matcher.split("|")
        return [tool for tool in self.matcher.split("|") if not matcher_selects(matcher, tool)]


WIRINGS: tuple[Wiring, ...] = (
    Wiring("SessionStart", None, None),
    Wiring("PostToolUse", CAPTURE_TOOLS, "cortex-capture.sh"),
    Wiring("PostToolUseFailure", CAPTURE_TOOLS, "cortex-capture.sh"),
    Wiring("PreToolUse", "Edit|Write|MultiEdit", "cortex-reflect.sh", "reflect-pre"),
    Wiring("PreToolUse", "Read", "cortex-substitute.sh"),
    Wiring("PreToolUse", "Agent", "cortex-subagent.sh", "dispatch-pre"),
    Wiring(
        "PreToolUse",
        "mcp__cortex__cortex_note|mcp__cortex__cortex_resolve|mcp__cortex__cortex_reanchor|Bash",
        "cortex-subagent.sh",
        "guard-memory",
    ),
    Wiring("UserPromptSubmit", None, "cortex-reflect.sh", "reflect-prompt"),
    Wiring("SubagentStart", None, "cortex-subagent.sh", "subagent-start"),
    Wiring("SubagentStop", None, "cortex-subagent.sh", "subagent-stop"),
    Wiring("Stop", None, "cortex-end-of-turn.sh"),
)

DEFAULT_ACTION = {"cortex-reflect.sh": "reflect-prompt"}


def matcher_selects(matcher: str, tool: str) -> bool:
    """Claude Code matchers are regular expressions over the tool name (`Edit|Write`); a bad one is a list."""
    try:
        return re.fullmatch(matcher, tool) is not None
    except re.error:
        return tool in matcher.split("|")


def command_tokens(command: str) -> list[str]:
    """A settings command split as the shell would (whitespace when it does not parse)."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def wiring_key(command: object) -> str | None:
    """Which Cortex wiring a settings command is, if any: `<script>[ <action>]` or `inject-header`."""
    if not isinstance(command, str):
        return None
    tokens = command_tokens(command)
    for i, token in enumerate(tokens):
        name = token.replace("\\", "/").rsplit("/", 1)[-1]
        if name in SCRIPTS:
            action = tokens[i + 1] if i + 1 < len(tokens) else DEFAULT_ACTION.get(name)
            return f"{name} {action}" if action else name
    if "inject-header" in tokens:
        return "inject-header"
    return None


def expand_vars(text: str, project: str, plugin_root: str | None = None) -> str:
    """A command path with Claude Code's variables filled in as the hook would see them."""
    for name, value in (("CLAUDE_PROJECT_DIR", project), ("CLAUDE_PLUGIN_ROOT", plugin_root)):
        if value is not None:
            text = text.replace("${" + name + "}", value).replace("$" + name, value)
    return text


def script_path(command: str) -> str | None:
    """The hook script a Cortex command runs (the token naming one of our scripts)."""
    for token in command_tokens(command):
        if token.replace("\\", "/").rsplit("/", 1)[-1] in SCRIPTS:
            return token
    return None


# -- templates ---------------------------------------------------------------------------------


def templates_dir() -> Path:
    """Where the shell templates ship: `hooks/` beside the package in a checkout, else the installed data dir."""
    beside = Path(__file__).resolve().parents[2] / "hooks"
    if (beside / "cortex-capture.sh").is_file():
        return beside
    return Path(sys.prefix) / "share" / "cortex-memory-layer" / "hooks"


def template_text(name: str) -> str:
    """A template's text with CRLF normalized to LF.

    Raises:
        OSError: the template is not where this build ships it.
    """
    return (templates_dir() / name).read_bytes().decode("utf-8").replace("\r\n", "\n")


def template_digest(text: str) -> str:
    """The stamp: the first 16 hex digits of sha256 of the template text (CRLF → LF)."""
    return hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()[:16]


def render(text: str, cortex_bin: str) -> str:
    """A template rendered: its own digest stamped in, the cortex executable baked in; LF only."""
    return text.replace(STAMP_PLACEHOLDER, template_digest(text)).replace(BIN_PLACEHOLDER, cortex_bin)


def render_pattern(text: str) -> re.Pattern[str]:
    """Matches exactly what `render` produces from `text` with any cortex path (repeats must agree)."""
    stamped = text.replace(STAMP_PLACEHOLDER, template_digest(text))
    parts = stamped.split(BIN_PLACEHOLDER)
    pattern = re.escape(parts[0])
    for n, part in enumerate(parts[1:]):
        pattern += (r'(?P<bin>[^\n"]+?)' if n == 0 else "(?P=bin)") + re.escape(part)
    return re.compile(pattern, re.DOTALL)


def stamp_of(text: str) -> str | None:
    """The template stamp an installed script carries, if any."""
    found = STAMP_LINE.search(text)
    return found.group(1) if found else None


def baked_bin(text: str) -> str | None:
    """The cortex executable an installed script calls when `$CORTEX_BIN` is unset."""
    found = BAKED_BIN.search(text)
    return found.group(1) if found else None


# -- paths ---------------------------------------------------------------------------------------


def home() -> Path:
    """The user's home (`$HOME`), where Claude Code keeps `~/.claude` and `~/.claude.json`."""
    return Path(os.path.expanduser("~"))


def default_hooks_dir() -> Path:
    """`~/.claude/hooks`."""
    return home() / ".claude" / "hooks"


def project_root(cwd: str) -> str:
    """The worktree root of `cwd` (or `cwd` itself outside git)."""
    from cortex_engine.scope.identity import locate_git

    real = os.path.realpath(cwd)
    location = locate_git(real)
    return location.worktree if location is not None else real


def settings_files(project: str, user_home: Path | None = None) -> list[Path]:
    """The settings files Claude Code merges: the project's, its local ones, and the user's."""
    return [
        Path(project) / ".claude" / "settings.json",
        Path(project) / ".claude" / "settings.local.json",
        (user_home or home()) / ".claude" / "settings.json",
    ]


def user_mcp_file() -> Path:
    """`~/.claude.json`: where Claude Code keeps user-scope (and per-project local) MCP servers."""
    return home() / ".claude.json"


def project_mcp_file(project: str) -> Path:
    """`<project>/.mcp.json`: project-scope MCP servers."""
    return Path(project) / ".mcp.json"


def cortex_executable() -> str:
    """The absolute path of the `cortex` command to bake in: `$CORTEX_INSTALL_BIN`, the running console
    script, `cortex` on PATH, or the running program, in that order."""
    override = settings.install_bin()
    if override:
        return os.path.abspath(os.path.expanduser(override))
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "cortex" and os.path.isfile(argv0):
        return os.path.abspath(argv0)
    found = shutil.which("cortex")
    if found:
        return os.path.abspath(found)
    return os.path.abspath(argv0)


# -- reading JSON files --------------------------------------------------------------------------


@dataclass(frozen=True)
class JsonFile:
    """A JSON settings file as read: absent, unparseable (with why), or its data."""

    path: Path
    exists: bool
    data: dict[str, object] | None = None
    error: str | None = None
    raw: bytes | None = None


def _reject_constant(name: str) -> object:
    """NaN and Infinity parse in Python but not in Claude Code's JSON.parse: such a file is not valid JSON."""
    raise ValueError(f"{name} is not JSON")


def read_json(path: Path) -> JsonFile:
    """Read a JSON object file without ever raising; an unparseable or non-object file carries `error`."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return JsonFile(path, False)
    except OSError as exc:
        return JsonFile(path, True, error=f"cannot read it ({exc.strerror or exc.__class__.__name__})")
    try:
        text = raw.decode("utf-8-sig")
        data = json.loads(text, parse_constant=_reject_constant) if text.strip() else {}
    except UnicodeDecodeError:
        return JsonFile(path, True, error="it is not UTF-8 text", raw=raw)
    except ValueError as exc:
        return JsonFile(path, True, error=f"not valid JSON ({exc})", raw=raw)
    except RecursionError:
        return JsonFile(path, True, error="not valid JSON (nested too deeply to read)", raw=raw)
    if not isinstance(data, dict):
        return JsonFile(path, True, error="its top level is not a JSON object", raw=raw)
    return JsonFile(path, True, data=data, raw=raw)


def hook_entries(data: dict[str, object]) -> list[tuple[str, object, str, str]]:
    """Every command hook in a settings object: (event, group matcher, command, wiring key or '')."""
    found: list[tuple[str, object, str, str]] = []
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            for hook in group["hooks"]:
                if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                    found.append((str(event), group.get("matcher"), hook["command"], wiring_key(hook["command"]) or ""))
    return found


def mcp_registration(data: dict[str, object] | None, project: str | None = None) -> dict[str, object] | None:
    """The `cortex` MCP server entry of a settings/.mcp.json/~/.claude.json object (top level, or the
    project's own block in ~/.claude.json when `project` is given)."""
    if not isinstance(data, dict):
        return None
    servers = data.get("mcpServers")
    if isinstance(servers, dict) and isinstance(entry := servers.get(SERVER_NAME), dict):
        return entry
    if project is not None:
        projects = data.get("projects")
        block = projects.get(project) if isinstance(projects, dict) else None
        servers = block.get("mcpServers") if isinstance(block, dict) else None
        if isinstance(servers, dict) and isinstance(entry := servers.get(SERVER_NAME), dict):
            return entry
    return None


def display(path: Path | str) -> str:
    """A path for humans: `~/…` under the home directory."""
    text = str(path)
    base = str(home())
    if base not in ("", "/") and (text == base or text.startswith(base + os.sep)):
        return "~" + text[len(base) :]
    return text
