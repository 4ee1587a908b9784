"""Decisions shared through the repository: published as MADR files, read back at HEAD as `(shared)` decisions.

`cortex publish ID…` writes each decision as one Markdown file in the MADR layout (title, status, context,
decision outcome, considered options) under the decisions folder, for the user to review and commit. The
folder is `docs/decisions/` unless `CORTEX_DECISIONS_DIR` or `git config cortex.decisionsDir` names another
(a path relative to the worktree root).

At SessionStart (when HEAD moved since the last sync) and on `cortex sync`, the `*.md` files of that folder in
the commit at HEAD are read through git (`ls-tree`, `cat-file`): never the working tree, and never a symlink
or submodule entry. Git tracks untrusted content, so every file is capped in size, decoded strictly, parsed
whole before anything is written (a malformed file is recorded for `doctor` and skipped, never half-imported),
and its text goes through `notes.write_note` like any note (redaction, control characters, label defusing).
Each decision lands in the syncing branch's scope labelled `shared`, so the contradiction and supersession
rules run against that branch's own notes: a new file adds one, a changed file replaces it (the edit is
audited in memory_corrections), a deleted file retires it (superseded, still labelled).

A file is this store's own only when its bytes are exactly what `publish` wrote here (the SHA-256 of every file
written is recorded in `published_files`): never by git's author identity, which the environment of whoever runs
git sets, and which a squash merge by the user gives to a teammate's file. Any other file waits in the inbox under
the user's review policy (`arrivals.needs_review`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

from cortex_engine.base import settings
from cortex_engine.base.errors import InvalidInput
from cortex_engine.base.records import record
from cortex_engine.base.untrusted import quote_path
from cortex_engine.memory import arrivals
from cortex_engine.memory import notes as notes_mod
from cortex_engine.memory.items import alternatives_list, collapse
from cortex_engine.scope.identity import Scope, scope_key_branch
from cortex_engine.store import queries
from cortex_engine.store.database import IN_SCOPE, transaction

DEFAULT_FOLDER = "docs/decisions"
MAX_FILE_BYTES = 64 * 1024
MAX_FILES = 500
MAX_TITLE_CHARS = 200
MAX_DECISION_CHARS = 4000
MAX_OPTION_CHARS = 300
MAX_OPTIONS = 20
ORIGIN = "shared"
GIT_TIMEOUT_S = 10
_SLUG = re.compile(r"[^a-z0-9]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_STATUS = {"active": "accepted", "superseded": "superseded", "resolved": "deprecated"}
_RETIRED_STATUSES = ("rejected", "deprecated", "superseded")
_WORD = re.compile(r"[^\W\d_]+")


class MalformedDecision(ValueError):
    """A decision file that cannot be imported whole (the reason is reported by doctor)."""


@record(frozen=True)
class SharedDecision:
    """What a decision file says, parsed whole."""

    title: str
    subject: str
    decision: str
    alternatives: tuple[str, ...]
    status: str
    date: str | None
    note_id: str | None = None
    """The note the file was published from (`cortex-id`), which the publisher's own store already holds."""


@record(frozen=True)
class SyncResult:
    """What a sync did: files added, updated, retired, and those skipped as malformed (path, reason)."""

    ran: bool
    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    retired: tuple[str, ...] = ()
    malformed: tuple[tuple[str, str], ...] = ()
    notes: tuple[tuple[str, str], ...] = ()
    """(path, note id) of every decision this sync wrote."""
    pending: tuple[str, ...] = ()
    """Files that wait in the inbox for a person (written by someone else; see `arrivals.needs_review`)."""
    recorded: tuple[str, ...] = ()
    """Of the files added (new to the store), those recorded without writing a note: the publisher's own copy of a
    note of this scope, or a file whose status says it no longer holds. The text report does not count them as
    added decisions."""

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape."""
        return {
            "ran": self.ran,
            "added": [quote_path(p) for p in self.added],
            "updated": [quote_path(p) for p in self.updated],
            "retired": [quote_path(p) for p in self.retired],
            "pending": [quote_path(p) for p in self.pending],
            "recorded": [quote_path(p) for p in self.recorded],
            "malformed": [{"path": quote_path(p), "problem": why} for p, why in self.malformed],
        }


def _git(cwd: str, *args: str, stdin: bytes | None = None) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def decisions_folder(worktree: str) -> str:
    """The decisions folder, relative to the worktree root: env, else git config, else `docs/decisions`.

    Raises:
        InvalidInput: the configured folder is absolute or climbs out of the repository.
    """
    raw = settings.decisions_dir()
    if not raw:
        out = _git(worktree, "config", "--get", "cortex.decisionsDir")
        raw = out.decode("utf-8", "replace").strip() if out else ""
    folder = (raw or DEFAULT_FOLDER).replace("\\", "/").strip("/")
    parts = [p for p in folder.split("/") if p not in ("", ".")]
    if raw.startswith("/") or not parts or ".." in parts or any(_CONTROL.search(p) for p in parts):
        raise InvalidInput(
            f"the decisions folder {raw!r} must be a path inside the repository, like docs/decisions",
            code="bad_decisions_dir",
        )
    return "/".join(parts)


# -- publishing ----------------------------------------------------------------------------------


def slug(text: str) -> str:
    """A file-name slug: lowercase ASCII words joined by dashes, at most 60 characters."""
    return _SLUG.sub("-", text.lower()).strip("-")[:60].rstrip("-") or "decision"


def render_madr(note: sqlite3.Row, superseded: list[sqlite3.Row], branch: str | None) -> str:
    """One decision as a MADR file: front matter, title, context, considered options, decision outcome."""
    subject = collapse(note["subject"] or "")
    decision = collapse(note["content"])
    alternatives = [collapse(a) for a in alternatives_list(note["alternatives"]) if collapse(a)]
    status = _STATUS.get(note["status"], "accepted")
    where = f" on branch `{branch}`" if branch else ""
    lines = [
        "---",
        f"status: {status}",
        f"date: {note['timestamp'][:10]}",
        f"cortex-subject: {json.dumps(subject, ensure_ascii=False)}",
        f"cortex-id: {note['id']}",
        "---",
        "",
        f"# {subject or decision[:80]}",
        "",
        "## Context and Problem Statement",
        "",
        f"Recorded with Cortex{where} on {note['timestamp'][:10]}.",
    ]
    if note["conflict"]:
        lines += [
            "",
            "This decision was contested when it was published: another active decision on the subject opposed it.",
        ]
    if superseded:
        lines += ["", "It replaces earlier decisions on the subject:", ""]
        lines += [f"* {collapse(s['content'])} ({s['timestamp'][:10]})" for s in superseded]
    lines += ["", "## Considered Options", "", f"* {decision}", *(f"* {a}" for a in alternatives)]
    lines += ["", "## Decision Outcome", "", f"Chosen option: {json.dumps(decision, ensure_ascii=False)}"]
    if alternatives:
        lines += ["", "Rejected: " + "; ".join(alternatives) + "."]
    return "\n".join(lines) + "\n"


def publish(conn: sqlite3.Connection, scope: Scope, ids: list[str], now: str) -> list[str]:
    """Write each decision as a MADR file in the decisions folder; returns the paths written (worktree-relative).

    The file of a subject is `<NNNN>-<subject slug>.md`; publishing the subject again rewrites that file. The
    digest of every file written is recorded (`published_files`): that exact content, committed, is this store's
    own and applies without waiting in the inbox.

    Raises:
        NotFound: an id names no note.
        InvalidInput: a note is not a decision, or the folder (or a file in it) is a symlink.
    """
    if not ids:
        raise InvalidInput("name at least one decision id to publish", code="bad_args")
    chosen = [notes_mod.find_note(conn, raw) for raw in ids]
    for note in chosen:
        if note["kind"] != "decision":
            raise InvalidInput(
                f"note {note['id']} is a {note['kind']}, and only decisions are published", code="not_a_decision"
            )
    folder_rel = decisions_folder(scope.worktree)
    folder = _safe_folder(Path(scope.worktree), folder_rel)
    written = []
    for note in chosen:
        superseded = conn.execute(
            f"SELECT * FROM scoped_notes WHERE {IN_SCOPE} AND subject=? AND kind='decision' AND status='superseded' "
            "AND timestamp <= ? AND id != ? ORDER BY timestamp, rowid",
            (note["scope_key"], note["subject"], note["timestamp"], note["id"]),
        ).fetchall()
        branch = scope_key_branch(note["scope_key"])
        body = render_madr(note, superseded, quote_path(branch) if branch else None)
        name = _file_name(folder, slug(note["subject"] or note["content"]))
        data = body.encode("utf-8")
        with transaction(conn):  # recorded first: a file on disk is never one this store forgot it wrote
            conn.execute(
                "INSERT INTO published_files(digest, path, note_id, scope_key, published_at) VALUES (?,?,?,?,?) "
                "ON CONFLICT(digest) DO UPDATE SET path=excluded.path, note_id=excluded.note_id, "
                "scope_key=excluded.scope_key, published_at=excluded.published_at",
                (content_digest(data), f"{folder_rel}/{name}", note["id"], note["scope_key"], now),
            )
        _write_nofollow(folder / name, data)
        written.append(f"{folder_rel}/{name}")
    return written


def content_digest(data: bytes) -> str:
    """The digest a published file is known by: SHA-256 of its bytes, hex."""
    return hashlib.sha256(data).hexdigest()


def published_digests(conn: sqlite3.Connection, digests: list[str]) -> set[str]:
    """Which of these content digests this store published from a note that still stands (active): the bytes of a
    decision the user has since resolved or replaced, committed again, are no longer the user's word (none on a
    store from before schema 17)."""
    found: set[str] = set()
    for start in range(0, len(digests), 500):
        part = digests[start : start + 500]
        try:
            rows = conn.execute(
                "SELECT p.digest FROM published_files p JOIN notes n ON n.id = p.note_id "
                f"WHERE p.digest IN ({','.join('?' * len(part))}) AND n.status = 'active'",
                part,
            )
        except sqlite3.OperationalError:
            return set()
        found |= {r[0] for r in rows}
    return found


def _safe_folder(root: Path, rel: str) -> Path:
    """Create the decisions folder, refusing any component that is a symlink (it could point anywhere)."""
    current = root
    for part in rel.split("/"):
        current = current / part
        try:
            link = current.is_symlink()
        except OSError as exc:  # a name the file system refuses (too long): the same one-line error as mkdir's
            raise InvalidInput(f"cannot create {current}: {exc.strerror}", code="not_a_folder") from exc
        if link:
            raise InvalidInput(
                f"{current} is a symlink; Cortex writes decisions only into a real folder", code="symlink"
            )
        if current.exists() and not current.is_dir():
            raise InvalidInput(
                f"{current} is a file, not a folder; Cortex writes decisions only into a folder "
                "(move it, or set another decisions folder)",
                code="not_a_folder",
            )
        if not current.exists():
            try:
                current.mkdir()
            except OSError as exc:
                raise InvalidInput(f"cannot create {current}: {exc.strerror}", code="not_a_folder") from exc
    return current


def _file_name(folder: Path, stem: str) -> str:
    """`NNNN-<stem>.md`: the existing file of that stem, else the next number in the folder."""
    numbers = [0]
    for entry in os.listdir(folder):
        head, _, rest = entry.partition("-")
        if head.isdigit():
            numbers.append(int(head))
            if rest == f"{stem}.md":
                return entry
    return f"{max(numbers) + 1:04d}-{stem}.md"


def _write_nofollow(path: Path, body: bytes) -> None:
    """Write a file without following a symlink planted at its name."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise InvalidInput(f"cannot write {path} ({exc.strerror or exc.__class__.__name__})", code="bad_file") from exc
    with os.fdopen(fd, "wb") as handle:
        handle.write(body)


# -- reading at HEAD -------------------------------------------------------------------------------


def parse_madr(raw: bytes) -> SharedDecision:
    """Parse a MADR file whole: a `# title` and a `## Decision Outcome` with its chosen option are required.

    Raises:
        MalformedDecision: too large, not UTF-8, or missing a title or a decision outcome.
    """
    if len(raw) > MAX_FILE_BYTES:
        raise MalformedDecision(f"over {MAX_FILE_BYTES // 1024} KiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedDecision("not UTF-8 text") from exc
    if "\x00" in text:
        raise MalformedDecision("holds a NUL byte")
    lines = text.replace("\r\n", "\n").split("\n")
    front: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        try:
            end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        except StopIteration as exc:
            raise MalformedDecision("front matter is never closed (no second ---)") from exc
        for line in lines[1:end]:
            key, sep, value = line.partition(":")
            if sep:
                front[key.strip().lower()] = value.strip()
        lines = lines[end + 1 :]
    title: str | None = None
    headed = False
    section: str | None = None
    sections: dict[str, list[str]] = {}
    for line in rendered_lines(lines):
        if line.startswith("#") and not headed:  # the first heading the reader sees is the title, or there is none
            headed = True
            title = line[2:].strip() if line.startswith("# ") else None
        elif line.startswith("## "):
            section = line[3:].strip().lower()
            sections.setdefault(section, [])
        elif section is not None:
            sections[section].append(line)
    if not title:
        raise MalformedDecision("has no `# title` line")
    outcome = next((body for name, body in sections.items() if name.startswith("decision outcome")), None)
    if outcome is None:
        raise MalformedDecision("has no `## Decision Outcome` section")
    chosen = next((line.strip() for line in outcome if line.strip()), "")
    if chosen.lower().startswith("chosen option:"):
        chosen = chosen[len("chosen option:") :].strip()
    decision, option = _unquote(chosen)
    if not decision:
        raise MalformedDecision("its Decision Outcome states no chosen option")
    options = [
        _unquote(line.strip()[2:].strip())[0]
        for line in sections.get("considered options", [])
        if line.strip()[:2] in ("* ", "- ")
    ]
    alternatives = tuple(o[:MAX_OPTION_CHARS] for o in options if o and collapse(o).lower() != collapse(option).lower())
    alternatives = alternatives[:MAX_OPTIONS]
    while alternatives and sum(len(a) for a in alternatives) > notes_mod.MAX_ALTERNATIVES_CHARS:
        alternatives = alternatives[:-1]
    subject = _front_string(front.get("cortex-subject")) or title
    if notes_mod.normalize_subject(subject) != notes_mod.normalize_subject(title):
        # A title a reviewer reads ("Improve README wording") must not hide the subject the decision retires.
        raise MalformedDecision("its `# title` and its cortex-subject name different subjects; make them the same")
    # The status's first word, without the punctuation an author puts after it (`Deprecated: see 0002`): read as
    # `deprecated:`, a retired decision was imported as live.
    word = _WORD.search(front.get("status", ""))
    status = word.group(0).lower() if word else "accepted"
    date = front.get("date")
    return SharedDecision(
        title=collapse(title)[:MAX_TITLE_CHARS],
        subject=collapse(subject)[:MAX_TITLE_CHARS],
        decision=decision[:MAX_DECISION_CHARS],
        alternatives=alternatives,
        status=status,
        date=date if date and _DATE.match(date) else None,
        note_id=front.get("cortex-id") if re.fullmatch(r"[0-9a-f-]{36}", front.get("cortex-id", "")) else None,
    )


_MARKDOWN: list[Any] = []
_HIDDEN_BLOCKS = ("html_block", "fence", "code_block")


def rendered_lines(lines: list[str]) -> list[str]:
    """The body's lines as the file renders (a CommonMark parse, markdown-it-py): every heading, ATX or setext and
    wherever it stands, as `#… text` on its first line; each line of an HTML block (comments included), a fenced or
    an indented code block blank; other lines as written. A `# line` the reader never sees as a heading decides
    nothing, and a setext title counts."""
    if not _MARKDOWN:
        from markdown_it import MarkdownIt  # here, not at import: hook paths import sharing, few files are parsed

        _MARKDOWN.append(MarkdownIt("commonmark"))
    out = list(lines)
    tokens = _MARKDOWN[0].parse("\n".join(lines))
    for i, token in enumerate(tokens):
        if token.map is None:
            continue
        start, end = token.map
        if token.type in _HIDDEN_BLOCKS:
            out[start:end] = [""] * (end - start)
        elif token.type == "heading_open":
            text = tokens[i + 1].content if i + 1 < len(tokens) and tokens[i + 1].type == "inline" else ""
            out[start:end] = ["#" * int(token.tag[1:]) + " " + " ".join(text.split())] + [""] * (end - start - 1)
    return out


def _unquote(text: str) -> tuple[str, str]:
    """(the statement without its quotes, the quoted option alone): `"X", because Y` → (`X, because Y`, `X`)."""
    if text.startswith('"'):
        try:
            value, index = json.JSONDecoder().raw_decode(text)
        except ValueError:
            value, index = None, 0
        if isinstance(value, str):
            rest = text[index:].strip()
            return (f"{value}{rest}" if rest.startswith(",") else f"{value} {rest}".strip()), value
        end = text.find('"', 1)
        if end > 0:
            rest = text[end + 1 :].strip()
            return (text[1:end] + (rest if rest.startswith(",") else f" {rest}")).strip(), text[1:end]
    return text, text


def _front_string(value: str | None) -> str | None:
    if not value:
        return None
    if value.startswith('"'):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value.strip('"')
        return decoded if isinstance(decoded, str) else None
    return value


def files_at_head(worktree: str, folder: str) -> dict[str, tuple[str, int]] | None:
    """`*.md` regular files directly in the folder at HEAD: path → (blob id, size). Symlinks and submodules skipped."""
    out = _git(worktree, "ls-tree", "-z", "-l", "HEAD", "--", f"{folder}/")
    if out is None:
        return None
    found: dict[str, tuple[str, int]] = {}
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _, path_b = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) < 4 or parts[1] != b"blob" or parts[0] not in (b"100644", b"100755"):
            continue
        path = path_b.decode("utf-8", "replace")
        if not path.endswith(".md") or path.rsplit("/", 1)[0] != folder or _CONTROL.search(path):
            continue
        size = int(parts[3]) if parts[3].isdigit() else MAX_FILE_BYTES + 1
        found[path] = (parts[2].decode("ascii"), size)
        if len(found) >= MAX_FILES:
            break
    return found


def read_blobs(worktree: str, oids: list[str]) -> dict[str, bytes]:
    """The contents of blobs, in one `git cat-file --batch` call."""
    if not oids:
        return {}
    out = _git(worktree, "cat-file", "--batch", stdin=("\n".join(oids) + "\n").encode("ascii"))
    blobs: dict[str, bytes] = {}
    pos = 0
    while out is not None and pos < len(out):
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3:
            continue
        size = int(header[2])
        blobs[header[0].decode("ascii")] = out[pos : pos + size]
        pos += size + 1
    return blobs


def _sync_key(scope: Scope) -> str:
    return f"shared_synced:{scope.key}"


def sync(conn: sqlite3.Connection, scope: Scope, now: str, *, review: str, force: bool = False) -> SyncResult:
    """Bring this scope's shared decisions in line with the decisions folder at HEAD (when HEAD moved, or forced).

    `review` is the user's review policy (`settings.review_policy`), which decides the files that wait in the inbox.
    """
    if scope.type != "branch" or not scope.head_oid:
        return SyncResult(False)
    key = _sync_key(scope)
    last = queries.meta_value(conn, key)
    # The fast path spawns nothing: a changed `git config cortex.decisionsDir` is read at the next HEAD move
    # (or by `cortex sync`); CORTEX_DECISIONS_DIR is compared here.
    env_folder = settings.decisions_dir()
    if not force and last is not None:
        head, _, synced_folder = last.partition(" ")
        if head == scope.head_oid and (not env_folder or synced_folder == env_folder.strip("/")):
            return SyncResult(False)
    folder = decisions_folder(scope.worktree)
    stamp = f"{scope.head_oid} {folder}"
    at_head = files_at_head(scope.worktree, folder)
    if at_head is None:
        return SyncResult(False)
    known = {r["path"]: r for r in conn.execute("SELECT * FROM shared_files WHERE scope_key=?", (scope.key,))}
    offered = arrivals.known_files(conn, scope.key)
    changed = {
        p: v
        for p, v in at_head.items()
        if (p not in known or known[p]["blob_oid"] != v[0]) and (p, v[0]) not in offered
    }
    blobs = read_blobs(scope.worktree, sorted({oid for oid, size in changed.values() if size <= MAX_FILE_BYTES}))
    added: list[str] = []
    updated: list[str] = []
    recorded: list[str] = []
    retired, malformed = [], []
    written: list[tuple[str, str]] = []
    parsed_files: dict[str, SharedDecision] = {}
    digests: dict[str, str] = {}
    for path in sorted(changed):
        oid, size = changed[path]
        try:
            if size > MAX_FILE_BYTES:
                raise MalformedDecision(f"over {MAX_FILE_BYTES // 1024} KiB")
            if oid not in blobs:
                raise MalformedDecision("git could not read it at HEAD")
            parsed = parse_madr(blobs[oid])
            notes_mod.validate_note("decision", parsed.decision, parsed.subject, list(parsed.alternatives))
        except (MalformedDecision, InvalidInput) as exc:
            malformed.append((path, str(exc) if isinstance(exc, MalformedDecision) else exc.message))
            continue
        parsed_files[path] = parsed
        digests[path] = content_digest(blobs[oid])
    if malformed:
        with transaction(conn):
            conn.executemany(
                "INSERT INTO shared_files(scope_key, path, blob_oid, note_id, problem, seen_at) VALUES (?,?,?,?,?,?) "
                "ON CONFLICT(scope_key, path) DO UPDATE SET blob_oid=excluded.blob_oid, problem=excluded.problem, "
                "seen_at=excluded.seen_at",
                [
                    (scope.key, path, changed[path][0], known[path]["note_id"] if path in known else None, reason, now)
                    for path, reason in malformed
                ],
            )
    waiting = _needing_review(conn, scope, folder, parsed_files, digests, set(known), review)
    pending = sorted(waiting)
    with transaction(conn):
        arrivals.withdraw_files(conn, scope.key, {p: v[0] for p, v in at_head.items()}, now)
        for path in pending:
            parsed, (commit, author, authored_at) = parsed_files[path], waiting[path]
            arrivals.add(
                conn,
                scope.key,
                "shared",
                path,
                kind="decision",
                subject=parsed.subject,
                content=parsed.decision,
                alternatives=parsed.alternatives,
                timestamp=_timestamp(parsed, now),
                now=now,
                blob_oid=changed[path][0],
                commit=commit,
                author=author,
                authored_at=authored_at,
                note_id=parsed.note_id,
            )
    for path in sorted(set(parsed_files) - set(waiting)):
        previous = known.get(path)
        wrote = _import(conn, scope, path, changed[path][0], parsed_files[path], previous, now)
        (updated if previous is not None and previous["note_id"] else added).append(path)
        if wrote is None and (previous is None or not previous["note_id"]):
            recorded.append(path)
        if wrote is not None:
            written.append((path, wrote))
    for path in sorted(set(known) - set(at_head)):
        _retire(conn, scope, known[path])
        retired.append(path)
    with transaction(conn):
        queries.set_meta(conn, key, stamp)
    return SyncResult(
        True,
        tuple(added),
        tuple(updated),
        tuple(retired),
        tuple(malformed),
        tuple(written),
        tuple(pending),
        tuple(recorded),
    )


def _needing_review(
    conn: sqlite3.Connection,
    scope: Scope,
    folder: str,
    parsed: dict[str, SharedDecision],
    digests: dict[str, str],
    known: set[str],
    review: str,
) -> dict[str, tuple[str | None, str | None, str | None]]:
    """The files that wait for a person, each with (commit, author, date) of the commit that last changed it.

    A file is this store's own when its bytes are exactly what `publish` wrote here (`published_files`), whoever
    git says committed it. The publisher's own copy, seen for the first time (its content published here and its
    `cortex-id` a note of this scope), never waits, under any policy: it writes nothing. Git is asked at most once
    (one `git log`), whatever the number of files.
    """
    own = published_digests(conn, sorted(set(digests.values())))
    own_ids = set()
    ids = [p.note_id for path, p in parsed.items() if p.note_id and digests.get(path) in own]
    for chunk in range(0, len(ids), 500):
        part = ids[chunk : chunk + 500]
        own_ids |= {
            r[0]
            for r in conn.execute(
                "SELECT id FROM scoped_notes WHERE scope_key=? AND "
                f"origin IS NULL AND id IN ({','.join('?' * len(part))})",
                (scope.key, *part),
            )
        }
    candidates = [
        path
        for path, p in parsed.items()
        if path in known or p.note_id is None or p.note_id not in own_ids or digests.get(path) not in own
    ]
    waiting = [path for path in candidates if arrivals.needs_review("shared", review, own=digests.get(path) in own)]
    if not waiting:
        return {}
    found = last_commits(scope.worktree, folder, set(waiting))
    out: dict[str, tuple[str | None, str | None, str | None]] = {}
    for path in waiting:
        commit, name, email, date = found.get(path, (None, None, None, None))
        out[path] = (commit, f"{name} <{email}>" if name or email else None, date)
    return out


def commit_text(worktree: str, commit: str | None) -> str:
    """Git's account of a commit (header, message, files changed) for the person reviewing an arrival: author text.

    Raises:
        InvalidInput: the arrival names no commit, or git cannot show it.
    """
    if not commit or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        raise InvalidInput("this arrival names no commit (it was imported from a file)", code="no_commit")
    out = _git(worktree, "show", "--stat", "--no-color", "--format=fuller", commit, "--")
    if out is None:
        raise InvalidInput(f"git cannot show commit {commit[:10]} here (gone after a rewrite?)", code="no_commit")
    return out.decode("utf-8", "replace")


_COMMIT_MARK = b"\x01C"


def last_commits(worktree: str, folder: str, paths: set[str]) -> dict[str, tuple[str, str, str, str]]:
    """For each path, (commit, author name, author email, author date) of the newest commit at HEAD that changed it.

    One `git log` over the folder. Fields are NUL-separated (git names and paths cannot hold a NUL), so an
    author name cannot forge another commit's record.
    """
    out = _git(
        worktree,
        "log",
        "-z",
        "--no-renames",
        "--format=%x01C%x00%H%x00%an%x00%ae%x00%aI",
        "--name-only",
        "HEAD",
        "--",
        f"{folder}/",
    )
    found: dict[str, tuple[str, str, str, str]] = {}
    if out is None:
        return found
    tokens = out.split(b"\0")
    header: tuple[str, str, str, str] | None = None
    i = 0
    while i < len(tokens) and len(found) < len(paths):
        token = tokens[i]
        if token == _COMMIT_MARK and i + 4 < len(tokens):
            header = tuple(t.decode("utf-8", "replace") for t in tokens[i + 1 : i + 5])  # type: ignore[assignment]
            i += 5
            continue
        path = token.lstrip(b"\n").decode("utf-8", "replace")
        if header is not None and path in paths and path not in found:
            found[path] = header
        i += 1
    return found


def _timestamp(parsed: SharedDecision, now: str) -> str:
    """The file's date (never later than now) as the decision's timestamp; now when it has none."""
    if parsed.date is None:
        return now
    try:
        datetime.strptime(parsed.date, "%Y-%m-%d")
    except ValueError:
        return now
    stamp = f"{parsed.date}T00:00:00.000Z"
    return min(stamp, now)


def _import(
    conn: sqlite3.Connection,
    scope: Scope,
    path: str,
    oid: str,
    parsed: SharedDecision,
    previous: sqlite3.Row | None,
    now: str,
) -> str | None:
    """Write the file's decision (replacing the one its previous version wrote, audited) and record the file.

    Returns the id of the note written, None when none was (the publisher's own note, or a retired status).
    """
    notes_mod.validate_note("decision", parsed.decision, parsed.subject, list(parsed.alternatives))
    if parsed.note_id and previous is None:
        own = conn.execute(
            f"SELECT id FROM notes WHERE id=? AND {IN_SCOPE} AND origin IS NULL", (parsed.note_id, scope.key)
        ).fetchone()
        if own is not None:  # published from this very scope: the file is that note, not a second copy of it
            with transaction(conn):
                _record_file(conn, scope, path, oid, own["id"], now)
            return None
    old = None
    if previous is not None and previous["note_id"]:
        old = queries.note_row(conn, previous["note_id"])
    if old is not None and old["status"] == "active" and old["origin"] == ORIGIN:
        _set_status(conn, old["id"], "superseded")
    if parsed.status in _RETIRED_STATUSES:
        # A file that says it no longer holds is recorded, not imported as live.
        with transaction(conn):
            _record_file(conn, scope, path, oid, None, now)
        return None

    def record(c: sqlite3.Connection, new_id: str) -> None:
        _record_file(c, scope, path, oid, new_id, now)
        if old is not None:
            c.execute(
                "INSERT INTO memory_corrections(memory_item_id, "
                "source_table, source_id, scope_key, operation, prior_text, "
                "new_text, prior_subject, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    notes_mod.item_id_for(old["id"]),
                    "notes",
                    old["id"],
                    scope.key,
                    f"shared-update:{path}",
                    old["content"],
                    parsed.decision,
                    old["subject"],
                    now,
                ),
            )

    return notes_mod.write_note(
        conn,
        scope,
        None,
        "decision",
        parsed.decision,
        parsed.subject,
        list(parsed.alternatives),
        _timestamp(parsed, now),
        origin=ORIGIN,
        record=record,
    ).id


def accept_arrival(conn: sqlite3.Connection, scope: Scope, row: sqlite3.Row, now: str) -> str | None:
    """Apply a decision file a person accepted from the inbox, as a trusted sync would have; returns the note id.

    Its date is the one it arrived with (never later than now): notes written here since it arrived stay newer.
    """
    parsed = SharedDecision(
        title=row["subject"] or "",
        subject=row["subject"] or "",
        decision=row["content"],
        alternatives=tuple(alternatives_list(row["alternatives"])),
        status="accepted",
        date=None,
    )
    previous = conn.execute(
        "SELECT * FROM shared_files WHERE scope_key=? AND path=?", (scope.key, row["path"])
    ).fetchone()
    # a decision with no date: `_timestamp` dates it `min(arrival, now)`
    return _import(conn, scope, row["path"], row["blob_oid"], parsed, previous, min(row["timestamp"], now))


def _record_file(conn: sqlite3.Connection, scope: Scope, path: str, oid: str, note_id: str | None, now: str) -> None:
    conn.execute(
        "INSERT INTO shared_files(scope_key, path, blob_oid, note_id, problem, seen_at) VALUES (?,?,?,?,NULL,?) "
        "ON CONFLICT(scope_key, path) DO UPDATE SET blob_oid=excluded.blob_oid, note_id=excluded.note_id, "
        "problem=NULL, seen_at=excluded.seen_at",
        (scope.key, path, oid, note_id, now),
    )


def _set_status(conn: sqlite3.Connection, note_id: str, status: str) -> None:
    """Retire a shared decision: superseded, re-projected one tier cooler, still labelled shared; it leaves any
    contest it was a side of (`notes.retire`, the rule every write path shares)."""
    with transaction(conn):
        notes_mod.retire(conn, note_id, status)


def _retire(conn: sqlite3.Connection, scope: Scope, row: sqlite3.Row) -> None:
    """A file deleted at HEAD: its decision is superseded and the file forgotten."""
    if row["note_id"]:
        note = conn.execute("SELECT status, origin FROM notes WHERE id=?", (row["note_id"],)).fetchone()
        if note is not None and note["status"] == "active" and note["origin"] == ORIGIN:
            _set_status(conn, row["note_id"], "superseded")
    with transaction(conn):
        conn.execute("DELETE FROM shared_files WHERE scope_key=? AND path=?", (scope.key, row["path"]))


def problems(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """Every decision file the last syncs skipped as malformed: (path, reason)."""
    try:
        rows = conn.execute("SELECT DISTINCT path, problem FROM shared_files WHERE problem IS NOT NULL ORDER BY path")
        return [(quote_path(r[0]), r[1]) for r in rows]
    except sqlite3.OperationalError:  # a store from before schema 4 has no shared_files table
        return []
