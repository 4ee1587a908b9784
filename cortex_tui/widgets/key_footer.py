"""The main screen's footer: Textual's compact footer, but a key that does not fit is left out whole."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

PALETTE = "command_palette"
"""Stands for the docked `^p palette` hint: it never gives way (at 80 columns it is what says that every action,
the keys left out included, is one search away in the palette)."""
KEPT_LONGEST = "app.help"
"""The last key to give way: `?` lists every key."""


class KeyFooter(Footer):
    """Textual's footer cuts whatever passes the right edge, mid-word (`… q Quit 1-`). This one leaves out whole
    keys instead, first in the order `yields` gives, then from the right, until the rest fits beside the palette
    hint; the keys still work, `?` lists them all and the palette finds them by name."""

    def __init__(self, yields: Iterable[str], *, compact: bool = False) -> None:
        """Args:
        yields: actions as bound (`show_tab('overview')`), in the order they give way first when the keys do not
            fit.
        compact: Textual's compact footer.
        """
        super().__init__(compact=compact)
        self.yields = tuple(yields)
        self._shown: tuple[object, ...] | None = None
        self._pending = False
        self._width = -1

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Textual recomposes the footer on every change of focus, most of which leave the same keys showing (a
        tab switch signalled it dozens of times): rebuild only when what the keys would show differs."""
        self._bindings_ready = True  # as Textual's footer: the first signal means the screen's bindings are known
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        keys = shown_keys(screen)
        if keys != self._shown:  # not shown already, nor about to be
            self._shown = keys
            self.rebuild()

    def on_resize(self) -> None:
        """A new width may fit another set of keys."""
        if self.size.width != self._width:
            self.rebuild()

    def rebuild(self) -> None:
        """Recompose once the screen has refreshed; requests made before that rebuild runs share it (it reads the
        keys and the width as they are then)."""
        if not self._pending:
            self._pending = True
            self.call_after_refresh(self._rebuild_now)

    async def _rebuild_now(self) -> None:
        self._pending = False
        await self.recompose()

    def compose(self) -> ComposeResult:
        """Textual's keys, less those that give way."""
        if self._bindings_ready:
            self._shown = shown_keys(self.screen)
        self._width = self.size.width
        widgets = list(super().compose())
        if not all(hasattr(w, "key_display") for w in widgets):  # groups and labels: as Textual lays them out
            yield from widgets
            return
        yield from fitted(widgets, self.size.width, self.yields)


def shown_keys(screen: Screen[object]) -> tuple[object, ...]:
    """What the footer's keys are made of: each shown binding's key, action, text and state, in order."""
    palette = screen.app.COMMAND_PALETTE_BINDING
    return tuple(
        (binding.key, binding.action, binding.description, enabled, tooltip, binding.group)
        for key, (_, binding, enabled, tooltip) in screen.active_bindings.items()
        if binding.show or key == palette
    )


def key_width(key: Widget) -> int:
    """Columns a compact footer key takes: the key, a space and the description, then its one-column margin (the
    palette hint docks right behind a one-column border instead: the same count)."""
    description = getattr(key, "description", "")
    return len(getattr(key, "key_display", "")) + (1 + len(description) if description else 0) + 1


def fitted(keys: list[Widget], width: int, yields: tuple[str, ...]) -> list[Widget]:
    """`keys` less the first of `yields`, then the next, then the rightmost key left (`?` help last, the palette
    hint never), while they take more than `width` columns (0: not laid out yet, all kept); a key that went before
    the last one may come back if it fits in the room that one left."""

    def action(key: Widget) -> str | None:
        return PALETTE if key.has_class("-command-palette") else getattr(key, "action", None)

    def fits(chosen: list[Widget]) -> bool:
        return not width or sum(key_width(key) for key in chosen) <= width

    named = [key for name in yields for key in keys if action(key) == name]
    rest = [key for key in reversed(keys) if key not in named and action(key) not in (PALETTE, KEPT_LONGEST)]
    order = [*named, *rest, *(key for key in keys if action(key) == KEPT_LONGEST)]
    kept = list(keys)
    gone: list[Widget] = []
    for key in order:
        if fits(kept):
            break
        kept = [k for k in kept if k is not key]
        gone.append(key)
    for key in reversed(gone[:-1]):  # the last to go made room: an earlier one may fit back beside the rest
        back = [k for k in keys if k in kept or k is key]
        if fits(back):
            kept = back
    return kept
