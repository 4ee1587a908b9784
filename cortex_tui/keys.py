"""The TUI's keys as data: a `Key` is a Textual `Binding` that also carries its command-palette title, and its
`tooltip` is the help text. The footer, the help dialog and the command palette all read the same `BINDINGS`, so a
key cannot be bound and yet missing from help or the palette."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from textual.actions import parse
from textual.binding import Binding
from textual.command import Hit, Hits
from textual.dom import DOMNode
from textual.screen import Screen
from textual.system_commands import SystemCommandsProvider


@dataclass(frozen=True)
class Key(Binding):
    """A binding that documents itself: `tooltip` says what it does (the help dialog and the palette show it)."""

    title: str = ""
    """The command palette's name for the action ('' keeps it out of the palette, e.g. Textual already lists it)."""
    live_only: bool = False
    """Offered in the palette only while the screen's `check_action` allows it (the inbox, while arrivals wait)."""


def label(binding: Binding) -> str:
    """The key as a person types it (the key itself: a footer's `key_display` such as `1-3` stands for several)."""
    names = {"slash": "/", "question_mark": "?", "left_square_bracket": "[", "right_square_bracket": "]"}
    return names.get(binding.key, binding.key)


def documented(nodes: Iterable[DOMNode | type[DOMNode]]) -> Iterator[Key]:
    """Every `Key` the nodes' classes bind (each class once, in the order given), with help text."""
    seen: set[type] = set()
    for node in nodes:
        cls = node if isinstance(node, type) else type(node)
        if cls in seen:
            continue
        seen.add(cls)
        for binding in cls.BINDINGS:
            if isinstance(binding, Key) and binding.tooltip:
                yield binding


def screen_keys(screen: Screen[Any]) -> list[Key]:
    """The keys live on a screen: its own, its widgets', then the app's."""
    return list(documented([screen, *screen.walk_children(), screen.app]))


def help_rows(keys: Iterable[Key]) -> list[tuple[str, str]]:
    """(key, what it does) for the help dialog; keys with the same help share a row (`1 2 3`)."""
    rows: dict[str, list[str]] = {}
    for key in keys:
        rows.setdefault(key.tooltip, [])
        if label(key) not in rows[key.tooltip]:
            rows[key.tooltip].append(label(key))
    return [(" ".join(labels), text) for text, labels in rows.items()]


def key_action(screen: Screen[Any], action: str) -> Callable[[], object]:
    """A callable running a bound action on the screen (or the app, for `app.` actions), as the key would."""
    namespace, name, params = parse(action)
    target: DOMNode = screen.app if namespace == "app" else screen
    return partial(getattr(target, f"action_{name}"), *params)


def words_match(query: str, *texts: str) -> bool:
    """Every word of the query is in one of the texts (case-insensitive): the palette's match on descriptions."""
    haystack = " ".join(texts).lower()
    return bool(query.split()) and all(word in haystack for word in query.lower().split())


class KeyCommands(SystemCommandsProvider):
    """Textual's system commands, found by name (fuzzy, as Textual does) or by description: `stale` finds the
    commands whose help mentions stale references, where Textual matches titles only."""

    async def search(self, query: str) -> Hits:
        """Name matches first, scored as Textual scores them; then description matches, below every name match."""
        matcher = self.matcher(query)
        for name, help_text, callback, *_ in self.app.get_system_commands(self.screen):
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
            elif words_match(query, help_text):
                yield Hit(DESCRIPTION_SCORE, name, callback, help=help_text)


DESCRIPTION_SCORE = 0.01
"""A description match ranks below any match on a command's name."""
