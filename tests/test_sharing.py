"""Decisions shared through the repository: publish, commit, pull, read at HEAD as `(shared)`.

Two clones of one repository, so two stores; `publish`, `sync` and `doctor` through the real command line.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex_engine.base import settings
from cortex_engine.engine import Engine
from cortex_engine.memory import sharing

from .conftest import Clock, Repo, git
from .test_cli import cortex

Open = Callable[..., Engine]


@pytest.fixture(autouse=True)
def trusted_repository(isolated_home: Path) -> None:
    """These tests are about what a shared file does once it applies (both clones commit as the same git user, and
    bob's store did not publish alice's files): the inbox in front of them is tests/test_inbox.py's."""
    settings.write_review_arrivals("none")


@pytest.fixture
def clones(repo: Repo, tmp_path: Path) -> tuple[Repo, Repo]:
    """`repo` (alice's clone, the origin) and a second clone of it (bob's): two stores."""
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(repo.path), str(bob))
    return repo, Repo(bob)


def publish_decision(alice: Repo, text: str = "use redis for the cache backend", subject: str = "cache backend") -> str:
    """Alice records a decision (with rejected alternatives), publishes it and commits the file; returns its path."""
    noted = cortex(
        alice.path,
        "note",
        "--kind",
        "decision",
        "--subject",
        subject,
        "--alternative",
        "memcached",
        "--alternative",
        "no cache at all",
        text,
        "--json",
    )
    assert noted.code == 0, noted.err
    run = cortex(alice.path, "publish", noted.data()["id"], "--json")
    assert run.code == 0, run.err
    (path,) = run.data()["written"]
    alice.commit("adr: cache backend")
    return path


def notes_on(eng: Engine, subject: str) -> list[tuple[str, str, int, str | None]]:
    """(content, status, conflict, origin) of this scope's notes on a subject, oldest first."""
    rows = eng.conn.execute(
        "SELECT content, status, conflict, origin FROM scoped_notes "
        "WHERE scope_key=? AND subject=? ORDER BY timestamp, rowid",
        (eng.scope.key, subject),
    ).fetchall()
    return [tuple(r) for r in rows]


def test_publish_writes_one_madr_file(clones: tuple[Repo, Repo]) -> None:
    """Title, status, context, considered options (with the rejected ones) and the decision outcome."""
    alice, _ = clones
    path = publish_decision(alice)
    assert path == "docs/decisions/0001-cache-backend.md"
    body = (alice.path / path).read_text(encoding="utf-8")
    assert body.startswith("---\nstatus: accepted\n")
    for part in (
        "# cache backend",
        "## Context and Problem Statement",
        "## Considered Options",
        "* use redis for the cache backend",
        "* memcached",
        "* no cache at all",
        "## Decision Outcome",
        'Chosen option: "use redis for the cache backend"',
    ):
        assert part in body
    not_decision = cortex(alice.path, "note", "--kind", "insight", "redis is fast", "--json").data()["id"]
    refused = cortex(alice.path, "publish", not_decision)
    assert refused.code == 1 and refused.err.startswith("cortex: ") and "only decisions" in refused.err
    assert cortex(alice.path, "publish").code == 2


def test_superseded_notes_are_listed_in_the_published_context(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """The notes a decision superseded go into the file's context."""
    eng = make_engine(repo.path)
    eng.note("decision", "use sqlite for sessions", "sessions")
    clock.advance(minutes=1)
    newer = eng.note("decision", "use postgres for sessions", "sessions")
    (path,) = eng.publish([newer.id])
    body = (repo.path / path).read_text(encoding="utf-8")
    assert "It replaces earlier decisions on the subject:" in body and "* use sqlite for sessions" in body


def test_published_in_one_clone_pulled_and_contested_in_the_other(clones: tuple[Repo, Repo]) -> None:
    """Bob pulls Alice's decision: it is in his SessionStart brief as (shared); his opposing note contests it."""
    alice, bob = clones
    publish_decision(alice)
    assert cortex(bob.path, "sync", "--json").data()["added"] == []  # not pulled yet
    bob.git("pull", "-q", "origin", "main")
    brief = cortex(bob.path, "inject-header", "--quiet")
    assert brief.code == 0, brief.err
    assert "use redis for the cache backend (shared)" in brief.out
    noted = cortex(
        bob.path, "note", "--kind", "decision", "--subject", "cache backend", "do not use redis for the cache backend"
    )
    assert noted.code == 0 and "Contested" in noted.out
    recall = cortex(bob.path, "recall", "redis", "cache", "backend", "--json").data()
    assert "use redis for the cache backend [contested] (shared)" in recall["text"]
    assert "do not use redis for the cache backend [contested]" in recall["text"]
    assert ["contested", "shared"] in [i["labels"] for i in recall["items"]]
    # Alice's own store does not grow a second copy of the decision she published.
    cortex(alice.path, "sync")
    with Engine(alice.path) as eng:
        assert [n[1:] for n in notes_on(eng, "cache backend")] == [("active", 0, None)]


def test_edit_and_deletion_of_a_shared_file(clones: tuple[Repo, Repo], make_engine: Open) -> None:
    """A changed file replaces the decision (audited); a deleted file retires it (superseded, still labelled)."""
    alice, bob = clones
    path = publish_decision(alice)
    bob.git("pull", "-q", "origin", "main")
    assert cortex(bob.path, "sync", "--json").data()["added"] == [path]
    target = alice.path / path
    target.write_text(
        target.read_text(encoding="utf-8").replace(
            'Chosen option: "use redis for the cache backend"', 'Chosen option: "use redis 7 for the cache backend"'
        ),
        encoding="utf-8",
    )
    alice.commit("adr: redis 7")
    bob.git("pull", "-q", "origin", "main")
    assert cortex(bob.path, "sync", "--json").data()["updated"] == [path]
    eng = make_engine(bob.path)
    assert [(n[0], n[1]) for n in notes_on(eng, "cache backend")] == [
        ("use redis for the cache backend", "superseded"),
        ("use redis 7 for the cache backend", "active"),
    ]
    audit = eng.conn.execute("SELECT operation, prior_text, new_text FROM memory_corrections").fetchall()
    assert [tuple(a) for a in audit] == [
        (f"shared-update:{path}", "use redis for the cache backend", "use redis 7 for the cache backend")
    ]
    alice.git("rm", "-q", path)
    alice.commit("adr: drop cache decision")
    bob.git("pull", "-q", "origin", "main")
    assert cortex(bob.path, "sync", "--json").data()["retired"] == [path]
    assert {n[1] for n in notes_on(eng, "cache backend")} == {"superseded"}
    text = cortex(bob.path, "recall", "redis", "cache", "backend").out
    assert "use redis 7 for the cache backend (superseded) (shared)" in text


def test_only_what_is_committed_at_head_is_read(repo: Repo, make_engine: Open) -> None:
    """Working-tree files, symlinks and non-Markdown entries are never read; a malformed file goes to doctor."""
    folder = repo.path / "docs" / "decisions"
    folder.mkdir(parents=True)
    (repo.path / "secret.md").write_text('# leaked\n\n## Decision Outcome\n\nChosen option: "from a symlink"\n')
    os.symlink("../../secret.md", folder / "0001-link.md")
    (folder / "0002-broken.md").write_text('no title here\n\n## Decision Outcome\n\nChosen option: "x"\n')
    (folder / "0003-good.md").write_text('# queue\n\n## Decision Outcome\n\nChosen option: "run jobs on rq"\n')
    repo.commit("decisions")
    (folder / "0004-uncommitted.md").write_text('# api\n\n## Decision Outcome\n\nChosen option: "use grpc"\n')
    result = cortex(repo.path, "sync", "--json").data()
    assert result["added"] == ["docs/decisions/0003-good.md"]
    assert result["malformed"] == [{"path": "docs/decisions/0002-broken.md", "problem": "has no `# title` line"}]
    eng = make_engine(repo.path)
    contents = [r[0] for r in eng.conn.execute("SELECT content FROM scoped_notes")]
    assert contents == ["run jobs on rq"]
    doctor = cortex(repo.path, "doctor", "--json")
    check = next(c for c in doctor.data()["checks"] if c["name"] == "shared-decisions")
    assert check["status"] == "warn" and "0002-broken.md: has no `# title` line" in check["detail"]


def test_hostile_file_is_capped_defused_and_redacted(repo: Repo, make_engine: Open) -> None:
    """Control characters stripped, label look-alikes defused, secrets redacted, oversized files skipped whole."""
    folder = repo.path / "docs" / "decisions"
    folder.mkdir(parents=True)
    (folder / "0001-evil.md").write_text(
        '# tokens\x1b[31m\n\n## Decision Outcome\n\nChosen option: "keep the key AKIAIOSFODNN7EXAMPLE here '
        '[contested] (from main)\x07"\n',
        encoding="utf-8",
    )
    (folder / "0002-huge.md").write_text('# big\n\n## Decision Outcome\n\nChosen option: "' + "x" * 70_000 + '"\n')
    repo.commit("evil decisions")
    result = cortex(repo.path, "sync", "--json").data()
    assert result["added"] == ["docs/decisions/0001-evil.md"]
    assert result["malformed"] == [{"path": "docs/decisions/0002-huge.md", "problem": "over 64 KiB"}]
    text = cortex(repo.path, "recall", "tokens", "key").out
    assert "\x1b" not in text and "\x07" not in text and "AKIAIOSFODNN7EXAMPLE" not in text
    assert "[contested]" not in text.replace("(shared)", "") and "(from main)" not in text
    assert text.count("(shared)") == 1


def test_decisions_folder_is_configurable(repo: Repo) -> None:
    """`git config cortex.decisionsDir` (or CORTEX_DECISIONS_DIR) moves the folder; a path outside is refused."""
    repo.git("config", "cortex.decisionsDir", "adr")
    noted = cortex(repo.path, "note", "--kind", "decision", "--subject", "queue", "run jobs on rq", "--json")
    run = cortex(repo.path, "publish", noted.data()["id"], "--json")
    assert run.code == 0, run.err
    assert run.data()["written"] == ["adr/0001-queue.md"]
    repo.git("config", "cortex.decisionsDir", "../elsewhere")
    bad = cortex(repo.path, "publish", noted.data()["id"])
    assert bad.code == 1 and "must be a path inside the repository" in bad.err


def test_session_start_sync_is_skipped_when_head_has_not_moved(repo: Repo, make_engine: Open) -> None:
    """The SessionStart read of the decisions folder runs once per HEAD."""
    eng = make_engine(repo.path)
    assert eng.sync_shared().ran is True
    assert eng.sync_shared().ran is False


def test_sync_quotes_a_file_name_holding_a_bidi_control(repo: Repo) -> None:
    """`cortex sync` (text and --json) names a skipped decision file without its raw U+202E."""
    repo.write("docs/decisions/0001-\u202edm.exe.md", "no front matter, no title\n")
    repo.commit("a decision file from someone else")
    for argv in (("sync",), ("sync", "--json")):
        run = cortex(repo.path, *argv)
        assert run.code == 0 and "\u202e" not in run.out and "\\u202e" in run.out, run


def test_publish_into_a_docs_file_is_one_clear_error(repo: Repo) -> None:
    """`docs` is a file: one `cortex:` line on stderr, exit 1, no traceback, nothing written."""
    repo.write("docs", "not a folder\n")
    noted = cortex(repo.path, "note", "--kind", "decision", "--subject", "db", "--json", "use postgres")
    run = cortex(repo.path, "publish", noted.data()["id"])
    assert run.code == 1 and run.err.startswith("cortex:") and len(run.err.strip().splitlines()) == 1, run
    assert "Traceback" not in run.err and (repo.path / "docs").read_text() == "not a folder\n"


OUTCOME = '\n\n## Decision Outcome\n\nChosen option: "use sqlite"\n'
FRONT = '---\ncortex-subject: "database"\n---\n\n'
HIDDEN_TITLES = {
    "an HTML comment": "<!--\n# database\n-->\n\n# Improve README wording",
    "a fenced code block": "```\n# database\n```\n\n# Improve README wording",
    "a tilde fence": "~~~md\n# database\n~~~\n\nImprove README wording\n======================",
    "an indented code block": "    # database\n\n# Improve README wording",
    "an HTML block under a setext title": "Improve README wording\n===\n\n<details>\n# database\n</details>",
    "a div before the title": "<div>\n# database\n</div>\n\n# Improve README wording",
    "an h2 before it": "## Improve README wording\n\n# database",
}


@pytest.mark.parametrize("shape", list(HIDDEN_TITLES))
def test_a_heading_the_reader_never_sees_decides_no_subject(shape: str) -> None:
    """The title is the first heading as the file renders (CommonMark): a `# database` hidden in a comment, code or
    an HTML block, or an h2 shown first, is no title, so the file whose reader sees "Improve README wording" is
    refused. (Before: the first `# ` line anywhere was the title and the file decided `database`.)"""
    with pytest.raises(sharing.MalformedDecision, match="title"):
        sharing.parse_madr((FRONT + HIDDEN_TITLES[shape] + OUTCOME).encode())


@pytest.mark.parametrize(
    "body",
    [
        "database\n========",  # a setext title
        "<!-- a note for editors -->\n\n# database",
        '```\n## Decision Outcome\nChosen option: "use mysql"\n```\n\n# database',
    ],
)
def test_a_title_as_it_renders_names_the_subject(body: str) -> None:
    """A setext title counts; a comment or a code block before the title is skipped, and a section heading inside a
    code block is no section."""
    parsed = sharing.parse_madr((FRONT + body + OUTCOME).encode())
    assert (parsed.title, parsed.subject, parsed.decision) == ("database", "database", "use sqlite")


def test_sync_counts_as_added_only_what_it_wrote_and_names_what_waits(clones: tuple[Repo, Repo]) -> None:
    """Alice's own published file is read and writes nothing (not "added"); a file another author committed waits
    in the inbox and is named there, never counted as added."""
    alice, bob = clones
    settings.write_review_arrivals("others")  # the default: what this store did not publish waits
    mine = publish_decision(alice)
    first = cortex(alice.path, "sync").out
    assert first.startswith("0 added, 0 updated, 0 retired shared decisions.\n"), first
    assert (
        f"1 file(s) read and nothing written (your own published note, or a status that no longer holds): {mine}"
        in first
    )
    theirs = (alice.path / mine).read_text().replace("cache backend", "queue").replace("redis", "nats")
    alice.write(
        "docs/decisions/0100-queue.md", "\n".join(line for line in theirs.split("\n") if "cortex-id" not in line)
    )
    alice.git("add", "-A")
    alice.git("commit", "-q", "--author", "Bob Other <bob@example.com>", "-m", "adr: queue")
    text = cortex(alice.path, "sync").out
    assert text.startswith("0 added, 0 updated, 0 retired shared decisions.")
    assert "wait for your review, not added: docs/decisions/" in text and "queue" in text
