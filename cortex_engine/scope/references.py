"""Extract the file and path references a memory's subject and text mention."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["Reference", "ReferenceType", "Repository", "extract_references", "rewrite_path"]

ReferenceType = Literal["file", "absolute_path"]
"""How a reference is validated: against the app graph (`file`) or the filesystem (`absolute_path`)."""

# Character classes shared by every pattern: a path segment, a separator, an extension character.
_SEG = r"[A-Za-z0-9_.@-]"
_SEP = r"[\\/]"
_EXT = r"[A-Za-z0-9]"
_NAME = rf"{_SEG}+\.{_EXT}{{1,10}}"

_WINDOWS_START = re.compile(r"[A-Za-z]:[\\/]")
_FILE_EXTENSION = re.compile(rf"\.{_EXT}{{1,10}}(?::[0-9]+(?::[0-9]+)?)?")
_BOUNDARY = re.compile(r"[\s)\"'\],.;]")
_HOME_RELATIVE = re.compile(rf"(?<!{_SEG})~{_SEP}(?:{_SEG}+{_SEP})*{_NAME}")
_POSIX_ABSOLUTE = re.compile(rf"(?<![A-Za-z0-9_.@~-])/(?:{_SEG}+/)+{_NAME}")
# A relative match can only begin where a chain of `seg(/seg)*` begins: if none starts there, none
# starts anywhere later in the same chain, so both lookbehinds only prune hopeless retries (which
# would otherwise make a long slash-and-dot run quadratic) and never change what is found.
_RELATIVE = re.compile(rf"(?<!{_SEG})(?<!{_SEG}{_SEP})(?:\.{{1,2}}{_SEP})?(?:{_SEG}+{_SEP})+{_NAME}")
# Spans that look like a path but are rooted nowhere checkable: URL authorities, placeholder roots
# (`<x>/`, `${X}/`, `{x}/`, `%VAR%/`), glob roots (`**/`) and concatenation fragments (`+ '/`).
# The scheme alternative anchors at the start of its character run and reports the span from the
# run's first letter (group `scheme`), which is where a plain leftmost scan would start it; that and
# the `(?<!\*)` anchor keep long letter or star runs linear.
_UNROOTED_SPAN = re.compile(
    r"(?:(?<![A-Za-z0-9+.-])[0-9+.-]*+(?P<scheme>[A-Za-z])[A-Za-z0-9+.-]*+://"
    r"|<[^<>\s\\/]*+>[\\/]"
    r"|\$?\{[^{}\s\\/]*+\}[\\/]"
    r"|%[A-Za-z0-9_]++%[\\/]"
    r"|(?<!\*)\*++[\\/]"
    r"|\+\s*+[\"'`][\\/])"
    r"[A-Za-z0-9_.@$%:~+\\/-]*+"
)
# Every unrooted span holds one of these (its alternatives above, in order): a text holding none has no span.
_SPAN_MARKS = ("://", "<", "{", "%", "*", "+")
# A bare file name (`main.py`, `./setup.py`): only a reference when the repository tracks it at its root.
_BARE = re.compile(rf"(?<![A-Za-z0-9_.@~/\\-])(?:\./)?{_NAME}")
# What a branch looks like where a path would: a version-like last "extension" (`origin/8.0.x`, `user/7.x`,
# `feature/completion_6.6`), or the name a merge message gives (`Merge pull request #1 from user/x.y`).
_VERSION_TAIL = re.compile(r"\.(?:[0-9]+|[xX])\Z")
_MERGE_LEAD = re.compile(r"(?i)\bmerge\b.*\b(?:from|branch|into|of)\s+[\'\"`]?\Z")
_MERGE_LOOKBACK = 160
_LEADING_OPENERS = re.compile(r"\A[(\[{<]+")
_TRAILING_LINE_COL = re.compile(r":[0-9]+(?::[0-9]+)?\Z")
_TRAILING_PUNCTUATION = re.compile(r"[)\]}>,.;:'\"!]+\Z")
_DRIVE_ROOT = re.compile(r"[A-Za-z]:/")


class Repository(Protocol):
    """What extraction may ask of the repository a memory was written in (see `freshness.GitPaths`)."""

    def tracked_root_file(self, name: str) -> bool:
        """Whether a file called `name` is tracked at the repository root (at the recorded HEAD or now)."""
        ...

    def names_ref(self, path: str) -> bool:
        """Whether `path` is the short name of a branch, tag or remote branch, or starts with a remote's name."""
        ...

    def ever_tracked(self, path: str) -> bool:
        """Whether `path` is in the checkout or was a tracked path at any commit."""
        ...


@dataclass(frozen=True)
class Reference:
    """One path a memory mentions: as written (trimmed), slash-normalized, and how to validate it."""

    raw: str
    normalized: str
    type: ReferenceType


def extract_references(subject: str | None, text: str, repo: Repository | None = None) -> list[Reference]:
    """Return the distinct path references in `subject` and `text`, in order of first appearance.

    With `repo`, a bare file name is a reference when the repository tracks it at its root, and a relative
    candidate that names (or is shaped like) a branch and was never a tracked path is not one.
    """
    joined = text if subject is None else f"{subject}\n{text}"
    span_starts, span_ends = _unrooted_spans(joined)
    windows = _windows_absolute_matches(joined)
    drive_starts = {index for index, _ in windows}
    # A forward-slash drive path (`C:/a/b.txt`) is already the Windows match; its POSIX-looking tail
    # (`/a/b.txt`) would be a second, wrong absolute path.
    posix = [(index, value) for index, value in _matches(_POSIX_ABSOLUTE, joined) if index - 2 not in drive_starts]
    # Absolute kinds go first so a relative span inside one (`.claude/x.md` in `~/.claude/x.md`) is
    # recognised as part of it, wherever it appears.
    candidates = [
        *windows,
        *(_matches(_HOME_RELATIVE, joined) if "~" in joined else []),
        *posix,
        *_matches(_RELATIVE, joined),
        *(_matches(_BARE, joined) if repo is not None else []),
    ]
    seen: set[str] = set()
    absolutes: list[str] = []
    absolutes_blob = ""
    blob_stale = False
    kept: list[tuple[int, Reference]] = []
    for index, value in candidates:
        if _begins_inside(index, span_starts, span_ends):
            continue
        raw = _trim(value)
        normalized = _normalize(raw)
        if normalized in seen:
            continue
        if "/" not in normalized:
            if repo is None or not repo.tracked_root_file(normalized):
                continue
        absolute = _is_absolute(normalized)
        if repo is not None and not absolute and "/" in normalized and _branch_like(repo, normalized, joined, index):
            continue
        if not absolute:
            if blob_stale:
                absolutes_blob, blob_stale = "\n".join(absolutes), False
            # No candidate contains a newline, so one search of the joined paths is `any(... in ...)`.
            if normalized in absolutes_blob:
                continue
        seen.add(normalized)
        if absolute:
            absolutes.append(normalized)
            blob_stale = True
        kept.append((index, Reference(raw, normalized, "absolute_path" if absolute else "file")))
    kept.sort(key=lambda item: item[0])
    return [reference for _, reference in kept]


def _branch_like(repo: Repository, path: str, text: str, index: int) -> bool:
    """A relative candidate that names a ref, or has a branch's shape, and was never a tracked path."""
    line_start = max(text.rfind("\n", 0, index) + 1, index - _MERGE_LOOKBACK)
    shaped = (
        bool(_VERSION_TAIL.search(path)) or bool(_MERGE_LEAD.search(text, line_start, index)) or repo.names_ref(path)
    )
    return shaped and not repo.ever_tracked(path)


def _matches(pattern: re.Pattern[str], text: str) -> list[tuple[int, str]]:
    """Every match of `pattern` in `text` as (start offset, matched text)."""
    return [(match.start(), match.group()) for match in pattern.finditer(text)]


def _windows_absolute_matches(text: str) -> list[tuple[int, str]]:
    """Each drive root up to the first extension on its line that ends at a boundary."""
    if ":/" not in text and ":\\" not in text:  # what every drive root holds: the scan below would find none
        return []
    starts = [match.start() for match in _WINDOWS_START.finditer(text)]
    if not starts:
        return []
    # Extensions begin at a dot and hold no dot, so the matches from any drive root onwards are the
    # same as one scan of the whole text; precomputing them keeps many roots on one line linear.
    ext_starts: list[int] = []
    ext_ends: list[int] = []
    for match in _FILE_EXTENSION.finditer(text):
        end = match.end()
        if end == len(text) or _BOUNDARY.match(text, end):
            ext_starts.append(match.start())
            ext_ends.append(end)
    newlines = [index for index, char in enumerate(text) if char == "\n"]
    found: list[tuple[int, str]] = []
    for start in starts:
        line = bisect_left(newlines, start)
        line_end = newlines[line] if line < len(newlines) else len(text)
        ext = bisect_left(ext_starts, start)
        if ext < len(ext_starts) and ext_starts[ext] < line_end:
            found.append((start, text[start : ext_ends[ext]]))
    return found


def _unrooted_spans(text: str) -> tuple[list[int], list[int]]:
    """The (starts, ends) of every unrooted span, in text order and non-overlapping."""
    starts: list[int] = []
    ends: list[int] = []
    if not any(mark in text for mark in _SPAN_MARKS):
        return starts, ends
    for match in _UNROOTED_SPAN.finditer(text):
        scheme = match.start("scheme")
        starts.append(scheme if scheme >= 0 else match.start())
        ends.append(match.end())
    return starts, ends


def _begins_inside(index: int, starts: list[int], ends: list[int]) -> bool:
    """Whether offset `index` lies inside one of the spans."""
    span = bisect_right(starts, index) - 1
    return span >= 0 and index < ends[span]


def _trim(raw: str) -> str:
    """Strip leading openers, a trailing `:line[:col]`, then trailing punctuation."""
    trimmed = _LEADING_OPENERS.sub("", raw)
    trimmed = _TRAILING_LINE_COL.sub("", trimmed)
    return _TRAILING_PUNCTUATION.sub("", trimmed)


def _normalize(raw: str) -> str:
    """Use forward slashes and drop any leading `./`."""
    normalized = raw.replace("\\", "/")
    while normalized.startswith("./"):
        normalized = normalized[2:]
    return normalized


def _is_absolute(normalized: str) -> bool:
    """Whether a normalized path is rooted at a drive, `/` or the home directory."""
    return bool(_DRIVE_ROOT.match(normalized)) or normalized.startswith(("/", "~/"))


def rewrite_path(text: str, old: str, new: str) -> tuple[str, int]:
    """`text` with every mention of the relative path `old` replaced by `new`; returns it and how many were replaced.

    A mention is `old` as extraction reads it: either separator, an optional leading `./` (kept), and a trailing
    `:line[:col]` or punctuation left as they are. A longer path that merely contains `old` (`lib/src/a.py`,
    `src/a.pyc`, `src/a.py.bak`) is not a mention and stays unchanged.
    """
    body = _SEP.join(re.escape(part) for part in old.split("/"))
    pattern = re.compile(rf"(?<![A-Za-z0-9_.@~/\\-])(?P<lead>\.{_SEP})?{body}(?![A-Za-z0-9_@/\\-])(?!\.{_EXT})")
    return pattern.subn(lambda match: (match.group("lead") or "") + new, text)
