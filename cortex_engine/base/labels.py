"""The trust and freshness labels as every surface writes them: the one vocabulary.

`query/render` attaches them to lines; `memory/items` defuses look-alikes of them in author text; the texts that
tell an agent what they mean (the route map, the server's instructions, the tool descriptions) quote them. All
three take the words from here, so a label cannot be spelled two ways or be missed by the defusing. Imports
nothing: `cortex serve` quotes it before the MCP SDK is imported.
"""

from __future__ import annotations

CONTESTED = "[contested]"
SUPERSEDED = "(superseded)"
RESOLVED = "(resolved)"
REFERENCE_VERDICTS = ("stale", "moved", "drifted")
"""The freshness verdicts a line can carry, each as `[verdict: detail]`."""


def reference(label: str) -> str:
    """A freshness verdict as its line carries it: `stale: missing a.py` → `[stale: missing a.py]`."""
    return f"[{label}]"


GLOSSARY = f"{CONTESTED}, {SUPERSEDED}, " + ", ".join(reference(f"{v}: …") for v in REFERENCE_VERDICTS[:-1]) + (
    f" or {reference(REFERENCE_VERDICTS[-1] + ': …')}")
"""Every label a line may carry, for the texts that explain them."""
