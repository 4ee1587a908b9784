"""Plain-text results shared by every adapter (CLI and MCP print the same words)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cortex_engine.base.clock import ts_min
from cortex_engine.base.errors import CortexError
from cortex_engine.base.untrusted import quote_path
from cortex_engine.memory.corrections import Deletion, Edit, MovedRewrite, Reanchor
from cortex_engine.memory.items import collapse
from cortex_engine.memory.notes import NoteWrite, Resolution
from cortex_engine.query.inspection import Inspection, quote_arg, summarize_text
from cortex_engine.query.listing import Page, short_kind_name
from cortex_engine.query.render import defuse, humanize_kind, strip_control

if TYPE_CHECKING:  # merges is imported only by the commands that use it
    from cortex_engine.memory.merges import BranchScope, Promotion


ERROR_HINTS: dict[str, dict[str, str]] = {
    "cli": {
        "subject_required": "give it with --subject",
        "not_found": "list ids with: cortex list-memory",
        "contested_subject": "cortex resolve <id>, or cortex resolve --subject … --replacement …",
        "id_or_subject": "a NOTE_ID argument or --subject",
        "bad_kind": "",
    },
    "mcp": {
        "subject_required": "pass the subject parameter",
        "not_found": "note ids are in cortex_note's answers; check the id",
        "contested_subject": "call cortex_resolve with note_id, or with subject and replacement",
        "id_or_subject": "pass note_id or subject",
        "bad_kind": "",
    },
}
"""How to go on after an engine error, in each adapter's own words (the engine's messages name no flag or tool)."""


def error_text(error: CortexError, adapter: str) -> str:
    """An engine error's message for one adapter (`cli` or `mcp`), with that adapter's hint when it has one."""
    hint = ERROR_HINTS.get(adapter, {}).get(error.code, "")
    return f"{error.message} ({hint})" if hint else error.message


def freshness_summary(report: Mapping[str, Any]) -> str:
    """The one sentence a freshness check ends with, on every surface (the CLI's `validate-memory`, the TUI's `v`):
    `checked 16 memories; 2 stale; 1 drifted; references: 14 exists, 2 missing, …` (drifted only when there is)."""
    checked = int(report["checked"])
    drifted = f"{report['drifted']} drifted; " if report.get("drifted") else ""
    return (
        f"checked {checked} memor{'y' if checked == 1 else 'ies'}; {report['stale']} stale; {drifted}references: "
        + ", ".join(f"{n} {state}" for state, n in report["references"].items())
    )


def contest_hint(adapter: str) -> str:
    """How to close a contest, in the adapter's words."""
    return (
        "Close it with: cortex resolve <id> once you know which one holds."
        if adapter == "cli"
        else "Close it with cortex_resolve(note_id) once you know which one holds."
    )


def short_id(item_id: str) -> str:
    """The 8 characters a person reads and types for an id (every id-taking command accepts a unique 8+ prefix)."""
    return item_id.split(":")[-1][:8]


def _cut(text: str, limit: int) -> str:
    """Collapse to one control-free line; over `limit` characters keep `limit` and add an ellipsis."""
    flat = collapse(defuse(text))
    return flat if len(flat) <= limit else flat[:limit] + "…"


def _one_line(value: object) -> str:
    """An author-supplied string (subject, alternative) as one line with no terminal control characters."""
    return collapse(defuse(str(value)))


def note_written(result: NoteWrite, adapter: str = "mcp") -> str:
    """`Noted (<kind>[<subject>]) [<ts>]: <content>`, the new note's id, and the contest report when there is one."""
    subject = f"[{_one_line(result.subject)}]" if result.subject else ""
    lines = [
        f"Noted ({result.kind}{subject}) [{ts_min(result.timestamp)}]: {_cut(result.content, 60)}",
        f"id: {result.id}",
    ]
    if result.conflicts:
        n = len(result.conflicts)
        lines.append(
            f"Contested — opposes {n} active decision{'s' if n != 1 else ''} on this subject. "
            "Both sides are now marked contested:"
        )
        lines.extend(f"  - {c.id} [{ts_min(c.timestamp)}]: {_cut(c.content, 60)}" for c in result.conflicts[:3])
        if n > 3:
            lines.append(f"  … and {n - 3} more (cortex_recall for the rest)")
        lines.append(contest_hint(adapter))
    if result.superseded:
        n = len(result.superseded)
        lines.append(
            f"Superseded {n} earlier {result.kind}{'s' if n != 1 else ''} on this subject (kept, one tier cooler; "
            "not a contest: the two do not say opposite things in shared words):"
        )
        lines.extend(f"  - {note_id}" for note_id in result.superseded[:3])
        if n > 3:
            lines.append(f"  … and {n - 3} more")
    return "\n".join(lines)


def resolved(result: Resolution) -> str:
    """`Marked <kind>[<subject>] as <status>.` with the contest and replacement outcome."""
    subject = f"[{_one_line(result.subject)}]" if result.subject else ""
    text = f"Marked {result.kind}{subject} as {result.status}."
    if result.cleared_contest:
        text += " Contest closed."
    if result.replacement_id:
        text += f"\nReplaced with note {result.replacement_id}."
    if result.superseded:
        n = len(result.superseded)
        text += (
            f"\nSuperseded {n} other active {result.kind}{'s' if n != 1 else ''} on this subject: "
            f"the replacement is the one active {result.kind} on it."
        )
    return text


def memory_page(page: Page) -> str:
    """The list-memory listing: header, aligned rows, and the next page's command."""
    if page.total == 0 or not page.items:
        if page.offset and page.total:
            return f"offset {page.offset} is past the end; {page.total} item(s) match."
        return "no items match these filters."
    filters = " ".join(f"{k}={','.join(v)}" for k, v in page.filters.items()) or "none"
    end = page.offset + len(page.items)
    lines = [
        f"memory items {page.offset + 1}-{end} of {page.total} · newest "
        f"first (created_at DESC, rowid DESC) · filters: {filters}"
    ]
    rows = []
    for item in page.items:
        labels = found if isinstance(found := item.get("labels"), list) else []
        rows.append(
            (
                str(item.get("short_id") or short_id(str(item["id"]))),
                str(item["state"]),
                short_kind_name(str(item["kind"])),
                _one_line(item.get("scope", "")),
                " ".join(f"[{_one_line(label)}]" for label in labels) or "-",
                ts_min(str(item["created_at"])),
                (f"[{_one_line(item['subject'])}] " if item["subject"] else "")
                + summarize_text(defuse(str(item["text"]).split("\n", 1)[0]), 80),
            )
        )
    header = ("ID", "TIER", "KIND", "SCOPE", "LABELS", "CREATED", "TEXT")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=False)) + "  " + header[-1])
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1])
    if end < page.total:
        args = [f"--scope {quote_arg(s)}" for s in page.filters.get("scope", [])]
        if page.filters.get("kind"):
            args.append(f"--kind {quote_arg(','.join(page.filters['kind']))}")
        if page.filters.get("state"):
            args.append(f"--state {quote_arg(','.join(page.filters['state']))}")
        lines += ["", " ".join(["next page: cortex list-memory", *args, f"--limit {page.limit} --offset {end}"])]
    return "\n".join(lines)


def inspection(result: Inspection) -> str:
    """The inspect-memory report: identity, trust, conflict, references, access, corrections, text."""
    item = result.item
    lines = [f"id:         {item['id']}", f"kind:       {humanize_kind(str(item['kind']))} ({item['kind']})"]
    if item.get("subject"):
        lines.append(f"subject:    {_one_line(item['subject'])}")
    lines.append(f"scope:      {item['scope_key']}")
    if item.get("session_id"):
        host = f" (Claude Code session {item['host_session_id']})" if item.get("host_session_id") else ""
        lines.append(f"session:    {item['session_id']}{host}")
    lines += [
        f"created:    {ts_min(str(item['created_at']))}",
        f"state:      {item['state']} (importance {float(item['importance']):.2f})",  # type: ignore[arg-type]
        f"trust:      {result.trust}",
        "",
    ]
    conflict = result.conflict
    if conflict["state"] == "n/a":
        lines.append("conflict:   n/a (no note behind this item)")
    elif conflict["state"] == "unknown":
        lines.append("conflict:   unknown — this item claims a note that no longer exists")
    else:
        if conflict["state"] == "contested":
            lines.append("conflict:   contested — an unresolved contradiction on this subject")
        else:
            lines.append("conflict:   none")
        lines.append(f"status:     {conflict['status']}")
        if conflict.get("source"):
            lines.append(f"source:     imported from {_one_line(str(conflict['source']))}")
        for other in conflict["counterparts"]:  # type: ignore[attr-defined]
            lines.append(f"  contested with {other['id']} ({other['kind']}, {ts_min(other['timestamp'])})")
        if conflict["state"] == "contested" and not conflict["counterparts"]:
            lines.append("  no counterpart found in this scope — the contest may be stale")
        alternatives = found if isinstance(found := conflict.get("alternatives"), list) else []
        alts = ", ".join(_one_line(a) for a in alternatives)
        if alts:
            lines.append(f"  already rejected: {_cut(alts, 240)}")
        if conflict.get("projection_disagrees"):
            p = conflict["projection"]
            contested, superseded = str(p["contested"]).lower(), str(p["superseded"]).lower()  # type: ignore[index]
            lines.append(
                f"  ⚠ projection disagrees with the stored note: text reads contested={contested}, "
                f"superseded={superseded}"
            )
    lines += ["", "references:"]
    if not result.references:
        lines.append("  none")
    for ref in result.references:
        moved = f" → {ref['moved_to']}" if ref["moved_to"] else ""
        lines.append(f"  {str(ref['status']).ljust(9)}{ref['path']}{moved}")
    if result.anchors:
        lines += ["", "anchors:"]
    for anchor in result.anchors:
        rec, cur = anchor["recorded"], anchor["current"]
        where = f"lines {rec['start']}-{rec['end']}, hash {rec['hash']}"  # type: ignore[index]
        if rec["head"]:  # type: ignore[index]
            where += f", at {str(rec['head'])[:12]}"  # type: ignore[index]
        lines.append(f"  {str(anchor['status']).ljust(9)}{anchor['anchor']} (recorded {where})")
        if cur["start"] is not None:  # type: ignore[index]
            now = f"{cur['path']} lines {cur['start']}-{cur['end']}, hash {cur['hash']}"  # type: ignore[index]
            lines.append(f"           now {now}")
        if anchor.get("moved_to"):
            lines.append(f"           moved to {anchor['moved_to']}")
        if anchor["changed_in"]:
            lines.append(f"           changed in {strip_control(str(anchor['changed_in']))}")
        for diff_line in anchor["diff"]:  # type: ignore[attr-defined]
            lines.append(f"           {strip_control(str(diff_line))}")
    access = result.access
    last = ts_min(str(access["last"])) if access["last"] else "never"
    lines += ["", "access history:", f"  count {access['count']}, last {last}"]
    recent = access["recent"]
    if not recent:
        lines.append("  no recorded retrievals")
    for entry in recent:  # type: ignore[attr-defined]
        lines.append(f"  {ts_min(entry['at'])}  {collapse(strip_control(entry['topic'] or ''))}")
    lines.append(
        "  (showing at most 10; cortex gc also prunes the retrieval log — the access count is the durable figure)"
    )
    if result.corrections:
        lines += ["", "corrections:"]
        for corr in result.corrections:
            lines.append(f"  {ts_min(corr['at'])}  {corr['operation']}")  # type: ignore[arg-type]
            lines.append(f"    was: {summarize_text(strip_control(str(corr['prior_text'])))}")
    lines += ["", "text:", strip_control(str(item["text"]))]
    return "\n".join(lines)


def edited(result: Edit) -> str:
    """What an edit did."""
    return (
        f"edited {result.id}\nreferences: {result.references} re-extracted\n"
        "(the prior text is kept in the audit log; see inspect-memory)"
    )


def reanchored(result: Reanchor) -> str:
    """What a re-anchor did (the CLI and the MCP tool print the same words)."""
    moved = ", ".join(f"{a['anchor']} (lines {a['start']}-{a['end']})" for a in result.anchors)
    return f"re-anchored {result.id}: {moved}\n(the prior anchor is kept in the audit log; see inspect-memory)"


def rewrote_moved(result: MovedRewrite) -> str:
    """What rewriting moved references did: each old path and its new one."""
    moves = ", ".join(f"{strip_control(str(m['from']))} → {strip_control(str(m['to']))}" for m in result.moves)
    return (
        f"rewrote {result.id}: {moves}\nreferences: {result.edit.references} re-extracted\n"
        "(the prior text is kept in the audit log; see inspect-memory)"
    )


def deletion(result: Deletion) -> str:
    """A delete preview, or the record of a delete."""
    if not result.deleted:
        lines = [
            "preview only — nothing has been deleted.",
            f"id:         {result.id}",
            f"kind:       {humanize_kind(result.kind)} ({result.kind})",
        ]
        if result.subject:
            lines.append(f"subject:    {_one_line(result.subject)}")
        lines += [f"scope:      {result.scope_key}", f"references: {result.references} will be removed with it"]
        if result.source:
            lines.append(f"source row: {result.source} will be deleted")
        if result.contested:
            lines.append(f'contest:    deleting this ends the contest on "{_one_line(result.subject)}"')
        lines += ["text:", strip_control(result.text), "", f"to delete: cortex delete-memory {result.id} --yes"]
        return "\n".join(lines)
    lines = [f"deleted {result.id}"]
    if result.source:
        lines.append(f"  source row: {result.source}")
    if result.contested:
        lines.append(f'  cleared the contest on "{_one_line(result.subject)}"')
    lines.append("  the prior text is kept in the audit log (memory_corrections)")
    return "\n".join(lines)


def promoted(branch: str, done: list[Promotion], dry_run: bool) -> str:
    """What `cortex promote` did (or, with --dry-run, would do), one line per note."""
    name = quote_path(branch)
    if not done:
        return f"Nothing to promote from {name}: every active note of it is already here (or it has none)."
    verb = "Would promote" if dry_run else "Promoted"
    lines = [f"{verb} {len(done)} note{'s' if len(done) != 1 else ''} from {name}:"]
    for p in done:
        subject = f"[{_one_line(p.subject)}] " if p.subject else ""
        extra = ""
        if p.contests:
            extra += f" — contests {len(p.contests)}"
        if p.supersedes:
            extra += f" — supersedes {len(p.supersedes)}"
        lines.append(f"  - {p.kind} [{ts_min(p.timestamp)}]: {subject}{_cut(p.content, 60)}{extra}")
    return "\n".join(lines)


def branch_scopes(scopes: list[BranchScope]) -> str:
    """The `cortex branches` table: one scope a line."""
    if not scopes:
        return "The store holds no scopes yet."
    lines = [f"{'':2}{'scope':<28} {'notes':>5} {'contests':>8}  {'last activity':<17}  {'in git':<6}  merged into"]
    for s in scopes:
        git = "-" if s.exists_in_git is None else ("yes" if s.exists_in_git else "no")
        last = ts_min(s.last_activity) if s.last_activity else "-"
        merged = ", ".join(_one_line(m) for m in s.merged_into) or "-"
        lines.append(
            f"{'* ' if s.current else '  '}{_cut(s.label, 27):<28} {s.notes:>5} {s.open_contests:>8}  "
            f"{last:<17}  {git:<6}  {merged}"
        )
    return "\n".join(lines)


def suggestions(result: dict[str, object]) -> str:
    """suggest-notes as text: one line per suggestion with its confidence, and how to save one."""
    items = found if isinstance(found := result.get("suggestions"), list) else []
    if not result.get("session_id"):
        return "No session yet: nothing to suggest."
    if not items:
        return f"No notes to suggest from session {short_id(str(result['session_id']))}."
    lines = [f"Notes worth saving from session {short_id(str(result['session_id']))} (nothing was written):"]
    for item in items:
        subject = f"[{_one_line(item['subject'])}] " if item.get("subject") else ""
        lines.append(
            f"  {item['kind']} {subject}{_cut(str(item['content']), 100)} (confidence {float(item['confidence']):.2f})"
        )
    lines.append('Save one with: cortex note --kind KIND --subject "SUBJECT" "TEXT"')
    return "\n".join(lines)
