"""Is Cortex wired into Claude Code here: the one rule `cortex doctor`, `cortex install` and the operator view
use. Standard library only; reads files, writes nothing.

Claude Code runs a hook when one of the settings files it merges lists it (the project's `.claude/settings.json`
and `.claude/settings.local.json`, the user's `~/.claude/settings.json`), or when a plugin enabled in one of
them (`enabledPlugins`, the most specific file that names it decides) declares it in its `hooks/hooks.json`,
at the place `~/.claude/plugins/installed_plugins.json` records for it. `survey` reads all of that once;
capture is on when something wires the PostToolUse capture script.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cortex_engine.ops import wiring

if TYPE_CHECKING:
    from cortex_engine.operator import HookInstall
    from cortex_engine.ops.plugin import EnabledPlugin

DEMO_FIX = "none in the demo"
"""The operator's fix line in the demo repository, where nothing is captured and nothing should be installed."""
CAPTURE = ("PostToolUse", "cortex-capture.sh")
"""The wiring that means "sessions here are captured": (event, wiring key)."""


@dataclass(frozen=True)
class Wired:
    """A Cortex hook Claude Code would run: where it is declared, for which event and matcher, and its command."""

    file: Path
    event: str
    matcher: object
    command: str
    key: str
    plugin_root: str | None = None
    """Set for a hook the Cortex plugin declares: what `${CLAUDE_PLUGIN_ROOT}` stands for."""


@dataclass(frozen=True)
class Survey:
    """Every Cortex wiring Claude Code would load for one project: settings files and the enabled plugin."""

    project: str
    settings: list[wiring.JsonFile]
    """The merged settings files as read (project, project local, user), readable or not."""
    hooks: list[Wired]
    """Every Cortex hook found, the plugin's first."""
    plugin: EnabledPlugin | None = None
    """The Cortex plugin as enabled in a settings file, if it is."""
    plugin_hooks: wiring.JsonFile | None = None
    """The enabled plugin's `hooks/hooks.json` as read (None when the plugin is not installed)."""
    plugin_server: dict[str, object] | None = None
    """The `cortex` server the enabled plugin declares in its `.mcp.json`."""

    @property
    def capture(self) -> Wired | None:
        """The hook that captures tool calls here, if anything wires it (the plugin's first)."""
        return next((w for w in self.hooks if (w.event, w.key) == CAPTURE), None)

    @property
    def checked(self) -> tuple[str, ...]:
        """What was looked at, for a report that nothing was found."""
        found = [str(r.path) for r in self.settings]
        if self.plugin_hooks is not None:
            found.append(str(self.plugin_hooks.path))
        return tuple(found)

    def hook_install(self) -> HookInstall:
        """The operator's summary: capture on or off, and what wires it."""
        from cortex_engine.operator import HookInstall

        capture = self.capture
        if capture is None:
            from cortex_engine.ops.demo import MARKER

            if (Path(self.project) / MARKER).is_file():
                # The seeded demo: telling a newcomer to `cortex install` here bakes a checkout's venv into ~/.claude.
                return HookInstall(False, None, self.checked, fix=DEMO_FIX, demo=True)
            return HookInstall(False, None, self.checked)
        if capture.plugin_root is not None and self.plugin is not None:
            return HookInstall(
                True, f"plugin {self.plugin.key}, enabled in {self.plugin.settings}", self.checked, via="plugin"
            )
        return HookInstall(True, str(capture.file), self.checked)


def survey(project: str, user_home: Path | None = None) -> Survey:
    """Read every place Claude Code takes Cortex hooks from, for the project whose worktree root is `project`.

    Args:
        project: the worktree root (see `wiring.project_root`).
        user_home: the user's home (default `$HOME`), whose `.claude/` folder and plugin records are read.
    """
    from cortex_engine.ops.plugin import enabled_plugin

    reads = [wiring.read_json(p) for p in wiring.settings_files(project, user_home)]
    from_settings = [
        Wired(r.path, event, matcher, command, key)
        for r in reads
        if r.data is not None
        for event, matcher, command, key in wiring.hook_entries(r.data)
        if key
    ]
    plugin = enabled_plugin(project, user_home)
    if plugin is None or plugin.install_path is None:
        return Survey(project, reads, from_settings, plugin)
    declared = wiring.read_json(plugin.install_path / "hooks" / "hooks.json")
    root = str(plugin.install_path)
    from_plugin = [
        Wired(declared.path, event, matcher, command, key, root)
        for event, matcher, command, key in wiring.hook_entries(declared.data or {})
        if key
    ]
    server = wiring.mcp_registration(wiring.read_json(plugin.install_path / ".mcp.json").data)
    return Survey(project, reads, [*from_plugin, *from_settings], plugin, declared, server)


def hooks_installed(cwd: str, user_home: Path | None = None) -> HookInstall:
    """Whether Claude Code captures sessions in the project at `cwd` (settings files or the enabled plugin)."""
    return survey(wiring.project_root(cwd), user_home).hook_install()
