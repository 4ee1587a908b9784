"""Economy: what remembering cost (injected), what it saved (only with recorded evidence), and retrieval health."""

from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cortex_engine.base.clock import ts_min
from cortex_engine.base.records import field, record
from cortex_engine.base.tokens import estimate_tokens
from cortex_engine.memory import tiers
from cortex_engine.memory.items import collapse
from cortex_engine.query.render import defuse, humanize_kind, item_labels, label_suffix
from cortex_engine.scope.identity import Scope
from cortex_engine.store import reports
from cortex_engine.store.database import IN_SCOPE, transaction

if TYPE_CHECKING:
    from cortex_engine.query.surfaces import Surface


@record
class Spend:
    """Injected and saved tokens over some sessions, with the per-channel split."""

    injected: int = 0
    saved: int = 0
    channels: dict[str, int] = field(default_factory=dict)

    @property
    def net(self) -> int:
        """Saved minus injected."""
        return self.saved - self.injected

    @property
    def ratio(self) -> float | None:
        """saved/injected floored to two decimals; None when nothing was injected."""
        if self.injected == 0:
            return None
        return math.floor(self.saved * 100 / self.injected) / 100

    def to_dict(self) -> dict[str, object]:
        """JSON shape."""
        return {
            "injected": self.injected,
            "saved": self.saved,
            "net": self.net,
            "ratio": self.ratio,
            "channels": dict(self.channels),
        }


def spend(conn: sqlite3.Connection, where: str, args: tuple[object, ...]) -> Spend:
    """Sum the ledger rows matching a WHERE clause; saved counts only rows that carry evidence."""
    result = Spend()
    for row in conn.execute(
        f"SELECT channel, direction, SUM(tokens) AS n, SUM(CASE WHEN evidence_ref IS NOT NULL AND evidence_ref != '' "
        f"THEN tokens ELSE 0 END) AS evidenced FROM token_ledger WHERE {where} GROUP BY channel, direction",
        args,
    ):
        if row["direction"] == "injected":
            result.injected += row["n"] or 0
            result.channels[row["channel"]] = result.channels.get(row["channel"], 0) + (row["n"] or 0)
        elif row["direction"] == "saved":
            result.saved += row["evidenced"] or 0
    return result


def fmt_tokens(n: int) -> str:
    """`12.5k` style for ≥1000, the plain number below."""
    if abs(n) >= 1000:
        text = f"{n / 1000:.1f}".rstrip("0").rstrip(".")
        return f"{text}k"
    return str(n)


def stats(conn: sqlite3.Connection, scope: Scope, db_path: str) -> dict[str, object]:
    """The stats report: this session's and the scope's spend, per-session history, and retrieval health."""
    session = conn.execute(
        "SELECT * FROM sessions WHERE scope_key=? AND parent_session_id "
        "IS NULL ORDER BY started_at DESC, rowid DESC LIMIT 1",
        (scope.key,),
    ).fetchone()
    current = None
    if session is not None:
        tree = "session_id IN (SELECT id FROM sessions WHERE id=? OR parent_session_id=?)"
        current = {
            "id": session["id"],
            "host_session_id": session["host_session_id"],
            "started_at": session["started_at"],
            **spend(conn, tree, (session["id"], session["id"])).to_dict(),
        }
    cumulative = spend(conn, "scope_key=?", (scope.key,))
    history = [
        {
            "session_id": r["id"],
            "host_session_id": r["host_session_id"],
            "started_at": r["started_at"],
            "injected": r["injected"] or 0,
        }
        for r in conn.execute(
            "SELECT s.id, s.host_session_id, s.started_at, (SELECT SUM(tokens) FROM token_ledger t "
            "WHERE t.direction='injected' AND "
            "t.session_id IN (SELECT id FROM sessions c WHERE c.id=s.id OR c.parent_session_id=s.id)) AS injected "
            "FROM sessions s WHERE s.scope_key=? AND s.parent_session_id IS NULL ORDER BY s.started_at DESC LIMIT 12",
            (scope.key,),
        )
    ]
    states = reports.items_by_state(conn, scope.key)
    never = conn.execute(
        f"SELECT COUNT(*) FROM memory_items WHERE {IN_SCOPE} AND access_count=0", (scope.key,)
    ).fetchone()[0]
    top = [
        {
            "id": r["id"],
            "kind": r["kind"],
            "access_count": r["access_count"],
            "created_at": r["created_at"],
            "text": r["text"],
            "labels": item_labels(r["kind"], r["text"], None),
        }
        for r in conn.execute(
            f"SELECT * FROM scoped_items WHERE {IN_SCOPE} AND access_count > 0 "
            "ORDER BY access_count DESC, last_accessed_at DESC, rowid DESC LIMIT 10",
            (scope.key,),
        )
    ]
    focus = conn.execute(
        "SELECT focus FROM sessions WHERE scope_key=? AND focus IS NOT NULL AND parent_session_id IS NULL "
        "ORDER BY started_at DESC LIMIT 1",
        (scope.key,),
    ).fetchone()
    sizes = {
        name: (os.path.getsize(path) if os.path.exists(path) else 0)
        for name, path in (("database", db_path), ("wal", db_path + "-wal"))
    }
    return {
        "focus": focus["focus"] if focus else None,
        "sessions": conn.execute("SELECT COUNT(*) FROM sessions WHERE scope_key=?", (scope.key,)).fetchone()[0],
        "active_notes": conn.execute(
            f"SELECT COUNT(*) FROM notes WHERE {IN_SCOPE} AND status='active'", (scope.key,)
        ).fetchone()[0],
        "session": current,
        "scope": {"key": scope.key, **cumulative.to_dict()},
        "history": history,
        "items": {"total": sum(states.values()), "by_state": states, "never_retrieved": never, "most_retrieved": top},
        "database_bytes": sizes["database"],
        "wal_bytes": sizes["wal"],
    }


def render_stats(report: Mapping[str, Any]) -> str:
    """The stats report as text (the same figures as --json); `report` is what `stats` returns, read field by field."""

    def block(name: str, figures: Mapping[str, Any]) -> list[str]:
        ratio = figures["ratio"]
        return [
            f"  Injected:    {fmt_tokens(figures['injected'])}",
            f"  Saved:       {fmt_tokens(figures['saved'])}",
            f"  Net:         {fmt_tokens(figures['net'])}",
            f"  Ratio:       {'—' if ratio is None else f'{ratio:.2f}×'}",
        ]

    lines = [
        f"{'Focus:':<15}{report['focus'] or 'unfocused'}",
        f"{'Sessions:':<15}{report['sessions']}",
        f"{'Active notes:':<15}{report['active_notes']}",
    ]
    session = report["session"]
    if session is None:
        lines.append(f"{'Session:':<15}no session in this scope yet")
    else:
        lines.append(f"{'Session:':<15}started {ts_min(session['started_at'])} (incl. subagents)")
        if session.get("host_session_id"):
            lines.append(f"{'  Claude Code:':<15}{session['host_session_id']} (claude --resume takes it)")
        lines.extend(block("session", session))
    lines.append(f"{'Scope:':<15}cumulative over this scope key")
    lines.extend(block("scope", report["scope"]))
    if report["scope"]["saved"] == 0:
        lines.append("  (saved is credited only with recorded evidence — a read that provably did not happen;")
        lines.append("   none is recorded yet, so the honest figure is zero)")
    channels = report["scope"]["channels"]
    if channels:
        lines.append("  Channels:    " + ", ".join(f"{k} {fmt_tokens(v)}" for k, v in sorted(channels.items())))
    items = report["items"]
    states = items["by_state"]
    order = ["pinned", "hot", "warm", "cold", "archived"]
    listed = ", ".join(f"{s} {states.get(s, 0)}" for s in order)
    lines.append(f"{'Memory items:':<15}{items['total']} ({listed})")
    lines.append(f"  Never retrieved: {items['never_retrieved']}")
    if not items["most_retrieved"]:
        lines.append("  Most retrieved: none yet")
    else:
        lines.append("  Most retrieved (by access count; ties: latest access, then rowid):")
        for entry in items["most_retrieved"]:
            text = collapse(defuse(entry["text"].split("\n", 1)[0]))[:100]
            marks = label_suffix(entry["kind"], entry["text"], None)  # the one label rule every surface uses
            lines.append(
                f"    {entry['access_count']}× {humanize_kind(entry['kind'])} [{ts_min(entry['created_at'])}]: "
                f"{text}{marks} — {entry['id']}"
            )
    lines.append(f"{'Database:':<15}{report['database_bytes']} bytes")
    lines.append(f"{'WAL:':<15}{report['wal_bytes']} bytes")
    return "\n".join(lines)


# -- booking: every injection is counted where it is made ------------------------------------------------------


def book(
    conn: sqlite3.Connection,
    scope_key: str,
    session_id: str | None,
    surface: Surface,
    now: str,
    *,
    reinforce: bool = False,
) -> Surface:
    """Record what a surface injected (token ledger; with `reinforce`, the retrieval log) and, with `reinforce`,
    reinforce what it showed (`memory.tiers.reinforce` says what counts as a use); one transaction."""
    if not surface.text:
        return surface
    with transaction(conn):
        _ledger(conn, session_id, scope_key, surface.channel, surface.tokens, now)
        if reinforce:
            ids = [item.id for item in surface.items]
            conn.execute(
                "INSERT INTO retrieval_log(session_id, scope_key, channel, topic, query_text, result_ids_json, "
                "total_candidates, returned_count, token_estimate, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    session_id,
                    scope_key,
                    surface.channel,
                    surface.topic,
                    surface.query,
                    json.dumps(ids),
                    surface.total_candidates,
                    len(ids),
                    surface.tokens,
                    now,
                ),
            )
            tiers.reinforce(conn, surface.items, now)
    return surface


def book_text(
    conn: sqlite3.Connection, scope_key: str, session_id: str | None, channel: str, text: str, now: str
) -> None:
    """Book text injected outside the surfaces (hook outputs) against a session; one transaction."""
    if not text:
        return
    with transaction(conn):
        _ledger(conn, session_id, scope_key, channel, estimate_tokens(text), now)


def _ledger(
    conn: sqlite3.Connection, session_id: str | None, scope_key: str, channel: str, tokens: int, now: str
) -> None:
    conn.execute(
        "INSERT INTO token_ledger(session_id, scope_key, channel, direction, tokens, timestamp) VALUES (?,?,?,?,?,?)",
        (session_id, scope_key, channel, "injected", tokens, now),
    )
