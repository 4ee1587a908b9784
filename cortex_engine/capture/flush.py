"""Capture: the per-worktree runtime folder and replaying the hook spool into the store (`sessions` engages it).

Hooks append one line per tool call to `<worktree>/.cortex/spool.jsonl` (large payloads go to
`blobs/` behind a small pointer line). A flush claims the spool by atomic rename, replays it in
order in one transaction per claim, and is idempotent: every line has a key recorded in
`spool_seen`, so a claim replayed twice (a crash between commit and unlink) books nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cortex_engine.base.clock import iso
from cortex_engine.base.errors import RuntimeUntrusted
from cortex_engine.base.ids import new_id
from cortex_engine.base.lazy import LazyModule
from cortex_engine.base.records import field, record
from cortex_engine.base.tokens import estimate_file_tokens, estimate_tokens
from cortex_engine.capture.digests import absolute_path, read_content, record_digest, relative_path
from cortex_engine.capture.runtime import (
    BLOB_NAME,
    CLAIM_NAME,
    ENGAGED,
    IGNORE,
    RUNTIME,
    Runtime,
    adopt,
    home_key,
    marker_text,
    problem,
)
from cortex_engine.scope.identity import Scope, cortex_home, detect_scope
from cortex_engine.store import queries
from cortex_engine.store.database import checkpoint_if_large, transaction
from cortex_engine.store.redact import as_stored
from cortex_engine.store.schema import spool_digest

# Imported on first use: a flush with nothing to replay, or a SessionStart, never pays for them.
if TYPE_CHECKING:  # the real modules, so that mypy checks every call through a lazy handle
    from cortex_engine.capture import command_runs, consolidation, searchledger, sessions
    from cortex_engine.memory import projection
    from cortex_engine.store import redact as redaction
else:
    command_runs = LazyModule("capture.command_runs")
    consolidation = LazyModule("capture.consolidation")
    projection = LazyModule("memory.projection")
    redaction = LazyModule("store.redact")
    searchledger = LazyModule("capture.searchledger")
    sessions = LazyModule("capture.sessions")

Json = dict[str, Any]
"""A decoded spool line or hook payload: JSON from the host, read field by field (`_str`, isinstance) where used."""

SPOOL = "spool.jsonl"
CLAIMS = "claims"
BLOBS = "blobs"
INDEX = "index"
SUBSTITUTION = "substitution"
TURN_READS = "turn-reads"
FLUSH_AFTER = "flush-after"
"""Epoch seconds before which the capture hook spawns no flush (one is running, or the store was refused)."""
PAUSED = "paused"
"""Written by the capture hook when the folder reached RUNTIME_CAP: capture stops until a flush succeeds."""
FLUSH_THRESHOLD = 256 * 1024
RUNTIME_CAP = 32 * 1024 * 1024
"""The runtime folder's size cap; hooks/cortex-capture.sh holds the same figure in KiB."""
REFUSED_BACKOFF_SECONDS = 600
"""How long hooks wait before spawning another flush after the store refused one."""
EDIT_TOOLS = {"Edit": "edit", "MultiEdit": "edit", "Write": "write", "NotebookEdit": "edit"}
_EXIT = re.compile(
    r"(?:exit(?:ed)?(?: with)?(?: non-zero)?(?: status)?(?: code)?|status code)\D{0,3}?(-?\d+)", re.IGNORECASE
)


def runtime_dir(worktree: str | os.PathLike[str]) -> Path:
    """The worktree's runtime folder (engagement, spool, claims, blobs)."""
    return Path(worktree) / RUNTIME


def find_runtime(cwd: str) -> Path | None:
    """Walk up from `cwd` to the nearest runtime folder, engaged or not (and trusted or not: see `runtime`)."""
    here = Path(os.path.realpath(cwd))
    for folder in (here, *here.parents):
        candidate = folder / RUNTIME
        if os.path.lexists(candidate / IGNORE):
            return candidate
    return None


def open_runtime(folder: Path) -> Runtime:
    """The runtime folder opened for use.

    Raises:
        RuntimeUntrusted: it is a link, someone else's, open to others, or git tracks files in it.
    """
    return Runtime.open(folder)


def runtime_problem(worktree: str | os.PathLike[str]) -> str | None:
    """Why the worktree's runtime folder must not be used (one line with what to do), or None."""
    return problem(runtime_dir(worktree))


def reclaim(worktree: str | os.PathLike[str]) -> bool:
    """Close this user's untracked runtime folder that is open to others, dropping what no one can vouch for.

    An older Cortex made the folder 0755; an archive unpacked into the worktree does too. Its pending capture may
    not be this machine's, so it is removed (the entries, never a link's target) before the folder is closed to 0700.
    """
    return adopt(runtime_dir(worktree), keep=(SUBSTITUTION,), subs=(CLAIMS, BLOBS))


def is_engaged(worktree: str | os.PathLike[str]) -> bool:
    """Whether hooks capture in this worktree: a trusted folder whose marker holds this machine's key."""
    try:
        with Runtime.open(runtime_dir(worktree)) as rt:
            marker = rt.read(ENGAGED)
    except (OSError, RuntimeUntrusted):
        return False
    if marker is None:
        return False
    key = home_key(cortex_home(), create=False)
    return key is not None and marker.decode("utf-8", "replace").splitlines()[:1] == [marker_text(key).strip()]


@record
class FlushResult:
    """What a flush did."""

    processed: int = 0
    skipped: int = 0
    duplicates: int = 0
    claims: int = 0
    errors: list[str] = field(default_factory=list)
    checkpoint: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The `flush-spool --json` shape."""
        return {
            "processed": self.processed,
            "skipped": self.skipped,
            "duplicates": self.duplicates,
            "claims": self.claims,
        }


def _claim(rt: Runtime) -> None:
    """Move the live spool into claims/ (atomic rename); a concurrent claimer simply finds nothing."""
    if not rt.is_file(SPOOL):
        return  # absent, or not a plain file (a link is never read)
    rt.rename(SPOOL, None, f"{time.time_ns():020d}-{os.getpid()}.jsonl", CLAIMS)


def _lines(rt: Runtime, claim: str, start: int) -> tuple[list[tuple[str, Json, list[str]]], int, int]:
    """Parse a claim from byte `start`: (key, entry, blob names) per good line, bytes consumed, lines skipped.

    Raises:
        FileNotFoundError: the claim is gone (a concurrent flush finished it).
    """
    data = rt.read(claim, CLAIMS)
    if data is None:
        raise FileNotFoundError(claim)
    good: list[tuple[str, Json, list[str]]] = []
    skipped = 0
    end = data.rfind(b"\n") + 1
    for raw in data[start:end].split(b"\n"):
        if not raw.strip():
            continue
        try:
            entry = _decode(raw)
        except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: absurdly deep nesting
            skipped += 1
            continue
        if not isinstance(entry, dict):
            skipped += 1
            continue
        blobs: list[str] = []
        if "blob" in entry and "p" not in entry:
            name = entry["blob"]
            if not isinstance(name, str) or not BLOB_NAME.fullmatch(name):
                skipped += 1  # not a name the hook makes: never opened, never removed
                continue
            blobs.append(name)
            try:
                raw_blob = rt.read(name, BLOBS)
                if raw_blob is None:
                    raise FileNotFoundError(name)
                entry["p"] = _decode(raw_blob.replace(b"\r", b"").replace(b"\n", b""))
            except (OSError, UnicodeDecodeError, ValueError, RecursionError):
                skipped += 1
                rt.unlink(name, BLOBS)  # whole (the hook writes it before its pointer line) but unusable: never kept
                continue
        if not isinstance(entry.get("p"), dict):
            skipped += 1
            for name in blobs:
                rt.unlink(name, BLOBS)
            continue
        good.append((_key(entry, raw), entry, blobs))
    return good, end, skipped


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _decode(raw: bytes) -> object:
    """One JSON value from spool bytes; a lone UTF-16 surrogate (legal in JSON, refused by SQLite) becomes U+FFFD."""
    value = json.loads(raw.decode("utf-8"))
    if _SURROGATE_ESCAPE.search(raw) is None:
        return value
    stack = [value]
    while stack:  # iterative: the payload may nest deeper than the recursion limit allows
        node = stack.pop()
        if isinstance(node, dict):
            for key in list(node):
                child = node.pop(key)
                node[_SURROGATE.sub("\ufffd", key)] = child
                stack.append((node, _SURROGATE.sub("\ufffd", key)))
        elif isinstance(node, list):
            stack.extend((node, i) for i in range(len(node)))
        elif isinstance(node, tuple):
            parent, slot = node
            child = parent[slot]
            if isinstance(child, str):
                parent[slot] = _SURROGATE.sub("\ufffd", child)
            else:
                stack.append(child)
    return value


def _key(entry: Json, raw: bytes) -> str:
    payload = entry["p"]
    tool_use = payload.get("tool_use_id")
    if isinstance(tool_use, str) and tool_use:
        return spool_key(str(payload.get("hook_event_name", "")), tool_use)
    return hashlib.sha256(raw).hexdigest()


def spool_key(event: str, tool_use: str) -> str:
    """The `spool_seen` key of a hook event known by its tool-use id: a digest, so the author's id is never stored
    and the choke point keeps the key without scanning it."""
    return spool_digest(f"{event}:{tool_use}")


def _epoch(entry: Json) -> float | None:
    """The epoch seconds the hook stamped: a JSON number, or a number's text (a decimal comma read as a point)."""
    value = entry.get("t")
    if type(value) is float:  # what the hook writes: its text would read back as the same float
        return value
    try:
        return float(str(value).replace(",", "."))
    except (TypeError, ValueError):
        return None


MUTATING_TOOLS = {*EDIT_TOOLS, "Bash"}
_RUN_COLUMNS = (
    "id",
    "session_id",
    "event_id",
    "scope_key",
    "timestamp",
    "category",
    "command_summary",
    "exit_code",
    "stdout_tail",
    "stderr_tail",
    "files_touched_json",
)
_INSERT_RUN = f"INSERT INTO command_runs({', '.join(_RUN_COLUMNS)}) VALUES ({','.join('?' * len(_RUN_COLUMNS))})"


def line_time(entry: Json, fallback: datetime) -> str:
    """The event time the hook stamped (epoch seconds), else the flush time."""
    seconds = _epoch(entry)
    if seconds is None or not 0 < seconds < 10**11:
        return iso(fallback)
    return iso(datetime.fromtimestamp(seconds, tz=UTC))


class Replayer:
    """Replays spool entries into the store inside one transaction."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        mutations: list[float] | None = None,
        *,
        turn_end: bool,
        home: str | None = None,
    ) -> None:
        """Bind to a connection (a transaction must be open) and the batch's mutation times.

        Only a turn-end flush sees a whole turn, so only it may certify a read as refund-eligible: every caller
        says whether it is one. `home` is the worktree whose spool is replayed: a payload whose cwd is missing or
        not a directory belongs there (the hook found that worktree by walking up from the cwd), not to whatever
        directory the flush runs in.
        """
        self.conn = conn
        self.turn_end = turn_end
        self.home = home
        self._scopes: dict[str, Scope] = {}
        self._mutations = mutations or []
        self._primaries: dict[tuple[str, str], str] = {}
        self._episodes: dict[str, None] = {}  # failure episodes bumped in this batch, projected once at its end
        self._failures = command_runs.FailureEpisodes(conn)  # their rows, each stored once by `finish`

    def _mutated_after(self, entry: Json) -> bool:
        """Whether anything in the batch could have changed files at or after this entry (or its time is unknown)."""
        stamp = _epoch(entry)
        return stamp is None or any(t >= stamp for t in self._mutations)

    def cwd_of(self, payload: Json) -> str:
        """The directory an entry happened in (the spool's worktree when the payload does not say)."""
        return _str(payload.get("cwd")) or self.home or os.getcwd()

    def prime_scopes(self, entries: list[Json]) -> None:
        """Detect every entry's scope before the write transaction: git runs outside the store's lock."""
        for entry in entries:
            self.scope_for(self.cwd_of(entry["p"]))

    def scope_for(self, cwd: str) -> Scope:
        """Scope of a payload's cwd, detected once per flush."""
        scope = self._scopes.get(cwd)
        if scope is None:
            scope = detect_scope(cwd) if os.path.isdir(cwd) else detect_scope(self.home or os.getcwd())
            self._scopes[cwd] = scope
        return scope

    def session_for(self, payload: Json, scope: Scope, at: str) -> str:
        """The session an entry belongs to: the host session's primary, or a subagent's child."""
        host = _str(payload.get("session_id"))
        primary = self._primaries.get((host, scope.key))
        if primary is None:
            primary = sessions.primary_session(self.conn, scope, host, at)
            # A host seen in another scope may just have rotated: forget its other primaries.
            self._primaries = {k: v for k, v in self._primaries.items() if k[0] != host}
            self._primaries[(host, scope.key)] = primary
        agent_id = _str(payload.get("agent_id") or payload.get("agentId"))
        if not agent_id:
            return primary
        agent_type = _str(payload.get("agent_type") or payload.get("agentType"))
        return sessions.child_session(self.conn, scope, primary, agent_id, agent_type, at)

    def replay(self, entry: Json, at: str) -> bool:
        """Apply one payload; returns False when it carries nothing Cortex records."""
        payload = entry["p"]
        tool = _str(payload.get("tool_name"))
        event = _str(payload.get("hook_event_name")) or "PostToolUse"
        if event == "PreToolUse" and isinstance(entry.get("credit"), dict):
            return self._credit(payload, entry["credit"], at)
        if event not in ("PostToolUse", "PostToolUseFailure") or not tool:
            return False
        cwd = self.cwd_of(payload)
        scope = self.scope_for(cwd)
        tool_input = found if isinstance(found := payload.get("tool_input"), dict) else {}
        response = payload.get("tool_response")
        session = self.session_for(payload, scope, at)
        agent_id = _str(payload.get("agent_id") or payload.get("agentId")) or None
        if tool == "Read":
            path = _str(tool_input.get("file_path") or tool_input.get("path"))
            if not path:
                return False
            rel = relative_path(path, scope.worktree)
            self._event(
                session, scope, at, "read", rel, {k: tool_input.get(k) for k in ("offset", "limit") if k in tool_input}
            )
            if event == "PostToolUse":
                record_digest(
                    self.conn,
                    scope,
                    session,
                    agent_id,
                    rel,
                    absolute_path(path, cwd),
                    read_content(tool_input, response),
                    at,
                    refund_eligible=self.turn_end and not self._mutated_after(entry),
                )
            return True
        if tool in EDIT_TOOLS:
            path = _str(tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("path"))
            if not path:
                return False
            self._event(
                session,
                scope,
                at,
                EDIT_TOOLS[tool],
                relative_path(path, scope.worktree),
                {"failed": event == "PostToolUseFailure"},
            )
            return True
        if tool == "Bash":
            return self._command(payload, tool_input, response, event, session, scope, at)
        if tool == "Grep":
            pattern = _str(tool_input.get("pattern"))
            if not pattern:
                return False
            certified = False
            if event == "PostToolUse" and not self._mutated_after(entry):
                certified = searchledger.record(self.conn, scope, tool_input, response, at)
            self._event(
                session,
                scope,
                at,
                "search",
                _str(tool_input.get("path")) or None,
                {
                    "pattern": redaction.redact(pattern)[:200],
                    "glob": tool_input.get("glob"),
                    "certified_empty": certified,
                },
            )
            return True
        if tool in ("Agent", "Task"):
            desc = _str(tool_input.get("description")) or _str(tool_input.get("subagent_type")) or "subagent"
            self._event(
                session,
                scope,
                at,
                "agent",
                None,
                {"description": redaction.clean_text(desc)[:300], "subagent_type": tool_input.get("subagent_type")},
            )
            return True
        return False

    def _credit(self, payload: Json, credit: Json, at: str) -> bool:
        """Book a substituted read: saved = the file's tokens, injected = the line that replaced it; with evidence."""
        path, size, line = credit.get("path"), credit.get("size"), credit.get("line")
        if (
            not isinstance(path, str)
            or not path
            or not isinstance(size, int)
            or not 0 <= size < 2**53
            or not isinstance(line, str)
        ):
            return False
        cwd = self.cwd_of(payload)
        scope = self.scope_for(cwd)
        session = self.session_for(payload, scope, at)
        rel = relative_path(path, scope.worktree)
        for direction, tokens in (("saved", estimate_file_tokens(size)), ("injected", estimate_tokens(line))):
            self.conn.execute(
                "INSERT INTO token_ledger(session_id, scope_key, channel, direction, tokens, timestamp, evidence_kind, "
                "evidence_ref, evidence_size) VALUES (?,?,?,?,?,?,?,?,?)",
                (session, scope.key, "substitution", direction, tokens, at, "read", rel, size),
            )
        return True

    def _event(self, session: str, scope: Scope, at: str, kind: str, target: str | None, meta: Json) -> str:
        event_id = new_id()
        self.conn.execute(
            "INSERT INTO events(id, session_id, scope_key, timestamp, "
            "type, target, metadata_json) VALUES (?,?,?,?,?,?,?)",
            (event_id, session, scope.key, at, kind, target, json.dumps(meta)),
        )
        return event_id

    def _command(
        self, payload: Json, tool_input: Json, response: object, event: str, session: str, scope: Scope, at: str
    ) -> bool:
        command = _str(tool_input.get("command"))
        if not command:
            return False
        stdout = stderr = None
        interrupted = False
        if isinstance(response, dict):
            stdout, stderr = _str(response.get("stdout")), _str(response.get("stderr"))
            interrupted = bool(response.get("interrupted"))
        if event == "PostToolUseFailure":
            error = _str(payload.get("error"))
            interrupted = interrupted or bool(payload.get("is_interrupt"))
            match = _EXIT.search(error)
            exit_code = _exit_value(int(match.group(1))) if match and len(match.group(1)) <= 12 else None
            if exit_code is None and not interrupted:
                exit_code = 1
            stderr = stderr or error
        else:
            exit_code = _exit_from(payload, response)
        if exit_code not in (None, 0):
            # A failing run keeps its output tails. Redact a window wider than the tail before it is cut, so a
            # secret straddling the cut is caught whole rather than leaving an unrecognisable fragment.
            stdout, stderr = _redacted_window(stdout), _redacted_window(stderr)
        # Redacted before anything is derived from it: the files a command touched are read from its words too.
        record = command_runs.record_command(
            redaction.redact(command), exit_code, stdout, stderr, interrupted=interrupted
        )
        meta = {
            "category": record.category,
            "exit_code": exit_code,
            "safe_summary": record.summary,
            "files_touched": record.files,
            "interrupted": interrupted,
            "background": bool(tool_input.get("run_in_background")),
        }
        event_id = self._event(session, scope, at, "cmd", None, meta)
        run = (
            event_id,
            session,
            event_id,
            scope.key,
            at,
            record.category,
            record.summary,
            exit_code,
            record.stdout_tail,
            record.stderr_tail,
            json.dumps(record.files),
        )
        self.conn.execute(_INSERT_RUN, run)
        # A successful `ls` or `cd` is hook noise, not memory: it stays in the activity record but is not projected.
        if exit_code not in (None, 0) or record.category not in ("read", "shell", "other"):
            # Projected from the row as the store now holds it (each value as the choke point stored it), not
            # read back.
            projection.sync_command_item(
                self.conn, dict(zip(_RUN_COLUMNS, map(as_stored, run), strict=True)), fresh=True
            )
        if record.category in ("test", "build", "git") and exit_code not in (None, 0):
            episode_id = self._failures.upsert(session, scope.key, event_id, record, at)
            # A failure seen again only bumps its episode's `(seen Nx)`: its item is projected once per batch
            # (`finish`), not re-indexed for every repeat.
            self._episodes[episode_id] = None
        elif record.category == "test" and exit_code == 0:
            consolidation.maybe_test_cycle(self.conn, session, scope.key, event_id, at)
        return True

    def finish(self, at: str) -> None:
        """End of the batch, in its transaction: project the failure episodes it bumped (each once, as it now
        reads), then rebuild the snapshot of every scope it touched."""
        self._failures.write()
        for episode_id in self._episodes:
            projection.sync_episode_item(self.conn, episode_id)
        self._episodes.clear()
        for scope in self._scopes.values():
            consolidation.sync_branch_snapshot(self.conn, scope, at)


def _str(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def _exit_from(payload: Json, response: object) -> int:
    for source in (payload, response if isinstance(response, dict) else {}):
        for key in ("exit_code", "exitCode", "returncode"):
            value = source.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and _exit_value(value) is not None:
                return value
            if (
                isinstance(value, str)
                and re.fullmatch(r"-?\d{1,12}", value.strip())
                and _exit_value(int(value)) is not None
            ):
                return int(value)
    return 0


OUTPUT_WINDOW = 16 * 1024


def _redacted_window(text: str | None) -> str | None:
    """The last 16 KiB of an output, redacted (the stored tail is cut from this)."""
    return redaction.redact(text[-OUTPUT_WINDOW:]) if text else text


def _exit_value(value: int) -> int | None:
    """An exit status as stored, or None when no process could have returned it (past 32 bits)."""
    return value if -(2**31) <= value < 2**32 else None


def flush_spool(conn: sqlite3.Connection, folder: Path, now: datetime, *, turn_end: bool = False) -> FlushResult:
    """Claim the spool, finish any orphaned claims, replay every claim in order, rewrite the digest index.

    Raises:
        RuntimeUntrusted: the runtime folder is a link, someone else's, open to others, or tracked by git.
    """
    result = FlushResult()
    with open_runtime(folder) as rt:
        _claim(rt)
        for name in rt.names(CLAIMS):
            if CLAIM_NAME.fullmatch(name) and rt.is_file(name, CLAIMS):
                result.claims += 1
                _process_claim(conn, rt, name, now, result, turn_end)
        if result.processed or not rt.is_file(INDEX):
            write_index(conn, rt)
        # The store took the spool: capture resumes, and the next spool past the threshold may flush again.
        rt.unlink(PAUSED)
        rt.unlink(FLUSH_AFTER)
    result.checkpoint = checkpoint_if_large(conn)
    return result


def back_off(folder: Path, wall_now: float, seconds: float | None = None) -> bool:
    """Tell the capture hook not to spawn flushes before `wall_now + seconds` (the store refused one)."""
    seconds = REFUSED_BACKOFF_SECONDS if seconds is None else seconds
    try:
        with open_runtime(folder) as rt:
            rt.write(FLUSH_AFTER, f"{int(wall_now + seconds)}\n")
    except (OSError, RuntimeUntrusted):
        return False
    return True


def write_index(conn: sqlite3.Connection, rt: Runtime) -> int:
    """The flat digest index the substitution hook reads: reads that may be refunded, per host session.

    One line per file: `<absolute path>\t<sha256>\t<size>\t<host session id>`. Only complete reads by an active
    primary session (whose context holds them) that nothing in their turn could have changed afterwards.
    """
    worktree = str(rt.folder.parent)
    rows = conn.execute(
        "SELECT d.path, d.sha256, d.byte_size, s.host_session_id FROM "
        "content_digests d JOIN sessions s ON s.id = d.session_id "
        "WHERE s.worktree_path=? AND s.parent_session_id IS NULL "
        "AND s.status='active' AND s.host_session_id IS NOT NULL "
        "AND d.refund_eligible=1 AND d.oversize=0 AND d.sha256 IS NOT NULL AND d.source='payload' ORDER BY d.path",
        (worktree,),
    ).fetchall()
    lines = []
    for row in rows:
        path = row["path"] if os.path.isabs(row["path"]) else os.path.join(worktree, row["path"])
        if "\t" in path or "\n" in path:
            continue
        lines.append(f"{path}\t{row['sha256']}\t{row['byte_size']}\t{row['host_session_id']}\n")
    rt.write(INDEX, "".join(lines))
    return len(lines)


def _replay_isolated(
    conn: sqlite3.Connection, replayer: Replayer, entry: Json, at: str, claim: str, result: FlushResult
) -> bool:
    """Replay one entry inside a savepoint: a payload the replay cannot digest is skipped and undone, never fatal.

    Without this, one poisonous line (a NUL in a path, an exit code past 64 bits) would fail the claim's
    transaction on every flush, and the orphaned claim, replayed first, would stop all capture for good.
    SQLite's own operational errors (disk full, I/O) still abort the claim, which is then kept for the next run.
    """
    conn.execute("SAVEPOINT cortex_entry")
    try:
        done = replayer.replay(entry, at)
    except sqlite3.OperationalError:
        raise
    except Exception as exc:  # noqa: BLE001 - bad input in one payload; counted as skipped, reason kept
        conn.execute("ROLLBACK TO cortex_entry")
        result.errors.append(f"{claim}: skipped a payload ({exc.__class__.__name__})")
        done = False
    conn.execute("RELEASE cortex_entry")
    return done


SEEN_CHUNK = 500
"""Keys looked up per statement (SQLite allows 999 parameters in older builds)."""


def _seen_keys(conn: sqlite3.Connection, keys: list[str]) -> set[str]:
    """The keys among `keys` that spool_seen already holds."""
    found: set[str] = set()
    for start in range(0, len(keys), SEEN_CHUNK):
        chunk = keys[start : start + SEEN_CHUNK]
        found.update(
            row[0]
            for row in conn.execute(f"SELECT key FROM spool_seen WHERE key IN ({','.join('?' * len(chunk))})", chunk)
        )
    return found


def _process_claim(
    conn: sqlite3.Connection, rt: Runtime, claim: str, now: datetime, result: FlushResult, turn_end: bool
) -> None:
    offset = 0
    home = str(rt.folder.parent)
    while True:
        try:
            entries, consumed, skipped = _lines(rt, claim, offset)
        except FileNotFoundError:
            return  # a concurrent flush finished this claim first (it unlinks only after its commit)
        except OSError as exc:
            result.errors.append(f"{claim}: {exc}")
            return
        result.skipped += skipped
        mutations = [
            t for _, e, _ in entries if _str(e["p"].get("tool_name")) in MUTATING_TOOLS and (t := _epoch(e)) is not None
        ]
        # First the whole batch in one transaction (a savepoint per entry would make FTS5 flush a segment per
        # entry); only if some payload cannot be replayed is the batch redone with each entry isolated.
        seen_at = iso(now)
        for isolated in (False, True):
            attempt = FlushResult()
            replayer = Replayer(conn, mutations, turn_end=turn_end, home=home)
            replayer.prime_scopes([entry for _, entry, _ in entries])
            blobs: list[str] = []
            try:
                with transaction(conn):
                    # Which lines were replayed before: one lookup per chunk of keys, then one insert for the new
                    # ones, in the transaction that replays them (a key is booked exactly when its line is).
                    seen = _seen_keys(conn, [key for key, _, _ in entries])
                    fresh: list[tuple[str, dict[str, Any]]] = []
                    for key, entry, entry_blobs in entries:
                        blobs.extend(entry_blobs)
                        stored = str(as_stored(key))  # the key as the store keeps (and compares) it
                        if stored in seen:
                            attempt.duplicates += 1
                            continue
                        seen.add(stored)
                        fresh.append((key, entry))
                    queries.mark_spool_seen(conn, [(key, seen_at) for key, _ in fresh])
                    for _, entry in fresh:
                        at = line_time(entry, now)
                        done = (
                            _replay_isolated(conn, replayer, entry, at, claim, attempt)
                            if isolated
                            else replayer.replay(entry, at)
                        )
                        if done:
                            attempt.processed += 1
                        else:
                            attempt.skipped += 1
                    replayer.finish(iso(now))
            except sqlite3.OperationalError:
                raise  # the store's own trouble (busy, full, I/O): the claim is kept for the next run
            except Exception:
                if isolated:
                    raise
                continue  # rolled back: redo the batch with each entry isolated
            break
        result.processed += attempt.processed
        result.skipped += attempt.skipped
        result.duplicates += attempt.duplicates
        result.errors.extend(attempt.errors)
        for name in blobs:  # committed: the raw payloads go now, not at the end of the claim
            rt.unlink(name, BLOBS)
        # A hook that opened the spool just before the claim may still append to it: read on while it grows.
        info = rt.lstat(claim, CLAIMS)
        if info is None:
            return  # two flushes may replay one claim (spool_seen keeps it once); the other one finished it
        size = info.st_size
        if consumed == offset or size <= consumed:
            if size > consumed:
                result.skipped += 1  # a torn last line (a writer died mid-line): skipped, the rest kept
            break
        offset = consumed
    rt.unlink(claim, CLAIMS)
