"""The contests pane: every open contest on this branch, both sides seated together, with age and origin."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option, OptionDoesNotExist

from cortex_engine.base.labels import CONTESTED

from ..data.memory_ref import MemoryRef
from ..data.text import ago, one_line, short_id
from ..data.unseen import MARK, Unseen
from ..events import SelectionChanged

SIDE_LETTERS = "ABCDEFGH"


class ContestsPane(Vertical):
    """One option per contest; the highlighted one is what `c` resolves. A contest that opened live is marked new
    until the operator highlights it in the focused list."""

    DEFAULT_CSS = """
    ContestsPane {
        & > OptionList, & > OptionList:focus { height: 1fr; border: none; padding: 0; background: transparent; }
        &.-has-contests { border: round $error; }
    }
    """
    BORDER_TITLE = "Contests"

    def __init__(self, **kwargs: Any) -> None:
        """An empty pane until the first snapshot."""
        super().__init__(**kwargs)
        self.contests: list[dict[str, Any]] = []
        self._by_key: dict[str, dict[str, Any]] = {}
        self.unseen = Unseen()
        """Contests (by subject and sides) that opened after the first snapshot and were not highlighted yet."""
        self._now: datetime | None = None

    def compose(self) -> ComposeResult:
        """The list of contests."""
        yield OptionList(Option("loading…", disabled=True), id="contest-list")

    def show_contests(self, contests: list[dict[str, Any]], now: datetime) -> None:
        """Seat each contest's sides together, newest side first within the subject as the engine orders them.

        The highlight stays on the same contest (by subject) when it is still open, so a contest arriving live
        never moves what `c` would resolve; when it is gone, the highlight stays at the same place.
        """
        options = self.query_one("#contest-list", OptionList)
        keep_id = options.highlighted_option.id if options.highlighted_option is not None else None
        keep_at = options.highlighted
        self.contests = contests
        self._by_key = {self._key(contest): contest for contest in contests}
        self._now = now
        self.unseen.update(self._arrival(contest) for contest in contests)
        options.clear_options()
        if not contests:
            options.add_option(
                Option(
                    Content.from_markup(
                        "[dim]No open contests here. When a note opposes an active decision on the same subject, "
                        "both sides appear here until you resolve them (c).[/]"
                    ),
                    disabled=True,
                )
            )
        for n, contest in enumerate(contests):
            options.add_option(Option(self._prompt(contest, now), id=self._key(contest)))
            if n < len(contests) - 1:
                options.add_option(None)
        if contests:
            try:
                options.highlighted = options.get_option_index(keep_id) if keep_id else 0
            except OptionDoesNotExist:
                options.highlighted = min(keep_at or 0, len(options.options) - 1)
            while options.highlighted and options.get_option_at_index(options.highlighted).disabled:
                options.highlighted -= 1
        self._retitle()
        self.set_class(bool(contests), "-has-contests")
        self._see_highlighted()

    def _prompt(self, contest: dict[str, Any], now: datetime) -> Content:
        """The subject (marked new while unseen), then each side with its kind, age and session."""
        lines = [
            Content.assemble(
                MARK if self._arrival(contest) in self.unseen else "",
                (CONTESTED + " ", "bold $text-error"),
                (one_line(contest["subject"]) or "(no subject)", "bold"),
            )
        ]
        for letter, side in zip(SIDE_LETTERS, contest["sides"], strict=False):
            lines.append(Content.assemble(f"  {letter}  ", one_line(side["content"])).stylize("bold", 2, 3))
            lines.append(
                Content(
                    f"     {side['kind']} · {ago(side['timestamp'], now)} · from session {short_id(side['session_id'])}"
                ).stylize("dim")
            )
        return Content("\n").join(lines)

    def _retitle(self) -> None:
        title = f"Contests · {len(self.contests)} open" if self.contests else "Contests · none open"
        self.border_title = Content(title + (f" · {len(self.unseen)} new" if self.unseen else ""))

    def _see_highlighted(self) -> None:
        """The highlighted contest of a focused list has been seen: drop its marker."""
        options = self.query_one("#contest-list", OptionList)
        option = options.highlighted_option
        contest = self._by_key.get(option.id or "") if option is not None and self.screen.focused is options else None
        if contest is not None and self._now is not None and self.unseen.see(self._arrival(contest)):
            options.replace_option_prompt(self._key(contest), self._prompt(contest, self._now))
            self._retitle()

    def on_descendant_focus(self) -> None:
        """Focus came to the list: what it highlights is seen."""
        self._see_highlighted()
        self.post_message(SelectionChanged())

    def selected_contest(self) -> dict[str, Any] | None:
        """The highlighted contest, or the first one."""
        if not self.contests:
            return None
        option = self.query_one("#contest-list", OptionList).highlighted_option
        if option is not None and option.id in self._by_key:
            return self._by_key[option.id]
        return self.contests[0]

    @staticmethod
    def _key(contest: dict[str, Any]) -> str:
        """A contest's identity in the list: its subject (a scope has one open contest per subject)."""
        return "contest:" + str(contest["subject"])

    @classmethod
    def _arrival(cls, contest: dict[str, Any]) -> str:
        """What makes a contest news: its subject and its sides (a new side on an open subject arrives again)."""
        return cls._key(contest) + "|" + ",".join(sorted(str(side["id"]) for side in contest["sides"]))

    def selected_memory(self) -> MemoryRef | None:
        """The first side of the highlighted contest (resolve acts on the whole contest)."""
        contest = self.selected_contest()
        if contest is None:
            return None
        side = contest["sides"][0]
        return MemoryRef(
            str(side["item_id"]), str(side["id"]), one_line(contest["subject"]), contest=True, editable=False
        )

    @on(OptionList.OptionHighlighted, "#contest-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Mark it seen; tell the screen which keys now apply."""
        event.stop()
        self._see_highlighted()
        self.post_message(SelectionChanged())
