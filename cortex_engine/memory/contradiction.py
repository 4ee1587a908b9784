"""Deterministic, offline contradiction detection between two note contents (a lexical polarity-flip rule)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from cortex_engine.base.records import record

__all__ = ["Verdict", "compare", "stem_lite"]

# ---------------------------------------------------------------------------------------------
# Tokenization
# ---------------------------------------------------------------------------------------------

_APOSTROPHES = str.maketrans("", "", "'\u2019")
# Character-class ranges are code-point ranges, so this matches ASCII letters and digits only.
_TOKEN_RE = re.compile(r"[a-z0-9][a-z0-9._/-]*")
_SPLIT_RE = re.compile(r"[._/-]+")
_SPLIT_CHARS = frozenset("._/-")
_VOWEL_RE = re.compile(r"[aeiouy]")

_MIN_STEM_LENGTH = 3
MAX_ANALYZED_TOKENS = 4000
NEGATION_SCOPE_WINDOW = 4
MIN_SHARED_TOKENS = 2


def stem_lite(word: str) -> str:
    """Strip common English inflections so `caching`, `cached` and `caches` share the stem `cach`.

    Args:
        word: A lowercase token.

    Returns:
        The stem: plural family, then `-ing`/`-ed`, then `-ion`, then a trailing `e` removed.
    """
    stem = word
    # Pass 1: plural family.
    if stem.endswith("sses"):
        stem = stem[:-4] + "ss"
    elif stem.endswith("ies") and len(stem) - 3 >= _MIN_STEM_LENGTH:
        stem = stem[:-3]
    elif stem.endswith("s") and not stem.endswith(("ss", "us", "is")) and len(stem) - 1 >= _MIN_STEM_LENGTH:
        stem = stem[:-1]
    # Pass 2: verb inflections (the base must keep a vowel).
    if stem.endswith("ing") and len(stem) - 3 >= _MIN_STEM_LENGTH:
        base = stem[:-3]
        if _VOWEL_RE.search(base):
            stem = base
    elif stem.endswith("ed") and len(stem) - 2 >= _MIN_STEM_LENGTH:
        base = stem[:-2]
        if _VOWEL_RE.search(base):
            stem = base
    # Pass 3: -ion nominalization.
    if stem.endswith("ion") and len(stem) - 3 >= _MIN_STEM_LENGTH:
        base = stem[:-3]
        if _VOWEL_RE.search(base):
            stem = base
    # Pass 4: a trailing 'e' once at least four characters remain.
    if stem.endswith("e") and len(stem) - 1 >= _MIN_STEM_LENGTH + 1:
        stem = stem[:-1]
    return stem


# ---------------------------------------------------------------------------------------------
# Vocabularies
# ---------------------------------------------------------------------------------------------

# Matched on the RAW surface form only (stems collide: `noted` -> `not`), never on a compound fragment.
NEGATORS: frozenset[str] = frozenset(
    {
        "not",
        "no",
        "never",
        "none",
        "neither",
        "nor",
        "dont",
        "doesnt",
        "didnt",
        "cannot",
        "cant",
        "wont",
        "shouldnt",
        "isnt",
        "arent",
    }
)

# Curated opposites, in the order they are tried; the label is the pair as written here.
ANTONYM_PAIRS: tuple[tuple[str, str], ...] = (
    ("enable", "disable"),
    ("add", "remove"),
    ("allow", "deny"),
    ("include", "exclude"),
    ("keep", "drop"),
    ("always", "never"),
    ("required", "optional"),
    ("sync", "async"),
    ("accept", "reject"),
    ("start", "stop"),
    ("show", "hide"),
    ("increase", "decrease"),
    ("true", "false"),
)

_STEMMED_PAIRS: tuple[tuple[str, str, str], ...] = tuple(
    (stem_lite(left), stem_lite(right), f"{left}/{right}") for left, right in ANTONYM_PAIRS
)

POLARITY_STEMS: frozenset[str] = frozenset(
    {stem_lite(word) for word in NEGATORS} | {stem for left, right, _ in _STEMMED_PAIRS for stem in (left, right)}
)

STRUCTURAL_STOPWORDS: frozenset[str] = frozenset(
    stem_lite(word)
    for word in (
        "a an the is are was were be been being by for of to in into at with without from as "
        "on off over under per via and or but so if then than that this these those it its we our "
        "us you your they their them has have had do does did will would should could can may might "
        "must shall all any some each every both other more most less least very just only also too "
        "still yet now here there when while where before after between during because about"
    ).split()
)

# Skipped (by stem) when looking for the predicate a negator governs: "no longer flush" -> flush.
NEGATION_ADVERBS: frozenset[str] = frozenset(
    stem_lite(word)
    for word in (
        "longer currently again ever anymore necessarily really actually strictly explicitly "
        "generally usually normally typically automatically"
    ).split()
)

# A negator directly followed by one of these adds a case rather than denying one ("not only").
SCOPE_LIMITERS: frozenset[str] = frozenset({"only", "just", "solely", "merely", "simply"})

_SKIPPED_AFTER_NEGATOR: frozenset[str] = POLARITY_STEMS | STRUCTURAL_STOPWORDS | NEGATION_ADVERBS
_NON_CORE: frozenset[str] = POLARITY_STEMS | STRUCTURAL_STOPWORDS


# ---------------------------------------------------------------------------------------------
# Analysis and verdict
# ---------------------------------------------------------------------------------------------


@record(frozen=True)
class Verdict:
    """A detected polarity flip: the signal that fired and the token(s) or pair that carried it."""

    signal: Literal["negation", "antonym"]
    trigger: str


@record(frozen=True, slots=True)
class _Analysis:
    """One note's stems (`all`), its shared-context stems (`core`) and its negated heads."""

    all: frozenset[str]
    core: frozenset[str]
    heads: tuple[str, ...]


@lru_cache(maxsize=256)
def _analyze(text: str) -> _Analysis:
    """Tokenize, stem and partition `text` (at most MAX_ANALYZED_TOKENS tokens), and find its negated heads."""
    normalized = text.lower().translate(_APOSTROPHES)
    raws: list[str] = []
    stems: list[str] = []
    from_split: list[bool] = []
    full = False
    for match in _TOKEN_RE.finditer(normalized):
        surface = match.group()
        split = not _SPLIT_CHARS.isdisjoint(surface)
        for part in _SPLIT_RE.split(surface) if split else (surface,):
            if len(part) <= 1:
                continue
            if len(raws) >= MAX_ANALYZED_TOKENS:
                full = True
                break
            raws.append(part)
            stems.append(stem_lite(part))
            from_split.append(split)
        if full:
            break

    all_stems = frozenset(stems)
    core = all_stems - _NON_CORE

    heads: list[str] = []
    count = len(raws)
    for i in range(count):
        if from_split[i] or raws[i] not in NEGATORS:
            continue
        if i + 1 < count and raws[i + 1] in SCOPE_LIMITERS:
            continue
        for j in range(i + 1, min(count, i + 1 + NEGATION_SCOPE_WINDOW)):
            if stems[j] not in _SKIPPED_AFTER_NEGATOR:
                heads.append(stems[j])
                break
    return _Analysis(all=all_stems, core=core, heads=tuple(heads))


def compare(prior: str, incoming: str) -> Verdict | None:
    """Return the polarity flip between two note contents, or None.

    Args:
        prior: Content of the existing note.
        incoming: Content of the note being written.

    Returns:
        A `negation` verdict when exactly one side negates a predicate the other side mentions, else an
        `antonym` verdict when near-identical notes flip a curated pair, else None (no contradiction).
    """
    a = _analyze(prior)
    b = _analyze(incoming)
    if not a.core or not b.core:
        return None
    shared = len(a.core & b.core)
    if shared < MIN_SHARED_TOKENS:
        return None
    larger = max(len(a.core), len(b.core))
    # Exact rational comparisons: shared / larger >= 0.5 and >= 0.8.
    if 2 * shared < larger:
        return None

    heads_a = {head for head in a.heads if head in b.all}
    heads_b = {head for head in b.heads if head in a.all}
    if bool(heads_a) != bool(heads_b):
        return Verdict(signal="negation", trigger=",".join(sorted(heads_a or heads_b)))

    if 5 * shared >= 4 * larger:
        for left, right, label in _STEMMED_PAIRS:
            if (left in a.all and right in a.all) or (left in b.all and right in b.all):
                continue
            if (left in a.all and right in b.all) or (right in a.all and left in b.all):
                return Verdict(signal="antonym", trigger=label)
    return None
