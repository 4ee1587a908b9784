"""The memory browser: a table of this branch's memory (or every scope's), filters, and the inspection beside it.

Filters: scope, kind and tier on the first row; a label (contested, stale, moved, drifted, superseded) and free text
on the second. Columns sort by a header click or `o` (`O` reverses); the engine filters and orders, so every page
agrees.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Container, Horizontal, Vertical
from textual.events import Resize
from textual.reactive import var
from textual.widgets import DataTable, Select, Static
from textual.widgets.data_table import ColumnKey, RowDoesNotExist
from textual.worker import Worker, get_current_worker

from cortex_engine.results import KIND_WEIGHTS, STATES

from ..data.memory_ref import MemoryRef
from ..data.text import age, first_line, humanize_kind, label_tags, one_line, scope_label, short_kind
from ..events import SelectionChanged
from ..failures import report_worker_failure
from .inspection_view import InspectionView
from .memory_filters import SORT_COLUMNS, MemoryFilters, describe_sort, next_sort

if TYPE_CHECKING:
    from cortex_engine.results import Page, PageKey

PAGE = 200
"""Rows a page lists unless the app says otherwise (`make_app(page_size=...)`)."""
ROOMY = 180
"""From this terminal width the inspection sits beside the table (the app's `-roomy` breakpoint); below, under it
(so at 160 columns the table, and its first line, take the whole width)."""
COLUMNS = (("Kind", 10), ("Tier", 4), ("Age", 4), ("Subject", 18), ("Labels", 11), ("First line", 0))
"""Column labels and widths (0: the rest of the table's width)."""
SCOPE_COLUMN = ("Scope", 12)
"""Inserted after Age when every scope is listed."""
SHRINK = (("Subject", 10), ("Scope", 8), ("Labels", 9), ("Kind", 8))
"""Which columns give up width (down to these floors) so the first line keeps `FIRST_LINE_MIN` characters."""
LABELS_MAX = 26
"""The Labels column grows to the page's longest tags (`contested superseded`), up to this, before any is cut."""
FIRST_LINE_MIN = 28
SUBJECT_MAX = 28
"""On a wide table the subject grows to this before the first line takes everything else."""


def _marked(columns: list[tuple[str, int]], sort: tuple[str, bool]) -> list[tuple[str, str, int]]:
    """(key, label, width) per column: the sorted column's label ends with ▾ (natural order) or ▴ (reversed) and is
    widened to show it; the first line gives up those cells, so the table still fits its width."""
    taken = 0
    marked = []
    for key, width in columns:
        label = key
        if SORT_COLUMNS.get(key) == sort[0]:
            label = f"{key} {'▴' if sort[1] else '▾'}"
            taken = max(0, len(label) - width)
            width += taken
        marked.append((key, label, width))
    return [(key, label, width - taken if key == "First line" else width) for key, label, width in marked]


def fit_columns(width: int, all_scopes: bool, labels: int = 0) -> list[tuple[str, int]]:
    """Column widths for a table `width` cells wide (its border and scrollbar included): nothing scrolls sideways.

    `labels` is the page's longest label tags: the Labels column takes it (up to `LABELS_MAX`) while the first line
    keeps twice `FIRST_LINE_MIN`. Fixed columns shrink to their floors before the first line drops under
    `FIRST_LINE_MIN`; the first line then takes all that is left, so it is never the column that a narrow table hides.
    """
    columns = list(COLUMNS) if not all_scopes else [*COLUMNS[:3], SCOPE_COLUMN, *COLUMNS[3:]]
    widths = dict(columns)
    spare = width - 5 - sum(w + 2 for w in widths.values()) + 2 - 2 * FIRST_LINE_MIN  # beyond two short first lines
    wanted = min(LABELS_MAX, labels) - widths["Labels"]
    if wanted > 0 and spare > 0:
        widths["Labels"] += min(wanted, spare)
    inner = width - 2 - 2 - 1  # round border, vertical scrollbar, one cell of slack
    rest = inner - sum(w + 2 for w in widths.values()) + 2  # every column pads one cell each side
    for name, floor in SHRINK:
        if rest >= FIRST_LINE_MIN:
            break
        if name in widths:
            give = min(widths[name] - floor, FIRST_LINE_MIN - rest)
            widths[name] -= give
            rest += give
    if rest > 3 * FIRST_LINE_MIN:
        grow = min(SUBJECT_MAX - widths["Subject"], rest - 3 * FIRST_LINE_MIN)
        widths["Subject"] += grow
        rest -= grow
    widths["First line"] = max(8, rest)
    return [(label, widths[label]) for label, _ in columns]


def _longest_tags(labels: dict[str, list[str]]) -> int:
    """The widest Labels cell of a page."""
    return max((len(label_tags(tags)) for tags in labels.values()), default=0)


KIND_OPTIONS = [(humanize_kind(kind), kind) for kind in sorted(KIND_WEIGHTS, key=humanize_kind)]
TIER_OPTIONS = [(state, state) for state in STATES]
SCOPE_OPTIONS = [("This branch", False), ("All scopes", True)]


@dataclass(frozen=True)
class _Row:
    """What the table knows about a listed item."""

    item_id: str
    note_id: str | None
    title: str
    labels: tuple[str, ...]


class MemoryBrowser(Vertical):
    """`Engine.list_memory()` in a table (newest first), filtered by scope, kind and tier; inspection beside it."""

    DEFAULT_CSS = """
    MemoryBrowser {
        & > #filter-bar { height: 1; }
        & > #filter-bar > Select { width: 20; margin-right: 1; }
        & > #filter-bar > #kind-filter { width: 26; }
        & > #filter-bar > #page-info { width: 1fr; content-align: right middle; color: $text-muted; }
        & > #browser-body { height: 1fr; }
    }
    """

    all_scopes: var[bool] = var(False, init=False)
    """List every scope in the store instead of what this branch reads."""
    kind: var[str | None] = var(None, init=False)
    """Only this kind (None for all)."""
    tier: var[str | None] = var(None, init=False)
    """Only this tier (None for all)."""
    label: var[str | None] = var(None, init=False)
    """Only items carrying this label (None for all)."""
    text: var[str] = var("", init=False)
    """Only items whose subject or text contains this ('' for all)."""
    sort: var[tuple[str, bool]] = var(("created", False), init=False)
    """The engine sort key and whether it is reversed (default: newest first)."""

    def __init__(self, *, page_size: int = PAGE, **kwargs: Any) -> None:
        """Empty until mounted and loaded; each page lists up to `page_size` rows."""
        super().__init__(**kwargs)
        self.page_size = page_size
        self.rows: dict[str, _Row] = {}
        self.total = 0
        self.position = 0
        """Where the shown page's first row sits in list order (0: the newest)."""
        self._at: tuple[str, PageKey | None] = ("start", None)
        """Which page to list, by key (never by offset: the last page costs what the first does): `start` from a
        row (None: the newest), `before` the page just newer than a row, or `oldest`."""
        self._keys: tuple[PageKey | None, PageKey | None] = (None, None)
        """The shown page's first row, and where the next page starts (None on the last page)."""
        self._pending_focus: str | None = None
        """An item to highlight once its page is loaded (a search hit), found by id on any page."""
        self._pending_edge: str | None = None
        """`start` or `end`: the next load goes to the first or the last page and row."""
        self._painted: tuple[object, ...] | None = None
        """What the table shows (columns and cells): an identical reload repaints nothing, so scroll stays."""
        self._shown: tuple[Page, dict[str, list[str]], datetime, bool, tuple[str, bool]] | None = None
        """The last page painted, its labels, clock, scope switch and sort (a resize repaints it)."""

    def compose(self) -> ComposeResult:
        """Filter bar, then the table and the inspection side by side."""
        with Horizontal(id="filter-bar"):
            yield Select(
                SCOPE_OPTIONS, value=False, allow_blank=False, compact=True, type_to_search=False, id="scope-filter"
            )
            yield Select(KIND_OPTIONS, prompt="All kinds", compact=True, type_to_search=False, id="kind-filter")
            yield Select(TIER_OPTIONS, prompt="All tiers", compact=True, type_to_search=False, id="tier-filter")
            yield Static("", id="page-info")
        yield MemoryFilters(id="filter-line")
        with Container(id="browser-body"):  # app.tcss: beside the table when roomy, under it otherwise
            yield DataTable(id="memory-table", cursor_type="row", zebra_stripes=True)
            yield InspectionView(id="inspection")

    def on_mount(self) -> None:
        """Reload whenever the app applies a snapshot in which memory changed (live changes included)."""
        self.watch(self.app, "memory_generation", self._store_changed, init=False)

    def _store_changed(self, _generation: int) -> None:
        """The store changed: reload the page (the inspection follows the highlighted row)."""
        self.load_page()

    # -- filters ---------------------------------------------------------------------------------

    def watch_all_scopes(self, value: bool) -> None:
        """Switch scope: back to the first page."""
        self.query_one("#scope-filter", Select).value = value
        self._refilter()

    def watch_kind(self) -> None:
        """Kind filter changed."""
        self._refilter()

    def watch_tier(self) -> None:
        """Tier filter changed."""
        self._refilter()

    def watch_label(self) -> None:
        """Label filter changed."""
        self._refilter()

    def watch_text(self) -> None:
        """Text filter changed."""
        self._refilter()

    def watch_sort(self) -> None:
        """Order changed: back to the first page."""
        self._refilter()

    def _refilter(self) -> None:
        """Filters changed: back to the newest page."""
        self._at = ("start", None)
        self.load_page()

    @on(Select.Changed, "#scope-filter")
    def _scope_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.all_scopes = bool(event.value)

    @on(Select.Changed, "#kind-filter")
    def _kind_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.kind = None if event.value is Select.NULL else str(event.value)

    @on(Select.Changed, "#tier-filter")
    def _tier_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.tier = None if event.value is Select.NULL else str(event.value)

    @on(MemoryFilters.Changed)
    def _filters_changed(self, event: MemoryFilters.Changed) -> None:
        event.stop()
        self.label, self.text = event.label, event.text

    @on(DataTable.HeaderSelected, "#memory-table")
    def _header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a column header sorts by it; a second click reverses."""
        event.stop()
        name = str(event.column_key.value or "")
        key = SORT_COLUMNS.get(name)
        if key is None:
            self.app.notify(f"The {name} column is not sortable.", title="Sort", timeout=2, markup=False)
            return
        self.sort = (key, not self.sort[1]) if self.sort[0] == key else (key, False)

    def cycle_sort(self) -> None:
        """`o`: sort by the next sortable column (in the table's order), in its natural direction."""
        columns = [label for label, _ in fit_columns(80, self.all_scopes)]
        self.sort = (next_sort(self.sort[0], columns), False)

    def reverse_sort(self) -> None:
        """`O`: the same column, the other way round."""
        self.sort = (self.sort[0], not self.sort[1])

    def cycle_label(self) -> None:
        """`l`: the next label filter."""
        self.query_one(MemoryFilters).cycle_label()

    @property
    def narrowed(self) -> bool:
        """Whether a label or text filter, or a sort other than newest first, applies."""
        return bool(self.label or self.text) or self.sort != ("created", False)

    def next_page(self) -> bool:
        """Move to the next (older) page; False when this is the last."""
        if self._keys[1] is None:
            return False
        self._at = ("start", self._keys[1])
        self.load_page()
        return True

    def previous_page(self) -> bool:
        """Move to the previous (newer) page; False on the first."""
        if not self.position or self._keys[0] is None:
            return False
        self._at = ("before", self._keys[0])
        self.load_page()
        return True

    def reveal(self, item_id: str) -> None:
        """Show an item (from a search): every scope, no filters, on whichever page holds it, highlighted."""
        self.query_one("#kind-filter", Select).clear()
        self.query_one("#tier-filter", Select).clear()
        if self.rows.get(item_id) and self.kind is None and self.tier is None and not self.narrowed:
            self._focus_row(item_id)
            return
        self._pending_focus = item_id
        self.query_one(MemoryFilters).clear()
        with self.prevent(Select.Changed):
            self.set_reactive(MemoryBrowser.kind, None)
            self.set_reactive(MemoryBrowser.tier, None)
            self.set_reactive(MemoryBrowser.label, None)
            self.set_reactive(MemoryBrowser.text, "")
            self.set_reactive(MemoryBrowser.sort, ("created", False))
            self.set_reactive(MemoryBrowser.all_scopes, True)
            self.query_one("#scope-filter", Select).value = True
        self.load_page()

    def jump(self, *, to_end: bool) -> None:
        """The newest item (first page, first row) or the oldest (last page, last row)."""
        self._pending_edge = "end" if to_end else "start"
        self._at = ("oldest", None) if to_end else ("start", None)
        self.load_page()

    # -- loading ---------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="memory", exit_on_error=False, name="list memory")
    def load_page(self) -> None:
        """List a page through `Engine.list_memory()` and label it (in a worker thread)."""
        worker = get_current_worker()
        all_scopes, kind, tier, (how, key) = self.all_scopes, self.kind, self.tier, self._at
        (sort, reverse), label, text = self.sort, self.label, self.text
        reveal, limit = self._pending_focus, self.page_size
        with self.app.target.open() as engine:  # type: ignore[attr-defined]
            filters: dict[str, Any] = {
                "scopes": None if all_scopes else engine.scope_keys,
                "kinds": [kind] if kind else None,
                "states": [tier] if tier else None,
                "labels": [label] if label else None,
                "text": text or None,
                "sort": sort,
                "reverse": reverse,
            }
            if reveal is not None:  # a reveal clears label, text and sort first: the key is newest-first
                found = engine.memory_key(
                    reveal, scopes=filters["scopes"], kinds=filters["kinds"], states=filters["states"]
                )
                if found is None:  # deleted since the search showed it
                    self.app.call_from_thread(self._gone, reveal)
                else:
                    how, key = "start", found
            page = engine.list_memory(
                **filters,
                limit=limit,
                oldest=how == "oldest",
                start=key if how == "start" else None,
                before=key if how == "before" else None,
            )
            now = engine.clock()
        if not worker.is_cancelled:
            labels = {str(item["id"]): list(item["labels"]) for item in page.items}
            self.app.call_from_thread(self._show_page, page, labels, now, all_scopes, reveal, (sort, reverse))

    def _gone(self, item_id: str) -> None:
        """A search hit that no longer exists: say so instead of highlighting some other row."""
        self._pending_focus = None
        self.app.notify(
            f"Memory {item_id} is no longer stored (deleted since the search showed it).",
            title="Not found",
            severity="warning",
            markup=False,
        )

    def _show_page(
        self,
        page: Page,
        labels: dict[str, list[str]],
        now: datetime,
        all_scopes: bool,
        revealed: str | None = None,
        sort: tuple[str, bool] = ("created", False),
    ) -> None:
        """Fill the table, keeping the highlighted item when it is still listed.

        `revealed` is the item this page was loaded to show. A page loaded for something else (a reload that
        was already on its way when a search asked to reveal an item) neither highlights nor forgets the
        pending reveal: only the page loaded for it does.
        """
        self._shown = (page, labels, now, all_scopes, sort)
        table = self.query_one("#memory-table", DataTable)
        keep = revealed or self.highlighted_id()
        edge, self._pending_edge = self._pending_edge, None
        columns = _marked(fit_columns(self._table_width(), all_scopes, _longest_tags(labels)), sort)
        rows: dict[str, _Row] = {}
        cells_by_id: list[tuple[str, list[str]]] = []
        for item in page.items:
            item_id, kind, text = str(item["id"]), str(item["kind"]), str(item["text"])
            subject = one_line(item["subject"] or "")
            item_labels = tuple(labels.get(item_id, []))
            cells = [
                short_kind(kind),
                str(item["state"]),
                age(str(item["created_at"]), now),
                subject,
                label_tags(item_labels),
                first_line(kind, text),
            ]
            if all_scopes:
                cells.insert(3, scope_label(str(item["scope_key"])))
            cells_by_id.append((item_id, cells))
            title = subject or first_line(kind, text)[:40] or humanize_kind(kind)
            note_id = str(item["note_id"]) if item["note_id"] else None
            rows[item_id] = _Row(item_id, note_id, title, item_labels)
        first = page.keys[0] if page.keys and page.offset else None  # None: the newest page, which new items join
        painted = (tuple(columns), first, page.total, tuple((i, tuple(c)) for i, c in cells_by_id))
        self.position, self._keys, self._at = page.offset, (first, page.next), ("start", first)
        if painted == self._painted and edge is None and self._pending_focus is None:
            return  # a reload that changed nothing on this page: keep the scroll, the cursor and the inspection
        same_page = self._painted is not None and self._painted[:2] == painted[:2]
        self._painted = painted
        was_at, scroll = table.cursor_row, (table.scroll_x, table.scroll_y)
        table.clear(columns=True)
        for key, label, width in columns:
            table.add_column(label, width=width, key=key)
        for item_id, cells in cells_by_id:
            table.add_row(*(Text(cell, no_wrap=True, overflow="ellipsis") for cell in cells), key=item_id)
        self.rows = rows
        self.total = page.total
        end = page.offset + len(page.items)
        info = f"{page.offset + 1:,}–{end:,} of {page.total:,} · {describe_sort(*sort)}" if page.items else "0 items"
        if page.next is not None:
            info += " · ] next"
        self.query_one("#page-info", Static).update(info)
        if not page.items:
            self.query_one(InspectionView).show_message("No memory matches these filters.")
            self.post_message(SelectionChanged())
            return
        if same_page:  # a live update of this page: the view stays where the operator left it
            table.scroll_to(*scroll, animate=False, immediate=True)
        if edge is not None:
            table.move_cursor(row=0 if edge == "start" else table.row_count - 1)
            self.inspect(self.highlighted_id() or "")
        elif keep and keep in self.rows:
            self._focus_row(keep)
        else:  # the highlighted item is gone (deleted): stay at the same place, not back at the top
            table.move_cursor(row=min(max(was_at, 0), table.row_count - 1) if keep and same_page else 0)
            self.inspect(self.highlighted_id() or "")
        if revealed is not None and self._pending_focus == revealed:
            self._pending_focus = None
        self.post_message(SelectionChanged())  # the footer's page keys depend on the total

    def _table_width(self) -> int:
        """The table's width in cells (estimated from the terminal while the tab is hidden, as app.tcss lays it out)."""
        width = self.query_one("#memory-table", DataTable).size.width
        if width:
            return width
        screen = self.app.size.width - 2
        return screen if screen < ROOMY else screen * 2 // 3

    def on_resize(self, event: Resize) -> None:
        """Refit the columns when the new width changes them."""
        if self._shown is None:
            return
        table = self.query_one("#memory-table", DataTable)
        first = table.columns.get(ColumnKey("First line")) if table.columns else None
        page, labels, now, all_scopes, sort = self._shown
        fitted = {
            key: width
            for key, _, width in _marked(fit_columns(self._table_width(), all_scopes, _longest_tags(labels)), sort)
        }
        if first is None or first.width != fitted["First line"]:
            self._show_page(page, labels, now, all_scopes, None, sort)

    def _focus_row(self, item_id: str) -> None:
        table = self.query_one("#memory-table", DataTable)
        try:
            table.move_cursor(row=table.get_row_index(item_id))
        except RowDoesNotExist:
            return
        self.inspect(item_id)

    @on(DataTable.RowHighlighted, "#memory-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Inspect the highlighted item."""
        event.stop()
        if event.row_key.value:
            self.inspect(str(event.row_key.value))
        self.post_message(SelectionChanged())

    @work(thread=True, exclusive=True, group="inspect", exit_on_error=False, name="inspect memory")
    def inspect(self, item_id: str) -> None:
        """Read `Engine.inspect_memory()` for one item (in a worker thread)."""
        if not item_id:
            return
        worker = get_current_worker()
        with self.app.target.open() as engine:  # type: ignore[attr-defined]
            result = engine.inspect_memory(item_id)
            now = engine.clock()
        if not worker.is_cancelled:
            self.app.call_from_thread(self.query_one(InspectionView).show_inspection, result, now)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Failures are notified, never silent."""
        report_worker_failure(self, event)

    # -- selection ---------------------------------------------------------------------------------

    def highlighted_id(self) -> str | None:
        """The item under the table cursor."""
        table = self.query_one("#memory-table", DataTable)
        if not table.row_count:
            return None
        value = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return str(value) if value else None

    def selected_memory(self) -> MemoryRef | None:
        """The highlighted item as the screen's keys see it."""
        item_id = self.highlighted_id()
        row = self.rows.get(item_id or "")
        if row is None:
            return None
        return MemoryRef(row.item_id, row.note_id, row.title, contest="contested" in row.labels, labels=row.labels)
