"""Deterministic synthetic stores for the benchmarks: a real git repository, several branches, realistic memory.

Everything is derived from a seeded random generator, so the same tier always builds the same store.
Notes go through `Engine.note` (contests, supersession, references: the real write path); command runs,
failures and test cycles go through a real spool flush.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cortex_engine.capture.flush import SPOOL, runtime_dir
from cortex_engine.engine import Engine

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}

AREAS = (
    "auth",
    "billing",
    "capture",
    "db",
    "query",
    "render",
    "spool",
    "ledger",
    "search",
    "hooks",
    "api",
    "cli",
    "config",
    "gateway",
    "cache",
    "scheduler",
    "metrics",
    "notifications",
    "export",
    "sync",
)
MODULES = (
    "store",
    "reader",
    "writer",
    "client",
    "server",
    "handler",
    "parser",
    "planner",
    "index",
    "policy",
    "router",
    "session",
    "token",
    "queue",
    "worker",
    "schema",
    "migrate",
    "report",
    "loader",
    "codec",
    "limits",
    "retry",
)
TECH = (
    "kafka",
    "rabbitmq",
    "nats",
    "postgres",
    "sqlite",
    "redis",
    "oidc",
    "jwt",
    "grpc",
    "protobuf",
    "msgpack",
    "zstd",
    "lz4",
    "fts5",
    "bm25",
    "tantivy",
    "celery",
    "asyncio",
    "trio",
    "uvloop",
    "pydantic",
    "attrs",
)
VERBS = (
    "flush",
    "cache",
    "retry",
    "batch",
    "shard",
    "index",
    "stream",
    "validate",
    "compress",
    "encrypt",
    "pin",
    "throttle",
    "dedupe",
    "snapshot",
    "rotate",
    "prefetch",
    "memoize",
    "serialize",
    "paginate",
    "debounce",
)
REASONS = (
    "the p95 latency doubled under load",
    "the old client leaked sockets",
    "it keeps writes idempotent",
    "replays must not book twice",
    "the schema has to migrate forward only",
    "hooks must stay under 5 ms",
    "the budget is spent, not advised",
    "contests must be seated together",
    "mtime cannot be trusted",
    "renames must resolve through git",
    "tokens must never be stored unredacted",
    "a miss is cheaper than a lie",
)
CONDITIONS = (
    "the spool passes 256 KiB",
    "two worktrees flush at once",
    "the index is rebuilt",
    "a branch is switched",
    "the session restarts",
    "a subagent dispatches",
    "the WAL grows past its bound",
    "HEAD is detached",
)


@dataclass(frozen=True)
class Built:
    """A synthetic store: where it is and what went in."""

    repo: Path
    home: Path
    worktrees: tuple[Path, ...]
    files: tuple[str, ...]
    notes: int
    commands: int


def git(repo: Path, *args: str) -> None:
    """Run git quietly with a fixed identity."""
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def make_repo(root: Path, files: int, rng: random.Random) -> tuple[Path, list[str]]:
    """A real git repository with `files` files across plausible folders, committed on main."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    paths = []
    for n in range(files):
        area = AREAS[n % len(AREAS)]
        module = MODULES[(n // len(AREAS)) % len(MODULES)]
        folder = rng.choice(("src", "src", "src", "tests", "docs", "lib"))
        ext = {"docs": ".md", "tests": ".py"}.get(folder, rng.choice((".py", ".py", ".ts", ".sql", ".toml")))
        rel = f"{folder}/{area}/{module}_{n}{ext}"
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"# {area} {module} {n}\n" + "x = 1\n" * rng.randint(1, 30))
        paths.append(rel)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "synthetic tree")
    return repo, paths


def note_text(kind: str, rng: random.Random, files: list[str]) -> tuple[str, str | None]:
    """A realistic note of `kind` and its subject."""
    area, module, tech, verb = rng.choice(AREAS), rng.choice(MODULES), rng.choice(TECH), rng.choice(VERBS)
    file = rng.choice(files)
    subject = f"{area} {module} {rng.randint(0, 59)}"
    if kind == "decision":
        text = rng.choice(
            (
                f"use {tech} for the {area} {module} because {rng.choice(REASONS)}",
                f"do not {verb} the {area} {module} when {rng.choice(CONDITIONS)}",
                f"keep the {area} {module} in {file} and {verb} it at turn end",
            )
        )
    elif kind == "insight":
        text = f"the {area} {module} in {file} {verb}es requests when {rng.choice(CONDITIONS)}"
        subject = None
    elif kind == "blocker":
        text = f"{file} fails when {rng.choice(CONDITIONS)}; the {module} cannot {verb} until {tech} is upgraded"
    elif kind == "intent":
        text = f"move the {verb} logic of {file} behind the {area} {module} interface"
    else:
        text = f"working on the {area} {module}: {verb} with {tech}"
    return text, subject


KIND_MIX = ("decision",) * 4 + ("insight",) * 3 + ("blocker",) * 2 + ("intent", "focus")


def spool_lines(repo: Path, rng: random.Random, count: int, files: list[str], *, start: float) -> list[str]:
    """`count` capture lines: reads, edits, and test runs that fail then pass (real hook payload shapes)."""
    lines = []
    for n in range(count):
        t = start + n
        roll = rng.random()
        file = str(repo / rng.choice(files))
        base = {
            "session_id": "bench-host",
            "cwd": str(repo),
            "hook_event_name": "PostToolUse",
            "tool_use_id": f"tu-{start}-{n}",
        }
        if roll < 0.45:
            payload = {**base, "tool_name": "Read", "tool_input": {"file_path": file}}
        elif roll < 0.7:
            payload = {**base, "tool_name": "Edit", "tool_input": {"file_path": file}}
        elif roll < 0.85:
            target = rng.choice([f for f in files if f.startswith("tests/")] or files)
            payload = {
                **base,
                "hook_event_name": "PostToolUseFailure",
                "tool_name": "Bash",
                "tool_input": {"command": f"python -m pytest {target}"},
                "error": "Command exited with non-zero status code 1",
                "is_interrupt": False,
            }
        else:
            payload = {
                **base,
                "tool_name": "Bash",
                "tool_input": {"command": rng.choice(("git status", "ls src", "python -m pytest -q"))},
                "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False},
            }
        lines.append(json.dumps({"v": 1, "t": t, "p": payload}))
    return lines


def build(root: Path, items: int, *, files: int = 3000, seed: int = 7) -> Built:
    """Build a store of about `items` memory items over a repository of `files` files and three branches."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    home = root / "home"
    repo, paths = make_repo(root, files, rng)
    worktrees = []
    for branch in ("feature/a", "feature/b"):
        wt = root / branch.replace("/", "-")
        git(repo, "worktree", "add", "-q", "-b", branch, str(wt))
        worktrees.append(wt)
    places = [repo] * 7 + worktrees * 1 + [worktrees[0]] * 1 + [worktrees[1]] * 1
    command_lines = max(50, items // 8)
    note_count = items - command_lines * 2  # each failing command is ~two items (run + episode)
    engines = {place: Engine(place, home=home, clock=lambda: NOW) for place in set(places)}
    for place, engine in engines.items():
        engine.start_session(f"bench-{place.name}")
    for n in range(max(0, note_count)):
        place = places[n % len(places)]
        engine = engines[place]
        age = timedelta(minutes=(note_count - n) * 3)
        engine.clock = lambda age=age: NOW - age
        kind = KIND_MIX[rng.randrange(len(KIND_MIX))]
        text, subject = note_text(kind, rng, paths)
        engine.note(kind, text, subject)
    main = engines[repo]
    main.clock = lambda: NOW
    spool = runtime_dir(repo) / SPOOL
    spool.write_text(
        "\n".join(spool_lines(repo, rng, command_lines, paths, start=NOW.timestamp() - command_lines)) + "\n"
    )
    main.flush_spool(turn_end=True)
    for engine in engines.values():
        engine.close()
    # Change the checkout after the memory was written: a rename and a deletion give moved and stale labels.
    git(repo, "mv", paths[0], paths[0].replace(".", "_moved.", 1))
    git(repo, "rm", "-q", paths[1])
    git(repo, "commit", "-q", "-m", "rename and delete")
    return Built(repo, home, tuple(worktrees), tuple(paths), note_count, command_lines)
