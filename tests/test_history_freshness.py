"""Freshness on real history: each class of miss rebuilt with real git commands, verdict asserted per path."""

from __future__ import annotations

import json

from cortex_engine.engine import Engine

from .conftest import Repo
from .test_cli import ok, ok_json

LINES = "".join(f"line_{n:02d} = {n} * {n}  # value number {n}\n" for n in range(20))
OTHER = "".join(f"totally_different_{n:02d} = 'rewritten {n}'\n" for n in range(20))


def verdicts(engine: Engine) -> dict[str, tuple[str, str | None]]:
    """Every referenced path of the scope's memories: (status, moved_to) from `validate-memory`."""
    report = engine.validate_memory(persist=False)
    found: dict[str, tuple[str, str | None]] = {}
    for item in report["items"]:
        for ref in item["references"]:
            found[ref["path"]] = (ref["status"], ref["moved_to"])
    return found


def refs_of(engine: Engine, text: str, subject: str | None = None) -> list[str]:
    """The paths a note written now records as references."""
    engine.note("insight", text, subject)
    item = engine.list_memory(limit=1).items[0]
    return [r["path"] for r in engine.inspect_memory(str(item["id"])).references]


def test_move_then_rewrite_in_the_next_commit_is_moved(repo: Repo, make_engine) -> None:
    """A pure move followed by a full rewrite is a delete + add across the gap, but a rename per commit."""
    repo.write("pkg/__init__.py", LINES)
    repo.write("pkg/core.py", LINES.replace("value", "core"))
    repo.write("tests/__init__.py", "")
    repo.commit("package at the root")
    engine = make_engine(repo.path)
    engine.note("decision", "pkg/__init__.py exports the API; pkg/core.py holds the loop", "layout")
    (repo.path / "src").mkdir()
    repo.git("mv", "pkg", "src/pkg")
    repo.commit("move the package into src/")
    repo.write("src/pkg/__init__.py", OTHER)
    repo.write("src/pkg/core.py", OTHER.replace("rewritten", "sorted"))
    repo.commit("sort imports (rewrites every line)")
    assert verdicts(engine) == {
        "pkg/__init__.py": ("moved", "src/pkg/__init__.py"),
        "pkg/core.py": ("moved", "src/pkg/core.py"),
    }


def test_a_file_renamed_twice_between_two_sessions_reads_moved_to_its_last_name(repo: Repo, make_engine) -> None:
    """a → b → c in two commits with no session between: the chain is followed to the end, not one commit deep
    (every test refreshed between renames, so following one commit passed)."""
    repo.write("app/a.py", LINES)
    repo.commit("a")
    make_engine(repo.path).note("decision", "the entry point lives in app/a.py", "entry")
    repo.git("mv", "app/a.py", "app/b.py")
    repo.commit("a to b")
    repo.git("mv", "app/b.py", "app/c.py")
    repo.commit("b to c")
    engine = make_engine(repo.path)  # the next session
    assert verdicts(engine) == {"app/a.py": ("moved", "app/c.py")}
    assert "[moved: app/a.py → app/c.py]" in engine.recall("entry point").text


def test_move_at_sixty_percent_similarity_is_moved(repo: Repo, make_engine) -> None:
    """Git's default threshold is 50 %: a rename scored 60 % in its own commit is followed."""
    body = "".join(f"keep_{n} = {n}\n" for n in range(10))
    repo.write("app/handlers.py", body)
    repo.commit("handlers")
    engine = make_engine(repo.path)
    engine.note("decision", "requests are routed in app/handlers.py", "routing")
    repo.git("mv", "app/handlers.py", "app/routes.py")
    lines = body.splitlines(keepends=True)
    repo.write("app/routes.py", "".join(lines[:6]) + "".join(f"new_{n} = {n}\n" for n in range(4)))
    repo.commit("rename and rework")
    score = repo.git("log", "-1", "-M", "--name-status", "--format=").split()[0]
    assert score == "R060"
    assert verdicts(engine) == {"app/handlers.py": ("moved", "app/routes.py")}


def test_root_files_deleted_and_renamed(repo: Repo, make_engine) -> None:
    """Bare root file names are references; a deleted one is missing, one moved into a package is moved."""
    repo.write("setup.py", "from setuptools import setup\n" * 5)
    repo.write("click.py", LINES)
    repo.write("main.py", "print('hi')\n")
    repo.commit("root files")
    engine = make_engine(repo.path)
    assert refs_of(engine, "setup.py builds the wheel", "build") == ["setup.py"]
    assert refs_of(engine, "./main.py is the entrypoint; README.md explains it", "entry") == ["main.py", "README.md"]
    engine.note("decision", "click.py is a single module for now", "module")
    repo.git("rm", "-q", "setup.py")
    (repo.path / "src/click").mkdir(parents=True)
    repo.git("mv", "click.py", "src/click/__init__.py")
    repo.commit("drop setup.py, turn click.py into a package")
    assert verdicts(engine) == {
        "setup.py": ("missing", None),
        "main.py": ("exists", None),
        "README.md": ("exists", None),
        "click.py": ("moved", "src/click/__init__.py"),
    }


def test_prose_with_dots_is_not_a_reference(repo: Repo, make_engine) -> None:
    """`e.g.`, `i.e.`, `Node.js` are words unless the repository tracks a file of that name at its root."""
    engine = make_engine(repo.path)
    assert refs_of(engine, "e.g. use Node.js here, i.e. the v8 runtime; see notes.txt", "prose") == []
    repo.write("Node.js", "module.exports = 1\n")
    repo.commit("a file called Node.js")
    engine = make_engine(repo.path)
    assert refs_of(engine, "the shim lives in Node.js, e.g. for tests", "shim") == ["Node.js"]


def test_branch_and_remote_names_are_not_references(repo: Repo, make_engine) -> None:
    """Merge texts name branches (`origin/8.0.x`, `user/7.x`); refs and ref-shaped names never tracked are not paths."""
    repo.write("man/cortex.1", ".TH CORTEX 1\n")
    repo.commit("man page")
    repo.git("branch", "topic/lexer.c")
    repo.git("remote", "add", "upstream", "https://example.invalid/repo.git")
    engine = make_engine(repo.path)
    text = (
        "Merge pull request #3456 from user/7.x\n"
        "Merge remote-tracking branch 'origin/8.0.x' into main\n"
        "Merge branch 'feature/bash_completion_6.6'\n"
        "rebased on topic/lexer.c and upstream/docs.md; the man page is man/cortex.1"
    )
    assert refs_of(engine, text, "merges") == ["man/cortex.1"]


def test_duplicate_basenames(repo: Repo, make_engine) -> None:
    """A lone deleted `__init__.py` is missing (never the other one); one emptied as its folder moved follows it."""
    repo.write("tests/pkg/__init__.py", "from .helpers import *\n")
    repo.write("tests/pkg/helpers.py", LINES)
    repo.write("lib/old/__init__.py", "OLD = 1\n")
    repo.write("lib/new/__init__.py", "NEW = 1\n")
    repo.commit("packages")
    engine = make_engine(repo.path)
    engine.note("decision", "fixtures: tests/pkg/__init__.py re-exports tests/pkg/helpers.py", "fixtures")
    engine.note("decision", "lib/old/__init__.py keeps the shim", "shim")
    (repo.path / "tests/unit").mkdir()
    repo.git("mv", "tests/pkg", "tests/unit/pkg")
    repo.write("tests/unit/pkg/__init__.py", "")
    repo.git("rm", "-q", "lib/old/__init__.py")
    repo.commit("move the test package, empty its __init__, drop the old shim")
    assert verdicts(engine) == {
        "tests/pkg/__init__.py": ("moved", "tests/unit/pkg/__init__.py"),
        "tests/pkg/helpers.py": ("moved", "tests/unit/pkg/helpers.py"),
        "lib/old/__init__.py": ("missing", None),
    }
    assert "[stale: missing lib/old/__init__.py]" in engine.recall("shim").text


def _rebase_away(repo: Repo) -> None:
    """Drop the last commit from the branch and commit a rename on the new tip instead."""
    repo.git("reset", "-q", "--hard", "HEAD~1")
    (repo.path / "engine").mkdir()
    repo.git("mv", "core/loop.py", "engine/loop.py")
    repo.commit("move the loop")


def test_rebased_away_head_follows_from_the_merge_base(repo: Repo, make_engine) -> None:
    """A note written on a commit later dropped is followed from its merge base with the new HEAD."""
    repo.write("core/loop.py", LINES)
    repo.commit("loop")
    repo.write("core/extra.py", "EXTRA = 1\n")
    repo.commit("extra (to be dropped)")
    engine = make_engine(repo.path)
    engine.note("decision", "core/loop.py drives core/extra.py", "loop")
    _rebase_away(repo)
    assert verdicts(engine) == {
        "core/loop.py": ("moved", "engine/loop.py"),
        "core/extra.py": ("missing", None),
    }


def test_unreachable_recorded_head_is_unverified(repo: Repo, make_engine) -> None:
    """When git no longer knows the recorded HEAD at all, a gone path is `refs unverified`, not a guess."""
    repo.write("core/loop.py", LINES)
    repo.write("README.md", "# kept\n")
    repo.commit("loop")
    repo.write("core/extra.py", "EXTRA = 1\n")
    repo.commit("extra (to be dropped)")
    engine = make_engine(repo.path)
    engine.note("decision", "core/loop.py is documented in README.md", "loop")
    _rebase_away(repo)
    repo.git("update-ref", "-d", "ORIG_HEAD")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert verdicts(engine) == {"core/loop.py": ("unknown", None), "README.md": ("exists", None)}
    report = engine.validate_memory(persist=False)
    assert report["items"][0]["validity"] == "refs unverified"
    assert "stale" not in engine.recall("loop").text


def test_every_json_surface_gives_one_verdict_per_path(repo: Repo, make_engine, tmp_path) -> None:
    """recall/validate/list/inspect --json carry every path's verdict, even past the label's `+N more`."""
    for n in range(5):
        repo.write(f"mod/part_{n}.py", LINES.replace("value", f"part{n}"))
    repo.commit("parts")
    engine = make_engine(repo.path)
    paths = [f"mod/part_{n}.py" for n in range(5)]
    engine.note("decision", "the parts are " + ", ".join(paths), "parts")
    for path in paths[:4]:
        repo.git("rm", "-q", path)
    repo.commit("drop four parts")
    expected = [{"path": p, "verdict": "missing", "to": None} for p in paths[:4]]
    expected.append({"path": paths[4], "verdict": "exists", "to": None})
    surface = engine.recall("parts")
    assert "+1 more" in surface.text
    assert surface.to_dict()["items"][0]["references"] == expected
    listed = engine.list_memory(limit=1).to_dict()["items"][0]
    assert listed["references"] == expected
    inspected = engine.inspect_memory(str(listed["id"])).to_dict()["references"]
    assert [{k: r[k] for k in ("path", "verdict", "to")} for r in inspected] == expected
    validated = engine.validate_memory(persist=False)["items"][0]["references"]
    assert [{k: r[k] for k in ("path", "verdict", "to")} for r in validated] == expected


def test_warm_check_reuses_the_stored_chain(repo: Repo, make_engine) -> None:
    """The walk is stored per (recorded HEAD, current HEAD): a second engine judges without re-walking."""
    repo.write("a/one.py", LINES)
    repo.commit("one")
    engine = make_engine(repo.path)
    engine.note("decision", "a/one.py is the entry", "entry")
    repo.git("mv", "a/one.py", "a/two.py")
    repo.commit("two")
    assert verdicts(engine) == {"a/one.py": ("moved", "a/two.py")}
    rows = engine.conn.execute("SELECT from_oid, to_oid, moves_json FROM rename_chains").fetchall()
    head = repo.git("rev-parse", "HEAD").strip()
    assert [(r["to_oid"], json.loads(r["moves_json"])) for r in rows] == [(head, {"a/one.py": "a/two.py"})]


def test_validate_all_scopes_checks_each_against_its_own_checkout(repo: Repo, make_engine, tmp_path) -> None:
    """Worktrees are checked live, a branch without one at its tip, a deleted branch is reported unchecked."""
    repo.write("a/x.py", LINES)
    repo.commit("x")
    main = make_engine(repo.path)
    main.note("decision", "main keeps a/x.py", "main x")

    def worktree(name: str, branch: str) -> Repo:
        path = tmp_path / name
        repo.git("worktree", "add", "-q", "-b", branch, str(path))
        return Repo(path)

    feat = worktree("wt-feat", "feat")
    make_engine(feat.path).note("decision", "feat keeps a/x.py", "feat x")
    (feat.path / "b").mkdir()
    feat.git("mv", "a/x.py", "b/x.py")
    feat.commit("feat moves x")
    side = worktree("wt-side", "side")
    make_engine(side.path).note("decision", "side keeps a/x.py", "side x")
    side.git("rm", "-q", "a/x.py")
    side.commit("side drops x")
    repo.git("worktree", "remove", str(side.path))
    gone = worktree("wt-gone", "gone")
    make_engine(gone.path).note("decision", "gone keeps a/x.py", "gone x")
    repo.git("worktree", "remove", str(gone.path))
    repo.git("branch", "-D", "gone")

    report = main.validate_memory(all_scopes=True, persist=False)
    by_subject = {
        item["subject"]: [(r["path"], r["verdict"], r["to"]) for r in item["references"]] for item in report["items"]
    }
    assert by_subject == {
        "main x": [("a/x.py", "exists", None)],
        "feat x": [("a/x.py", "moved", "b/x.py")],
        "side x": [("a/x.py", "missing", None)],
    }
    against = {s["scope_key"].rsplit(":", 1)[1]: (s["against"], s["checked"]) for s in report["scopes"]}
    tip = repo.git("rev-parse", "side").strip()
    assert against == {"main": ("worktree", 1), "feat": ("worktree", 1), "side": ("branch tip", 1)}
    assert [s["where"] for s in report["scopes"] if s["against"] == "branch tip"] == [tip]
    assert [(u["scope_key"].rsplit(":", 1)[1], u["reason"]) for u in report["unchecked"]] == [
        ("gone", "branch gone no longer exists")
    ]


def test_cli_validate_all_scopes_names_what_it_could_not_check(repo: Repo, make_engine, tmp_path) -> None:
    """`cortex validate-memory --all-scopes` prints each scope's count and an unchecked line; --json lists both."""
    repo.write("a/x.py", LINES)
    repo.commit("x")
    make_engine(repo.path).note("decision", "main keeps a/x.py", "main x")
    gone = tmp_path / "wt-gone"
    repo.git("worktree", "add", "-q", "-b", "gone", str(gone))
    make_engine(gone).note("decision", "gone keeps a/x.py", "gone x")
    repo.git("worktree", "remove", str(gone))
    repo.git("branch", "-D", "gone")
    text = ok(repo.path, "validate-memory", "--all-scopes").splitlines()
    assert text[0] == "checked 1 memory; 0 stale; references: 1 exists, 0 missing, 0 moved, 0 unknown"
    assert [line.split(": ", 1)[1] for line in text if line.startswith("scope ")] == [
        f"1 checked, 0 stale (against worktree {repo.path.resolve()})",
        "not checked (branch gone no longer exists)",
    ]
    data = ok_json(repo.path, "validate-memory", "--all-scopes")
    assert [s["against"] for s in data["scopes"]] == ["worktree"]
    assert [u["reason"] for u in data["unchecked"]] == ["branch gone no longer exists"]
