"""Rendering rules a mutation run of `query/render.py` showed unheld, at their exact edges.

The packers and the line renderer as the surfaces use them: a degrading surface's last resort cut to exactly its
budget, the labels a memory line carries, the cut of a long note with its pointer.
"""

from __future__ import annotations

from cortex_engine.base.tokens import budget_chars
from cortex_engine.memory.items import project_note_text
from cortex_engine.query.render import (
    Entry,
    assemble_budgeted,
    clip,
    fits,
    humanize_kind,
    item_labels,
    label_tag,
    note_label_suffix,
    pack_degrading,
)


def test_a_surface_s_lines_fit_a_budget_up_to_its_last_character() -> None:
    assert fits(["x" * 10, "y" * 9], 5)  # 20 characters with the newline: exactly 5 tokens
    assert not fits(["x" * 10, "y" * 10], 5)
    assert fits([], 0)


def test_the_last_resort_cut_fills_the_budget_exactly() -> None:
    """The second line is cut to the room its head, its last line and their two newlines leave: no character less."""
    packed = pack_degrading(iter([(["head", "y" * 400, "z" * 50, "more"], [1, 2])]), 30)
    assert packed == (["head", "y" * 109 + "…", "more"], [1])
    assert len("\n".join(packed[0])) == budget_chars(30)


def test_a_three_line_attempt_is_cut_and_nothing_to_render_is_none() -> None:
    assert pack_degrading(iter([(["head", "y" * 400, "more"], [1])]), 10) == (["head", "y" * 29 + "…", "more"], [1])
    assert pack_degrading(iter([]), 10) is None
    assert pack_degrading(iter([(["h" * 30, "y" * 400, "m" * 30], [1])]), 10) is None  # even the cut cannot fit


def hint(count: int) -> str:
    return f"+{count} more"


def test_alternatives_are_placed_while_they_fit_to_the_last_character() -> None:
    """Each continuation costs its length and its newline: the second fits exactly in 44 characters (budget 11),
    and one character more is left out."""
    entries = [Entry("a" * 10, "b" * 10), Entry("c" * 10, "d" * 11)]
    assert assemble_budgeted(None, entries, 11, hint).text == "\n".join(["a" * 10, "b" * 10, "c" * 10, "d" * 11])
    entries = [Entry("a" * 10, "b" * 10), Entry("c" * 10, "d" * 12)]
    assert assemble_budgeted(None, entries, 11, hint).text == "\n".join(["a" * 10, "b" * 10, "c" * 10])


def test_a_lead_that_gives_way_to_the_first_line_is_cut_once() -> None:
    """A lead and a first line that both overrun share the room in one cut each: no doubled `…`, and the first
    line keeps its share."""
    lead = "L" * 12 + " [stale: missing src/aaaa.py]"
    entries = [Entry("e" * 24 + " [superseded]", None, "id1"), Entry("e" * 11)]
    assert assemble_budgeted(lead, entries, 10, hint).text == "L" * 12 + "…\n" + "e" * 24 + "…"


def test_a_room_of_one_shows_the_cut() -> None:
    assert clip("abc", 1) == "…"
    assert clip("abc", 0) == ""


def test_a_cut_label_shares_a_small_room_with_eight_characters_of_text() -> None:
    """17 characters: the text keeps 8 (7 and the `…`), the branch label the other 9, cut to its kind."""
    assert clip("a" * 20 + " (from xy)", 17) == "a" * 7 + "… (from …)"


def test_a_kind_s_name_is_everything_after_its_first_colon() -> None:
    assert humanize_kind("episode:a:b_c") == "A:b c"
    assert humanize_kind("note:decision") == "Decision"


def test_a_note_line_carries_every_status_label_its_item_has() -> None:
    """The line's labels are the item's labels, whichever combination the projection holds."""
    for conflict in (False, True):
        for status in ("active", "resolved", "superseded"):
            text = project_note_text("decision", "use wal mode", "db", None, conflict, status, None)
            shown = note_label_suffix("note:decision", text)
            assert [label_tag(part.strip("[]()")) for part in shown.split()] == item_labels("note:decision", text, None)
    text = project_note_text("decision", "use wal mode", "db", None, True, "resolved", None)
    assert note_label_suffix("note:decision", text) == " [contested] (resolved)"
