"""The main screen's footer: Textual's compact footer, but a key that does not fit is left out whole."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer

PALETTE = "command_palette"
"""Stands for the docked `^p palette` hint in `KeyFooter.yields`."""


class KeyFooter(Footer):
    """Textual's footer cuts whatever passes the right edge, mid-word (`… q Quit 1-`). This one leaves out whole
    keys instead, in the order `yields` gives, until the rest fits; the keys still work and `?` lists them all.
    With nothing left to yield, the rest is cut as before."""

    def __init__(self, yields: Iterable[str], *, compact: bool = False) -> None:
        """Args:
        yields: actions as bound (`show_tab('overview')`; `PALETTE` for the palette hint), in the order they
            give way when the keys do not fit.
        compact: Textual's compact footer.
        """
        super().__init__(compact=compact)
        self.yields = tuple(yields)

    def compose(self) -> ComposeResult:
        """Textual's keys, less those that give way."""
        widgets = list(super().compose())
        if not all(hasattr(w, "key_display") for w in widgets):  # groups and labels: as Textual lays them out
            yield from widgets
            return
        yield from fitted(widgets, self.size.width, self.yields)

    def on_resize(self) -> None:
        """A new width may fit another set of keys."""
        self.call_after_refresh(self.recompose)


def key_width(key: Widget) -> int:
    """Columns a compact footer key takes: the key, a space and the description, then its one-column margin (the
    palette hint docks right behind a one-column border instead: the same count)."""
    description = getattr(key, "description", "")
    return len(getattr(key, "key_display", "")) + (1 + len(description) if description else 0) + 1


def fitted(keys: list[Widget], width: int, yields: tuple[str, ...]) -> list[Widget]:
    """`keys` less the first of `yields`, then the next, while they take more than `width` columns (0: not laid
    out yet, all kept); a key that went before the last one may come back if it fits in the room that one left."""

    def action(key: Widget) -> str | None:
        return PALETTE if key.has_class("-command-palette") else getattr(key, "action", None)

    def fits(chosen: list[Widget]) -> bool:
        return not width or sum(key_width(key) for key in chosen) <= width

    kept = list(keys)
    gone: list[str] = []
    for name in yields:
        if fits(kept):
            break
        kept = [key for key in kept if action(key) != name]
        gone.append(name)
    for name in reversed(gone[:-1]):  # the last to go made room: an earlier one may fit back beside the rest
        back = [key for key in keys if key in kept or action(key) == name]
        if fits(back):
            kept = back
    return kept
