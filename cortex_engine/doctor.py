"""`cortex doctor`: is Cortex wired into Claude Code, and will it work? Standard library only.

Read-only: no session, no engagement write, no migration, no spool flush, and no store created where
none exists (the store is opened read-only; SQLite may create its `-wal`/`-shm` sidecars to read a WAL
database, which is the one exception). Binaries are located on PATH, never executed, so a run stays
well under the 3-second budget.

Exit code: 1 when any check fails, 0 otherwise — with one exception. On a project Cortex has not started
in yet, checks fail for a reason nobody needs to fix: `engagement` (no `.cortex/` runtime folder yet) and,
unless a command such as `cortex note` already made one, `database` (no store file yet); the first Claude
Code session, or `cortex inject-header --quiet`, creates both. When exactly those checks fail, each for
that reason, and nothing else fails, the report says so and the exit code is 0. Anything else exits 1 when a check
fails: one of the two alone (a store deleted under an engaged worktree, say), a store that exists but
cannot be read, a newer schema, or any other failing check next to them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import wiring
from .capture import BLOBS, CLAIMS, ENGAGED, FLUSH_THRESHOLD, RUNTIME, SPOOL
from .errors import StoreRefused
from .wiring import WIRINGS, Wiring

STALE_SPOOL_SECONDS = 60 * 60
LABEL = {"pass": "PASS", "warn": "WARN", "fail": "FAIL"}
FIX_INSTALL = "run `cortex install`"
FRESH = {"database", "engagement"}
FIX_START = "start a Claude Code session in this project, or run `cortex inject-header --quiet` here"


@dataclass
class Check:
    """One check: `pass | warn | fail`, what was found, and (when not passing) the fix."""

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
        failing = [c for c in self.checks if c.status == "fail"]
        return {c.name for c in failing} in (FRESH, {"engagement"}) and all(c.expected for c in failing)

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
            "project": self.project, "hooks_dir": self.hooks_dir, "checks": [c.to_dict() for c in self.checks],
            "passing": self.count("pass"), "warnings": self.count("warn"), "failing": self.count("fail"),
            "fresh_project": self.fresh_project, "exit_code": self.exit_code, "seconds": round(self.seconds, 3),
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
        fails, warns = self.count("fail"), self.count("warn")
        if not fails:
            lines.append(f"All {len(self.checks)} checks pass" + (f" ({warns} warning{'s' if warns != 1 else ''})." if warns else "."))
        else:
            lines.append(f"{fails} failing check{'s' if fails != 1 else ''}, {warns} warning{'s' if warns != 1 else ''}.")
        if self.fresh_project:
            lines.append(
                "Expected on a project Cortex has not started in yet: the engagement state (and the store, if none "
                "exists) is created by the first Claude Code session here, or now by `cortex inject-header --quiet`. "
                "The installation itself is complete, so this exits 0."
            )
        return "\n".join(lines)


# -- settings and wiring -------------------------------------------------------------------------


@dataclass
class Wired:
    """A Cortex hook found in a settings file."""

    file: Path
    event: str
    matcher: object
    command: str
    key: str


def _settings(report: Report, project: str) -> tuple[list[Wired], list[wiring.JsonFile]]:
    """Read the merged settings files; the `settings` check."""
    reads = [wiring.read_json(p) for p in wiring.settings_files(project)]
    bad = [r for r in reads if r.error]
    present = [r for r in reads if r.data is not None]
    if bad:
        report.add("settings", "fail", "; ".join(f"{wiring.display(r.path)}: {r.error}" for r in bad),
                   f"fix the JSON in {', '.join(wiring.display(r.path) for r in bad)} (Claude Code cannot read it either)")
    elif not present:
        report.add("settings", "fail", "no Claude Code settings file: " + ", ".join(wiring.display(r.path) for r in reads),
                   FIX_INSTALL)
    else:
        report.add("settings", "pass", "read " + ", ".join(wiring.display(r.path) for r in present))
    wired = [Wired(r.path, event, matcher, command, key)
             for r in present for event, matcher, command, key in wiring.hook_entries(r.data or {}) if key]
    return wired, reads


def _found(wired: list[Wired], want: Wiring) -> list[Wired]:
    return [w for w in wired if w.event == want.event and w.key == want.key]


def _wiring_checks(report: Report, wired: list[Wired]) -> None:
    """hook-wiring (fail when any is missing) and the matcher checks (warn when a tool was lost)."""
    missing = [want.label for want in WIRINGS if not _found(wired, want)]
    if missing:
        report.add("hook-wiring", "fail", f"{len(missing)} of {len(WIRINGS)} wirings missing: {', '.join(missing)}", FIX_INSTALL)
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
            report.add(name, "pass", f"{' and '.join(w.event for w in wants)} select {wants[0].matcher}")


def _script_paths(wired: list[Wired], hooks_dir: Path) -> list[Path]:
    """The hook scripts to inspect: every script a wiring runs, plus each one's library, else the hooks dir's."""
    paths: list[Path] = []
    for w in wired:
        raw = wiring.script_path(w.command)
        if raw:
            path = Path(raw)
            for candidate in (path, path.parent / wiring.LIBRARY):
                if candidate not in paths:
                    paths.append(candidate)
    if not paths:
        paths = [hooks_dir / name for name in wiring.TEMPLATES]
    return paths


def _script_checks(report: Report, wired: list[Wired], hooks_dir: Path, *, explicit_dir: bool) -> None:
    """hook-scripts, hook-substitution, hook-currency and hook-interpreter."""
    paths = _script_paths([] if explicit_dir else wired, hooks_dir)
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
        report.add("hook-substitution", "fail", "placeholders left unsubstituted in " +
                   ", ".join(wiring.display(p) for p in unsubstituted), FIX_INSTALL)
    else:
        report.add("hook-substitution", "pass", "paths baked in, no placeholder left")

    stale: list[str] = []
    for path, text in texts.items():
        name = path.name
        try:
            want = wiring.template_digest(wiring.template_text(name))
        except OSError:
            report.add("hook-currency", "fail", f"this build's template {name} is missing from {wiring.templates_dir()}",
                       "reinstall Cortex from a complete checkout")
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
    for w in wired:
        tokens = wiring.command_tokens(w.command)
        first = tokens[0] if tokens else ""
        if first and not _executable(first):
            problems.append(f"{first} (first word of the {w.event} command) is not found")
        elif first:
            found.append(first)
    for path, text in texts.items():
        baked = wiring.baked_bin(text)
        if path.name in wiring.SCRIPTS and baked and "__CORTEX_" not in baked and not _executable(baked):
            problems.append(f"{baked} (baked into {path.name}) is not an executable file")
        elif baked and "__CORTEX_" not in baked:
            found.append(baked)
    problems = list(dict.fromkeys(problems))
    if problems:
        report.add("hook-interpreter", "fail", "; ".join(problems),
                   f"{FIX_INSTALL} from the Cortex you want the hooks to call (it bakes in that path)")
    elif found:
        report.add("hook-interpreter", "pass", ", ".join(dict.fromkeys(found)) + " found")
    else:
        report.add("hook-interpreter", "warn", "no wired command or installed script names an interpreter", FIX_INSTALL)


def _executable(word: str) -> bool:
    """A command word resolves: an executable file by path, or a name on PATH."""
    if "/" in word:
        return os.path.isfile(word) and os.access(word, os.X_OK)
    return shutil.which(word) is not None


# -- runtime and store ---------------------------------------------------------------------------


def _engagement(report: Report, worktree: str) -> None:
    folder = Path(worktree) / RUNTIME
    if not folder.is_dir():
        report.add("engagement", "fail", f"not engaged yet: no {RUNTIME}/ folder in {worktree}", FIX_START, expected=True)
    elif not (folder / ENGAGED).is_file():
        report.add("engagement", "warn", "disengaged for this worktree (cortex_disengage); hooks capture nothing",
                   "call cortex_engage, run `cortex engage`, or start a new session")
    else:
        report.add("engagement", "pass", f"engaged ({wiring.display(folder)})")


def _read_version(db: Path) -> int:
    """The store's schema version, read without migrating and, where possible, without creating sidecars.

    With no `-wal` file the database file holds everything committed, so it is read as immutable and SQLite
    creates no `-wal`/`-shm`. With a WAL present it is opened read-only, so the WAL is read too (reading
    past it could report a stale version); those sidecars exist already.

    Raises:
        StoreRefused: a newer or corrupt schema version.
        sqlite3.Error: the file cannot be opened or read as SQLite.
    """
    from urllib.parse import quote

    from .store import connect, stored_version

    wal = db.with_name(db.name + "-wal")
    if not wal.exists():
        try:
            conn = sqlite3.connect(f"file:{quote(str(db))}?mode=ro&immutable=1", uri=True)
        except sqlite3.Error:
            conn = None
        if conn is not None:
            try:
                return stored_version(conn)
            except sqlite3.Error:
                pass
            finally:
                conn.close()
    conn = connect(db, readonly=True)
    try:
        return stored_version(conn)
    finally:
        conn.close()


def _database(report: Report, db: Path) -> None:
    from .store import SCHEMA_VERSION

    if not db.exists():
        report.add("database", "fail", f"no store yet at {wiring.display(db)}", FIX_START, expected=True)
        return
    try:
        version = _read_version(db)
    except StoreRefused as exc:
        fix = ("upgrade Cortex (pip install -U cortex-memory-layer); this build must not touch a newer store"
               if exc.code == "newer_schema" else "move the store aside (see `cortex store`); Cortex starts a fresh one")
        report.add("database", "fail", exc.message, fix)
        return
    except sqlite3.Error as exc:
        report.add("database", "fail", f"{wiring.display(db)} cannot be opened read-only ({exc})",
                   "check the file's permissions, or move it aside (see `cortex store`)")
        return
    if version == 0:
        report.add("database", "fail", f"{wiring.display(db)} holds no Cortex schema", "move it aside (see `cortex store`)")
    elif version < SCHEMA_VERSION:
        report.add("database", "pass", f"schema {version} (migrated to {SCHEMA_VERSION} automatically on next open) "
                                       f"at {wiring.display(db)}")
    else:
        report.add("database", "pass", f"schema {version} at {wiring.display(db)}")


def _spool(report: Report, worktree: str, now: float) -> None:
    folder = Path(worktree) / RUNTIME
    spool = folder / SPOOL
    if not folder.is_dir():
        report.add("spool", "pass", "no runtime folder yet, nothing pending")
        return
    if os.path.lexists(spool) and not spool.is_file():
        report.add("spool", "fail", f"{wiring.display(spool)} is not a regular file", "remove it; capture recreates it")
        return
    pending = [spool] if spool.is_file() else []
    pending += sorted((folder / CLAIMS).glob("*.jsonl")) if (folder / CLAIMS).is_dir() else []
    blobs = [p for p in (folder / BLOBS).iterdir() if p.is_file()] if (folder / BLOBS).is_dir() else []
    sizes = {p: _size(p) for p in (*pending, *blobs)}
    total = sum(sizes.values())
    claims = len(pending) - (1 if spool.is_file() else 0)
    shape = f"{_kib(total)} pending ({_kib(sizes.get(spool, 0))} spool, {claims} claim{'s' if claims != 1 else ''}, " \
            f"{len(blobs)} blob{'s' if len(blobs) != 1 else ''})"
    if total >= FLUSH_THRESHOLD:
        report.add("spool", "fail", f"{shape}: past the {FLUSH_THRESHOLD // 1024} KiB flush threshold",
                   "run `cortex flush-spool`; if it fills again, check the Stop hook with `cortex doctor`")
        return
    oldest = _oldest_pending(pending)
    age = now - oldest if oldest is not None and total else 0.0
    if age > STALE_SPOOL_SECONDS:
        report.add("spool", "warn", f"{shape}; the oldest pending capture is {int(age // 60)} min old",
                   "run `cortex flush-spool`; the Stop hook should flush every turn — check hook-wiring")
        return
    report.add("spool", "pass", shape if total else "empty")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _kib(size: int) -> str:
    return f"{size / 1024:.1f} KiB" if size else "0 KiB"


def _oldest_pending(files: list[Path]) -> float | None:
    """Epoch seconds of the oldest pending line: the `t` of each file's first line (else its mtime)."""
    times: list[float] = []
    for path in files:
        try:
            with path.open("rb") as handle:
                first = handle.readline(65536)
        except OSError:
            continue
        if not first.strip():
            continue
        try:
            times.append(float(str(json.loads(first)["t"]).replace(",", ".")))
        except (ValueError, KeyError, TypeError):
            try:
                times.append(path.stat().st_mtime)
            except OSError:
                continue
    return min(times) if times else None


def _store(report: Report, cwd: str) -> Path:
    from .engine import describe_store

    info = describe_store(cwd)
    if info.degraded:
        report.add("store", "warn", f"{wiring.display(info.path)}; {info.degraded_reason}",
                   "run Cortex inside a git repository so every worktree shares one store")
    else:
        report.add("store", "pass", f"{wiring.display(info.path)} ({info.derived})")
    return Path(info.path)


# -- MCP registration -----------------------------------------------------------------------------


def _mcp(report: Report, project: str, reads: list[wiring.JsonFile]) -> None:
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
            report.add("mcp", "fail", f"the cortex server in {where} runs {command}, which is not found",
                       f"fix its command in {where} (or delete the entry and {FIX_INSTALL})")
        else:
            args = entry.get("args") if isinstance(entry.get("args"), list) else []
            detail = f"{where}: {command} {' '.join(str(a) for a in args)}".rstrip()
            if malformed:
                report.add("mcp", "warn", f"{detail}; unreadable: {'; '.join(malformed)}", "fix the JSON in those files")
            else:
                report.add("mcp", "pass", detail)
        return
    detail = "cortex is not registered as an MCP server (settings files, .mcp.json, ~/.claude.json)"
    if malformed:
        detail += f"; unreadable: {'; '.join(malformed)}"
    report.add("mcp", "fail", detail, f"{FIX_INSTALL}, or `claude mcp add --scope user cortex -- cortex serve`")


# -- entry points ----------------------------------------------------------------------------------


def _hooks_dir(explicit: str | None, wired: list[Wired]) -> Path:
    """The hooks directory: as given, else where the wired capture script lives, else `~/.claude/hooks`."""
    if explicit:
        return Path(os.path.abspath(os.path.expanduser(explicit)))
    for w in wired:
        raw = wiring.script_path(w.command)
        if raw:
            return Path(raw).parent
    return wiring.default_hooks_dir()


def diagnose(cwd: str, hooks_dir: str | None = None) -> Report:
    """Run every check for the project at `cwd`; changes nothing it reports on."""
    began = time.monotonic()
    project = wiring.project_root(cwd)
    report = Report(project, "")
    wired, reads = _settings(report, project)
    directory = _hooks_dir(hooks_dir, wired)
    report.hooks_dir = str(directory)
    _wiring_checks(report, wired)
    # With --hooks-dir the scripts there are inspected; otherwise the scripts the wiring runs.
    _script_checks(report, wired, directory, explicit_dir=bool(hooks_dir))
    _engagement(report, project)
    db = _store(report, cwd)
    _database(report, db)
    _spool(report, project, time.time())
    _mcp(report, project, reads)
    report.seconds = time.monotonic() - began
    return report


def cli_doctor(args: argparse.Namespace) -> int:
    """`cortex doctor [--json] [--hooks-dir D]`: print the report; exit 1 when a check fails."""
    report = diagnose(getattr(args, "cwd", None) or os.getcwd(), getattr(args, "hooks_dir", None))
    if args.json:
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(report.render() + "\n")
    return report.exit_code
