"""Command capture: categories, files touched, output tails, and the episodes a failure becomes."""

from __future__ import annotations

import functools
import json
import re
import shlex
import sqlite3
from dataclasses import dataclass

from cortex_engine.base.clock import parse_iso
from cortex_engine.store.redact import redact

TAIL_LINES = 40
TAIL_CHARS = 2000
_FILES = re.compile(
    r"(?<![\w./-])[\w./-]+\.(?:ts|tsx|js|jsx|py|go|rs|java|cs|css|json|md|yaml|yml|toml|sql|sh|rb|c|h|cpp)\b"
)
_WRAPPERS = {"sudo", "env", "time", "nice", "nohup", "command", "exec"}
_TEST_TOOLS = {"pytest", "vitest", "jest", "mocha", "ava", "tox", "nox", "rspec", "phpunit", "ctest"}
_BUILD_TOOLS = {"tsc", "make", "cmake", "gradle", "mvn", "ninja", "bazel", "webpack", "vite", "esbuild"}
_READ_TOOLS = {"ls", "dir", "cat", "head", "tail", "wc", "find", "grep", "rg", "fd", "tree", "less", "more"}
_SHELL_TOOLS = {"cd", "pwd", "echo", "mkdir", "cp", "mv", "rm", "touch", "chmod", "export", "source"}
_PKG = {"npm", "npx", "yarn", "pnpm", "bun"}
FAILURE_CATEGORIES = ("test", "build", "git")


def _words(command: str) -> list[str]:
    first = re.split(r"&&|\|\||;|\|", command, maxsplit=1)[0]
    try:
        words = shlex.split(first)
    except ValueError:
        words = first.split()
    while words and ("=" in words[0] and not words[0].startswith("-") or words[0] in _WRAPPERS):
        words = words[1:]
    return words


@functools.lru_cache(maxsize=4096)
def classify(command: str) -> str:
    """test | build | run | git | npm | read | shell | other, from the command's first words (memoized: a session
    runs the same few commands again and again, and shlex is slow)."""
    words = _words(command)
    if not words:
        return "other"
    tool = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if tool in ("uv", "poetry", "pipenv", "hatch", "pdm") and rest[:1] == ["run"]:
        return classify(" ".join(rest[1:]))
    if tool.startswith("python") and rest[:2] in (["-m", "pytest"], ["-m", "unittest"], ["-m", "tox"]):
        return "test"
    if tool in _TEST_TOOLS:
        return "test"
    if tool in ("go", "cargo", "dotnet", "swift", "mix", "deno"):
        verb = rest[0] if rest else ""
        return {"test": "test", "build": "build", "run": "run", "check": "build"}.get(verb, "other")
    if tool in _PKG:
        sub = [w for w in rest if not w.startswith("-")]
        if sub[:1] == ["test"] or sub[:2] == ["run", "test"] or (sub[:1] and sub[0] in _TEST_TOOLS):
            return "test"
        if sub[:1] == ["run"] and len(sub) > 1 and sub[1].startswith("test"):
            return "test"
        if sub[:1] == ["build"] or sub[:2] == ["run", "build"]:
            return "build"
        return "npm"
    if tool == "git":
        return "git"
    if tool in _BUILD_TOOLS:
        return "build"
    if tool.startswith("python") or tool in ("node", "ruby", "java"):
        return "run"
    if tool in _READ_TOOLS:
        return "read"
    if tool in _SHELL_TOOLS:
        return "shell"
    return "other"


def files_touched(command: str) -> list[str]:
    """File-looking words in a command, unique, in order."""
    seen: list[str] = []
    for match in _FILES.findall(command):
        if match not in seen:
            seen.append(match)
    return seen[:20]


def tail(text: str | None) -> str | None:
    """The redacted last 40 lines / 2000 characters of an output, or None when empty."""
    if not text:
        return None
    clean = text.replace("\r\n", "\n").replace("\0", "").rstrip()
    clean = "\n".join(clean.split("\n")[-TAIL_LINES:])[-TAIL_CHARS:]
    return redact(clean) or None


@dataclass(frozen=True)
class CommandRecord:
    """A captured command, already redacted."""

    summary: str
    category: str
    exit_code: int | None
    stdout_tail: str | None
    stderr_tail: str | None
    files: list[str]
    interrupted: bool = False


def record_command(
    command: str, exit_code: int | None, stdout: str | None, stderr: str | None, *, interrupted: bool = False
) -> CommandRecord:
    """Redact and classify a command; output tails kept only for failing test/build/git commands."""
    category = classify(command)
    keep = category in FAILURE_CATEGORIES and exit_code not in (None, 0)
    return CommandRecord(
        summary=redact(" ".join(command.split()))[:500],
        category=category,
        exit_code=exit_code,
        stdout_tail=tail(stdout) if keep else None,
        stderr_tail=tail(stderr) if keep else None,
        files=files_touched(command),
        interrupted=interrupted,
    )


def failure_summary(record: CommandRecord) -> str:
    """`<category> failed: <command> (exit N)`."""
    return f"{record.category} failed: {record.summary} (exit {record.exit_code})"


@dataclass
class _Failure:
    """One failure episode as this batch knows it: its row as stored, or as its next `write` will store it."""

    id: str
    base: str
    meta: dict[str, object]
    created_at: str
    bumped: bool = False


class FailureEpisodes:
    """The failure episodes of one flush batch: a failure becomes an episode, or a `(seen Nx)` bump of the same
    failure in this session within 24 hours.

    A batch repeats the same failures (1,161 bumps of a few hundred episodes at 10k spool lines): each episode is
    read once, bumped in memory, and stored once by `write`, which the batch calls before it projects them.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._held: dict[tuple[str, str], _Failure] = {}

    def upsert(self, session_id: str, scope_key: str, event_id: str, record: CommandRecord, now: str) -> str:
        """The id of the failure's episode: a new one, or the one this failure bumped."""
        base = failure_summary(record)
        key = (session_id, base)
        held = self._held.get(key) or self._latest(session_id, base)
        stamp = parse_iso(now)
        if held is not None:
            created = parse_iso(held.created_at)
            if stamp is not None and created is not None and (stamp - created).total_seconds() <= 86400:
                occurrences = int(str(held.meta.get("occurrences", 1))) + 1
                held.meta.update(occurrences=occurrences, last_occurred_at=now, event_id=event_id)
                held.created_at, held.bumped = now, True
                self._held[key] = held
                return held.id
            self._store(held)  # a day has passed: a new episode takes its place, so its bumps are stored now
        episode_id = f"command_failure:{event_id}"
        meta: dict[str, object] = {
            "category": record.category,
            "exit_code": record.exit_code,
            "command_summary": record.summary,
            "files_touched": record.files,
            "stdout_tail": record.stdout_tail,
            "stderr_tail": record.stderr_tail,
            "event_id": event_id,
            "occurrences": 1,
        }
        self._conn.execute(
            "INSERT INTO episodes(id, session_id, scope_key, kind, summary, target, metadata_json, created_at) "
            "VALUES (?,?,?,?,?,?,?,?)",
            (
                episode_id,
                session_id,
                scope_key,
                "command_failure",
                base,
                record.files[0] if record.files else None,
                json.dumps(meta),
                now,
            ),
        )
        self._held[key] = _Failure(episode_id, base, meta, now)
        return episode_id

    def _latest(self, session_id: str, base: str) -> _Failure | None:
        """The session's newest episode of this failure as stored: `base` itself or `base (seen Nx)`."""
        # Within the range from `base` to the last `base (seen …`, which SQLite walks on episodes_failure, it is
        # `base` itself or a summary from `base (seen ` on.
        seen = base + " (seen "
        row = self._conn.execute(
            "SELECT id, metadata_json, created_at FROM episodes WHERE session_id=? AND kind='command_failure' "
            "AND summary >= ? AND summary < ? AND (summary=? OR "
            "summary >= ?) ORDER BY created_at DESC, rowid DESC LIMIT 1",
            (session_id, base, seen + "\uffff", base, seen),
        ).fetchone()
        if row is None:
            return None
        return _Failure(row["id"], base, json.loads(row["metadata_json"] or "{}"), row["created_at"])

    def write(self) -> None:
        """Store every episode the batch bumped, as it now stands."""
        for held in self._held.values():
            self._store(held)

    def _store(self, held: _Failure) -> None:
        if held.bumped:
            self._conn.execute(
                "UPDATE episodes SET summary=?, metadata_json=?, created_at=? WHERE id=?",
                (f"{held.base} (seen {held.meta['occurrences']}x)", json.dumps(held.meta), held.created_at, held.id),
            )
