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

import json
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from cortex_engine.base.errors import RuntimeUntrusted, StoreRefused
from cortex_engine.capture.flush import (BLOBS, CLAIMS, FLUSH_AFTER, FLUSH_THRESHOLD, PAUSED, RUNTIME, RUNTIME_CAP,
                                         SPOOL, is_engaged, open_runtime)
from cortex_engine.capture.runtime import FIX as RUNTIME_FIX, Runtime, untrusted_reason
from cortex_engine.ops import wiring
from cortex_engine.ops.wiring import WIRINGS, Wiring

STALE_SPOOL_SECONDS = 60 * 60
LABEL = {"pass": "PASS", "warn": "WARN", "fail": "FAIL"}
FIX_INSTALL = "run `cortex install`"
FRESH = {"database", "engagement"}
FIX_START = "start a Claude Code session in this project, or run `cortex inject-header --quiet` here"
FIX_PATH = ("put `cortex` on PATH on this machine (`pipx install <this repository>` or `uv tool install <this "
            "repository>`); the project's hooks and server look it up there")


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
    plugin_root: str | None = None
    """Set for a hook the Cortex plugin declares: what `${CLAUDE_PLUGIN_ROOT}` stands for."""


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


def _plugin(report: Report, project: str) -> tuple[list[Wired], dict | None]:
    """The `plugin` check: the Cortex plugin enabled in a settings file, and what it wires (hooks, server)."""
    from cortex_engine.ops.plugin import enabled_plugin

    found = enabled_plugin(project)
    if found is None:
        return [], None
    where = wiring.display(found.settings)
    if found.install_path is None:
        report.add("plugin", "fail", f"{found.key} is enabled in {where} but Claude Code has not installed it",
                   f"run `/plugin install {found.key}` in Claude Code")
        return [], None
    hooks = wiring.read_json(found.install_path / "hooks" / "hooks.json")
    if hooks.data is None:
        report.add("plugin", "fail", f"{found.key} (enabled in {where}) has no readable hooks/hooks.json at "
                   f"{wiring.display(found.install_path)}" + (f": {hooks.error}" if hooks.error else ""),
                   f"reinstall it: `/plugin uninstall {found.key}` then `/plugin install {found.key}`")
        return [], None
    root = str(found.install_path)
    wired = [Wired(hooks.path, event, matcher, command, key, root)
             for event, matcher, command, key in wiring.hook_entries(hooks.data) if key]
    server = wiring.mcp_registration(wiring.read_json(found.install_path / ".mcp.json").data)
    report.add("plugin", "pass", f"{found.key} enabled in {where}, installed at {wiring.display(found.install_path)}")
    return wired, server


def _duplicates(report: Report, wired: list[Wired]) -> None:
    """Warn when the plugin and a settings file both wire a hook: Claude Code would run it twice."""
    from_plugin = {(w.event, w.key) for w in wired if w.plugin_root is not None}
    twice = sorted({f"{w.event} {w.key} ({wiring.display(w.file)})" for w in wired
                    if w.plugin_root is None and (w.event, w.key) in from_plugin})
    if twice:
        report.add("duplicates", "warn", "wired by the plugin and again by a settings file: " + ", ".join(twice),
                   "run `cortex uninstall` to remove the settings-file installation (the plugin keeps working)")


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


def _script_of(w: Wired, project: str) -> Path | None:
    """The script file a wiring runs, with `$CLAUDE_PROJECT_DIR` / `${CLAUDE_PLUGIN_ROOT}` filled in."""
    raw = wiring.script_path(w.command)
    return Path(wiring.expand_vars(raw, project, w.plugin_root)) if raw else None


def _script_paths(wired: list[Wired], hooks_dir: Path, project: str) -> list[Path]:
    """The hook scripts to inspect: every script a wiring runs, plus each one's library, else the hooks dir's."""
    paths: list[Path] = []
    for w in wired:
        path = _script_of(w, project)
        if path is not None:
            for candidate in (path, path.parent / wiring.LIBRARY):
                if candidate not in paths:
                    paths.append(candidate)
    if not paths:
        paths = [hooks_dir / name for name in wiring.TEMPLATES]
    return paths


def _script_checks(report: Report, wired: list[Wired], hooks_dir: Path, project: str, *, explicit_dir: bool) -> None:
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
    on_path = False
    for w in wired:
        tokens = wiring.command_tokens(w.command)
        first = tokens[0] if tokens else ""
        if first and not _executable(first):
            problems.append(f"{first} (first word of the {w.event} command) is not found")
            on_path = on_path or "/" not in first
        elif first:
            found.append(first)
    portable = [p.name for p, t in texts.items() if p.name in wiring.SCRIPTS and wiring.baked_bin(t) == wiring.PORTABLE_BIN]
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
        report.add("hook-interpreter", "fail", "; ".join(problems),
                   FIX_PATH if on_path else f"{FIX_INSTALL} from the Cortex you want the hooks to call (it bakes in that path)")
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
    if not os.path.lexists(folder):
        report.add("engagement", "fail", f"not engaged yet: no {RUNTIME}/ folder in {worktree}", FIX_START, expected=True)
        return
    reason = untrusted_reason(folder)
    if reason is not None:
        report.add("engagement", "fail", f"the runtime folder is not trusted: {reason}; hooks capture nothing and "
                                         "Cortex reads nothing from it", RUNTIME_FIX)
    elif not is_engaged(worktree):
        report.add("engagement", "warn", "disengaged for this worktree (cortex_disengage); hooks capture nothing",
                   "call cortex_engage, run `cortex engage`, or start a new session")
    else:
        report.add("engagement", "pass", f"engaged ({wiring.display(folder)})")


def _database(report: Report, db: Path) -> None:
    from cortex_engine.store.database import SCHEMA_VERSION, read_version

    if not db.exists():
        report.add("database", "fail", f"no store yet at {wiring.display(db)}", FIX_START, expected=True)
        return
    try:
        version = read_version(db)
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


def _waiting_arrivals(conn: sqlite3.Connection) -> int:
    """Arrivals of any scope waiting in the inbox (0 on a store from before schema 10)."""
    try:
        return int(conn.execute("SELECT COUNT(*) FROM arrivals WHERE state='pending'").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def _shared_decisions(report: Report, db: Path) -> None:
    """Decision files the last sync skipped as malformed (issue 19): reported, never half-imported."""
    from urllib.parse import quote

    from cortex_engine.memory.sharing import problems
    from cortex_engine.store.database import connect

    if not db.exists():
        return
    try:
        # As `store.read_version`: with no -wal file the database file is read as immutable, so nothing is created.
        if Path(str(db) + "-wal").exists():
            conn = connect(db, readonly=True)
        else:
            conn = sqlite3.connect(f"file:{quote(str(db))}?mode=ro&immutable=1", uri=True)
        try:
            found = problems(conn)
            waiting = _waiting_arrivals(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return  # the database check reports a store that cannot be read
    if waiting:
        report.add("inbox", "warn", f"{waiting} arrival(s) from outside (decision files by others, imports) wait for "
                   "your review; the agent is told only the count", "review them: `cortex inbox`, then "
                   "`cortex inbox accept ID` or `cortex inbox reject ID` (or the TUI's Inbox, key i)")
    if not found:
        return  # nothing to say: no check line, so stores without shared decisions read as before
    listed = "; ".join(f"{path}: {why}" for path, why in found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
    report.add("shared-decisions", "warn", f"{len(found)} decision file(s) skipped as malformed — {listed}",
               "fix the file(s) in the repository (a `# title` and a `## Decision Outcome` with `Chosen option:`), "
               "commit, then run `cortex sync`")


def _spool(report: Report, worktree: str, now: float) -> None:
    folder = Path(worktree) / RUNTIME
    if not os.path.lexists(folder):
        report.add("spool", "pass", "no runtime folder yet, nothing pending")
        return
    try:
        rt = open_runtime(folder)
    except (OSError, RuntimeUntrusted):
        report.add("spool", "warn", "not read: the runtime folder is not trusted (see engagement)", RUNTIME_FIX)
        return
    with rt:
        _pending(report, rt, now)


def _pending(report: Report, rt: Runtime, now: float) -> None:
    spool = rt.folder / SPOOL
    if rt.lstat(SPOOL) is not None and not rt.is_file(SPOOL):
        report.add("spool", "fail", f"{wiring.display(spool)} is not a regular file", "remove it; capture recreates it")
        return
    pending: list[tuple[str, str | None]] = [(SPOOL, None)] if rt.is_file(SPOOL) else []
    pending += [(name, CLAIMS) for name in rt.names(CLAIMS) if rt.is_file(name, CLAIMS)]
    blobs = [name for name in rt.names(BLOBS) if rt.is_file(name, BLOBS)]
    sizes = {entry: _size(rt.lstat(*entry)) for entry in (*pending, *((name, BLOBS) for name in blobs))}
    total = sum(sizes.values())
    claims = len(pending) - (1 if rt.is_file(SPOOL) else 0)
    shape = f"{_kib(total)} pending ({_kib(sizes.get((SPOOL, None), 0))} spool, {claims} claim{'s' if claims != 1 else ''}, " \
            f"{len(blobs)} blob{'s' if len(blobs) != 1 else ''})"
    held = rt.size()
    if held >= RUNTIME_CAP or rt.lstat(PAUSED) is not None:
        report.add("spool", "fail", f"capture is paused: the runtime folder holds {held / 2**20:.1f} MiB, "
                                    f"at its {RUNTIME_CAP // 2**20} MiB cap, because flushes into the store failed",
                   "see the database check for why the store is refused; fix that, then run `cortex flush-spool` "
                   "(capture resumes once a flush succeeds)")
        return
    retry = _retry_at(rt)
    if retry is not None and retry > now and total:
        report.add("spool", "warn", f"{shape}; the store refused the last flush, so hooks wait until "
                                    f"{time.strftime('%H:%M', time.localtime(retry))} before trying again",
                   "see the database check for why; then run `cortex flush-spool`")
        return
    if total >= FLUSH_THRESHOLD:
        report.add("spool", "fail", f"{shape}: past the {FLUSH_THRESHOLD // 1024} KiB flush threshold",
                   "run `cortex flush-spool`; if it fills again, check the Stop hook with `cortex doctor`")
        return
    oldest = _oldest_pending(rt, pending)
    age = now - oldest if oldest is not None and total else 0.0
    if age > STALE_SPOOL_SECONDS:
        report.add("spool", "warn", f"{shape}; the oldest pending capture is {int(age // 60)} min old",
                   "run `cortex flush-spool`; the Stop hook should flush every turn — check hook-wiring")
        return
    report.add("spool", "pass", shape if total else "empty")


def _retry_at(rt: Runtime) -> float | None:
    """When the capture hook may spawn its next flush (`flush-after`), if it was told to wait."""
    try:
        raw = rt.read(FLUSH_AFTER)
        return float(raw.decode("ascii").strip()) if raw else None
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _size(info: os.stat_result | None) -> int:
    return info.st_size if info is not None else 0


def _kib(size: int) -> str:
    return f"{size / 1024:.1f} KiB" if size else "0 KiB"


def _oldest_pending(rt: Runtime, files: list[tuple[str, str | None]]) -> float | None:
    """Epoch seconds of the oldest pending line: the `t` of each file's first line (else its mtime)."""
    times: list[float] = []
    for name, sub in files:
        try:
            data = rt.read(name, sub) or b""
        except OSError:
            continue
        first = data[:65536].split(b"\n", 1)[0]
        if not first.strip():
            continue
        try:
            times.append(float(str(json.loads(first)["t"]).replace(",", ".")))
        except (ValueError, KeyError, TypeError):
            info = rt.lstat(name, sub)
            if info is not None:
                times.append(info.st_mtime)
    return min(times) if times else None


# -- substitution, digest index, subagents, memory guard --------------------------------------------

PAIRING_FLOOR = 3


def _digest_index(report: Report, worktree: str) -> None:
    """`substitution` and `digest-index`: the opt-in marker, and the index file the substitution hook reads
    (`<path>\t<sha256>\t<size>\t<session>` per line; the hook skips what it cannot parse)."""
    from cortex_engine.capture.flush import INDEX, SUBSTITUTION

    folder = Path(worktree) / RUNTIME
    index = folder / INDEX
    on = (folder / SUBSTITUTION).is_file()
    entries = bad = 0
    readable = True
    if os.path.lexists(index):
        if index.is_symlink() or not index.is_file():
            report.add("digest-index", "warn", f"{wiring.display(index)} is not a regular file; substitution ignores it",
                       "remove it; the next `cortex flush-spool` rewrites it")
            readable = False
        else:
            try:
                lines = index.read_bytes().decode("utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                lines, readable = [], False
                report.add("digest-index", "warn", f"{wiring.display(index)} cannot be read ({exc.__class__.__name__})",
                           "remove it; the next `cortex flush-spool` rewrites it")
            for line in lines:
                fields = line.split("\t")
                ok = (len(fields) == 4 and fields[0].startswith("/") and len(fields[1]) == 64
                      and all(c in "0123456789abcdef" for c in fields[1]) and fields[2].isdigit() and fields[3] != "")
                entries += ok
                bad += not ok
            if readable and bad:
                report.add("digest-index", "warn", f"{bad} of {bad + entries} lines of {wiring.display(index)} do not "
                           "parse; substitution skips them", "run `cortex flush-spool` (it rewrites the index)")
            elif readable:
                report.add("digest-index", "pass", f"{entries} verified read{'s' if entries != 1 else ''} indexed")
    else:
        report.add("digest-index", "pass", "none yet (the first flush writes it)")
    if not on:
        report.add("substitution", "pass", "off (opt in with `cortex substitution on`)")
    elif not os.path.lexists(index) or not readable:
        report.add("substitution", "warn", "on, but there is no readable digest index, so no Read is substituted",
                   "run `cortex flush-spool` (the Stop hook does it every turn; check hook-wiring if it does not)")
    else:
        report.add("substitution", "pass", f"on; {entries} read{'s' if entries != 1 else ''} can be answered from the index")


def _open_readonly(db: Path) -> sqlite3.Connection | None:
    """The store opened read-only without creating sidecars where possible (see `_read_version`); None if it
    cannot be opened."""
    from urllib.parse import quote

    from cortex_engine.store.database import connect

    try:
        if not db.with_name(db.name + "-wal").exists():
            conn = sqlite3.connect(f"file:{quote(str(db))}?mode=ro&immutable=1", uri=True)
            conn.row_factory = sqlite3.Row
            return conn
        return connect(db, readonly=True)
    except sqlite3.Error:
        return None


def _subagents_and_guard(report: Report, db: Path) -> None:
    """`subagent-sessions` (children left open, briefs that never pair) and `memory-guard` (refusals)."""
    if not db.exists():
        return
    conn = _open_readonly(db)
    if conn is None:
        return
    try:
        counters = {r[0]: r[1] for r in conn.execute("SELECT key, value FROM counters WHERE key LIKE 'subagent_%'")}
        open_children = conn.execute(
            "SELECT COUNT(*) FROM sessions c LEFT JOIN sessions p ON p.id = c.parent_session_id "
            "WHERE c.parent_session_id IS NOT NULL AND c.status='active' AND (p.id IS NULL OR p.status != 'active')",
        ).fetchone()[0]
        refusals = conn.execute(
            "SELECT COUNT(*), MAX(timestamp) FROM token_ledger WHERE channel='memory_guard_deny'").fetchone()
    except sqlite3.Error as exc:
        report.add("subagent-sessions", "warn", f"the store's subagent records cannot be read ({exc})",
                   "run `cortex doctor` again after the next session; if it persists, see `cortex store`")
        return
    finally:
        conn.close()
    dispatches = counters.get("subagent_dispatch_count", 0)
    starts = counters.get("subagent_start_count", 0)
    paired = counters.get("subagent_paired_count", 0)
    ambiguous = counters.get("subagent_ambiguous_count", 0)
    shape = f"{dispatches} dispatch{'es' if dispatches != 1 else ''}, {starts} started, {paired} briefed"
    shape += f", {ambiguous} ambiguous" if ambiguous else ""
    if any(v < 0 for v in counters.values()):
        report.add("subagent-sessions", "warn", f"corrupt counters ({shape})", "run `cortex gc --apply`")
    elif open_children:
        report.add("subagent-sessions", "warn",
                   f"{open_children} subagent session{'s' if open_children != 1 else ''} left open "
                   f"after their parent session ended; {shape}",
                   "check that SubagentStop is wired (hook-wiring); they close when their parent's session ends")
    elif dispatches >= PAIRING_FLOOR and paired == 0:
        report.add("subagent-sessions", "warn", f"no subagent was ever briefed: {shape}",
                   "check dispatch-matcher and the SubagentStart wiring (`cortex install` repairs both)")
    else:
        report.add("subagent-sessions", "pass", shape if dispatches or starts else "no subagent recorded yet")
    count, last = refusals
    report.add("memory-guard", "pass", f"{count} subagent call{'s' if count != 1 else ''} refused (last {last})"
               if count else "no subagent call refused")


def _store(report: Report, cwd: str) -> Path:
    from cortex_engine.engine import describe_store

    info = describe_store(cwd)
    if info.degraded:
        report.add("store", "warn", f"{wiring.display(info.path)}; {info.degraded_reason}",
                   "run Cortex inside a git repository so every worktree shares one store")
    else:
        report.add("store", "pass", f"{wiring.display(info.path)} ({info.derived})")
    return Path(info.path)


# -- MCP registration -----------------------------------------------------------------------------


def _mcp(report: Report, project: str, reads: list[wiring.JsonFile], plugin_server: dict | None = None) -> None:
    if plugin_server is not None:
        command = plugin_server.get("command")
        if isinstance(command, str) and _executable(command):
            report.add("mcp", "pass", f"the cortex plugin: {command} serve")
        else:
            report.add("mcp", "fail", f"the cortex plugin's server runs {command}, which is not found on this machine",
                       FIX_PATH)
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
            report.add("mcp", "fail", f"the cortex server in {where} runs {command}, which is not found",
                       FIX_PATH if "/" not in command else f"fix its command in {where} (or delete the entry and {FIX_INSTALL})")
        else:
            args = found if isinstance(found := entry.get("args"), list) else []
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


def _hooks_dir(explicit: str | None, wired: list[Wired], project: str) -> Path:
    """The hooks directory: as given, else where the wired capture script lives, else `~/.claude/hooks`."""
    if explicit:
        return Path(os.path.abspath(os.path.expanduser(explicit)))
    for w in wired:
        path = _script_of(w, project)
        if path is not None:
            return path.parent
    return wiring.default_hooks_dir()


def diagnose(cwd: str, hooks_dir: str | None = None) -> Report:
    """Run every check for the project at `cwd`; changes nothing it reports on."""
    began = time.monotonic()
    project = wiring.project_root(cwd)
    report = Report(project, "")
    wired, reads = _settings(report, project)
    from_plugin, plugin_server = _plugin(report, project)
    # The plugin's own hooks first: with both, the scripts inspected are the plugin's.
    wired = [*from_plugin, *wired]
    _duplicates(report, wired)
    directory = _hooks_dir(hooks_dir, wired, project)
    report.hooks_dir = str(directory)
    _wiring_checks(report, wired)
    # With --hooks-dir the scripts there are inspected; otherwise the scripts the wiring runs.
    _script_checks(report, wired, directory, project, explicit_dir=bool(hooks_dir))
    _engagement(report, project)
    db = _store(report, cwd)
    _database(report, db)
    _shared_decisions(report, db)
    _spool(report, project, time.time())
    _digest_index(report, project)
    _subagents_and_guard(report, db)
    _mcp(report, project, reads, plugin_server)
    report.seconds = time.monotonic() - began
    return report

