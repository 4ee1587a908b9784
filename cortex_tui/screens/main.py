"""The main screen: header, the Overview / Memory / Activity tabs, and the keys that act on memory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, TabbedContent, TabPane
from textual.worker import Worker, get_current_worker

from cortex_engine.base.errors import CortexError
from cortex_engine.base.labels import reference

from ..data.memory_ref import MemoryRef
from ..data.text import clean, one_line
from ..events import SelectionChanged
from ..failures import report_worker_failure
from ..keys import Key
from ..widgets.activity_table import ActivityTable
from ..widgets.brief_pane import BriefPane
from ..widgets.contests_pane import ContestsPane
from ..widgets.freshness_pane import FreshnessPane
from ..widgets.inspection_view import InspectionView, shown_id
from ..widgets.key_footer import KeyFooter
from ..widgets.memory_browser import MemoryBrowser
from ..widgets.notice_bar import NoticeBar
from ..widgets.spend_pane import SpendPane
from ..widgets.status_header import StatusHeader

if TYPE_CHECKING:
    from cortex_engine.results import Location

    from ..app import CortexApp
    from ..data.snapshot import Snapshot

MEMORY_ACTIONS = (
    "toggle_scope",
    "next_page",
    "previous_page",
    "first_row",
    "last_row",
    "filter_text",
    "cycle_label",
    "cycle_sort",
    "reverse_sort",
)
"""Keys that act on the Memory table: shown (and live) on that tab only. Search works from every tab."""
FRESHNESS_ACTIONS = ("open_editor",)
"""Keys that act on the highlighted Freshness item: shown (and live) only while that pane has focus."""
FIXES = {"rewrite_moved": "moved", "reanchor": "drifted"}
"""Keys that fix the highlighted memory (a Freshness item or a Memory row), live while it carries that label."""
UNAVAILABLE = {
    "audit": "On the Memory tab, highlight a memory with corrections (edits, path rewrites, re-anchors).",
    "rewrite_moved": f"Highlight a memory labelled {reference('moved: a → b')} (Memory tab, or the Freshness pane).",
    "reanchor": f"Highlight a memory labelled {reference('drifted: …')} (Memory tab, or the Freshness pane).",
    "open_editor": "Highlight an item in the Freshness pane first.",
    "edit": "Highlight a memory first (Memory tab or the Freshness pane).",
    "delete": "Highlight a memory first (Memory tab or the Freshness pane).",
    "resolve": "No contest is highlighted: pick one in the Contests pane or a contested row.",
    "inbox": "Nothing waits in the inbox.",
    "next_page": "The Memory table has one page.",
    "previous_page": "The Memory table has one page.",
}
"""What a key says when it does not apply to what is highlighted (a dimmed key still answers)."""
FOOTER_YIELDS = ("filter_text", "show_tab('overview')", "app.quit", "revalidate")
"""What leaves the footer first when its keys do not fit: the Memory tab's filter keys (the filter row names them),
the tab keys (the tab bar is on screen), quit (ctrl+q quits too) and validate (seldom needed); then keys from the
right. The palette hint stays at every width: at 80 columns it is how a person learns that ctrl+p finds every
action, the keys left out included."""


class MainScreen(Screen[None]):
    """Everything about this branch's memory; keys act on the highlighted memory of the focused pane."""

    BINDINGS = [
        Key(
            "i",
            "inbox",
            "Inbox",
            title="Inbox",
            live_only=True,  # first; shown only while arrivals wait
            tooltip="the inbox, shown while arrivals wait: decision files by others and imports to accept or reject",
        ),
        Key(
            "c",
            "resolve",
            "Resolve",
            title="Resolve contest",
            tooltip="resolve the highlighted contest (keep one side, or resolve both; optional replacement)",
        ),
        Key(
            "e",
            "edit",
            "Edit",
            title="Edit memory",
            tooltip="edit the highlighted memory (audited; trailers cannot be spoofed)",
        ),
        Key(
            "d",
            "delete",
            "Delete",
            title="Delete memory",
            tooltip="delete the highlighted memory (the engine's preview first; nothing without confirming)",
        ),
        Key(
            "slash",
            "search",
            "Search",
            title="Search memory",
            tooltip="recall: search memory exactly as the agent would (any tab; down into the items, enter opens one)",
        ),
        Key(
            "s",
            "toggle_scope",
            "Scope",
            title="Switch scope",
            tooltip="switch the Memory table between this branch and every scope",
        ),
        Key(
            "v",
            "revalidate",
            "Validate",
            title="Re-validate freshness",
            tooltip="re-validate freshness: check every reference against the checkout now (stale, moved, drifted)",
        ),
        Key(
            "y",
            "copy_id",
            "Copy id",
            show=False,
            title="Copy id",
            tooltip="copy the highlighted memory's id (in the delete and edit dialogs, y confirms)",
        ),
        Key(
            "Y",
            "copy_text",
            "Copy text",
            show=False,
            title="Copy text",
            tooltip="copy the highlighted memory's text to the clipboard",
        ),
        Key(
            "o",
            "open_editor",
            "Open",
            title="Open in editor",
            tooltip="Freshness: open the item's file in $EDITOR, at the drifted span's line (the app waits for it)",
        ),
        Key(
            "m",
            "rewrite_moved",
            "Fix path",
            title="Fix moved path",
            tooltip=f"rewrite a moved path ({reference('moved: a → b')}) in the highlighted memory to its new place "
            "(audited)",
        ),
        Key(
            "n",
            "reanchor",
            "Re-anchor",
            title="Re-anchor memory",
            tooltip=f"re-anchor a memory labelled {reference('drifted: …')} to the code as it is now, once the "
            "inspection's diff shows it still holds (audited)",
        ),
        Key(
            "a",
            "audit",
            "Audit",
            title="Audit diff",
            tooltip="Memory: the highlighted memory's corrections, each edit as a word diff",
        ),
        Key(
            "u",
            "undo",
            "Undo",
            show=False,
            title="Undo last action",
            tooltip="take back the newest resolve, delete, edit or path rewrite of this scope (asks first: u again; "
            "audited, refused if what it changed has changed since)",
        ),
        # changes arrive live; r stays in help and the palette
        Key(
            "r",
            "app.refresh",
            "Refresh",
            show=False,
            title="Refresh",
            tooltip="refresh everything from the store (changes also appear live, within a second)",
        ),
        Key("question_mark", "app.help", "Help", title="Help", tooltip="this help: the keys and what the labels mean"),
        Key("q", "app.quit", "Quit", tooltip="quit"),  # the palette has Textual's own Quit
        Key(
            "1",
            "show_tab('overview')",
            "Tabs",
            key_display="1-3",
            title="Show overview",
            tooltip="the Overview tab: brief, contests, freshness (stale, moved and drifted references), spend",
        ),
        Key(
            "2",
            "show_tab('memory')",
            "Memory",
            show=False,
            title="Show memory",
            tooltip="the Memory tab: every memory item, filtered and sorted",
        ),
        Key(
            "3",
            "show_tab('activity')",
            "Activity",
            show=False,
            title="Show activity",
            tooltip="the Activity tab: sessions, their notes, failed commands and token spend",
        ),
        Key(
            "left_square_bracket",
            "previous_page",
            "Page",
            key_display="[ ]",
            title="Previous page",
            tooltip="previous / next page of the Memory table",
        ),
        Key(
            "right_square_bracket",
            "next_page",
            "Next page",
            show=False,
            title="Next page",
            tooltip="previous / next page of the Memory table",
        ),
        Key(
            "home",
            "first_row",
            "Newest",
            show=False,
            priority=True,
            title="Newest memory",
            tooltip="the newest / the oldest memory (first or last page)",
        ),
        Key(
            "end",
            "last_row",
            "Oldest",
            show=False,
            priority=True,
            title="Oldest memory",
            tooltip="the newest / the oldest memory (first or last page)",
        ),
        # last: at 80 columns the filter row says them
        Key(
            "f",
            "filter_text",
            "Filter",
            key_display="f l o",
            title="Filter memory by text",
            tooltip="filter the Memory table by text (subject or text contains it; enter applies, esc back)",
        ),
        Key(
            "l",
            "cycle_label",
            "Label",
            show=False,
            title="Filter memory by label",
            tooltip="show only contested, stale, moved, drifted or superseded memory "
            "(each press: the next label, then all)",
        ),
        Key(
            "o",
            "cycle_sort",
            "Sort",
            show=False,
            title="Sort memory",
            tooltip="sort the Memory table by its next column (or click a column header)",
        ),
        Key(
            "O",
            "reverse_sort",
            "Reverse sort",
            show=False,
            title="Reverse sort",
            tooltip="reverse the Memory table's sort",
        ),
        Key("tab", "app.focus_next", show=False, tooltip="move between panes; arrows move within one"),
    ]
    """Feature keys; the footer dims the ones that do not apply to what is highlighted. Each one's tooltip is its
    line in the help dialog and its description in the command palette (`keys.Key`)."""

    def __init__(self) -> None:
        """No snapshot shown yet."""
        super().__init__()
        self._shown: Snapshot | None = None
        """The snapshot the panes show (a new one repaints only the panes whose part changed)."""
        self._keys: tuple[bool | None, ...] = ()
        """What `check_action` said of each key when the footer was last asked to redraw."""
        self._focus_on_memory: str | None = None
        """What to focus once the Memory tab shows (a palette command run from another tab)."""

    @property
    def cortex(self) -> CortexApp:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        """Header and notices, the three tabs, footer."""
        yield StatusHeader(id="status-header")
        yield NoticeBar(id="notices")
        with TabbedContent(initial="overview", id="tabs"):
            with TabPane("Overview", id="overview"):
                with Grid(id="overview-grid"):
                    yield BriefPane(id="brief", classes="pane")
                    yield ContestsPane(id="contests", classes="pane")
                    yield FreshnessPane(id="freshness", classes="pane")
                    yield SpendPane(id="spend", classes="pane")
            with TabPane("Memory", id="memory"):
                yield MemoryBrowser(page_size=self.cortex.page_size, id="browser")
            with TabPane("Activity", id="activity"):
                yield ActivityTable(id="activity-table")
        yield KeyFooter(FOOTER_YIELDS, compact=True)

    def on_resize(self) -> None:
        """The palette hint shows at every width where it fits beside the keys (the footer drops it first)."""
        self.query_one(Footer).show_command_palette = True

    def on_mount(self) -> None:
        """Follow the app's snapshots and freshness reports (set from the load workers); keep the session age
        current."""
        self.watch(self.app, "snapshot", self._show_snapshot)
        self.watch(self.app, "freshness", self._show_freshness)
        self.set_interval(30, self._tick)

    def _tick(self) -> None:
        """Re-age the header against the clock (nothing is read from the store)."""
        snapshot = self.cortex.snapshot
        if snapshot is not None:
            self.query_one(StatusHeader).show_snapshot(snapshot, self.cortex.target, now=self.cortex.target.clock())

    def _show_snapshot(self, snapshot: Snapshot | None) -> None:
        """Fill the panes from one snapshot: only those whose part of it changed (or whose ages moved a minute)."""
        if snapshot is None:
            return
        shown, self._shown = self._shown, snapshot
        aged = shown is None or shown.now.replace(second=0, microsecond=0) != snapshot.now.replace(
            second=0, microsecond=0
        )

        def changed(*parts: str) -> bool:
            return shown is None or any(getattr(shown, part) != getattr(snapshot, part) for part in parts)

        if aged or changed("status", "contests", "info", "repo"):
            self.query_one(StatusHeader).show_snapshot(snapshot, self.cortex.target)
        if changed("info", "hooks"):
            self.query_one(NoticeBar).show_notices(snapshot.info, snapshot.hooks)
        if changed("brief"):
            self.query_one(BriefPane).show_brief(snapshot.brief)
        if aged or changed("contests"):
            self.query_one(ContestsPane).show_contests(snapshot.contests, snapshot.now)
        if changed("stats", "session_spend", "scope_spend"):
            self.query_one(SpendPane).show_snapshot(snapshot)
        if aged or changed("activity"):
            self.query_one(ActivityTable).show_sessions(snapshot.activity, snapshot.now)
        self._mark_overview()
        self._refresh_keys()

    def _show_freshness(self, freshness: tuple[dict[str, Any], dict[str, str]] | None) -> None:
        """Fill the freshness pane."""
        if freshness is not None:
            self.query_one(FreshnessPane).show_report(*freshness)
            self._mark_overview()
            self._refresh_keys()

    def _refresh_keys(self) -> None:
        """Redraw the footer only when a key became live, dimmed or hidden: it rebuilds every key when asked."""
        keys = tuple(
            self.check_action(binding.action.split("(")[0], ())
            for binding in self.BINDINGS
            if isinstance(binding, Binding)
        )
        if keys != self._keys:
            self._keys = keys
            self.refresh_bindings()

    def _mark_overview(self) -> None:
        """The Overview tab says how many contests and stale references arrived live unseen (seen from any tab)."""
        new = len(self.query_one(ContestsPane).unseen) + len(self.query_one(FreshnessPane).unseen)
        tab = self.query_one("#tabs", TabbedContent).get_tab("overview")
        label = Content.assemble("Overview", (f" ● {new} new", "bold $accent") if new else "")
        if tab.label != label:
            tab.label = label

    # -- selection -----------------------------------------------------------------------------------

    def _active_tab(self) -> str:
        return self.query_one("#tabs", TabbedContent).active

    def selection(self) -> MemoryRef | None:
        """The highlighted memory of the focused pane (or of the Memory table on the Memory tab)."""
        node: Widget | None = self.focused
        while node is not None and node is not self:
            picker = getattr(node, "selected_memory", None)
            if callable(picker):
                return picker()  # type: ignore[no-any-return]
            node = node.parent  # type: ignore[assignment]
        if self._active_tab() == "memory":
            return self.query_one(MemoryBrowser).selected_memory()
        return None

    def contest_for(self, memory: MemoryRef | None) -> dict[str, Any] | None:
        """The contest `c` resolves: the selection's, else the highlighted one on the Overview."""
        snapshot = self.cortex.snapshot
        if snapshot is None:
            return None
        if memory is not None and memory.note_id:
            found = snapshot.contest_of(memory.note_id)
            if found is not None:
                return found
        if self._active_tab() == "overview":
            return self.query_one(ContestsPane).selected_contest()
        return None

    @on(SelectionChanged)
    def _selection_changed(self, event: SelectionChanged) -> None:
        """A pane's highlight moved: the footer re-checks which keys apply; what was seen is no longer news."""
        event.stop()
        self._mark_overview()
        self._refresh_keys()

    @on(ActivityTable.Opened)
    def _session_opened(self, event: ActivityTable.Opened) -> None:
        """Enter on an Activity row: the session's notes, failures and token spend."""
        event.stop()
        from ..dialogs.session_dialog import SessionDialog

        self.app.push_screen(SessionDialog(event.session_id, self.cortex.target.clock()))

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """Focus the main widget of the tab, so its keys apply at once."""
        target = {"overview": "#contest-list", "memory": "#memory-table", "activity": "#activity-table"}.get(
            event.pane.id or ""
        )
        if event.pane.id == "memory" and self._focus_on_memory:
            target, self._focus_on_memory = self._focus_on_memory, None
        if target:
            self.query_one(target).focus()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Memory-tab keys only on that tab; edit/delete/resolve dimmed when nothing they act on is highlighted."""
        if action == "inbox":  # hidden (not dimmed) when nothing waits: the footer is unchanged for most stores
            return self.cortex.snapshot is not None and self.cortex.snapshot.inbox > 0
        if action in ("next_page", "previous_page") and self._active_tab() == "memory":
            browser = self.query_one(MemoryBrowser)
            return browser.total > browser.page_size  # one page: the keys would do nothing (and crowd the footer)
        if action in MEMORY_ACTIONS:
            return self._active_tab() == "memory"
        if action in ("edit", "delete"):
            memory = self.selection()
            return True if memory is not None and memory.editable else None
        if action == "resolve":
            return True if self.contest_for(self.selection()) is not None else None
        if action in FIXES:
            memory = self.selection()
            return memory is not None and memory.has_label(FIXES[action])
        if action in FRESHNESS_ACTIONS:
            return self._freshness_item() is not None
        if action == "audit":
            return self._active_tab() == "memory" and self.query_one(InspectionView).corrections > 0
        return True

    def _freshness_item(self) -> dict[str, Any] | None:
        """The highlighted Freshness item, while that pane has focus."""
        pane = self.query_one(FreshnessPane)
        return pane.selected_item() if pane.has_focus_within else None

    # -- actions -------------------------------------------------------------------------------------

    def action_inbox(self) -> None:
        """Open the inbox: what arrived from outside, to accept or reject."""
        from .inbox import InboxScreen

        self.app.push_screen(InboxScreen())

    def action_show_tab(self, tab: str) -> None:
        """Switch tab."""
        self.query_one("#tabs", TabbedContent).active = tab

    def action_resolve(self) -> None:
        """Open the resolve dialog for the highlighted contest."""
        contest = self.contest_for(self.selection())
        if contest is None or self.cortex.snapshot is None:
            self.notify(
                "No contest is highlighted: pick one in the Contests pane or a contested row.",
                title="Resolve",
                severity="warning",
            )
            return
        from ..dialogs.resolve_dialog import ResolveDialog  # dialogs load on first use (faster first paint)

        self.app.push_screen(ResolveDialog(contest, self.cortex.snapshot.now), self._resolved)

    def _resolved(self, outcome: str | None) -> None:
        if outcome is None:
            self.notify("Contest left open: nothing was changed.", title="Resolve")
            return
        self.notify(clean(outcome), title="Contest resolved", markup=False)
        self.cortex.request_reload("resolve")

    def action_edit(self) -> None:
        """Open the editor on the highlighted memory."""
        memory = self.selection()
        if memory is None or not memory.editable:
            self.notify(
                "Highlight a memory first (Memory tab or the Freshness pane).", title="Edit", severity="warning"
            )
            return
        from ..dialogs.edit_dialog import EditDialog

        self.app.push_screen(EditDialog(memory), self._edited)

    def _edited(self, outcome: str | None) -> None:
        if outcome is None:
            self.notify("Edit cancelled: nothing was changed.", title="Edit")
            return
        self.notify(clean(outcome), title="Memory edited (audited)", markup=False)
        self.cortex.request_reload("edit")

    def action_delete(self) -> None:
        """Preview deleting the highlighted memory; the dialog confirms."""
        memory = self.selection()
        if memory is None or not memory.editable:
            self.notify(
                "Highlight a memory first (Memory tab or the Freshness pane).", title="Delete", severity="warning"
            )
            return
        from ..dialogs.delete_dialog import DeleteDialog

        self.app.push_screen(DeleteDialog(memory), self._deleted)

    def _deleted(self, outcome: str | None) -> None:
        if outcome is None:
            self.notify("Delete cancelled: nothing was deleted.", title="Delete")
            return
        self.notify(clean(outcome), title="Memory deleted (audited)", markup=False)
        self.cortex.request_reload("delete")

    def action_search(self) -> None:
        """Recall, as the agent would."""
        from ..dialogs.search_dialog import SearchDialog

        self.app.push_screen(SearchDialog(), self._searched)

    @on(FreshnessPane.Picked)
    def _freshness_picked(self, event: FreshnessPane.Picked) -> None:
        """Enter on a Freshness item: the memory itself, in the Memory tab."""
        event.stop()
        self._searched(event.item_id)

    def _searched(self, item_id: str | None) -> None:
        """Open the picked item in the Memory tab, on whichever page holds it."""
        if item_id:
            self.action_show_tab("memory")
            self.query_one(MemoryBrowser).reveal(item_id)
            self.query_one("#memory-table").focus()

    def action_toggle_scope(self) -> None:
        """This branch ↔ all scopes."""
        browser = self.query_one(MemoryBrowser)
        browser.all_scopes = not browser.all_scopes

    def action_next_page(self) -> None:
        """Next page of the table."""
        if not self.query_one(MemoryBrowser).next_page():
            self.notify("This is the last page.", title="Memory", timeout=2)

    def action_previous_page(self) -> None:
        """Previous page of the table."""
        if not self.query_one(MemoryBrowser).previous_page():
            self.notify("This is the first page.", title="Memory", timeout=2)

    def action_first_row(self) -> None:
        """The newest item: first page, first row."""
        self.query_one(MemoryBrowser).jump(to_end=False)

    def action_last_row(self) -> None:
        """The oldest item: last page, last row."""
        self.query_one(MemoryBrowser).jump(to_end=True)

    def _on_memory_tab(self, focus: str = "#memory-table") -> None:
        """Show the Memory tab (the palette runs its commands from any tab), focusing `focus` there."""
        if self._active_tab() == "memory":
            self.query_one(focus).focus()
        else:
            self._focus_on_memory = focus
            self.action_show_tab("memory")

    def action_filter_text(self) -> None:
        """Type a text filter for the Memory table."""
        self._on_memory_tab("#text-filter")

    def action_cycle_label(self) -> None:
        """Show only the next label (contested, stale, moved, drifted, superseded), then every item again."""
        self._on_memory_tab()
        self.query_one(MemoryBrowser).cycle_label()

    def action_cycle_sort(self) -> None:
        """Sort the Memory table by its next sortable column."""
        self._on_memory_tab()
        self.query_one(MemoryBrowser).cycle_sort()

    def action_reverse_sort(self) -> None:
        """Reverse the Memory table's order."""
        self.query_one(MemoryBrowser).reverse_sort()

    def action_copy_id(self) -> None:
        """Copy the highlighted memory's id to the clipboard (the terminal's, through OSC 52)."""
        memory = self.selection()
        if memory is None:
            self.notify("Highlight a memory first.", title="Copy id", severity="warning")
            return
        shown = shown_id(memory.item_id)  # the id the inspection shows and every id-taking command accepts
        self.app.copy_to_clipboard(shown)
        self.notify(shown, title="Copied id", markup=False, timeout=3)

    def action_revalidate(self) -> None:
        """Check every reference against the checkout now."""
        self.cortex.request_freshness(announce=True)

    def action_copy_text(self) -> None:
        """Copy the highlighted memory's text (a note's words, without trailers) to the clipboard."""
        memory = self.selection()
        if memory is None:
            self.notify("Highlight a memory first.", title="Copy text", severity="warning")
            return
        self.copy_text(memory.item_id)

    @work(thread=True, exclusive=True, group="copy", exit_on_error=False, name="read text to copy")
    def copy_text(self, item_id: str) -> None:
        """Read the text in a worker thread, then copy it (terminal controls removed: a clipboard is no place for
        them)."""
        from cortex_engine.operator import editable_text

        try:
            with self.cortex.target.open() as engine:
                text = clean(editable_text(engine, item_id))
        except CortexError as exc:
            self.app.call_from_thread(self.notify, exc.message, title="Not copied", severity="error", markup=False)
            return
        self.app.call_from_thread(self._copy, text)

    def _copy(self, text: str) -> None:
        self.app.copy_to_clipboard(text)
        self.notify(f"{len(text):,} characters: {one_line(text)[:60]}", title="Copied text", markup=False, timeout=3)

    def action_open_editor(self) -> None:
        """Open the file the highlighted Freshness item refers to in $EDITOR (at the drifted span's line)."""
        item = self._freshness_item()
        if item is None:
            self.notify("Highlight an item in the Freshness pane first.", title="Open in editor", severity="warning")
            return
        self.locate(str(item["id"]))

    @work(thread=True, exclusive=True, group="locate", exit_on_error=False, name="locate reference")
    def locate(self, item_id: str) -> None:
        """Ask the engine where to look, against the checkout now (a file may have gone since the pane was drawn)."""
        try:
            with self.cortex.target.open() as engine:
                location = engine.locate_reference(item_id)
        except CortexError as exc:
            self.app.call_from_thread(
                self.notify,
                f"{exc.message} · Enter shows the memory",
                title="Nothing to open",
                severity="warning",
                markup=False,
            )
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._open_in_editor, location)

    def _open_in_editor(self, location: Location) -> None:
        """Hand the terminal to the editor (the app is suspended, then repainted), then re-check freshness."""
        import subprocess

        from textual.app import SuspendNotSupported

        from ..data.editor import EditorUnavailable, editor_command

        where = f"{location.path}:{location.line}" if location.line else location.path
        try:
            call = editor_command(location.absolute, location.line)
        except EditorUnavailable as exc:
            self.notify(f"{exc} ({where})", title="No editor", severity="warning", markup=False)
            return
        try:
            with self.app.suspend():
                code = subprocess.call(call.argv, cwd=self.cortex.target.cwd)
        except SuspendNotSupported:
            self.notify(
                f"This terminal cannot be handed to an editor; open {where} yourself.",
                title="No editor",
                severity="warning",
                markup=False,
            )
            return
        except OSError as exc:
            self.notify(
                f"{call.argv[0]} could not start: {exc.strerror or exc}",
                title="No editor",
                severity="error",
                markup=False,
            )
            return
        if code:
            self.notify(f"{call.argv[0]} exited with status {code}.", title="Editor", severity="warning", markup=False)
        elif not call.at_line and location.line:
            self.notify(
                f"Opened {location.path}; the span starts at line {location.line}.", title="Editor", markup=False
            )
        self.cortex.request_freshness()

    def _shown_text(self, item_id: str) -> str | None:
        """The text of the item as a pane showed it (a fix is refused if it changed since)."""
        shown = self.query_one(FreshnessPane).shown_text(item_id)
        inspected = self.query_one(InspectionView).shown
        if shown is None and inspected is not None and inspected[0] == item_id:
            shown = inspected[1]
        return shown

    def action_rewrite_moved(self) -> None:
        """Rewrite the highlighted item's renamed paths to where git says they went (audited)."""
        memory = self.selection()
        if memory is None or not memory.has_label("moved"):
            self.notify(UNAVAILABLE["rewrite_moved"], title="Fix moved path", severity="warning", markup=False)
            return
        self.rewrite_moved(memory.item_id, self._shown_text(memory.item_id))

    def action_reanchor(self) -> None:
        """Re-anchor the highlighted drifted memory to the code as it is now (audited)."""
        memory = self.selection()
        if memory is None or not memory.has_label("drifted"):
            self.notify(UNAVAILABLE["reanchor"], title="Re-anchor", severity="warning", markup=False)
            return
        self.reanchor(memory.item_id)

    @work(thread=True, exclusive=True, group="reanchor", exit_on_error=False, name="re-anchor memory")
    def reanchor(self, item_id: str) -> None:
        """`Engine.reanchor` in a worker thread; a refusal (nothing drifted any more) is said, not raised."""
        from cortex_engine.results import messages

        try:
            with self.cortex.target.open() as engine:
                outcome = messages.reanchored(engine.reanchor(item_id))
        except CortexError as exc:
            self.app.call_from_thread(
                self.notify, " ".join(exc.message.split()), title="Not re-anchored", severity="error", markup=False
            )
            return
        self.app.call_from_thread(self._fixed, outcome, "Re-anchored (audited)", "reanchor")

    def _fixed(self, outcome: str, title: str, reason: str) -> None:
        self.notify(clean(outcome), title=title, markup=False)
        self.cortex.request_reload(reason)

    @work(thread=True, exclusive=True, group="rewrite-moved", exit_on_error=False, name="rewrite moved paths")
    def rewrite_moved(self, item_id: str, shown: str | None) -> None:
        """`Engine.rewrite_moved` in a worker thread, refused if the memory changed since the pane showed it."""
        from cortex_engine.results import messages

        try:
            with self.cortex.target.open() as engine:
                result = engine.rewrite_moved(item_id, expected_text=shown)
        except CortexError as exc:
            self.app.call_from_thread(
                self.notify, " ".join(exc.message.split()), title="Not rewritten", severity="error", markup=False
            )
            return
        self.app.call_from_thread(self._rewritten, messages.rewrote_moved(result))

    def _rewritten(self, outcome: str) -> None:
        self.notify(clean(outcome), title="Moved path rewritten (audited)", markup=False)
        self.cortex.request_reload("rewrite-moved")

    undo_armed = False
    """A first `u` asks; the next key, if it is `u` again, takes the newest operator action back."""

    def on_key(self, event: events.Key) -> None:
        """Any other key takes the undo question back; a key that does not apply here says why (a dimmed key would
        otherwise do nothing and say nothing)."""
        if event.key != "u":
            self.undo_armed = False
        if isinstance(self.focused, Input):
            return  # typing
        keys = [b for b in self.BINDINGS if isinstance(b, Key) and b.key == event.key]
        if not keys or any(self.check_action(k.action.split("(")[0], ()) for k in keys):
            return  # nothing bound here, or one of its bindings applies (`o`: open in the editor, or sort)
        key = keys[0]
        action = key.action.split("(")[0]
        why = UNAVAILABLE.get(action)
        if why is None and action in MEMORY_ACTIONS:
            why = "This key works on the Memory tab (press 2)."
        if why is not None:
            self.notify(why, title=key.title or key.description, severity="warning", markup=False, timeout=4)

    def action_undo(self) -> None:
        """Ask, then (on `u` again) undo the newest operator action of this scope through `Engine.undo`."""
        if not self.undo_armed:
            self.undo_armed = True
            self.notify(
                "Press u again to take back the newest resolve, delete, edit or path rewrite of this scope.",
                title="Undo?",
                markup=False,
                timeout=4,
            )
            return
        self.undo_armed = False
        self.undo_last()

    @work(thread=True, exclusive=True, group="undo", exit_on_error=False, name="undo last action")
    def undo_last(self) -> None:
        """`Engine.undo` in a worker thread; a refusal (nothing to undo, or changed since) is said, not raised."""
        try:
            with self.cortex.target.open() as engine:
                outcome = engine.undo().render()
        except CortexError as exc:
            self.app.call_from_thread(
                self.notify, " ".join(exc.message.split()), title="Nothing undone", severity="warning", markup=False
            )
            return
        self.app.call_from_thread(self._undone, outcome)

    def _undone(self, outcome: str) -> None:
        self.notify(clean(outcome), title="Undone (audited)", markup=False)
        self.cortex.request_reload("undo")

    def action_audit(self) -> None:
        """Show the highlighted memory's corrections, each edit as a word diff."""
        memory = self.selection()
        if memory is None:
            self.notify("Highlight a memory first.", title="Audit", severity="warning")
            return
        from ..dialogs.audit_dialog import AuditDialog

        self.app.push_screen(AuditDialog(memory))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Unexpected failures in the screen's own workers are notified, never silent."""
        report_worker_failure(self, event)
