"""The rules of following paths through git history (found by mutation testing of `scope/history.py`).

Each test walks a real repository: renames chained commit by commit, deletes, a rebased-away start, an
unknown commit, the folder rule for a file git cannot pair, and composing two chains.
"""

from __future__ import annotations

import locale
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cortex_engine.scope import history
from cortex_engine.scope.history import Chain, ancestors_within, chains, compose, git, is_ancestor

from .conftest import Repo


def head(repo: Repo) -> str:
    """The repository's HEAD commit."""
    return repo.git("rev-parse", "HEAD").strip()


def move(repo: Repo, old: str, new: str, message: str = "move") -> str:
    """`git mv old new`, committed; the new HEAD."""
    (repo.path / new).parent.mkdir(parents=True, exist_ok=True)
    repo.git("mv", old, new)
    repo.commit(message)
    return head(repo)


def test_a_chain_follows_a_path_to_where_it_is_or_to_none() -> None:
    chain = Chain("abc", {"a.py": "b.py", "gone.py": None})
    assert (chain.follow("a.py"), chain.follow("gone.py"), chain.follow("same.py")) == ("b.py", None, "same.py")
    assert Chain(None).follow("x") == "x"


def test_is_ancestor(repo: Repo) -> None:
    first = head(repo)
    repo.commit("second")
    second = head(repo)
    assert is_ancestor(str(repo.path), first, second)
    assert not is_ancestor(str(repo.path), second, first)
    assert is_ancestor(str(repo.path), "not-a-commit", "not-a-commit")
    assert not is_ancestor(str(repo.path), "f" * 40, second)


def test_git_answers_none_on_a_failure_and_reads_stdin(repo: Repo) -> None:
    assert git(str(repo.path), "rev-parse", "--verify", "no-such-ref") is None
    assert git(str(repo.path / "missing"), "status") is None
    oid = head(repo)
    assert (git(str(repo.path), "cat-file", "--batch-check=%(objecttype)", stdin=f"{oid}\n") or "").strip() == "commit"


def test_compose_chains_through_the_middle_head() -> None:
    first = Chain("s", {"a": "b", "d": None, "k": "k2"})
    then = Chain("h1", {"b": "c", "x": "y", "a": "new-a-moved", "k2": None})
    # a path at h1 that is no origin of the first chain was the same path at the start (`b`, `x`, `k2`); a new
    # `a` at h1 is not the `a` the first chain followed
    assert compose(first, then) == Chain("s", {"a": "c", "d": None, "k": None, "b": "c", "x": "y", "k2": None})
    assert compose(Chain("s"), Chain("h1", {"p": None})) == Chain("s", {"p": None})


def test_renames_are_chained_commit_by_commit_and_deletes_end_a_path(repo: Repo) -> None:
    repo.write("a.py", "alpha\n" * 20)
    repo.write("d.py", "delta\n" * 20)
    repo.write("keep.py", "keep\n" * 20)
    repo.commit("files")
    start = head(repo)
    move(repo, "a.py", "b.py")
    repo.write("b.py", "alpha\n" * 20 + "more\n")
    repo.commit("edit")
    move(repo, "b.py", "src/c.py")
    repo.git("rm", "-q", "d.py")
    repo.commit("delete")
    now = head(repo)
    found = chains(str(repo.path), [start], now)
    assert found == {start: Chain(start, {"a.py": "src/c.py", "d.py": None})}
    assert found[start].follow("keep.py") == "keep.py"


def test_the_head_itself_and_an_unknown_commit(repo: Repo) -> None:
    now = head(repo)
    unknown = "f" * 40
    assert chains(str(repo.path), [now, unknown, now], now) == {now: Chain(now), unknown: Chain(None)}
    assert chains(str(repo.path), [], now) == {}
    assert chains(str(repo.path), [now], now) == {now: Chain(now)}


def test_a_rebased_away_start_walks_from_its_merge_base(repo: Repo) -> None:
    repo.write("a.py", "alpha\n" * 20)
    repo.commit("files")
    base = head(repo)
    repo.git("checkout", "-q", "-b", "old")
    repo.write("side.txt", "side\n")
    repo.commit("side")
    old = head(repo)
    repo.git("checkout", "-q", "main")
    now = move(repo, "a.py", "b.py")
    found = chains(str(repo.path), [old, base], now)
    assert found[old] == Chain(base, {"a.py": "b.py"})
    assert found[base] == Chain(base, {"a.py": "b.py"})


def test_two_starts_each_see_only_their_own_later_moves(repo: Repo) -> None:
    repo.write("a.py", "alpha\n" * 20)
    repo.commit("files")
    first = head(repo)
    middle = move(repo, "a.py", "b.py")
    now = move(repo, "b.py", "c.py")
    found = chains(str(repo.path), [first, middle], now)
    assert found[first] == Chain(first, {"a.py": "c.py"})
    assert found[middle] == Chain(middle, {"b.py": "c.py"})


def test_a_file_git_cannot_pair_moves_along_with_its_folder(repo: Repo) -> None:
    repo.write("pkg/__init__.py", "x = 1\n")
    repo.write("pkg/mod.py", "module\n" * 20)
    repo.write("pkg/other.py", "other\n" * 20)
    repo.commit("package")
    start = head(repo)
    repo.git("mv", "pkg", "lib")
    repo.write("lib/__init__.py", "")  # emptied as it moved: git cannot score it against the old one
    repo.commit("rename the folder")
    found = chains(str(repo.path), [start], head(repo))[start]
    assert found == Chain(
        start, {"pkg/mod.py": "lib/mod.py", "pkg/other.py": "lib/other.py", "pkg/__init__.py": "lib/__init__.py"}
    )


def test_no_guess_when_the_folder_went_two_ways_or_the_name_appeared_elsewhere(repo: Repo) -> None:
    repo.write("pkg/__init__.py", "x = 1\n")
    repo.write("pkg/a.py", "alpha\n" * 20)
    repo.write("pkg/b.py", "beta\n" * 20)
    repo.write("top/__init__.py", "y = 2\n")
    repo.write("top/t.py", "top\n" * 20)
    repo.commit("packages")
    start = head(repo)
    (repo.path / "lib").mkdir()
    (repo.path / "other").mkdir()
    repo.git("mv", "pkg/a.py", "lib/a.py")
    repo.git("mv", "pkg/b.py", "other/b.py")
    repo.git("rm", "-q", "pkg/__init__.py", "top/__init__.py")
    repo.write("lib/__init__.py", "")
    (repo.path / "moved").mkdir()
    repo.git("mv", "top/t.py", "moved/t.py")
    repo.write("elsewhere/__init__.py", "")
    repo.commit("split")
    found = chains(str(repo.path), [start], head(repo))[start]
    assert found == Chain(
        start,
        {
            "pkg/a.py": "lib/a.py",
            "pkg/b.py": "other/b.py",
            "pkg/__init__.py": None,
            "top/t.py": "moved/t.py",
            "top/__init__.py": None,
        },
    )


def test_a_later_file_taking_a_followed_path_s_old_name_is_not_followed(repo: Repo) -> None:
    repo.write("a.py", "alpha\n" * 20)
    repo.commit("files")
    start = head(repo)
    move(repo, "a.py", "b.py")
    repo.write("a.py", "a new file with the old name\n" * 20)
    repo.commit("new a")
    repo.git("rm", "-q", "a.py")
    repo.commit("drop the new a")
    found = chains(str(repo.path), [start], head(repo))[start]
    assert found.follow("a.py") == "b.py"


def test_commits_with_only_adds_or_edits_change_nothing(repo: Repo) -> None:
    start = head(repo)
    repo.write("new.py", "new\n")
    repo.commit("add")
    repo.write("README.md", "changed\n")
    repo.commit("edit")
    assert chains(str(repo.path), [start], head(repo)) == {start: Chain(start)}


def test_identical_content_under_a_new_name_is_a_rename(repo: Repo) -> None:
    repo.write("a.py", "alpha\n" * 20)
    repo.commit("files")
    start = head(repo)
    repo.write("copy.py", "alpha\n" * 20)
    repo.git("rm", "-q", "a.py")
    repo.write("b.py", "beta\n" * 20)
    repo.commit("copy and delete")
    found = chains(str(repo.path), [start], head(repo))[start]
    assert found == Chain(start, {"a.py": "copy.py"})


def test_ancestors_within_the_logged_commits() -> None:
    parents = {"c": ["b"], "b": ["a"], "a": [], "m": ["c", "x"]}
    assert ancestors_within("c", parents) == {"a", "b", "c"}
    assert ancestors_within("m", parents) == {"a", "b", "c", "m"}
    assert ancestors_within("zz", parents) == set()


# -- how git is run, which part of the history the log reads, starts git cannot follow, the folder rule ----------------


ALPHA = "alpha\n" * 20


def drop_tree(repo: Repo, commit: str) -> None:
    """Delete the (loose) tree object of `commit`: any git command that reads that commit's files fails."""
    tree = repo.git("rev-parse", f"{commit}^{{tree}}").strip()
    (repo.path / ".git" / "objects" / tree[:2] / tree[2:]).unlink()


def fake_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """A `git` first on PATH that runs the shell `script`."""
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    (fake / "git").write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")


# --- git: how it is run


def test_names_are_read_as_utf8_and_unquoted_whatever_the_locale(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("café.py", "x\n")
    repo.commit("an accented name")
    # a process started under a Latin-1 locale (its text default), and git's own default of quoting such names
    monkeypatch.setattr(locale, "getencoding", lambda: "latin-1")
    assert git(str(repo.path), "ls-files") == "README.md\ncafé.py\n"


def test_a_name_that_is_not_utf8_is_kept_byte_for_byte(repo: Repo) -> None:
    with open(os.fsencode(repo.path) + b"/caf\xe9.py", "wb") as handle:
        handle.write(b"x\n")
    repo.commit("a Latin-1 name")
    out = git(str(repo.path), "ls-files", "-z")
    assert out == "README.md\0caf\udce9.py\0"
    assert os.fsencode(out.split("\0")[1]) == b"caf\xe9.py"


def test_reading_never_rewrites_the_index(repo: Repo) -> None:
    """A plain `git status` refreshes a stale index and writes it back (taking `index.lock`, which a user's own git
    command may hold at that moment); Cortex's reads run without optional locks and leave it as it was."""
    index = repo.path / ".git" / "index"
    before = index.read_bytes()
    os.utime(repo.path / "README.md", (1_000_000_000, 1_000_000_000))  # stat data no longer matches the index
    assert git(str(repo.path), "status", "--porcelain") == ""
    assert index.read_bytes() == before
    subprocess.run(["git", "-C", str(repo.path), "status", "--porcelain"], check=True, capture_output=True)
    assert index.read_bytes() != before  # what the same command does with the optional lock


def test_a_git_that_hangs_is_given_up_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_git(tmp_path, monkeypatch, "exec sleep 20")
    monkeypatch.setattr(history, "_TIMEOUT", 0.5)
    assert git(str(tmp_path), "status") is None


def test_no_git_at_all_answers_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert git(str(tmp_path), "status") is None
    assert chains(str(tmp_path), ["a" * 40], "b" * 40) == {"a" * 40: Chain(None)}


# --- the log: which commits, in which order, under which config


def test_only_the_range_from_the_recorded_heads_is_read(repo: Repo) -> None:
    """History older than every recorded HEAD is never walked: here an old commit whose files git can no longer
    read (a damaged or partial clone), which would fail a log over the whole history."""
    repo.write("old.py", "old\n" * 20)
    repo.commit("old")
    old = head(repo)
    repo.write("a.py", ALPHA)
    repo.commit("files")
    first = head(repo)
    middle = move(repo, "a.py", "b.py")
    now = move(repo, "b.py", "c.py")
    drop_tree(repo, old)
    assert chains(str(repo.path), [middle, first], now) == {
        first: Chain(first, {"a.py": "c.py"}),
        middle: Chain(middle, {"b.py": "c.py"}),
    }
    # a recorded HEAD git does not know (collected away) does not widen the range to the whole history
    unknown = "0123456789" * 4
    assert chains(str(repo.path), [unknown, middle], now) == {
        unknown: Chain(None),
        middle: Chain(middle, {"b.py": "c.py"}),
    }


def test_a_range_git_cannot_read_leaves_its_starts_unverified(repo: Repo) -> None:
    start = head(repo)
    repo.write("a.py", ALPHA)
    repo.commit("files")
    damaged = head(repo)
    now = move(repo, "a.py", "b.py")
    drop_tree(repo, damaged)
    assert chains(str(repo.path), [start, now], now) == {now: Chain(now), start: Chain(None)}


def test_a_start_inside_the_range_skips_the_moves_before_it(repo: Repo) -> None:
    repo.write("a.py", ALPHA)
    repo.write("x.py", "x-ray\n" * 20)
    repo.commit("files")
    first = head(repo)
    move(repo, "a.py", "b.py")
    second = move(repo, "x.py", "y.py")
    now = move(repo, "b.py", "c.py")
    found = chains(str(repo.path), [first, second], now)
    assert found == {first: Chain(first, {"a.py": "c.py", "x.py": "y.py"}), second: Chain(second, {"b.py": "c.py"})}


def test_a_file_named_like_the_head_commit_does_not_confuse_the_range(repo: Repo) -> None:
    repo.write("a.py", ALPHA)
    repo.commit("files")
    start = head(repo)
    now = move(repo, "a.py", "b.py")
    repo.write(now, "an untracked file named by a content hash\n")
    assert chains(str(repo.path), [start], now) == {start: Chain(start, {"a.py": "b.py"})}


def test_a_path_starting_with_a_status_letter_ends_a_record(repo: Repo) -> None:
    """The last field of a commit's record is empty (the NUL after its last path): a path read as a status there
    would make a rename or delete of its own."""
    repo.write("Draft.py", "draft\n" * 20)
    repo.write("Dead.py", "dead\n" * 20)
    repo.commit("files")
    start = head(repo)
    repo.git("mv", "Draft.py", "Done.py")
    repo.git("rm", "-q", "Dead.py")
    repo.commit("rename one, delete one")
    assert chains(str(repo.path), [start], head(repo)) == {
        start: Chain(start, {"Draft.py": "Done.py", "Dead.py": None})
    }


def test_a_name_holding_the_header_mark_does_not_cut_its_commit_in_two(repo: Repo) -> None:
    """A file name is author text and may hold \\x01, the byte that marks a commit's header in the log: its
    commit's moves are all still followed, and the commit after it is read as itself."""
    odd = "a\x01b.py"
    repo.write(odd, ALPHA)
    repo.write("z.py", "zulu\n" * 20)
    repo.commit("files")
    start = head(repo)
    repo.git("mv", odd, "c.py")
    repo.git("mv", "z.py", "y.py")
    repo.commit("rename both")
    now = move(repo, "c.py", "d.py")
    assert chains(str(repo.path), [start], now) == {start: Chain(start, {odd: "d.py", "z.py": "y.py"})}


def test_renames_are_followed_parents_first_even_when_the_dates_say_otherwise(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit dated before its parent (a skewed clock, a rebase that kept the dates) on one side of a merge:
    git's default order would put `b → c` before `a → b`."""

    def dated(day: int, message: str) -> str:
        monkeypatch.setenv("GIT_COMMITTER_DATE", f"2020-01-{day:02d}T00:00:00+0000")
        repo.commit(message)
        return head(repo)

    repo.write("a.py", ALPHA)
    start = dated(1, "files")
    repo.git("mv", "a.py", "b.py")
    dated(5, "a to b")
    repo.git("checkout", "-q", "-b", "side")
    repo.write("side.txt", "side\n")
    dated(3, "side")
    repo.git("checkout", "-q", "main")
    repo.git("mv", "b.py", "c.py")
    dated(2, "b to c, dated before its parent")
    repo.git("merge", "-q", "--no-edit", "side")
    assert chains(str(repo.path), [start], head(repo)) == {start: Chain(start, {"a.py": "c.py"})}


HOSTILE_CONFIG = """\
[color]
    ui = always
    diff = always
[diff]
    renames = false
    external = /bin/false
    noprefix = true
    relative = true
[log]
    showSignature = true
    follow = true
    decorate = full
    showRoot = false
    abbrevCommit = true
[format]
    pretty = format:%h %s%n%b
[core]
    quotepath = true
    abbrev = 4
"""


def test_a_user_s_git_config_does_not_change_what_is_read(repo: Repo, tmp_path: Path) -> None:
    """Colour, no rename detection by default, signatures shown by `log`, a custom format, quoted names: the
    history is read the same. A commit signed with an SSH key makes `log.showSignature` print text."""
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen is needed to sign a commit")
    key = tmp_path / "signing-key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, capture_output=True)
    repo.write("a.py", ALPHA)
    repo.write("café.py", "café\n" * 20)
    repo.write("gone.py", "gone\n" * 20)
    repo.commit("files")
    start = head(repo)
    move(repo, "a.py", "b.py")
    repo.git("mv", "café.py", "thé.py")
    repo.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit", "-q", "-S", "-m", "signed move")
    repo.git("mv", "b.py", "c.py")
    repo.git("rm", "-q", "gone.py")
    repo.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit", "-q", "-S", "-m", "signed too")
    now = head(repo)
    expected = {start: Chain(start, {"a.py": "c.py", "café.py": "thé.py", "gone.py": None})}
    assert chains(str(repo.path), [start], now) == expected
    (Path(os.environ["HOME"]) / ".gitconfig").write_text(HOSTILE_CONFIG, encoding="utf-8")
    shown = repo.git("log", "-1")  # the config is in force for a plain git command: its own format, no header
    assert "signed too" in shown and "Author:" not in shown
    assert chains(str(repo.path), [start], now) == expected


# --- starts git cannot follow


def test_a_start_on_an_unrelated_history_is_unverified(repo: Repo) -> None:
    repo.write("a.py", ALPHA)
    repo.commit("files")
    start = head(repo)
    repo.git("checkout", "-q", "--orphan", "other")
    repo.commit("an unrelated history")
    orphan = head(repo)
    repo.git("checkout", "-q", "main")
    now = move(repo, "a.py", "b.py")
    assert chains(str(repo.path), [orphan, start], now) == {orphan: Chain(None), start: Chain(start, {"a.py": "b.py"})}


def test_a_rebased_away_start_alone_walks_from_its_merge_base(repo: Repo) -> None:
    repo.write("a.py", ALPHA)
    repo.commit("files")
    fork = head(repo)
    repo.git("checkout", "-q", "-b", "old")
    repo.write("side.txt", "side\n")
    repo.commit("side")
    old = head(repo)
    repo.git("checkout", "-q", "main")
    now = move(repo, "a.py", "b.py")
    assert chains(str(repo.path), [old], now) == {old: Chain(fork, {"a.py": "b.py"})}


def test_only_commit_ids_git_holds_are_followed(repo: Repo) -> None:
    repo.write("a.py", ALPHA)
    repo.commit("files")
    start = head(repo)
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    blob = repo.git("rev-parse", "HEAD:a.py").strip()
    unknown = "0123456789" * 4
    now = move(repo, "a.py", "b.py")
    found = chains(str(repo.path), [tree, start, blob, unknown], now)
    assert found == {tree: Chain(None), start: Chain(start, {"a.py": "b.py"}), blob: Chain(None), unknown: Chain(None)}


# --- the folder rule for a file git cannot pair


def test_a_package_flattened_into_the_root_takes_its_emptied_init_along(repo: Repo) -> None:
    repo.write("pkg/__init__.py", "x = 1\n")
    repo.write("pkg/mod.py", "module\n" * 20)
    repo.write("pkg/other.py", "other\n" * 20)
    repo.commit("package")
    start = head(repo)
    repo.git("mv", "pkg/mod.py", "mod.py")
    repo.git("mv", "pkg/other.py", "other.py")
    repo.git("rm", "-q", "pkg/__init__.py")
    repo.write("__init__.py", "")
    repo.commit("flatten")
    found = chains(str(repo.path), [start], head(repo))[start]
    assert found == Chain(start, {"pkg/mod.py": "mod.py", "pkg/other.py": "other.py", "pkg/__init__.py": "__init__.py"})


def test_two_folders_merged_into_one_hand_the_new_file_to_one_of_them(repo: Repo) -> None:
    repo.write("a/__init__.py", "a = 1\n")
    repo.write("a/x.py", "x-ray\n" * 20)
    repo.write("b/__init__.py", "b = 2\n")
    repo.write("b/y.py", "yankee\n" * 20)
    repo.commit("two packages")
    start = head(repo)
    (repo.path / "lib").mkdir()
    repo.git("mv", "a/x.py", "lib/x.py")
    repo.git("mv", "b/y.py", "lib/y.py")
    repo.git("rm", "-q", "a/__init__.py", "b/__init__.py")
    repo.write("lib/__init__.py", "")
    repo.commit("one package")
    found = chains(str(repo.path), [start], head(repo))[start]
    assert found == Chain(
        start, {"a/x.py": "lib/x.py", "b/y.py": "lib/y.py", "a/__init__.py": "lib/__init__.py", "b/__init__.py": None}
    )


def test_a_folder_that_went_two_ways_guesses_nothing_even_into_the_last_of_them(repo: Repo) -> None:
    repo.write("pkg/__init__.py", "x = 1\n")
    repo.write("pkg/a.py", ALPHA)
    repo.write("pkg/b.py", "beta\n" * 20)
    repo.commit("package")
    start = head(repo)
    (repo.path / "lib").mkdir()
    (repo.path / "other").mkdir()
    repo.git("mv", "pkg/a.py", "lib/a.py")
    repo.git("mv", "pkg/b.py", "other/b.py")
    repo.git("rm", "-q", "pkg/__init__.py")
    repo.write("other/__init__.py", "")
    repo.commit("split")
    found = chains(str(repo.path), [start], head(repo))[start]
    assert found == Chain(start, {"pkg/a.py": "lib/a.py", "pkg/b.py": "other/b.py", "pkg/__init__.py": None})


def test_a_file_deleted_from_a_folder_nothing_moved_out_of_is_not_guessed(repo: Repo) -> None:
    repo.write("pkg/mod.py", "module\n" * 20)
    repo.write("lone/__init__.py", "z = 3\n")
    repo.commit("files")
    start = head(repo)
    (repo.path / "lib").mkdir()
    repo.git("mv", "pkg/mod.py", "lib/mod.py")
    repo.git("rm", "-q", "lone/__init__.py")
    repo.write("__init__.py", "")
    repo.commit("move one, drop one, add one at the root")
    found = chains(str(repo.path), [start], head(repo))[start]
    assert found == Chain(start, {"pkg/mod.py": "lib/mod.py", "lone/__init__.py": None})


def test_a_new_file_under_a_followed_path_s_passed_name_is_not_followed(repo: Repo) -> None:
    repo.write("a.py", ALPHA)
    repo.commit("files")
    start = head(repo)
    move(repo, "a.py", "b.py")
    move(repo, "b.py", "c.py")
    repo.write("b.py", "a new b\n" * 20)
    repo.commit("a new b")
    repo.git("rm", "-q", "b.py")
    repo.commit("drop the new b")
    assert chains(str(repo.path), [start], head(repo))[start].follow("a.py") == "c.py"


def test_a_commit_that_ends_a_new_file_under_an_old_name_still_moves_the_rest(repo: Repo) -> None:
    repo.write("a.py", ALPHA)
    repo.write("d.py", "delta\n" * 20)
    repo.commit("files")
    start = head(repo)
    move(repo, "a.py", "b.py")
    repo.write("a.py", "a new file with the old name\n" * 20)
    repo.commit("new a")
    repo.git("rm", "-q", "a.py", "d.py")
    repo.commit("drop the new a and d")
    assert chains(str(repo.path), [start], head(repo)) == {start: Chain(start, {"a.py": "b.py", "d.py": None})}
