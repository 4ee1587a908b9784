"""`cortex doctor`'s checks of Claude Code's wiring: settings files, the plugin, hooks and their scripts, the MCP
server.

Read-only, like every doctor check; binaries are located on PATH, never executed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cortex_engine.ops import wiring
from cortex_engine.ops.presence import Survey, Wired
from cortex_engine.ops.wiring import WIRINGS, Wiring

if TYPE_CHECKING:
    from cortex_engine.ops.doctor import Report

FIX_INSTALL = "run `cortex install`"
FIX_PATH = (
    "put `cortex` on PATH on this machine (`pipx install <this repository>` or `uv tool install <this "
    "repository>`); the project's hooks and server look it up there"
)


def check_settings(report: Report, found: Survey) -> None:
    """The `settings` check, on the merged settings files the survey read."""
    reads = found.settings
    bad = [r for r in reads if r.error]
    present = [r for r in reads if r.data is not None]
    if bad:
        report.add(
            "settings",
            "fail",
            "; ".join(f"{wiring.display(r.path)}: {r.error}" for r in bad),
            f"fix the JSON in {', '.join(wiring.display(r.path) for r in bad)} (Claude Code cannot read it either)",
        )
    elif not present:
        report.add(
            "settings",
            "fail",
            "no Claude Code settings file: " + ", ".join(wiring.display(r.path) for r in reads),
            FIX_INSTALL,
        )
    else:
        report.add("settings", "pass", "read " + ", ".join(wiring.display(r.path) for r in present))


def check_plugin(report: Report, found: Survey) -> None:
    """The `plugin` check: the Cortex plugin enabled in a settings file, installed, with readable hooks."""
    plugin = found.plugin
    if plugin is None:
        return
    where = wiring.display(plugin.settings)
    if plugin.install_path is None:
        report.add(
            "plugin",
            "fail",
            f"{plugin.key} is enabled in {where} but Claude Code has not installed it",
            f"run `/plugin install {plugin.key}` in Claude Code",
        )
        return
    hooks = found.plugin_hooks
    if hooks is None or hooks.data is None:
        report.add(
            "plugin",
            "fail",
            f"{plugin.key} (enabled in {where}) has no readable hooks/hooks.json at "
            f"{wiring.display(plugin.install_path)}" + (f": {hooks.error}" if hooks and hooks.error else ""),
            f"reinstall it: `/plugin uninstall {plugin.key}` then `/plugin install {plugin.key}`",
        )
        return
    report.add("plugin", "pass", f"{plugin.key} enabled in {where}, installed at {wiring.display(plugin.install_path)}")


def check_duplicates(report: Report, wired: list[Wired]) -> None:
    """Warn when the plugin and a settings file both wire a hook: Claude Code would run it twice."""
    from_plugin = {(w.event, w.key) for w in wired if w.plugin_root is not None}
    twice = sorted(
        {
            f"{w.event} {w.key} ({wiring.display(w.file)})"
            for w in wired
            if w.plugin_root is None and (w.event, w.key) in from_plugin
        }
    )
    if twice:
        report.add(
            "duplicates",
            "warn",
            "wired by the plugin and again by a settings file: " + ", ".join(twice),
            "run `cortex uninstall` to remove the settings-file installation (the plugin keeps working)",
        )


def _found(wired: list[Wired], want: Wiring) -> list[Wired]:
    return [w for w in wired if w.event == want.event and w.key == want.key]


def check_wiring(report: Report, wired: list[Wired]) -> None:
    """hook-wiring (fail when any is missing) and the matcher checks (warn when a tool was lost)."""
    missing = [want.label for want in WIRINGS if not _found(wired, want)]
    if missing:
        report.add(
            "hook-wiring",
            "fail",
            f"{len(missing)} of {len(WIRINGS)} wirings missing: {', '.join(missing)}",
            FIX_INSTALL,
        )
    else:
        report.add("hook-wiring", "pass", f"all {len(WIRINGS)} wirings present")
    groups = {
        "capture-matcher": [w for w in WIRINGS if w.script == "cortex-capture.sh"],
        "reflect-matcher": [w for w in WIRINGS if w.action == "reflect-pre"],
        "dispatch-matcher": [w for w in WIRINGS if w.action == "dispatch-pre"],
        "guard-matcher": [w for w in WIRINGS if w.action == "guard-memory"],
    }
    for name, wants in groups.items():
        problems: list[str] = []
        for want in wants:
            found = _found(wired, want)
            if not found:
                problems.append(f"{want.event} not wired")
            elif not any(want.covered_by(w.matcher) for w in found):
                lost = sorted({t for w in found for t in want.missing_tools(w.matcher)})
                problems.append(f"{want.event} matcher {found[0].matcher!r} omits {', '.join(lost)}")
        if problems:
            report.add(name, "warn", "; ".join(problems), f"{FIX_INSTALL} (it rewrites the matcher in place)")
        else:
            used = sorted({str(w.matcher) for want in wants for w in _found(wired, want) if want.covered_by(w.matcher)})
            report.add(name, "pass", f"{' and '.join(w.event for w in wants)} select {' / '.join(used)}")


def script_of(w: Wired, project: str) -> Path | None:
    """The script file a wiring runs, with `$CLAUDE_PROJECT_DIR` / `${CLAUDE_PLUGIN_ROOT}` filled in."""
    raw = wiring.script_path(w.command)
    return Path(wiring.expand_vars(raw, project, w.plugin_root)) if raw else None


def _script_paths(wired: list[Wired], hooks_dir: Path, project: str) -> list[Path]:
    """The hook scripts to inspect: every script a wiring runs, plus each one's library, else the hooks dir's."""
    paths: list[Path] = []
    for w in wired:
        path = script_of(w, project)
        if path is not None:
            for candidate in (path, path.parent / wiring.LIBRARY):
                if candidate not in paths:
                    paths.append(candidate)
    if not paths:
        paths = [hooks_dir / name for name in wiring.TEMPLATES]
    return paths


def check_scripts(report: Report, wired: list[Wired], hooks_dir: Path, project: str, *, explicit_dir: bool) -> None:
    """hook-scripts, hook-substitution, hook-currency and hook-interpreter."""
    paths = _script_paths([] if explicit_dir else wired, hooks_dir, project)
    texts: dict[Path, str] = {}
    missing: list[str] = []
    for path in paths:
        try:
            texts[path] = path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            missing.append(str(path))
    if missing:
        report.add("hook-scripts", "fail", "missing: " + ", ".join(wiring.display(m) for m in missing), FIX_INSTALL)
    else:
        report.add("hook-scripts", "pass", f"{len(paths)} scripts present")

    unsubstituted = [str(p) for p, t in texts.items() if "__CORTEX_" in t]
    if not texts:
        report.add("hook-substitution", "fail", "no installed hook script to inspect", FIX_INSTALL)
    elif unsubstituted:
        report.add(
            "hook-substitution",
            "fail",
            "placeholders left unsubstituted in " + ", ".join(wiring.display(p) for p in unsubstituted),
            FIX_INSTALL,
        )
    else:
        report.add("hook-substitution", "pass", "paths baked in, no placeholder left")

    stale: list[str] = []
    for path, text in texts.items():
        name = path.name
        try:
            want = wiring.template_digest(wiring.template_text(name))
        except OSError:
            report.add(
                "hook-currency",
                "fail",
                f"this build's template {name} is missing from {wiring.templates_dir()}",
                "reinstall Cortex from a complete checkout",
            )
            break
        stamp = wiring.stamp_of(text)
        if stamp != want:
            stale.append(f"{name} ({'no stamp' if not stamp else f'stamp {stamp}'}; this build ships {want})")
    else:
        if stale:
            report.add("hook-currency", "fail", "out of date: " + ", ".join(stale), FIX_INSTALL)
        elif texts:
            report.add("hook-currency", "pass", "every installed script matches this build's templates")
        else:
            report.add("hook-currency", "fail", "no installed hook script to compare", FIX_INSTALL)

    problems: list[str] = []
    found: list[str] = []
    on_path = False
    for w in wired:
        tokens = wiring.command_tokens(w.command)
        first = tokens[0] if tokens else ""
        if first and not _executable(first):
            problems.append(f"{first} (first word of the {w.event} command) is not found")
            on_path = on_path or "/" not in first
        elif first:
            found.append(first)
    portable = [
        p.name for p, t in texts.items() if p.name in wiring.SCRIPTS and wiring.baked_bin(t) == wiring.PORTABLE_BIN
    ]
    if portable and shutil.which(wiring.PORTABLE_COMMAND) is None:
        problems.append(f"`cortex` is not on PATH, and {', '.join(portable)} look it up there")
        on_path = True
    elif portable:
        found.append(str(shutil.which(wiring.PORTABLE_COMMAND)))
    for path, text in texts.items():
        baked = wiring.baked_bin(text)
        if baked == wiring.PORTABLE_BIN:
            continue
        if path.name in wiring.SCRIPTS and baked and "__CORTEX_" not in baked and not _executable(baked):
            problems.append(f"{baked} (baked into {path.name}) is not an executable file")
        elif baked and "__CORTEX_" not in baked:
            found.append(baked)
    problems = list(dict.fromkeys(problems))
    if problems:
        report.add(
            "hook-interpreter",
            "fail",
            "; ".join(problems),
            FIX_PATH
            if on_path
            else f"{FIX_INSTALL} from the Cortex you want the hooks to call (it bakes in that path)",
        )
    elif found:
        report.add("hook-interpreter", "pass", ", ".join(dict.fromkeys(found)) + " found")
    else:
        report.add("hook-interpreter", "warn", "no wired command or installed script names an interpreter", FIX_INSTALL)


def _executable(word: str) -> bool:
    """A command word resolves: an executable file by path, or a name on PATH."""
    if "/" in word:
        return os.path.isfile(word) and os.access(word, os.X_OK)
    return shutil.which(word) is not None


def check_mcp(
    report: Report, project: str, reads: list[wiring.JsonFile], plugin_server: dict[str, Any] | None = None
) -> None:
    if plugin_server is not None:
        command = plugin_server.get("command")
        if isinstance(command, str) and _executable(command):
            report.add("mcp", "pass", f"the cortex plugin: {command} serve")
        else:
            report.add(
                "mcp",
                "fail",
                f"the cortex plugin's server runs {command}, which is not found on this machine",
                FIX_PATH,
            )
        return
    sources: list[tuple[wiring.JsonFile, str | None]] = [(r, None) for r in reads]
    project_file = wiring.read_json(wiring.project_mcp_file(project))
    user_file = wiring.read_json(wiring.user_mcp_file())
    sources += [(project_file, None), (user_file, project)]
    malformed = [f"{wiring.display(f.path)}: {f.error}" for f in (project_file, user_file) if f.error]
    for read, proj in sources:
        entry = wiring.mcp_registration(read.data, proj)
        if entry is None:
            continue
        command = entry.get("command")
        where = wiring.display(read.path)
        if not isinstance(command, str) or not command:
            report.add("mcp", "fail", f"the cortex server in {where} has no command", FIX_INSTALL)
        elif not _executable(command):
            report.add(
                "mcp",
                "fail",
                f"the cortex server in {where} runs {command}, which is not found",
                FIX_PATH
                if "/" not in command
                else f"fix its command in {where} (or delete the entry and {FIX_INSTALL})",
            )
        else:
            args = found if isinstance(found := entry.get("args"), list) else []
            detail = f"{where}: {command} {' '.join(str(a) for a in args)}".rstrip()
            if malformed:
                report.add(
                    "mcp", "warn", f"{detail}; unreadable: {'; '.join(malformed)}", "fix the JSON in those files"
                )
            else:
                report.add("mcp", "pass", detail)
        return
    detail = "cortex is not registered as an MCP server (settings files, .mcp.json, ~/.claude.json)"
    if malformed:
        detail += f"; unreadable: {'; '.join(malformed)}"
    report.add("mcp", "fail", detail, f"{FIX_INSTALL}, or `claude mcp add --scope user cortex -- cortex serve`")


def check_standdown(report: Report, found: Survey) -> None:
    """The `stand-down` check: say, in words, whether the user's (or the plugin's) Cortex hooks stand down in this
    project and why (`capture.standdown`, the rule the hooks and SessionStart follow). Only where it matters: a
    project that wires Cortex itself, or whose settings name the capture script without wiring it."""
    from cortex_engine.capture.standdown import CAPTURE_SCRIPT, project_capture

    project = found.project
    own = project_capture(project)
    outside = sorted(
        {
            "the plugin" if w.plugin_root is not None else wiring.display(w.file)
            for w in found.hooks
            if (w.plugin_root is not None or not str(w.file).startswith(project.rstrip(os.sep) + os.sep))
        }
    )
    theirs = f"your Cortex hooks in {' and '.join(outside)}" if outside else "user-level and plugin Cortex hooks"
    if own is not None:
        report.add(
            "stand-down",
            "pass",
            f"{theirs} {'' if outside else 'would '}stand down here: {wiring.display(own.settings)} has a "
            f"PostToolUse hook running the project's own capture script {wiring.display(own.script)}, so each tool "
            "call is captured once, by the project's copy (decided when a session starts)",
        )
        return
    named = [r for r in found.settings[:2] if r.raw is not None and CAPTURE_SCRIPT.encode() in r.raw]
    if named:
        report.add(
            "stand-down",
            "pass",
            f"{', '.join(wiring.display(r.path) for r in named)} names {CAPTURE_SCRIPT} but holds no PostToolUse hook "
            f"running an existing copy inside the project, so {theirs} keep capturing here",
        )
