"""An option list whose wrapped options follow its scrollbar."""

from __future__ import annotations

from textual.widgets import OptionList


class WrappedOptionList(OptionList):
    """Textual's OptionList wraps its options once per size and forgets the wrapping only on a resize. A vertical
    scrollbar that appears (more options, a shorter pane) narrows the content by its width without a resize, so the
    options stayed wrapped for the wider list: their ends ran under the scrollbar, and the list's height (and the
    scrollbar's thumb) depended on whether the wrapping happened before or after the bar came."""

    def watch_show_vertical_scrollbar(self) -> None:
        """Wrap the options again for the width left beside (or without) the scrollbar."""
        self._clear_caches()
