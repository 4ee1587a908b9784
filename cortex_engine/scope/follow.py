"""Following a symbol that left its file: renamed in place, or moved to another file.

Before an anchored symbol is called missing (`[stale: missing path:f]`) it is looked for: another name in the same
file whose text, its own name read as the old one, is exactly the anchored text (a rename in place:
`renamed_in_place`), or a definition of the same qualified name in another file the caller offers (the files changed
since the anchor's commit: `freshness.Validator` asks git) that is exactly the anchored text or at least
`MOVE_SIMILARITY` like it (`moved_to`). Either answers `Located("moved", …)` with where it is now and, for a move,
whether its text changed beyond whitespace (a drift too).
"""

from __future__ import annotations

from typing import cast

from cortex_engine.scope.anchors import (
    FORMAT_TAG,
    Located,
    Source,
    Span,
    normalise,
    span_format,
    symbol_digest,
    text_digest,
)

__all__ = ["MOVE_SIMILARITY", "moved_to", "renamed_in_place", "similarity"]

MOVE_SIMILARITY = 0.5
"""How alike a definition of the same qualified name in another file must be to the anchored code to be that code
moved: difflib's ratio over the two spans' lines, whitespace removed and blank lines dropped. Git's own rename
detection calls a file renamed at 50 % similarity; a function moved with a few lines edited scores 0.6-0.9, another
function that happens to share its name 0.0-0.3 (tests/test_anchors_follow.py)."""


def _in_word(char: str) -> bool:
    return char.isalnum() or char in "_$"  # what the pattern `[\w$]` matches


def _word_cuts(text: str, word: str) -> list[str]:
    """`text` cut at every whole-word `word` (found with `str.find`, not a pattern per name), each piece without its
    whitespace: `normalise(old).join(pieces)` is `normalise` of the text with each `word` read as `old` (removing
    whitespace commutes with putting one run of characters in place of another)."""
    pieces: list[str] = []
    done = 0
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if not ((at and _in_word(text[at - 1])) or (end < len(text) and _in_word(text[end]))):
            pieces.append(normalise(text[done:at]))
            done = end
        at = text.find(word, end)
    pieces.append(normalise(text[done:]))
    return pieces


def _cut(source: Source, name: str, span: Span, fmt: int) -> list[str]:
    """The text of `source`'s one definition of `name` cut at its own name (`_word_cuts`): cut once per file and
    name, then every gone symbol beside it is compared by a join and a hash."""
    key = ("cut", name, fmt, False)
    if key not in source._followed:
        text = "".join(source.lines[span.first(fmt) - 1 : span.end])
        source._followed[key] = _word_cuts(text, name.rsplit(".", 1)[-1])
    return cast("list[str]", source._followed[key])


def _renamed_text(lines: list[str], span: Span, fmt: int, new: str, old: str) -> str:
    """A span's text with every whole-word `new` read as `old` (found with `str.find`, not a pattern per name: a
    gone symbol is compared with every definition beside it in its file, and each pattern cost a compile)."""
    text = "".join(lines[span.first(fmt) - 1 : span.end])
    pieces: list[str] = []
    done = 0
    at = text.find(new)
    while at >= 0:
        end = at + len(new)
        if not ((at and _in_word(text[at - 1])) or (end < len(text) and _in_word(text[end]))):
            pieces += [text[done:at], old]
            done = end
        at = text.find(new, end)
    return "".join(pieces) + text[done:] if pieces else text


def renamed_in_place(
    source: Source, path: str, symbol: str, start: int, digest: str, then: list[str] | None = None
) -> Located | None:
    """Another name `source` (the file `path`) defines in the same container whose text, its own name read as the
    anchored one's, has the anchor's digest: the definition renamed in place. The nearest to `start` when several
    do. Only the same text counts: in one file, two alike definitions are more often siblings than a rename.
    `then`, the anchored text when known, first rules a rename out cheaply (`_could_be_renamed`)."""
    if source.language is None:
        return None
    key = ("renamed", symbol + "\0" + path, start, False)
    if key not in source._followed:
        maybe = then is None or _could_be_renamed(source, symbol.rsplit(".", 1)[-1], then)
        source._followed[key] = _renamed_in_place(source, path, symbol, start, digest) if maybe else None
    hit = source._followed[key]
    return hit if isinstance(hit, Located) else None


def _could_be_renamed(source: Source, old: str, then: list[str]) -> bool:
    """Whether any definition of `source` could be the anchored text `then` renamed. Read as `old`, a renamed
    definition is `then` (whitespace aside), so every stretch of `then` touched by no occurrence of `old` is in it
    unchanged, and in the file: when the longest such stretch is not in the file (whitespace removed from both),
    no definition is, and the file's definitions need not be scanned (what a note on years-old code, its function
    long deleted, cost most)."""
    text = normalise("".join(then))
    word = normalise(old)
    touched = bytearray(len(text))
    if word:
        at = text.find(word)
        while at >= 0:  # overlapping occurrences too: a stretch must hold no character any of them covers
            touched[at : at + len(word)] = b"\1" * len(word)
            at = text.find(word, at + 1)
    runs = _stretches(bytes(touched))
    if not runs:
        return True
    at, piece = max(runs, key=lambda run: len(run[1]))
    longest = text[at : at + len(piece)]
    key = ("normalised", "", 0, False)
    if key not in source._followed:
        source._followed[key] = normalise(source.text)
    return longest in cast("str", source._followed[key])


def _stretches(touched: bytes) -> list[tuple[int, bytes]]:
    """Each run of untouched (zero) bytes with where it starts."""
    out = []
    at = 0
    for piece in touched.split(b"\1"):
        if piece:
            out.append((at, piece))
        at += len(piece) + 1
    return out


def _renamed_in_place(source: Source, path: str, symbol: str, start: int, digest: str) -> Located | None:
    parts = symbol.split(".")
    old = parts[-1]
    fmt = span_format(digest)
    bare = digest.removeprefix(FORMAT_TAG)
    hits: list[tuple[int, str, Span]] = []
    read_as = normalise(old)
    for name, spans in source.definitions().items():
        named = name.split(".")
        if len(named) != len(parts) or named[:-1] != parts[:-1] or named[-1] == old or len(spans) != 1:
            continue
        if text_digest(read_as.join(_cut(source, name, spans[0], fmt))) != bare:
            continue
        confirmed = source.spans(name)  # the scan's cut, confirmed (Python: by `ast`)
        if len(confirmed) == 1 and text_digest(_renamed_text(source.lines, confirmed[0], fmt, named[-1], old)) == bare:
            hits.append((abs(confirmed[0].first(fmt) - start), name, confirmed[0]))
    if not hits:
        return None
    _, name, span = min(hits)
    return Located("moved", span.start, span.end, symbol_digest(source.lines, span), path, name)


def similarity(then: list[str], now: list[str]) -> float:
    """How alike two spans are: difflib's ratio over their lines, whitespace removed and blank lines dropped."""
    import difflib  # only a symbol gone from its file is compared

    a = [line for line in map(normalise, then) if line]
    b = [line for line in map(normalise, now) if line]
    if not a or not b:
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _score(
    source: Source, symbol: str, digest: str, fmt: int, then: list[str] | None
) -> tuple[float, Span, bool] | None:
    """How alike `source`'s one definition of `symbol` is to the anchored text (2.0: exactly it), with its span."""
    if source.language == "python" and not source.short_names().issuperset(symbol.split(".")):
        return None  # `A.b` needs `class A` in the same file (in Go or Rust a method may live apart from its type)
    spans = source.spans(symbol) if source.language else []
    if len(spans) != 1:
        return None  # not defined there, or ambiguous
    span = spans[0]
    if symbol_digest(source.lines, span, fmt) == digest:
        return 2.0, span, True  # exactly the anchored text: above any similarity
    if then is None:
        return None
    return similarity(then, source.lines[span.first(fmt) - 1 : span.end]), span, False


def moved_to(candidates: list[tuple[str, Source]], symbol: str, digest: str, then: list[str] | None) -> Located | None:
    """The definition of `symbol` in one of `candidates` ((path, source): other files) that is the anchored code
    moved: its digest, or, when the recorded text `then` is known, at least `MOVE_SIMILARITY` like it. The most
    alike wins (the first path of a tie)."""
    fmt = span_format(digest)
    best: tuple[float, str, Span, bool] | None = None
    for path, source in sorted(candidates, key=lambda c: c[0]):
        key = ("moved", symbol + "\0" + digest, 0, then is None)
        if key not in source._followed:  # the same files, asked again by a later check: a lookup
            source._followed[key] = _score(source, symbol, digest, fmt, then)
        found = source._followed[key]
        if not isinstance(found, tuple):
            continue
        score, span, same = found
        if score < MOVE_SIMILARITY:
            continue
        if best is None or score > best[0]:
            best = (score, path, span, not same)
    if best is None:
        return None
    _, path, span, changed = best
    source = dict(candidates)[path]
    return Located("moved", span.start, span.end, symbol_digest(source.lines, span), path, symbol, changed)
