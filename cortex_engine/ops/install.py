"""`cortex install`: render the hook scripts, merge Claude Code's hook wiring, register the MCP server,
then run doctor. Standard library only.

Idempotent by construction: every file is compared with what would be written and left untouched
(bytes, mtime, formatting) when nothing differs, so a second run changes nothing and says so.
Whatever it does change is backed up first, under Cortex's own home (`<CORTEX_HOME>/backups/<real path>.bak`, or
`.bak.1`, `.bak.2`, … when that name is taken: a backup is never overwritten, and never lands in a work tree), and
lands via a temp file and a rename. A project-scope install writes only inside the project: a link anywhere on a
target's path from the repository's root down (dangling included) is refused, `--force` or not (`link_in_project`).
A report names each file's real path when a link leads elsewhere (a user's dotfiles).
"""

from __future__ import annotations

import copy
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cortex_engine.base.errors import CortexError, InvalidInput
from cortex_engine.ops import wiring
from cortex_engine.ops.wiring import WIRINGS, Wiring

if TYPE_CHECKING:
    from cortex_engine.ops.doctor import Report  # imported at run time only when install diagnoses what it wrote

SCOPES = ("user", "project")
BADGES = {"created": "NEW  ", "updated": "WROTE", "unchanged": "SAME ", "refused": "STOP ", "warning": "NOTE "}
DRY_RUN_BADGES = {
    "created": "WOULD CREATE",
    "updated": "WOULD WRITE ",
    "unchanged": "SAME        ",
    "refused": "WOULD STOP  ",
    "warning": "NOTE        ",
}
"""A dry run's report speaks in the conditional: it wrote nothing."""
NOTHING_CHANGED = "Nothing changed — this installation is already current."


@dataclass
class Action:
    """One outcome: created | updated | unchanged | refused | warning, with what and why."""

    name: str
    status: str
    path: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        """The `--json` shape."""
        real = os.path.realpath(self.path) if self.path else self.path
        return {"name": self.name, "status": self.status, "path": self.path, "real_path": real, "detail": self.detail}


@dataclass
class Plan:
    """What install would write (path, bytes, mode), which modes it would fix, and the actions it reports."""

    actions: list[Action] = field(default_factory=list)
    writes: list[tuple[Path, bytes, int]] = field(default_factory=list)
    chmods: list[Path] = field(default_factory=list)

    def add(self, action: Action) -> Action:
        """Record an action."""
        self.actions.append(action)
        return action


@dataclass
class InstallResult:
    """What an install run did (or, dry, would do), and the doctor's verdict on the result."""

    scope: str
    dry_run: bool
    hooks_dir: str
    cortex_bin: str
    project: str
    actions: list[Action]
    diagnostic: Report | None = None

    @property
    def refused(self) -> list[Action]:
        """Actions that were refused."""
        return [a for a in self.actions if a.status == "refused"]

    @property
    def changed(self) -> bool:
        """Whether anything was (or would be) written."""
        return any(a.status in ("created", "updated") for a in self.actions)

    @property
    def summary(self) -> str:
        """The one-line verdict."""
        if self.refused:
            names = ", ".join(a.name for a in self.refused)
            return (
                f"{len(self.refused)} action(s) refused ({names}); everything else was applied."
                if not self.dry_run
                else f"{len(self.refused)} action(s) would be refused ({names})."
            )
        if self.dry_run:
            return (
                "Re-run without --dry-run to apply."
                if self.changed
                else "Nothing would change — this installation is already current."
            )
        return "Install complete." if self.changed else NOTHING_CHANGED

    @property
    def exit_code(self) -> int:
        """1 on any refusal or a failing diagnosis (the fresh-project case excepted, see doctor)."""
        if self.refused:
            return 1
        return self.diagnostic.exit_code if self.diagnostic is not None else 0

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape: the result with the diagnostic embedded (null for a dry run)."""
        diagnostic = self.diagnostic.to_dict() if self.diagnostic is not None else None
        return {
            "scope": self.scope,
            "dry_run": self.dry_run,
            "hooks_dir": self.hooks_dir,
            "cortex_bin": self.cortex_bin,
            "project": self.project,
            "actions": [a.to_dict() for a in self.actions],
            "changed": self.changed,
            "summary": self.summary,
            "exit_code": self.exit_code,
            "diagnostic": diagnostic,
        }

    def render(self) -> str:
        """The text report (without the diagnostic)."""
        width = max(len(a.name) for a in self.actions)
        lines = [
            f"Cortex install — {self.scope} scope{' (dry run: nothing is written)' if self.dry_run else ''}",
            f"Hooks directory: {self.hooks_dir}",
        ]
        for action in self.actions:
            detail = f"  {action.detail}" if action.detail else ""
            badge = (DRY_RUN_BADGES if self.dry_run else BADGES)[action.status]
            real = os.path.realpath(action.path) if action.path else action.path
            shown = wiring.display(action.path) + (f" (→ {wiring.display(real)})" if real != action.path else "")
            lines.append(f"  {badge}  {action.name.ljust(width)}  {shown}{detail}")
        lines.append(self.summary)
        return "\n".join(lines)


# -- hook scripts ----------------------------------------------------------------------------------


def _plan_script(plan: Plan, name: str, hooks_dir: Path, cortex_bin: str, force: bool) -> None:
    """Decide what to do with one hook script: create, leave, replace (backed up), or refuse an edited one."""
    path = hooks_dir / name
    label = f"hook:{name}"
    try:
        text = wiring.template_text(name)
    except OSError as exc:
        raise CortexError(
            f"this build's hook template {name} is missing from {wiring.templates_dir()} ({exc.strerror}); "
            "reinstall Cortex from a complete checkout",
            code="missing_template",
        ) from exc
    rendered = wiring.render(text, cortex_bin).encode("utf-8")
    try:
        existing = path.read_bytes()
    except FileNotFoundError:
        plan.add(Action(label, "created", str(path)))
        plan.writes.append((path, rendered, 0o755))
        return
    if existing == rendered:
        if not os.access(path, os.X_OK) or (path.stat().st_mode & 0o777) != 0o755:
            plan.add(Action(label, "updated", str(path), "made executable (mode 755)"))
            plan.chmods.append(path)
        else:
            plan.add(Action(label, "unchanged", str(path)))
        return
    try:
        current = existing.decode("utf-8")
    except UnicodeDecodeError:
        current = None
    stamp = wiring.stamp_of(current) if current is not None else None
    backup = wiring.display(_backup_path(path))
    if stamp == wiring.template_digest(text):
        if current is not None and wiring.render_pattern(text).fullmatch(current):
            plan.add(Action(label, "updated", str(path), f"paths changed; previous copy kept as {backup}"))
        elif force:
            plan.add(
                Action(label, "updated", str(path), f"replaced your edited copy (--force); it is kept as {backup}")
            )
        else:
            plan.add(
                Action(
                    label,
                    "refused",
                    str(path),
                    "this script was edited after install; re-run with --force "
                    f"to replace it (your copy is then kept as {backup})",
                )
            )
            return
    else:
        why = f"stamp {stamp}" if stamp else "no stamp"
        plan.add(
            Action(
                label,
                "updated",
                str(path),
                f"replaced a script from another build ({why}); previous copy kept as {backup}",
            )
        )
    plan.writes.append((path, rendered, 0o755))


# -- settings --------------------------------------------------------------------------------------


def _json_bytes(data: dict[str, object]) -> bytes:
    """Two-space JSON with a trailing newline (how Cortex writes every settings file)."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _provided_elsewhere(target: Path, project: str) -> dict[tuple[str, str], Path]:
    """Wirings another merged settings file already provides: (event, key) → that file."""
    provided: dict[tuple[str, str], Path] = {}
    for other in wiring.settings_files(project):
        if os.path.abspath(other) == os.path.abspath(target):
            continue
        read = wiring.read_json(other)
        if read.data is None:
            continue
        for event, _, _, key in wiring.hook_entries(read.data):
            if key:
                provided.setdefault((event, key), other)
    return provided


def _hook_groups(data: dict[str, object], event: str, *, create: bool) -> list[object] | None:
    """The list of matcher groups for an event (created when asked).

    Raises:
        InvalidInput: `hooks` or the event's entry is not the shape Claude Code reads.
    """
    hooks = data.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        raise InvalidInput('"hooks" is not a JSON object')
    groups = hooks.get(event)
    if groups is None:
        if not create:
            return None
        groups = hooks[event] = []
    if not isinstance(groups, list):
        raise InvalidInput(f'"hooks.{event}" is not a list')
    return groups


def _set_matcher(group: dict[str, object], want: Wiring) -> None:
    if want.matcher is None:
        group.pop("matcher", None)
    else:
        group["matcher"] = want.matcher


def merge_wirings(
    data: dict[str, object], hooks_dir: str, cortex_bin: str, elsewhere: dict[tuple[str, str], Path]
) -> tuple[list[str], list[str]]:
    """Bring `data` (a parsed settings object, edited in place) to the full wiring.

    A wiring already present is repaired where it stands (its command rewritten, its matcher restored);
    a missing one is appended unless another merged settings file provides it, because Claude Code would
    run both. Returns (what changed, the wirings left to another file).

    Raises:
        InvalidInput: the settings object has a `hooks` entry of the wrong shape.
    """
    changes: list[str] = []
    left: list[str] = []
    for want in WIRINGS:
        command = want.command(hooks_dir, cortex_bin)
        groups = _hook_groups(data, want.event, create=False) or []
        found = False
        for group in list(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            for hook in list(group["hooks"]):
                if not isinstance(hook, dict) or wiring.wiring_key(hook.get("command")) != want.key:
                    continue
                found = True
                if hook.get("command") != command or hook.get("type") != "command":
                    hook["type"], hook["command"] = "command", command
                    changes.append(f"repaired the command of {want.label}")
                if want.covered_by(group.get("matcher")):
                    continue
                if len(group["hooks"]) == 1:
                    _set_matcher(group, want)
                else:
                    # The group is shared with other hooks: move ours out rather than change what theirs match.
                    group["hooks"].remove(hook)
                    moved: dict[str, object] = {"hooks": [hook]}
                    _set_matcher(moved, want)
                    groups.append(moved)
                changes.append(f"repaired the matcher of {want.label}")
        if found:
            continue
        if (want.event, want.key) in elsewhere:
            left.append(f"{want.label} ({wiring.display(elsewhere[(want.event, want.key)])})")
            continue
        group = {"hooks": [{"type": "command", "command": command}]}
        if want.matcher is not None:
            group = {"matcher": want.matcher, **group}
        target_groups = _hook_groups(data, want.event, create=True)
        assert target_groups is not None
        target_groups.append(group)
        changes.append(f"added {want.label}")
    return changes, left


def _plan_settings(
    plan: Plan, target: Path, project: str, hooks_dir: str, cortex_bin: str, *, whole: bool = False
) -> dict[str, object] | None:
    """Plan the settings merge; returns the merged object (None when refused).

    `whole` (project scope) writes every wiring whatever other files provide: the project's file is what every
    teammate gets, and a user-level wiring stands down beside it when the hooks run (`hooks/cortex-lib.sh`).
    """
    read = wiring.read_json(target)
    if read.error:
        plan.add(
            Action("settings", "refused", str(target), f"{read.error}; fix the file and re-run (it was not touched)")
        )
        return None
    if read.exists and not _writable(target):
        plan.add(
            Action(
                "settings",
                "refused",
                str(target),
                "it is read-only; make it writable (chmod u+w) and re-run, or add the wiring yourself "
                "(it was not touched)",
            )
        )
        return None
    data = copy.deepcopy(read.data) if read.data is not None else {}
    try:
        changes, left = merge_wirings(
            data, hooks_dir, cortex_bin, {} if whole else _provided_elsewhere(target, project)
        )
    except InvalidInput as exc:
        plan.add(
            Action("settings", "refused", str(target), f"{exc.message}; fix the file and re-run (it was not touched)")
        )
        return None
    note = f"not duplicated, already wired in another settings file: {', '.join(left)}" if left else ""
    if not changes:
        plan.add(Action("settings", "unchanged", str(target), note or f"all {len(WIRINGS)} wirings present"))
        return data
    detail = "; ".join([*_summarize(changes), *([note] if note else [])])
    plan.add(Action("settings", "updated" if read.exists else "created", str(target), detail))
    plan.writes.append((target, _json_bytes(data), _mode(target, 0o644)))
    return data


def _summarize(changes: list[str]) -> list[str]:
    """Collapse 'added X' lines into one when there are many."""
    added = [c[len("added ") :] for c in changes if c.startswith("added ")]
    rest = [c for c in changes if not c.startswith("added ")]
    if len(added) > 3:
        return [f"added {len(added)} wirings", *rest]
    return [*(f"added {a}" for a in added), *rest]


def _mode(path: Path, default: int) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return default


# -- MCP registration ------------------------------------------------------------------------------


def _plan_mcp(
    plan: Plan,
    scope: str,
    project: str,
    cortex_bin: str,
    settings_target: Path,
    merged_settings: dict[str, object] | None,
) -> None:
    """Register `cortex serve` unless a `cortex` server is registered already (it may point at a checkout
    the user prefers). Project scope looks only at the project's `.mcp.json`: it is what teammates get, and
    Claude Code runs one server per name (in that project the project's entry takes precedence over a user one)."""
    user_file = wiring.user_mcp_file()
    target = user_file if scope == "user" else wiring.project_mcp_file(project)
    sources: list[tuple[Path, str | None]] = [(target, None)]
    if scope == "user":
        sources += [(user_file, None), (wiring.home() / ".claude" / "settings.json", None)]
    for path, proj in sources:
        data = (
            merged_settings if path == settings_target and merged_settings is not None else wiring.read_json(path).data
        )
        if wiring.mcp_registration(data, proj) is not None:
            plan.add(
                Action(
                    "mcp",
                    "unchanged",
                    str(target),
                    f"a cortex server is already registered in {wiring.display(path)}; left as it is",
                )
            )
            return
    read = wiring.read_json(target)
    if read.error:
        plan.add(Action("mcp", "refused", str(target), f"{read.error}; fix the file and re-run (it was not touched)"))
        return
    data = copy.deepcopy(read.data) if read.data is not None else {}
    servers = data.get("mcpServers")
    if servers is None:
        servers = data["mcpServers"] = {}
    if not isinstance(servers, dict):
        plan.add(Action("mcp", "refused", str(target), '"mcpServers" is not a JSON object; fix the file and re-run'))
        return
    servers[wiring.SERVER_NAME] = {"command": cortex_bin, "args": ["serve"]}
    plan.add(
        Action("mcp", "updated" if read.exists else "created", str(target), f"registered cortex ({cortex_bin} serve)")
    )
    plan.writes.append((target, _json_bytes(data), _mode(target, 0o600 if target == user_file else 0o644)))


# -- applying --------------------------------------------------------------------------------------


def _writable(path: Path) -> bool:
    """Whether the user lets this file be written (its owner-write bit, as root ignores permissions)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return True
    return bool(mode & 0o200) and os.access(path, os.W_OK)


def backups_dir() -> Path:
    """Where install keeps the files it replaces: `<CORTEX_HOME>/backups`, never beside them (a `.bak` in a work
    tree is one `git add -A` from being committed, and a project's settings may hold what its owner would not)."""
    from cortex_engine.scope.identity import cortex_home

    return cortex_home() / "backups"


def first_backup(path: Path) -> Path:
    """The copy of `path` install kept before its first change: `<backups>/<real path>.bak`, or, from an install
    before backups moved under Cortex's home, `<file>.bak` beside it (read, never written any more)."""
    real = Path(os.path.realpath(path))
    mirrored = backups_dir() / real.relative_to(real.anchor)
    kept = mirrored.with_name(mirrored.name + ".bak")
    beside = path.with_name(path.name + ".bak")
    return beside if not os.path.lexists(kept) and beside.is_file() and not beside.is_symlink() else kept


def _backup_path(path: Path) -> Path:
    """The first free backup name for `path` under `backups_dir()`, which mirrors the file's real absolute path:
    `<backups>/<real path>.bak`, then `.bak.1`, `.bak.2`, …

    An existing backup may be the only copy of an earlier version: it is never replaced.
    """
    real = Path(os.path.realpath(path))
    mirrored = backups_dir() / real.relative_to(real.anchor)
    backup = mirrored.with_name(mirrored.name + ".bak")
    number = 0
    while os.path.lexists(backup):
        number += 1
        backup = mirrored.with_name(f"{mirrored.name}.bak.{number}")
    return backup


def _atomic_write(path: Path, data: bytes, mode: int) -> None:
    """Write via a temp file and a rename; the old bytes go to a new backup first (see `_backup_path`).

    A symlinked file (dotfiles) keeps its link: the file it points at is the one replaced.

    Raises:
        CortexError: the write failed (a full disk, no permission); files written before it stay as they are.
    """
    target = path.resolve() if path.is_symlink() else path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            backup = _backup_path(target)
            backups_dir().mkdir(mode=0o700, parents=True, exist_ok=True)  # what it keeps is the user's alone
            backup.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            _replace(backup, target.read_bytes(), _mode(target, mode))
        _replace(target, data, mode)
    except OSError as exc:
        raise CortexError(
            f"could not write {path}: {exc.strerror or exc.__class__.__name__}; it is unchanged (its newest backup "
            f"under {wiring.display(backups_dir())}, if any, holds the earlier bytes) — free the space or fix the "
            "permission and re-run",
            code="write_failed",
        ) from exc


def _replace(path: Path, data: bytes, mode: int) -> None:
    """Write `path` whole through a temp file beside it: a fresh, randomly named file opened exclusively, so a
    name a repository planted there (a link to a file elsewhere) is never written through."""
    import tempfile

    fd, name = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def link_in_project(project: str, target: Path) -> str | None:
    """Why `target` may not be written by a project-scope install, or None when it may: every component of its
    path from the repository's root down must be no link (a dangling one included) and its real path must lie
    under the repository's real path. A repository can commit a link anywhere (`.claude/settings.json` →
    `~/.claude/settings.json`, `.claude/hooks` → `~`), and a write through it lands outside the project."""
    root = Path(os.path.realpath(project))
    try:
        rel = Path(os.path.abspath(target)).relative_to(root)
    except ValueError:
        return f"{target} is outside the repository {root}"
    at = root
    for part in rel.parts:
        at = at / part
        if os.path.islink(at):
            try:
                aim = os.readlink(at)
            except OSError:
                aim = "?"
            shown = at.relative_to(root).as_posix()
            return f"{shown} in the repository is a link to {aim}"
    real = os.path.realpath(target)
    if real != str(root) and not real.startswith(str(root) + os.sep):
        return f"{target} resolves to {real}, outside the repository {root}"
    return None


def check_project_targets(project: str, targets: list[Path]) -> None:
    """Refuse a project-scope install that would write anywhere but inside the project (see `link_in_project`).

    Raises:
        InvalidInput: a target's path holds a link, or lies outside the repository (nothing was written).
    """
    for target in targets:
        why = link_in_project(project, target)
        if why is not None:
            raise InvalidInput(
                f"refusing to install: {why}, and a project install writes only inside the project (with or "
                "without --force); remove the link and re-run (nothing was written)",
                code="link_in_project",
            )


def check_hooks_dir(raw: str) -> Path:
    """The hooks directory as an absolute path.

    Raises:
        InvalidInput: the path holds `$`, a backtick, a backslash, a double quote or a newline, which the
            shell would expand (or which would end the quoting) inside the wired command.
    """
    bad = [c for c in wiring.UNSAFE_DIR_CHARS if c in raw]
    if bad:
        shown = ", ".join(repr(c) for c in bad)
        raise InvalidInput(
            f"refusing hooks directory {raw!r}: it contains {shown}, which the shell would expand inside the "
            "quoted hook command, so the hook would run from somewhere else; choose a path without them "
            "(spaces are fine)",
            code="unsafe_hooks_dir",
        )
    return Path(os.path.abspath(os.path.expanduser(raw)))


def check_cortex_bin(path: str) -> str:
    """The cortex executable path to bake in.

    Raises:
        InvalidInput: the path holds a character that cannot be baked into the quoted scripts, or it is not
            an executable file.
    """
    bad = [c for c in wiring.UNSAFE_BIN_CHARS if c in path]
    if bad:
        raise InvalidInput(
            f"cannot bake the cortex executable path {path!r} into the hooks: it contains "
            f"{', '.join(repr(c) for c in bad)}; install Cortex somewhere without them",
            code="unsafe_cortex_path",
        )
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise InvalidInput(
            f"cannot find the cortex command to bake into the hooks ({path} is not an executable file); "
            f"put `cortex` on PATH (pip install cortex-memory-layer) or set {wiring.INSTALL_BIN_ENV}",
            code="no_cortex_executable",
        )
    return path


def _warn_checkout_venv(plan: Plan, cortex_bin: str) -> None:
    """Say so when the `cortex` baked into user-wide hooks runs from a virtual environment inside a repository
    (a checkout's `.venv`, as after `pip install -e .` and `cortex demo`): every project's hooks would depend on
    that checkout and stop, silently, once its environment is removed or rebuilt."""
    from cortex_engine.scope.identity import locate_git

    folder = Path(cortex_bin).parent
    venv = next((p for p in (folder, *folder.parents) if (p / "pyvenv.cfg").is_file()), None)
    location = locate_git(str(venv)) if venv is not None else None
    if venv is None or location is None:
        return
    plan.add(
        Action(
            "cortex",
            "warning",
            cortex_bin,
            f"this cortex runs from the virtual environment {wiring.display(venv)} inside the repository "
            f"{wiring.display(location.worktree)}; the hooks of every project will call it and stop silently "
            "once that environment is removed — install cortex with `pipx install` or `uv tool install` and "
            "re-run `cortex install` (README: Installing into Claude Code)",
        )
    )


def _under(path: Path, project: str) -> bool:
    """Whether `path` (absolute) names a place inside the project, as written (before any link is followed)."""
    return os.path.abspath(path) == project or os.path.abspath(path).startswith(project.rstrip(os.sep) + os.sep)


def default_hooks_dir(scope: str, project: str) -> Path:
    """Where install writes the scripts: `~/.claude/hooks`, or `<project>/.claude/hooks` for project scope
    (committed with the project, so every teammate has them)."""
    return wiring.default_hooks_dir() if scope == "user" else Path(project) / ".claude" / "hooks"


def settings_file(scope: str, project: str) -> Path:
    """The settings file install merges the wiring into."""
    return (
        wiring.home() / ".claude" / "settings.json" if scope == "user" else Path(project) / ".claude" / "settings.json"
    )


def portable_paths(scope: str, project: str, directory: Path, cortex_bin: str) -> tuple[str, str, str]:
    """(cortex path baked into the scripts, hooks directory as the wiring names it, cortex command in the wiring).

    User scope bakes this machine's absolute paths. Project scope writes files a team commits: scripts find
    `cortex` on PATH when they run, the wiring names a scripts folder inside the project through
    `$CLAUDE_PROJECT_DIR`, and the server is `cortex` from PATH. A `--dir` outside the project stays absolute.
    """
    if scope == "user":
        return cortex_bin, str(directory), cortex_bin
    try:
        rel = directory.relative_to(project)
    except ValueError:
        return wiring.PORTABLE_BIN, str(directory), wiring.PORTABLE_COMMAND
    command_dir = wiring.PROJECT_DIR_VAR + ("" if str(rel) == "." else "/" + rel.as_posix())
    return wiring.PORTABLE_BIN, command_dir, wiring.PORTABLE_COMMAND


def install(
    cwd: str,
    *,
    scope: str = "user",
    hooks_dir: str | None = None,
    dry_run: bool = False,
    force: bool = False,
    diagnose: bool = True,
) -> InstallResult:
    """Install Cortex into Claude Code for the project at `cwd`; see the module docstring.

    Raises:
        InvalidInput: an unknown scope, an unsafe hooks directory or cortex path (nothing is written).
        CortexError: this build's hook templates are missing.
    """
    if scope not in SCOPES:
        raise InvalidInput(f"unknown --scope {scope!r}; use user or project", code="bad_scope")
    project = wiring.project_root(cwd)
    directory = check_hooks_dir(hooks_dir if hooks_dir else str(default_hooks_dir(scope, project)))
    cortex_bin = check_cortex_bin(wiring.cortex_executable())
    plan = Plan()
    from cortex_engine.ops.presence import survey

    if scope == "user":
        _warn_checkout_venv(plan, cortex_bin)
    plugin = survey(project).plugin if scope == "user" else None
    if plugin is not None:
        # The plugin already runs every hook and the server: wiring them again would run each twice.
        plan.add(
            Action(
                "plugin",
                "unchanged",
                str(plugin.settings),
                f"the {plugin.key} plugin provides the hooks and the MCP server; nothing to wire "
                "(`cortex uninstall` removes an earlier settings-file installation)",
            )
        )
    else:
        if scope == "project":
            inside = [directory, *(directory / name for name in wiring.TEMPLATES)]
            if not _under(directory, project):
                inside = []  # a --dir the person named outside the project: their choice, not the repository's
            check_project_targets(project, [*inside, settings_file(scope, project), wiring.project_mcp_file(project)])
        baked, command_dir, command_bin = portable_paths(scope, project, directory, cortex_bin)
        for name in wiring.TEMPLATES:
            _plan_script(plan, name, directory, baked, force)
        settings_target = settings_file(scope, project)
        merged = _plan_settings(plan, settings_target, project, command_dir, command_bin, whole=scope == "project")
        _plan_mcp(plan, scope, project, command_bin, settings_target, merged)
    if not dry_run:
        for path, data, mode in plan.writes:
            _atomic_write(path, data, mode)
        for path in plan.chmods:
            try:
                os.chmod(path, 0o755)
            except OSError as exc:
                raise CortexError(
                    f"could not make {path} executable: {exc.strerror}; fix the permission and re-run",
                    code="write_failed",
                ) from exc
    result = InstallResult(scope, dry_run, str(directory), cortex_bin, project, plan.actions)
    if diagnose and not dry_run:
        from cortex_engine.ops.doctor import diagnose as run_doctor

        result.diagnostic = run_doctor(cwd, str(directory))
    return result
