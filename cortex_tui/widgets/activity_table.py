"""The activity table: this branch's sessions and their subagent sessions, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.text import Text
from textual import on
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from ..data.text import age, fmt_tokens, one_line, short_id
from ..keys import Key

COLUMNS = (
    ("Started", 7),
    ("Session", 10),
    ("Agent", 14),
    ("Reads", 5),
    ("Edits", 5),
    ("Cmds", 4),
    ("Fails", 5),
    ("Notes", 5),
    ("Tokens", 6),
    ("Focus", 30),
)
"""Column labels and widths; ● marks the active session; tokens are the session's own injections."""
NARROW_COLUMNS = (
    ("Started", 8),
    ("Session", 11),
    ("Agent", 11),
    ("R", 3),
    ("E", 3),
    ("C", 3),
    ("F", 3),
    ("N", 3),
    ("Tok", 5),
    ("Focus", 30),
)
"""Below NARROW_BELOW cells the counts take one-letter heads (the tooltip names them) and no cell padding (the
widths hold the gap), so at 80 columns Focus still gets about 26 cells instead of needing a sideways scroll."""
NARROW_BELOW = 100
FOCUS_MIN = 12
"""The Focus column's floor: below it the table scrolls sideways rather than show a stub."""
LEGEND = "R reads · E edits · C commands · F failures · N notes · Tok tokens injected · Focus what it worked on"


class ActivityTable(DataTable[Any]):
    """One row per session; a subagent's session sits right under the session that dispatched it."""

    DEFAULT_CSS = """
    ActivityTable { height: 1fr; }
    """
    BINDINGS = [
        Key(
            "enter",
            "select_cursor",
            "Session",
            key_display="⏎",
            tooltip="on an Activity row: that session's notes, failed commands and token spend",
        )
    ]
    """Enter opens the highlighted session (its notes, failures and token spend)."""

    @dataclass
    class Opened(Message):
        """Enter on a session row: the screen opens it."""

        session_id: str

    def __init__(self, **kwargs: Any) -> None:
        """Empty until the first snapshot."""
        super().__init__(**kwargs)
        self.sessions: dict[str, dict[str, Any]] = {}
        self.focus_width = dict(COLUMNS)["Focus"]
        """The Focus column's width: what the other columns leave of the table's width (see on_resize)."""
        self.narrow = False
        """Whether the table uses the one-letter heads (see NARROW_COLUMNS)."""
        self._shown: tuple[list[dict[str, Any]], datetime] | None = None

    def on_mount(self) -> None:
        """Columns, row cursor."""
        self.cursor_type = "row"
        self.zebra_stripes = True
        self._add_columns()

    def _add_columns(self) -> None:
        """The columns, Focus at its fitted width."""
        for label, width in self.layout_for(self.narrow):
            self.add_column(label, width=self.focus_width if label == "Focus" else width, key=label)

    def show_sessions(self, sessions: list[dict[str, Any]], now: datetime, keep: str | None = None) -> None:
        """Replace the rows, keeping the cursor on the same session (`keep`: the one it was on before the rows
        were cleared elsewhere) when it is still listed."""
        self._shown = (sessions, now)
        if keep is None:
            keep = self._cursor_session()
        self.clear()
        self.sessions = {str(row["id"]): row for row in sessions}
        children: dict[str, list[dict[str, Any]]] = {}
        for row in sessions:
            if row["parent_session_id"]:
                children.setdefault(str(row["parent_session_id"]), []).append(row)
        ids = {str(s["id"]) for s in sessions}
        for row in sessions:
            if row["parent_session_id"] and str(row["parent_session_id"]) in ids:
                continue
            self._add(row, now, child=False)
            for child in children.get(str(row["id"]), []):
                self._add(child, now, child=True)
        if keep is not None:
            try:
                self.move_cursor(row=self.get_row_index(keep))
            except RowDoesNotExist:
                self.move_cursor(row=0)  # the session is gone (gc): back to the newest

    def _cursor_session(self) -> str | None:
        """The id of the session the cursor is on (None: no rows)."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def _add(self, row: dict[str, Any], now: datetime, *, child: bool) -> None:
        """One session row."""
        agent = f"└ {row['agent_type']}" if child else str(row["agent_type"])
        session = ("● " if row["status"] == "active" else "  ") + short_id(row["id"])
        fails = str(row["failures"]) if row["failures"] else "·"
        tokens = fmt_tokens(int(row.get("tokens") or 0)) if row.get("tokens") else "·"
        cells = (
            age(row["started_at"], now) + " ago",
            session,
            agent,
            str(row["reads"]),
            str(row["edits"]),
            str(row["commands"]),
            fails,
            str(row["notes"]),
            tokens,
            one_line(row.get("focus") or ""),
        )
        self.add_row(*(Text(cell, no_wrap=True, overflow="ellipsis") for cell in cells), key=str(row["id"]))

    def on_resize(self) -> None:
        """Fit the columns to the width: Focus takes what the others leave (at least FOCUS_MIN)."""
        width = self.scrollable_content_region.width
        narrow = width < NARROW_BELOW
        padding = 0 if narrow else 1
        others = sum(w + 2 * padding for label, w in self.layout_for(narrow) if label != "Focus")
        fitted = max(FOCUS_MIN, width - others - 2 * padding)
        if (narrow, fitted) == (self.narrow, self.focus_width):
            return
        self.narrow, self.focus_width = narrow, fitted
        self.cell_padding = padding
        self.tooltip = LEGEND if narrow else None
        keep = self._cursor_session()  # the rows go with the columns: the cursor's session is read first
        self.clear(columns=True)
        self._add_columns()
        if self._shown is not None:
            self.show_sessions(*self._shown, keep=keep)

    @staticmethod
    def layout_for(narrow: bool) -> tuple[tuple[str, int], ...]:
        """The column heads and widths for a narrow or a wide table."""
        return NARROW_COLUMNS if narrow else COLUMNS

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a session: open it (notes, failures, spend in full; the row's cells are cut to fit)."""
        event.stop()
        if str(event.row_key.value) in self.sessions:
            self.post_message(self.Opened(str(event.row_key.value)))
