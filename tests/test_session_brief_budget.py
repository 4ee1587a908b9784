"""The SessionStart brief over its budget: an open contest's lines are the last to give way, and an item it lists as
shown is shown with its subject and `[contested]`, or not at all."""

from __future__ import annotations

from cortex_engine.base.tokens import estimate_tokens
from cortex_engine.engine import Engine

KAFKA = "use kafka for the queue engine because the replay window matters to the billing team's audits"
NOT_KAFKA = "do not use kafka for the queue engine because the ops team cannot run zookeeper clusters safely"
OTHER = "render invoices as pdf with weasyprint on the worker and keep the html template beside the invoice model code"


def test_unrelated_notes_give_way_before_a_contest_line_is_narrowed(engine: Engine) -> None:
    engine.start_session("host-1")
    engine.note("decision", KAFKA, "queue engine")
    engine.note("decision", NOT_KAFKA, "queue engine")
    engine.note("decision", OTHER, "invoices")
    full = engine.session_brief(book=False)
    assert OTHER[:40] in full.text and full.text.count("[contested]") == 2
    without = "\n".join(line for line in full.text.split("\n") if "[invoices]" not in line)
    budget = estimate_tokens(without)
    assert budget < estimate_tokens(full.text)

    brief = engine.session_brief(budget, book=False)
    assert estimate_tokens(brief.text) <= budget
    assert "[invoices]" not in brief.text
    assert KAFKA[:100] in brief.text and NOT_KAFKA[:100] in brief.text  # each contest line as wide as ever
    assert [item.subject for item in brief.items] == ["queue engine", "queue engine"]


def test_a_brief_too_small_for_a_contest_side_s_label_shows_nothing_rather_than_an_unlabelled_side(
    engine: Engine,
) -> None:
    engine.start_session("host-1")
    engine.note("decision", KAFKA, "queue engine")
    engine.note("decision", NOT_KAFKA, "queue engine")
    for budget in range(20, 60):
        brief = engine.session_brief(budget, book=False)
        assert estimate_tokens(brief.text) <= budget
        lines = brief.text.split("\n")
        shown = [line for line in lines if line.startswith("- ") and "more open contest" not in line]
        assert len(shown) == len(brief.items), (budget, brief.text)
        assert all("[contested]" in line and "[queue engine]" in line for line in shown), (budget, brief.text)
    assert engine.session_brief(60, book=False).items  # a small budget still seats a side, labelled


def test_an_unrelated_note_never_costs_a_contest_side_its_seat_in_a_small_brief(engine: Engine) -> None:
    """At the smallest budget that seats a contest side, the brief still seats it once an unrelated note is stored:
    the leanest form is cut to fit (its other lines dropped), not dropped whole."""
    engine.start_session("host-1")
    engine.note("decision", KAFKA, "queue engine")
    engine.note("decision", NOT_KAFKA, "queue engine")
    smallest = next(budget for budget in range(20, 200) if engine.session_brief(budget, book=False).items)
    engine.note("decision", OTHER, "invoices")
    brief = engine.session_brief(smallest, book=False)
    assert estimate_tokens(brief.text) <= smallest
    assert [item.subject for item in brief.items] == ["queue engine"], brief.text
    side = [line for line in brief.text.split("\n") if line.startswith("- ")]
    assert len(side) == 1 and "[queue engine]" in side[0] and "[contested]" in side[0], brief.text
