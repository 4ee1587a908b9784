"""The rendering rules a user reads, checked at their boundaries (found by mutation testing of `query/render.py`).

Each test pins a rule of `query/render` where a changed comparison, constant or word would show: the cut of a
line and of its labels, the kinds and ages as written, the snippet and alternatives caps, the budgeted packers.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cortex_engine.base.tokens import budget_chars
from cortex_engine.memory.items import project_note_text
from cortex_engine.query.render import (
    Entry,
    age_text,
    alternatives_line,
    assemble_budgeted,
    assemble_sections,
    clip,
    fit_labels,
    fits,
    humanize_kind,
    inspect_pointer,
    item_labels,
    label_suffix,
    label_tag,
    note_label_suffix,
    origin_label,
    pack_degrading,
    reference_suffix,
    render_memory_line,
    sections_trimmed,
    short_kind,
    shorten,
    snippet,
    subject_tag,
)
from cortex_engine.scope.freshness import RefVerdict, Validation

POINTER = inspect_pointer("abc")
STALE = " [stale: missing src/aaaa.py]"
TWO = " (from feature/long-branch-name)" + STALE


def note(
    content: str = "use wal mode",
    *,
    subject: str | None = None,
    alternatives: list[str] | None = None,
    conflict: bool = False,
    status: str = "active",
    origin: str | None = None,
) -> str:
    """A decision's projected text, as the store holds it."""
    return project_note_text("decision", content, subject, alternatives, conflict, status, origin)


def hint(count: int) -> str:
    """The trimmed-count hint the packers are given."""
    return f"+{count} more"


def test_clip_keeps_text_that_fits_and_cuts_what_does_not_to_exactly_its_room() -> None:
    assert clip("abc", 3) == "abc"
    assert clip("abcd", 3) == "ab…"
    assert clip("abcd efgh", 6) == "abcd…"  # the space before the cut is trimmed
    assert clip("xy", 0) == "" and clip("xy", -1) == ""


def test_clip_keeps_the_labels_whole_when_they_fit_beside_eight_characters() -> None:
    """The labels stay whole at exactly their length plus 8; one character less and they are cut like text."""
    line = "a" * 50 + " [contested]"
    assert clip(line, 20) == "a" * 7 + "… [contested]"
    assert len(clip(line, 19)) == 19 and clip(line, 19).endswith("…")
    assert clip("a" * 50 + STALE, 37) == "a" * 7 + "…" + STALE


def test_clip_cuts_labels_that_do_not_fit_keeping_half_the_room_for_the_text() -> None:
    assert clip("a" * 50 + STALE, 30) == "a" * 14 + "…" + " [stale: miss…]"
    assert clip("a" * 5 + STALE, 30) == "aaaa… [stale: missing src/aa…]"  # short text: the labels take the rest
    assert clip("a" * 20 + " (shared)", 17) == "a" * 7 + "… (shared)"  # a small room: the text keeps 8
    assert clip("a" * 20 + " (shared)", 16) == "a" * 15 + "…"


def test_clip_keeps_the_pointer_only_with_eight_characters_of_text_beside_it() -> None:
    text = "a" * 60
    assert clip(text, 8 + len(POINTER), POINTER) == "a" * 7 + "…" + POINTER
    assert clip(text, 7 + len(POINTER), POINTER) == "a" * (6 + len(POINTER)) + "…"


def test_fit_labels_cuts_each_detail_the_longest_first_and_keeps_the_kinds() -> None:
    assert fit_labels(TWO, 61) == TWO
    assert fit_labels(TWO, 60) == " (from feature/long-branch-na…)" + STALE
    assert fit_labels(TWO, 58) == " (from feature/long-branch-…)" + STALE
    assert fit_labels(TWO, 40) == " (from feature/lo…) [stale: missing sr…]"
    assert fit_labels(TWO, 21) == " (from f…) [stale: …]"
    assert fit_labels(TWO, 20) == " (from …) [stale: …]"


def test_fit_labels_keeps_the_first_labels_that_fit_when_even_the_kinds_do_not() -> None:
    tail = " [contested]" + STALE
    assert fit_labels(tail, 23) == " [contested] [stale: …]"
    assert fit_labels(tail, 22) == " [contested]"
    assert fit_labels(tail, 12) == " [contested]"
    assert fit_labels(tail, 11) == ""
    assert fit_labels(" [contested] (superseded)", 30) == " [contested] (superseded)"


@pytest.mark.parametrize(
    ("kind", "human", "short"),
    [
        ("note:decision", "Decision", "decision"),
        ("note:open_question", "Open question", "open_question"),
        ("episode:command_failure", "Command failure", "failure"),
        ("episode:session_summary", "Session summary", "summary"),
        ("episode:subagent_conclusion", "Subagent conclusion", "subagent"),
        ("episode:test_cycle", "Test cycle", "test cycle"),
        ("episode:new_thing", "New thing", "new thing"),
        ("branch_snapshot", "Snapshot", "snapshot"),
        ("project_snapshot", "Project", "project"),
        ("command_run", "Command", "command"),
        ("session_state", "Session state", "state"),
        ("file_read", "File read", "file read"),
        ("a:b:c_d", "A:b:c d", "c d"),
        ("", "", ""),
    ],
)
def test_kinds_read_as_words(kind: str, human: str, short: str) -> None:
    assert humanize_kind(kind) == human
    assert short_kind(kind) == short


def test_short_kind_of_a_note_keeps_everything_after_the_first_colon() -> None:
    assert short_kind("note:a:b") == "a:b"


def test_age_reads_today_then_days_up_to_thirty_then_the_date() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert age_text("2026-11-30T12:00:01Z", now) == "today"
    assert age_text("2026-11-30T12:00:00Z", now) == "1d ago"
    assert age_text("2026-11-29T11:00:00Z", now) == "2d ago"
    assert age_text("2026-11-01T12:00:00Z", now) == "30d ago"
    assert age_text("2026-11-01T11:59:59Z", now) == "2026-11-01"
    assert age_text("not a date", now) == "unknown age"


def test_snippet_joins_the_first_non_empty_lines_and_caps_at_260() -> None:
    assert snippet("  a  \n\n   \n b\nc\nd", 3) == "a | b | c"
    assert snippet("a\nb", 1) == "a"
    assert snippet("x" * 260, 1) == "x" * 260
    assert snippet("x" * 261, 1) == "x" * 259 + "…"


def test_shorten_collapses_and_cuts_with_an_ellipsis() -> None:
    assert shorten(" a  b\n c ", 5) == "a b c"
    assert shorten("a b c", 4) == "a b…"


def test_sections_trimmed_counts_in_words() -> None:
    assert sections_trimmed(1) == "…1 section trimmed (cortex_recall(topic) for more)"
    assert sections_trimmed(2) == "…2 sections trimmed (cortex_recall(topic) for more)"
    assert sections_trimmed(0) == "…0 sections trimmed (cortex_recall(topic) for more)"


def test_item_labels_and_the_line_suffix_name_every_status_and_origin() -> None:
    text = note(conflict=True, status="superseded", origin="from feature/x")
    assert item_labels("note:decision", text, None) == ["contested", "superseded", "from feature/x"]
    assert label_suffix("note:decision", text, None) == " [contested] (superseded) (from feature/x)"
    text = note(status="resolved", origin="shared")
    assert item_labels("note:decision", text, None) == ["resolved", "shared"]
    assert label_suffix("note:decision", text, None) == " (resolved) (shared)"
    assert item_labels("note:decision", note(), None) == []
    assert label_suffix("note:decision", note(), None) == ""


def test_item_labels_add_the_freshness_verdicts_one_by_one() -> None:
    validation = Validation(refs=(RefVerdict("a.py", "file", "missing"), RefVerdict("b.py", "file", "moved", "c.py")))
    assert item_labels("episode:command_failure", "x", validation) == ["stale: missing a.py", "moved: b.py → c.py"]
    assert reference_suffix(validation) == " [stale: missing a.py; moved: b.py → c.py]"
    fresh = Validation(refs=(RefVerdict("a.py", "file", "exists"),))
    assert item_labels("note:decision", note(), fresh) == [] and reference_suffix(fresh) == ""
    assert reference_suffix(None) == ""


def test_a_status_word_in_a_non_note_is_no_label() -> None:
    """Only a note's trailers carry status: the same trailer lines in a command's text label nothing."""
    text = note(status="resolved", origin="shared")
    assert item_labels("command_run", text, None) == []
    assert label_suffix("command_run", text, None) == ""


def test_label_tag_is_the_name_before_the_detail() -> None:
    assert label_tag("stale: missing a.py") == "stale"
    assert label_tag("contested") == "contested"
    assert label_tag("moved: a: b") == "moved"


def test_origin_label_quotes_a_name_that_is_not_plain() -> None:
    assert origin_label("note:decision", note(origin="from main")) == "from main"
    assert origin_label("note:decision", note(origin="from feat ure")) == 'from "feat ure"'
    assert origin_label("note:decision", note(origin="shared")) == "shared"
    assert origin_label("note:decision", note(origin="shared x")) == 'from "shared x"'
    assert origin_label("note:decision", note(origin="elsewhere")) == "from elsewhere"
    assert origin_label("note:decision", note(origin="from")) == "from from"
    assert origin_label("note:decision", note()) is None


def test_subject_tag_is_bracketed_cut_and_placed() -> None:
    assert subject_tag("storage") == "[storage] "
    assert subject_tag("storage", lead=True) == " [storage]"
    assert subject_tag(None) == "" and subject_tag("") == ""
    long = subject_tag("a" * 300)
    assert long.startswith("[" + "a" * 199) and long.endswith("] ") and len(long) < 210


def test_a_memory_line_per_kind() -> None:
    row = {
        "kind": "note:decision",
        "subject": "storage",
        "id": "abc",
        "created_at": "2026-12-01T10:11:12Z",
        "text": note(subject="storage", conflict=True, status="superseded", origin="from feature/x"),
    }
    stale = Validation(refs=(RefVerdict("a.py", "file", "missing"),))
    assert render_memory_line(row, None, 3) == (
        "Decision [2026-12-01 10:11Z]: [storage] use wal mode [contested] (superseded) (from feature/x)"
    )
    assert render_memory_line(row, stale, 3).endswith("(from feature/x) [stale: missing a.py]")
    other = {"text": "a\n b\n\nc", "subject": "pytest", "id": "abc", "created_at": "2026-12-01T10:11:12Z"}
    assert render_memory_line({**other, "kind": "session_state"}, stale, 2) == (
        "[session state] a | b [stale: missing a.py]"
    )
    assert render_memory_line({**other, "kind": "episode:session_summary"}, None, 2) == "[session state] a | b"
    assert render_memory_line({**other, "kind": "project_snapshot"}, stale, 2) == "[project state] a | b"
    assert render_memory_line({**other, "kind": "episode:command_failure"}, stale, 2) == (
        "Command failure: [pytest] a | b [stale: missing a.py]"
    )


def test_a_long_note_line_is_cut_at_600_with_its_pointer() -> None:
    row = {
        "kind": "note:decision",
        "subject": None,
        "id": "abc",
        "created_at": "2026-12-01T10:11:12Z",
        "text": note("w" * 700),
    }
    line = render_memory_line(row, None, 3)
    content = line.split(": ", 1)[1]
    assert content.endswith("…" + POINTER) and len(content) == 600
    row["text"] = note("w" * 600)
    assert render_memory_line(row, None, 3).endswith(": " + "w" * 600)


def test_alternatives_line_shows_what_was_rejected_capped_at_240() -> None:
    assert alternatives_line("note:decision", note(alternatives=["rollback journal", "memory"])) == (
        "  already rejected: rollback journal, memory"
    )
    assert alternatives_line("note:decision", note()) is None
    assert alternatives_line("command_run", note(alternatives=["x"])) is None
    assert alternatives_line("note:decision", note(alternatives=["y" * 240])) == "  already rejected: " + "y" * 240
    assert alternatives_line("note:decision", note(alternatives=["y" * 241])) == (
        "  already rejected: " + "y" * 239 + "…"
    )


def test_assemble_budgeted_charges_every_character_and_newline() -> None:
    entries = [Entry("a" * 10), Entry("b" * 10), Entry("c" * 10)]
    # budget 8 = 32 characters: lead (5) + 2 lines (2 × 11) = 27; the hint (+1 more, 7 + newline) makes 35 > 32,
    # so the second line goes and the hint counts two.
    out = assemble_budgeted("lead:", entries, 8, hint)
    assert out.text == "lead:\n" + "a" * 10 + "\n+2 more" and out.dropped == 2 and out.kept == entries[:1]
    out = assemble_budgeted("lead:", entries, 9, hint)  # 36: lead + 2 lines + hint = 35
    assert out.text == "lead:\n" + "a" * 10 + "\n" + "b" * 10 + "\n+1 more" and out.dropped == 1
    out = assemble_budgeted("lead:", entries, 10, hint)  # 40: lead + 3 lines = 38
    assert out.text == "lead:\n" + "\n".join(e.line for e in entries) and out.dropped == 0
    out = assemble_budgeted(None, entries, 8, hint)  # 32 = exactly three lines and two newlines
    assert out.text == "\n".join(e.line for e in entries) and out.dropped == 0
    out = assemble_budgeted(None, entries, 7, hint)  # 28: two lines (21) + hint (8) = 29 > 28
    assert out.text == "a" * 10 + "\n+2 more" and out.dropped == 2


def test_assemble_budgeted_places_alternatives_only_with_what_is_left() -> None:
    entries = [Entry("a" * 10, "  alt one"), Entry("b" * 10, "  alt two")]
    assert assemble_budgeted(None, entries, 8, hint).text == "a" * 10 + "\n  alt one\n" + "b" * 10  # 31 ≤ 32
    assert assemble_budgeted(None, entries, 11, hint).text == "a" * 10 + "\n  alt one\n" + "b" * 10 + "\n  alt two"
    # the first alternative not fitting stops the walk: a later, shorter one is not placed either
    entries = [Entry("a" * 10, "  a much longer alternative line"), Entry("b" * 10, "  x")]
    assert assemble_budgeted(None, entries, 8, hint).text == "a" * 10 + "\n" + "b" * 10


def test_assemble_budgeted_cuts_a_first_line_that_alone_overruns() -> None:
    out = assemble_budgeted(None, [Entry("w" * 300, item_id="abc")], 25, hint)
    assert out.text == "w" * 60 + "…" + POINTER and len(out.text) == 100
    out = assemble_budgeted("the lead line", [Entry("w" * 300, item_id="abc"), Entry("x")], 25, hint)
    assert out.text == "the lead line\n" + "w" * 38 + "…" + POINTER + "\n+1 more" and out.dropped == 1
    # 84 characters: the hint would leave the line less than its pointer and 40, so the hint goes
    out = assemble_budgeted("the lead line", [Entry("w" * 300, item_id="abc"), Entry("x")], 21, hint)
    assert out.text == "the lead line\n" + "w" * 30 + "…" + POINTER
    out = assemble_budgeted("L" * 200, [], 10, hint)
    assert out.text == "L" * 39 + "…"


def test_assemble_budgeted_shares_the_room_between_lead_line_and_hint() -> None:
    entries = [Entry("w" * 300, item_id="abc"), Entry("x")]
    out = assemble_budgeted("L" * 100, entries, 50, hint)  # 200 characters
    lead, line, tail = out.text.split("\n")
    assert tail == "+1 more" and len(out.text) == 200
    assert lead == "L" * 63 + "…"  # a third of the room the hint leaves: (200 - 8) // 3 = 64
    assert line == "w" * (200 - 8 - 65 - 1 - len(POINTER)) + "…" + POINTER


def test_assemble_sections_skips_what_does_not_fit_and_charges_the_trailer() -> None:
    sections = ["a" * 20, "b" * 80, "c" * 10]
    trailer = sections_trimmed(1)
    assert 20 + 12 + 2 + len(trailer) == 84
    text, kept = assemble_sections(sections, 21, None)  # 84: a, c and the trailer exactly; b skipped
    assert kept == [0, 2] and text == "a" * 20 + "\n\n" + "c" * 10 + "\n\n" + trailer
    text, kept = assemble_sections(sections, 20, None)  # 80: c gives way to the trailer, which then counts two
    assert kept == [0] and text == "a" * 20 + "\n\n" + sections_trimmed(2)
    text, kept = assemble_sections(sections, 28, None)  # 112: a and b (104), but not with the trailer (156)
    assert kept == [0] and text == "a" * 20 + "\n\n" + sections_trimmed(2)
    text, kept = assemble_sections(sections, 29, None)  # 116: all three
    assert kept == [0, 1, 2] and text == "\n\n".join(sections)


def test_assemble_sections_cuts_a_first_section_that_alone_overruns() -> None:
    text, kept = assemble_sections(["s" * 500, "t" * 10], 50, ["abc", None])  # 200 characters
    assert kept == [0]
    assert text.endswith("…" + POINTER + "\n\n" + sections_trimmed(1)) and len(text) == 200
    text, kept = assemble_sections(["s" * 500, "t" * 10], 30, ["abc", None])  # 120: the trailer gives way (< 80 left)
    assert text == "s" * (120 - 1 - len(POINTER)) + "…" + POINTER
    text, kept = assemble_sections(["s" * 500], 25, None)
    assert text == "s" * 99 + "…"


def test_fit_labels_at_no_spare_room_keeps_a_one_character_detail_whole() -> None:
    assert fit_labels(" (from x)", 9) == " (from x)"
    assert fit_labels(" (from x)", 8) == ""


def test_fit_labels_keeps_every_label_that_fits_in_order_when_the_kinds_do_not() -> None:
    tail = " [contested] (superseded)" + STALE
    assert fit_labels(tail, 35) == " [contested] (superseded)"
    assert fit_labels(STALE + " [contested]", 22) == " [stale: …]"


def test_fit_labels_gives_a_label_without_detail_no_share_of_the_room() -> None:
    assert fit_labels(" [contested]" + STALE, 30) == " [contested] [stale: missing…]"


def test_fit_labels_trims_the_space_before_its_ellipsis() -> None:
    assert fit_labels(STALE, 19) == " [stale: missing…]"


def test_snippet_keeps_the_words_of_a_line_together() -> None:
    assert snippet("one two\nthree four\nfive", 2) == "one two | three four"


@pytest.mark.parametrize(
    ("tail", "text"),
    [
        ("h" * 8, "w" * 39 + "…" + POINTER + "\n" + "h" * 8),  # 40 left beside the pointer: the hint stays
        ("h" * 9, "w" * 48 + "…" + POINTER),  # 39 left: the hint goes, the pointer stays
    ],
)
def test_the_hint_gives_way_when_it_would_leave_the_cut_line_under_40_beside_its_pointer(tail: str, text: str) -> None:
    out = assemble_budgeted(None, [Entry("w" * 300, item_id="abc"), Entry("x")], 22, lambda n: tail)
    assert out.text == text and len(out.text) <= 88


def test_a_long_lead_is_cut_to_leave_a_short_first_line_whole() -> None:
    out = assemble_budgeted("L" * 200, [Entry("x" * 20)], 25, hint)
    assert out.text == "L" * 78 + "…\n" + "x" * 20  # 100: the lead takes what the line leaves, less a newline


def test_a_budget_of_nothing_renders_nothing() -> None:
    assert assemble_budgeted("L", [Entry("xxxxx")], 0, hint).text == ""


def test_sections_that_fill_the_budget_exactly_are_all_placed() -> None:
    text, kept = assemble_sections(["a" * 20, "b" * 18], 10)
    assert kept == [0, 1] and text == "a" * 20 + "\n\n" + "b" * 18


@pytest.mark.parametrize(
    ("first", "text"),
    [
        (47, "a" * 47 + "\n\n" + sections_trimmed(2)),  # 47 + 2 + 51 = 100: the trailer fits exactly
        (48, "a" * 48),  # 101: the trailer goes (it would leave the first section under 80)
    ],
)
def test_the_trailer_counting_what_was_skipped_is_charged(first: int, text: str) -> None:
    """b fits beside a, but not with the trailer: b goes, and the trailer then counts two sections."""
    out, kept = assemble_sections(["a" * first, "b" * 30, "c" * 200], 25)
    assert kept == [0] and out == text


def test_a_cut_first_section_keeps_the_trailer_only_with_80_characters_beside_it() -> None:
    text, _ = assemble_sections(["s" * 500, "t" * 200], 33, ["abc", None])  # 132 - 50 - 2 = 80 left
    assert text == "s" * (80 - 1 - len(POINTER)) + "…" + POINTER + "\n\n" + sections_trimmed(1)
    text, _ = assemble_sections(["s" * 500, "t" * 200, "u" * 200], 33, ["abc", None, None])  # 132 - 51 - 2 = 79
    assert text == "s" * (132 - 1 - len(POINTER)) + "…" + POINTER


def test_the_alternatives_cut_trims_the_space_before_its_ellipsis() -> None:
    assert alternatives_line("note:decision", note(alternatives=["y" * 238 + " " + "z" * 10])) == (
        "  already rejected: " + "y" * 238 + "…"
    )


def test_the_newline_after_the_lead_is_charged_to_the_first_line() -> None:
    entries = [Entry("a" * 10), Entry("b" * 10)]
    assert assemble_budgeted("lead:xx", entries, 7, hint).text == "lead:xx\n" + "a" * 10 + "\n+1 more"  # 29 > 28
    assert assemble_budgeted("lead:x", entries, 7, hint).text == "lead:x\n" + "a" * 10 + "\n" + "b" * 10  # 28


def test_a_hint_that_fits_exactly_keeps_the_lines_before_it() -> None:
    entries = [Entry("a" * 10), Entry("b" * 10), Entry("c" * 30)]
    out = assemble_budgeted(None, entries, 8, lambda n: "h" * 10)  # 10 + 1 + 10 + 1 + 10 = 32
    assert out.text == "a" * 10 + "\n" + "b" * 10 + "\n" + "h" * 10 and out.dropped == 1


def test_a_line_given_back_for_the_hint_returns_its_newline_too() -> None:
    """b goes to make room for the hint; the room it frees (its newline included) takes a's alternative."""
    entries = [Entry("a" * 10, "  " + "x" * 7), Entry("b" * 10), Entry("c" * 30)]
    out = assemble_budgeted(None, entries, 8, lambda n: "h" * 11)  # 10 + 1 + 9 + 1 + 11 = 32
    assert out.text == "a" * 10 + "\n  xxxxxxx\n" + "h" * 11 and out.dropped == 2


def test_an_alternative_one_character_over_what_the_hint_leaves_is_not_placed() -> None:
    entries = [Entry("a" * 10, "  " + "x" * 8), Entry("b" * 10), Entry("c" * 30)]
    out = assemble_budgeted(None, entries, 8, lambda n: "h" * 11)  # 10 + 1 + 11 = 22; + 1 + 10 would be 33
    assert out.text == "a" * 10 + "\n" + "h" * 11


# -- the packers at their budget's last character, and the labels of a memory line -------------------------------------


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
