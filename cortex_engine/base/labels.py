"""The trust, origin and freshness labels as every surface writes them: the one vocabulary.

`query/render` attaches them to lines and keeps them whole when a line is cut; `memory/items` defuses look-alikes
of them in author text; the texts that tell an agent what they mean (the route map, the server's instructions,
the tool descriptions) quote them. All take the words from here, so a label cannot be spelled two ways or be
missed by the defusing or by the cut. Imports nothing: `cortex serve` quotes it before the MCP SDK is imported.
"""

from __future__ import annotations

CONTESTED = "[contested]"
SUPERSEDED = "(superseded)"
RESOLVED = "(resolved)"
STATUS = (CONTESTED, SUPERSEDED, RESOLVED)
"""The status labels, in the order a line carries them."""

SHARED = "shared"
"""The origin of a decision read from the repository's decisions folder: `(shared)`."""
FROM = "from"
"""The origin of a note promoted from a merged branch: `(from <branch>)`."""
ORIGIN_WORDS = (SHARED, FROM)

REFERENCE_VERDICTS = ("stale", "moved", "drifted")
"""The freshness verdicts a line can carry, each as `[verdict: detail]`."""


def origin(label: str) -> str:
    """An origin as its line carries it: `shared` → `(shared)`, `from main` → `(from main)`."""
    return f"({label})"


def reference(label: str) -> str:
    """A freshness verdict as its line carries it: `stale: missing a.py` → `[stale: missing a.py]`."""
    return f"[{label}]"


def parts(label: str) -> tuple[str, str, str, str]:
    """A label split as a cut keeps it: (opening, kind with its separator, detail, closing).

    `[stale: missing a.py]` → (`[`, `stale: `, `missing a.py`, `]`); `(from main)` → (`(`, `from `, `main`, `)`);
    a label without detail (`[contested]`) has an empty detail.
    """
    opening, inner, closing = label[:1], label[1:-1], label[-1:]
    for word in (*REFERENCE_VERDICTS, FROM):
        sep = ": " if word in REFERENCE_VERDICTS else " "
        if inner.startswith(word + sep):
            return opening, word + sep, inner[len(word) + len(sep) :], closing
    return opening, inner, "", closing


GLOSSARY = (
    f"{CONTESTED}, {SUPERSEDED}, "
    + ", ".join(reference(f"{v}: …") for v in REFERENCE_VERDICTS[:-1])
    + (f" or {reference(REFERENCE_VERDICTS[-1] + ': …')}")
)
"""Every trust and freshness label a line may carry, for the texts that explain them."""
