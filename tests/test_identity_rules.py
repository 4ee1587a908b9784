"""The rules of store identity and scope keys (found by mutation testing of `scope/identity.py`).

Each test pins a rule of `scope/identity` where a changed comparison, constant or word would show: how a path
is normalised and a label cleaned, how HEAD and refs are read without git, which store a directory belongs to,
the worktrees git lists, and the branch or commit a scope key names. Real repositories throughout.
"""

from __future__ import annotations

import hashlib
import locale
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cortex_engine.scope import identity
from cortex_engine.scope.identity import (
    BRANCH_TAG,
    Scope,
    branch_key,
    branch_tips,
    detect_scope,
    list_worktrees,
    locate_git,
    normalize_scope_path,
    project_scope_key,
    read_head,
    sanitize_label,
    scope_key_branch,
    scope_key_oid,
    store_identity,
)
from cortex_engine.store.redact import clean_text

from .conftest import Repo, git

OID = "0123456789abcdef0123456789abcdef01234567"


def scope(type_: str, *, worktree: str = "/w/repo", branch: str | None = None, oid: str | None = None) -> Scope:
    """A scope of `type_` with only what its label reads."""
    return Scope(type_, "k", worktree, None, branch, oid, None)  # type: ignore[arg-type]


def test_a_scope_is_labelled_by_its_branch_its_commit_or_its_folder() -> None:
    assert scope("branch", branch="main").label == "main"
    assert scope("branch", branch="my branch").label == '"my branch"'
    assert scope("detached", oid=OID).label == "detached@0123456"
    assert scope("project", worktree="/w/repo/").label == "repo"
    assert scope("project", worktree="/").label == "project"
    assert scope("branch", branch=None, worktree="/w/x").label == "x"
    assert scope("detached", oid=None, worktree="/w/y").label == "y"
    assert scope("project", branch="main", oid=OID, worktree="/w/z").label == "z"


def test_scope_paths_are_absolute_forward_slashed_collapsed_and_lowercased(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert normalize_scope_path("/A//B///C/") == "/a/b/c"
    assert normalize_scope_path("/") == "/"
    assert normalize_scope_path("//") == "/"
    assert normalize_scope_path("/x\\Y") == "/x/y"
    monkeypatch.chdir(tmp_path)
    assert normalize_scope_path("Sub") == f"{str(tmp_path).lower()}/sub"


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ("My Repo!!", "My-Repo"),
        ("-._repo._-", "repo"),
        ("a b\tc", "a-b-c"),
        ("x" * 40, "x" * 32),
        ("x" * 31 + "-yyy", "x" * 31),
        ("x" * 31 + ".yyy", "x" * 31),
        ("x" * 31 + "_yyy", "x" * 31),
        ("ok.name_1-2", "ok.name_1-2"),
        ("", "project"),
        ("!!!", "project"),
        ("._-", "project"),
    ],
)
def test_store_labels_are_cleaned_and_cut(raw: str, label: str) -> None:
    assert sanitize_label(raw) == label


def test_git_locates_the_worktree_its_common_dir_and_its_git_dir(repo: Repo, tmp_path: Path) -> None:
    sub = repo.write("src/a.py").parent
    found = locate_git(str(sub))
    assert found is not None
    real = os.path.realpath(repo.path)
    assert (found.worktree, found.common_dir, found.git_dir) == (real, f"{real}/.git", f"{real}/.git")
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "feature", str(linked))
    other = locate_git(str(linked))
    assert other is not None
    assert other.worktree == os.path.realpath(linked) and other.common_dir == f"{real}/.git"
    assert other.git_dir == f"{real}/.git/worktrees/linked"
    outside = tmp_path / "outside"
    outside.mkdir()
    assert locate_git(str(outside)) is None
    assert locate_git(str(tmp_path / "missing")) is None


def write_head(git_dir: Path, text: str) -> None:
    (git_dir / "HEAD").write_text(text, encoding="utf-8")


def test_head_is_read_without_git(tmp_path: Path) -> None:
    git_dir = tmp_path / "g"
    (git_dir / "refs" / "heads" / "feat").mkdir(parents=True)
    (git_dir / "refs" / "heads" / "feat" / "x").write_text(OID.upper() + "\n", encoding="utf-8")
    write_head(git_dir, "ref: refs/heads/feat/x\n")
    assert read_head(str(git_dir), str(git_dir)) == ("feat/x", OID)
    write_head(git_dir, "ref:refs/heads/unborn")
    assert read_head(str(git_dir), str(git_dir)) == ("unborn", None)
    write_head(git_dir, "ref: refs/remotes/origin/x")
    assert read_head(str(git_dir), str(git_dir)) == ("refs/remotes/origin/x", None)
    write_head(git_dir, f"  {OID.upper()}\n")
    assert read_head(str(git_dir), str(git_dir)) == (None, OID)
    write_head(git_dir, "a" * 64)
    assert read_head(str(git_dir), str(git_dir)) == (None, "a" * 64)
    for junk in ("a" * 39, "a" * 65, "g" * 40, "", "refs/heads/main"):
        write_head(git_dir, junk)
        assert read_head(str(git_dir), str(git_dir)) == (None, None), junk
    assert read_head(str(tmp_path / "none"), str(git_dir)) == (None, None)


def test_a_branch_name_that_is_not_utf8_is_kept_exactly(tmp_path: Path) -> None:
    git_dir = tmp_path / "g"
    git_dir.mkdir()
    (git_dir / "HEAD").write_bytes(b"ref: refs/heads/caf\xe9\n")
    assert read_head(str(git_dir), str(git_dir)) == ("caf\udce9", None)


def test_a_ref_is_read_from_the_worktree_then_the_common_dir_then_packed_refs(tmp_path: Path) -> None:
    own, common = tmp_path / "own", tmp_path / "common"
    for base in (own, common):
        (base / "refs" / "heads").mkdir(parents=True)
    write_head(own, "ref: refs/heads/main")
    other = "f" * 40
    (common / "packed-refs").write_text(
        f"# pack-refs with: peeled\n{'C' * 40} refs/heads/main\n^{'d' * 40}\n{other} refs/heads/mainline\n",
        encoding="utf-8",
    )
    assert read_head(str(own), str(common)) == ("main", "c" * 40)
    (common / "refs" / "heads" / "main").write_text("not an oid\n", encoding="utf-8")
    assert read_head(str(own), str(common)) == ("main", "c" * 40)  # a broken loose ref: on to packed-refs
    (common / "refs" / "heads" / "main").write_text("b" * 40, encoding="utf-8")
    assert read_head(str(own), str(common)) == ("main", "b" * 40)
    (own / "refs" / "heads" / "main").write_text("a" * 40, encoding="utf-8")
    assert read_head(str(own), str(common)) == ("main", "a" * 40)
    write_head(own, "ref: refs/heads/mainline")
    assert read_head(str(own), str(common)) == ("mainline", other)
    write_head(own, "ref: refs/heads/gone")
    assert read_head(str(own), str(common)) == ("gone", None)
    (common / "packed-refs").unlink()
    assert read_head(str(own), str(common)) == ("gone", None)


def test_scopes_of_a_branch_a_detached_head_an_unborn_repository_and_no_git(repo: Repo, tmp_path: Path) -> None:
    real = os.path.realpath(repo.path)
    root, tree = normalize_scope_path(f"{real}/.git"), normalize_scope_path(real)
    oid = repo.git("rev-parse", "HEAD").strip()
    assert detect_scope(str(repo.path)) == Scope(
        "branch", f"branch:{root}:{tree}:main", real, f"{real}/.git", "main", oid, f"{real}/.git"
    )
    repo.git("checkout", "-q", "--detach")
    assert detect_scope(str(repo.path)) == Scope(
        "detached", f"detached:{root}:{tree}:{oid}", real, f"{real}/.git", None, oid, f"{real}/.git"
    )
    loc = locate_git(str(repo.path))
    write_head(repo.path / ".git", "junk")
    assert detect_scope(str(repo.path), loc) == Scope(
        "project", f"project:{tree}", real, f"{real}/.git", None, None, f"{real}/.git"
    )
    outside = tmp_path / "Plain"
    outside.mkdir()
    plain = os.path.realpath(outside)
    assert detect_scope(str(outside)) == Scope(
        "project", f"project:{normalize_scope_path(plain)}", plain, None, None, None, None
    )
    assert detect_scope(str(repo.path), None).type == "project"  # a location given as "not in git" is believed


def test_a_branch_key_is_the_name_unless_storing_it_would_change_it() -> None:
    assert branch_key("main") == "main"
    assert branch_key("feature/long-name") == "feature/long-name"
    raw = "feat\u200bx"
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]
    assert branch_key(raw) == f"featx{BRANCH_TAG}{digest}"
    short = "x\u200by"
    assert branch_key(short) == f"xy{BRANCH_TAG}{hashlib.sha256(short.encode()).hexdigest()[:16]}"
    secret = "fix/token=" + "a1B2c3D4e5F6g7H8i9J0" * 2
    digest = hashlib.sha256(secret.encode()).hexdigest()[:16]
    assert branch_key(secret) == f"fix/token=[REDACTED]{BRANCH_TAG}{digest}"
    assert (
        branch_key(secret.replace("a1", "b2"))
        == f"fix/token=[REDACTED]{BRANCH_TAG}" + hashlib.sha256(secret.replace("a1", "b2").encode()).hexdigest()[:16]
    )


def test_branch_tips_are_keyed_like_scopes(repo: Repo, tmp_path: Path) -> None:
    main = repo.git("rev-parse", "HEAD").strip()
    repo.git("branch", "feat\u200bx")
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit("on topic")
    topic = repo.git("rev-parse", "HEAD").strip()
    repo.git("tag", "v1")
    assert branch_tips(str(repo.path)) == {"main": main, branch_key("feat\u200bx"): main, "topic": topic}
    outside = tmp_path / "outside"
    outside.mkdir()
    assert branch_tips(str(outside)) is None
    assert branch_tips(str(tmp_path / "missing")) is None


def test_the_project_layer_key() -> None:
    assert project_scope_key("/Work/Repo/") == "project:/work/repo"
    assert project_scope_key(None) == "project:default" and project_scope_key("") == "project:default"


def test_a_store_is_found_by_the_common_dir_and_labelled_by_the_repository(repo: Repo, tmp_path: Path) -> None:
    home = tmp_path / "home"
    real = os.path.realpath(repo.path)
    ident = store_identity(str(repo.path / "."), home)
    store_id = hashlib.sha256(f"{real}/.git".encode()).hexdigest()[:16]
    assert ident.store_id == store_id and ident.label == "repo" and ident.identifying_path == f"{real}/.git"
    assert ident.store_dir == home / "projects" / f"repo-{store_id}"
    assert ident.db_path == ident.store_dir / "cortex.db"
    assert ident.degraded_reason is None and ident.root == real
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "feature", str(linked))
    other = store_identity(str(linked), home)
    assert other.store_id == store_id and other.root == os.path.realpath(linked)


def test_a_bare_repository_s_worktree_is_labelled_without_the_git_suffix(repo: Repo, tmp_path: Path) -> None:
    for name, label in (("Proj.git", "Proj"), ("plainbare", "plainbare"), ("x.gi", "x.gi")):
        bare = tmp_path / name
        repo.git("clone", "-q", "--bare", str(repo.path), str(bare))
        linked = tmp_path / f"wt-{label}"
        git(bare, "worktree", "add", "-q", str(linked), "main")
        ident = store_identity(str(linked), tmp_path)
        assert (ident.label, ident.identifying_path) == (label, os.path.realpath(bare))


def test_outside_git_the_store_is_the_folder_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "My Notes"
    folder.mkdir()
    real = os.path.realpath(folder)
    ident = store_identity(str(folder), tmp_path)
    store_id = hashlib.sha256(real.encode()).hexdigest()[:16]
    assert (ident.store_id, ident.label, ident.identifying_path, ident.root) == (store_id, "My-Notes", real, real)
    assert ident.degraded_reason == (
        f"not a git repository; identity falls back to the working directory realpath ({real})"
    )
    assert ident.store_dir == tmp_path / "projects" / f"My-Notes-{store_id}"
    monkeypatch.setenv("CORTEX_HOME", str(tmp_path / "cortex"))
    assert store_identity(str(folder)).store_dir == tmp_path / "cortex" / "projects" / f"My-Notes-{store_id}"


def test_worktrees_are_listed_main_first_without_the_pruned(repo: Repo, tmp_path: Path) -> None:
    real = os.path.realpath(repo.path)
    main = repo.git("rev-parse", "HEAD").strip()
    feature, detached, gone = tmp_path / "feature", tmp_path / "detached", tmp_path / "gone"
    repo.git("worktree", "add", "-q", "-b", "feature", str(feature))
    repo.git("worktree", "add", "-q", "--detach", str(detached))
    repo.git("worktree", "add", "-q", "-b", "gone", str(gone))
    for child in sorted(gone.rglob("*"), reverse=True):
        child.unlink() if child.is_file() or child.is_symlink() else child.rmdir()
    gone.rmdir()
    found = list_worktrees(str(repo.path))
    assert [(w.path, w.head, w.branch) for w in found] == [
        (real, main, "main"),
        (os.path.realpath(detached), main, None),
        (os.path.realpath(feature), main, "feature"),
    ]
    outside = tmp_path / "outside"
    outside.mkdir()
    assert list_worktrees(str(outside)) == []


def test_a_bare_repository_is_listed_first_without_a_branch(repo: Repo, tmp_path: Path) -> None:
    bare = tmp_path / "b.git"
    repo.git("clone", "-q", "--bare", str(repo.path), str(bare))
    linked = tmp_path / "linked"
    git(bare, "worktree", "add", "-q", str(linked), "main")
    found = list_worktrees(str(linked))
    assert [(w.path, w.branch) for w in found] == [(os.path.realpath(bare), None), (os.path.realpath(linked), "main")]


def test_the_branch_or_commit_a_scope_key_names() -> None:
    assert scope_key_branch("branch:/r/.git:/r:feature/x") == "feature/x"
    assert scope_key_branch("branch:/r:main") is None
    assert scope_key_branch("detached:/r/.git:/r:main") is None
    assert scope_key_oid(f"detached:/r/.git:/r:{OID}") == OID
    assert scope_key_oid("detached:/r/.git:/r:ABCD") == "ABCD"
    assert scope_key_oid("detached:/r/.git:/r:abc") is None
    assert scope_key_oid(f"detached:/r:{OID}") is None
    assert scope_key_oid(f"branch:/r/.git:/r:{OID}") is None
    assert scope_key_oid("detached:/r/.git:/r:" + "a" * 65) is None


def test_labels_and_paths_strip_only_their_own_characters() -> None:
    assert sanitize_label("XBOX") == "XBOX" and sanitize_label("box-X") == "box-X"
    assert sanitize_label("x" * 31 + "X") == "x" * 31 + "X"
    assert normalize_scope_path("/BOX") == "/box"
    assert normalize_scope_path("/x\\") == "/x"


def test_a_branch_key_keeps_the_exact_bytes_of_a_name_that_is_not_utf8() -> None:
    odd = "caf\udce9\u200bx"
    raw = b"caf\xe9\xe2\x80\x8bx"
    assert branch_key(odd) == f"caf\ufffdx{BRANCH_TAG}{hashlib.sha256(raw).hexdigest()[:16]}"


def test_a_branch_key_that_storing_would_still_change_is_its_digest_alone() -> None:
    raw = "fix/token=\u200b"
    assert branch_key(raw) == f"{BRANCH_TAG}{hashlib.sha256(raw.encode()).hexdigest()[:16]}"


def test_branch_tips_keep_a_branch_name_that_is_not_utf8(repo: Repo) -> None:
    subprocess.run([b"git", b"branch", b"caf\xe9"], cwd=repo.path, check=True, capture_output=True)
    main = repo.git("rev-parse", "HEAD").strip()
    tips = branch_tips(str(repo.path))
    assert tips == {"main": main, branch_key("caf\udce9"): main}


def test_git_is_asked_without_optional_locks_and_in_the_c_locale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    script = fake / "git"
    script.write_text(
        '#!/bin/sh\nprintf "%s\\n" "${GIT_OPTIONAL_LOCKS-unset}" "${LC_ALL-unset}" "x"\n', encoding="utf-8"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("GIT_OPTIONAL_LOCKS", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    found = locate_git(str(work))
    assert found is not None
    assert (os.path.basename(found.worktree), os.path.basename(found.common_dir)) == ("0", "C")


def test_branch_tips_ask_git_without_optional_locks_and_in_the_c_locale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    script = fake / "git"
    script.write_text(
        '#!/bin/sh\nprintf "%s refs/heads/%s\\n" "${GIT_OPTIONAL_LOCKS-unset}" "${LC_ALL-unset}"\n', encoding="utf-8"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("GIT_OPTIONAL_LOCKS", raising=False)
    assert branch_tips(str(tmp_path)) == {"C": "0"}


def test_a_bare_repository_named_with_git_loses_exactly_that_suffix(repo: Repo, tmp_path: Path) -> None:
    bare = tmp_path / "Project.git"
    repo.git("clone", "-q", "--bare", str(repo.path), str(bare))
    linked = tmp_path / "wt"
    git(bare, "worktree", "add", "-q", str(linked), "main")
    assert store_identity(str(linked), tmp_path).label == "Project"


def test_worktree_paths_keep_their_spaces_and_a_pruned_one_ends_nothing(repo: Repo, tmp_path: Path) -> None:
    gone, spaced = tmp_path / "a-gone", tmp_path / "b with  spaces"
    repo.git("worktree", "add", "-q", "-b", "gone", str(gone))
    repo.git("worktree", "add", "-q", "-b", "spaced", str(spaced))
    for child in sorted(gone.rglob("*"), reverse=True):
        child.unlink() if child.is_file() or child.is_symlink() else child.rmdir()
    gone.rmdir()
    found = list_worktrees(str(repo.path))
    assert [(w.path, w.branch) for w in found] == [
        (os.path.realpath(repo.path), "main"),
        (os.path.realpath(spaced), "spaced"),
    ]


# -- how long git may take, the locale a ref file is read in, the shortest branch name storing could change ------------


def slow_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str) -> None:
    """A `git` first on PATH that prints `answer` after `$FAKE_GIT_SLEEP` seconds (none by default)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    script = fake / "git"
    script.write_text(f'#!/bin/sh\nsleep "${{FAKE_GIT_SLEEP:-0}}"\nprintf "{answer}"\n', encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("FAKE_GIT_SLEEP", raising=False)


LIMIT_S = 2.0
"""The time limit the tests below set: long enough for a quick fake to answer on a loaded machine."""


def test_git_is_given_ten_seconds() -> None:
    """The limit itself: ten seconds (a hung git costs a hook at most that, then the scope is decided without it)."""
    assert identity.GIT_TIMEOUT_S == 10


def test_a_git_slower_than_the_time_limit_is_not_waited_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    slow_git(tmp_path, monkeypatch, f"{work}\\n{work}/.git\\n{work}/.git\\n")
    monkeypatch.setattr(identity, "GIT_TIMEOUT_S", LIMIT_S)
    found = locate_git(str(work))
    assert found is not None and found.worktree == os.path.realpath(work)  # the fake answers when it is quick
    monkeypatch.setenv("FAKE_GIT_SLEEP", str(2 * LIMIT_S))
    assert locate_git(str(work)) is None  # a hung git: the directory is taken as outside git, not waited on


def test_branch_tips_do_not_wait_for_a_git_slower_than_the_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_git(tmp_path, monkeypatch, f"{OID} refs/heads/main\\n")
    monkeypatch.setattr(identity, "GIT_TIMEOUT_S", LIMIT_S)
    assert branch_tips(str(tmp_path)) == {"main": OID}
    monkeypatch.setenv("FAKE_GIT_SLEEP", str(2 * LIMIT_S))
    assert branch_tips(str(tmp_path)) is None


@pytest.fixture
def ascii_locale() -> Iterator[None]:
    """The process's LC_CTYPE set to C: text read without a named encoding decodes ASCII only."""
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, before)


def test_a_packed_branch_named_past_ascii_is_resolved_in_any_locale(repo: Repo, ascii_locale: None) -> None:
    repo.git("checkout", "-q", "-b", "café")
    repo.git("pack-refs", "--all")
    oid = repo.git("rev-parse", "HEAD").strip()
    assert not (repo.path / ".git" / "refs" / "heads" / "café").exists()
    git_dir = str(repo.path / ".git")
    assert read_head(git_dir, git_dir) == ("café", oid)
    assert detect_scope(str(repo.path)).head_oid == oid


def test_a_loose_ref_holding_text_past_ascii_is_passed_over_in_any_locale(tmp_path: Path, ascii_locale: None) -> None:
    own, common = tmp_path / "own", tmp_path / "common"
    for base in (own, common):
        (base / "refs" / "heads").mkdir(parents=True)
    (own / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (own / "refs" / "heads" / "main").write_text("réf abîmée\n", encoding="utf-8")  # damaged: not an object id
    (common / "refs" / "heads" / "main").write_text(OID + "\n", encoding="utf-8")
    assert read_head(str(own), str(common)) == ("main", OID)


@pytest.mark.parametrize("name", ["sig=ab", "pwd=xy"])
def test_a_six_character_branch_name_that_storing_would_redact_gets_a_key_of_its_own(name: str) -> None:
    assert clean_text(name) != name  # six characters is the shortest a secret rule matches
    key = branch_key(name)
    assert clean_text(key) == key and BRANCH_TAG in key
    other = name[:-2] + "zz"
    assert branch_key(other) != key  # two such branches are two scopes, not one `[REDACTED]`
    assert branch_key("main12") == "main12" and branch_key("sig=a") == "sig=a"


def test_a_branch_packed_beside_one_whose_name_is_not_utf8_is_still_resolved(repo: Repo) -> None:
    """`git gc` packs every branch into packed-refs, names that are not UTF-8 (`caf\\xe9`) with the rest: HEAD's
    branch is still resolved there, and a loose ref holding such bytes is passed over like any other broken one."""
    subprocess.run([b"git", b"branch", b"caf\xe9"], cwd=repo.path, check=True, capture_output=True)
    repo.git("pack-refs", "--all")
    oid = repo.git("rev-parse", "HEAD").strip()
    git_dir = repo.path / ".git"
    assert read_head(str(git_dir), str(git_dir)) == ("main", oid)
    assert detect_scope(str(repo.path)).head_oid == oid
    subprocess.run([b"git", b"checkout", b"-q", b"caf\xe9"], cwd=repo.path, check=True, capture_output=True)
    assert read_head(str(git_dir), str(git_dir)) == ("caf\udce9", oid)
    (git_dir / "refs" / "heads" / "main").write_bytes(b"\xff\xfe not an oid\n")
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    assert read_head(str(git_dir), str(git_dir)) == ("main", oid)
