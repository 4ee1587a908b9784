"""Seeking an anchored symbol that left its file, in the files git says changed since the anchor's commit.

`freshness.Validator` finds a symbol gone from the file git follows it to; before calling it missing it asks a
`Seeker` (one per validation pass): the same text renamed in that file, else the same qualified name, alike, in a
file changed since the anchor's commit (`scope/follow` judges the texts). Never a walk of the checkout: git names
the changed files (`git diff-tree`), `git grep` the ones that mention the name, `git cat-file` the recorded texts,
each asked once per pass for every anchor still to follow (`Seeker.prepare`). What git says about two commits never
changes, so those answers are kept for the process; the files not committed yet are listed again every few seconds.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Protocol

from cortex_engine.scope import anchors, follow, history, inventory

__all__ = ["Checkout", "Gone", "Seeker"]


class Checkout(Protocol):
    """The checkout a gone symbol is sought in (`freshness._ScopeView`)."""

    @property
    def worktree(self) -> str | None: ...  # noqa: D102
    @property
    def head(self) -> str | None: ...  # noqa: D102
    @property
    def repo(self) -> str | None: ...  # noqa: D102


Gone = tuple[Checkout, str, anchors.Source | None, sqlite3.Row]
"""An anchor whose symbol left its file: (checkout, the file git followed it to, that file or None, its row)."""
Read = tuple[frozenset[str], tuple[tuple[str, anchors.Source | None], ...]]
"""What an answer read besides the anchor's file: the files not committed yet then, and each file read (None: not
readable) as it was."""


class Seeker:
    """Follows the gone symbols of one validation pass; `source` reads a file of a worktree once per pass."""

    def __init__(self, source: Callable[[str, str], anchors.Source | None]) -> None:
        """Bind to the pass's reader of files (one stat per file per pass)."""
        self._source = source
        self._uncommitted: dict[str, frozenset[str]] = {}
        self._defined: dict[str, list[str]] = {}
        self._pending_indexed = False
        self._pending_read: dict[str, tuple[tuple[str, anchors.Source | None], ...]] = {}
        self._recalled: dict[tuple[object, ...], anchors.Located | None] = {}

    def prepare(self, gone: list[Gone]) -> None:
        """Ask git once for every anchor of the pass still to follow (each with a commit id `history.OID` accepts):
        their recorded texts (`git cat-file`), the files changed since each one's commit (`git diff-tree --stdin`) and
        which of those name it (`git grep`), instead of one process per anchor (`follow` reads the answers). An
        anchor answered by an earlier check whose files are as they were (`_recall`) asks nothing."""
        wanted: dict[tuple[str, str], list[str]] = {}
        searching: list[tuple[Checkout, str, str]] = []
        gone = [
            (view, where, source, row)
            for view, where, source, row in gone
            if not self._recall(view, row, where, source)[0]
        ]
        self._fetch_recorded([(view, row) for view, _, _, row in gone])
        for view, where, source, row in gone:
            oid = str(row["head_oid"])
            if source is not None and follow.renamed_in_place(
                source,
                where,
                str(row["symbol"]),
                row["start_line"],
                str(row["content_hash"]),
                self._recorded_lines(view, row),
            ):
                continue  # (kept with the file: `follow` asks it again for nothing)
            searching.append((view, oid, str(row["symbol"]).rsplit(".", 1)[-1]))
            if (view.worktree or "", oid, view.head) not in _committed_changes:
                wanted.setdefault((view.worktree or "", view.head or ""), []).append(oid)
        for (worktree, head), oids in wanted.items():
            oids = list(dict.fromkeys(oids))
            if len(oids) < 2:
                continue  # one `git diff` as `_changed_since` runs it
            # Each line `commit head` is diffed as a commit against that one parent: its header (`--always`: even
            # when nothing changed) is the commit's id, then the files, in the order asked.
            stdin = "".join(f"{oid} {head}\n" for oid in oids)
            out = history.git(
                worktree, "diff-tree", "--stdin", "--always", "-r", "--name-only", "--no-renames", "-z", stdin=stdin
            )
            if out is None:
                continue  # a commit git lost: each is asked alone
            fields = out.split("\0")
            at = 0
            for n, oid in enumerate(oids):
                if at >= len(fields) or fields[at] != oid:
                    break  # not what was asked: the rest are asked alone
                # The files end at the next commit's header or at the empty field after the last (found by C).
                end = _index(fields, "", at + 1)
                if n + 1 < len(oids):
                    end = _index(fields, oids[n + 1], at + 1, end)
                _remember_changes((worktree, oid, head), frozenset(fields[at + 1 : end]))
                at = end
        # Every name to look for, over the files changed since its anchor's commit: one `git grep` per checkout.
        names: dict[tuple[str, str], list[tuple[str, str, frozenset[str]]]] = {}
        for view, oid, short in searching:
            names.setdefault((view.worktree or "", view.head or ""), []).append(
                (short, oid, self._changed_since(view, oid)[0])
            )
        for (worktree, head), asked in names.items():
            self._narrow(worktree, head, asked)

    def follow(
        self, view: Checkout, row: sqlite3.Row, where: str, source: anchors.Source | None
    ) -> anchors.Located | None:
        """A symbol gone from `where` (its file, as git followed it; `source` None when the file is gone too): the
        same text under another name in that file, else the same qualified name, alike, in a file changed since the
        anchor's commit (never a walk of the checkout: git names those files). An answer is kept for the process
        with every file it read (`_recall`): a later check asks again only when one of them changed."""
        known, answer = self._recall(view, row, where, source)
        if known:
            return answer
        answer, read = self._follow(view, row, where, source)
        if len(_answers) >= 4096:
            _answers.clear()
        _answers[_answer_key(view, row, where)] = (source, read, answer)
        return answer

    def _recall(
        self, view: Checkout, row: sqlite3.Row, where: str, source: anchors.Source | None
    ) -> tuple[bool, anchors.Located | None]:
        """An earlier answer for this anchor at this HEAD, when its file and every file that answer read are as they
        were (the same `Source`: `anchors.read_source` keeps one per file identity) and so is the list of files not
        committed yet; else (False, None)."""
        key = _answer_key(view, row, where)
        if key in self._recalled:  # `prepare` asked first in this pass
            return True, self._recalled[key]
        hit = _answers.get(key)
        if hit is None or hit[0] is not source:
            return False, None
        read = hit[1]
        if read is not None:
            worktree = view.worktree or ""
            pending, files = read
            if self._pending(view) != pending or any(self._source(worktree, p) is not s for p, s in files):
                return False, None
        self._recalled[key] = hit[2]
        return True, hit[2]

    def _follow(
        self, view: Checkout, row: sqlite3.Row, where: str, source: anchors.Source | None
    ) -> tuple[anchors.Located | None, Read | None]:
        """`follow`'s answer, with what it read besides the anchor's own file (None: nothing)."""
        symbol, digest = str(row["symbol"]), str(row["content_hash"])
        if source is not None:
            renamed = follow.renamed_in_place(source, where, symbol, row["start_line"], digest)
            if renamed is not None:
                return renamed, None
        oid = row["head_oid"]
        worktree = view.worktree or ""
        if not oid or not view.head or not history.OID.fullmatch(oid):
            return None, None
        language = anchors.language_of(where)
        short = symbol.rsplit(".", 1)[-1]
        committed, pending = self._changed_since(view, oid)
        # Which changed file defines which name: the committed files that mention it (`_narrow`: once per process
        # and HEAD, their text only changes by an edit, which makes them pending too), the pending ones once a pass.
        index = self._narrow(worktree, view.head or "", [(short, oid, committed)])
        if not self._pending_indexed:
            self._pending_indexed = True
            for path in pending:
                self._index_file(worktree, path, self._defined)
        names = [*index.get(short, ()), *self._defined.get(short, ())]
        files = [
            (path, self._source(worktree, path))
            for path in dict.fromkeys(names)
            if path != where and (path in committed or path in pending) and anchors.language_of(path) == language
        ]
        read = (pending, (*self._pending_sources(worktree, pending), *files))
        candidates = [(path, other) for path, other in files if other is not None]
        if not candidates:
            return None, read
        return follow.moved_to(candidates, symbol, digest, self._recorded_lines(view, row)), read

    def _pending(self, view: Checkout) -> frozenset[str]:
        worktree = view.worktree or ""
        pending = self._uncommitted.get(worktree)
        if pending is None:
            pending = self._uncommitted[worktree] = _uncommitted_files(worktree, view.head or "")
        return pending

    def _pending_sources(self, worktree: str, pending: frozenset[str]) -> tuple[tuple[str, anchors.Source | None], ...]:
        """The files not committed yet that `_index_file` reads, each as read this pass (what an answer depended on)."""
        if worktree not in self._pending_read:
            self._pending_read[worktree] = tuple(
                (path, self._source(worktree, path)) for path in sorted(pending) if anchors.language_of(path)
            )
        return self._pending_read[worktree]

    def _narrow(self, worktree: str, head: str, asked: list[tuple[str, str, frozenset[str]]]) -> dict[str, list[str]]:
        """Index the committed files among `asked` ((short name, anchor's commit, the files changed since)) that could
        define a wanted name, and return the index of (worktree, head). A Python file defines a name on a line that
        holds `def` or `class` and the name, each as a word: one `git grep -w -F` for such lines over the Python files
        not yet searched for it gives them, and the definitions are read from those lines (`anchors.python_defined`,
        the rule `Source.short_names` reads a file by). Any other file that holds a wanted name as a word (one
        `git grep -l`) is read whole (`_index_file`). A note on years-old code has most of the tree changed since, and
        reading each file for its names cost more than the rest of the check. Each (name, file) is searched once per
        process and HEAD; when git cannot answer every file it was asked about is read, as before."""
        if len(_name_index) >= 64:
            _name_index.clear()
        done, searched, indexed, index = _name_index.setdefault((worktree, head), (set(), {}, set(), {}))
        todo: dict[str, set[str]] = {}
        for name, oid, files in asked:
            if (name, oid) not in done:  # (a later check: one lookup, not a set difference per name)
                done.add((name, oid))
                todo.setdefault(name, set()).update(files - searched.setdefault(name, set()))
        todo = {name: unseen for name, unseen in todo.items() if unseen}
        if not todo:
            return index
        paths = {p for p in set().union(*todo.values()) - indexed if anchors.language_of(p)}
        python = {p for p in paths if anchors.language_of(p) == "python"}
        names = [arg for name in sorted(todo) for arg in ("-e", name)]
        whole: set[str] = set()  # the files to read whole
        if python:
            # `-a`: a file git calls binary is searched as text, as reading it would (its lines are cut at `\n` only).
            query = ["-a", "(", "-e", "def", "-e", "class", ")", "--and", "(", *names, ")"]
            out = _grep(worktree, query, python)
            if out is None:
                whole |= python
            else:
                self._defined_on_lines(out, todo, index)
        if paths - python:
            out = _grep(worktree, ["-l", *names], paths - python)
            found = {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0")} if out is not None else paths
            whole |= found & (paths - python)
        for path in sorted(whole):
            self._index_file(worktree, path, index)
            indexed.add(path)
        for name, unseen in todo.items():
            searched[name] |= unseen
        return index

    @staticmethod
    def _defined_on_lines(out: bytes, todo: dict[str, set[str]], index: dict[str, list[str]]) -> None:
        """Read `git grep -z` lines (`path NUL line LF`, the line as in the file): each Python file's definitions of a
        name wanted there go into `index`."""
        at = 0
        while True:
            nul = out.find(b"\0", at)
            if nul < 0:
                return
            end = out.find(b"\n", nul + 1)
            end = len(out) if end < 0 else end
            path = out[at:nul].decode("utf-8", "surrogateescape")
            at = end + 1
            name = anchors.python_defined(out[nul + 1 : end].decode("utf-8", "surrogateescape"))
            if name is not None and path in todo.get(name, ()) and path not in index.get(name, ()):
                index.setdefault(name, []).append(path)

    def _index_file(self, worktree: str, path: str, index: dict[str, list[str]]) -> None:
        other = self._source(worktree, path) if anchors.language_of(path) else None
        for name in other.short_names() if other is not None else ():
            index.setdefault(name, []).append(path)

    def _changed_since(self, view: Checkout, oid: str) -> tuple[frozenset[str], frozenset[str]]:
        """The files changed between commit `oid` and the checkout as it is now: committed since (`git diff oid HEAD`,
        kept for the process), then not committed yet (modified, staged or untracked: `_uncommitted_files`)."""
        worktree = view.worktree or ""
        key = (worktree, oid, view.head or "")
        committed = _committed_changes.get(key)
        if committed is None:
            out = history.git(worktree, "diff", "--name-only", "--no-renames", "-z", oid, view.head or "HEAD", "--")
            committed = frozenset(p for p in (out or "").split("\0") if p)  # a commit git lost: nothing changed
            _remember_changes(key, committed)
        return committed, self._pending(view)

    def _fetch_recorded(self, rows: list[tuple[Checkout, sqlite3.Row]]) -> None:
        """The files at their anchors' commits (`_recorded_lines` reads them), for every anchor still to follow, by
        one `git cat-file --batch` per checkout instead of one `git show` each."""
        asked: dict[str, list[tuple[str, str, str]]] = {}
        for view, row in rows:
            key = (view.repo or "", str(row["head_oid"]), str(row["path"]))
            if key not in _recorded_blobs and "\n" not in key[2]:
                asked.setdefault(view.worktree or "", []).append(key)
        for worktree, keys in asked.items():
            repos = {(oid, path): repo for repo, oid, path in dict.fromkeys(keys)}
            for (oid, path), blob in history.blobs(worktree, list(repos)).items():
                _remember_blob((repos[oid, path], oid, path), blob)

    def _recorded_lines(self, view: Checkout, row: sqlite3.Row) -> list[str] | None:
        """The anchored span's lines at the commit it was recorded on, when that commit holds exactly that content
        (a note written on uncommitted code has none: only an exact copy can then be called moved)."""
        span_key = (view.repo or "", str(row["head_oid"]), str(row["path"]), row["start_line"], row["end_line"])
        if span_key + (str(row["content_hash"]),) in _recorded_spans:
            return _recorded_spans[span_key + (str(row["content_hash"]),)]
        key = (view.repo or "", str(row["head_oid"]), str(row["path"]))
        if key not in _recorded_blobs:  # not asked with the others, or git's batch could not read it
            text = history.git(view.worktree or "", "show", f"{row['head_oid']}:{row['path']}")
            _remember_blob(key, text.encode("utf-8", "surrogateescape") if text is not None else None)
        blob = _recorded_blobs[key]
        start, end = row["start_line"], row["end_line"]
        found = _span_lines(blob, start, end) if blob is not None else None
        if found is not None and anchors.text_digest("".join(found)) != str(row["content_hash"]).removeprefix(
            anchors.FORMAT_TAG
        ):
            found = None
        if len(_recorded_spans) >= 4096:
            _recorded_spans.clear()
        _recorded_spans[span_key + (str(row["content_hash"]),)] = found
        return found


_OTHER_BREAKS = (b"\r", b"\v", b"\f", b"\x1c", b"\x1d", b"\x1e", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
"""Bytes that decode to a line break `str.splitlines` honours besides `\\n` (`\\r` is one as `git show` reads it)."""


def _span_lines(blob: bytes, start: int, end: int) -> list[str] | None:
    """Lines `start`..`end` of a file at a commit as `git show` gives it (UTF-8, surrogates for the rest, universal
    newlines) and `str.splitlines(keepends=True)` cuts it; None for a file over `anchors.MAX_FILE_BYTES` characters.
    When lines up to `end` break only at `\\n` only the span is decoded (the whole file was, for every anchor in
    it, and black's recorded files are 2 MB for one check); `\\n` is never inside a UTF-8 sequence, so each line
    decodes alone as it would in the whole."""
    pieces = blob.split(b"\n", max(end, 0))
    upto = len(blob) - len(pieces[-1]) if len(pieces) > end else len(blob)  # what lines 1..end are cut from
    if (
        start < 1
        or end < 1
        or len(blob) > anchors.MAX_FILE_BYTES
        or any(blob.find(b, 0, upto) >= 0 for b in _OTHER_BREAKS)
    ):
        text = blob.decode("utf-8", "surrogateescape").replace("\r\n", "\n").replace("\r", "\n")
        return text.splitlines(keepends=True)[start - 1 : end] if len(text) <= anchors.MAX_FILE_BYTES else None
    if len(pieces) > end:  # lines 1..end each ended by its newline
        lines = [piece + b"\n" for piece in pieces[start - 1 : end]]
    else:
        lines = [piece + b"\n" for piece in pieces[start - 1 : -1]]
        if pieces[-1] and len(pieces) >= start:
            lines.append(pieces[-1])  # the last line, without a newline
    return [line.decode("utf-8", "surrogateescape") for line in lines]


def _remember_blob(key: tuple[str, str, str], blob: bytes | None) -> None:
    if len(_recorded_blobs) >= 256:
        _recorded_blobs.clear()
    _recorded_blobs[key] = blob


def _grep(worktree: str, query: list[str], paths: set[str]) -> bytes | None:
    """`git grep -z -w -F` of `query` over `paths` (each a literal name, never a pattern), as git wrote it; None when
    git cannot answer."""
    return history.git_bytes(
        worktree,
        "--literal-pathspecs",
        "grep",
        "-z",
        "-w",
        "-F",
        "--full-name",
        "--no-color",
        *query,
        "--",
        *sorted(paths),
        ok=(0, 1),  # 1: no file matches
    )


def _answer_key(view: Checkout, row: sqlite3.Row, where: str) -> tuple[object, ...]:
    # The whole anchor row (its place, digest and commit: a re-anchored row asks afresh), where its file is, the HEAD.
    return (view.repo, view.worktree, view.head, where, tuple(row))


_answers: dict[tuple[object, ...], tuple[anchors.Source | None, Read | None, anchors.Located | None]] = {}
"""`Seeker.follow`'s answers per anchor and HEAD, with the anchor's file and what else they read (`Seeker._recall`)."""
_name_index: dict[
    tuple[str, str], tuple[set[tuple[str, str]], dict[str, set[str]], set[str], dict[str, list[str]]]
] = {}
"""Per (worktree, HEAD): the (name, commit) pairs searched, each name and the committed files already searched for it
(`_narrow`), the files read for their names, and which of those defines which name."""
_pending: dict[str, tuple[float, str, frozenset[str]]] = {}
"""The files not committed yet (modified, staged, untracked) per worktree, with when and at which HEAD they were
listed: reused for `inventory.RESCAN_SECONDS` within one process, as the untracked-move rescan is."""


def _uncommitted_files(worktree: str, head: str) -> frozenset[str]:
    """The files of `worktree` that differ from HEAD or are untracked (one `git status`, reused a few seconds)."""
    now = time.monotonic()
    hit = _pending.get(worktree)
    if hit is not None and hit[1] == head and now - hit[0] < inventory.RESCAN_SECONDS:
        return hit[2]
    out = history.git(worktree, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames") or ""
    # Each entry is `XY path`; with --no-renames no entry carries a second path.
    files = frozenset(entry[3:] for entry in out.split("\0") if len(entry) > 3)
    _pending[worktree] = (now, head, files)
    return files


_committed_changes: dict[tuple[str, str, str], frozenset[str]] = {}
"""The files changed between two commits, per (worktree, from, to): what git says never changes."""


def _index(fields: list[str], value: str, start: int, stop: int | None = None) -> int:
    """The first index of `value` in `fields[start:stop]`, else `stop` (the list's end when None)."""
    stop = len(fields) if stop is None else stop
    try:
        return fields.index(value, start, stop)
    except ValueError:
        return stop


def _remember_changes(key: tuple[str, str, str], files: frozenset[str]) -> None:
    if len(_committed_changes) >= 512:
        _committed_changes.clear()
    _committed_changes[key] = files


_recorded_blobs: dict[tuple[str, str, str], bytes | None] = {}
"""A file at a commit as git stores it (None: git could not read it), per (repository, commit, path), for the text
of an anchor that left its file."""
_recorded_spans: dict[tuple[str, str, str, int, int, str], list[str] | None] = {}
"""An anchor's recorded lines (None: the commit does not hold them), per its place and digest: never changes."""
