"""Layout at every terminal size and legibility of labels (a narrow side terminal included).

Focus never rests on a widget that is off screen; every overview pane is reachable by keyboard where the panes
stack; highlighted labels keep 4.5:1 contrast; a pane that flags something keeps its colour with focus.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from .test_tui_behaviour import SMALL, demo, drive  # noqa: F401
from .test_tui_snapshots import NOW, settle

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def _visible(app, widget) -> bool:  # noqa: ANN001
    """Whether any of the widget is on screen (not clipped away by a scrolled or too-short container)."""
    region = app.screen.find_widget(widget).visible_region
    return region.width > 0 and region.height > 0


def _cut_keys(app) -> list[str]:  # noqa: ANN001
    """The footer keys not wholly on screen (cut at the right edge, or past it)."""
    from textual.errors import NoWidget
    from textual.widgets import Footer

    footer = app.screen.query_one(Footer)
    cut = []
    for key in footer.children:
        try:
            geometry = app.screen.find_widget(key)
        except NoWidget:
            cut.append(str(key.description))
            continue
        if geometry.visible_region.width < geometry.region.width:
            cut.append(str(key.description))
    return cut


SIZES = ((80, 24), (100, 30), (120, 40))


def test_focus_is_never_on_a_hidden_widget_and_the_footer_is_rebuilt_only_when_its_keys_change(
    demo: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tab through every focusable widget of every tab, at each size the terminal is resized to: each one is on
    screen when it has focus (scrolled into view), and every key the footer shows for it is whole (a key that does
    not fit is left out, not cut: `… q Quit 1-`). Each tab is walked once round its focus chain (tab wraps), at
    most 12 presses.

    The same walk checks the footer's cost: Textual signals a binding change on every move of focus; the footer
    recomposes only when the keys it would show differ from the ones it shows (a tab switch used to rebuild it with
    the same keys several times over)."""
    from cortex_tui.widgets import key_footer
    from cortex_tui.widgets.spend_pane import SpendPane

    built: list[tuple[int, tuple[object, ...]]] = []
    compose = key_footer.KeyFooter.compose

    def counted(self: key_footer.KeyFooter):  # type: ignore[no-untyped-def]
        if self._bindings_ready:  # the first compose, before the screen's panes exist, shows no keys yet
            built.append((self.size.width, key_footer.shown_keys(self.screen)))  # a new width is a new layout
        return compose(self)

    monkeypatch.setattr(key_footer.KeyFooter, "compose", counted)

    seen: dict[tuple[int, int], set[str]] = {size: set() for size in SIZES}
    rounds: dict[tuple[int, int], list[int]] = {size: [] for size in SIZES}
    footers: dict[tuple[int, int], set[int]] = {size: set() for size in SIZES}

    async def steps(app, pilot, size: tuple[int, int]) -> None:  # noqa: ANN001
        for tab in ("1", "2", "3"):
            await pilot.press(tab)
            await settle(pilot)
            first = app.screen.focused
            for presses in range(1, 13):
                focused = app.screen.focused
                assert focused is not None
                assert _visible(app, focused), (size, tab, focused)
                assert _cut_keys(app) == [], (size, tab, focused)
                footers[size].add(len(app.screen.query_one("Footer").children))
                seen[size].add(focused.id or type(focused).__name__)
                await pilot.press("tab")
                await settle(pilot)
                if app.screen.focused is first:
                    rounds[size].append(presses)
                    break
        assert isinstance(app.screen.query_one(SpendPane), SpendPane)

    async def run() -> None:
        from cortex_tui.app import make_app

        app = make_app(demo, clock=lambda: NOW, live=False)
        async with app.run_test(size=SIZES[0]) as pilot:
            await settle(pilot)
            for size in SIZES:
                await pilot.resize_terminal(*size)
                await settle(pilot)
                assert app.size == size
                await steps(app, pilot, size)

    asyncio.run(run())
    for size in SIZES:
        assert {"contest-list", "freshness-list", "spend", "memory-table"} <= seen[size], size
        assert len(rounds[size]) == 3, size  # every tab's chain came back round to where it started
        assert len(footers[size]) > 1, size  # the footer's keys followed focus and tab
    assert len(built) >= 4  # the tabs' own keys were shown
    repeats = [n for n in range(1, len(built)) if built[n] == built[n - 1]]
    assert repeats == [], f"{len(repeats)} of {len(built)} rebuilds showed the keys already shown"


def _contrast(fg, bg) -> float:  # noqa: ANN001 - textual Colors
    """WCAG contrast ratio of two opaque colours."""

    def channel(value: int) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    def luminance(color) -> float:  # noqa: ANN001
        return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)

    high, low = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_highlighted_labels_keep_contrast_and_the_contest_border_stays_red(demo: Path) -> None:  # noqa: F811
    """`[contested]` and `[stale: …]` on a focused, highlighted row reach 4.5:1; the red border survives focus.
    Opening the app writes no view setting (only a theme the operator picks is remembered)."""
    from textual.color import Color
    from textual.widgets import OptionList

    from cortex_tui.data.view_settings import settings_path
    from cortex_tui.widgets.contests_pane import ContestsPane

    async def steps(app, pilot, notes) -> None:  # noqa: ANN001
        variables = app.theme_variables
        base = Color.parse(variables["background"])
        for pane_id in ("#contests", "#freshness"):
            options = app.screen.query_one(f"{pane_id} OptionList", OptionList)
            options.focus()
            await settle(pilot)
            assert options.highlighted is not None
            background = options.get_component_styles("option-list--option-highlighted").background
            background = base.blend(background, background.a) if background.a < 1 else background
            for name in ("text-error", "text-warning"):
                assert _contrast(Color.parse(variables[name]), background) >= 4.5, (pane_id, name)
        pane = app.screen.query_one(ContestsPane)
        pane.query_one(OptionList).focus()
        await settle(pilot)
        assert pane.has_focus_within
        assert pane.styles.border_top[1] == Color.parse(variables["error"])

    drive(demo, steps, size=SMALL)
    assert not settings_path(None).exists()  # opening the app (and moving focus) writes no setting


def test_the_theme_chosen_is_remembered_and_letter_keys_confirm_a_delete_and_copy_an_id(
    demo: Path,  # noqa: F811
) -> None:
    """A theme picked in the palette is the theme of the next start (that opening the app alone writes no setting is
    checked with the contrast of highlighted labels).

    In that next start: `y` on the Memory tab copies the highlighted id; in the delete dialog `y` confirms like the
    Delete button."""
    from cortex_tui.data.view_settings import settings_path
    from cortex_tui.dialogs.delete_dialog import DeleteDialog
    from cortex_tui.widgets.memory_browser import MemoryBrowser

    from .test_tui_snapshots import highlight

    copied: list[str] = []

    async def pick(app, pilot, notes) -> None:  # noqa: ANN001
        assert app.theme == "textual-dark"
        app.theme = "nord"
        await settle(pilot)

    async def check(app, pilot, notes) -> None:  # noqa: ANN001
        assert app.theme == "nord"

        app.copy_to_clipboard = copied.append
        await pilot.press("2")
        await settle(pilot)
        await highlight(pilot, "legacy login")
        target = app.screen.query_one(MemoryBrowser).highlighted_id()
        await pilot.press("y")
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, DeleteDialog)
        await pilot.press("y")
        await settle(pilot)
        assert not isinstance(app.screen, DeleteDialog)
        assert copied == [target.split(":")[-1][:8]]  # the id shown, not the table it lives in
        assert target not in app.screen.query_one(MemoryBrowser).rows

    assert not settings_path(None).exists()
    drive(demo, pick, size=SMALL)
    notes = drive(demo, check, size=SMALL)
    assert any(title == "Memory deleted (audited)" for _, title, _ in notes)


@pytest.mark.parametrize("wrapped", [True, False])
def test_options_wrap_again_when_the_scrollbar_comes(wrapped: bool) -> None:
    """A vertical scrollbar that appears narrows the list without a resize: the options are wrapped again for the
    width beside it. Textual's own list keeps the wider wrapping, so its height (and what a snapshot shows)
    depended on whether it measured before or after the bar came; the parameter shows that it does."""
    from textual.app import App, ComposeResult
    from textual.widgets import OptionList

    from cortex_tui.widgets.wrapped_options import WrappedOptionList

    # 37 characters: one line in the list's 38 columns, two in the 36 beside the scrollbar.
    text = "the moved path was followed by git ok"
    kind = WrappedOptionList if wrapped else OptionList

    class Lists(App[None]):
        CSS = "OptionList { border: none; padding: 0; height: 6; width: 38; }"

        def compose(self) -> ComposeResult:
            yield kind(*[text] * 3, id="list")

    heights: list[int] = []

    async def run() -> None:
        app = Lists()
        async with app.run_test(size=(40, 8)) as pilot:
            options = app.query_one("#list", OptionList)
            await pilot.pause()
            assert not options.show_vertical_scrollbar and options.virtual_size.height == 3
            options.add_options([text] * 6)  # nine options: more than six rows, so the scrollbar comes
            for _ in range(5):
                await pilot.pause()
            assert options.show_vertical_scrollbar and options.scrollable_content_region.width == 36
            heights.append(options.virtual_size.height)

    asyncio.run(run())
    assert heights == [18] if wrapped else heights == [9]
