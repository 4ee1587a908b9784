"""The rules of following paths through git history (found by mutation testing of `scope/history.py`).

Each test walks a real repository: renames chained commit by commit, deletes, a rebased-away start, an
unknown commit, the folder rule for a file git cannot pair, and composing two chains.
"""

from __future__ import annotations

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
