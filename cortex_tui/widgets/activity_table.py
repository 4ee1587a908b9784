"""The activity table: this branch's sessions and their subagent sessions, newest first."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from ..data.text import age, fmt_tokens, one_line, short_id
from ..keys import Key

COLUMNS = (("Started", 7), ("Session", 10), ("Agent", 14), ("Reads", 5), ("Edits", 5), ("Cmds", 4), ("Fails", 5),
           ("Notes", 5), ("Tokens", 6), ("Focus", 30))
"""Column labels and widths; ● marks the active session; tokens are the session's own injections."""


class ActivityTable(DataTable[Any]):
    """One row per session; a subagent's session sits right under the session that dispatched it."""

    DEFAULT_CSS = """
    ActivityTable { height: 1fr; }
    """
    BINDINGS = [Key("enter", "select_cursor", "Session", key_display="⏎",
                    tooltip="on an Activity row: that session's notes, failed commands and token spend")]
    """Enter opens the highlighted session (its notes, failures and token spend)."""

    @dataclass
    class Opened(Message):
        """Enter on a session row: the screen opens it."""

        session_id: str

    def __init__(self, **kwargs: Any) -> None:
        """Empty until the first snapshot."""
        super().__init__(**kwargs)
        self.sessions: dict[str, dict[str, Any]] = {}

    def on_mount(self) -> None:
        """Columns, row cursor."""
        self.cursor_type = "row"
        self.zebra_stripes = True
        for label, width in COLUMNS:
            self.add_column(label, width=width, key=label)

    def show_sessions(self, sessions: list[dict[str, Any]], now: datetime) -> None:
        """Replace the rows, keeping the cursor on the same session when it is still listed."""
        keep = None
        if self.row_count:
            keep = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
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

    def _add(self, row: dict[str, Any], now: datetime, *, child: bool) -> None:
        """One session row."""
        agent = f"└ {row['agent_type']}" if child else str(row["agent_type"])
        session = ("● " if row["status"] == "active" else "  ") + short_id(row["id"])
        fails = str(row["failures"]) if row["failures"] else "·"
        tokens = fmt_tokens(int(row.get("tokens") or 0)) if row.get("tokens") else "·"
        cells = (age(row["started_at"], now) + " ago", session, agent, str(row["reads"]), str(row["edits"]),
                 str(row["commands"]), fails, str(row["notes"]), tokens, one_line(row.get("focus") or ""))
        self.add_row(*(Text(cell, no_wrap=True, overflow="ellipsis") for cell in cells), key=str(row["id"]))

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a session: open it (notes, failures, spend in full; the row's cells are cut to fit)."""
        event.stop()
        if str(event.row_key.value) in self.sessions:
            self.post_message(self.Opened(str(event.row_key.value)))
