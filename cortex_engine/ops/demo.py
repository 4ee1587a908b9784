"""A seeded demo repository: real git history and a store filled through the engine's own paths.

`seed_demo()` builds a small service with two branches, a rename and a deletion, then plays six
Claude Code sessions against it the way the hooks would: spool lines flushed into the store,
notes written, a subagent dispatched and its conclusion kept, surfaces read and booked. The
result carries everything the operator view shows: a contested pair, a superseded decision,
stale and moved references, failures, a subagent conclusion and per-session token spend.

Everything is relative to the engine clock (`CORTEX_NOW` pins it), git dates are pinned to the same
clock, and the ids the engine draws while seeding come from a generator seeded by that clock, so two
runs with the same `CORTEX_NOW` produce the same repository and the same store.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from cortex_engine.base.clock import Clock, clock_from_env
from cortex_engine.base.ids import seeded as seeded_ids
from cortex_engine.capture.flush import SPOOL, open_runtime, runtime_dir
from cortex_engine.engine import Engine
from cortex_engine.scope.identity import GitLocation, cortex_home, store_identity

MARKER = ".cortex-demo"
FEATURE_BRANCH = "feature/oidc-login"

FILES = {
    "README.md": "# demo service\n\nA queue-backed service used by `cortex demo`.\n",
    "src/db/store.py": "def open_store(path):\n    return path\n",
    "src/capture/spool.py": "SPOOL = '.cortex/spool.jsonl'\n\n\ndef flush():\n    return 0\n",
    "src/auth/login_old.py": "def login(user):\n    return sign(user)\n",
    "src/query/recall.py": "def recall(topic):\n    return []\n",
    "src/queue/broker.py": "BROKER = 'rabbitmq'\n",
    "tests/test_store.py": "def test_open():\n    assert True\n",
    "tests/test_queue.py": "def test_broker():\n    assert True\n",
    "tests/test_spool.py": "def test_flush():\n    assert True\n",
}


def _git(repo: Path, *args: str, at: datetime | None = None) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Cortex Demo",
        "GIT_AUTHOR_EMAIL": "demo@example.invalid",
        "GIT_COMMITTER_NAME": "Cortex Demo",
        "GIT_COMMITTER_EMAIL": "demo@example.invalid",
    }
    if at is not None:
        stamp = at.strftime("%Y-%m-%dT%H:%M:%S+0000")
        env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


def _write(repo: Path, rel: str, body: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")


class _Player:
    """Plays sessions against the demo store through the engine's own paths (spool, notes, surfaces)."""

    def __init__(self, repo: Path, now: datetime) -> None:
        self.repo = repo
        self.now = now
        self.tool_use = 0

    def at(self, days: float) -> datetime:
        """The demo time `days` before now."""
        return self.now - timedelta(days=days)

    @contextmanager
    def engine(self, days: float) -> Iterator[Engine]:
        """An engine whose clock reads `days` before now."""
        stamp = self.at(days)
        clock: Clock = lambda: stamp  # noqa: E731 - a fixed point in the demo's past
        with Engine(self.repo, clock=clock) as engine:
            yield engine

    def spool(self, host: str, days: float, payloads: list[dict[str, object]]) -> None:
        """Append hook payloads to the worktree spool as the capture hook does, one minute apart."""
        start = self.at(days).timestamp()
        lines = []
        for n, payload in enumerate(payloads):
            self.tool_use += 1
            body = {
                "session_id": host,
                "cwd": str(self.repo),
                "hook_event_name": "PostToolUse",
                "tool_use_id": f"demo-{self.tool_use}",
                **payload,
            }
            lines.append(json.dumps({"v": 1, "t": int(start + 60 * n), "p": body}))
        with open_runtime(runtime_dir(self.repo)) as rt:
            rt.append(SPOOL, ("\n".join(lines) + "\n").encode("utf-8"))

    def read(self, rel: str, **extra: object) -> dict[str, object]:
        """A Read payload returning the file's current content."""
        path = self.repo / rel
        body = path.read_text(encoding="utf-8") if path.exists() else ""
        count = body.count("\n")
        return {
            "tool_name": "Read",
            "tool_input": {"file_path": str(path)},
            "tool_response": {
                "type": "text",
                "file": {
                    "filePath": str(path),
                    "content": body,
                    "numLines": count,
                    "startLine": 1,
                    "totalLines": count,
                },
            },
            **extra,
        }

    def edit(self, rel: str) -> dict[str, object]:
        """An Edit payload."""
        return {"tool_name": "Edit", "tool_input": {"file_path": str(self.repo / rel)}}

    def bash(self, command: str, *, exit_code: int = 0, stderr: str = "") -> dict[str, object]:
        """A Bash payload: success, or a PostToolUseFailure carrying the exit status."""
        if exit_code:
            return {
                "tool_name": "Bash",
                "hook_event_name": "PostToolUseFailure",
                "tool_input": {"command": command},
                "error": f"{stderr}\nCommand exited with non-zero status code {exit_code}".strip(),
                "is_interrupt": False,
            }
        return {
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False},
        }


def demo_target(directory: str | None = None) -> tuple[Path, Path]:
    """(the demo repository, its store directory): where `seed_demo` will write."""
    repo = Path(directory) if directory else cortex_home() / "demo" / "demo-service"
    repo = repo.expanduser().resolve()
    git = str(repo / ".git")  # the repository `seed_demo` initialises: its own common dir keys the store
    return repo, store_identity(str(repo), loc=GitLocation(str(repo), git, git)).store_dir


def seed_demo(directory: str | None = None) -> Path:
    """Create (or re-create) the demo repository and its store; returns the repository path.

    Raises:
        Refused: `directory` exists and was not made by `cortex demo`.
    """
    repo, _ = demo_target(directory)
    if repo.exists():
        if not (repo / MARKER).exists():
            from cortex_engine.base.errors import Refused

            raise Refused(f"{repo} exists and is not a Cortex demo; choose another --dir", code="demo_dir_taken")
        store_dir = store_identity(str(repo)).store_dir
        shutil.rmtree(store_dir, ignore_errors=True)
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    now = clock_from_env()()
    with seeded_ids(int(now.timestamp())):  # deterministic demo ids
        _history_and_sessions(_Player(repo, now))
    return repo


def _history_and_sessions(p: _Player) -> None:
    """Six weeks of work on main and a feature branch, as the hooks and the agent would have recorded it."""
    repo = p.repo
    for rel, body in FILES.items():
        _write(repo, rel, body)
    (repo / MARKER).write_text("created by `cortex demo`; safe to delete\n", encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "initial layout", at=p.at(45))

    # Session 1 (40 days ago): the first queue decision, a passing test run.
    with p.engine(40) as engine:
        engine.start_session("demo-host-1")
        engine.session_brief()
        p.spool(
            "demo-host-1",
            40,
            [
                p.read("src/queue/broker.py"),
                p.edit("src/queue/broker.py"),
                p.bash("python -m pytest tests/test_queue.py"),
            ],
        )
        engine.flush_spool()
        engine.note("decision", "use rabbitmq for the queue engine", "queue engine")
        engine.state()

    # Session 2 (9 days ago): kafka supersedes rabbitmq; a failing test run, then a brief and a recall.
    _write(repo, "src/queue/broker.py", "BROKER = 'kafka'\n")
    _git(repo, "commit", "-q", "-am", "switch the broker to kafka", at=p.at(9.5))
    with p.engine(9) as engine:
        engine.start_session("demo-host-2")
        engine.session_brief()
        engine.recall("queue engine")
        p.spool(
            "demo-host-2",
            9,
            [
                p.read("src/queue/broker.py"),
                p.read("tests/test_queue.py"),
                p.bash(
                    "python -m pytest tests/test_queue.py",
                    exit_code=1,
                    stderr="E   AssertionError: broker not reachable",
                ),
            ],
        )
        engine.flush_spool()
        engine.note("decision", "use kafka for the queue engine", "queue engine")
        engine.brief("queue engine")

    # A feature branch (8 days ago) with its own memory: the "all scopes" view shows it.
    _git(repo, "checkout", "-q", "-b", FEATURE_BRANCH)
    _write(repo, "src/auth/oidc.py", "def client():\n    return 'authlib'\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "sketch the OIDC client", at=p.at(8.2))
    with p.engine(8) as engine:
        engine.start_session("demo-host-3")
        engine.session_brief()
        p.spool("demo-host-3", 8, [p.read("src/auth/oidc.py"), p.edit("src/auth/oidc.py")])
        engine.flush_spool()
        engine.note("decision", "use authlib for the OIDC client in src/auth/oidc.py", "oidc client")
        engine.note("intent", "wire the OIDC callback before the login rename lands", "oidc callback")
        engine.state()
    _git(repo, "checkout", "-q", "main")

    # Session 4 (6 to 4 days ago): the spool policy, auth, a blocker, an insight, and a subagent.
    with p.engine(6) as engine:
        engine.start_session("demo-host-4")
        engine.session_brief()
        p.spool(
            "demo-host-4",
            6,
            [
                p.read("src/capture/spool.py"),
                p.read("src/auth/login_old.py"),
                p.read("src/query/recall.py"),
                p.bash("git status"),
            ],
        )
        engine.flush_spool()
        engine.note("decision", "flush the spool at turn end from src/capture/spool.py", "spool flush policy")
    with p.engine(5) as engine:
        engine.note(
            "decision",
            "use OIDC with server-side sessions",
            "auth strategy",
            ["session cookies (no SSO path)", "JWT-in-localStorage (XSS surface)"],
        )
        engine.dispatch_pre(
            {
                "session_id": "demo-host-4",
                "tool_use_id": "demo-agent-1",
                "tool_input": {
                    "description": "survey the auth login path",
                    "subagent_type": "Explore",
                    "prompt": "Find where tokens are signed in the login path and report what still uses the old key.",
                },
            },
        )
        engine.subagent_start({"session_id": "demo-host-4", "agent_id": "demo-agent-1", "agent_type": "Explore"})
        p.spool(
            "demo-host-4",
            5,
            [
                p.read("src/auth/login_old.py", agent_id="demo-agent-1", agent_type="Explore"),
                p.read("src/db/store.py", agent_id="demo-agent-1", agent_type="Explore"),
            ],
        )
        engine.subagent_stop(  # flushes the subagent's reads first, as the SubagentStop hook does
            {
                "session_id": "demo-host-4",
                "agent_id": "demo-agent-1",
                "last_assistant_message": (
                    "Tokens are signed in src/auth/login_old.py with the legacy HMAC key; nothing else signs. "
                    "Blocked until the key rotation lands: the new key is missing from the deployment config."
                ),
            },
        )
    with p.engine(4) as engine:
        engine.note("blocker", "src/auth/login_old.py still signs tokens with the old key", "legacy login")
        engine.note("insight", "the recall ranking in src/query/recall.py weights subjects over text")
        engine.recall("login tokens")

    # Three days ago: the login module is renamed and the old recall module deleted.
    _git(repo, "mv", "src/auth/login_old.py", "src/auth/login.py")
    _git(repo, "rm", "-q", "src/query/recall.py")
    _git(repo, "commit", "-q", "-m", "rename login, drop the old recall", at=p.at(3))

    # Session 5 (2 days ago): the opposite spool decision (a contest), and a test that keeps failing.
    with p.engine(2) as engine:
        engine.start_session("demo-host-5")
        engine.session_brief()
        p.spool(
            "demo-host-5",
            2,
            [
                p.read("src/capture/spool.py"),
                p.edit("src/capture/spool.py"),
                p.bash("python -m pytest tests/test_spool.py", exit_code=1, stderr="E   assert flush() == 3"),
                p.edit("src/capture/spool.py"),
                p.bash("python -m pytest tests/test_spool.py", exit_code=1, stderr="E   assert flush() == 3"),
            ],
        )
        engine.flush_spool()
        engine.note("decision", "do not flush the spool at turn end", "spool flush policy")
        engine.recall("spool flush policy")
        engine.state()
    with p.engine(1) as engine:
        engine.note("intent", "move the read queries out of src/db/store.py into a queries module", "store reads")

    # The current session (started 25 minutes ago, still active): the SessionStart brief and a first recall.
    with p.engine(25 / 1440) as engine:
        session = engine.start_session("demo-host-6")
        engine.session_brief()
        engine.consult_hint("continue fixing the spool failure", session)
        engine.whisper("edit", "src/capture/spool.py", session)
        engine.whisper("cmd", "python -m pytest tests/test_spool.py", session)
        p.spool(
            "demo-host-6",
            25 / 1440,
            [p.read("src/capture/spool.py"), p.read("src/db/store.py"), p.bash("python -m pytest tests/test_store.py")],
        )
        engine.flush_spool()
        engine.recall("spool flush")
    with p.engine(0) as engine:
        engine.refresh()
