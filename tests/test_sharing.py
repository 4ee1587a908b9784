"""Decisions shared through the repository: publish, commit, pull, read at HEAD as `(shared)`.

Two clones of one repository, so two stores; `publish`, `sync` and `doctor` through the real command line.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex_engine.base import settings
from cortex_engine.base.errors import InvalidInput
from cortex_engine.engine import Engine
from cortex_engine.memory import sharing
from cortex_engine.memory.sharing import MalformedDecision, SharedDecision

from .conftest import Clock, Repo, git
from .test_cli import cortex

Open = Callable[..., Engine]


@pytest.fixture
def trusted_repository(isolated_home: Path) -> None:
    """The command-line tests are about what a shared file does once it applies (both clones commit as the same git
    user, and bob's store did not publish alice's files): the inbox in front of them is tests/test_inbox.py's; the
    in-process tests below set the review policy each needs."""
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


@pytest.mark.usefixtures("trusted_repository")
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


@pytest.mark.usefixtures("trusted_repository")
def test_superseded_notes_are_listed_in_the_published_context(repo: Repo, make_engine: Open, clock: Clock) -> None:
    """The notes a decision superseded go into the file's context."""
    eng = make_engine(repo.path)
    eng.note("decision", "use sqlite for sessions", "sessions")
    clock.advance(minutes=1)
    newer = eng.note("decision", "use postgres for sessions", "sessions")
    (path,) = eng.publish([newer.id])
    body = (repo.path / path).read_text(encoding="utf-8")
    assert "It replaces earlier decisions on the subject:" in body and "* use sqlite for sessions" in body


@pytest.mark.usefixtures("trusted_repository")
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


@pytest.mark.usefixtures("trusted_repository")
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


@pytest.mark.usefixtures("trusted_repository")
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


@pytest.mark.usefixtures("trusted_repository")
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


@pytest.mark.usefixtures("trusted_repository")
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


@pytest.mark.usefixtures("trusted_repository")
def test_session_start_sync_is_skipped_when_head_has_not_moved(repo: Repo, make_engine: Open) -> None:
    """The SessionStart read of the decisions folder runs once per HEAD."""
    eng = make_engine(repo.path)
    assert eng.sync_shared().ran is True
    assert eng.sync_shared().ran is False


@pytest.mark.usefixtures("trusted_repository")
def test_sync_quotes_a_file_name_holding_a_bidi_control(repo: Repo) -> None:
    """`cortex sync` (text and --json) names a skipped decision file without its raw U+202E."""
    repo.write("docs/decisions/0001-\u202edm.exe.md", "no front matter, no title\n")
    repo.commit("a decision file from someone else")
    for argv in (("sync",), ("sync", "--json")):
        run = cortex(repo.path, *argv)
        assert run.code == 0 and "\u202e" not in run.out and "\\u202e" in run.out, run


@pytest.mark.usefixtures("trusted_repository")
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


@pytest.mark.usefixtures("trusted_repository")
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
@pytest.mark.usefixtures("trusted_repository")
def test_a_title_as_it_renders_names_the_subject(body: str) -> None:
    """A setext title counts; a comment or a code block before the title is skipped, and a section heading inside a
    code block is no section."""
    parsed = sharing.parse_madr((FRONT + body + OUTCOME).encode())
    assert (parsed.title, parsed.subject, parsed.decision) == ("database", "database", "use sqlite")


@pytest.mark.usefixtures("trusted_repository")
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


# -- the same rules read in process -----------------------------------------------------------------------------
# The tests above drive publish and sync through the command line in a subprocess. Those below hold the same rules
# in process: how a MADR file is parsed whole (every refusal, every cap, the quoting of the chosen option), the file
# a decision is published as, the decisions folder, what git is asked at HEAD, and what a sync writes, replaces,
# retires and holds back. A committed decision file is untrusted author text.


FOLDER = "docs/decisions"
OWN_ID = "0123abcd-0000-4000-8000-00000000beef"


def madr(body: str, front: str = "") -> bytes:
    """A decision file: optional front matter, then `body`."""
    return ((f"---\n{front}---\n" if front else "") + body).encode("utf-8")


def outcome(chosen: str, title: str = "queue", options: str = "") -> bytes:
    """A minimal decision file: a title, optional considered options, and the outcome line."""
    return madr(
        f"# {title}\n\n"
        + (f"## Considered Options\n\n{options}\n" if options else "")
        + f"## Decision Outcome\n\n{chosen}\n"
    )


def malformed(raw: bytes) -> str:
    """Why `parse_madr` refuses this file."""
    with pytest.raises(MalformedDecision) as caught:
        sharing.parse_madr(raw)
    return str(caught.value)


# -- parsing a decision file --------------------------------------------------------------------------


def test_a_decision_file_is_capped_at_64_kib_and_must_be_text() -> None:
    base = outcome('Chosen option: "run jobs on rq"')
    fits = base + b" " * (64 * 1024 - len(base))
    assert sharing.parse_madr(fits).decision == "run jobs on rq"
    assert malformed(fits + b" ") == "over 64 KiB"
    assert malformed(b"# caf\xe9\n") == "not UTF-8 text"
    assert malformed(outcome('Chosen option: "a\x00b"')) == "holds a NUL byte"


def test_every_part_a_file_lacks_is_named() -> None:
    assert malformed(b"---\nstatus: accepted\n\n# queue\n") == "front matter is never closed (no second ---)"
    assert malformed(b"## Decision Outcome\n\nChosen option: x\n") == "has no `# title` line"
    assert malformed(b"#   \n\n## Decision Outcome\n\nChosen option: x\n") == "has no `# title` line"
    assert malformed(b"#queue\n\n## Decision Outcome\n\nChosen option: x\n") == "has no `# title` line"
    assert malformed(b"# queue\n\n## Decision\n\nChosen option: x\n") == "has no `## Decision Outcome` section"
    assert malformed(b"# queue\n\n##Decision Outcome\n\nChosen option: x\n") == "has no `## Decision Outcome` section"
    assert malformed(b"# queue\n\nChosen option: x\n") == "has no `## Decision Outcome` section"
    for empty in (
        b"# queue\n\n## Decision Outcome\n\n",
        b"# queue\n\n## Decision Outcome\n\n  \nChosen option:  \n",
        b'# queue\n\n## Decision Outcome\nCHOSEN OPTION: ""\n',
    ):
        assert malformed(empty) == "its Decision Outcome states no chosen option"
    assert malformed(
        madr("# Improve README wording\n\n## Decision Outcome\n\nChosen option: x\n", 'cortex-subject: "auth"\n')
    ) == ("its `# title` and its cortex-subject name different subjects; make them the same")


def test_a_whole_file_is_read_into_its_decision() -> None:
    raw = madr(
        "intro line\n# Cache   Backend \n\n# a second title\n## Context\n\nstuff\n\n## Considered Options\n\n"
        '* "use redis"\n- memcached, because it is simple\n+ not an option\n  * "no cache at all"\n*\n* \n'
        '## decision outcome and consequences\n\n\n  Chosen option: "use redis", because it is fast  \n'
        "later line\n",
        ' Status : Accepted by the team\nDATE: 2026-07-01\ncortex-subject: "cache backend"\n'
        f"cortex-id: {OWN_ID}\nno colon here\n",
    )
    assert sharing.parse_madr(raw) == SharedDecision(
        title="Cache Backend",
        subject="cache backend",
        decision="use redis, because it is fast",
        alternatives=("memcached, because it is simple", "no cache at all"),
        status="accepted",
        date="2026-07-01",
        note_id=OWN_ID,
    )


def test_crlf_files_and_front_matter_with_blanks_around_its_marks() -> None:
    raw = b" --- \r\nstatus: superseded\r\n---  \r\n# queue\r\n## Decision Outcome\r\nChosen option: rq\r\n"
    parsed = sharing.parse_madr(raw)
    assert (parsed.title, parsed.decision, parsed.status, parsed.date, parsed.note_id) == (
        "queue",
        "rq",
        "superseded",
        None,
        None,
    )


def test_an_empty_front_matter_is_closed_by_its_second_line() -> None:
    assert sharing.parse_madr(b"---\n---\n# queue\n## Decision Outcome\nChosen option: rq\n").decision == "rq"


def test_front_matter_splits_each_line_at_its_first_colon_and_is_never_read_as_the_body() -> None:
    raw = madr("# queue\n## Decision Outcome\nChosen option: rq\n", "status: superseded by: 0002\n# a yaml comment\n")
    parsed = sharing.parse_madr(raw)
    assert (parsed.status, parsed.title) == ("superseded", "queue")


def test_a_section_named_twice_keeps_both_bodies() -> None:
    raw = (
        b"# queue\n## Considered Options\n* kafka\n## Decision Outcome\nChosen option: rq\n"
        b"## Considered Options\n* sqs\n"
    )
    assert sharing.parse_madr(raw).alternatives == ("kafka", "sqs")


@pytest.mark.parametrize(
    "chosen, decision",
    [
        ('Chosen option: "run jobs on rq"', "run jobs on rq"),
        ('chosen option:"run jobs on rq"', "run jobs on rq"),
        ('"rq", because it is simple', "rq, because it is simple"),
        ('"rq" because it is simple', "rq because it is simple"),
        ('"rq"', "rq"),
        ('"say \\"rq\\"" twice', 'say "rq" twice'),
        ('"a \\q b", then more', "a \\q b, then more"),
        ('"a \\q b" then more', "a \\q b then more"),
        ('"a \\q b"', "a \\q b"),
        ('"unclosed', '"unclosed'),
        ('"a \\q" or "b"', 'a \\q or "b"'),
        ("run jobs on rq", "run jobs on rq"),
        ("the option: rq", "the option: rq"),
    ],
)
def test_the_chosen_option_loses_its_quotes_and_keeps_its_reason(chosen: str, decision: str) -> None:
    assert sharing.parse_madr(outcome(chosen)).decision == decision


@pytest.mark.parametrize(
    "chosen, options, alternatives",
    [
        ('"use redis"', "* use redis\n* memcached", ("memcached",)),
        ('"Use  Redis", because', "* use redis\n* memcached", ("memcached",)),
        ('"a \\q b", because', "* a \\q b\n* memcached", ("memcached",)),
        ("use redis because", "* use redis because\n* memcached", ("memcached",)),
        ('"use redis"', '* "memcached", because it is simple', ("memcached, because it is simple",)),
    ],
)
def test_the_chosen_option_is_not_one_of_its_own_alternatives(
    chosen: str, options: str, alternatives: tuple[str, ...]
) -> None:
    assert sharing.parse_madr(outcome(f"Chosen option: {chosen}", options=options)).alternatives == alternatives


def test_alternatives_are_capped_in_length_number_and_total() -> None:
    long = sharing.parse_madr(outcome("Chosen option: rq", options="* " + "k" * 301))
    assert long.alternatives == ("k" * 300,)
    many = sharing.parse_madr(outcome("Chosen option: rq", options="\n".join(f"* option {i}" for i in range(25))))
    assert many.alternatives == tuple(f"option {i}" for i in range(20))
    seven = sharing.parse_madr(outcome("Chosen option: rq", options="\n".join(f"* {i}" + "x" * 299 for i in range(7))))
    assert [a[0] for a in seven.alternatives] == ["0", "1", "2", "3", "4", "5"]  # 7 × 300 > 2000; 6 × 300 is not
    exact = sharing.parse_madr(
        outcome("Chosen option: rq", options="\n".join(["* " + "y" * 300] * 6 + ["* " + "z" * 200]))
    )
    assert sum(len(a) for a in exact.alternatives) == 2000 and len(exact.alternatives) == 7


@pytest.mark.parametrize(
    "front, subject",
    [
        ('cortex-subject: "Queue"\n', "Queue"),
        ("cortex-subject: queue\n", "queue"),
        ('cortex-subject: "queue\n', "queue"),
        ('cortex-subject: "que\\u0075e"\n', "queue"),
        ('cortex-subject: "QUEUE X\n', "QUEUE X"),
        ("cortex-subject:\n", "QUEUE  title"),
        ('cortex-subject: ""\n', "QUEUE  title"),
    ],
)
def test_the_subject_is_the_front_matter_s_or_the_title(front: str, subject: str) -> None:
    title = "QUEUE  title" if "title" in subject else subject if subject == "QUEUE X" else "queue"
    parsed = sharing.parse_madr(madr(f"# {title}\n## Decision Outcome\nChosen option: rq\n", front))
    assert parsed.subject == (" ".join(subject.split()) if "title" in subject else subject)
    assert parsed.title == " ".join(title.split())


def test_a_quoted_subject_that_decodes_to_another_subject_is_refused() -> None:
    raw = madr("# queue\n## Decision Outcome\nChosen option: rq\n", 'cortex-subject: "cache"\n')
    assert "different subjects" in malformed(raw)


@pytest.mark.parametrize(
    "front, status",
    [
        ("", "accepted"),
        ("status:\n", "accepted"),
        ("status: Superseded by 0002\n", "superseded"),
        ("STATUS: rejected\n", "rejected"),
        ("status: proposed\n", "proposed"),
        ("status: Deprecated: see 0002\n", "deprecated"),
        ("status: superseded, by 0003\n", "superseded"),
        ("status: Accepted.\n", "accepted"),
        ("status: ~\n", "accepted"),
        ("status: **Rejected**\n", "rejected"),
    ],
)
def test_the_status_is_the_first_word_of_the_front_matter_s(front: str, status: str) -> None:
    raw = madr("# queue\n## Decision Outcome\nChosen option: rq\n", front or "x: y\n")
    assert sharing.parse_madr(raw).status == status


@pytest.mark.parametrize(
    "value, kept",
    [("2026-07-01", True), ("2026-7-1", False), ("2026-07-01T10:00", False), ("July 1", False), ("x2026-07-01", False)],
)
def test_only_a_plain_date_is_kept(value: str, kept: bool) -> None:
    raw = madr("# queue\n## Decision Outcome\nChosen option: rq\n", f"date: {value}\n")
    assert sharing.parse_madr(raw).date == (value if kept else None)


@pytest.mark.parametrize(
    "value, kept",
    [(OWN_ID, True), (OWN_ID.upper(), False), (OWN_ID[:-1], False), (OWN_ID + "0", False), ("x" * 36, False)],
)
def test_only_an_id_shaped_cortex_id_is_kept(value: str, kept: bool) -> None:
    raw = madr("# queue\n## Decision Outcome\nChosen option: rq\n", f"cortex-id: {value}\n")
    assert sharing.parse_madr(raw).note_id == (value if kept else None)


def test_title_subject_and_decision_are_cut_to_their_caps() -> None:
    title = "t" * 250
    parsed = sharing.parse_madr(madr(f"# {title}\n## Decision Outcome\nChosen option: " + "d" * 4100 + "\n"))
    assert (parsed.title, parsed.subject, parsed.decision) == ("t" * 200, "t" * 200, "d" * 4000)


# -- publishing ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, stem",
    [
        ("Cache Backend", "cache-backend"),
        ("  --Ünïcode  & stuff!! ", "n-code-stuff"),
        ("!!!", "decision"),
        ("a" * 59 + " b", "a" * 59),
        ("a" * 70, "a" * 60),
        ("x" * 58 + "--yz", "x" * 58 + "-y"),
    ],
)
def test_a_file_name_slug(text: str, stem: str) -> None:
    assert sharing.slug(text) == stem


def published(eng: Engine, repo: Repo, *ids: str) -> dict[str, str]:
    """Publish these notes; path → text of each file written."""
    return {path: (repo.path / path).read_text(encoding="utf-8") for path in eng.publish(list(ids))}


def test_a_published_decision_is_one_madr_file_exactly(engine: Engine, repo: Repo, clock: Clock) -> None:
    old = engine.note("decision", "use  sqlite\nfor sessions", "Session  Store", ["memcached", " ", "files\n on disk"])
    clock.advance(days=1)
    other = engine.note("decision", "use mysql for sessions", "other subject")
    new = engine.note("decision", 'use "postgres" for sessions', "session store", ["redis"])
    files = published(engine, repo, new.id)
    branch = engine.scope.branch
    assert files == {
        f"{FOLDER}/0001-session-store.md": "\n".join(
            [
                "---",
                "status: accepted",
                "date: 2026-08-03",
                'cortex-subject: "session store"',
                f"cortex-id: {new.id}",
                "---",
                "",
                "# session store",
                "",
                "## Context and Problem Statement",
                "",
                f"Recorded with Cortex on branch `{branch}` on 2026-08-03.",
                "",
                "It replaces earlier decisions on the subject:",
                "",
                "* use sqlite for sessions (2026-08-02)",
                "",
                "## Considered Options",
                "",
                '* use "postgres" for sessions',
                "* redis",
                "",
                "## Decision Outcome",
                "",
                'Chosen option: "use \\"postgres\\" for sessions"',
                "",
                "Rejected: redis.",
            ]
        )
        + "\n"
    }
    assert other.id not in "".join(files.values())
    older = published(engine, repo, old.id)[f"{FOLDER}/0001-session-store.md"]
    assert older.startswith("---\nstatus: superseded\ndate: 2026-08-02\n")
    assert "replaces earlier" not in older and "* memcached\n* files on disk\n" in older
    assert older.endswith('Chosen option: "use sqlite for sessions"\n\nRejected: memcached; files on disk.\n')


def test_a_contested_and_a_resolved_decision_say_so(engine: Engine, repo: Repo, clock: Clock) -> None:
    a = engine.note("decision", "use redis for the cache", "cache")
    clock.advance(minutes=1)
    engine.note("decision", "do not use redis for the cache", "cache")
    (body,) = published(engine, repo, a.id).values()
    assert (
        "\n\nThis decision was contested when it was published: another active decision on the subject opposed it."
        "\n\n## Considered Options\n\n* use redis for the cache\n\n## Decision Outcome\n"
    ) in body
    assert "Rejected" not in body
    flaky = engine.note("decision", "retry the flaky test", "flaky")
    engine.resolve(flaky.id)
    (resolved,) = published(engine, repo, flaky.id).values()
    assert resolved.startswith("---\nstatus: deprecated\n") and "contested" not in resolved


def test_a_decision_published_outside_a_branch_names_no_branch(repo: Repo, make_engine: Open) -> None:
    repo.git("checkout", "-q", "--detach")
    eng = make_engine(repo.path)
    note = eng.note("decision", "run jobs on rq", "queue")
    (body,) = published(eng, repo, note.id).values()
    assert "\nRecorded with Cortex on 2026-08-02.\n" in body


def test_files_are_numbered_per_subject_and_republished_in_place(engine: Engine, repo: Repo) -> None:
    folder = repo.path / FOLDER
    folder.mkdir(parents=True)
    for name in ("0007-old.md", "notes.md", "x-0009.md", "0002"):
        (folder / name).write_text("x\n")
    a = engine.note("decision", "run jobs on rq", "queue")
    b = engine.note("decision", "use redis", "cache")
    c = engine.note("decision", "a decision without much of a subject", "!!!")
    assert engine.publish([a.id, b.id]) == [f"{FOLDER}/0008-queue.md", f"{FOLDER}/0009-cache.md"]
    assert engine.publish([a.id]) == [f"{FOLDER}/0008-queue.md"]
    assert engine.publish([c.id]) == [f"{FOLDER}/0010-decision.md"]
    assert sorted(os.listdir(folder)) == [
        "0002",
        "0007-old.md",
        "0008-queue.md",
        "0009-cache.md",
        "0010-decision.md",
        "notes.md",
        "x-0009.md",
    ]


def test_publishing_names_its_refusals(engine: Engine, repo: Repo) -> None:
    with pytest.raises(InvalidInput) as caught:
        engine.publish([])
    assert (caught.value.message, caught.value.code) == ("name at least one decision id to publish", "bad_args")
    insight = engine.note("insight", "redis is fast")
    decision = engine.note("decision", "use redis", "cache")
    with pytest.raises(InvalidInput) as caught:
        engine.publish([decision.id, insight.id])
    assert caught.value.message == f"note {insight.id} is a insight, and only decisions are published"
    assert caught.value.code == "not_a_decision" and not (repo.path / "docs").exists()


def test_the_folder_is_created_and_never_followed_through_a_symlink(engine: Engine, repo: Repo, tmp_path: Path) -> None:
    note = engine.note("decision", "use redis", "cache")
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo.path / "docs").symlink_to(outside)
    with pytest.raises(InvalidInput) as caught:
        engine.publish([note.id])
    assert caught.value.message == (
        f"{repo.path / 'docs'} is a symlink; Cortex writes decisions only into a real folder"
    )
    assert caught.value.code == "symlink" and os.listdir(outside) == []
    (repo.path / "docs").unlink()
    (repo.path / "docs").write_text("a file\n")
    with pytest.raises(InvalidInput) as caught:
        engine.publish([note.id])
    assert caught.value.message == (
        f"{repo.path / 'docs'} is a file, not a folder; Cortex writes decisions only into "
        "a folder (move it, or set another decisions folder)"
    )
    assert caught.value.code == "not_a_folder"
    (repo.path / "docs").unlink()
    (repo.path / "docs" / "decisions").mkdir(parents=True)
    (repo.path / "docs" / "decisions" / "0001-cache.md").symlink_to(outside / "planted.md")
    with pytest.raises(InvalidInput) as caught:
        engine.publish([note.id])
    assert (
        caught.value.code == "bad_file"
        and caught.value.message.startswith(f"cannot write {repo.path / FOLDER / '0001-cache.md'} (")
        and not (outside / "planted.md").exists()
    )


def test_a_published_file_is_written_with_mode_644(engine: Engine, repo: Repo) -> None:
    note = engine.note("decision", "use redis", "cache")
    (path,) = engine.publish([note.id])
    assert (repo.path / path).stat().st_mode & 0o777 == 0o644 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# -- the decisions folder -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "env, config, folder",
    [
        ("", "", "docs/decisions"),
        ("adr", "elsewhere", "adr"),
        ("", "adr/", "adr"),
        ("/adr//x/./", "", None),
        ("adr\\\\x", "", "adr/x"),
        ("./adr/./x//", "", "adr/x"),
        ("", "  spaced  ", "spaced"),
    ],
)
def test_the_decisions_folder_is_env_then_git_config_then_the_default(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, env: str, config: str, folder: str | None
) -> None:
    if env:
        monkeypatch.setenv("CORTEX_DECISIONS_DIR", env)
    if config:
        repo.git("config", "cortex.decisionsDir", config)
    if folder is None:
        with pytest.raises(InvalidInput):
            sharing.decisions_folder(str(repo.path))
    else:
        assert sharing.decisions_folder(str(repo.path)) == folder


@pytest.mark.parametrize("raw", ["/abs", "../out", "docs/../../out", ".", "./", "adr/\x1b[31m", "adr/\x85x", "//"])
def test_a_decisions_folder_outside_the_repository_is_refused(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv("CORTEX_DECISIONS_DIR", raw)
    with pytest.raises(InvalidInput) as caught:
        sharing.decisions_folder(str(repo.path))
    assert (
        caught.value.message
        == (f"the decisions folder {raw!r} must be a path inside the repository, like docs/decisions")
        and caught.value.code == "bad_decisions_dir"
    )


def test_a_decisions_folder_may_hold_a_tab_or_a_newline_free_name(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORTEX_DECISIONS_DIR", "my\tadr")
    assert sharing.decisions_folder(str(repo.path)) == "my\tadr"


def test_outside_git_the_folder_is_the_default(tmp_path: Path) -> None:
    assert sharing.decisions_folder(str(tmp_path)) == "docs/decisions"


# -- what git is asked at HEAD ------------------------------------------------------------------------------


MALLORY = "Mallory <Mallory@Evil.example>"


def commit_as(repo: Repo, files: dict[str, str | None], author: str | None = None, message: str = "decisions") -> str:
    """Write (or, for None, delete) these files and commit them, authored by `author` (default: this machine's
    git user); returns the commit id."""
    for rel, body in files.items():
        if body is None:
            repo.git("rm", "-q", rel)
        else:
            repo.write(rel, body)
    repo.git("add", "-A")
    repo.git("commit", "-q", *([f"--author={author}"] if author else []), "-m", message)
    return repo.git("rev-parse", "HEAD").strip()


def decision(title: str, chosen: str, front: str = "") -> str:
    """A decision file's text."""
    return madr(f"# {title}\n\n## Decision Outcome\n\nChosen option: {json.dumps(chosen)}\n", front).decode()


def blob(repo: Repo, path: str) -> str:
    return repo.git("rev-parse", f"HEAD:{path}").strip()


def test_only_markdown_blobs_directly_in_the_folder_are_listed(repo: Repo) -> None:
    repo.write(f"{FOLDER}/0001-a.md", "a\n")
    repo.write(f"{FOLDER}/0002-b.md", "bb\n")
    os.chmod(repo.path / FOLDER / "0002-b.md", 0o755)
    repo.write(f"{FOLDER}/notes.txt", "c\n")
    repo.write(f"{FOLDER}/sub/0003-c.md", "d\n")
    repo.write(f"{FOLDER}/0004-\x1bx.md", "e\n")
    repo.write(f"{FOLDER}x/0005-e.md", "f\n")
    repo.write(f"{FOLDER}/readme.MD", "g\n")
    (repo.path / FOLDER / "0006-link.md").symlink_to("0001-a.md")
    repo.git("add", "-A")
    head = repo.git("rev-parse", "HEAD").strip()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{head},{FOLDER}/0007-module.md")
    repo.git("commit", "-q", "-m", "decisions")
    assert sharing.files_at_head(str(repo.path), FOLDER) == {
        f"{FOLDER}/0001-a.md": (blob(repo, f"{FOLDER}/0001-a.md"), 2),
        f"{FOLDER}/0002-b.md": (blob(repo, f"{FOLDER}/0002-b.md"), 3),
    }
    assert sharing.files_at_head(str(repo.path), f"{FOLDER}/sub") == {
        f"{FOLDER}/sub/0003-c.md": (blob(repo, f"{FOLDER}/sub/0003-c.md"), 2)
    }
    assert sharing.files_at_head(str(repo.path), "nowhere") == {}


def test_nothing_is_listed_without_a_head(tmp_path: Path) -> None:
    assert sharing.files_at_head(str(tmp_path), FOLDER) is None


def test_at_most_500_files_are_listed(repo: Repo) -> None:
    commit_as(repo, {f"{FOLDER}/{n:04d}-x.md": f"{n}\n" for n in range(501)})
    found = sharing.files_at_head(str(repo.path), FOLDER)
    assert found is not None and len(found) == 500 and f"{FOLDER}/0499-x.md" in found


def test_blobs_are_read_in_one_call_and_unknown_ones_left_out(repo: Repo) -> None:
    commit_as(repo, {"a.md": "first\nsecond\n", "b.md": "", "c.md": "x"})
    a, b, c = (blob(repo, p) for p in ("a.md", "b.md", "c.md"))
    unknown = "0" * 40
    assert sharing.read_blobs(str(repo.path), [a, unknown, b, c]) == {a: b"first\nsecond\n", b: b"", c: b"x"}
    assert sharing.read_blobs(str(repo.path), []) == {}
    assert sharing.read_blobs(str(repo.path / "nowhere"), [a]) == {}


def test_the_last_commit_of_each_path_is_found_in_one_log(repo: Repo) -> None:
    first = commit_as(repo, {f"{FOLDER}/a.md": "1\n", f"{FOLDER}/b.md": "1\n"}, MALLORY)
    second = commit_as(repo, {f"{FOLDER}/a.md": "2\n", "elsewhere.md": "x\n"})
    commit_as(repo, {"elsewhere.md": "y\n"}, "Eve <eve@example.invalid>")
    found = sharing.last_commits(str(repo.path), FOLDER, {f"{FOLDER}/a.md", f"{FOLDER}/b.md", f"{FOLDER}/gone.md"})
    assert set(found) == {f"{FOLDER}/a.md", f"{FOLDER}/b.md"}
    assert found[f"{FOLDER}/a.md"][:3] == (second, "Test", "test@example.invalid")
    assert found[f"{FOLDER}/b.md"][:3] == (first, "Mallory", "Mallory@Evil.example")
    assert found[f"{FOLDER}/b.md"][3].startswith("20") and "T" in found[f"{FOLDER}/b.md"][3]
    assert sharing.last_commits(str(repo.path), FOLDER, {f"{FOLDER}/b.md"}) == {
        f"{FOLDER}/b.md": found[f"{FOLDER}/b.md"]
    }
    assert sharing.last_commits(str(repo.path / "nowhere"), FOLDER, {f"{FOLDER}/a.md"}) == {}


def test_an_author_name_cannot_forge_another_commit_s_record(repo: Repo) -> None:
    mine = commit_as(repo, {f"{FOLDER}/a.md": "1\n"})
    theirs = commit_as(repo, {f"{FOLDER}/b.md": "1\n"}, "C docs/decisions/a.md <x@y.z>")
    found = sharing.last_commits(str(repo.path), FOLDER, {f"{FOLDER}/a.md", f"{FOLDER}/b.md"})
    assert found[f"{FOLDER}/a.md"][0] == mine and found[f"{FOLDER}/b.md"][:2] == (theirs, "C docs/decisions/a.md")


def test_a_commit_is_shown_for_review_or_refused(repo: Repo) -> None:
    commit = commit_as(repo, {f"{FOLDER}/a.md": "1\n"}, MALLORY, "the message")
    text = sharing.commit_text(str(repo.path), commit)
    assert text.startswith(f"commit {commit}\n") and "Author:     Mallory <Mallory@Evil.example>" in text
    assert "the message" in text and f"{FOLDER}/a.md | 1 +" in text
    for bad in (None, "", commit[:39], commit + "0", commit.upper(), "g" * 40):
        with pytest.raises(InvalidInput) as caught:
            sharing.commit_text(str(repo.path), bad)
        assert (caught.value.message, caught.value.code) == (
            "this arrival names no commit (it was imported from a file)",
            "no_commit",
        )
    with pytest.raises(InvalidInput) as caught:
        sharing.commit_text(str(repo.path), "1" * 64)
    assert caught.value.message == "git cannot show commit 1111111111 here (gone after a rewrite?)"
    assert caught.value.code == "no_commit"
    with pytest.raises(InvalidInput, match="git cannot show commit abcdefabcd here"):
        sharing.commit_text(str(repo.path), "abcdefabcd" * 4)


def test_git_is_asked_without_optional_locks_in_the_c_locale(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "git").write_text('#!/bin/sh\nprintf "%s|%s|%s" "$GIT_OPTIONAL_LOCKS" "$LC_ALL" "$*"\n')
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    out = sharing.commit_text(str(repo.path), "a" * 40)
    assert out == f"0|C|show --stat --no-color --format=fuller {'a' * 40} --"


# -- syncing ------------------------------------------------------------------------------------------


@pytest.fixture
def trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Decision files apply at once (review policy `none`)."""
    settings.write_review_arrivals("none")


def shared_notes(eng: Engine) -> list[tuple[str, str, str, str, int]]:
    """(subject, content, status, timestamp, conflict) of this scope's shared notes, oldest first."""
    return [
        tuple(r)
        for r in eng.conn.execute(
            "SELECT subject, content, status, timestamp, conflict "
            "FROM scoped_notes WHERE scope_key=? AND origin='shared' "
            "ORDER BY rowid",
            (eng.scope.key,),
        )
    ]


def test_a_sync_runs_only_on_a_branch_with_a_head(repo: Repo, tmp_path: Path, make_engine: Open) -> None:
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq")})
    plain = tmp_path / "plain"
    plain.mkdir()
    assert make_engine(plain).sync_shared(force=True) == sharing.SyncResult(False)
    unborn = tmp_path / "unborn"
    unborn.mkdir()
    Repo(unborn).git("init", "-q", "-b", "main")
    assert make_engine(unborn).sync_shared(force=True) == sharing.SyncResult(False)
    repo.git("checkout", "-q", "--detach")
    assert make_engine(repo.path).sync_shared(force=True) == sharing.SyncResult(False)


def test_a_sync_runs_again_when_head_or_the_folder_setting_moves(
    repo: Repo, make_engine: Open, trusted: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    eng = make_engine(repo.path)
    assert eng.sync_shared().ran and not eng.sync_shared().ran
    monkeypatch.setenv("CORTEX_DECISIONS_DIR", "adr/")
    assert eng.sync_shared().ran
    assert not eng.sync_shared().ran
    monkeypatch.setenv("CORTEX_DECISIONS_DIR", "/adr")
    assert not eng.sync_shared().ran  # the same folder, spelled with a leading slash, is not a change
    monkeypatch.setenv("CORTEX_DECISIONS_DIR", "docs")
    assert eng.sync_shared().ran
    monkeypatch.delenv("CORTEX_DECISIONS_DIR")
    assert not eng.sync_shared().ran  # a changed git config is read at the next HEAD move
    assert eng.sync_shared(force=True).ran
    commit_as(repo, {"x.md": "x\n"})
    eng.rescope()
    assert eng.sync_shared().ran and not eng.sync_shared().ran


def test_a_sync_adds_updates_and_retires_and_says_so(
    repo: Repo, make_engine: Open, trusted: None, clock: Clock
) -> None:
    commit_as(
        repo,
        {
            f"{FOLDER}/0001-q.md": decision("queue", "use rq", "date: 2026-07-01\n"),
            f"{FOLDER}/0002-c.md": decision("cache", "use redis"),
        },
        MALLORY,
    )
    eng = make_engine(repo.path)
    first = eng.sync_shared()
    ids = dict(first.notes)
    assert (first.ran, first.added, first.updated, first.retired, first.malformed, first.pending) == (
        True,
        (f"{FOLDER}/0001-q.md", f"{FOLDER}/0002-c.md"),
        (),
        (),
        (),
        (),
    )
    assert list(ids) == [f"{FOLDER}/0001-q.md", f"{FOLDER}/0002-c.md"]
    assert shared_notes(eng) == [
        ("queue", "use rq", "active", "2026-07-01T00:00:00.000Z", 0),
        ("cache", "use redis", "active", "2026-08-02T18:00:00.000Z", 0),
    ]
    clock.advance(hours=1)
    commit_as(
        repo,
        {
            f"{FOLDER}/0001-q.md": decision("queue", "use rq 2", "date: 2026-07-02\n"),
            f"{FOLDER}/0002-c.md": None,
            f"{FOLDER}/0003-d.md": decision("db", "use postgres"),
        },
        MALLORY,
    )
    eng.rescope()
    second = eng.sync_shared()
    assert (second.added, second.updated, second.retired) == (
        (f"{FOLDER}/0003-d.md",),
        (f"{FOLDER}/0001-q.md",),
        (f"{FOLDER}/0002-c.md",),
    )
    assert [p for p, _ in second.notes] == [f"{FOLDER}/0001-q.md", f"{FOLDER}/0003-d.md"]
    assert shared_notes(eng) == [
        ("queue", "use rq", "superseded", "2026-07-01T00:00:00.000Z", 0),
        ("cache", "use redis", "superseded", "2026-08-02T18:00:00.000Z", 0),
        ("queue", "use rq 2", "active", "2026-07-02T00:00:00.000Z", 0),
        ("db", "use postgres", "active", "2026-08-02T19:00:00.000Z", 0),
    ]
    audit = eng.conn.execute(
        "SELECT memory_item_id, source_table, source_id, scope_key, operation, prior_text, "
        "new_text, prior_subject, created_at FROM memory_corrections"
    ).fetchall()
    assert [tuple(a) for a in audit] == [
        (
            f"notes:{ids[f'{FOLDER}/0001-q.md']}",
            "notes",
            ids[f"{FOLDER}/0001-q.md"],
            eng.scope.key,
            f"shared-update:{FOLDER}/0001-q.md",
            "use rq",
            "use rq 2",
            "queue",
            "2026-08-02T19:00:00.000Z",
        )
    ]
    files = eng.conn.execute(
        "SELECT path, blob_oid, note_id, problem, seen_at FROM shared_files WHERE scope_key=? ORDER BY path",
        (eng.scope.key,),
    ).fetchall()
    assert [(f["path"], f["blob_oid"], f["problem"], f["seen_at"]) for f in files] == [
        (f"{FOLDER}/0001-q.md", blob(repo, f"{FOLDER}/0001-q.md"), None, "2026-08-02T19:00:00.000Z"),
        (f"{FOLDER}/0003-d.md", blob(repo, f"{FOLDER}/0003-d.md"), None, "2026-08-02T19:00:00.000Z"),
    ]
    assert [f["note_id"] for f in files] == [p[1] for p in second.notes]
    assert second.to_dict() == {
        "ran": True,
        "added": [f"{FOLDER}/0003-d.md"],
        "updated": [f"{FOLDER}/0001-q.md"],
        "retired": [f"{FOLDER}/0002-c.md"],
        "pending": [],
        "recorded": [],
        "malformed": [],
    }


def test_a_shared_decision_meets_the_branch_s_own_notes(
    repo: Repo, make_engine: Open, trusted: None, clock: Clock
) -> None:
    eng = make_engine(repo.path)
    mine = eng.note("decision", "use redis for the cache", "cache")
    clock.advance(minutes=1)
    commit_as(repo, {f"{FOLDER}/0001-c.md": decision("cache", "do not use redis for the cache")}, MALLORY)
    eng.rescope()
    eng.sync_shared()
    flags = {r[0]: (r[1], r[2]) for r in eng.conn.execute("SELECT content, status, conflict FROM scoped_notes")}
    assert flags == {"use redis for the cache": ("active", 1), "do not use redis for the cache": ("active", 1)}
    assert mine.id


@pytest.mark.parametrize(
    "date, stamp",
    [
        ("2026-07-01", "2026-07-01T00:00:00.000Z"),
        ("2099-01-01", None),
        ("2026-02-30", None),
        ("2026-08-02", "2026-08-02T00:00:00.000Z"),
    ],
)
def test_a_file_s_date_is_its_decision_s_never_later_than_now(
    repo: Repo, make_engine: Open, trusted: None, date: str, stamp: str | None
) -> None:
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq", f"date: {date}\n")}, MALLORY)
    eng = make_engine(repo.path)
    eng.sync_shared()
    assert shared_notes(eng)[0][3] == (stamp or "2026-08-02T18:00:00.000Z")


def test_a_retired_status_records_the_file_and_writes_nothing(repo: Repo, make_engine: Open, trusted: None) -> None:
    commit_as(
        repo,
        {
            f"{FOLDER}/0001-q.md": decision("queue", "use rq"),
            f"{FOLDER}/0002-c.md": decision("cache", "use redis", "status: rejected\n"),
            f"{FOLDER}/0003-d.md": decision("db", "use mysql", "status: deprecated\n"),
            f"{FOLDER}/0004-e.md": decision("dns", "use bind", "status: superseded by 0005\n"),
            f"{FOLDER}/0005-f.md": decision("ci", "use jenkins", "status: proposed\n"),
        },
        MALLORY,
    )
    eng = make_engine(repo.path)
    done = eng.sync_shared()
    assert done.added == tuple(
        f"{FOLDER}/{n}" for n in ("0001-q.md", "0002-c.md", "0003-d.md", "0004-e.md", "0005-f.md")
    )
    assert [p for p, _ in done.notes] == [f"{FOLDER}/0001-q.md", f"{FOLDER}/0005-f.md"]
    assert [n[1] for n in shared_notes(eng)] == ["use rq", "use jenkins"]
    recorded = {r[0]: r[1] for r in eng.conn.execute("SELECT path, note_id FROM shared_files")}
    assert len(recorded) == 5 and recorded[f"{FOLDER}/0002-c.md"] is None
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq", "status: deprecated\n")}, MALLORY)
    eng.rescope()
    again = eng.sync_shared()
    assert again.updated == (f"{FOLDER}/0001-q.md",) and again.notes == ()
    assert [n[2] for n in shared_notes(eng)] == ["superseded", "active"]
    assert (
        eng.conn.execute("SELECT note_id FROM shared_files WHERE path=?", (f"{FOLDER}/0001-q.md",)).fetchone()[0]
        is None
    )
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq 3")}, MALLORY)
    eng.rescope()
    third = eng.sync_shared()
    assert third.added == (f"{FOLDER}/0001-q.md",) and [n[1:3] for n in shared_notes(eng)][-1] == ("use rq 3", "active")


def test_a_malformed_file_goes_to_doctor_and_keeps_the_decision_its_last_good_version_wrote(
    repo: Repo, make_engine: Open, trusted: None
) -> None:
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq")}, MALLORY)
    eng = make_engine(repo.path)
    eng.sync_shared()
    (note_id,) = [r[0] for r in eng.conn.execute("SELECT note_id FROM shared_files")]
    commit_as(
        repo,
        {
            f"{FOLDER}/0001-q.md": "no title\n",
            f"{FOLDER}/0002-big.md": "x" * (64 * 1024 + 1),
            f"{FOLDER}/0003-long.md": decision("s" * 201, "use it"),
            f"{FOLDER}/0004-fine.md": decision("cache", "use redis"),
        },
        MALLORY,
    )
    eng.rescope()
    done = eng.sync_shared()
    assert done.malformed == (
        (f"{FOLDER}/0001-q.md", "has no `# title` line"),
        (f"{FOLDER}/0002-big.md", "over 64 KiB"),
    )
    assert done.added == (f"{FOLDER}/0003-long.md", f"{FOLDER}/0004-fine.md") and done.updated == ()
    assert done.to_dict()["malformed"] == [
        {"path": f"{FOLDER}/0001-q.md", "problem": "has no `# title` line"},
        {"path": f"{FOLDER}/0002-big.md", "problem": "over 64 KiB"},
    ]
    rows = {r["path"]: r for r in eng.conn.execute("SELECT * FROM shared_files")}
    assert rows[f"{FOLDER}/0001-q.md"]["note_id"] == note_id
    assert rows[f"{FOLDER}/0001-q.md"]["blob_oid"] == blob(repo, f"{FOLDER}/0001-q.md")
    assert rows[f"{FOLDER}/0002-big.md"]["note_id"] is None
    assert sharing.problems(eng.conn) == [
        (f"{FOLDER}/0001-q.md", "has no `# title` line"),
        (f"{FOLDER}/0002-big.md", "over 64 KiB"),
    ]
    assert [n[1:3] for n in shared_notes(eng)][0] == ("use rq", "active")
    commit_as(repo, {f"{FOLDER}/0001-q.md": None, f"{FOLDER}/0002-big.md": decision("big", "fits now")}, MALLORY)
    eng.rescope()
    fixed = eng.sync_shared()
    assert fixed.retired == (f"{FOLDER}/0001-q.md",) and fixed.added == (f"{FOLDER}/0002-big.md",)
    assert sharing.problems(eng.conn) == []
    assert eng.conn.execute("SELECT status FROM notes WHERE id=?", (note_id,)).fetchone()[0] == "superseded"


def test_a_file_the_note_rules_refuse_is_malformed_with_their_reason(
    repo: Repo, make_engine: Open, trusted: None
) -> None:
    """A title of control characters alone parses, but cleans to no subject: the note rule's refusal is the reason."""
    commit_as(repo, {f"{FOLDER}/0001-q.md": "# \x07\x1b\n## Decision Outcome\nChosen option: x\n"}, MALLORY)
    eng = make_engine(repo.path)
    done = eng.sync_shared()
    assert done.malformed == ((f"{FOLDER}/0001-q.md", "Subject is required for decision notes"),) and done.added == ()


def test_problems_of_an_old_store_are_none(tmp_path: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(tmp_path / "old.db")
    assert sharing.problems(conn) == []
    conn.execute("CREATE TABLE shared_files(path TEXT, problem TEXT)")
    conn.executemany(
        "INSERT INTO shared_files VALUES (?, ?)", [("b\u202e.md", "why"), ("a.md", "x"), ("a.md", "x"), ("c.md", None)]
    )
    assert sharing.problems(conn) == [("a.md", "x"), ('"b\\u202e.md"', "why")]


def test_the_publisher_s_own_file_is_that_note_not_a_copy(repo: Repo, make_engine: Open, trusted: None) -> None:
    eng = make_engine(repo.path)
    note = eng.note("decision", "run jobs on rq", "queue")
    (path,) = eng.publish([note.id])
    commit_as(repo, {})
    eng.rescope()
    done = eng.sync_shared()
    assert done.added == (path,) and done.notes == ()
    assert eng.conn.execute("SELECT note_id FROM shared_files WHERE path=?", (path,)).fetchone()[0] == note.id
    assert eng.conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 1
    body = (repo.path / path).read_text().replace("run jobs on rq", "run jobs on celery")
    commit_as(repo, {path: body})
    eng.rescope()
    edited = eng.sync_shared()
    assert edited.updated == (path,) and len(edited.notes) == 1
    # The edit is dated by the file (the day it was published), older than the note itself: the note stands.
    notes = [tuple(r) for r in eng.conn.execute("SELECT content, status, origin, timestamp FROM scoped_notes")]
    assert notes == [
        ("run jobs on rq", "active", None, "2026-08-02T18:00:00.000Z"),
        ("run jobs on celery", "superseded", "shared", "2026-08-02T00:00:00.000Z"),
    ]
    commit_as(repo, {path: None})
    eng.rescope()
    assert eng.sync_shared().retired == (path,)
    assert [r[0] for r in eng.conn.execute("SELECT status FROM scoped_notes")] == ["active", "superseded"]


def test_a_forged_cortex_id_of_another_scope_s_note_is_imported_as_a_copy(
    repo: Repo, make_engine: Open, trusted: None
) -> None:
    eng = make_engine(repo.path)
    other = eng.note("decision", "use rq", "queue")
    repo.git("checkout", "-q", "-b", "topic")
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use celery", f"cortex-id: {other.id}\n")}, MALLORY)
    topic = make_engine(repo.path)
    done = topic.sync_shared()
    assert len(done.notes) == 1 and shared_notes(topic)[0][1] == "use celery"


def test_deleting_a_file_retires_only_a_live_shared_note(repo: Repo, make_engine: Open, trusted: None) -> None:
    commit_as(
        repo,
        {f"{FOLDER}/0001-q.md": decision("queue", "use rq"), f"{FOLDER}/0002-c.md": decision("cache", "x")},
        MALLORY,
    )
    eng = make_engine(repo.path)
    ids = dict(eng.sync_shared().notes)
    eng.resolve(ids[f"{FOLDER}/0002-c.md"])
    commit_as(repo, {f"{FOLDER}/0001-q.md": None, f"{FOLDER}/0002-c.md": None}, MALLORY)
    eng.rescope()
    assert eng.sync_shared().retired == (f"{FOLDER}/0001-q.md", f"{FOLDER}/0002-c.md")
    status = {r[0]: r[1] for r in eng.conn.execute("SELECT id, status FROM notes")}
    assert status == {ids[f"{FOLDER}/0001-q.md"]: "superseded", ids[f"{FOLDER}/0002-c.md"]: "resolved"}
    assert eng.conn.execute("SELECT count(*) FROM shared_files").fetchone()[0] == 0


# -- files that wait for a person ------------------------------------------------------------------------


def test_another_author_s_file_waits_with_its_commit_and_this_store_s_published_file_applies(
    repo: Repo, make_engine: Open
) -> None:
    """The user's own git identity decides nothing: a file they committed by hand waits like Mallory's; the file
    this store published (the same bytes) is the user's own, and its first sight writes nothing."""
    theirs = commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq", "date: 2026-07-01\n")}, MALLORY)
    eng = make_engine(repo.path)
    (own,) = eng.publish([eng.note("decision", "use redis", "cache").id])
    commit_as(repo, {f"{FOLDER}/0003-db.md": decision("db", "use sqlite")}, "Test <TEST@example.INVALID>")
    eng.rescope()
    done = eng.sync_shared()
    assert done.pending == (f"{FOLDER}/0001-q.md", f"{FOLDER}/0003-db.md") and done.added == (own,)
    eng.reject_arrivals([a.id for a in eng.inbox() if a.path.endswith("0003-db.md")])
    (arrival,) = eng.inbox()
    assert (
        arrival.channel,
        arrival.path,
        arrival.commit,
        arrival.author,
        arrival.kind,
        arrival.subject,
        arrival.content,
        arrival.timestamp,
    ) == ("shared", f"{FOLDER}/0001-q.md", theirs, MALLORY, "decision", "queue", "use rq", "2026-07-01T00:00:00.000Z")
    assert arrival.authored_at and arrival.authored_at.startswith("20")
    assert [n[1] for n in shared_notes(eng)] == []  # the published note is the file: no second copy
    assert not eng.sync_shared(force=True).pending  # offered once
    assert len(eng.inbox()) == 1


def test_an_author_with_no_email_still_waits(repo: Repo, make_engine: Open, monkeypatch: pytest.MonkeyPatch) -> None:
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq")}, "Nobody <>")
    eng = make_engine(repo.path)
    assert eng.sync_shared().pending == (f"{FOLDER}/0001-q.md",)
    (arrival,) = eng.inbox()
    assert arrival.author == "Nobody <>"


def test_with_review_of_all_even_this_machine_s_file_waits_except_the_publisher_s_own(
    repo: Repo, make_engine: Open, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.write_review_arrivals("all")
    eng = make_engine(repo.path)
    note = eng.note("decision", "run jobs on rq", "queue")
    (own,) = eng.publish([note.id])
    commit_as(repo, {f"{FOLDER}/0009-c.md": decision("cache", "use redis")})
    eng.rescope()
    done = eng.sync_shared()
    assert done.pending == (f"{FOLDER}/0009-c.md",) and done.added == (own,)


def test_a_waiting_file_changed_at_head_is_withdrawn_and_offered_again(repo: Repo, make_engine: Open) -> None:
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq")}, MALLORY)
    eng = make_engine(repo.path)
    eng.sync_shared()
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use celery")}, MALLORY)
    eng.rescope()
    assert eng.sync_shared().pending == (f"{FOLDER}/0001-q.md",)
    assert [(a.content, a.state) for a in eng.inbox(("pending", "withdrawn"))] == [
        ("use rq", "withdrawn"),
        ("use celery", "pending"),
    ]


def test_an_accepted_file_is_dated_as_it_arrived_and_replaces_its_earlier_version(
    repo: Repo, make_engine: Open, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq", "date: 2026-07-01\n")}, MALLORY)
    eng = make_engine(repo.path)
    eng.sync_shared()
    clock.advance(days=1)
    eng.accept_arrivals([], every=True)
    first = shared_notes(eng)
    assert first == [("queue", "use rq", "active", "2026-07-01T00:00:00.000Z", 0)]
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use celery", "date: 2099-01-01\n")}, MALLORY)
    eng.rescope()
    eng.sync_shared()
    clock.advance(days=1)
    eng.accept_arrivals([], every=True)
    assert shared_notes(eng) == [
        ("queue", "use rq", "superseded", "2026-07-01T00:00:00.000Z", 0),
        ("queue", "use celery", "active", "2026-08-03T18:00:00.000Z", 0),
    ]
    audit = eng.conn.execute("SELECT operation, prior_text, new_text FROM memory_corrections").fetchall()
    assert [tuple(a) for a in audit] == [(f"shared-update:{FOLDER}/0001-q.md", "use rq", "use celery")]


# -- the edges: considered options, folder names, encodings, the configured folder, the size cap ----------------


def test_a_synced_decision_keeps_its_considered_options(repo: Repo, make_engine: Open, trusted: None) -> None:
    body = '# queue\n## Considered Options\n* rq\n* celery\n* sqs\n## Decision Outcome\nChosen option: "rq"\n'
    commit_as(repo, {f"{FOLDER}/0001-q.md": body}, MALLORY)
    eng = make_engine(repo.path)
    eng.sync_shared()
    alternatives = eng.conn.execute("SELECT alternatives FROM scoped_notes WHERE origin='shared'").fetchone()[0]
    assert json.loads(alternatives) == ["celery", "sqs"]


def test_a_file_whose_status_retires_it_is_recorded_whole(
    repo: Repo, make_engine: Open, trusted: None, clock: Clock
) -> None:
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq", "status: rejected\n")}, MALLORY)
    eng = make_engine(repo.path)
    clock.advance(minutes=3)
    assert eng.sync_shared().added == (f"{FOLDER}/0001-q.md",)
    row = eng.conn.execute(
        "SELECT s.key, f.path, f.blob_oid, f.note_id, f.problem, f.seen_at FROM shared_files f "
        "JOIN scopes s ON s.key = f.scope_key"
    ).fetchone()
    assert tuple(row) == (
        eng.scope.key,
        f"{FOLDER}/0001-q.md",
        blob(repo, f"{FOLDER}/0001-q.md"),
        None,
        None,
        "2026-08-02T18:03:00.000Z",
    )
    assert eng.sync_shared(force=True) == sharing.SyncResult(True)  # recorded: not read again


def test_a_new_version_dated_earlier_still_replaces_the_old_one(repo: Repo, make_engine: Open, trusted: None) -> None:
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq", "date: 2026-07-02\n")}, MALLORY)
    eng = make_engine(repo.path)
    eng.sync_shared()
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use celery", "date: 2026-07-01\n")}, MALLORY)
    eng.rescope()
    eng.sync_shared()
    assert [n[1:3] for n in shared_notes(eng)] == [("use rq", "superseded"), ("use celery", "active")]


def test_a_waiting_file_names_its_commit_even_when_the_folder_is_gone_from_the_worktree(
    repo: Repo, make_engine: Open
) -> None:
    """The log is asked about the folder at HEAD (`--` before it), never about the working tree."""
    commit = commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq")}, MALLORY)
    for name in os.listdir(repo.path / FOLDER):
        (repo.path / FOLDER / name).unlink()
    (repo.path / FOLDER).rmdir()
    (repo.path / "docs").rmdir()
    eng = make_engine(repo.path)
    assert eng.sync_shared().pending == (f"{FOLDER}/0001-q.md",)
    assert [(a.commit, a.author) for a in eng.inbox()] == [(commit, MALLORY)]


def test_git_output_that_is_not_utf8_is_read_with_replacement_characters(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.git("config", "i18n.logOutputEncoding", "ISO-8859-1")  # git re-encodes names it prints: René → Ren\xe9
    commit = commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq")}, "René <rene@example.invalid>")
    found = sharing.last_commits(str(repo.path), FOLDER, {f"{FOLDER}/0001-q.md"})
    assert found[f"{FOLDER}/0001-q.md"][:3] == (commit, "Ren\ufffd", "rene@example.invalid")
    assert "Author:     Ren\ufffd <rene@example.invalid>" in sharing.commit_text(str(repo.path), commit)


def test_the_commit_shown_is_the_one_named_even_beside_a_file_of_that_name(repo: Repo) -> None:
    named = commit_as(repo, {f"{FOLDER}/a.md": "1\n"}, MALLORY, "the named one")
    commit_as(repo, {f"{FOLDER}/b.md": "1\n"}, message="a later one")
    repo.git("config", "color.ui", "always")
    repo.write(named, "a file named like the commit\n")
    text = sharing.commit_text(str(repo.path), named)
    assert text.startswith(f"commit {named}\n") and "the named one" in text and "a later one" not in text
    assert "\x1b" not in text


def test_without_git_nothing_is_read_and_nothing_is_shown(
    repo: Repo, make_engine: Open, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit = commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq")}, MALLORY)
    eng = make_engine(repo.path)
    empty = tmp_path / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert sharing.files_at_head(str(repo.path), FOLDER) is None
    assert sharing.read_blobs(str(repo.path), [commit]) == {}
    assert eng.sync_shared(force=True) == sharing.SyncResult(False)
    with pytest.raises(InvalidInput, match="git cannot show commit"):
        sharing.commit_text(str(repo.path), commit)


def test_with_review_of_all_an_edit_of_one_s_own_published_file_waits(
    repo: Repo, make_engine: Open, monkeypatch: pytest.MonkeyPatch
) -> None:
    eng = make_engine(repo.path)
    note = eng.note("decision", "run jobs on rq", "queue")
    (path,) = eng.publish([note.id])
    commit_as(repo, {})
    eng.rescope()
    assert eng.sync_shared().added == (path,)
    settings.write_review_arrivals("all")
    commit_as(repo, {path: (repo.path / path).read_text().replace("run jobs on rq", "run jobs on celery")})
    eng.rescope()
    assert eng.sync_shared().pending == (path,)


def test_a_subject_s_file_is_found_again_whatever_dashes_its_name_holds(engine: Engine, repo: Repo) -> None:
    (repo.path / FOLDER).mkdir(parents=True)
    (repo.path / FOLDER / "0011-cache-backend.md").write_text("old\n")
    note = engine.note("decision", "use redis", "cache backend")
    assert engine.publish([note.id]) == [f"{FOLDER}/0011-cache-backend.md"]
    other = engine.note("decision", "run jobs on rq", "job-queue")
    assert engine.publish([other.id]) == [f"{FOLDER}/0012-job-queue.md"]


def test_a_folder_whose_name_the_system_refuses_is_one_clear_error(
    engine: Engine, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORTEX_DECISIONS_DIR", "x" * 300)
    note = engine.note("decision", "use redis", "cache")
    with pytest.raises(InvalidInput) as caught:
        engine.publish([note.id])
    assert caught.value.message == f"cannot create {repo.path / ('x' * 300)}: File name too long"
    assert caught.value.code == "not_a_folder"


def test_a_symlink_planted_at_the_file_s_name_is_named_with_the_system_s_reason(
    engine: Engine, repo: Repo, tmp_path: Path
) -> None:
    note = engine.note("decision", "use redis", "cache")
    (repo.path / FOLDER).mkdir(parents=True)
    (repo.path / FOLDER / "0001-cache.md").symlink_to(tmp_path / "planted.md")
    with pytest.raises(InvalidInput) as caught:
        engine.publish([note.id])
    assert caught.value.message == (
        f"cannot write {repo.path / FOLDER / '0001-cache.md'} (Too many levels of symbolic links)"
    )


def test_a_published_file_is_utf8_with_its_text_unescaped_whatever_the_locale(engine: Engine, repo: Repo) -> None:
    import locale

    note = engine.note("decision", "café au lait für alle", "Küche", ["thé"])
    previous = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")  # a machine whose locale cannot encode ü
    try:
        (path,) = engine.publish([note.id])
    finally:
        locale.setlocale(locale.LC_CTYPE, previous)
    body = (repo.path / path).read_bytes().decode("utf-8")
    assert 'cortex-subject: "küche"\n' in body and 'Chosen option: "café au lait für alle"\n' in body
    assert "* thé\n" in body


def test_publishing_reads_the_repository_s_configured_folder(engine: Engine, repo: Repo) -> None:
    repo.git("config", "cortex.decisionsDir", "adr")
    note = engine.note("decision", "use redis", "cache")
    assert engine.publish([note.id]) == ["adr/0001-cache.md"]


def test_an_accepted_file_keeps_its_considered_options_and_the_pending_list_is_quoted(
    repo: Repo, make_engine: Open
) -> None:
    body = '# queue\n## Considered Options\n* rq\n* celery\n## Decision Outcome\nChosen option: "rq"\n'
    commit_as(repo, {f"{FOLDER}/0001-q.md": body, f"{FOLDER}/0002-\u202eq.md": decision("cache", "use redis")}, MALLORY)
    eng = make_engine(repo.path)
    done = eng.sync_shared()
    assert done.to_dict()["pending"] == [f"{FOLDER}/0001-q.md", f'"{FOLDER}/0002-\\u202eq.md"']
    eng.accept_arrivals([], every=True)
    rows = eng.conn.execute("SELECT subject, alternatives FROM scoped_notes WHERE origin='shared' ORDER BY subject")
    assert [(r[0], r[1] and json.loads(r[1])) for r in rows] == [("cache", None), ("queue", ["celery"])]


def test_a_folder_that_cannot_be_made_is_one_clear_error(
    engine: Engine, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mkdir failing (a full disk here; a read-only folder for a user who is not root) is named, nothing written."""
    import errno

    def full(self: Path, *args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))

    note = engine.note("decision", "use redis", "cache")
    monkeypatch.setattr(Path, "mkdir", full)
    with pytest.raises(InvalidInput) as caught:
        engine.publish([note.id])
    assert caught.value.message == f"cannot create {repo.path / 'docs'}: No space left on device"
    assert caught.value.code == "not_a_folder"


def test_two_of_one_s_own_published_files_seen_at_once_write_nothing(repo: Repo, make_engine: Open) -> None:
    eng = make_engine(repo.path)
    ids = [eng.note("decision", "run jobs on rq", "queue").id, eng.note("decision", "use redis", "cache").id]
    paths = eng.publish(ids)
    commit_as(repo, {})
    eng.rescope()
    done = eng.sync_shared()
    assert sorted(done.added) == sorted(paths) and done.pending == () and done.notes == ()


def test_another_author_s_file_claiming_a_note_this_scope_does_not_hold_waits(repo: Repo, make_engine: Open) -> None:
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq", f"cortex-id: {OWN_ID}\n")}, MALLORY)
    eng = make_engine(repo.path)
    assert eng.sync_shared().pending == (f"{FOLDER}/0001-q.md",)


def test_a_waiting_file_names_its_commit_in_a_folder_whose_name_starts_with_x(
    repo: Repo, make_engine: Open, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log's first path follows a newline, and only that newline is cut from it."""
    folder = "Xadr"
    monkeypatch.setenv("CORTEX_DECISIONS_DIR", folder)
    commit = commit_as(repo, {f"{folder}/0001-q.md": decision("queue", "use rq")}, MALLORY)
    eng = make_engine(repo.path)
    assert eng.sync_shared().pending == (f"{folder}/0001-q.md",)
    assert [a.commit for a in eng.inbox()] == [commit]


def test_a_file_name_that_is_not_utf8_still_waits_with_its_commit(repo: Repo, make_engine: Open) -> None:
    name = f"{FOLDER}/0001-caf\udce9.md"  # the byte 0xe9 in the name git stores
    (repo.path / FOLDER).mkdir(parents=True)
    (repo.path / name).write_bytes(decision("queue", "use rq").encode())
    commit = commit_as(repo, {}, MALLORY)
    eng = make_engine(repo.path)
    shown = f"{FOLDER}/0001-caf\ufffd.md"
    assert eng.sync_shared().pending == (shown,)
    (arrival,) = eng.inbox()
    assert (arrival.path, arrival.commit, arrival.author) == (shown, commit, MALLORY)


@pytest.mark.parametrize("folder", ["my adr", "Xadr"])
def test_a_sync_of_a_folder_set_in_the_environment_runs_once_per_head(
    repo: Repo, make_engine: Open, trusted: None, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    monkeypatch.setenv("CORTEX_DECISIONS_DIR", folder)
    eng = make_engine(repo.path)
    assert eng.sync_shared().ran and not eng.sync_shared().ran


def test_a_sync_reads_the_repository_s_configured_folder(repo: Repo, make_engine: Open, trusted: None) -> None:
    repo.git("config", "cortex.decisionsDir", "adr")
    commit_as(repo, {"adr/0001-q.md": decision("queue", "use rq")}, MALLORY)
    assert make_engine(repo.path).sync_shared().added == ("adr/0001-q.md",)


def test_a_file_of_exactly_64_kib_is_read(repo: Repo, make_engine: Open, trusted: None) -> None:
    text = decision("queue", "use rq")
    commit_as(repo, {f"{FOLDER}/0001-q.md": text + " " * (64 * 1024 - len(text.encode()))}, MALLORY)
    done = make_engine(repo.path).sync_shared()
    assert (done.added, done.malformed) == ((f"{FOLDER}/0001-q.md",), ())


# -- a decision file git lists at HEAD but cannot read -----------------------------------------------------------------


def git_that_cannot_read_blobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `git` first on PATH that lists trees as git does but fails every `cat-file` (an object pruned or a pack
    gone between the two calls): the one way a listed file's content does not come back."""
    real = shutil.which("git")
    assert real is not None
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "git").write_text(f'#!/bin/sh\n[ "$1" = cat-file ] && exit 128\nexec "{real}" "$@"\n')
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")


def test_a_file_git_lists_but_cannot_read_is_malformed_with_that_reason(
    repo: Repo, make_engine: Open, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.write_review_arrivals("none")
    path = f"{FOLDER}/0001-queue.md"
    commit_as(repo, {path: decision("queue", "use rq")}, MALLORY)
    git_that_cannot_read_blobs(tmp_path, monkeypatch)
    eng = make_engine(repo.path)
    done = eng.sync_shared()
    assert (done.ran, done.added, done.malformed) == (True, (), ((path, "git could not read it at HEAD"),))
    assert done.to_dict()["malformed"] == [{"path": path, "problem": "git could not read it at HEAD"}]
    assert sharing.problems(eng.conn) == [(path, "git could not read it at HEAD")]
    assert eng.conn.execute("SELECT COUNT(*) FROM scoped_notes WHERE origin='shared'").fetchone()[0] == 0


def test_a_file_authored_with_the_repository_s_own_email_still_waits(
    repo: Repo, make_engine: Open, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git's author identity is a claim anyone (any environment) makes: a file committed under this machine's own
    `user.email` waits like any file this store did not publish."""
    monkeypatch.delenv("GIT_AUTHOR_EMAIL")
    monkeypatch.delenv("GIT_COMMITTER_EMAIL")
    repo.git("config", "user.email", "Local@Repo.invalid")
    path = f"{FOLDER}/0001-queue.md"
    commit_as(repo, {path: decision("queue", "use rq")}, "Someone <local@repo.INVALID>")
    done = make_engine(repo.path).sync_shared()
    assert (done.added, done.pending) == ((), (path,))


def test_a_file_whose_last_commit_git_cannot_name_waits_without_one(
    repo: Repo, make_engine: Open, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`git log` fails: the file still waits for a person (nothing proves this machine wrote it), shown without
    a commit or an author rather than ending the sync."""
    path = f"{FOLDER}/0001-queue.md"
    commit_as(repo, {path: decision("queue", "use rq")}, MALLORY)
    eng = make_engine(repo.path)
    real = shutil.which("git")
    fake = tmp_path / "nolog"
    fake.mkdir()
    (fake / "git").write_text(f'#!/bin/sh\n[ "$1" = log ] && exit 128\nexec "{real}" "$@"\n')
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    done = eng.sync_shared()
    assert (done.added, done.pending) == ((), (path,))
    (arrival,) = eng.inbox()
    assert (arrival.path, arrival.commit, arrival.author, arrival.authored_at) == (path, None, None, None)


def test_a_skipped_entry_does_not_end_the_listing(repo: Repo) -> None:
    """Entries are listed in name order: a subfolder, or a file that is not a decision (not `.md`, or named with a
    control character), sorting first is passed over and the decision files after it are still listed."""
    repo.write(f"{FOLDER}/0000-drafts/0001-draft.md", "a draft in a subfolder\n")
    repo.write(f"{FOLDER}/0000-index.txt", "not a decision\n")
    repo.write(f"{FOLDER}/0000-\x1bx.md", "a control character\n")
    repo.write(f"{FOLDER}/0001-a.md", "a\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "decisions")
    assert sharing.files_at_head(str(repo.path), FOLDER) == {
        f"{FOLDER}/0001-a.md": (blob(repo, f"{FOLDER}/0001-a.md"), 2)
    }


def test_a_decision_file_named_with_a_tab_is_listed_whole(repo: Repo) -> None:
    """`ls-tree` separates an entry's fields from its path with a tab: a path holding a tab of its own is split at
    the first one."""
    path = f"{FOLDER}/0001-two\twords.md"
    repo.write(path, "a\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "decisions")
    assert sharing.files_at_head(str(repo.path), FOLDER) == {path: (blob(repo, path), 2)}


def test_a_decisions_folder_named_like_an_option_is_read_as_a_path(
    repo: Repo, make_engine: Open, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.write_review_arrivals("none")
    monkeypatch.setenv("CORTEX_DECISIONS_DIR", "-decisions")
    commit_as(repo, {"-decisions/0001-queue.md": decision("queue", "use rq")}, MALLORY)
    done = make_engine(repo.path).sync_shared()
    assert (done.ran, done.added) == (True, ("-decisions/0001-queue.md",))


def test_a_waiting_file_keeps_the_note_id_it_claims(repo: Repo, make_engine: Open) -> None:
    """Another author's file naming a `cortex-id` waits with that id recorded on its arrival."""
    commit_as(repo, {f"{FOLDER}/0001-q.md": decision("queue", "use rq", f"cortex-id: {OWN_ID}\n")}, MALLORY)
    eng = make_engine(repo.path)
    assert eng.sync_shared().pending == (f"{FOLDER}/0001-q.md",)
    assert [(a.path, a.note_id) for a in eng.inbox()] == [(f"{FOLDER}/0001-q.md", OWN_ID)]


def test_a_configured_folder_that_is_not_utf8_is_read_with_a_replacement_character(repo: Repo) -> None:
    """`git config cortex.decisionsDir` holding bytes that are not UTF-8 is not a crash: the bad byte reads as
    U+FFFD, as every other name git hands over."""
    with (repo.path / ".git" / "config").open("ab") as config:
        config.write(b"[cortex]\n\tdecisionsDir = adr\xff\n")
    assert sharing.decisions_folder(str(repo.path)) == "adr\ufffd"


def test_a_published_file_is_the_users_own_only_while_its_decision_stands(repo: Repo, make_engine: Open) -> None:
    """The exact bytes `publish` wrote apply without review while the note they came from is active; once the user
    has resolved it, the same bytes committed again (a revert, a stale branch) wait for a person."""
    eng = make_engine(repo.path)
    note = eng.note("decision", "run jobs on rq", "queue").id
    (path,) = eng.publish([note])
    body = (repo.path / path).read_text(encoding="utf-8")
    (repo.path / path).unlink()
    eng.resolve(note, status="resolved")
    commit_as(repo, {path: body})
    eng.rescope()
    assert eng.sync_shared().pending == (path,)
