"""Reports: what a scope's sessions did (activity), its open contests, the change mark the operator view polls,
the resume line, and the validation audit of memories' references (`capture.engagement.status` is the status).

In: a connection, a scope, the clock's time. The SQL is the store layer's
(`store.reports`); this module shapes rows into the reports every adapter shows. Reads only, except the audit,
which persists each reference's verdict unless told not to.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from cortex_engine.base.clock import iso
from cortex_engine.base.untrusted import quote_path
from cortex_engine.scope.freshness import Validation, Validator, checkout_signature, checkouts
from cortex_engine.scope.identity import Scope
from cortex_engine.store import queries
from cortex_engine.store import reports as store
from cortex_engine.store.database import transaction

if TYPE_CHECKING:
    from cortex_engine.query.surfaces import Context

RESUME_DAYS = 7
"""A session summary older than this says nothing worth resuming from."""


def activity(conn: sqlite3.Connection, scope_key: str, limit: int, session_id: str | None) -> list[dict[str, object]]:
    """Sessions and subagent sessions of the scope, newest first, with what each did and injected (its own tokens).

    `session_id` keeps only that session (an empty list when it is not one of the scope's).
    """
    rows = store.session_activity(conn, scope_key, limit, session_id)
    ids = [str(r["id"]) for r in rows]
    tokens = queries.injected_per_session(conn, ids) if ids else {}
    return [
        {
            "id": r["id"],
            "parent_session_id": r["parent_session_id"],
            "agent_type": r["agent_type"],
            "agent_id": r["agent_id"],
            "host_session_id": r["host_session_id"],  # Claude Code's id, what `claude --resume` takes
            "status": r["status"],
            "started_at": r["started_at"],
            "ended_at": r["ended_at"],
            "focus": r["focus"],
            "reads": r["reads"],
            "edits": r["edits"],
            "commands": r["commands"],
            "failures": r["failures"],
            "notes": r["notes"],
            "tokens": tokens.get(str(r["id"]), 0),
        }
        for r in rows
    ]


def contests(conn: sqlite3.Connection, scope_key: str) -> list[dict[str, object]]:
    """Every open contest in the scope: the active contested notes of a subject, seated together."""
    grouped: dict[str, list[sqlite3.Row]] = {}
    for row in store.open_contest_notes(conn, scope_key):
        grouped.setdefault(row["subject"] or "", []).append(row)
    return [
        {
            "subject": subject,
            "sides": [
                {
                    "id": r["id"],
                    "item_id": r["item_id"],
                    "kind": r["kind"],
                    "content": r["content"],
                    "timestamp": r["timestamp"],
                    "session_id": r["session_id"],
                }
                for r in sides
            ],
        }
        for subject, sides in grouped.items()
    ]


def memory_mark(conn: sqlite3.Connection, scope: Scope) -> tuple[object, ...]:
    """A cheap fingerprint of what memory views show: equal marks mean no memory row changed. Reads only.

    It covers memory items (rows and tiers), notes (rows and statuses; a contest is a new note), corrections (every
    edit and delete writes one), references and anchors (what freshness checks) and the checkout's signature. It
    does not cover sessions, events, the token ledger or access counts: a write that touches only those (a spool
    flush of reads, a booked injection) leaves it unchanged, so the operator view reloads its overview only.
    """
    return (*store.memory_mark(conn), checkout_signature(scope))


def resume_line(conn: sqlite3.Connection, scope_key: str, now: datetime) -> str | None:
    """The first line of the newest session summary in the scope, when it is at most RESUME_DAYS old."""
    text = store.latest_summary_text(conn, scope_key, iso(now - timedelta(days=RESUME_DAYS)))
    if text is None:
        return None
    for line in text.split("\n"):
        clean = line.strip().lstrip("#").strip()
        # The focus is the session's label, not what it did; command-only lines say nothing on their own.
        if clean and not clean.startswith(("Command (", "Focus: ")):
            return clean
    return None


def validate(
    ctx: Context, scope: Scope, project_key: str, topic: str | None, *, persist: bool, all_scopes: bool, now: str
) -> dict[str, object]:
    """Audit memories' references against the checkout (deletes nothing); persists each verdict unless told not to.

    `all_scopes` checks every scope of the store, each against its own checkout state (its worktree, else its
    branch tip from git objects), and lists the scopes it could not check.
    """
    from cortex_engine.query import surfaces

    conn = ctx.conn
    scopes: list[dict[str, object]] = []
    unchecked: list[dict[str, object]] = []
    validators = [ctx.validator]
    if topic:
        _, _, found = surfaces.ranked(ctx, topic, 20)
        pairs = [(c.row, c.validation) for c in found]
    elif all_scopes:
        pairs = []
        for checkout in checkouts(conn, scope, project_key, store.referenced_scope_keys(conn), now):
            if checkout.validator is None:
                unchecked.append({"scope_key": checkout.scope_key, "reason": checkout.reason})
                continue
            validators.append(checkout.validator)
            checked = _validated(conn, [checkout.scope_key], checkout.validator)
            pairs.extend(checked)
            scopes.append(
                {
                    "scope_key": checkout.scope_key,
                    "against": checkout.against,
                    "where": checkout.where,
                    "checked": len(checked),
                    "stale": sum(1 for _, v in checked if v.stale),
                }
            )
    else:
        pairs = _validated(conn, ctx.scope_keys, ctx.validator)
    with transaction(conn):
        for row, validation in pairs if persist else []:
            for ref in validation.refs:
                queries.set_reference_status(conn, row["id"], ref.path, ref.status, ref.moved_to, now)
        if persist:
            # Anchors made before decorators counted, whose body still holds, are stored as the current rule reads
            # them: re-anchored without a drift, and from now on a changed decorator is one.
            for validator in validators:
                queries.upgrade_anchors(conn, validator.upgrades)
    results = [
        {
            "id": row["id"],
            "kind": row["kind"],
            "subject": row["subject"],
            "scope_key": row["scope_key"],
            "validity": v.validity,
            "label": v.label,
            "references": [{**r.verdict, "status": r.status, "moved_to": r.verdict["to"]} for r in v.refs],
            "anchors": [
                {
                    "anchor": quote_path(a.name),
                    "status": a.status,
                    "path": quote_path(a.path),
                    "symbol": quote_path(a.current_symbol) if a.current_symbol else None,
                    "start": a.start,
                    "end": a.end,
                    "moved_to": quote_path(a.moved_to) if a.moved_to else None,
                    "drifted": a.drifted,
                }
                for a in v.anchors
            ],
        }
        for row, v in pairs
    ]
    summary = {
        s: sum(1 for _, v in pairs for r in v.refs if r.status == s) for s in ("exists", "missing", "moved", "unknown")
    }
    report: dict[str, object] = {
        "topic": topic,
        "checked": len(pairs),
        "stale": sum(1 for _, v in pairs if v.stale),
        "drifted": sum(1 for _, v in pairs if v.drifted and not v.stale),
        "references": summary,
        "items": results,
    }
    if all_scopes and not topic:
        report["scopes"] = scopes
        report["unchecked"] = unchecked
    return report


def _validated(
    conn: sqlite3.Connection, keys: Sequence[str], validator: Validator
) -> list[tuple[sqlite3.Row, Validation]]:
    """Every non-archived item with references in `keys`, newest first, with its validation."""
    rows = store.referencing_items(conn, keys)
    validations = validator.validate_many([(r["id"], r["scope_key"]) for r in rows])
    return [(r, validations[r["id"]]) for r in rows]
