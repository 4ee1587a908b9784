"""The search ledger: did this search already find nothing, and provably still would?

A Grep that returned nothing is recorded only when that is proven: the payload says zero, nothing
in the same turn mutated the tree after it, the pattern is a plain literal-ish one, and Cortex re-runs
it over the same files at flush time and also finds nothing. The record carries a census (a digest of
every file's content under the search root); a later question answers `no-matches-at` only when the
census is byte-identical, `miss` when anything changed or there is no record, `unknown` when the tree
cannot be read. Uncertainty is always a miss.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import sqlite3
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from cortex_engine.base.clock import ts_min
from cortex_engine.scope.identity import Scope
from cortex_engine.store.redact import redact

CERTIFIABLE = re.compile(r"^[A-Za-z0-9_\-./:@#'\", =]{1,512}$")
GLOB = re.compile(r"^[A-Za-z0-9_\-./*?{},]+$")
TYPES = {
    "c": (".c", ".h"),
    "cpp": (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".h"),
    "css": (".css",),
    "go": (".go",),
    "html": (".html", ".htm"),
    "java": (".java",),
    "js": (".js", ".jsx", ".mjs", ".cjs"),
    "json": (".json",),
    "md": (".md", ".markdown"),
    "php": (".php",),
    "py": (".py", ".pyi"),
    "rb": (".rb",),
    "rust": (".rs",),
    "sh": (".sh", ".bash"),
    "sql": (".sql",),
    "toml": (".toml",),
    "ts": (".ts", ".tsx", ".mts", ".cts"),
    "xml": (".xml",),
    "yaml": (".yaml", ".yml"),
}
MAX_FILES = 5000
MAX_BYTES = 64 * 1024 * 1024
MAX_QUERIES = 16
LINE_CHARS = 100


@dataclass(frozen=True)
class Query:
    """A search as the ledger keys it."""

    pattern: str
    root: str
    glob: str | None = None
    type: str | None = None
    case_insensitive: bool = False
    multiline: bool = False

    @property
    def key(self) -> str:
        """A stable digest of every parameter that changes what the search covers."""
        raw = "\0".join(
            [
                "v1",
                "grep",
                self.pattern,
                self.root,
                self.glob or "",
                self.type or "",
                "1" if self.case_insensitive else "0",
                "1" if self.multiline else "0",
            ]
        )
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def certifiable(self) -> bool:
        """Only plain patterns whose meaning Python's re shares with ripgrep can be proven empty."""
        if not CERTIFIABLE.match(self.pattern) or self.pattern.startswith("-"):
            return False
        if self.glob is not None and not GLOB.match(self.glob):
            return False
        return self.type is None or self.type in TYPES


@dataclass(frozen=True)
class SearchVerdict:
    """`no-matches-at`, `miss` or `unknown` for one query."""

    pattern: str
    verdict: str
    head: str | None = None
    recorded_at: str | None = None

    def line(self) -> str:
        """`<pattern>: no-matches-at <head7> (<ts>)` | `<pattern>: miss` | `<pattern>: unknown`, ≤100 chars."""
        tail = self.verdict
        if self.verdict == "no-matches-at":
            tail += f" {(self.head or '-')[:7]} ({ts_min(self.recorded_at or '')})"
        pattern = re.sub(r"[\x00-\x1f\x7f]", "", self.pattern)
        room = LINE_CHARS - len(tail) - 2
        if len(pattern) > room:
            pattern = pattern[: max(1, room - 1)] + "…"
        return f"{pattern}: {tail}"

    def describe(self) -> str:
        """The verdict in words for a person (the CLI): what it means and what to do."""
        pattern = re.sub(r"[\x00-\x1f\x7f]", "", self.pattern)
        if len(pattern) > 60:
            pattern = pattern[:59] + "…"
        if self.verdict == "no-matches-at":
            return (
                f'"{pattern}" found nothing at {(self.head or "-")[:7]} ({ts_min(self.recorded_at or "")}) '
                "and provably still would: no need to run it again"
            )
        if self.verdict == "miss":
            return f'"{pattern}": no record that this search found nothing here; run it'
        return f'"{pattern}": cannot tell whether it would still find nothing; run it'

    def to_dict(self) -> dict[str, object]:
        """JSON shape."""
        return {"pattern": self.pattern, "verdict": self.verdict, "head": self.head, "recorded_at": self.recorded_at}


def scope_root(raw: str | None, worktree: str) -> str | None:
    """The search root relative to the worktree ('' = the whole worktree); None when outside it."""
    if not raw:
        return ""
    absolute = os.path.realpath(raw if os.path.isabs(raw) else os.path.join(worktree, raw))
    root = os.path.realpath(worktree)
    if absolute == root:
        return ""
    if not absolute.startswith(root + os.sep):
        return None
    return os.path.relpath(absolute, root).replace(os.sep, "/")


def _files(worktree: str, root: str) -> list[str] | None:
    """Tracked and untracked-not-ignored files under root (worktree-relative), or None when unreadable."""
    args = ["git", "-C", worktree, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    if root:
        args += ["--", root]
    try:
        done = subprocess.run(args, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    names = sorted({n for n in done.stdout.decode("utf-8", "surrogateescape").split("\0") if n})
    return [n for n in names if os.path.isfile(os.path.join(worktree, n)) and not n.startswith(".cortex/")]


def _selected(query: Query, path: str) -> bool:
    name = os.path.basename(path)
    if query.glob and not any(fnmatch.fnmatch(name, g) or fnmatch.fnmatch(path, g) for g in _expand(query.glob)):
        return False
    return not query.type or path.endswith(TYPES[query.type])


def _expand(glob: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", glob)
    if not match:
        return [glob]
    return [glob[: match.start()] + part + glob[match.end() :] for part in match.group(1).split(",")]


@dataclass(frozen=True)
class Census:
    """A content digest of every file a query covers."""

    sha256: str
    files: int
    bytes: int


def census(worktree: str, query: Query, *, verify: bool) -> tuple[Census | None, bool]:
    """(census, found-a-match) over the query's files; (None, _) when the tree cannot be fully read."""
    names = _files(worktree, query.root)
    if names is None:
        return None, False
    flags = (re.IGNORECASE if query.case_insensitive else 0) | (re.DOTALL if query.multiline else 0)
    needle = re.compile(query.pattern.encode(), flags)
    digest = hashlib.sha256()
    count = total = 0
    found = False
    for name in names:
        if not _selected(query, name):
            continue
        count += 1
        try:
            with open(os.path.join(worktree, name), "rb") as handle:
                data = handle.read(MAX_BYTES + 1)
        except OSError:
            return None, False
        total += len(data)
        if count > MAX_FILES or total > MAX_BYTES:
            return None, False
        if verify and not found and needle.search(data):
            found = True
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(data).digest())
    return Census(digest.hexdigest(), count, total), found


def query_from(raw: Mapping[str, object], worktree: str) -> Query | None:
    """A Query from a tool input or an MCP argument dict; None when it has no usable pattern or root."""
    pattern = raw.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        return None
    root = scope_root(found if isinstance(found := raw.get("path"), str) else None, worktree)
    if root is None:
        return None
    glob = found if isinstance(found := raw.get("glob"), str) and found else None
    kind = found if isinstance(found := raw.get("type"), str) and found else None
    ci = bool(raw.get("-i") or raw.get("case_insensitive") or raw.get("caseInsensitive"))
    ml = bool(raw.get("multiline"))
    return Query(pattern, root, glob, kind, ci, ml)


def proven_empty(response: object) -> bool:
    """The Grep payload positively says zero results and shows no match anywhere."""
    if not isinstance(response, dict):
        return False
    counts = [response.get(k) for k in ("numFiles", "numMatches", "numLines")]
    if not any(isinstance(c, int) and c == 0 for c in counts):
        return False
    if any(
        isinstance(value := response.get(k), int) and value > 0
        for k in ("numFiles", "numMatches", "numLines", "totalFiles", "totalLines")
    ):
        return False
    if isinstance(response.get("content"), str) and response["content"].strip():
        return False
    return not any(isinstance(response.get(k), list) and response[k] for k in ("filenames", "files", "matches"))


def record(conn: sqlite3.Connection, scope: Scope, tool_input: Mapping[str, object], response: object, at: str) -> bool:
    """Record a proven-empty Grep; returns whether it was certified."""
    query = query_from(tool_input, scope.worktree)
    if query is None or not query.certifiable() or not proven_empty(response):
        return False
    if tool_input.get("offset") not in (None, 0):
        return False
    taken, found = census(scope.worktree, query, verify=True)
    if taken is None or found:
        return False
    conn.execute(
        "INSERT INTO negative_results(scope_key, query_key, pattern, root, params_json, head_oid, census_sha256, "
        "census_files, census_bytes, recorded_at) VALUES "
        "(?,?,?,?,?,?,?,?,?,?) ON CONFLICT(scope_key, query_key) DO UPDATE "
        "SET head_oid=excluded.head_oid, census_sha256=excluded.census_sha256, census_files=excluded.census_files, "
        "census_bytes=excluded.census_bytes, recorded_at=excluded.recorded_at",
        (
            scope.key,
            query.key,
            redact(query.pattern),
            query.root,
            json.dumps({"glob": query.glob, "type": query.type, "ci": query.case_insensitive, "ml": query.multiline}),
            scope.head_oid,
            taken.sha256,
            taken.files,
            taken.bytes,
            at,
        ),
    )
    return True


def check(conn: sqlite3.Connection, scope: Scope, raw: Mapping[str, object]) -> SearchVerdict:
    """Answer one query against the ledger by recomputing the census."""
    pattern = found if isinstance(found := raw.get("pattern"), str) else ""
    query = query_from(raw, scope.worktree)
    if query is None:
        return SearchVerdict(pattern, "miss")
    row = conn.execute(
        "SELECT * FROM negative_results WHERE scope_key=? AND query_key=?", (scope.key, query.key)
    ).fetchone()
    if row is None:
        return SearchVerdict(pattern, "miss")
    taken, _ = census(scope.worktree, query, verify=False)
    if taken is None:
        return SearchVerdict(pattern, "unknown")
    if (taken.sha256, taken.files, taken.bytes) != (row["census_sha256"], row["census_files"], row["census_bytes"]):
        return SearchVerdict(pattern, "miss")
    return SearchVerdict(pattern, "no-matches-at", row["head_oid"], row["recorded_at"])
