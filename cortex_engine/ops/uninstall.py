"""`cortex uninstall`: take out exactly what `cortex install` put in. Standard library only.

Removed: the hook scripts install wrote that are still byte for byte what it wrote (an edited script is kept
and named), every Cortex hook wiring in the scope's settings file, and the `cortex` MCP server entry when it
has the shape install writes (one registered with `claude mcp add` is left for `claude mcp remove`). A JSON
file whose remaining content equals its `.bak` (the copy install kept before its first change, under Cortex's
home: `install.first_backup`) gets the
`.bak`'s exact bytes back; a file install created and that is now empty is deleted. `.bak` copies are never
overwritten or removed. The store stays unless `--purge`, which asks first (or takes `--yes`).
"""

from __future__ import annotations

import copy
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cortex_engine.base.errors import CortexError, InvalidInput
from cortex_engine.ops import wiring
from cortex_engine.ops.install import (
    SCOPES,
    Action,
    _atomic_write,
    _json_bytes,
    _mode,
    _replace,
    _under,
    check_hooks_dir,
    check_project_targets,
    default_hooks_dir,
    first_backup,
    settings_file,
)
from cortex_engine.ops.wiring import TEMPLATES, WIRINGS

BADGES = {
    "removed": "GONE ",
    "updated": "WROTE",
    "restored": "BACK ",
    "kept": "KEPT ",
    "absent": "NONE ",
    "refused": "STOP ",
}
DRY_RUN_BADGES = {
    "removed": "WOULD REMOVE ",
    "updated": "WOULD WRITE  ",
    "restored": "WOULD RESTORE",
    "kept": "KEPT         ",
    "absent": "NONE         ",
    "refused": "WOULD STOP   ",
}
"""A dry run's report speaks in the conditional: it changed nothing."""
OUR_KEYS = {(w.event, w.key) for w in WIRINGS}


Step = Action
"""One outcome of an uninstall (removed | updated | restored | kept | absent | refused): install's own record."""


@dataclass
class UninstallResult:
    """What an uninstall run did (or, dry, would do)."""

    scope: str
    dry_run: bool
    steps: list[Step] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether anything was (or would be) removed or rewritten."""
        return any(s.status in ("removed", "updated", "restored") for s in self.steps)

    @property
    def exit_code(self) -> int:
        """1 when a file could not be handled (left untouched)."""
        return 1 if any(s.status == "refused" for s in self.steps) else 0

    @property
    def summary(self) -> str:
        """The one-line verdict."""
        if self.exit_code:
            return "Some files were refused and left untouched; fix them and re-run."
        if self.dry_run:
            return "Re-run without --dry-run to apply." if self.changed else "Nothing to remove."
        return (
            "Uninstall complete; restart Claude Code."
            if self.changed
            else "Nothing to remove — Cortex is not installed here."
        )

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape."""
        return {
            "scope": self.scope,
            "dry_run": self.dry_run,
            "steps": [s.to_dict() for s in self.steps],
            "changed": self.changed,
            "summary": self.summary,
            "exit_code": self.exit_code,
        }

    def render(self) -> str:
        """The text report."""
        lines = [f"Cortex uninstall — {self.scope} scope{' (dry run: nothing is changed)' if self.dry_run else ''}"]
        width = max((len(s.name) for s in self.steps), default=0)
        for s in self.steps:
            detail = f"  {s.detail}" if s.detail else ""
            badge = (DRY_RUN_BADGES if self.dry_run else BADGES)[s.status]
            lines.append(f"  {badge}  {s.name.ljust(width)}  {wiring.display(s.path)}{detail}")
        lines.append(self.summary)
        return "\n".join(lines)


# -- scripts ----------------------------------------------------------------------------------------


def _plan_scripts(result: UninstallResult, directory: Path, removals: list[Path]) -> None:
    for name in wiring.TEMPLATES:
        path = directory / name
        if path.is_symlink() or not path.is_file():
            continue
        try:
            text = path.read_bytes().decode("utf-8")
            ours = wiring.render_pattern(wiring.template_text(name)).fullmatch(text) is not None
        except (OSError, UnicodeDecodeError):
            ours = False
        if ours:
            result.steps.append(Step(f"hook:{name}", "removed", str(path)))
            removals.append(path)
        else:
            result.steps.append(
                Step(
                    f"hook:{name}",
                    "kept",
                    str(path),
                    "edited after install, or from another build; delete it yourself if unwanted",
                )
            )


# -- JSON files -------------------------------------------------------------------------------------


def _drop_empty(data: dict[str, object], key: str, before: object) -> None:
    """Drop a container left empty by the removal, unless the pre-install copy had it."""
    if data.get(key) in ({}, []) and not (isinstance(before, dict) and key in before):
        del data[key]


def strip_wiring(data: dict[str, object], before: dict[str, object] | None) -> int:
    """Remove every Cortex hook wiring from a settings object (in place); returns how many were removed."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    removed = 0
    before_hooks = before.get("hooks") if isinstance(before, dict) else None
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        for group in list(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            keep = [
                h
                for h in group["hooks"]
                if not (isinstance(h, dict) and (event, wiring.wiring_key(h.get("command"))) in OUR_KEYS)
            ]
            removed += len(group["hooks"]) - len(keep)
            if len(keep) != len(group["hooks"]):
                group["hooks"] = keep
                if not keep:
                    groups.remove(group)
        _drop_empty(hooks, event, before_hooks)
    _drop_empty(data, "hooks", before)
    return removed


def strip_server(data: dict[str, object], before: dict[str, object] | None) -> str | None:
    """Remove the `cortex` server entry if it is what install writes; returns why it was kept, if it was."""
    servers = data.get("mcpServers")
    if not isinstance(servers, dict):
        return None
    entry = servers.get(wiring.SERVER_NAME)
    if not isinstance(entry, dict):
        return None
    if set(entry) != {"command", "args"} or entry.get("args") != ["serve"]:
        return "registered by other means (not install's shape); remove it with `claude mcp remove cortex`"
    del servers[wiring.SERVER_NAME]
    _drop_empty(data, "mcpServers", before)
    return None


def _plan_json(
    result: UninstallResult,
    name: str,
    path: Path,
    edit: Callable[[dict[str, object], dict[str, object] | None], object],
    writes: list[tuple[Path, bytes | None]],
) -> None:
    """Plan one JSON file: rewrite it without our entries, give back its .bak bytes, or delete it."""
    read = wiring.read_json(path)
    if not read.exists:
        return
    if read.error or read.data is None:
        result.steps.append(Step(name, "refused", str(path), f"{read.error}; it was not touched"))
        return
    bak = wiring.read_json(first_backup(path))
    before = bak.data if bak.data is not None else None
    data = copy.deepcopy(read.data)
    outcome = edit(data, before)
    if isinstance(outcome, str):
        result.steps.append(Step(name, "kept", str(path), outcome))
    if data == read.data:
        if not isinstance(outcome, str):
            result.steps.append(Step(name, "absent", str(path), "no Cortex entry"))
        return
    if before is not None and data == before and bak.raw is not None:
        result.steps.append(Step(name, "restored", str(path), "back to its .bak (the copy from before install)"))
        writes.append((path, bak.raw))
    elif not data and before is None:
        result.steps.append(Step(name, "removed", str(path), "install created it and nothing else is in it"))
        writes.append((path, None))
    else:
        result.steps.append(Step(name, "updated", str(path), "Cortex entries removed; the rest is as it was"))
        writes.append((path, _json_bytes(data)))


def _write(path: Path, data: bytes | None) -> None:
    """Apply one planned change; the current bytes go to a backup under Cortex's home unless install's first
    backup of the file is there already."""
    backup = first_backup(path)
    if data is None:
        path.unlink()
        return
    if backup.exists():
        # Install's .bak holds the file from before Cortex: never replace it with an installed version.
        target = path.resolve() if path.is_symlink() else path
        _replace(target, data, _mode(target, 0o644))  # a fresh temp file: nothing planted beside it is followed
        return
    _atomic_write(path, data, _mode(path, 0o644))


# -- the store --------------------------------------------------------------------------------------


def _plan_purge(result: UninstallResult, cwd: str, project: str) -> list[Path]:
    from cortex_engine.capture.runtime import RUNTIME
    from cortex_engine.engine import describe_store

    targets = []
    store_dir = Path(describe_store(cwd).path).parent
    for path, what in (
        (store_dir, "this repository's store"),
        (Path(project) / RUNTIME, "this worktree's runtime folder"),
    ):
        if os.path.lexists(path):
            result.steps.append(Step("purge", "removed", str(path), what))
            targets.append(path)
    return targets


def _delete_tree(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)


def uninstall(
    cwd: str,
    *,
    scope: str = "user",
    hooks_dir: str | None = None,
    dry_run: bool = False,
    purge: bool = False,
    confirm: Callable[[str], bool] | None = None,
) -> UninstallResult:
    """Remove what `cortex install` added for the project at `cwd`; see the module docstring.

    Args:
        confirm: asked before `purge` deletes anything (None: refuse to purge without it).

    Raises:
        InvalidInput: an unknown scope, an unsafe hooks directory, or (project scope) a link on the path of a
            file it would change (nothing is changed).
        CortexError: `purge` without confirmation, or a write failed.
    """
    if scope not in SCOPES:
        raise InvalidInput(f"unknown --scope {scope!r}; use user or project", code="bad_scope")
    project = wiring.project_root(cwd)
    directory = check_hooks_dir(hooks_dir if hooks_dir else str(default_hooks_dir(scope, project)))
    if scope == "project":
        # The same boundary as install: a project's linked file (`.claude/settings.json` → the user's) is not
        # the project's to edit or delete.
        inside = [directory, *(directory / name for name in TEMPLATES)] if _under(directory, project) else []
        check_project_targets(project, [*inside, settings_file(scope, project), wiring.project_mcp_file(project)])
    result = UninstallResult(scope, dry_run)
    removals: list[Path] = []
    writes: list[tuple[Path, bytes | None]] = []
    _plan_scripts(result, directory, removals)
    _plan_json(result, "settings", settings_file(scope, project), strip_wiring, writes)
    mcp_file = wiring.user_mcp_file() if scope == "user" else wiring.project_mcp_file(project)
    _plan_json(result, "mcp", mcp_file, strip_server, writes)
    from cortex_engine.ops.plugin import enabled_plugin

    plugin = enabled_plugin(project)
    if plugin is not None:
        result.steps.append(
            Step(
                "plugin",
                "kept",
                str(plugin.settings),
                f"{plugin.key} is a plugin; remove it in Claude Code with `/plugin uninstall {plugin.key}`",
            )
        )
    purged = _plan_purge(result, cwd, project) if purge else []
    if purged and not dry_run:
        shown = ", ".join(wiring.display(p) for p in purged)
        if confirm is None or not confirm(f"Delete {shown}? Every note and record in it is lost."):
            raise CortexError(
                f"--purge would delete {shown}; nothing was changed — confirm with --yes", code="not_confirmed"
            )
    if dry_run:
        return result
    try:
        for path in removals:
            path.unlink()
        for path, data in writes:
            _write(path, data)
        for path in purged:
            _delete_tree(path)
    except OSError as exc:
        raise CortexError(f"could not finish uninstalling: {exc}; re-run to finish", code="write_failed") from exc
    for folder in (directory, *([Path(project) / ".claude"] if scope == "project" else [])):
        try:
            folder.rmdir()  # only when empty: a folder install created and nothing else uses
        except OSError:
            pass
    return result
