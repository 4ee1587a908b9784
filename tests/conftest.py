"""Shared fixtures: a temp HOME/CORTEX_HOME for every test, real git repositories, a fixed clock."""

from __future__ import annotations

import gc
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from hypothesis import settings as hypothesis_settings

from cortex_engine.engine import Engine

if TYPE_CHECKING:  # the MCP SDK costs about a CPU-second to import: only the tests that start a server load it
    from anyio.from_thread import BlockingPortal
    from mcp import ClientSession

T = TypeVar("T")

NOW = datetime(2026, 8, 2, 18, 0, tzinfo=UTC)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


DEEP_EXAMPLES = 100
"""Hypothesis's own default example count: under the deep profile every property runs the count it names."""
hypothesis_settings.register_profile("deep", max_examples=DEEP_EXAMPLES)
hypothesis_settings.register_profile("suite", max_examples=DEEP_EXAMPLES // 5)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))
"""The suite's default profile runs a fifth of each property's examples (the suite has a CPU budget);
`HYPOTHESIS_PROFILE=deep python -m pytest tests/reliability tests/security` runs the full counts (nightly, bench)."""


def deep_profile() -> bool:
    """Whether the deep profile is loaded: stress tests then run their full counts, the suite's default fewer."""
    return hypothesis_settings().max_examples >= DEEP_EXAMPLES


def examples(deep: int) -> int:
    """A property's example count under the loaded profile: `deep` under the deep profile, a fifth by default."""
    return max(1, deep * hypothesis_settings().max_examples // DEEP_EXAMPLES)


GC_THRESHOLD = (20_000, 10, 10)
"""The cyclic collector's thresholds in a test process. The suite builds and drops Textual screens, engines and
stores by the thousand over a heap of every imported library; under CPython's default (700, 10, 10) the collector
ran ~7,400 times in three TUI files and took a quarter of their CPU (11.3 of 43 CPU-seconds), under this one 4."""
gc.set_threshold(*GC_THRESHOLD)


@pytest.hookimpl(trylast=True)  # after the session's fixtures are torn down
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Collect the run's garbage, then freeze what is left, before a worker reports that it has finished.

    pytest collects five times more at exit, to surface what finalizers raise; over a worker's heap each full
    collection took 0.3 to 1 second, so a worker still collected 3 to 6 seconds after reporting. After 5 seconds
    the controller's shutdown sends it SIGINT, which landed in a collector callback as a `KeyboardInterrupt` warning
    at the end of a passing run. Collected here, while pytest still reports what finalizers raise, the exit's
    collections find nothing to walk.
    """
    gc.collect()
    gc.collect()
    gc.freeze()


HOOK_TOOLS = ("cat", "tr", "du", "mkdir", "date", "nohup")


def tool_path(directory: Path, tools: tuple[str, ...] = HOOK_TOOLS) -> str:
    """A PATH holding only `tools` (by default what the hooks may use: no jq, no python)."""
    if not directory.is_dir():
        directory.mkdir(parents=True)
        for tool in tools:
            found = shutil.which(tool)
            assert found, tool
            (directory / tool).symlink_to(found)
    return str(directory)


@dataclass(frozen=True)
class Run:
    """One finished `cortex` invocation (stdout and stderr decoded exactly, no newline translation)."""

    code: int
    out: str
    err: str

    def data(self) -> Any:
        """stdout parsed as JSON."""
        return json.loads(self.out)


def run_in_process(cwd: Path, argv: list[str], env: dict[str, str] | None = None, stdin: bytes = b"") -> Run:
    """`cortex argv` run by this process's interpreter in `cwd` with `env` added, `stdin` as its input and stdout/stderr
    captured as a subprocess's would be (UTF-8, no newline translation); the directory, the environment and the
    standard streams are put back afterwards. An exception the CLI lets escape fails the test where it is raised."""
    from cortex_engine.adapters import cli

    saved_env = {key: os.environ.get(key) for key in (env or {})}
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_cwd, saved_argv = os.getcwd(), sys.argv
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace", newline="\n", write_through=True)
    try:
        os.environ.update(env or {})
        os.chdir(cwd)
        sys.argv = [str(cli.__file__), *argv]  # what `python -m cortex_engine.adapters.cli` sees as its program
        sys.stdin, sys.stdout, sys.stderr = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"), out, err
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        out.flush()
        err.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    body = out.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
    return Run(code, body, err.buffer.getvalue().decode("utf-8"))  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own HOME and CORTEX_HOME; the real home is never touched. The working directory is put
    back when it ends: a test that leaves it in its `tmp_path` must not decide where the next one starts."""
    monkeypatch.chdir(Path.cwd())
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CORTEX_HOME", str(home / ".cortex"))
    monkeypatch.delenv("CORTEX_NOW", raising=False)
    # The sentence encoder (the semantic extra) runs only where a test turns it on (tests/test_semantic.py): no
    # server or detached flush a test starts spends CPU embedding in the background.
    monkeypatch.setenv("CORTEX_SEMANTIC", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)  # a suite run from an agent's shell still tests a person's CLI
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    # A `python -m cortex_engine...` a test starts imports this checkout, not whichever one is installed
    # (an editable install of another worktree would otherwise be what the subprocess tests run).
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return home


ROOT = Path(__file__).resolve().parent.parent


def cortex_bin(tmp_path: Path) -> Path:
    """An executable `cortex` that runs this checkout with this interpreter (what install bakes into the hooks)."""
    path = tmp_path / "bin" / "cortex"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m cortex_engine.adapters.cli "$@"\n')
        path.chmod(0o755)
    return path


@pytest.fixture
def bin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This checkout's `cortex`, first on PATH for the test: tests that run `cortex` by name (install's portable
    project scope, the benchmark) pass from a virtualenv that is not activated."""
    path = cortex_bin(tmp_path)
    monkeypatch.setenv("PATH", f"{path.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return path


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` and return its stdout."""
    done = subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    )
    return done.stdout


class Repo:
    """A real git repository under tmp_path with helpers to write, commit, move and delete files."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, rel: str, body: str = "x\n") -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
        return target

    def commit(self, message: str = "change") -> None:
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)

    def git(self, *args: str) -> str:
        return git(self.path, *args)


@pytest.fixture(scope="session")
def repo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository on branch main with one commit (README.md), made once per test process under a home of its
    own (no user's git config applies); each test's `repo` is a copy: copying costs about a quarter of `git init`,
    `git add` and `git commit`, and the suite starts a repository for most of its tests."""
    base = tmp_path_factory.mktemp("repo-template")
    (base / "home").mkdir()
    path = base / "repo"
    path.mkdir()
    env = {**os.environ, **GIT_ENV, "HOME": str(base / "home")}
    (path / "README.md").write_text("# test\n", encoding="utf-8")
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "--allow-empty", "-m", "init")):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True, env=env)
    # git's sample hooks (never run: each ends in .sample) and its description file are half of what each test
    # would copy; the folders themselves stay.
    for sample in [*(path / ".git" / "hooks").glob("*.sample"), path / ".git" / "description"]:
        sample.unlink()
    return path


@pytest.fixture
def repo(tmp_path: Path, repo_template: Path) -> Repo:
    """A git repository on branch main with one commit (a copy of `repo_template`)."""
    path = tmp_path / "repo"
    shutil.copytree(repo_template, path, symlinks=True)
    return Repo(path)


class Clock:
    """A settable clock."""

    def __init__(self, start: datetime = NOW) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now = self.now + timedelta(**delta)


@pytest.fixture
def clock() -> Clock:
    """A fixed, advanceable clock starting at 2026-08-02 18:00Z."""
    return Clock()


@pytest.fixture
def make_engine(clock: Clock) -> Callable[..., Engine]:
    """Open engines on a directory with the shared clock; all are closed at teardown."""
    opened: list[Engine] = []

    def make(path: Path | str, **kw: object) -> Engine:
        engine = Engine(path, clock=kw.pop("clock", clock), **kw)  # type: ignore[arg-type]
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        engine.close()


@pytest.fixture
def engine(repo: Repo, make_engine: Callable[..., Engine]) -> Engine:
    """An engine on the `repo` fixture's main branch."""
    return make_engine(repo.path)


@pytest.fixture
def live(repo: Repo, make_engine: Callable[..., Engine]) -> Engine:
    """An engaged worktree with a started session (as SessionStart leaves it); a module may override it."""
    engine = make_engine(repo.path)
    engine.start_session("host-1")
    return engine


@dataclass
class Served:
    """One real `cortex serve` an SDK client session keeps open across the tests of a test process (the SDK's import
    costs each server about a CPU-second): the tests that share it start from a store where nothing of theirs exists
    yet (each writes its own subjects and reads the ledger rows it added) and do not depend on each other."""

    repo: Repo
    home: Path
    portal: BlockingPortal
    session: ClientSession
    stray: list[object] = field(default_factory=list)

    def run(self, script: Callable[[ClientSession], Awaitable[T]]) -> tuple[T, list[object]]:
        """`script`'s result on the open session, and everything so far on the server's stdout that was not a
        protocol message."""
        return self.portal.call(script, self.session), list(self.stray)


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory: pytest.TempPathFactory, repo_template: Path) -> Iterator[Served]:
    """A `cortex serve` started once in a repository and a home of its own, initialized by the SDK's client."""
    from anyio.from_thread import start_blocking_portal
    from mcp import ClientSession, StdioServerParameters, stdio_client

    base = tmp_path_factory.mktemp("shared-serve")
    home = base / "home"
    home.mkdir()
    path = base / "repo"
    shutil.copytree(repo_template, path, symlinks=True)
    stray: list[object] = []

    async def handler(message: object) -> None:
        if isinstance(message, Exception):
            stray.append(message)

    env = {"HOME": str(home), "CORTEX_HOME": str(home / ".cortex"), "CORTEX_NOW": "2026-08-02T18:00:00Z"}
    env["CORTEX_SEMANTIC"] = "0"  # a server that lives through many tests would embed their notes in the background
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "cortex_engine.adapters.cli", "serve"],
        cwd=str(path),
        env={**env, "PYTHONPATH": str(ROOT)},
    )
    with start_blocking_portal() as portal, (base / "serve.stderr").open("w") as errlog:
        with portal.wrap_async_context_manager(stdio_client(params, errlog=errlog)) as (read, write):
            session = portal.call(lambda: ClientSession(read, write, message_handler=handler))
            with portal.wrap_async_context_manager(session):
                portal.call(session.initialize)
                yield Served(Repo(path), home, portal, session, stray)


@pytest.fixture
def served(shared_server: Served, monkeypatch: pytest.MonkeyPatch) -> Served:
    """The shared server, with this test's HOME and CORTEX_HOME those it runs under (the CLI and the store's
    location read them)."""
    monkeypatch.setenv("HOME", str(shared_server.home))
    monkeypatch.setenv("CORTEX_HOME", str(shared_server.home / ".cortex"))
    return shared_server
