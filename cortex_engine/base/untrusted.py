"""Text nobody on this machine wrote (file and branch names from git, notes, subjects): its skeleton and its quoting.

Two rules live here, each once:

- `skeleton`: what a string looks like, per UTS #39 — Default_Ignorable_Code_Point removed, NFKC, then every
  look-alike of an ASCII letter folded to it (and case folded). The defusing (`memory/items.defuse_labels`)
  compares author text with the label words on its skeleton, so `[cоntested]` (Cyrillic о) or `(super\ufe0fseded)`
  cannot pass for a label.
- `quote_path`: a path (or branch name) from git as text may show it. A name in the safe path alphabet is shown as
  it is; any other is put in double quotes with every character that is not a printable letter, digit, mark or
  plain ASCII escaped visibly (`\\x1b`, `\\u202e`, `\\x5d` for `]`), the way git's `core.quotePath` does. So a name
  never carries a control, an invisible or bidi character to a screen, never breaks a line, and never closes the
  label it sits in (`]`, `)` and `;` are escaped).

Imports nothing from Cortex.
"""

from __future__ import annotations

import re
import unicodedata

from cortex_engine.base.confusables import FOLD

# Default_Ignorable_Code_Point, as DerivedCoreProperties.txt derives it: Other_Default_Ignorable_Code_Point + Cf +
# Variation_Selector - White_Space - FFF9..FFFB - 13430..13440 - Prepended_Concatenation_Mark (Unicode 14, the
# version of Python 3.11's `unicodedata`). tests/security/test_forged_labels.py recomputes it from `unicodedata`.
IGNORABLE_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
IGNORABLE = re.compile(
    "[" + "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b != a else "") for a, b in IGNORABLE_RANGES) + "]"
)
"""Every Default_Ignorable_Code_Point: they render as nothing, so text holding them can look like what it is not."""

_FOLD = {ord(ch): proto for proto, chars in FOLD.items() for ch in chars}
_FOLD.update({ord(c): c.lower() for c in "ABCDEFGHJKMNPQRSTUVWXYZ"})
_FOLD.update({ord(c): "l" for c in "iIL1|"})
_FOLD.update({ord(c): "o" for c in "O0"})


def visible(text: str) -> str:
    """`text` with every Default_Ignorable_Code_Point removed, NFKC-normalised (then removed again: NFKC can
    produce none today, but the order makes sure)."""
    if text.isascii():
        return text
    return IGNORABLE.sub("", unicodedata.normalize("NFKC", IGNORABLE.sub("", text)))


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of text already made `visible`, one character for one (so a match's span in the
    skeleton is its span in the text): look-alikes of ASCII letters, digits and `( ) :` folded to one
    prototype, ASCII folded to lower case, `i`/`l`/`1`/`|` to `l` and `o`/`0` to `o`."""
    return text.translate(_FOLD)


def skeleton_of(word: str) -> str:
    """The skeleton of a word as a pattern matches it (a label word, `contested` → `contested`, `drifted` →
    `drlfted`)."""
    return skeleton(visible(word))


_SAFE_PATH = re.compile(r"[A-Za-z0-9._/@+=~%#:,-]+")
_ESCAPED_ASCII = frozenset('"\\[]();')


def _shown(ch: str) -> bool:
    if ch.isascii():
        return ch.isprintable() and ch not in _ESCAPED_ASCII
    return (
        unicodedata.category(ch)[0] in "LMN" and IGNORABLE.match(ch) is None and unicodedata.normalize("NFKC", ch) == ch
    )


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def quote_path(name: str) -> str:
    """A file or branch name from git as any surface shows it: as it is in the safe path alphabet, else quoted.

    Quoted means in double quotes, with each character that is not printable ASCII or a visible letter, digit
    or mark escaped (`\\x1b`, `\\n`-as-`\\x0a`, `\\u202e`), and `"`, `\\`, `[`, `]`, `(`, `)`, `;` escaped too, so
    the name can neither close nor fake a label (`[moved: a → "b\\x5d \\x5bcontested\\x5d"]`); a character NFKC
    would change (a fullwidth bracket) is escaped too, so no later normalisation can bring a bracket back.
    """
    if _SAFE_PATH.fullmatch(name):
        return name
    return '"' + "".join(ch if _shown(ch) else _escape(ch) for ch in name) + '"'
