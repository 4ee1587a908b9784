"""The inspection beside the memory table: the text first, then trust, conflict, references, access history,
corrections."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from cortex_engine.base.clock import ts_min

from ..data.text import ago, body, clean, diff_content, humanize_kind, line, one_line, plain, scope_label, short_id
from ..events import SelectionChanged

if TYPE_CHECKING:
    from cortex_engine.results import Inspection

TRUST_STYLE = {
    "refs OK": "$success",
    "no file refs": "$foreground-muted",
    "stale refs": "$error",
    "refs moved": "$warning",
}
REF_STYLE = {"exists": "$success", "missing": "$error", "moved": "$warning", "unknown": "$foreground-muted"}
ANCHOR_STYLE = {"drifted": "$warning", "missing": "$error"}
DIFF_LINE_STYLE = {"-": "$text-error", "+": "$text-success", "@": "$text-muted"}
"""A unified diff's lines as `inspect-memory` prints them: removed, added, hunk headers."""


def shown_id(item_id: str) -> str:
    """The id a person reads, types and copies (`y`): the engine's short form, never the table it lives in."""
    from cortex_engine.results import messages

    return messages.short_id(item_id)


def _row(name: str, value: Content | str) -> Content:
    """`name       value` with the name dimmed."""
    return Content.assemble((f"{name:<11}", "dim"), value)


class InspectionView(VerticalScroll):
    """Everything `Engine.inspect_memory()` returns about the highlighted item (a read: nothing is reinforced)."""

    DEFAULT_CSS = """
    InspectionView {
        & > #inspection-text { width: 1fr; }
    }
    """
    BORDER_TITLE = "Inspection"

    def __init__(self, **kwargs: Any) -> None:
        """Nothing inspected yet."""
        super().__init__(**kwargs)
        self.corrections = 0
        """How many corrections the shown item has (the audit key applies when there are any)."""
        self.shown: tuple[str, str] | None = None
        """(item id, stored text) of the item shown: a fix made from here is refused if the text changed since."""

    def compose(self) -> ComposeResult:
        """The report."""
        yield Static(Content.from_markup("[dim]Highlight a memory to inspect it.[/]"), id="inspection-text")

    def show_message(self, text: str) -> None:
        """Show a placeholder (nothing highlighted, or the item is gone)."""
        self.border_title = Content("Inspection")
        self.query_one("#inspection-text", Static).update(Content.from_markup("[dim]$text[/]", text=text))
        self.shown = None
        self._inspected(0)

    def _inspected(self, corrections: int) -> None:
        """Remember how many corrections are shown; the screen re-checks its keys."""
        if corrections != self.corrections:
            self.corrections = corrections
            self.post_message(SelectionChanged())

    def show_inspection(self, result: Inspection, now: datetime) -> None:
        """Render the inspection."""
        item = result.item
        kind = str(item["kind"])
        subject = Content.assemble(" · ", line(item["subject"])) if item.get("subject") else Content("")
        self.border_title = Content.assemble(f"Inspection · {humanize_kind(kind)}", subject)
        # What the memory says comes first: at 80×24 the pane shows five rows, and the text is what an operator
        # highlights an item to read; the bookkeeping (id, scope, trust, conflict, references) follows it.
        self.shown = (str(item["id"]), str(item["text"]))
        lines: list[Content] = [
            plain(body(kind, str(item["text"]))),
            Content(""),
            _row("id", shown_id(str(item["id"]))),
            _row(
                "scope",
                scope_label(str(item["scope_key"]))
                + (f" · session {short_id(item['session_id'])}" if item.get("session_id") else ""),
            ),
            _row("created", f"{ts_min(str(item['created_at']))} ({ago(str(item['created_at']), now)})"),
            _row("state", f"{item['state']} (importance {float(item['importance']):.2f})"),  # type: ignore[arg-type]
            _row("trust", Content(result.trust).stylize(TRUST_STYLE.get(result.trust, "$warning"))),
            Content(""),
        ]
        lines += self._conflict(result, now)
        lines += [Content(""), Content.from_markup("[b]references[/]")]
        if not result.references:
            lines.append(Content.from_markup("  [dim]none[/]"))
        for ref in result.references:
            moved = f" → {ref['moved_to']}" if ref["moved_to"] else ""
            lines.append(
                Content.assemble(
                    "  ",
                    (f"{str(ref['status']):<8} ", REF_STYLE.get(str(ref["status"]), "")),
                    one_line(f"{ref['path']}{moved}"),
                )
            )
        lines += self._anchors(result)
        access = result.access
        lines += [
            Content(""),
            Content.from_markup(
                "[b]access history[/]  [dim]count $count, last $last[/]",
                count=str(access["count"]),
                last=ago(str(access["last"]), now) if access["last"] else "never",
            ),
        ]
        recent = access["recent"]
        if not recent:
            lines.append(Content.from_markup("  [dim]no recorded retrievals[/]"))
        for entry in recent:  # type: ignore[attr-defined]
            lines.append(Content(f"  {ts_min(entry['at'])}  {one_line(entry['topic'])}"))
        if result.corrections:
            lines += [Content(""), Content.from_markup("[b]corrections[/]")]
            for corr in result.corrections:
                lines.append(Content(f"  {ts_min(str(corr['at']))}  {corr['operation']}"))
                runs = corr.get("diff")
                if isinstance(runs, list) and runs:  # the prior words struck through, the new ones in bold
                    lines.append(Content.assemble(("    diff: ", "dim"), diff_content(runs, flat=True)))
                else:
                    lines.append(Content.from_markup("    [dim]was:[/] $text", text=one_line(corr["prior_text"])[:160]))
            lines.append(Content.from_markup("  [dim]a: every correction as a full diff[/]"))
        self.query_one("#inspection-text", Static).update(Content("\n").join(lines))
        self.scroll_home(animate=False)
        self._inspected(len(result.corrections))

    @staticmethod
    def _anchors(result: Inspection) -> list[Content]:
        """The code each anchor pins, as `inspect-memory` reports it: held or drifted, where, and the diff."""
        if not result.anchors:
            return []
        lines = [Content(""), Content.from_markup("[b]code[/]")]
        drifted = False
        for anchor in result.anchors:
            status = str(anchor["status"])
            drifted = drifted or status == "drifted"
            rec: dict[str, Any] = anchor["recorded"]  # type: ignore[assignment]
            cur: dict[str, Any] = anchor["current"]  # type: ignore[assignment]
            lines.append(
                Content.assemble(
                    "  ",
                    (f"{status:<8} ", ANCHOR_STYLE.get(status, "")),
                    one_line(f"{anchor['anchor']} (lines {rec['start']}-{rec['end']})"),
                )
            )
            if cur["start"] is not None and (cur["start"], cur["end"]) != (rec["start"], rec["end"]):
                lines.append(Content(one_line(f"           now {cur['path']} lines {cur['start']}-{cur['end']}")))
            if anchor["changed_in"]:
                lines.append(Content.assemble(("           changed in ", "dim"), one_line(anchor["changed_in"])))
            for diff_line in anchor["diff"]:  # type: ignore[attr-defined]
                text = clean(diff_line).replace("\n", " ")  # indentation kept: it is code
                lines.append(Content.assemble("           ", (text, DIFF_LINE_STYLE.get(text[:1], ""))))
        if drifted:
            lines.append(Content.from_markup("  [dim]n: re-anchor once you checked it still holds[/]"))
        return lines

    @staticmethod
    def _conflict(result: Inspection, now: datetime) -> list[Content]:
        """The conflict section, as `inspect-memory` reports it."""
        conflict = result.conflict
        if conflict["state"] == "n/a":
            return [_row("conflict", Content.from_markup("[dim]n/a (no note behind this item)[/]"))]
        if conflict["state"] == "unknown":
            return [_row("conflict", Content.from_markup("[$warning]unknown — the note behind this item is gone[/]"))]
        lines = [
            _row(
                "conflict",
                Content.from_markup("[b $error]contested[/] — an unresolved contradiction on this subject")
                if conflict["state"] == "contested"
                else "none",
            ),
            _row("status", str(conflict["status"])),
        ]
        for other in conflict["counterparts"]:  # type: ignore[attr-defined]
            lines.append(
                Content.from_markup(
                    "           contested with [b]$id[/] ($kind, $age)",
                    id=short_id(other["id"]),
                    kind=other["kind"],
                    age=ago(other["timestamp"], now),
                )
            )
        rejected = conflict.get("alternatives")
        alternatives = ", ".join(one_line(a) for a in rejected) if isinstance(rejected, list) else ""
        if alternatives:
            lines.append(Content.from_markup("           [dim]already rejected:[/] $alts", alts=alternatives))
        if conflict.get("projection_disagrees"):
            lines.append(
                Content.from_markup("           [$warning]⚠ the projected text disagrees with the stored note[/]")
            )
        return lines
