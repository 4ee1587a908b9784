"""One long label never empties the SessionStart brief. A label is cut like any other text, keeping its
kind and a `…`: a contradicting decision naming a 700-character missing path, a note promoted from a branch whose
name is 3,600 characters long."""

from __future__ import annotations

from typing import Any

from ..conftest import Repo
from .conftest import Host

LONG_PATH = "src/" + "deep/" * 138 + "gone.py"  # 701 characters, never in the checkout


def test_a_700_character_missing_path_leaves_the_contest_in_the_brief(host: Host, repo: Repo) -> None:
    """Both sides of the contest are in the brief, marked, the long side's stale label cut with `…`."""
    for argv in (
        ("--subject", "tls", f"verify tls certificates in {LONG_PATH}"),
        ("--subject", "tls", f"do not verify tls certificates in {LONG_PATH}"),
    ):
        run = host.cortex("note", "--kind", "decision", *argv)
        assert run.code == 0, run.err
    brief = host.session_start()
    assert len(brief) > 0
    bullets = [line for line in brief.splitlines() if line.startswith("- [today] decision: [tls]")]
    assert len(bullets) == 2 and all("[contested]" in line for line in bullets), brief
    assert any("[stale: missing src/deep/" in line and "…]" in line for line in bullets), brief


def test_a_3600_character_branch_name_leaves_its_promoted_note_in_the_brief(
    repo: Repo, make_engine: Any, clock: Any
) -> None:
    """A note promoted from a merged branch with a 3,600-character name: in the brief, `(from …)` cut with `…`."""
    branch = "/".join(["b" * 199] * 18)  # git allows it: each component under the file-name limit
    repo.git("checkout", "-q", "-b", branch)
    make_engine(repo.path).note("decision", "use argon2 for password hashing", "hashing")
    repo.write("src/hash.py")
    repo.commit("hash")
    make_engine(repo.path).flush_spool()
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge", branch)
    main = make_engine(repo.path)
    assert len(main.check_merges().promoted) == 1
    brief = main.preview_session_brief()
    assert "argon2" in brief.text, brief.text
    line = next(line for line in brief.text.splitlines() if "argon2" in line)
    assert "(from bbbb" in line and line.endswith("…)") and len(line) < 300, line
