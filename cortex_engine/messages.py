"""Plain-text results shared by every adapter (CLI and MCP print the same words)."""

from __future__ import annotations

from .clock import ts_min
from .inspection import Deletion, Edit, Inspection, Page, quote_arg, summarize_text
from .memory import collapse
from .notes import NoteWrite, Resolution
from .render import humanize_kind, strip_control


def _cut(text: str, limit: int) -> str:
    """Collapse to one control-free line; over `limit` characters keep `limit` and add an ellipsis."""
    flat = collapse(strip_control(text))
    return flat if len(flat) <= limit else flat[:limit] + "…"


def _one_line(value: object) -> str:
    """An author-supplied string (subject, alternative) as one line with no terminal control characters."""
    return collapse(strip_control(str(value)))


def note_written(result: NoteWrite) -> str:
    """`Noted (<kind>[<subject>]) [<ts>]: <content>` plus the contest report when there is one."""
    subject = f"[{_one_line(result.subject)}]" if result.subject else ""
    lines = [f"Noted ({result.kind}{subject}) [{ts_min(result.timestamp)}]: {_cut(result.content, 60)}"]
    if result.conflicts:
        n = len(result.conflicts)
        lines.append(
            f"Contested — opposes {n} active decision{'s' if n != 1 else ''} on this subject. "
            "Both sides are now marked contested:"
        )
        lines.extend(f"  - {c.id} [{ts_min(c.timestamp)}]: {_cut(c.content, 60)}" for c in result.conflicts[:3])
        if n > 3:
            lines.append(f"  … and {n - 3} more (cortex_recall for the rest)")
        lines.append("Close it with cortex_resolve(note_id) once you know which one holds.")
    if result.superseded:
        n = len(result.superseded)
        lines.append(f"Superseded {n} earlier {result.kind}{'s' if n != 1 else ''} on this subject (kept, one tier cooler).")
    return "\n".join(lines)


def resolved(result: Resolution) -> str:
    """`Marked <kind>[<subject>] as <status>.` with the contest and replacement outcome."""
    subject = f"[{_one_line(result.subject)}]" if result.subject else ""
    text = f"Marked {result.kind}{subject} as {result.status}."
    if result.cleared_contest:
        text += " Contest closed."
    if result.replacement_id:
        text += f"\nReplaced with note {result.replacement_id}."
    return text


def memory_page(page: Page) -> str:
    """The list-memory listing: header, aligned rows, and the next page's command."""
    if page.total == 0 or not page.items:
        if page.offset and page.total:
            return f"offset {page.offset} is past the end; {page.total} item(s) match."
        return "no items match these filters."
    filters = " ".join(f"{k}={','.join(v)}" for k, v in page.filters.items()) or "none"
    end = page.offset + len(page.items)
    lines = [f"memory items {page.offset + 1}-{end} of {page.total} · newest first (created_at DESC, rowid DESC) · filters: {filters}"]
    id_width = max(len(str(i["id"])) for i in page.items)
    state_width = max(len(str(i["state"])) for i in page.items)
    kind_width = max(len(humanize_kind(str(i["kind"]))) for i in page.items)
    for item in page.items:
        subject = f"[{_one_line(item['subject'])}] " if item["subject"] else ""
        first = strip_control(str(item["text"]).split("\n", 1)[0])
        lines.append(
            f"{str(item['id']).ljust(id_width)}  {str(item['state']).ljust(state_width)}  "
            f"{humanize_kind(str(item['kind'])).ljust(kind_width)}  {ts_min(str(item['created_at']))}  "
            f"{subject}{summarize_text(first, 80)}"
        )
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
        lines.append(f"session:    {item['session_id']}")
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
        alts = ", ".join(_one_line(a) for a in conflict.get("alternatives", []))  # type: ignore[union-attr]
        if alts:
            lines.append(f"  already rejected: {_cut(alts, 240)}")
        if conflict.get("projection_disagrees"):
            p = conflict["projection"]
            lines.append(
                f"  ⚠ projection disagrees with the stored note: text reads contested={str(p['contested']).lower()}, "  # type: ignore[index]
                f"superseded={str(p['superseded']).lower()}"  # type: ignore[index]
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
        rec, cur = anchor["recorded"], anchor["current"]  # type: ignore[index]
        where = f"lines {rec['start']}-{rec['end']}, hash {rec['hash']}"  # type: ignore[index]
        if rec["head"]:  # type: ignore[index]
            where += f", at {str(rec['head'])[:12]}"  # type: ignore[index]
        lines.append(f"  {str(anchor['status']).ljust(9)}{anchor['anchor']} (recorded {where})")
        if cur["start"] is not None:  # type: ignore[index]
            lines.append(f"           now {cur['path']} lines {cur['start']}-{cur['end']}, hash {cur['hash']}")  # type: ignore[index]
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
    lines.append("  (showing at most 10; cortex gc also prunes the retrieval log — the access count is the durable figure)")
    if result.corrections:
        lines += ["", "corrections:"]
        for corr in result.corrections:
            lines.append(f"  {ts_min(corr['at'])}  {corr['operation']}")  # type: ignore[arg-type]
            lines.append(f"    was: {summarize_text(strip_control(str(corr['prior_text'])))}")
    lines += ["", "text:", strip_control(str(item["text"]))]
    return "\n".join(lines)


def edited(result: Edit) -> str:
    """What an edit did."""
    return f"edited {result.id}\nreferences: {result.references} re-extracted\n(the prior text is kept in the audit log; see inspect-memory)"


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
