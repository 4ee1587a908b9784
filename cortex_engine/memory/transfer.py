"""`cortex export` / `cortex import`: notes out to JSON Lines or Markdown, and back in (also Claude Code's own
memory files, `CLAUDE.md` and the auto-memory `MEMORY.md`). Standard library only.

The JSON Lines export is the exchange format: one header line, then one note per line in (timestamp, id)
order with a fixed key order, so exporting the same notes always gives the same bytes. Import runs in one
`BEGIN IMMEDIATE` transaction: a file with one bad line imports nothing and names the line. Notes whose id is
already stored are left as they are, so importing a file twice changes nothing and says so. The supersession
and contradiction rules of `notes.write_note` are applied in timestamp order against what the store holds:
an imported active decision supersedes an older active one on its subject, is superseded by a newer one, and
opens a contest with one it contradicts.

sqlite-utils is not used here: every imported string has to pass the engine's own choke points (redaction,
subject normalisation, the contradiction rule) inside one transaction on the engine's connection, and the
export is two ordered SELECTs; its `insert_all` would bypass those rules and buy nothing for the reads.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from cortex_engine.base.clock import iso, parse_iso
from cortex_engine.base.errors import InvalidInput
from cortex_engine.memory import arrivals, contradiction
from cortex_engine.memory import notes as notes_mod
from cortex_engine.memory.items import NOTE_KINDS, alternatives_list
from cortex_engine.memory.notes import _scope_type_of, clean_text, normalize_subject, sync_note_item, validate_note
from cortex_engine.scope.identity import Scope
from cortex_engine.store import queries
from cortex_engine.store.database import in_scopes, scope_id, transaction

Tick = Callable[[int], None]

FORMAT_VERSION = 1
HEADER_KEY = "cortex_export"
MARKDOWN_TITLE = "# Cortex export"
STATUSES = ("active", "superseded", "resolved")
FORMATS = ("jsonl", "markdown")
# Fixed, so ids of notes imported from a memory file are the same on every machine and every run.
_MEMORY_NAMESPACE = uuid.UUID("6f1c0b8e-2d2a-4a53-9a55-3c0a1e0c7a21")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class ExportedNote:
    """One note as exported: everything needed to put it back."""

    id: str
    scope: str
    timestamp: str
    kind: str
    subject: str | None
    content: str
    alternatives: tuple[str, ...]
    status: str
    contested: bool
    contested_with: tuple[str, ...]
    source: str | None

    def to_dict(self) -> dict[str, object]:
        """The JSON Lines record (this key order is part of the format)."""
        return {
            "id": self.id,
            "scope": self.scope,
            "timestamp": self.timestamp,
            "kind": self.kind,
            "subject": self.subject,
            "content": self.content,
            "alternatives": list(self.alternatives),
            "status": self.status,
            "contested": self.contested,
            "contested_with": list(self.contested_with),
            "source": self.source,
        }


def export_notes(
    conn: sqlite3.Connection, scopes: list[str] | None = None, *, implied: tuple[str, ...] = ()
) -> list[ExportedNote]:
    """Every note (of `scopes`, when given) in (timestamp, id) order, with the notes each contest links it to.

    Raises:
        InvalidInput: a scope key that no note carries (`implied` keys, such as this worktree's, may be empty).
    """
    if scopes:
        known = {r[0] for r in conn.execute("SELECT key FROM scopes WHERE id IN (SELECT scope_id FROM notes)")}
        unknown = [s for s in scopes if s not in known and s not in implied]
        if unknown:
            raise InvalidInput(
                f"no note is stored under scope {unknown[0]!r}; list the scopes with "
                "`cortex list-memory --json` (or omit --scope to export every scope)",
                code="bad_scope",
            )
        rows = conn.execute(
            f"SELECT * FROM scoped_notes WHERE {in_scopes(len(scopes))} ORDER BY timestamp, id", scopes
        ).fetchall()
    else:
        rows = conn.execute("SELECT * FROM scoped_notes ORDER BY timestamp, id").fetchall()
    contested: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        if row["conflict"] and row["subject"]:
            contested.setdefault((row["scope_key"], row["subject"]), []).append(row["id"])
    out = []
    for row in rows:
        peers = contested.get((row["scope_key"], row["subject"]), []) if row["conflict"] else []
        out.append(
            ExportedNote(
                row["id"],
                row["scope_key"],
                row["timestamp"],
                row["kind"],
                row["subject"],
                row["content"],
                tuple(alternatives_list(row["alternatives"])),
                row["status"],
                bool(row["conflict"]),
                tuple(sorted(p for p in peers if p != row["id"])),
                row["source"],
            )
        )
    return out


def render_jsonl(notes: list[ExportedNote], tick: Tick | None = None) -> str:
    """The JSON Lines export: a header line, then one note per line (`tick(1)` after each)."""
    lines = [json.dumps({HEADER_KEY: FORMAT_VERSION, "notes": len(notes)}, ensure_ascii=False)]
    for note in notes:
        lines.append(json.dumps(note.to_dict(), ensure_ascii=False))
        if tick is not None:
            tick(1)
    return "\n".join(lines) + "\n"


def render_markdown(notes: list[ExportedNote]) -> str:
    """A Markdown export for reading (import reads the JSON Lines export, not this)."""
    lines = [MARKDOWN_TITLE, "", f"{len(notes)} note(s). Import reads the JSON Lines export (`--format jsonl`)."]
    scope = None
    for note in sorted(notes, key=lambda n: (n.scope, n.timestamp, n.id)):
        if note.scope != scope:
            scope = note.scope
            lines += ["", f"## {scope}"]
        head = " · ".join(
            x for x in (note.kind, note.subject or "", note.status, "contested" if note.contested else "") if x
        )
        lines += [
            "",
            f"### {head}",
            "",
            f"`{note.id}` · {note.timestamp}" + (f" · from {note.source}" if note.source else ""),
            "",
            *(f"> {line}" if line else ">" for line in note.content.split("\n")),
        ]
        if note.alternatives:
            lines += ["", "Rejected alternatives:", *(f"- {a}" for a in note.alternatives)]
        if note.contested_with:
            lines += ["", "Contested with: " + ", ".join(f"`{p}`" for p in note.contested_with)]
    return "\n".join(lines) + "\n"


# -- reading a file ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Incoming:
    """A note read from a file, not yet checked against the store."""

    id: str
    scope: str
    timestamp: str
    kind: str
    subject: str | None
    content: str
    alternatives: tuple[str, ...]
    status: str
    contested: bool
    source: str | None
    where: str


@dataclass
class ImportResult:
    """What an import did: notes added, already present, superseded or contested by the rules."""

    path: str
    format: str
    read: int
    added: list[str] = field(default_factory=list)
    present: int = 0
    superseded: list[str] = field(default_factory=list)
    contested: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    unread_scopes: list[str] = field(default_factory=list)
    """Scopes the imported notes landed in that the importing worktree does not read."""
    remapped: int = 0
    """Notes whose scope belonged to another repository, put in this worktree's (or this project's) scope."""
    pending: list[str] = field(default_factory=list)
    """Note ids put in the inbox for a person to accept (nothing of them is in the store yet)."""

    @property
    def changed(self) -> bool:
        """Whether the store changed."""
        return bool(self.added)

    def to_dict(self) -> dict[str, object]:
        """The `--json` shape."""
        return {
            "path": self.path,
            "format": self.format,
            "read": self.read,
            "added": len(self.added),
            "already_present": self.present,
            "superseded": self.superseded,
            "contested": self.contested,
            "skipped": self.skipped,
            "unread_scopes": self.unread_scopes,
            "remapped": self.remapped,
            "changed": self.changed,
            "ids": self.added,
            "pending": len(self.pending),
            "text": self.render(),
        }

    def render(self) -> str:
        """The text report."""
        what = "note(s)" if self.format == "jsonl" else "insight(s)"
        if self.pending:
            lines = [
                f"{len(self.pending)} {what} from {self.path} wait in the inbox for your review"
                + (f"; {self.present} already present, left as they are." if self.present else ".")
                + " Nothing is memory until you accept it: `cortex inbox` lists them, "
                "`cortex inbox accept ID` (or `--all`) takes them, `cortex inbox reject ID` drops one."
            ]
        elif not self.added:
            lines = [
                f"Nothing changed: all {self.present} {what} in {self.path} are already in the store."
                if self.present
                else f"Nothing changed: {self.path} holds no note to import."
            ]
        else:
            lines = [
                f"Imported {len(self.added)} {what} from {self.path}"
                + (f"; {self.present} already present, left as they are." if self.present else ".")
            ]
        if self.superseded:
            lines.append(f"Superseded by the import: {_some(self.superseded)}")
        if self.contested:
            lines.append(f"Contested (resolve with `cortex resolve`): {_some(self.contested)}")
        if self.remapped:
            lines.append(
                f"{self.remapped} note(s) came from another repository's scopes and were put in this "
                "worktree's scope (a project-layer note in this project's)."
            )
        lines += [f"Not imported: {s}" for s in self.skipped]
        if self.unread_scopes:
            lines.append(
                f"Stored under scopes this worktree does not read: {', '.join(self.unread_scopes)} "
                "(`cortex import FILE --scope here` puts them in this worktree's scope instead)"
            )
        return "\n".join(lines)


SHOWN_IDS = 5


def _some(ids: list[str]) -> str:
    """The first few ids, and how many more (`--json` lists them all)."""
    more = len(ids) - SHOWN_IDS
    return ", ".join(ids[:SHOWN_IDS]) + (f" and {more} more (--json lists them all)" if more > 0 else "")


def read_file(path: str, *, default_scope: str, now: str) -> tuple[str, list[Incoming], list[str]]:
    """Read an export or a Claude Code memory file: (format, notes, blocks left out and why).

    Raises:
        InvalidInput: the file cannot be read, is a Markdown export, or has a line that is not a valid note
            (named by its line number; nothing is imported).
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc.__class__.__name__}", code="bad_file") from exc
    try:
        text = raw.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not UTF-8 text; nothing was imported", code="bad_file") from exc
    if "\x00" in text or sum(1 for c in text[:8192] if ord(c) < 32 and c not in "\t\n\f\v") > 8:
        raise InvalidInput(
            f"{path} is a binary file, not a Cortex export or a Markdown memory file; nothing was imported",
            code="bad_file",
        )
    first = next((line for line in text.split("\n") if line.strip()), "")
    if first.strip() == MARKDOWN_TITLE:
        raise InvalidInput(
            f"{path} is a Markdown export, which is for reading; import the JSON Lines export "
            "(`cortex export --format jsonl`); nothing was imported",
            code="bad_file",
        )
    header = _json_object(first)
    if header is not None and HEADER_KEY in header:
        if header[HEADER_KEY] != FORMAT_VERSION:
            raise InvalidInput(
                f"{path} is a Cortex export of format {header[HEADER_KEY]!r}; this build reads format "
                f"{FORMAT_VERSION}; nothing was imported",
                code="bad_file",
            )
        # A file's dates are claims: one in the future would stay "newest" for good and supersede what comes after.
        return "jsonl", [replace(n, timestamp=min(n.timestamp, now)) for n in _read_jsonl(path, text)], []
    if header is not None or first.lstrip().startswith("{"):
        raise InvalidInput(
            f"{path} is JSON but not a Cortex export (its first line has no {HEADER_KEY!r} key); nothing was imported",
            code="bad_file",
        )
    if Path(path).suffix.lower() not in MEMORY_SUFFIXES:
        raise InvalidInput(
            f"{path} is neither a Cortex export (`cortex export`) nor a Markdown memory file (CLAUDE.md, "
            "MEMORY.md or another .md file); nothing was imported",
            code="bad_file",
        )
    source = os.path.realpath(path)
    incoming, skipped = _read_memory_file(text, source, default_scope, now)
    return Path(path).name, incoming, skipped


def _json_object(line: str) -> dict[str, object] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _read_jsonl(path: str, text: str) -> list[Incoming]:
    out: list[Incoming] = []
    seen: set[str] = set()
    for number, line in enumerate(text.split("\n")[1:], start=2):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        record = _json_object(line)
        if record is None:
            raise InvalidInput(f"{where} is not a JSON object; nothing was imported", code="bad_file")
        note = _incoming(record, where)
        if note.id in seen:
            raise InvalidInput(f"{where} repeats note id {note.id}; nothing was imported", code="bad_file")
        seen.add(note.id)
        out.append(note)
    return out


def _incoming(record: dict[str, object], where: str) -> Incoming:
    """One exported record checked field by field."""

    def bad(why: str) -> InvalidInput:
        return InvalidInput(f"{where}: {why}; nothing was imported", code="bad_file")

    def text_field(name: str, *, optional: bool = False) -> str | None:
        value = record.get(name)
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value.strip():
            raise bad(f"{name!r} must be a non-empty string")
        return value

    note_id = text_field("id")
    assert note_id is not None
    try:
        note_id = str(uuid.UUID(note_id))
    except ValueError as exc:
        raise bad(f"id {note_id!r} is not a UUID") from exc
    kind = text_field("kind")
    if kind not in NOTE_KINDS:
        raise bad(f"unknown kind {kind!r}")
    status = record.get("status", "active")
    if status not in STATUSES:
        raise bad(f"unknown status {status!r}")
    stamp = parse_iso(text_field("timestamp") or "")
    if stamp is None:
        raise bad(f"timestamp {record.get('timestamp')!r} is not an ISO time")
    alternatives = record.get("alternatives") or []
    if not isinstance(alternatives, list) or not all(isinstance(a, str) for a in alternatives):
        raise bad("'alternatives' must be a list of strings")
    contested = record.get("contested", False)
    if not isinstance(contested, bool):
        raise bad("'contested' must be true or false")
    content = text_field("content")
    assert content is not None
    try:
        validate_note(kind, content, found if isinstance(found := record.get("subject"), str) else None, alternatives)
    except InvalidInput as exc:
        raise bad(exc.message) from exc
    return Incoming(
        note_id,
        text_field("scope") or "",
        iso(stamp),
        kind,
        text_field("subject", optional=True),
        content,
        tuple(alternatives),
        status,
        contested,
        text_field("source", optional=True),
        where,
    )


def _read_memory_file(text: str, source: str, scope: str, now: str) -> tuple[list[Incoming], list[str]]:
    """A CLAUDE.md / MEMORY.md: each bullet or paragraph becomes an insight, its heading the subject."""
    blocks = _memory_blocks(text)
    out: list[Incoming] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for line_no, heading, body in blocks:
        where = f"{Path(source).name} line {line_no}"
        try:
            validate_note("insight", body, heading, None)
        except InvalidInput as exc:
            skipped.append(f"{where}: {exc.message}")
            continue
        note_id = str(uuid.uuid5(_MEMORY_NAMESPACE, "\n".join((source, scope, heading or "", body))))
        if note_id in seen:
            skipped.append(f"{where}: the same text appears earlier under the same heading")
            continue
        seen.add(note_id)
        out.append(Incoming(note_id, scope, now, "insight", heading, body, (), "active", False, source, where))
    return out, skipped


def _memory_blocks(text: str) -> list[tuple[int, str | None, str]]:
    """(first line number, heading, text) of every bullet and paragraph; front matter and blank lines dropped."""
    lines = text.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is not None:
            start = end + 1
    blocks: list[tuple[int, str | None, str]] = []
    heading: str | None = None
    current: list[str] = []
    current_line = 0
    fenced = False

    def close() -> None:
        body = "\n".join(current).strip()
        if body:
            blocks.append((current_line, heading, body))
        current.clear()

    for index in range(start, len(lines)):
        line = lines[index]
        if fenced:
            current.append(line)
            fenced = not _FENCE.match(line)
            continue
        if _FENCE.match(line):
            if not current:
                current_line = index + 1
            current.append(line)
            fenced = True
            continue
        found = _HEADING.match(line)
        if found:
            close()
            heading = found.group(2) or None
            continue
        if not line.strip():
            close()
            continue
        bullet = _BULLET.match(line)
        if bullet and not bullet.group(1):
            close()
            current_line = index + 1
            current.append(bullet.group(2))
            continue
        if not current:
            current_line = index + 1
        current.append(line.strip() if bullet is None else line)
    close()
    return blocks


# -- writing -------------------------------------------------------------------------------------------


MEMORY_SUFFIXES = (".md", ".markdown")
"""A memory file Claude Code (or a person) writes is Markdown: CLAUDE.md, MEMORY.md and the files it indexes."""


def map_foreign_scopes(incoming: list[Incoming], here: Scope, project: str) -> tuple[list[Incoming], int]:
    """Notes exported from another repository (or another clone, another machine) under this repository's scopes:
    a branch or detached scope of another git directory goes to `here` (this worktree's scope), another project
    layer to `project`; scopes of this repository are kept. Returns the notes and how many were moved.

    Args:
        here: the importing worktree's scope (outside git, every branch scope is foreign).
        project: the importing store's project-layer scope key.
    """
    from cortex_engine.scope.identity import normalize_scope_path

    repository = normalize_scope_path(here.git_root) if here.git_root else None
    ours = tuple(f"{kind}:{repository}:" for kind in ("branch", "detached")) if repository else ()
    out: list[Incoming] = []
    moved = 0
    for note in incoming:
        scope = note.scope
        if scope.startswith("project:"):
            target = project
        elif ours and scope.startswith(ours):
            target = scope
        else:
            target = here.key
        if target != scope:
            moved += 1
            note = replace(note, scope=target)
        out.append(note)
    return out, moved


def rescope(incoming: list[Incoming], scope: str) -> list[Incoming]:
    """The same notes under another scope key (importing another machine's export into this worktree)."""
    return [replace(note, scope=scope) for note in incoming]


def import_notes(
    conn: sqlite3.Connection,
    result: ImportResult,
    incoming: list[Incoming],
    tick: Tick | None = None,
    inside: Callable[[sqlite3.Connection], None] | None = None,
) -> ImportResult:
    """Write the incoming notes in one transaction, in (timestamp, file order), applying the note rules
    (`tick(1)` after each note; `inside(conn)` runs in the same transaction, after them).

    Raises:
        InvalidInput: a note the store cannot hold (the transaction is rolled back; nothing is imported).
    """
    order = sorted(range(len(incoming)), key=lambda i: (incoming[i].timestamp, i))
    with transaction(conn):
        touched: set[str] = set()
        for i in order:
            note = incoming[i]
            if queries.note_exists(conn, note.id):
                result.present += 1
                if tick is not None:
                    tick(1)
                continue
            touched |= _import_one(conn, note, result)
            if tick is not None:
                tick(1)
        for note_id in sorted(touched):
            row = queries.note_row(conn, note_id)
            assert row is not None  # written or flagged in this transaction
            # What was superseded was re-projected one tier cooler by `notes.supersede` already.
            sync_note_item(conn, row, _scope_type_of(row["scope_key"], "project"))
        if inside is not None:
            inside(conn)
    return result


def hold_for_review(conn: sqlite3.Connection, result: ImportResult, incoming: list[Incoming], now: str) -> ImportResult:
    """Put the incoming notes in the inbox instead of the store (one transaction): a person accepts them there.

    A note whose id is already stored, or already waits in the inbox, is counted as present.
    """
    with transaction(conn):
        waiting = {
            r[0] for r in conn.execute("SELECT note_id FROM arrivals WHERE channel='import' AND state='pending'")
        }
        for seq, note in enumerate(incoming):
            if note.id in waiting or queries.note_exists(conn, note.id):
                result.present += 1
                continue
            arrivals.add(
                conn,
                note.scope,
                "import",
                os.path.abspath(result.path),
                kind=note.kind,
                subject=note.subject,
                content=note.content,
                alternatives=note.alternatives,
                timestamp=note.timestamp,
                now=now,
                status=note.status,
                note_id=note.id,
                source=note.source,
                seq=seq,
            )
            waiting.add(note.id)
            result.pending.append(note.id)
    return result


def from_arrival(row: sqlite3.Row) -> Incoming:
    """The note an import arrival holds, as import reads it (its date already no later than when it arrived)."""
    return Incoming(
        row["note_id"],
        row["scope_key"],
        row["timestamp"],
        row["kind"],
        row["subject"],
        row["content"],
        tuple(alternatives_list(row["alternatives"])),
        row["status"],
        False,
        row["source"],
        f"inbox {row['id'][:8]}",
    )


def _import_one(conn: sqlite3.Connection, note: Incoming, result: ImportResult) -> set[str]:
    """Insert one note and apply supersession and contradiction against the active notes on its subject.

    What it replaces goes through `notes.supersede`, the rule every write path shares; a note that arrives
    already replaced (a newer active note of its kind is stored) is no side of a contest.
    """
    subject = normalize_subject(note.subject)
    content = clean_text(note.content.strip())
    alternatives = [clean_text(a) for a in note.alternatives if a.strip()]
    # A contest is what the notes say, never what the file claims: `"contested": true` with no opponent is nothing.
    status, conflict = note.status, False
    touched = {note.id}
    opposed: list[str] = []
    replaced: list[str] = []
    if status == "active" and subject is not None:
        rows = queries.active_decision_peers(conn, note.scope, subject, note.kind)
        for row in rows:
            earlier = row["timestamp"] <= note.timestamp
            if "decision" not in (row["kind"], note.kind) or not (
                row["kind"] == "decision" if earlier else note.kind == "decision"
            ):
                continue
            # `compare` finds a contradiction or not whichever side is the prior: the order is never asked
            if contradiction.compare(row["content"], content) is not None:
                opposed.append(row["id"])
        for row in rows:
            if (
                row["id"] in opposed
                or row["kind"] != note.kind
                or note.kind not in ("decision", "intent")
                or row["conflict"]
            ):
                continue
            if row["timestamp"] <= note.timestamp:
                replaced.append(row["id"])
            elif status == "active":
                status = "superseded"
                result.superseded.append(note.id)
        if status != "active":
            opposed, conflict = [], False
        notes_mod.supersede(conn, replaced)
        result.superseded.extend(replaced)
        flagged = {row["id"] for row in rows if row["conflict"]}
        for row_id in opposed:
            conflict = True
            if row_id not in flagged:
                queries.mark_contested(conn, row_id)
                touched.add(row_id)
                result.contested.append(row_id)
    if opposed:
        result.contested.append(note.id)
    conn.execute(
        "INSERT INTO notes(id, session, scope_id, timestamp, kind, subject, content, alternatives, status, conflict, "
        "source) VALUES (?,NULL,?,?,?,?,?,?,?,?,?)",
        (
            note.id,
            scope_id(conn, note.scope),
            note.timestamp,
            note.kind,
            subject,
            content,
            json.dumps(alternatives) if alternatives else None,
            status,
            int(conflict),
            note.source,
        ),
    )
    result.added.append(note.id)
    return touched
