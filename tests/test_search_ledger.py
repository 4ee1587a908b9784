"""The search ledger: a zero-result Grep is remembered only when proven, and only while the tree is unchanged."""

from __future__ import annotations

import json

import pytest

from cortex_engine.capture.flush import SPOOL, runtime_dir
from cortex_engine.engine import Engine

from .conftest import Repo


def grep(
    repo: Repo, pattern: str, *, t: float = 1785700000, tool_use: str = "g1", zero: bool = True, **extra: object
) -> dict:
    """A spool entry for a Grep PostToolUse."""
    response = {
        "mode": "files_with_matches",
        "numFiles": 0 if zero else 2,
        "filenames": [] if zero else ["a.py", "b.py"],
    }
    payload = {
        "session_id": "h",
        "cwd": str(repo.path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Grep",
        "tool_use_id": tool_use,
        "tool_input": {"pattern": pattern, **extra},
        "tool_response": response,
    }
    return {"v": 1, "t": t, "p": payload}


def edit(repo: Repo, rel: str, *, t: float) -> dict:
    """A spool entry for an Edit."""
    return {
        "v": 1,
        "t": t,
        "p": {
            "session_id": "h",
            "cwd": str(repo.path),
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_use_id": f"e{t}",
            "tool_input": {"file_path": str(repo.path / rel)},
        },
    }


@pytest.fixture
def live(repo: Repo, make_engine) -> Engine:
    """An engaged worktree with a few files."""
    repo.write("src/a.py", "def alpha():\n    return 1\n")
    repo.write("src/b.py", "BETA = 2\n")
    repo.commit("files")
    engine = make_engine(repo.path)
    engine.start_session("h")
    return engine


def spool(repo: Repo, *entries: dict) -> None:
    (runtime_dir(repo.path) / SPOOL).write_text("".join(json.dumps(e) + "\n" for e in entries))


def verdict(engine: Engine, **query: object) -> str:
    return engine.search_ledger([query])[0].verdict


def test_proven_empty_search_is_remembered_until_the_tree_changes(live: Engine, repo: Repo) -> None:
    """no-matches-at while every covered byte is the same; a miss as soon as anything under the root changes."""
    spool(repo, grep(repo, "deriveReadKey", path="src"))
    live.flush_spool()
    line = live.search_ledger([{"pattern": "deriveReadKey", "path": "src"}])[0].line()
    assert line.startswith("deriveReadKey: no-matches-at ")
    assert verdict(live, pattern="deriveReadKey", path=str(repo.path / "src")) == "no-matches-at"
    repo.write("src/c.py", "x = 1\n")
    assert verdict(live, pattern="deriveReadKey", path="src") == "miss"


def test_same_size_content_change_is_a_miss(live: Engine, repo: Repo) -> None:
    """The census hashes content, so an edit that keeps the size (and even the mtime) still counts."""
    spool(repo, grep(repo, "deriveReadKey"))
    live.flush_spool()
    (repo.path / "src/b.py").write_text("BETA = 3\n")
    assert verdict(live, pattern="deriveReadKey") == "miss"


def test_a_later_edit_in_the_turn_prevents_certification(live: Engine, repo: Repo) -> None:
    """A search followed in its batch by an edit proves nothing about the tree that results."""
    spool(repo, grep(repo, "deriveReadKey", t=1785700000), edit(repo, "src/a.py", t=1785700001))
    live.flush_spool()
    assert verdict(live, pattern="deriveReadKey") == "miss"


def test_a_zero_claim_the_tree_contradicts_is_not_recorded(live: Engine, repo: Repo) -> None:
    """Cortex re-runs the search at flush; a payload that says zero while the bytes match is not believed."""
    spool(repo, grep(repo, "alpha"))
    live.flush_spool()
    assert verdict(live, pattern="alpha") == "miss"


@pytest.mark.parametrize(
    ("pattern", "extra"),
    [(r"\w+Key", {}), ("-foo", {}), ("derive", {"glob": "**/[a-z]*.py"}), ("derive", {"type": "brainfuck"})],
)
def test_uncertifiable_queries_are_never_recorded(live: Engine, repo: Repo, pattern: str, extra: dict) -> None:
    """Regex syntax, flag-like patterns, odd globs and unknown types resolve to a miss."""
    spool(repo, grep(repo, pattern, **extra))
    live.flush_spool()
    assert verdict(live, pattern=pattern, **extra) == "miss"


def test_nonzero_results_and_unknown_queries_are_misses(live: Engine, repo: Repo) -> None:
    """Only a proven zero is recorded; a query never seen is a miss."""
    spool(repo, grep(repo, "BETA", zero=False))
    live.flush_spool()
    assert verdict(live, pattern="BETA") == "miss"
    assert verdict(live, pattern="neverSearched") == "miss"
    assert verdict(live, pattern="") == "miss"


def test_parameters_are_part_of_the_key(live: Engine, repo: Repo) -> None:
    """The same pattern with another glob or case mode is a different question."""
    spool(repo, grep(repo, "deriveReadKey", glob="*.py"))
    live.flush_spool()
    assert verdict(live, pattern="deriveReadKey", glob="*.py") == "no-matches-at"
    assert verdict(live, pattern="deriveReadKey") == "miss"
    assert verdict(live, pattern="deriveReadKey", glob="*.py", case_insensitive=True) == "miss"


def test_cli_search_ledger_json(live: Engine, repo: Repo) -> None:
    """`cortex search-ledger PATTERN --json` reports the verdict."""
    from .conftest import run_in_process

    spool(repo, grep(repo, "deriveReadKey", path="src"))
    live.flush_spool()
    done = run_in_process(repo.path, ["search-ledger", "deriveReadKey", "--path", "src", "--json"])
    assert done.code == 0, done.err
    assert json.loads(done.out)["results"][0]["verdict"] == "no-matches-at"
