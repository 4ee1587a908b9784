"""`cortex gc`: retention. Dry run by default; `--apply` deletes; automatic at session start at most
once a day (`CORTEX_GC_AUTO=0` turns that off). Standard library only.

What it prunes (each window overridable by environment):
- events of sessions that ended and were summarized more than 30 days ago (`CORTEX_GC_EVENT_DAYS`);
  the summary, the command runs and the episodes stay;
- the retrieval log older than 30 days, always keeping the newest 2000 rows
  (`CORTEX_GC_RETRIEVAL_LOG_DAYS`, `CORTEX_GC_RETRIEVAL_LOG_KEEP`);
- spool replay keys older than 30 days (`CORTEX_GC_SPOOL_SEEN_DAYS`): a claim that old was replayed or lost;
- archived memory items never accessed and older than 90 days (`CORTEX_GC_ARCHIVED_DAYS`), except notes,
  snapshots and session summaries;
- in this worktree's runtime folder, files older than a day that hold nothing to replay: blobs no spool or
  claim line points at, and claims without one complete line.

Never pruned: notes, snapshots, sessions, session summaries, and the token ledger (the economy record).
Applying also tidies the full-text index (`store.queries.tidy_fulltext`, which every session start runs too) and
VACUUMs the store when more than a fifth of its pages are free.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from cortex_engine.base import settings
from cortex_engine.base.clock import iso, parse_iso
from cortex_engine.base.errors import RuntimeUntrusted
from cortex_engine.base.records import field, record
from cortex_engine.capture.flush import BLOBS, CLAIMS, SPOOL, find_runtime, open_runtime
from cortex_engine.capture.runtime import BLOB_NAME, CLAIM_NAME
from cortex_engine.store import queries
from cortex_engine.store.database import transaction

if TYPE_CHECKING:
    import logging


AUTO_INTERVAL = timedelta(hours=24)
ORPHAN_AGE_SECONDS = 24 * 60 * 60
VACUUM_RATIO = 0.2
VACUUM_BUSY_MS = 250  # another connection holding the store this long means: try again another day
LAST_RUN_KEY = "last_gc_at"  # meta key: when retention was last applied
FULLTEXT_TIDY_PAGES = 2000
"""The most full-text index pages `gc --apply` writes tidying the index (about 8 MB); the rest waits for the next."""
FULLTEXT_START_PAGES = 256
"""The most a session start writes (about 1 MB, tens of milliseconds): it merges a day's small segments whole, and
a merge of two large ones goes on over the next starts."""
NEVER_PRUNED_KINDS = ("branch_snapshot", "project_snapshot", "episode:session_summary")
_BLOB_REF = re.compile(rb'"blob"\s*:\s*"([^"\\]+)"')


@record
class Rule:
    """What one rule found and removed."""

    candidates: int = 0
    deleted: int = 0

    def to_dict(self) -> dict[str, int]:
        """The report shape."""
        return {"candidates": self.candidates, "deleted": self.deleted}


@record
class GcReport:
    """What a gc run found (and, applied, removed)."""

    dry_run: bool
    rules: dict[str, Rule] = field(default_factory=dict)
    freelist_ratio: float = 0.0
    vacuumed: bool = False
    fulltext_segments: int | None = None
    """The full-text index's segments before the run (None: unreadable)."""
    fulltext_merged: int | None = None
    """The segments after the run tidied the index (None: not tidied: a dry run, or the store was busy)."""

    def to_dict(self) -> dict[str, object]:
        """The `gc --json` shape."""
        return {
            "dry_run": self.dry_run,
            **{k: v.to_dict() for k, v in self.rules.items()},
            "freelist_ratio": round(self.freelist_ratio, 4),
            "vacuumed": self.vacuumed,
            "fulltext_segments": self.fulltext_segments,
            "fulltext_merged": self.fulltext_merged,
        }

    def render(self) -> str:
        """The text report."""
        head = (
            "cortex gc — dry run: nothing deleted (re-run with --apply to prune)"
            if self.dry_run
            else "cortex gc — applied"
        )
        width = max(len(k) for k in self.rules)
        lines = [head]
        for name, rule in self.rules.items():
            tail = "" if self.dry_run else f", {rule.deleted} deleted"
            lines.append(
                f"  {name.replace('_', ' ').ljust(width)}  {rule.candidates} "
                f"candidate{'s' if rule.candidates != 1 else ''}{tail}"
            )
        if self.fulltext_segments is not None:
            merged = f", merged into {self.fulltext_merged}" if self.fulltext_merged is not None else ""
            lines.append(
                f"  full-text index {self.fulltext_segments} segment"
                f"{'s' if self.fulltext_segments != 1 else ''}{merged}"
            )
        lines.append(f"  free pages {self.freelist_ratio:.1%}" + (", vacuumed" if self.vacuumed else ""))
        lines.append("Notes, snapshots, sessions, summaries and the token ledger are never pruned.")
        return "\n".join(lines)


def _cutoff(now: datetime, days: int) -> str:
    return iso(now - timedelta(days=days))


def _database_rules(conn: sqlite3.Connection, report: GcReport, now: datetime, apply: bool) -> None:
    """Each retention rule's candidates (deleted with `apply`), with its window from settings."""
    windows: dict[str, tuple[object, ...]] = {
        "events": (_cutoff(now, settings.retention_days(settings.GC_EVENT_DAYS)),),
        "retrieval_log": (
            _cutoff(now, settings.retention_days(settings.GC_RETRIEVAL_LOG_DAYS)),
            settings.retention_days(settings.GC_RETRIEVAL_LOG_KEEP),
        ),
        "spool_seen": (_cutoff(now, settings.retention_days(settings.GC_SPOOL_SEEN_DAYS)),),
        "archived_memory_items": (_cutoff(now, settings.retention_days(settings.GC_ARCHIVED_DAYS)),),
    }
    for name, params in windows.items():
        candidates, deleted = queries.prune(conn, name, params, apply=apply, never_pruned_kinds=NEVER_PRUNED_KINDS)
        report.rules[name] = Rule(candidates, deleted)


def _runtime_rules(folder: Path | None, report: GcReport, wall_now: float, apply: bool) -> None:
    """Blobs nothing points at and claims with nothing to replay, older than a day (only in a trusted folder)."""
    blobs_rule = report.rules["orphaned_blobs"] = Rule()
    claims_rule = report.rules["empty_claims"] = Rule()
    if folder is None:
        return
    try:
        rt = open_runtime(folder)
    except (OSError, RuntimeUntrusted):
        return  # a folder Cortex may not use is never pruned: `cortex doctor` says why
    with rt:
        old = wall_now - ORPHAN_AGE_SECONDS
        lines: list[tuple[str, str | None]] = [(SPOOL, None)]
        lines += [(name, CLAIMS) for name in rt.names(CLAIMS) if CLAIM_NAME.fullmatch(name)]
        referenced: set[str] = set()
        for name, sub in lines:
            try:
                data = rt.read(name, sub)
            except OSError:
                continue
            if data is None:
                continue
            referenced.update(m.decode("utf-8", "replace") for m in _BLOB_REF.findall(data))
            if sub == CLAIMS and b"\n" not in data and _mtime(rt.lstat(name, sub)) < old:
                claims_rule.candidates += 1
                if apply and rt.unlink(name, sub):
                    claims_rule.deleted += 1
        for name in rt.names(BLOBS):
            if (
                BLOB_NAME.fullmatch(name)
                and rt.is_file(name, BLOBS)
                and name not in referenced
                and _mtime(rt.lstat(name, BLOBS)) < old
            ):
                blobs_rule.candidates += 1
                if apply and rt.unlink(name, BLOBS):
                    blobs_rule.deleted += 1


def _mtime(info: os.stat_result | None) -> float:
    return info.st_mtime if info is not None else float("inf")


GC_STEPS = 3
"""The store's rules, the runtime folder, the full-text merge and VACUUM: what `tick` counts."""


def run_gc(
    conn: sqlite3.Connection,
    now: datetime,
    worktree: str,
    *,
    apply: bool = False,
    vacuum: bool = True,
    tick: Callable[[int], None] | None = None,
) -> GcReport:
    """Find (and with `apply`, delete) what retention allows; VACUUM a fragmented store when applying.

    Args:
        now: the clock's time, against which the retention windows are measured.
        worktree: whose runtime folder (`.cortex/`) has its blobs and claims aged too.
        vacuum: allow a VACUUM when more than a fifth of the pages are free (applying only).
        tick: called with 1 after each of the GC_STEPS steps (a progress bar's).
    """
    step = tick or (lambda n: None)
    report = GcReport(dry_run=not apply)
    if apply:
        with transaction(conn):
            _database_rules(conn, report, now, apply=True)
            queries.set_meta(conn, LAST_RUN_KEY, iso(now))
    else:
        _database_rules(conn, report, now, apply=False)
    step(1)
    _runtime_rules(find_runtime(worktree), report, time.time(), apply)
    step(1)
    report.fulltext_segments = queries.fulltext_segments(conn)
    if apply:
        report.fulltext_merged = tidy_fulltext(conn)
    report.freelist_ratio = queries.freelist_ratio(conn)
    if apply and vacuum and report.freelist_ratio > VACUUM_RATIO:
        report.vacuumed = _vacuum(conn)
        if report.vacuumed:
            report.freelist_ratio = queries.freelist_ratio(conn)
    step(1)
    return report


def tidy_fulltext(
    conn: sqlite3.Connection, pages: int = FULLTEXT_TIDY_PAGES, busy_ms: int = VACUUM_BUSY_MS
) -> int | None:
    """Merge the full-text index's small segments (`queries.tidy_fulltext`, `pages` at most); the segments left, or
    None when the store was busy (the next session start tries again)."""
    try:
        return queries.tidy_fulltext(conn, pages, busy_ms)
    except sqlite3.OperationalError as exc:
        _log().info("gc: full-text tidy stopped (%s)", exc)
        return None


def _vacuum(conn: sqlite3.Connection) -> bool:
    """VACUUM with a short busy wait: another reader holding the store means try again another day."""
    try:
        queries.vacuum(conn, VACUUM_BUSY_MS)
        return True
    except sqlite3.OperationalError as exc:
        _log().info("gc: VACUUM skipped (%s)", exc)
        return False


def _log() -> logging.Logger:
    """This module's logger; `logging` is imported only when there is something to log (not at session start)."""
    import logging

    return logging.getLogger(__name__)


def auto_enabled() -> bool:
    """Whether the session-start run is on (`CORTEX_GC_AUTO` unset or not an off spelling)."""
    return settings.gc_auto()


def tidy_at_start(conn: sqlite3.Connection) -> int | None:
    """The session start's tidy of the full-text index (FULLTEXT_START_PAGES at most, never waiting on another
    writer), whatever the retention settings; cheap when there is nothing to merge, and never fails the start."""
    try:
        return tidy_fulltext(conn, FULLTEXT_START_PAGES, 0)
    except sqlite3.Error as exc:
        _log().warning("full-text tidy at session start skipped: %s", exc)
        return None


def auto(conn: sqlite3.Connection, now: datetime, worktree: str) -> GcReport | None:
    """The session-start run: apply at most once a day, unless turned off; never fails the session start."""
    if not auto_enabled():
        return None
    try:
        stamp = queries.meta_value(conn, LAST_RUN_KEY)
        last = parse_iso(stamp) if stamp is not None else None
        if last is not None and now - last < AUTO_INTERVAL:
            return None
        return run_gc(conn, now, worktree, apply=True)
    except (sqlite3.Error, OSError) as exc:
        _log().warning("cortex gc at session start skipped: %s", exc)
        return None
