"""A seeded demo repository: real git history, a contest, a superseded decision, stale and moved references."""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

from .clock import clock_from_env
from .engine import Engine
from .scope import cortex_home, store_identity

MARKER = ".cortex-demo"

FILES = {
    "src/db/store.py": "def open_store():\n    return None\n",
    "src/capture/spool.py": "SPOOL = '.cortex/spool.jsonl'\n",
    "src/auth/login_old.py": "def login():\n    pass\n",
    "src/query/recall.py": "def recall(topic):\n    return []\n",
    "README.md": "# demo service\n",
}


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Cortex Demo", "GIT_AUTHOR_EMAIL": "demo@example.invalid",
           "GIT_COMMITTER_NAME": "Cortex Demo", "GIT_COMMITTER_EMAIL": "demo@example.invalid"}
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


def seed_demo(directory: str | None = None) -> Path:
    """Create (or re-create) the demo repository and its store; returns the repository path."""
    repo = Path(directory) if directory else cortex_home() / "demo" / "demo-service"
    repo = repo.expanduser().resolve()
    if repo.exists():
        if not (repo / MARKER).exists():
            from .errors import Refused

            raise Refused(f"{repo} exists and is not a Cortex demo; choose another --dir", code="demo_dir_taken")
        store_dir = store_identity(str(repo)).store_dir
        shutil.rmtree(store_dir, ignore_errors=True)
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    for rel, body in FILES.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    (repo / MARKER).write_text("created by `cortex demo`; safe to delete\n", encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "initial layout")

    now = clock_from_env()()

    def at(days_ago: float) -> Engine:
        return Engine(repo, clock=lambda: now - timedelta(days=days_ago))

    notes = [
        (40, "decision", "queue engine", "use rabbitmq for the queue engine", None),
        (9, "decision", "queue engine", "use kafka for the queue engine", None),
        (6, "decision", "spool flush policy", "flush the spool at turn end from src/capture/spool.py", None),
        (2, "decision", "spool flush policy", "do not flush the spool at turn end", None),
        (5, "decision", "auth strategy", "use OIDC with server-side sessions",
         ["session cookies (no SSO path)", "JWT-in-localStorage (XSS surface)"]),
        (4, "blocker", "legacy login", "src/auth/login_old.py still signs tokens with the old key", None),
        (3, "insight", None, "the recall ranking in src/query/recall.py weights subjects over text", None),
        (1, "intent", "store reads", "move the read queries out of src/db/store.py into src/db/queries.py", None),
    ]
    for days, kind, subject, text, alternatives in notes:
        with at(days) as engine:
            engine.note(kind, text, subject, alternatives)
    _git(repo, "mv", "src/auth/login_old.py", "src/auth/login.py")
    _git(repo, "rm", "-q", "src/query/recall.py")
    _git(repo, "commit", "-q", "-m", "rename login, drop the old recall")
    with at(0) as engine:
        engine.refresh()
    return repo
