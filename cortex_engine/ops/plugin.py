"""The Claude Code plugin this repository ships (`plugin/`, listed by `.claude-plugin/marketplace.json`), and
how install and doctor recognise a user who has it enabled. Standard library only.

The plugin's files are generated from the same tables `cortex install` uses (`wiring.WIRINGS`, the hook
templates rendered with the portable `cortex` lookup), so the two set-ups cannot drift apart; a test checks
the committed files against `plugin_files()`, and `python -m cortex_engine.ops.plugin` rewrites them.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from cortex_engine.ops import wiring
from cortex_engine.ops.wiring import PLUGIN_ROOT_VAR, WIRINGS

PLUGIN_NAME = "cortex"
MARKETPLACE_NAME = "cortex-memory"
PLUGIN_DIR = "plugin"
VERSION = "0.1.0"
DESCRIPTION = (
    "Cortex: a local memory layer for Claude Code that says whether a remembered thing is still agreed, "
    "still true of the checkout, and what it cost to inject. Needs `cortex` on PATH."
)
AUTHOR = {"name": "Cortex contributors"}
MARKETPLACE_DESCRIPTION = (
    "The Cortex plugin: local, per-repository memory for Claude Code (hooks, MCP server, commands, skill)."
)
# Plugin MCP tools are not named `mcp__cortex__…` (Claude Code prefixes a plugin's servers), so the guard's
# matcher selects the memory-changing tools by their own names under any server prefix.
GUARD_MATCHER = "mcp__.*__cortex_note|mcp__.*__cortex_resolve|mcp__.*__cortex_reanchor|Bash"
INSTALLED_PLUGINS = ("plugins", "installed_plugins.json")
GUARD_SCRIPT = "cortex-guard.sh"
"""The plugin's PreToolUse guard on Bash and the file tools (bash alone, nothing started): denies the agent's shell
the commands only a person may run (accept or reject arrivals, lower the review, restore, undo, write the store
file), and the file tools a write into Cortex's home; SECURITY.md."""
GUARD_TOOLS = "Bash|Write|Edit|MultiEdit|NotebookEdit"
PLUGIN_WIRINGS: tuple[wiring.Wiring, ...] = (*WIRINGS, wiring.Wiring("PreToolUse", GUARD_TOOLS, GUARD_SCRIPT))
"""Every hook the plugin declares: `cortex install`'s wirings, and the guard."""


def _matcher(want: wiring.Wiring) -> str | None:
    return GUARD_MATCHER if want.action == "guard-memory" else want.matcher


def hooks_document() -> dict[str, object]:
    """`hooks/hooks.json`: every wiring of `cortex install` and the guard, its scripts under
    `${CLAUDE_PLUGIN_ROOT}/hooks`."""
    hooks: dict[str, list[dict[str, object]]] = {}
    for want in PLUGIN_WIRINGS:
        group: dict[str, object] = {
            "hooks": [{"type": "command", "command": want.command(f"{PLUGIN_ROOT_VAR}/hooks", wiring.PORTABLE_COMMAND)}]
        }
        matcher = _matcher(want)
        if matcher is not None:
            group = {"matcher": matcher, **group}
        hooks.setdefault(want.event, []).append(group)
    return {"hooks": hooks}


def manifest() -> dict[str, object]:
    """`.claude-plugin/plugin.json`."""
    return {
        "name": PLUGIN_NAME,
        "version": VERSION,
        "description": DESCRIPTION,
        "author": AUTHOR,
        "license": "MIT",
        "keywords": ["memory", "mcp", "hooks", "decisions"],
    }


def mcp_document() -> dict[str, object]:
    """`.mcp.json`: the server is `cortex serve` from PATH."""
    return {"mcpServers": {wiring.SERVER_NAME: {"command": wiring.PORTABLE_COMMAND, "args": ["serve"]}}}


def marketplace() -> dict[str, object]:
    """`.claude-plugin/marketplace.json` at the repository root, listing the plugin folder."""
    return {
        "name": MARKETPLACE_NAME,
        "owner": AUTHOR,
        "metadata": {"description": MARKETPLACE_DESCRIPTION},
        "plugins": [{"name": PLUGIN_NAME, "source": f"./{PLUGIN_DIR}", "description": DESCRIPTION, "version": VERSION}],
    }


def _json(data: dict[str, object]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def plugin_files() -> dict[str, bytes]:
    """Every file of the plugin and the marketplace, by path relative to the repository root."""
    files = {
        ".claude-plugin/marketplace.json": _json(marketplace()),
        f"{PLUGIN_DIR}/.claude-plugin/plugin.json": _json(manifest()),
        f"{PLUGIN_DIR}/hooks/hooks.json": _json(hooks_document()),
        f"{PLUGIN_DIR}/.mcp.json": _json(mcp_document()),
    }
    for name in (*wiring.TEMPLATES, GUARD_SCRIPT):
        files[f"{PLUGIN_DIR}/hooks/{name}"] = wiring.render(wiring.template_text(name), wiring.PORTABLE_BIN).encode(
            "utf-8"
        )
    return files


def write_plugin(root: Path) -> list[str]:
    """Write the plugin files under a checkout's root; returns the paths that changed."""
    changed = []
    for rel, data in plugin_files().items():
        path = root / rel
        if path.exists() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if rel.endswith(".sh"):
            path.chmod(0o755)
        changed.append(rel)
    return changed


# -- a user's set-up -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EnabledPlugin:
    """The Cortex plugin as a user's settings enable it, and where Claude Code installed it (if known)."""

    key: str
    settings: Path
    install_path: Path | None


def _is_ours(key: object) -> bool:
    return isinstance(key, str) and key.split("@", 1)[0] == PLUGIN_NAME


def enabled_plugin(project: str, user_home: Path | None = None) -> EnabledPlugin | None:
    """The enabled Cortex plugin for this project: `enabledPlugins` in the settings Claude Code merges (the
    most specific file that names it decides), with its install path from `~/.claude/plugins`."""
    project_settings, local_settings, user_settings = wiring.settings_files(project, user_home)
    for path in (local_settings, project_settings, user_settings):
        data = wiring.read_json(path).data
        plugins = data.get("enabledPlugins") if isinstance(data, dict) else None
        if not isinstance(plugins, dict):
            continue
        ours = [(k, v) for k, v in plugins.items() if _is_ours(k)]
        if not ours:
            continue
        enabled = [k for k, v in ours if v is True]
        if not enabled:
            return None
        return EnabledPlugin(enabled[0], path, _install_path(enabled[0], user_home))
    return None


def _install_path(key: str, user_home: Path | None = None) -> Path | None:
    """Where Claude Code installed a plugin, from `~/.claude/plugins/installed_plugins.json` (a list of
    installs per key in recent versions, a single object in older ones)."""
    data = wiring.read_json((user_home or wiring.home()).joinpath(".claude", *INSTALLED_PLUGINS)).data
    plugins = data.get("plugins") if isinstance(data, dict) else None
    entry = plugins.get(key) if isinstance(plugins, dict) else None
    for item in entry if isinstance(entry, list) else [entry]:
        path = item.get("installPath") if isinstance(item, dict) else None
        if isinstance(path, str) and path:
            return Path(path)
    return None


def main() -> int:
    """Rewrite the plugin files of the checkout this module lives in."""
    root = Path(__file__).resolve().parents[2]
    changed = write_plugin(root)
    sys.stdout.write("".join(f"wrote {rel}\n" for rel in changed) or "plugin files are current\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
