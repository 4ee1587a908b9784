"""The shipped tokenizer (`tokenizer.json`: BERT's normalizer, pre-tokenizer and WordPiece) for ASCII text, in Python.

The `tokenizers` library holds ~15 MiB for this vocabulary (its import and its maps); a dict of the 30,522 pieces
holds ~4 MiB. Every rule below is the library's for ASCII input, where each Unicode table it consults is plain:
control characters other than tab and newlines are dropped, whitespace splits, each ASCII punctuation character is a
word of its own, letters are lower-cased (no accent to strip), and each word is cut into the longest pieces the
vocabulary has, left to right (`##` marks a piece inside a word; a word with no cut, or over 100 characters, is
`[UNK]`). A text with any other character, or naming a special token (`[SEP]`, matched before normalising), is
left to the library (`handles`): the ids are the library's either way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

_CONTROL = {c: None for c in (*range(0, 9), 11, 12, *range(14, 32), 127)}
_SPACES = {9: 32, 10: 32, 13: 32}
_WORDS = re.compile(r"[^ !-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")
"""A run of characters that are neither a space nor ASCII punctuation, or one punctuation character."""


class WordPiece:
    """Text → token ids as the shipped tokenizer gives them (with `[CLS]` and `[SEP]`), for the texts it `handles`."""

    def __init__(self, path: Path) -> None:
        """Read the vocabulary and the special tokens from a `tokenizer.json` whose model is WordPiece."""
        data = json.loads(path.read_text(encoding="utf-8"))
        model = data["model"]
        self.vocab: dict[str, int] = model["vocab"]
        self.unknown = self.vocab[model["unk_token"]]
        self.prefix: str = model["continuing_subword_prefix"]
        self.longest: int = model["max_input_chars_per_word"]
        self.first, self.last = self.vocab["[CLS]"], self.vocab["[SEP]"]
        self.specials: tuple[str, ...] = tuple(t["content"] for t in data["added_tokens"])
        self.table = {**_CONTROL, **_SPACES}

    def handles(self, text: str) -> bool:
        """Whether `encode` gives the library's ids for this text: ASCII and no special token in it."""
        return text.isascii() and not any(s in text for s in self.specials)

    def encode(self, text: str, max_tokens: int) -> list[int]:
        """The ids of a text `handles` accepts, cut to `max_tokens` with the two special tokens."""
        ids: list[int] = []
        room = max_tokens - 2
        for word in _WORDS.findall(text.translate(self.table).lower()):
            ids.extend(self._pieces(word))
            if len(ids) >= room:
                break
        return [self.first, *ids[:room], self.last]

    def _pieces(self, word: str) -> list[int]:
        if len(word) > self.longest:
            return [self.unknown]
        pieces = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self.unknown]
            pieces.append(found)
            start = end
        return pieces
