"""Tests for the deterministic, offline contradiction rule (cortex_engine.memory.contradiction)."""

from __future__ import annotations

import pytest

from cortex_engine.memory.contradiction import (
    NEGATION_ADVERBS,
    NEGATORS,
    POLARITY_STEMS,
    STRUCTURAL_STOPWORDS,
    Verdict,
    compare,
    stem_lite,
)

# ---------------------------------------------------------------------------------------------
# stem_lite
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        # sses -> ss
        ("classes", "class"),
        ("passes", "pass"),
        # ies stripped when >= 3 remain; otherwise falls through to the plain-s rule
        ("queries", "quer"),
        ("ties", "tie"),
        # trailing s stripped unless ss/us/is, and only when >= 3 remain
        ("cats", "cat"),
        ("class", "class"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("its", "its"),
        ("gas", "gas"),
        ("does", "doe"),
        # ing: >= 3 remain and the base has a vowel (y counts)
        ("testing", "test"),
        ("trying", "try"),
        ("string", "string"),
        ("sing", "sing"),
        # ed: same rule
        ("tested", "test"),
        ("shred", "shred"),
        ("shed", "shed"),
        ("noted", "not"),
        # ion: same rule
        ("rotation", "rotat"),
        ("lion", "lion"),
        ("sessions", "sess"),
        # trailing e dropped only when >= 4 remain
        ("cache", "cach"),
        ("rotate", "rotat"),
        ("use", "use"),
        ("true", "true"),
        ("make", "make"),
        # passes cascade
        ("indexes", "index"),
        ("caching", "cach"),
        ("cached", "cach"),
        ("caches", "cach"),
        ("enabled", "enabl"),
        ("always", "alway"),
    ],
)
def test_stem_lite(word: str, stem: str) -> None:
    assert stem_lite(word) == stem


def test_stems_collide_with_negators_which_is_why_negators_match_raw_forms() -> None:
    assert stem_lite("noted") == "not"
    assert stem_lite("noting") == "not"
    assert "not" in NEGATORS


def test_no_stem_is_both_polarity_and_structural() -> None:
    assert POLARITY_STEMS & STRUCTURAL_STOPWORDS == frozenset()


def test_adverbs_are_stemmed_vocabulary() -> None:
    assert stem_lite("anymore") in NEGATION_ADVERBS
    assert "longer" in NEGATION_ADVERBS


# ---------------------------------------------------------------------------------------------
# Must fire: negation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prior", "incoming", "trigger"),
    [
        (
            "use the porter tokenizer for recall queries",
            "do not use the porter tokenizer for recall queries",
            "use",
        ),
        ("flush the spool at turn end", "do not flush the spool at turn end", "flush"),
        (
            "we should never cache the app graph between turns",
            "we should cache the app graph between turns",
            "cach",
        ),
        # apostrophes are stripped before tokenizing: don't -> dont, don’t -> dont
        ("we don't vendor the sqlite binary", "we vendor the sqlite binary", "vendor"),
        ("we don\u2019t vendor the sqlite binary", "we vendor the sqlite binary", "vendor"),
        ("we cannot vendor the sqlite binary", "we vendor the sqlite binary", "vendor"),
        # inflections meet through stemming
        ("the flush validates every spooled entry", "the flush does not validate every spooled entry", "validat"),
        # adverbs after a negator are skipped when looking for the head
        ("we flush the spool at turn end", "we no longer flush the spool at turn end", "flush"),
        ("we vendor the sqlite binary", "we do not ever vendor the sqlite binary", "vendor"),
        ("we retry the flaky upload step", "we never again retry the flaky upload step", "retry"),
        # polarity stems (required/optional) are skipped too: the head is the next content word
        (
            "the semantic provider is required for recall",
            "the semantic provider is not required for recall",
            "recall",
        ),
        # a split "no" is not a negator on either side, so only the real "never" counts
        (
            "a second flush of a claimed batch is a no-op",
            "a second flush of a claimed batch is never a no-op",
            "op",
        ),
    ],
)
def test_negation_fires(prior: str, incoming: str, trigger: str) -> None:
    assert compare(prior, incoming) == Verdict(signal="negation", trigger=trigger)


def test_negation_is_symmetric_in_argument_order() -> None:
    a = "flush the spool at turn end"
    b = "do not flush the spool at turn end"
    forward = compare(a, b)
    backward = compare(b, a)
    assert forward is not None
    assert backward is not None
    assert forward == backward == Verdict(signal="negation", trigger="flush")


def test_negation_trigger_is_sorted_unique_heads() -> None:
    verdict = compare(
        "flush spool and cache app graph",
        "never flush spool and do not cache app graph, not cache it",
    )
    assert verdict == Verdict(signal="negation", trigger="cach,flush")


def test_negation_takes_precedence_over_antonym() -> None:
    # always/never is also an antonym pair, but step 3 (negation) runs first.
    assert compare("always cache the app graph", "never cache the app graph") == Verdict(
        signal="negation", trigger="cach"
    )


def test_verdict_is_deterministic() -> None:
    a = "we cache the session brief between runs"
    b = "we do not cache the session brief between runs"
    first = compare(a, b)
    assert first is not None
    assert [compare(a, b) for _ in range(5)] == [first] * 5


# ---------------------------------------------------------------------------------------------
# Must fire: antonym
# ---------------------------------------------------------------------------------------------


def test_antonym_fires() -> None:
    verdict = compare(
        "enable the read ledger for subagent sessions",
        "disable the read ledger for subagent sessions",
    )
    assert verdict == Verdict(signal="antonym", trigger="enable/disable")


def test_antonym_is_symmetric_in_argument_order() -> None:
    a = "enable the read ledger for subagent sessions"
    b = "disable the read ledger for subagent sessions"
    assert compare(b, a) == compare(a, b) == Verdict(signal="antonym", trigger="enable/disable")


def test_antonym_label_is_the_pair_as_written_even_when_stems_differ() -> None:
    verdict = compare("the provider is optional for recall queries", "the provider is required for recall queries")
    assert verdict == Verdict(signal="antonym", trigger="required/optional")


def test_antonym_pairs_are_tried_in_order() -> None:
    verdict = compare("enable sync mode for the reranker cache", "disable async mode for the reranker cache")
    assert verdict == Verdict(signal="antonym", trigger="enable/disable")


def test_antonym_pair_skipped_when_a_side_holds_both_members_later_pair_still_fires() -> None:
    verdict = compare(
        "enable and disable sync mode for the reranker cache",
        "enable async mode for the reranker cache",
    )
    assert verdict == Verdict(signal="antonym", trigger="sync/async")


def test_antonym_fires_at_exactly_point_eight() -> None:
    # cores {reranker, cach, branch, recall, scop} vs {reranker, cach, branch, recall}: 4/5 = 0.8
    verdict = compare("enable reranker cache branch recall scoped", "disable reranker cache branch recall")
    assert verdict == Verdict(signal="antonym", trigger="enable/disable")


def test_both_sides_negated_falls_through_to_antonym() -> None:
    verdict = compare("do not cache app graph, enable reranker", "do not cache app graph, disable reranker")
    assert verdict == Verdict(signal="antonym", trigger="enable/disable")


# ---------------------------------------------------------------------------------------------
# Must NOT fire
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prior", "incoming"),
    [
        pytest.param("use postgres", "use postgres, not mysql", id="refinement-negates-unmentioned-word"),
        pytest.param("use postgres for storage", "use mysql for storage", id="divergent-choice"),
        pytest.param(
            "use postgres for the primary store",
            "use postgres for the primary store with connection pooling",
            id="refinement-adds-detail",
        ),
        pytest.param("we cache the app graph", "as noted, we cache the app graph", id="noted-is-not-not"),
        pytest.param(
            "the flush validates every spooled entry",
            "noting that the flush validates every spooled entry",
            id="noting-is-not-not",
        ),
        pytest.param(
            "run git commit on release branches",
            "run git commit --no-verify on release branches",
            id="no-verify-flag",
        ),
        pytest.param(
            "verify on release branches",
            "commit --no-verify on release branches",
            id="no-verify-fragment-would-govern-shared-word",
        ),
        pytest.param(
            "src/capture handles the spool",
            "src/capture/no-op.ts handles the spool",
            id="no-op-path-segment",
        ),
        pytest.param("required for rank mode", "optional for shadow mode", id="antonym-one-shared-token"),
        pytest.param(
            "the semantic provider is required for rank mode",
            "the semantic provider is optional for shadow mode",
            id="antonym-below-point-eight",
        ),
        pytest.param(
            "we do not cache the brief",
            "the cache layer for the rendered brief writes through redis with a ttl and a digest guard",
            id="short-note-contained-in-long-note",
        ),
        pytest.param(
            "do not cache the session brief between runs",
            "never cache the session brief between runs",
            id="both-negated",
        ),
        pytest.param(
            "мы кэшируем граф приложения между ходами",
            "мы не кэшируем граф приложения между ходами",
            id="cyrillic",
        ),
        pytest.param("在回合之间缓存应用图", "不要在回合之间缓存应用图", id="cjk"),
        pytest.param("flush the spool at turn end", "flush the spool not only at turn end", id="not-only"),
        pytest.param(
            "the spool flush runs at turn end",
            "the spool flush runs at the 256 kib threshold, not only at turn end",
            id="not-only-with-extra-case",
        ),
        pytest.param(
            "the gate runs on every push to main",
            "the gate runs on every push to main, not just on pull requests",
            id="not-just",
        ),
        pytest.param(
            "never commit generated baselines by hand",
            "always run the linter before pushing",
            id="unrelated-content-with-polarity",
        ),
        pytest.param("cache briefs", "do not cache sessions", id="one-shared-token-at-ratio-half"),
        pytest.param("cache brief alpha beta", "do not cache brief gamma delta epsilon", id="ratio-below-half"),
        pytest.param("we do not skip caching the session brief", "we cache the session brief", id="double-negation"),
        pytest.param(
            "enable the reranker in dev and disable the reranker in ci",
            "disable the reranker in dev and ci",
            id="antonym-side-holds-both-members",
        ),
        pytest.param(
            "cache the app graph between turns",
            "not for the and of cache the app graph between turns",
            id="head-beyond-four-token-window",
        ),
        pytest.param("the gate runs on every push", "the gate runs on every push", id="identical"),
        pytest.param("", "we do not cache anything", id="empty-prior"),
        pytest.param("   ", "   ", id="whitespace-both"),
        pytest.param("the of and", "not the of and", id="structural-only"),
    ],
)
def test_does_not_fire(prior: str, incoming: str) -> None:
    assert compare(prior, incoming) is None
    assert compare(incoming, prior) is None


# ---------------------------------------------------------------------------------------------
# Boundaries of the gates
# ---------------------------------------------------------------------------------------------


def test_ratio_exactly_half_with_two_shared_passes_the_gate() -> None:
    # cores {cach, brief, alpha, beta} vs {cach, brief, gamma, delta}: shared 2, ratio 0.5
    assert compare("cache brief alpha beta", "do not cache brief gamma delta") == Verdict(
        signal="negation", trigger="cach"
    )


def test_head_within_four_token_window_fires() -> None:
    assert compare(
        "cache the app graph between turns",
        "not for the of cache the app graph between turns",
    ) == Verdict(signal="negation", trigger="cach")


def test_tokens_beyond_the_4000_cap_are_ignored() -> None:
    prior = "cache app graph"
    tail = "do not cache app graph"
    assert compare(prior, tail) == Verdict(signal="negation", trigger="cach")
    # 4000 structural tokens fill the cap, so the tail is never analyzed and the core is empty.
    assert compare(prior, "the " * 4000 + tail) is None


def test_cap_counts_tokens_after_split_and_short_part_drop() -> None:
    # 3996 kept tokens + "do not cache app" reaches the cap; "graph" is cut, the negation survives.
    prior = "cache app graph"
    assert compare(prior, "x the " * 3996 + "do not cache app graph") == Verdict(signal="negation", trigger="cach")


def test_huge_input_is_analyzed_only_up_to_the_cap() -> None:
    big = "alpha/beta-gamma.delta " * 50_000
    assert compare(big, "do not " + big) == Verdict(signal="negation", trigger="alpha")


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("asses", "ass"),
        ("passes", "pass"),  # -sses keeps its ss (a plain -s strip would leave `asse`)
        ("copies", "cop"),
        ("babies", "bab"),  # -ies off when three letters stay, not when two would
        ("doing", "doing"),
        ("used", "used"),
        ("union", "union"),  # too short to lose -ing, -ed, -ion
        ("nation", "nat"),  # exactly three letters left: -ion goes
    ],
)
def test_stem_lite_at_the_length_boundaries(word: str, stem: str) -> None:
    """Each suffix rule strips only when the stem keeps its minimum length (mutants that survived every other test)."""
    assert stem_lite(word) == stem
