"""Claim-level anchors: the line range or symbol a note names inside a file it references, and whether it drifted.

Write time (`find_anchors`): for each file reference of a note, a line range written next to the path
(`src/x.py:42`, `src/x.py:40-52`, `src/x.py#L40-L52`) or a symbol the note names that the file defines
(`refresh_token()`, `SessionStore.refresh`, `` `parse_args` ``) becomes an anchor: the span's location and a
hash of its content with all whitespace removed, read from the checkout as it is.

A symbol's span starts at the decorators (Python, JS/TS), annotations (Java) or attributes (Rust) directly above
its header: they are part of what the definition means (`@option("--count", default=3)`, `@app.get("/v1/x")`).
The span rule is stored with each symbol anchor as its digest's prefix (`SPAN_FORMAT`); a bare digest is format 1,
the definition from its own header line, as notes anchored before decorators counted were.

Read time (`locate`): the span is looked up again in the file as it is now (a symbol by its name, a line range
where it was, else anywhere in the file by content). Same content → fresh (wherever it now is); a symbol whose
body changed, or a line range whose content is nowhere → drifted; a symbol no longer defined → missing. A format-1
anchor is compared on its body alone and, when that still matches, is answered fresh with the digest of its span
as format 2 reads it (the caller stores it: the note is re-anchored without a false drift).

A symbol gone from its file is looked for before it is called missing: `scope/follow.py`.

Definitions are found with `ast` for Python (a quick indentation scan finds the candidate, `ast` confirms its
extent; a file the scan cannot cut is parsed whole) and with `DEFINITION_PATTERNS` plus brace (or `end`)
matching for JS/TS, Go, Rust, Java and Ruby. Files are read without following symlinks and only up to
`MAX_FILE_BYTES`; parsed files are kept per (path, mtime, size, inode) for the life of the process.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import stat
import textwrap
from dataclasses import dataclass, field

__all__ = [
    "Anchor",
    "Located",
    "Source",
    "digest_matches",
    "find_anchors",
    "locate",
    "read_source",
    "short_diff",
    "source_of",
    "span_digest",
    "symbol_digest",
]

MAX_FILE_BYTES = 1 << 20
"""A file larger than this gets no anchor and is never read for one."""
MAX_ANCHORS = 8
"""At most this many anchors per note."""
MAX_LINE_SPAN = 400
"""A line range or definition longer than this is not anchored."""
SPAN_FORMAT = 2
"""The span rule of new symbol anchors: 2 = the definition with the decorators, annotations or attributes directly
above it. Stored as the digest's prefix (`2:<hex>`); a bare digest is format 1 (from the header line down)."""
MAX_DECORATOR_LINES = 400
"""The walk up from a header over its decorators stops after this many lines (a command-line entry point may carry
hundreds of lines of `@option`s; `MAX_LINE_SPAN` counts a definition's own lines, from its header)."""

_LINES_AFTER = r"(?::(?P<a>[0-9]{1,7})(?:-(?P<b>[0-9]{1,7}))?|#L(?P<c>[0-9]{1,7})(?:-L?(?P<d>[0-9]{1,7}))?)(?![0-9])"
# What a note names as a symbol: a call (`name(`), a qualified name (`A.b`, `A::b`, `A#b`), a backticked
# identifier, or an identifier shaped like code (snake_case or camelCase).
_CALLED = re.compile(r"(?<![\w.$])([A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*)\s*\(")
_QUALIFIED = re.compile(r"(?<![\w.$/])([A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)+)(?![\w$/])")
_TICKED = re.compile(r"`([A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*)(?:\(\))?`")
_CODE_SHAPED = re.compile(r"(?<![\w.$/])([a-z_$][\w$]*_[\w$]*|[a-z$][a-z0-9$]*[A-Z][\w$]*)(?![\w$/.])")
_IGNORED = frozenset(
    {
        "if",
        "for",
        "while",
        "switch",
        "catch",
        "return",
        "new",
        "else",
        "print",
        "self",
        "this",
        "super",
        "function",
        "def",
        "class",
        "len",
        "str",
        "int",
        "list",
        "dict",
        "set",
        "type",
    }
)


def normalise(text: str) -> str:
    """The content with every whitespace character removed (so reindenting or rewrapping is no change). `str.split`
    cuts at exactly the characters the pattern `\\s` matches (every code point checked), five times faster."""
    return "".join(text.split())


def span_digest(lines: list[str], start: int, end: int) -> str:
    """The hash of lines `start`..`end` (1-based, inclusive), whitespace-insensitive."""
    return text_digest("".join(lines[start - 1 : end]))


def text_digest(text: str) -> str:
    """The digest of a text, whitespace-insensitive (a span's lines joined)."""
    return hashlib.blake2b(normalise(text).encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


FORMAT_TAG = f"{SPAN_FORMAT}:"


def span_format(digest: str) -> int:
    """The span rule a stored symbol digest was taken with: `SPAN_FORMAT` when tagged, else 1."""
    return SPAN_FORMAT if digest.startswith(FORMAT_TAG) else 1


@dataclass(frozen=True)
class Span:
    """Where a definition is: 1-based inclusive lines, from its first decorator; `head` is its own header line
    when decorators stand above it (0: the header is `start`)."""

    start: int
    end: int
    head: int = 0

    def first(self, fmt: int = SPAN_FORMAT) -> int:
        """The span's first line under span rule `fmt` (format 1 starts at the header)."""
        return self.start if fmt >= SPAN_FORMAT else (self.head or self.start)


def symbol_digest(lines: list[str], span: Span, fmt: int = SPAN_FORMAT) -> str:
    """A symbol span's stored digest under span rule `fmt` (tagged with its format from format 2 on)."""
    digest = span_digest(lines, span.first(fmt), span.end)
    return FORMAT_TAG + digest if fmt >= SPAN_FORMAT else digest


def digest_matches(lines: list[str], start: int, end: int, digest: str) -> bool:
    """Whether lines `start`..`end` hold the content a stored digest (tagged or bare) was taken of."""
    return span_digest(lines, start, end) == digest.removeprefix(FORMAT_TAG)


@dataclass(frozen=True)
class Anchor:
    """One anchor: a symbol (`symbol` set) or a line range in `path`, with its content hash."""

    path: str
    symbol: str | None
    start: int
    end: int
    digest: str

    @property
    def kind(self) -> str:
        """`symbol` or `lines`."""
        return "symbol" if self.symbol else "lines"

    @property
    def name(self) -> str:
        """How labels name it: `path:symbol`, `path:40-52` or `path:42`."""
        where = self.symbol or (f"{self.start}-{self.end}" if self.end != self.start else str(self.start))
        return f"{self.path}:{where}"


@dataclass(frozen=True)
class Located:
    """What the current file says about an anchor: fresh | drifted | missing | unknown, and where it is."""

    status: str
    start: int | None = None
    end: int | None = None
    digest: str | None = None
    path: str | None = None
    """For `moved`: the file the definition is in now."""
    symbol: str | None = None
    """For `moved`: the name it is defined under now."""
    changed: bool = False
    """For `moved`: its text changed beyond whitespace on the way."""


@dataclass
class Source:
    """One file's text as read once, with its definitions found on first need."""

    text: str
    lines: list[str]
    language: str | None
    _defs: dict[str, list[Span]] | None = field(default=None, repr=False)
    _found: dict[tuple[int, str], list[int]] = field(default_factory=dict, repr=False)
    _spans: dict[str, list[Span]] = field(default_factory=dict, repr=False)
    _whole: dict[str, list[Span]] | None = field(default=None, repr=False)
    _located: dict[tuple[str | None, int, int, str], Located] = field(default_factory=dict, repr=False)
    _shorts: frozenset[str] | None = field(default=None, repr=False)
    _followed: dict[tuple[str, str, int, bool], object] = field(default_factory=dict, repr=False)
    """`scope/follow`'s answers about this text, kept with it: a later check of the same files costs a lookup."""

    def short_names(self) -> frozenset[str]:
        """The last part of every name the file defines (cheap for Python: its header lines only)."""
        if self._shorts is None:
            if self.language == "python":
                self._shorts = _python_short_names(self.text)
            else:
                self._shorts = frozenset(n.rsplit(".", 1)[-1] for n in self.definitions())
        return self._shorts

    def definitions(self) -> dict[str, list[Span]]:
        """Every name (simple and qualified) the file defines, each with its spans."""
        if self._defs is None:
            self._defs = _definitions(self.language, self.text, self.lines) if self.language else {}
        return self._defs

    def spans(self, name: str) -> list[Span]:
        """The spans defining `name`; for Python each is confirmed with `ast` (a file the scan cannot cut is parsed
        whole)."""
        hit = self._spans.get(name)
        if hit is not None:
            return hit
        unsure = False
        if self.language == "python":
            spans, unsure = _python_named(self.text, self.lines, name)
        else:
            spans = self.definitions().get(name, [])
        if (spans or unsure) and self.language == "python":
            # A span too long to anchor (a module-sized class) is kept as the scan cut it: parsing it would cost
            # a whole-file parse on every write that names it, for an anchor `find_anchors` will not make.
            confirmed = [
                _python_confirm(self.lines, span) if span.end - span.first(1) < MAX_LINE_SPAN else span
                for span in spans
            ]
            if unsure or any(c is None for c in confirmed):
                if self._whole is None:
                    self._whole = _python_definitions_ast(self.text)
                spans = self._whole.get(name, [])
            else:
                spans = [c for c in confirmed if c is not None]
        self._spans[name] = spans
        return spans

    def find_content(self, length: int, digest: str, near: int) -> int | None:
        """The start line of a `length`-line window with this digest (nearest `near`), or None."""
        key = (length, digest)
        if key not in self._found:
            norm = [normalise(line) for line in self.lines]
            hits = []
            for start in range(0, len(norm) - length + 1):
                body = "".join(norm[start : start + length])
                if hashlib.blake2b(body.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest() == digest:
                    hits.append(start + 1)
            self._found[key] = hits  # every copy: another anchor of the same content asks from elsewhere
        hits = self._found[key]
        return min(hits, key=lambda s: abs(s - near)) if hits else None


LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "js",
    ".jsx": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".ts": "js",
    ".tsx": "js",
    ".mts": "js",
    ".cts": "js",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".rb": "ruby",
}

_JS_METHOD_SKIP = r"(?!(?:if|for|while|switch|catch|return|function|else|do|try|with)\b)"
DEFINITION_PATTERNS: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {
    # (role, pattern): a `container` qualifies what it encloses and a `qualifier` (Rust's impl) only does that;
    # a `method` must have a `{` body.
    "js": (
        (
            "container",
            re.compile(
                r"^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:abstract[ \t]+)?"
                r"(?:class|interface|namespace|enum)[ \t]+(?P<name>[A-Za-z_$][\w$]*)",
                re.M,
            ),
        ),
        (
            "def",
            re.compile(
                r"^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?"
                r"function\*?[ \t]*(?P<name>[A-Za-z_$][\w$]*)",
                re.M,
            ),
        ),
        (
            "def",
            re.compile(
                r"^[ \t]*(?:export[ \t]+)?(?:const|let|var)[ \t]+(?P<name>[A-Za-z_$][\w$]*)[ \t]*(?::[^=\n]+)?=[ \t]*"
                r"(?:async[ \t]+)?(?:function\b|\([^)\n]*\)[ \t]*(?::[^=\n]+)?=>|[A-Za-z_$][\w$]*[ \t]*=>)",
                re.M,
            ),
        ),
        (
            "method",
            re.compile(
                r"^[ \t]+(?:(?:public|private|protected|static|async|readonly|override|get|set)[ \t]+)*\*?"
                + _JS_METHOD_SKIP
                + r"(?P<name>[A-Za-z_$][\w$]*)[ \t]*(?:<[^>\n]*>)?[ \t]*\(",
                re.M,
            ),
        ),
    ),
    "go": (
        (
            "def",
            re.compile(
                r"^func[ \t]+(?:\([ \t]*\w*[ \t]*\*?[ \t]*(?P<recv>\w+)(?:\[[^\]]*\])?[ \t]*\)[ \t]*)?"
                r"(?P<name>\w+)[ \t]*[\[(]",
                re.M,
            ),
        ),
        ("def", re.compile(r"^type[ \t]+(?P<name>\w+)(?:\[[^\]]*\])?[ \t]+(?:struct|interface)\b", re.M)),
    ),
    "rust": (
        (
            "qualifier",
            re.compile(r"^[ \t]*impl(?:[ \t]*<[^{\n]*?>)?[ \t]+(?:[\w:<>, ]+?[ \t]+for[ \t]+)?(?P<name>\w+)", re.M),
        ),
        ("container", re.compile(r"^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?trait[ \t]+(?P<name>\w+)", re.M)),
        (
            "def",
            re.compile(
                r"^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?(?:const[ \t]+)?(?:async[ \t]+)?(?:unsafe[ \t]+)?"
                r"(?:extern[ \t]+\"[^\"\n]*\"[ \t]+)?fn[ \t]+(?P<name>\w+)",
                re.M,
            ),
        ),
        ("def", re.compile(r"^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?(?:struct|enum|union)[ \t]+(?P<name>\w+)", re.M)),
    ),
    "java": (
        (
            "container",
            re.compile(
                r"^[ \t]*(?:(?:public|protected|private|static|final|abstract|sealed|non-sealed)[ \t]+)*"
                r"(?:class|interface|enum|record)[ \t]+(?P<name>\w+)",
                re.M,
            ),
        ),
        (
            "method",
            re.compile(
                r"^[ \t]*(?:@\w+[ \t]+)*"
                r"(?:(?:public|protected|private|static|final|abstract|synchronized|native|default|strictfp)[ \t]+)*"
                r"(?:<[^>\n]+>[ \t]+)?"
                + _JS_METHOD_SKIP
                + r"[\w$][\w$<>\[\]?,. ]*?[ \t]+(?P<name>[A-Za-z_$][\w$]*)[ \t]*\(",
                re.M,
            ),
        ),
    ),
    "ruby": (
        ("container", re.compile(r"^[ \t]*(?:class|module)[ \t]+(?:\w+::)*(?P<name>[A-Z]\w*)", re.M)),
        ("def", re.compile(r"^[ \t]*def[ \t]+(?:self\.)?(?P<name>\w+[?!=]?)", re.M)),
    ),
}


def _definitions(language: str, text: str, lines: list[str]) -> dict[str, list[Span]]:
    if language == "python":
        return _python_definitions(text, lines)
    found: list[tuple[int, int, str, str | None, str]] = []  # start, end, name, receiver, role
    offsets = _line_offsets(text)
    for role, pattern in DEFINITION_PATTERNS[language]:
        for match in pattern.finditer(text):
            name = match.group("name")
            if name in _IGNORED:
                continue
            start = _line_of(offsets, match.start())
            if language == "ruby":
                end = _ruby_end(lines, start)
            else:
                # A pattern that ends on the parameter list's `(` (Go's type list's `[`) is scanned from that
                # bracket, so the newlines of a long parameter list count as inside it, not before the body
                at = match.end() - 1 if text[match.end() - 1] in "([" else match.end()
                end = _brace_end(text, at, offsets, start, need_body=role == "method", lifetimes=language == "rust")
            if end is None:
                continue
            recv = match.groupdict().get("recv")
            found.append((start, end, name, recv, role))
    found.sort()
    containers = [(s, e, n) for s, e, n, _, role in found if role in ("container", "qualifier")]
    names: dict[str, list[Span]] = {}
    for start, end, name, recv, role in found:
        if role == "qualifier":
            continue
        top = decorators_above(lines, start, language)
        span = Span(top, end, start if top != start else 0)
        owner = recv or next((n for s, e, n in reversed(containers) if s < start and end <= e), None)
        _add(names, name, span)
        if owner and owner != name:
            _add(names, f"{owner}.{name}", span)
    return names


_DECORATOR = {"python": "@", "js": "@", "java": "@", "rust": "#["}
"""How a decorator (an annotation, a Rust attribute) starts, per language that has them; Go and Ruby have none."""
_COMMENT_LINE = {"python": ("#",), "js": ("//", "/*", "*"), "java": ("//", "/*", "*"), "rust": ("//", "/*", "*")}
_QUOTED = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'")


def decorators_above(lines: list[str], start: int, language: str | None) -> int:
    """The first line of the decorators directly above the header on line `start` (`start` when there are none).

    Walking up: a line that starts with the language's decorator sign and closes every bracket opened below it is a
    decorator; lines that only close brackets are the tail of a decorator written over several lines; comment lines
    between them are passed. Anything else (a blank line, the previous statement, an enclosing `{`, a decorated
    field ending in `;`) ends the walk. Python's `ast` confirms what the walk found (`_python_confirm`).
    """
    sign = _DECORATOR.get(language or "")
    if sign is None:
        return start
    comments = _COMMENT_LINE[language or ""]
    top = start
    depth = 0
    for j in range(start - 1, max(start - 1 - MAX_DECORATOR_LINES, 0), -1):
        code = lines[j - 1].strip()
        if depth == 0 and (not code or code.startswith(comments)) and not code.startswith(sign):
            if not code:
                break
            continue
        bare = _QUOTED.sub('""', code).split("#" if language == "python" else "//", 1)[0].rstrip()
        depth += sum(bare.count(c) for c in ")]}") - sum(bare.count(c) for c in "([{")
        if depth > 0:
            continue
        # A line ending in `;` is a statement or a decorated field (`@Input() name: string;`), not a decorator.
        if depth < 0 or not code.startswith(sign) or bare.endswith(";"):
            break
        top = j
    return top


def _add(names: dict[str, list[Span]], name: str, span: Span) -> None:
    spans = names.setdefault(name, [])
    if span not in spans:
        spans.append(span)


def _line_offsets(text: str) -> list[int]:
    return [0, *(m.end() for m in re.finditer("\n", text))]


def _line_of(offsets: list[int], index: int) -> int:
    from bisect import bisect_right

    return bisect_right(offsets, index)


def _brace_end(
    text: str, index: int, offsets: list[int], start: int, *, need_body: bool, lifetimes: bool = False
) -> int | None:
    """The line of the `}` closing the body that begins after `index`; a bodiless definition ends on its `;`."""
    depth_paren = 0
    depth = 0
    i, n = index, len(text)
    opened = False
    while i < n:
        ch = text[i]
        if ch in "\"'`" and not (lifetimes and ch == "'" and not _char_literal(text, i)):
            i = _skip_string(text, i)
            continue
        if ch == "/" and i + 1 < n and text[i + 1] in "/*":
            i = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2) + 1
            if i <= 0:
                return None
            i += 1
            continue
        if ch in "([":
            depth_paren += 1
        elif ch in ")]":
            depth_paren -= 1
        elif ch == "{" and depth_paren <= 0:
            depth += 1
            opened = True
        elif ch == "}" and depth_paren <= 0:
            depth -= 1
            if opened and depth == 0:
                return _line_of(offsets, i)
            if depth < 0:
                return None
        elif ch == ";" and depth_paren <= 0 and not opened:
            return None if need_body else _line_of(offsets, i)
        elif ch == "\n" and not opened and depth_paren <= 0 and need_body and _line_of(offsets, i) - start > 8:
            return None
        i += 1
    return None


def _ruby_end(lines: list[str], start: int) -> int | None:
    """The line of the `end` at the definition's own indentation (Ruby), or None."""
    depth = _indent(lines[start - 1])
    for j in range(start, len(lines)):
        if _indent(lines[j]) == depth and re.match(r"end\b", lines[j].lstrip()):
            return j + 1
    return None


def _char_literal(text: str, i: int) -> bool:
    """Whether the `'` at `i` opens a Rust char literal (`'x'`, `'\\n'`) rather than a lifetime (`'a`)."""
    return text[i + 1 : i + 2] == "\\" or text[i + 2 : i + 3] == "'"


def _skip_string(text: str, i: int) -> int:
    quote = text[i]
    j = i + 1
    n = len(text)
    while j < n:
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == quote:
            return j + 1
        if ch == "\n" and quote != "`":
            return j  # an unterminated quote (a Rust lifetime, a Go rune gone wrong) ends at the line
        j += 1
    return n


def _indent(line: str) -> int | None:
    stripped = line.lstrip()
    if not stripped or stripped.startswith("#"):
        return None
    return len(line) - len(stripped)


_PY_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)", re.M)
_PY_DEF_AT = re.compile(r"[ \t]*(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)")


def python_defined(line: str) -> str | None:
    """The name one line of Python defines (`def`, `async def`, `class` at its start), as `Source.short_names` reads
    each line of a file; None when it defines none."""
    match = _PY_DEF_AT.match(line)
    return match.group(1) if match is not None else None


def _python_short_names(text: str) -> frozenset[str]:
    """The names `_PY_DEF` finds, read from each line holding `def` or `class` (found with `str.find`, four times
    faster than the pattern over every line: a symbol gone from its file has every changed file read for them)."""
    names = set()
    for word in ("def", "class"):
        at = text.find(word)
        while at >= 0:
            match = _PY_DEF_AT.match(text, text.rfind("\n", 0, at) + 1)
            if match is not None:
                names.add(match.group(1))
            at = text.find(word, at + len(word))
    return frozenset(names)


def _python_definitions(text: str, lines: list[str]) -> dict[str, list[Span]]:
    """Python definitions by an indentation scan (cheap); `Source.spans` confirms a wanted one with `ast`."""
    offsets = _line_offsets(text)
    indents = [_indent(line) for line in lines]
    names: dict[str, list[Span]] = {}
    stack: list[tuple[int, str]] = []
    for match in _PY_DEF.finditer(text):
        start = _line_of(offsets, match.start())
        depth = len(match.group(1))  # in characters, as `_indent` counts a line's
        end = _python_block_end(lines, indents, start, depth)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        qualified = [n for _, n in stack] + [match.group(2)]
        top = decorators_above(lines, start, "python")
        for k in range(len(qualified)):
            _add(names, ".".join(qualified[k:]), Span(top, end, start if top != start else 0))
        stack.append((depth, match.group(2)))
    return names


def _python_named(text: str, lines: list[str], name: str) -> tuple[list[Span], bool]:
    """The spans of the Python definitions qualified as `name`, found without scanning the whole file: the
    definition lines of its last part, each qualified by walking up to the enclosing `def`/`class` lines.

    Also whether a definition of the last part was not matched after a walk that passed a lower-indented line
    that is not a definition (a block, or a string the walk cannot tell from code): then the caller asks `ast`
    about the whole file."""
    seen = False
    parts = name.split(".")
    offsets: list[int] | None = None
    found: list[Span] = []
    short = parts[-1]
    at = text.find(short)
    while at >= 0:
        here, at = at, text.find(short, at + 1)
        line_start = text.rfind("\n", 0, here) + 1
        head = _PY_DEF.match(text, line_start)
        if head is None or head.start(2) != here or head.group(2) != short:
            continue
        if offsets is None:
            offsets = _line_offsets(text)
        start = _line_of(offsets, here)
        depth = len(head.group(1))  # in characters, as `_indent` counts a line's
        outer: list[str] = []
        level = depth
        doubtful = False
        for j in range(start - 2, -1, -1):
            if level == 0:
                break
            indent = _indent(lines[j])
            if indent is None or indent >= level or lines[j].lstrip()[:1] in ")]}":
                continue  # deeper, blank, or the closing line of a multi-line header
            level = indent
            head = _PY_DEF.match(lines[j])
            if head is not None:
                outer.insert(0, head.group(2))
            else:  # a decorator is never met here: it sits at its definition's indentation, passed on the way up
                doubtful = (
                    True  # an `if`/`try` block, a flush-left string or bracket line the walk cannot tell from code
                )
        if (outer + [parts[-1]])[-len(parts) :] != parts:
            seen = seen or doubtful
            continue
        end = _python_block_end(lines, None, start, depth)
        top = decorators_above(lines, start, "python")
        found.append(Span(top, end, start if top != start else 0))
    return found, seen and not found


def _python_confirm(lines: list[str], span: Span) -> Span | None:
    """The span as `ast` reads the cut block (its true last line), or None when the cut is not one definition."""
    block = textwrap.dedent("".join(lines[span.start - 1 : span.end]))
    try:
        tree = ast.parse(block)
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    node = tree.body[0]
    # The cut must start at the definition's first decorator (or its header) and hold its header where the scan
    # found it: otherwise the walk up took in a line that is not one of its decorators.
    if _python_first_line(node) != 1 or node.lineno != (span.head or span.start) - span.start + 1:
        return None
    return Span(span.start, span.start + (node.end_lineno or 1) - 1, span.head)


def _python_first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    """The line of a definition's first decorator (the `@` line), else of its header."""
    return min((d.lineno for d in node.decorator_list), default=node.lineno)


def _python_block_end(lines: list[str], indents: list[int | None] | None, start: int, depth: int) -> int:
    """The last line of the block whose header is on line `start` (1-based), by brackets then indentation."""
    i = start - 1
    balance = 0
    while i < len(lines) and not lines[i].rstrip().endswith(":"):
        code = lines[i].split("#", 1)[0]
        balance += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
        if balance <= 0:
            break
        i += 1
    last = i
    for j in range(i + 1, len(lines)):
        level = indents[j] if indents is not None else _indent(lines[j])
        if level is None:
            continue
        if level <= depth:
            break
        last = j
    return min(last, len(lines) - 1) + 1


def _python_definitions_ast(text: str) -> dict[str, list[Span]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    names: dict[str, list[Span]] = {}

    def walk(body: list[ast.stmt], outer: list[str]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = _python_first_line(node)
                head = node.lineno if start != node.lineno else 0
                qualified = [*outer, node.name]
                for k in range(len(qualified)):
                    _add(names, ".".join(qualified[k:]), Span(start, node.end_lineno or start, head))
                walk(node.body, qualified)

    walk(tree.body, [])
    return names


# -- reading files -------------------------------------------------------------------------------------

_sources: dict[str, tuple[tuple[int, int, int], Source | None]] = {}
SOURCE_CACHE_SIZE = 2048


def read_source(root: str, rel: str) -> Source | None:
    """The file `rel` under `root` as it is now, or None: absent, a symlink (anywhere under root), not a regular file,
    over `MAX_FILE_BYTES`, or outside `root`. Kept per (mtime, size, inode) for the life of the process."""
    if not rel or rel.startswith("/") or ".." in rel.split("/"):
        return None
    full = os.path.join(root, rel)
    try:
        st = os.lstat(full)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
        return None
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    hit = _sources.get(full)
    if hit is not None and hit[0] == key:
        return hit[1]
    source = _load(root, rel, full)
    if len(_sources) >= SOURCE_CACHE_SIZE:
        for old in list(_sources)[: SOURCE_CACHE_SIZE // 4]:
            del _sources[old]
    _sources[full] = (key, source)
    return source


def _load(root: str, rel: str, full: str) -> Source | None:
    # No directory on the way may be a symlink: each component is checked, the file opened without following.
    here = root
    for part in rel.split("/")[:-1]:
        here = os.path.join(here, part)
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                return None
        except OSError:
            return None
    try:
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES or b"\0" in data[:8192]:
        return None
    return source_of(rel, data.decode("utf-8", "replace"))


def language_of(path: str) -> str | None:
    """The language a file's extension says (`LANGUAGES`), or None."""
    return LANGUAGES.get(os.path.splitext(path)[1].lower())


def source_of(path: str, text: str) -> Source:
    """A `Source` for `text` as the file `path` (its extension picks the language)."""
    return Source(text, text.splitlines(keepends=True), LANGUAGES.get(os.path.splitext(path)[1].lower()))


# -- write time ----------------------------------------------------------------------------------------


def named_symbols(text: str) -> list[str]:
    """The symbol-shaped names a text mentions, in order, `::` and `#` read as `.`."""
    found: dict[str, int] = {}
    for pattern in (_CALLED, _QUALIFIED, _TICKED, _CODE_SHAPED):
        for match in pattern.finditer(text):
            name = match.group(1).replace("::", ".").replace("#", ".")
            if name.split(".")[-1] in _IGNORED or len(name) < 3:
                continue
            found.setdefault(name, match.start())
    return sorted(found, key=found.__getitem__)


def find_anchors(root: str, paths: list[str], text: str) -> list[Anchor]:
    """The anchors a note's text makes in the files `paths` (its file references) of the checkout at `root`."""
    anchors: list[Anchor] = []
    symbols: list[str] | None = None
    for path in paths:
        ranges = _written_ranges(text, path)
        source = None
        if ranges or _mentions_code(text):
            source = read_source(root, path)
        if source is None:
            continue
        for start, end in ranges:
            end = min(end, len(source.lines))
            if 1 <= start <= end and end - start < MAX_LINE_SPAN and normalise("".join(source.lines[start - 1 : end])):
                anchors.append(Anchor(path, None, start, end, span_digest(source.lines, start, end)))
        if source.language is None:
            continue
        if symbols is None:
            symbols = named_symbols(text)
        for name in symbols:
            short = name.split(".")[-1]
            if short not in source.text:
                continue
            spans = source.spans(name)
            if len(spans) != 1:
                continue  # not defined here, or ambiguous (several definitions): no anchor
            span = spans[0]
            if span.end - span.first(1) >= MAX_LINE_SPAN:
                continue  # a module-sized definition: any change anywhere would read as drift
            anchors.append(Anchor(path, name, span.start, span.end, symbol_digest(source.lines, span)))
        if len(set(anchors)) >= MAX_ANCHORS:  # distinct: a range written twice is one anchor
            break
    unique = list(dict.fromkeys(anchors))
    return unique[:MAX_ANCHORS]


def _mentions_code(text: str) -> bool:
    return bool(_CALLED.search(text) or _TICKED.search(text) or _QUALIFIED.search(text) or _CODE_SHAPED.search(text))


_RANGE_AFTER = re.compile(_LINES_AFTER)
_PATH_CHAR = re.compile(r"[\w./-]")


def _written_ranges(text: str, path: str) -> list[tuple[int, int]]:
    """The line ranges written right after `path` (`a.py:3-5`, `a.py#L3-L5`), the path not inside a longer one.

    The path is found with `str.find` and the range matched by one pattern compiled once: a pattern built per
    path missed the `re` cache on every note (a sync of 500 decision files compiled 500 patterns).
    """
    ranges = []
    at = text.find(path) if path else -1
    while at >= 0:
        start = at - 2 if text[max(at - 2, 0) : at] == "./" else at
        match = None
        if start == 0 or not _PATH_CHAR.match(text[start - 1]):
            match = _RANGE_AFTER.match(text, at + len(path))
        at = text.find(path, at + 1)
        if match is None:
            continue
        at = text.find(path, match.end()) if at >= 0 and at < match.end() else at
        a = match.group("a") or match.group("c")
        b = match.group("b") or match.group("d") or a
        start, end = int(a), int(b)
        if end < start:
            start, end = end, start
        ranges.append((start, end))
    return ranges


# -- read time -----------------------------------------------------------------------------------------


def locate(source: Source | None, symbol: str | None, start: int, end: int, digest: str) -> Located:
    """Where an anchor's content is in `source` now, or how it changed (see the module docstring)."""
    if source is None:
        return Located("unknown")
    key = (symbol, start, end, digest)
    hit = source._located.get(key)
    if hit is None:
        hit = source._located[key] = _locate(source, symbol, start, end, digest)
    return hit


def _locate(source: Source, symbol: str | None, start: int, end: int, digest: str) -> Located:
    if symbol:
        spans = source.spans(symbol) if source.language else None
        if not spans:
            return Located("missing")
        fmt = span_format(digest)
        best = None
        for span in spans:
            if symbol_digest(source.lines, span, fmt) == digest:
                # A format-1 anchor whose body still matches is answered with its span and digest as format 2 reads
                # them: the caller stores those, and from then on a decorator changed above it is a drift.
                return Located("fresh", span.start, span.end, symbol_digest(source.lines, span))
            if best is None or abs(span.first(fmt) - start) < abs(best.first(fmt) - start):
                best = span
        assert best is not None
        return Located("drifted", best.start, best.end, symbol_digest(source.lines, best))
    length = end - start + 1
    current = span_digest(source.lines, start, end) if end <= len(source.lines) else None
    if current == digest:
        return Located("fresh", start, end, current)
    found = source.find_content(length, digest, start)
    if found is not None:
        return Located("fresh", found, found + length - 1, digest)
    return Located("drifted", start, min(end, len(source.lines)), current)


def short_diff(then: list[str], now: list[str], limit: int) -> list[str]:
    """A unified diff of a span (no context), at most `limit` lines, then `…` when cut."""
    import difflib  # only inspect-memory shows a diff

    lines = [line.rstrip("\n") for line in difflib.unified_diff(then, now, n=0, lineterm="")][2:]
    lines = [line for line in lines if not line.startswith("@@")]
    return lines[:limit] + (["…"] if len(lines) > limit else [])
