"""`cortex doctor`'s checks of this worktree's runtime folder and of the store: engagement, the store file and its
schema, shared decisions and the inbox, the capture spool, the digest index, subagents, the semantic extra.

Read-only, like every doctor check: the store is opened read-only and no store is created where none exists.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

from cortex_engine.base.errors import RuntimeUntrusted, StoreRefused
from cortex_engine.capture.flush import (
    BLOBS,
    CLAIMS,
    FLUSH_AFTER,
    FLUSH_THRESHOLD,
    PAUSED,
    RUNTIME_CAP,
    SPOOL,
    is_engaged,
    open_runtime,
)
from cortex_engine.capture.runtime import FIX as RUNTIME_FIX
from cortex_engine.capture.runtime import RUNTIME, Runtime, untrusted_reason
from cortex_engine.ops import wiring

if TYPE_CHECKING:
    from cortex_engine.ops.doctor import Report

STALE_SPOOL_SECONDS = 60 * 60
FIX_START = "start a Claude Code session in this project, or run `cortex inject-header --quiet` here"


def check_engagement(report: Report, worktree: str) -> None:
    folder = Path(worktree) / RUNTIME
    if not os.path.lexists(folder):
        report.add(
            "engagement", "fail", f"not engaged yet: no {RUNTIME}/ folder in {worktree}", FIX_START, expected=True
        )
        return
    reason = untrusted_reason(folder)
    if reason is not None:
        report.add(
            "engagement",
            "fail",
            f"the runtime folder is not trusted: {reason}; hooks capture nothing and Cortex reads nothing from it",
            RUNTIME_FIX,
        )
    elif not is_engaged(worktree):
        report.add(
            "engagement",
            "warn",
            "disengaged for this worktree (cortex_disengage); hooks capture nothing",
            "call cortex_engage, run `cortex engage`, or start a new session",
        )
    else:
        report.add("engagement", "pass", f"engaged ({wiring.display(folder)})")


def check_database(report: Report, db: Path) -> None:
    from cortex_engine.store.database import SCHEMA_VERSION, read_version

    if not db.exists():
        report.add("database", "fail", f"no store yet at {wiring.display(db)}", FIX_START, expected=True)
        return
    try:
        version = read_version(db)
    except StoreRefused as exc:
        fix = (
            "upgrade Cortex (pip install -U cortex-memory-layer); this build must not touch a newer store"
            if exc.code == "newer_schema"
            else "move the store aside (see `cortex store`); Cortex starts a fresh one"
        )
        report.add("database", "fail", exc.message, fix)
        return
    except sqlite3.Error as exc:
        report.add(
            "database",
            "fail",
            f"{wiring.display(db)} cannot be opened read-only ({exc})",
            "check the file's permissions, or move it aside (see `cortex store`)",
        )
        return
    if version == 0:
        report.add(
            "database", "fail", f"{wiring.display(db)} holds no Cortex schema", "move it aside (see `cortex store`)"
        )
    elif version < SCHEMA_VERSION:
        report.add(
            "database",
            "pass",
            f"schema {version} (migrated to {SCHEMA_VERSION} automatically on next open) at {wiring.display(db)}",
        )
    else:
        report.add("database", "pass", f"schema {version} at {wiring.display(db)}")


def _waiting_arrivals(conn: sqlite3.Connection) -> int:
    """Arrivals of any scope waiting in the inbox (0 on a store from before schema 10)."""
    try:
        return int(conn.execute("SELECT COUNT(*) FROM arrivals WHERE state='pending'").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def check_review_policy(report: Report) -> None:
    """The user's review policy, from the settings file beside the stores (never the environment)."""
    from cortex_engine.base import settings

    mode, problem = settings.review_policy()
    status = "warn" if problem or mode == "none" else "pass"
    fix = (
        "set it again with `cortex review-policy others` (or `all`) in your own terminal"
        if problem
        else "hold them for review: `cortex review-policy others`"
    )
    report.add("review-policy", status, settings.describe_review(mode, problem), fix)


def check_shared_decisions(report: Report, db: Path) -> None:
    """Decision files the last sync skipped as malformed: reported, never half-imported."""
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
        report.add(
            "inbox",
            "warn",
            f"{waiting} arrival(s) from outside (decision files by others, imports) wait for "
            "your review; the agent is told only the count",
            "review them: `cortex inbox`, then "
            "`cortex inbox accept ID` or `cortex inbox reject ID` (or the TUI's Inbox, key i)",
        )
    if not found:
        return  # nothing to say: no check line, so stores without shared decisions read as before
    listed = "; ".join(f"{path}: {why}" for path, why in found[:5]) + (
        f"; and {len(found) - 5} more" if len(found) > 5 else ""
    )
    report.add(
        "shared-decisions",
        "warn",
        f"{len(found)} decision file(s) skipped as malformed — {listed}",
        "fix the file(s) in the repository (a `# title` and a `## Decision Outcome` with `Chosen option:`), "
        "commit, then run `cortex sync`",
    )


def check_spool(report: Report, worktree: str, now: float) -> None:
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
    shape = (
        f"{_kib(total)} pending ({_kib(sizes.get((SPOOL, None), 0))} "
        f"spool, {claims} claim{'s' if claims != 1 else ''}, "
        f"{len(blobs)} blob{'s' if len(blobs) != 1 else ''})"
    )
    held = rt.size()
    if held >= RUNTIME_CAP or rt.lstat(PAUSED) is not None:
        report.add(
            "spool",
            "fail",
            f"capture is paused: the runtime folder holds {held / 2**20:.1f} MiB, "
            f"at its {RUNTIME_CAP // 2**20} MiB cap, because flushes into the store failed",
            "see the database check for why the store is refused; fix that, then run `cortex flush-spool` "
            "(capture resumes once a flush succeeds)",
        )
        return
    retry = _retry_at(rt)
    if retry is not None and retry > now and total:
        report.add(
            "spool",
            "warn",
            f"{shape}; the store refused the last flush, so hooks wait until "
            f"{time.strftime('%H:%M', time.localtime(retry))} before trying again",
            "see the database check for why; then run `cortex flush-spool`",
        )
        return
    if total >= FLUSH_THRESHOLD:
        report.add(
            "spool",
            "fail",
            f"{shape}: past the {FLUSH_THRESHOLD // 1024} KiB flush threshold",
            "run `cortex flush-spool`; if it fills again, check the Stop hook with `cortex doctor`",
        )
        return
    oldest = _oldest_pending(rt, pending)
    age = now - oldest if oldest is not None and total else 0.0
    if age > STALE_SPOOL_SECONDS:
        report.add(
            "spool",
            "warn",
            f"{shape}; the oldest pending capture is {int(age // 60)} min old",
            "run `cortex flush-spool`; the Stop hook should flush every turn — check hook-wiring",
        )
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


def check_digest_index(report: Report, worktree: str) -> None:
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
            report.add(
                "digest-index",
                "warn",
                f"{wiring.display(index)} is not a regular file; substitution ignores it",
                "remove it; the next `cortex flush-spool` rewrites it",
            )
            readable = False
        else:
            try:
                lines = index.read_bytes().decode("utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                lines, readable = [], False
                report.add(
                    "digest-index",
                    "warn",
                    f"{wiring.display(index)} cannot be read ({exc.__class__.__name__})",
                    "remove it; the next `cortex flush-spool` rewrites it",
                )
            for line in lines:
                fields = line.split("\t")
                ok = (
                    len(fields) == 4
                    and fields[0].startswith("/")
                    and len(fields[1]) == 64
                    and all(c in "0123456789abcdef" for c in fields[1])
                    and fields[2].isdigit()
                    and fields[3] != ""
                )
                entries += ok
                bad += not ok
            if readable and bad:
                report.add(
                    "digest-index",
                    "warn",
                    f"{bad} of {bad + entries} lines of {wiring.display(index)} do not parse; substitution skips them",
                    "run `cortex flush-spool` (it rewrites the index)",
                )
            elif readable:
                report.add("digest-index", "pass", f"{entries} verified read{'s' if entries != 1 else ''} indexed")
    else:
        report.add("digest-index", "pass", "none yet (the first flush writes it)")
    if not on:
        report.add("substitution", "pass", "off (opt in with `cortex substitution on`)")
    elif not os.path.lexists(index) or not readable:
        report.add(
            "substitution",
            "warn",
            "on, but there is no readable digest index, so no Read is substituted",
            "run `cortex flush-spool` (the Stop hook does it every turn; check hook-wiring if it does not)",
        )
    else:
        report.add(
            "substitution", "pass", f"on; {entries} read{'s' if entries != 1 else ''} can be answered from the index"
        )


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


def check_semantic(report: Report, db: Path) -> None:
    """Whether recall also ranks by meaning (the optional semantic extra): never a failure, since lexical works."""
    from cortex_engine.semantic import extra as semantic

    conn = _open_readonly(db) if db.exists() else None
    state: dict[str, object]
    if conn is None:
        found = semantic.availability()
        state = {
            "state": "off" if not found.installed else "ready",
            "detail": found.reason if not found.installed else "installed (no store yet)",
        }
    else:
        try:
            state = semantic.summary(conn)
        finally:
            conn.close()
    if state["state"] == "refused":
        report.add("semantic", "warn", str(state["detail"]), semantic.install_hint())
    elif state["state"] == "off":
        report.add(
            "semantic",
            "pass",
            f"lexical recall only ({state['detail']}); to find by meaning too: {semantic.install_hint()}",
        )
    else:
        report.add("semantic", "pass", str(state["detail"]))


def check_subagents_and_guard(report: Report, db: Path) -> None:
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
            "SELECT COUNT(*), MAX(timestamp) FROM token_ledger WHERE channel='memory_guard_deny'"
        ).fetchone()
    except sqlite3.Error as exc:
        report.add(
            "subagent-sessions",
            "warn",
            f"the store's subagent records cannot be read ({exc})",
            "run `cortex doctor` again after the next session; if it persists, see `cortex store`",
        )
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
        report.add(
            "subagent-sessions",
            "warn",
            f"{open_children} subagent session{'s' if open_children != 1 else ''} left open "
            f"after their parent session ended; {shape}",
            "check that SubagentStop is wired (hook-wiring); they close when their parent's session ends",
        )
    elif dispatches >= PAIRING_FLOOR and paired == 0:
        report.add(
            "subagent-sessions",
            "warn",
            f"no subagent was ever briefed: {shape}",
            "check dispatch-matcher and the SubagentStart wiring (`cortex install` repairs both)",
        )
    else:
        report.add("subagent-sessions", "pass", shape if dispatches or starts else "no subagent recorded yet")
    count, last = refusals
    report.add(
        "memory-guard",
        "pass",
        f"{count} subagent call{'s' if count != 1 else ''} refused (last {last})"
        if count
        else "no subagent call refused",
    )


def check_store(report: Report, cwd: str) -> Path:
    from cortex_engine.engine import describe_store

    info = describe_store(cwd)
    if info.degraded:
        report.add(
            "store",
            "warn",
            f"{wiring.display(info.path)}; {info.degraded_reason}",
            "run Cortex inside a git repository so every worktree shares one store",
        )
    elif not Path(info.path).exists():
        report.add("store", "pass", f"to be created at {wiring.display(info.path)} ({info.derived})")
    else:
        report.add("store", "pass", f"{wiring.display(info.path)} ({info.derived})")
    return Path(info.path)
