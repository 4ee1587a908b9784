"""`cortex doctor`: is Cortex wired into Claude Code, and will it work? Standard library only.

Read-only: no session, no engagement write, no migration, no spool flush, and no store created where
none exists (the store is opened read-only; SQLite may create its `-wal`/`-shm` sidecars to read a WAL
database, which is the one exception). Binaries are located on PATH, never executed, so a run stays
well under the 3-second budget. The checks live in `doctor_wiring` (Claude Code's settings, the hooks, the MCP
registration) and `doctor_store` (the worktree's runtime folder and the store); this module runs them and reports.

Exit code: 1 when any check fails, 0 otherwise — with one exception. On a project Cortex has not started
in yet, checks cannot pass for a reason nobody needs to fix: `engagement` (no `.cortex/` runtime folder yet) and,
unless a command such as `cortex note` already made one, `database` (no store file yet); the first Claude
Code session, or `cortex inject-header --quiet`, creates both. When exactly those checks fail, each for
that reason, and nothing else fails, they are reported as notes (`NOTE`), the report says why, and the exit code
is 0. Anything else exits 1 when a check
fails: one of the two alone (a store deleted under an engaged worktree, say), a store that exists but
cannot be read, a newer schema, or any other failing check next to them.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from cortex_engine.ops import wiring
from cortex_engine.ops.doctor_store import (
    check_database,
    check_digest_index,
    check_engagement,
    check_review_policy,
    check_semantic,
    check_shared_decisions,
    check_spool,
    check_store,
    check_subagents_and_guard,
)
from cortex_engine.ops.doctor_wiring import (
    check_duplicates,
    check_mcp,
    check_plugin,
    check_scripts,
    check_settings,
    check_standdown,
    check_wiring,
    script_of,
)
from cortex_engine.ops.presence import Wired, survey

LABEL = {"pass": "PASS", "note": "NOTE", "warn": "WARN", "fail": "FAIL"}
FRESH = {"database", "engagement"}


@dataclass
class Check:
    """One check: `pass | note | warn | fail`, what was found, and (when not passing) the fix. `note`: a check a
    brand-new project cannot pass yet and nobody needs to fix (see the module docstring)."""

    name: str
    status: str
    detail: str
    fix: str | None = None
    expected: bool = False
    """A failure a brand-new project is expected to have (see the module docstring)."""

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape."""
        return {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}


@dataclass
class Report:
    """Every check for one project and hooks directory."""

    project: str
    hooks_dir: str
    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0
    fresh: bool = False
    """Set by `settle`: the only failures were the fresh-project ones, now notes."""

    def add(self, name: str, status: str, detail: str, fix: str | None = None, *, expected: bool = False) -> Check:
        """Record a check."""
        check = Check(name, status, detail, fix if status != "pass" else None, expected)
        self.checks.append(check)
        return check

    def count(self, status: str) -> int:
        """How many checks have this status."""
        return sum(1 for c in self.checks if c.status == status)

    @property
    def fresh_project(self) -> bool:
        """The only failures are those of a project no session has started in yet: no runtime folder, and no store
        unless a command (`cortex note`, say) made one first. A missing store under an engaged worktree is not."""
        if self.fresh:
            return True
        failing = [c for c in self.checks if c.status == "fail"]
        return {c.name for c in failing} in (FRESH, {"engagement"}) and all(c.expected for c in failing)

    def settle(self) -> None:
        """On a fresh project its expected failures are notes: nothing failed, nothing needs fixing."""
        if self.count("fail") and self.fresh_project:
            self.fresh = True
            for c in self.checks:
                if c.status == "fail":
                    c.status, c.fix = "note", None

    @property
    def exit_code(self) -> int:
        """1 when a check fails, unless only the expected fresh-project failures do."""
        return 1 if self.count("fail") and not self.fresh_project else 0

    def check(self, name: str) -> Check:
        """The check with this name.

        Raises:
            KeyError: there is no such check.
        """
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape."""
        return {
            "project": self.project,
            "hooks_dir": self.hooks_dir,
            "checks": [c.to_dict() for c in self.checks],
            "passing": self.count("pass"),
            "warnings": self.count("warn"),
            "failing": self.count("fail"),
            "notes": self.count("note"),
            "fresh_project": self.fresh_project,
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 3),
        }

    def render(self) -> str:
        """The text report."""
        width = max(len(c.name) for c in self.checks)
        lines = [f"Cortex doctor — {self.project}", f"Hooks directory: {wiring.display(self.hooks_dir)}", ""]
        for c in self.checks:
            lines.append(f"  {LABEL[c.status]}  {c.name.ljust(width)}  {c.detail}")
            if c.fix:
                lines.append(f"        {' ' * width}  fix: {c.fix}")
        lines.append("")
        fails, warns, notes = self.count("fail"), self.count("warn"), self.count("note")
        if not fails:
            asides = [f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((warns, "warning"), (notes, "note")) if n]
            lines.append(
                f"All {len(self.checks) - notes} checks pass" + (f" ({', '.join(asides)})." if asides else ".")
            )
        else:
            lines.append(
                f"{fails} failing check{'s' if fails != 1 else ''}, {warns} warning{'s' if warns != 1 else ''}."
            )
        if self.fresh_project:
            lines.append(
                "NOTE: Cortex has not started in this project yet. The first Claude Code session here creates the "
                "engagement state (and the store, if none exists), or run `cortex inject-header --quiet` now. "
                "The installation itself is complete: nothing to fix, so this exits 0."
            )
        return "\n".join(lines)


def _hooks_dir(explicit: str | None, wired: list[Wired], project: str) -> Path:
    """The hooks directory: as given, else where the wired capture script lives, else `~/.claude/hooks`."""
    if explicit:
        return Path(os.path.abspath(os.path.expanduser(explicit)))
    for w in wired:
        path = script_of(w, project)
        if path is not None:
            return path.parent
    return wiring.default_hooks_dir()


def diagnose(cwd: str, hooks_dir: str | None = None) -> Report:
    """Run every check for the project at `cwd`; changes nothing it reports on."""
    began = time.monotonic()
    project = wiring.project_root(cwd)
    report = Report(project, "")
    # One survey of settings files and the enabled plugin (`ops.presence`, the rule install and the TUI use too);
    # the plugin's own hooks come first: with both, the scripts inspected are the plugin's.
    found = survey(project)
    check_settings(report, found)
    check_plugin(report, found)
    wired = found.hooks
    check_duplicates(report, wired)
    directory = _hooks_dir(hooks_dir, wired, project)
    report.hooks_dir = str(directory)
    check_wiring(report, wired)
    check_standdown(report, found)
    # With --hooks-dir the scripts there are inspected; otherwise the scripts the wiring runs.
    check_scripts(report, wired, directory, project, explicit_dir=bool(hooks_dir))
    check_engagement(report, project)
    db = check_store(report, cwd)
    check_database(report, db)
    check_shared_decisions(report, db)
    check_review_policy(report)
    check_spool(report, project, time.time())
    check_digest_index(report, project)
    check_subagents_and_guard(report, db)
    check_semantic(report, db)
    check_mcp(report, project, found.settings, found.plugin_server)
    report.settle()
    report.seconds = time.monotonic() - began
    return report
