"""The freshness verdicts' rules at their boundaries (found by mutation testing of `scope/freshness.py`).

A `Validation` gathers what the checkout says about one item's references and anchors; every surface reads its
label (`[stale: …]`, `[moved: …]`, `[drifted: …]`), its one-word validity and its ranking term from here.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import pytest

from cortex_engine.engine import Engine
from cortex_engine.scope import history, inventory
from cortex_engine.scope.freshness import AnchorVerdict, RefVerdict, Validation, Validator, checkouts
from cortex_engine.scope.identity import branch_key, detect_scope
from cortex_engine.scope.inventory import parse_renames as _parse_renames

from .conftest import Repo


def ref(path: str, status: str, moved_to: str | None = None) -> RefVerdict:
    """One file reference's verdict."""
    return RefVerdict(path, "file", status, moved_to)


def anchor(name: str, status: str) -> AnchorVerdict:
    """One anchor's verdict (`name` as labels show it, `path:symbol`)."""
    path = name.split(":", 1)[0]
    return AnchorVerdict(1, name, path, path, name.split(":", 1)[1], 1, 3, "h", None, status)


def test_the_label_names_up_to_three_missing_then_counts_the_rest() -> None:
    three = Validation(refs=tuple(ref(f"f{n}.py", "missing") for n in range(3)))
    assert three.label == "stale: missing f0.py, f1.py, f2.py"
    four = Validation(
        refs=tuple(ref(f"f{n}.py", "missing") for n in range(3)) + (ref("x.py", "exists"),),
        anchors=(anchor("g.py:run", "missing"),),
    )
    assert four.label == "stale: missing f0.py, f1.py, f2.py, +1 more"


def test_the_label_names_up_to_two_moves_and_two_drifts() -> None:
    two = Validation(
        refs=(ref("a.py", "moved", "b.py"), ref("c.py", "moved", "d.py")),
        anchors=(anchor("e.py:f", "drifted"), anchor("g.py:h", "drifted")),
    )
    assert two.label == "moved: a.py → b.py, c.py → d.py; drifted: e.py:f changed, g.py:h changed"
    three = Validation(
        refs=(ref("a.py", "moved", "b.py"), ref("c.py", "moved", "d.py"), ref("x.py", "moved", "y.py")),
        anchors=(anchor("e.py:f", "drifted"), anchor("g.py:h", "drifted"), anchor("i.py:j", "drifted")),
    )
    assert three.label == ("moved: a.py → b.py, c.py → d.py, +1 more; drifted: e.py:f changed, g.py:h changed, +1 more")


def test_the_label_orders_stale_moved_drifted_and_quotes_names() -> None:
    v = Validation(
        refs=(
            ref("a b.py", "moved", "c.py"),
            ref("gone.py", "missing"),
            ref("ok.py", "exists"),
            ref("u.py", "unknown"),
        ),
        anchors=(anchor("k.py:f", "drifted"), anchor("k.py:g", "fresh")),
    )
    assert v.label == 'stale: missing gone.py; moved: "a b.py" → c.py; drifted: k.py:f changed'
    assert Validation(refs=(ref("ok.py", "exists"), ref("u.py", "unknown"))).label is None
    assert Validation().label is None


def test_counts_add_the_anchors_only_for_drifted_and_missing() -> None:
    v = Validation(
        refs=(ref("a.py", "missing"), ref("b.py", "exists")),
        anchors=(anchor("b.py:f", "missing"), anchor("b.py:g", "drifted"), anchor("b.py:h", "fresh")),
    )
    assert (v.count("missing"), v.count("drifted"), v.count("exists"), v.count("fresh")) == (2, 1, 1, 0)
    assert v.stale and v.drifted and not v.all_missing


def test_all_missing_needs_references_and_every_one_gone() -> None:
    assert Validation(refs=(ref("a.py", "missing"), ref("b.py", "missing"))).all_missing
    assert not Validation(refs=(ref("a.py", "missing"), ref("b.py", "moved", "c.py"))).all_missing
    assert not Validation().all_missing
    assert not Validation(anchors=(anchor("a.py:f", "missing"),)).all_missing
    assert Validation(anchors=(anchor("a.py:f", "missing"),)).stale


@pytest.mark.parametrize(
    ("refs", "anchors", "validity"),
    [
        ((), (), "no file refs"),
        (("missing", "unknown"), ("drifted",), "stale refs"),
        (("exists", "unknown"), ("drifted",), "code drifted"),
        (("exists", "unknown", "moved"), (), "refs unverified"),
        (("exists", "moved"), (), "refs moved"),
        (("exists",), ("fresh",), "refs OK"),
    ],
)
def test_validity_is_the_worst_verdict_in_one_word(
    refs: tuple[str, ...], anchors: tuple[str, ...], validity: str
) -> None:
    v = Validation(
        refs=tuple(ref(f"f{n}.py", s, "g.py" if s == "moved" else None) for n, s in enumerate(refs)),
        anchors=tuple(anchor(f"f0.py:s{n}", s) for n, s in enumerate(anchors)),
    )
    assert v.validity == validity


@pytest.mark.parametrize(
    ("refs", "drifts", "current", "historical"),
    [
        ((), 0, 0.0, 0.0),
        (("exists",), 0, 3.0, 3.0),
        (("moved",), 0, 3.0, 3.0),
        (("unknown",), 0, 0.0, 0.0),
        (("exists",), 1, -1.0, -0.5),
        (("exists",), 2, -3.0, -1.0),
        (("exists",), 3, -3.0, -1.0),
        (("missing",), 0, -5.0, -1.5),
        (("missing", "missing"), 0, -6.0, -3.0),
        (("missing",) * 4, 0, -8.0, -6.0),
        (("missing",) * 5, 0, -8.0, -7.5),
        (("missing", "exists"), 1, -5.0, -1.5),  # drift alongside a missing file ranks as the missing file
    ],
)
def test_the_ranking_term_is_graduated_and_capped(
    refs: tuple[str, ...], drifts: int, current: float, historical: float
) -> None:
    v = Validation(
        refs=tuple(ref(f"f{n}.py", s, "g.py" if s == "moved" else None) for n, s in enumerate(refs)),
        anchors=tuple(anchor(f"f0.py:s{n}", "drifted") for n in range(drifts)),
    )
    assert (v.ranking_score(False), v.ranking_score(True)) == (current, historical)


def test_each_path_has_its_verdict_in_the_json() -> None:
    v = Validation(
        refs=(ref("a.py", "moved", "b c.py"), ref("u.py", "unknown"), ref("ok.py", "exists")),
        anchors=(anchor("a.py:f", "drifted"), anchor("a.py:g", "fresh"), anchor("a.py:h", "missing")),
    )
    assert v.verdicts == [
        {"path": "a.py", "verdict": "moved", "to": '"b c.py"'},
        {"path": "u.py", "verdict": "unverified", "to": None},
        {"path": "ok.py", "verdict": "exists", "to": None},
        {"path": "a.py:f", "verdict": "drifted", "to": None},
        {"path": "a.py:h", "verdict": "missing", "to": None},
    ]


def test_renames_are_read_from_git_s_nul_separated_status() -> None:
    out = "M\0a.py\0R100\0old.py\0new.py\0C75\0x.py\0y.py\0D\0gone.py\0\0R090\0b.py\0c.py\0"
    assert _parse_renames(out) == [("old.py", "new.py"), ("b.py", "c.py")]
    assert _parse_renames("R100\0old.py") == []
    assert _parse_renames("") == []


# -- the Validator against real checkouts (through the store, as every surface reads it) --------------------------


def _validation(engine: Engine, item_id: str, **kw: object) -> Validation:
    """What a fresh pass says about one item of the engine's own scope."""
    return Validator(engine.conn, engine.scope, **kw).validate(item_id, engine.scope.key)  # type: ignore[arg-type]


def _as_before_heads_were_recorded(engine: Engine) -> None:
    """The store as an older version left it: references without the HEAD they were written on (`memory_references`
    is a view; its rows live in `item_refs`)."""
    engine.conn.execute("UPDATE item_refs SET head=NULL")
    assert engine.conn.execute("SELECT COUNT(*) FROM memory_references WHERE head_oid IS NOT NULL").fetchone()[0] == 0


def _renamed(engine: Engine, *hops: str) -> None:
    """The scope's accumulated rename map (`file_renames`) holds `hops[0] → hops[1] → …`."""
    for old, new in pairwise(hops):
        engine.conn.execute(
            "INSERT INTO file_renames(scope_key, old_path, new_path, head_oid, detected_at) VALUES (?,?,?,?,?)",
            (engine.scope.key, old, new, None, "2026-08-02T18:00:00Z"),
        )


def _legacy_note(repo: Repo, engine: Engine, path: str) -> str:
    """A note naming `path` (which then disappears from the checkout), stored without its HEAD."""
    repo.write(path)
    repo.commit(f"add {path}")
    item_id = engine.note("insight", f"the work happens in {path}").item_id
    _as_before_heads_were_recorded(engine)
    (repo.path / path).unlink()
    return item_id


@pytest.mark.parametrize(
    ("hops", "present", "verdict"),
    [
        (("s/a0.py", "t/a1.py", "u/a2.py"), ("u/a2.py",), ("moved", "u/a2.py")),
        (("s/a0.py", "t/a1.py", "u/a2.py"), ("t/a1.py",), ("missing", None)),  # only where the map ends counts
        (("s/a0.py", "t/a1.py", "t/a2.py", "t/a3.py", "t/a4.py", "t/a5.py"), ("t/a5.py",), ("moved", "t/a5.py")),
        (
            ("s/a0.py", "t/a1.py", "t/a2.py", "t/a3.py", "t/a4.py", "t/a5.py", "t/a6.py"),
            ("t/a6.py",),
            ("missing", None),
        ),
        (
            ("s/a0.py", "t/a1.py", "t/a2.py", "t/a3.py", "t/a4.py", "t/a5.py", "t/a6.py"),
            ("t/a5.py", "t/a6.py"),
            ("moved", "t/a5.py"),
        ),
        (("s/a0.py", "t/a1.py"), ("v/a0.py",), ("moved", "v/a0.py")),  # the map leads nowhere: a unique basename
    ],
)
def test_a_reference_without_its_head_follows_the_rename_map_for_at_most_five_hops(
    repo: Repo,
    make_engine: Callable[..., Engine],
    hops: tuple[str, ...],
    present: tuple[str, ...],
    verdict: tuple[str, str | None],
) -> None:
    engine = make_engine(repo.path)
    item_id = _legacy_note(repo, engine, hops[0])
    _renamed(engine, *hops)
    for path in present:
        repo.write(path)
    assert _validation(engine, item_id).refs == (RefVerdict(hops[0], "file", *verdict),)


def test_a_reference_without_its_head_is_found_by_basename_in_the_stored_inventory_first(
    repo: Repo, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(repo.path)
    item_id = _legacy_note(repo, engine, "src/feed.py")
    repo.write("lib/feed.py")
    repo.write("lib/keep.py")
    repo.commit("feed moved")
    engine.refresh()
    engine.conn.execute("DELETE FROM file_renames")
    monkeypatch.setattr(inventory, "rescan", lambda worktree: frozenset())  # the live listing is not asked
    (judged,) = _validation(engine, item_id).refs
    assert (judged.status, judged.moved_to) == ("moved", "lib/feed.py")


def test_a_stored_basename_match_gone_from_disk_falls_back_to_the_live_checkout(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    engine = make_engine(repo.path)
    item_id = _legacy_note(repo, engine, "src/feed.py")
    repo.write("lib/feed.py")
    repo.commit("feed moved")
    engine.refresh()
    engine.conn.execute("DELETE FROM file_renames")
    (repo.path / "lib/feed.py").rename(repo.path / "src/kept_feed.py")
    repo.write("web/feed.py")  # not in the stored inventory: only a rescan sees it
    assert _validation(engine, item_id).refs == (RefVerdict("src/feed.py", "file", "moved", "web/feed.py"),)


def test_a_reference_without_its_head_with_two_basename_matches_is_missing(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    engine = make_engine(repo.path)
    item_id = _legacy_note(repo, engine, "src/feed.py")
    repo.write("a/feed.py")
    repo.write("b/feed.py")
    assert _validation(engine, item_id).refs == (RefVerdict("src/feed.py", "file", "missing"),)


def test_absolute_paths_are_judged_on_disk_and_home_paths_need_a_home(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(repo.path)
    home = tmp_path / "elsewhere"
    (home / ".config").mkdir(parents=True)
    (home / ".config" / "tool.toml").write_text("x")
    key = engine.scope.key
    at_home = Validator(engine.conn, engine.scope, home=str(home))
    assert at_home.judge(key, "~/.config/tool.toml", "absolute_path").status == "exists"
    assert at_home.judge(key, "~/.config/gone.toml", "absolute_path").status == "missing"
    assert at_home.judge(key, str(home / ".config" / "tool.toml"), "absolute_path").status == "exists"
    assert at_home.judge(key, str(home / "nope"), "absolute_path").status == "missing"
    homeless = Validator(engine.conn, engine.scope, home="")
    assert homeless.judge(key, "~/.config/tool.toml", "absolute_path") == RefVerdict(
        "~/.config/tool.toml", "absolute_path", "unknown"
    )
    monkeypatch.setenv("HOME", str(home))
    assert Validator(engine.conn, engine.scope).judge(key, "~/.config/tool.toml", "absolute_path").status == "exists"


SESSION = "import os\n\n\ndef refresh_token(x):\n    y = x + 1\n    return y\n\n\ndef other(a):\n    return a * 2\n"


def test_an_anchor_verdict_carries_what_was_recorded_and_where_the_span_is_now(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    repo.write("src/auth/session.py", SESSION)
    repo.commit("session")
    head = repo.git("rev-parse", "HEAD").strip()
    engine = make_engine(repo.path)
    item_id = engine.note("decision", "refresh_token() in src/auth/session.py adds one", "tokens").item_id
    (fresh,) = _validation(engine, item_id).anchors
    assert (
        fresh.name,
        fresh.recorded_path,
        fresh.path,
        fresh.symbol,
        fresh.recorded_start,
        fresh.recorded_end,
        fresh.head_oid,
        fresh.status,
        fresh.start,
        fresh.end,
    ) == (
        "src/auth/session.py:refresh_token",
        "src/auth/session.py",
        "src/auth/session.py",
        "refresh_token",
        4,
        6,
        head,
        "fresh",
        4,
        6,
    )
    assert fresh.current_hash == fresh.recorded_hash and fresh.recorded_hash
    stored = engine.conn.execute("SELECT id, content_hash FROM memory_anchors").fetchone()
    assert (fresh.anchor_id, fresh.recorded_hash) == (stored["id"], stored["content_hash"])
    (repo.path / "lib").mkdir()
    repo.git("mv", "src/auth/session.py", "lib/session.py")
    repo.write("lib/session.py", "# moved\n\n" + SESSION.replace("+ 1", "+ 2"))
    repo.commit("moved and changed")
    (drifted,) = _validation(engine, item_id).anchors
    assert (
        drifted.name,
        drifted.recorded_path,
        drifted.path,
        drifted.recorded_start,
        drifted.status,
        drifted.start,
        drifted.end,
    ) == ("lib/session.py:refresh_token", "src/auth/session.py", "lib/session.py", 4, "drifted", 6, 8)
    assert drifted.current_hash and drifted.current_hash != drifted.recorded_hash
    assert drifted.head_oid == head


def test_an_anchor_judged_against_a_commit_is_unknown_and_one_of_a_gone_file_missing(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    repo.write("src/auth/session.py", SESSION)
    repo.commit("session")
    engine = make_engine(repo.path)
    item_id = engine.note("decision", "refresh_token() in src/auth/session.py adds one", "tokens").item_id
    head = repo.git("rev-parse", "HEAD").strip()
    at_tip = _validation(engine, item_id, at_commit=head)
    assert [
        (r.status, a.status, a.start, a.current_hash) for r, a in zip(at_tip.refs, at_tip.anchors, strict=True)
    ] == [("exists", "unknown", None, None)]
    (repo.path / "src/auth/session.py").unlink()
    gone = _validation(engine, item_id)
    assert [(r.status, a.status, a.path) for r, a in zip(gone.refs, gone.anchors, strict=True)] == [
        ("missing", "unknown", "src/auth/session.py")
    ]


def test_an_anchor_whose_reference_was_not_stored_is_judged_on_its_own(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    repo.write("src/auth/session.py", SESSION)
    repo.commit("session")
    engine = make_engine(repo.path)
    item_id = engine.note("decision", "refresh_token() in src/auth/session.py adds one", "tokens").item_id
    engine.conn.execute("DELETE FROM item_refs")
    repo.write("src/auth/session.py", SESSION.replace("+ 1", "+ 3"))
    v = _validation(engine, item_id)
    assert v.refs == ()
    assert [(a.status, a.path, a.start) for a in v.anchors] == [("drifted", "src/auth/session.py", 4)]


def test_outside_git_only_the_current_scope_and_the_project_layer_are_checked(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    plain = tmp_path / "plain"
    (plain / "src").mkdir(parents=True)
    (plain / "src" / "here.py").write_text("x\n")
    engine = make_engine(plain)
    assert engine.scope.git_root is None
    keys = [engine.scope.key, "project:/elsewhere", engine.project_key]
    found = checkouts(engine.conn, engine.scope, engine.project_key, keys, "2026-08-02T18:00:00Z")
    assert [(c.scope_key, c.against, c.where, c.reason, c.validator is None) for c in found] == [
        (engine.scope.key, "worktree", engine.scope.worktree, None, False),
        ("project:/elsewhere", "unchecked", None, "not in a git repository", True),
        (engine.project_key, "worktree", engine.scope.worktree, None, False),
    ]
    for checkout in (found[0], found[2]):
        assert checkout.validator is not None
        judged = [
            checkout.validator.judge(engine.scope.key, path, "file").status for path in ("src/here.py", "src/gone.py")
        ]
        assert judged == ["exists", "missing"]


def test_each_scope_is_checked_against_its_own_checkout_state(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    repo.write("a/x.py")
    repo.commit("x")
    first = repo.git("rev-parse", "HEAD").strip()
    repo.git("branch", "None")  # a branch named like Python's None: a key naming no branch must not find it
    odd = "fix\u202eit"  # a branch its scope key can only name by digest (`branch_key`)
    for name in ("side", odd):
        repo.git("checkout", "-q", "-b", name)
        repo.git("rm", "-q", "a/x.py")
        repo.commit(f"{name} drops x")
        repo.git("checkout", "-q", "main")
    repo.write("a/z.py")
    repo.commit("z")
    head = repo.git("rev-parse", "HEAD").strip()
    main = make_engine(repo.path)
    other = Repo(tmp_path / "wt-other")
    repo.git("worktree", "add", "-q", "-b", "other", str(other.path))
    other.write("b/y.py")
    other.commit("y")
    other_key = detect_scope(str(other.path)).key
    base = main.scope.key.rsplit(":", 1)[0]
    detached = "detached:" + base.removeprefix("branch:") + ":"
    keys = [
        main.scope.key,
        main.project_key,
        other_key,
        f"{base}:side",
        f"{base}:{branch_key(odd)}",
        f"{base}:gone",
        detached + head,
        detached + "0123456789ab" * 3 + "0123",
        "project:/elsewhere",
    ]
    now = "2026-08-02T19:00:00Z"
    found = checkouts(main.conn, main.scope, main.project_key, keys, now)
    tips = {name: repo.git("rev-parse", name).strip() for name in ("side", odd)}
    assert [(c.scope_key, c.against, c.where, c.reason) for c in found] == [
        (main.scope.key, "worktree", main.scope.worktree, None),
        (main.project_key, "worktree", main.scope.worktree, None),
        (other_key, "worktree", str(other.path.resolve()), None),
        (f"{base}:side", "branch tip", tips["side"], None),
        (f"{base}:{branch_key(odd)}", "branch tip", tips[odd], None),
        (f"{base}:gone", "unchecked", None, "branch gone no longer exists"),
        (detached + head, "commit", head, None),
        (
            detached + "0123456789ab" * 3 + "0123",
            "unchecked",
            None,
            "commit 0123456789ab is no longer in the repository",
        ),
        ("project:/elsewhere", "unchecked", None, "no checkout of this scope"),
    ]
    assert first != head and [c.validator is None for c in found] == [False] * 5 + [True, False, True, True]
    # Another worktree's inventory is brought up to its HEAD first; each validator reads its own checkout (the
    # project layer's is the current scope's).
    graph = main.conn.execute(
        "SELECT head_oid, updated_at FROM current_app_graphs WHERE scope_key=?", (other_key,)
    ).fetchone()
    assert (graph["head_oid"], graph["updated_at"]) == (other.git("rev-parse", "HEAD").strip(), now)
    judged = [
        c.validator.judge(main.scope.key if c.scope_key == main.project_key else c.scope_key, path, "file").status
        for c in found
        if c.validator is not None
        for path in ("a/x.py", "a/z.py", "b/y.py")
    ]
    assert judged == ["exists", "exists", "missing"] * 2 + ["exists", "exists", "exists"] + [
        "missing",
        "missing",
        "missing",
    ] * 2 + ["exists", "exists", "missing"]


def _note_then(repo: Repo, engine: Engine, *paths: str) -> str:
    """A note naming `paths`, written with the current HEAD recorded on each reference."""
    for path in paths:
        repo.write(path, f"{path} = 1\n" * 8)
    repo.commit("files")
    return engine.note("insight", "the work happens in " + " and ".join(paths)).item_id


def test_a_staged_rename_is_read_from_the_index_even_when_the_file_changed_since_and_git_would_not_guess_renames(
    repo: Repo, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a user's `diff.renames=false` must not hide a staged rename
    for name, value in (
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "diff.renames"),
        ("GIT_CONFIG_VALUE_0", "false"),
    ):
        monkeypatch.setenv(name, value)
    engine = make_engine(repo.path)
    item_id = _note_then(repo, engine, "src/pool.py")
    (repo.path / "lib").mkdir()
    repo.git("mv", "src/pool.py", "lib/connections.py")
    (repo.path / "lib/connections.py").write_text("rewritten since it was staged\n")  # only the index holds the rename
    (judged,) = _validation(engine, item_id).refs
    assert (judged.status, judged.moved_to) == ("moved", "lib/connections.py")


def test_a_failed_read_of_the_index_is_not_kept(
    repo: Repo, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(repo.path)
    item_id = _note_then(repo, engine, "src/pool.py")
    (repo.path / "lib").mkdir()
    repo.git("mv", "src/pool.py", "lib/connections.py")
    real = history.git
    monkeypatch.setattr(history, "git", lambda cwd, *args, **kw: None if args[0] == "diff" else real(cwd, *args, **kw))
    assert [r.status for r in _validation(engine, item_id).refs] == ["missing"]
    monkeypatch.setattr(history, "git", real)
    assert [(r.status, r.moved_to) for r in _validation(engine, item_id).refs] == [("moved", "lib/connections.py")]


def test_the_live_checkout_is_listed_again_once_per_pass_and_every_plain_move_is_found(
    repo: Repo, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(repo.path)
    first = _note_then(repo, engine, "src/alpha.py")
    second = _note_then(repo, engine, "src/beta.py")
    (repo.path / "lib").mkdir()
    for name in ("alpha.py", "beta.py"):
        (repo.path / "src" / name).rename(repo.path / "lib" / name)
    listed: list[str] = []
    real = inventory.rescan

    def rescan(worktree: str) -> frozenset[str]:
        listed.append(worktree)
        return real(worktree)

    monkeypatch.setattr(inventory, "rescan", rescan)
    judged = Validator(engine.conn, engine.scope).validate_many([(first, engine.scope.key), (second, engine.scope.key)])
    assert [(r.status, r.moved_to) for v in judged.values() for r in v.refs] == [
        ("moved", "lib/alpha.py"),
        ("moved", "lib/beta.py"),
    ]
    assert listed == [engine.scope.worktree]


def test_history_chains_are_read_from_the_store_and_walked_for_every_recorded_head_at_once(
    repo: Repo, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(repo.path)
    first = _note_then(repo, engine, "src/alpha.py")
    second = _note_then(repo, engine, "src/beta.py")
    recorded = [r[0] for r in engine.conn.execute("SELECT head_oid FROM memory_references ORDER BY id")]
    assert recorded[0] != recorded[1]
    (repo.path / "lib").mkdir()
    repo.git("mv", "src/alpha.py", "lib/first.py")
    repo.git("mv", "src/beta.py", "lib/second.py")
    repo.commit("both moved")
    wanted = [(first, engine.scope.key), (second, engine.scope.key)]
    moved = [("moved", "lib/first.py"), ("moved", "lib/second.py")]
    walks: list[list[str]] = []
    real = history.chains

    def chains(repo_: str, oids: list[str], head: str) -> dict[str, history.Chain]:
        walks.append(sorted(oids))
        return real(repo_, oids, head)

    monkeypatch.setattr(history, "chains", chains)
    inventory.chain_cache.clear()
    judged = Validator(engine.conn, engine.scope).validate_many(wanted)
    assert [(r.status, r.moved_to) for v in judged.values() for r in v.refs] == moved
    assert walks == [sorted(recorded)]  # one walk over both ranges
    head = repo.git("rev-parse", "HEAD").strip()
    stored = engine.conn.execute(
        "SELECT COUNT(*) FROM rename_chains WHERE to_oid=? AND from_oid IN (?,?)", (head, *recorded)
    ).fetchone()[0]
    assert stored == 2
    inventory.chain_cache.clear()  # another process: the store answers, git is not asked
    judged = Validator(engine.conn, engine.scope).validate_many(wanted)
    assert [(r.status, r.moved_to) for v in judged.values() for r in v.refs] == moved
    assert len(walks) == 1
    statements: list[str] = []
    engine.conn.set_trace_callback(statements.append)
    try:
        judged = Validator(engine.conn, engine.scope).validate_many(wanted)  # this process's cache answers
    finally:
        engine.conn.set_trace_callback(None)
    assert [(r.status, r.moved_to) for v in judged.values() for r in v.refs] == moved
    assert len(walks) == 1 and not [s for s in statements if "rename_chains" in s]
    inventory.chain_cache.clear()  # one reference judged alone, outside a pass over many items
    assert Validator(engine.conn, engine.scope).judge(
        engine.scope.key, "src/beta.py", "file", recorded[1]
    ) == RefVerdict("src/beta.py", "file", "moved", "lib/second.py")


def test_anchors_in_two_files_are_each_read_from_their_own_file(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    repo.write("src/auth/session.py", SESSION)
    repo.write("src/auth/tokens.py", "def mint(n):\n    return n * 7\n")
    repo.commit("two files")
    engine = make_engine(repo.path)
    item_id = engine.note(
        "decision", "refresh_token() in src/auth/session.py calls mint() in src/auth/tokens.py", "tokens"
    ).item_id
    repo.write("src/auth/tokens.py", "def mint(n):\n    return n * 8\n")
    v = _validation(engine, item_id)
    assert sorted((a.name, a.status) for a in v.anchors) == [
        ("src/auth/session.py:refresh_token", "fresh"),
        ("src/auth/tokens.py:mint", "drifted"),
    ]


def test_an_anchor_whose_reference_was_not_stored_follows_its_file_from_the_recorded_head(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    repo.write("src/auth/session.py", SESSION)
    repo.commit("session")
    engine = make_engine(repo.path)
    item_id = engine.note("decision", "refresh_token() in src/auth/session.py adds one", "tokens").item_id
    engine.conn.execute("DELETE FROM item_refs")
    (repo.path / "lib").mkdir()
    repo.git("mv", "src/auth/session.py", "lib/auth_session.py")
    repo.commit("moved")
    engine.refresh()
    engine.conn.execute("DELETE FROM file_renames")  # only the history from the anchor's HEAD knows the move
    (judged,) = _validation(engine, item_id).anchors
    assert (judged.status, judged.path, judged.recorded_path) == ("fresh", "lib/auth_session.py", "src/auth/session.py")


# -- scope/inventory.py: the checkout's listing, its caches, and what extraction asks of a repository -------------


def test_the_inventory_lists_files_on_disk_tracked_or_not_ignored_and_never_the_store(repo: Repo) -> None:
    repo.write(".gitignore", "build/\n")
    repo.write("src/kept.py")
    repo.write("src/deleted.py")
    repo.write(".cortex.db", "")
    repo.commit("files")
    (repo.path / "src/deleted.py").unlink()
    repo.write("notes/new.md")
    repo.write("build/out.o")
    repo.write("src/.cortex.db-wal", "")
    assert inventory.list_files(str(repo.path)) == [".gitignore", "README.md", "notes/new.md", "src/kept.py"]
    assert inventory.list_files(str(repo.path / "no-such-dir")) == []


def test_the_live_listing_is_reused_for_ten_seconds(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(inventory, "time", type("T", (), {"monotonic": staticmethod(lambda: clock[0])}))
    worktree = str(repo.path)
    assert inventory.rescan(worktree) == frozenset({"README.md"})
    repo.write("late.py")
    clock[0] += 9.99
    assert inventory.rescan(worktree) == frozenset({"README.md"})
    clock[0] += 0.01
    assert inventory.rescan(worktree) == frozenset({"README.md", "late.py"})


def test_the_chain_cache_drops_its_oldest_quarter_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inventory, "chain_cache", {})
    for n in range(inventory.CHAIN_CACHE_SIZE):
        inventory.remember_chain(f"r{n}", "h", history.Chain(f"s{n}"))
    assert len(inventory.chain_cache) == 512
    inventory.remember_chain("new", "h", history.Chain("s"))
    assert len(inventory.chain_cache) == 512 - 128 + 1
    assert ("r127", "h") not in inventory.chain_cache and inventory.chain_cache[("r128", "h")] == history.Chain("s128")
    assert inventory.chain_cache[("new", "h")] == history.Chain("s")


def test_git_paths_answers_from_the_root_tree_the_refs_and_the_history(repo: Repo, tmp_path: Path) -> None:
    repo.write("Makefile")
    repo.write("src/deep.py")
    repo.write("old/gone.py")
    repo.commit("files")
    repo.git("rm", "-q", "old/gone.py")
    repo.commit("drop")
    repo.git("branch", "feature/x")
    repo.git("tag", "v1")
    repo.git("remote", "add", "upstream", str(tmp_path / "nowhere"))
    head = repo.git("rev-parse", "HEAD").strip()
    paths = inventory.GitPaths(str(repo.path), head, frozenset({"untracked.txt", "sub/listed.txt"}))
    assert paths.worktree == str(repo.path)
    assert [
        paths.tracked_root_file(n) for n in ("Makefile", "README.md", "untracked.txt", "src", "deep.py", "listed.txt")
    ] == [True, True, True, False, False, False]
    assert [
        paths.names_ref(n)
        for n in ("feature/x", "main", "v1", "upstream/main", "upstream", "src/deep.py", "origin/main")
    ] == [True, True, True, True, True, False, False]
    assert [paths.ever_tracked(p) for p in ("old/gone.py", "sub/listed.txt", "never/was.py")] == [True, True, False]
    repo.write("never/was.py")  # on disk counts, but the first answer is kept for the object's life
    assert paths.ever_tracked("never/was.py") is False
    assert inventory.GitPaths(str(repo.path), head).ever_tracked("never/was.py") is True
    assert inventory.GitPaths(str(repo.path), None).tracked_root_file("Makefile") is False


def test_git_paths_asks_history_about_at_most_32_paths_per_extraction(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("old/gone.py")
    repo.commit("add")
    repo.git("rm", "-q", "old/gone.py")
    repo.commit("drop")
    asked: list[str] = []
    real = inventory._git

    def git(worktree: str, *args: str) -> str | None:
        asked.append(args[-1])
        return real(worktree, *args)

    monkeypatch.setattr(inventory, "_git", git)
    paths = inventory.GitPaths(str(repo.path), None).begin()
    assert [paths.ever_tracked(f"x/{n}.py") for n in range(inventory.HISTORY_LOOKUPS)] == [False] * 32
    assert paths.ever_tracked("old/gone.py") is False and len(asked) == 32  # out of lookups: not asked
    assert paths.ever_tracked("x/0.py") is False and len(asked) == 32  # an answer already had is kept
    assert paths.begin().ever_tracked("old/gone.py") is True and len(asked) == 33


def test_repository_for_answers_for_the_checkout_the_last_refresh_saw(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    engine = make_engine(repo.path)
    assert inventory.repository_for(engine.conn, engine.scope.key) == (None, None)
    engine.refresh()
    head = repo.git("rev-parse", "HEAD").strip()
    paths, at = inventory.repository_for(engine.conn, engine.scope.key)
    assert at == head and paths is not None and paths.worktree == engine.scope.worktree
    assert paths.ever_tracked("README.md") and paths.tracked_root_file("README.md")
    again, _ = inventory.repository_for(engine.conn, engine.scope.key)
    assert again is paths
    repo.write("next.py")
    repo.commit("next")
    engine.refresh()
    moved_on, at = inventory.repository_for(engine.conn, engine.scope.key)
    assert moved_on is not paths and at != head and moved_on is not None and moved_on.ever_tracked("next.py")


def test_an_anchor_is_read_in_the_file_its_own_reference_was_followed_to(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    repo.write("src/auth/session.py", SESSION)
    repo.write("src/auth/tokens.py", "def mint(n):\n    return n * 7\n")
    repo.commit("two files")
    engine = make_engine(repo.path)
    item_id = engine.note(
        "decision", "refresh_token() in src/auth/session.py calls mint() in src/auth/tokens.py", "tokens"
    ).item_id
    (repo.path / "lib").mkdir()
    (repo.path / "src/auth/tokens.py").rename(repo.path / "lib/tokens.py")
    v = _validation(engine, item_id)
    assert sorted((r.path, r.status, r.moved_to) for r in v.refs) == [
        ("src/auth/session.py", "exists", None),
        ("src/auth/tokens.py", "moved", "lib/tokens.py"),
    ]
    assert sorted((a.name, a.status, a.path) for a in v.anchors) == [
        ("lib/tokens.py:mint", "fresh", "lib/tokens.py"),
        ("src/auth/session.py:refresh_token", "fresh", "src/auth/session.py"),
    ]


def test_an_anchor_takes_its_reference_s_verdict_rather_than_judging_its_file_again(
    repo: Repo, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("src/auth/session.py", SESSION)
    repo.commit("session")
    engine = make_engine(repo.path)
    item_id = engine.note("decision", "refresh_token() in src/auth/session.py adds one", "tokens").item_id
    _as_before_heads_were_recorded(engine)  # the anchor keeps its HEAD; its reference has none
    repo.git("mv", "src/auth/session.py", "src/auth/sessions.py")
    repo.commit("renamed")
    engine.refresh()  # the scope's rename map learns the move
    monkeypatch.setattr(history, "chains", lambda *a: pytest.fail("the anchor's file was judged again from history"))
    v = _validation(engine, item_id)
    assert [(r.status, r.moved_to) for r in v.refs] == [("moved", "src/auth/sessions.py")]
    assert [(a.status, a.path) for a in v.anchors] == [("fresh", "src/auth/sessions.py")]


def test_a_scope_whose_checkout_has_no_known_place_cannot_follow_history_and_reads_unverified(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    engine = make_engine(repo.path)
    first = repo.git("rev-parse", "HEAD").strip()
    repo.write("b.py")
    repo.commit("b")
    head = repo.git("rev-parse", "HEAD").strip()
    ghost = engine.scope.key.rsplit(":", 1)[0] + ":ghost"
    engine.conn.execute(
        "INSERT INTO current_app_graphs(scope_key, worktree_path, head_oid, files_json) VALUES (?,?,?,?)",
        (ghost, None, head, '["b.py"]'),
    )
    validator = Validator(engine.conn, engine.scope)
    assert validator.judge(ghost, "b.py", "file", first).status == "exists"
    assert validator.judge(ghost, "a.py", "file", first) == RefVerdict("a.py", "file", "unknown")
    assert validator.judge(ghost, "a.py", "file", head) == RefVerdict("a.py", "file", "missing")


def test_renames_follow_one_another_and_a_copy_is_skipped_whole() -> None:
    assert _parse_renames("R100\0a.py\0b.py\0R090\0c.py\0d.py\0") == [("a.py", "b.py"), ("c.py", "d.py")]
    assert _parse_renames("C75\0x.py\0y.py\0R100\0a.py\0b.py\0") == [("a.py", "b.py")]


def test_git_paths_reads_names_literally_and_every_branch_s_history(repo: Repo, tmp_path: Path) -> None:
    repo.write("old/gone.py")
    repo.write("tab\tname.md")
    repo.commit("add")
    repo.git("rm", "-q", "old/gone.py")
    repo.commit("drop")
    repo.git("checkout", "-q", "-b", "side")
    repo.write("side/only.py")
    repo.commit("side only")
    repo.git("rm", "-q", "side/only.py")
    repo.commit("side drops it")
    repo.git("checkout", "-q", "main")
    head = repo.git("rev-parse", "HEAD").strip()
    paths = inventory.GitPaths(str(repo.path), head, frozenset({"sub/listed.txt"}))
    assert [paths.ever_tracked(p) for p in ("old/*.py", "old/gone.py", "side/only.py")] == [False, True, True]
    assert [paths.tracked_root_file(n) for n in ("tab\tname.md", "name.md", "sub/listed.txt")] == [True, False, False]
    repo.git("update-ref", "refs/remotes/mirror/dev", head)  # a remote-tracking ref whose remote is gone
    assert inventory.GitPaths(str(repo.path), head).names_ref("mirror/dev") is True
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    assert inventory.GitPaths(str(outside), None).ever_tracked("x.py") is False


def test_chains_are_not_stored_inside_a_transaction_someone_else_opened(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    engine = make_engine(repo.path)
    engine.conn.execute("BEGIN")
    try:
        inventory.store_chains(engine.conn, "h" * 40, {"r" * 40: history.Chain("r" * 40, {"a.py": "b.py"})})
        assert engine.conn.execute("SELECT COUNT(*) FROM rename_chains").fetchone()[0] == 0
    finally:
        engine.conn.execute("ROLLBACK")
    inventory.store_chains(engine.conn, "h" * 40, {"r" * 40: history.Chain("r" * 40, {"a.py": "b.py"})})
    assert [
        tuple(r) for r in engine.conn.execute("SELECT from_oid, to_oid, start_oid, moves_json FROM rename_chains")
    ] == [("r" * 40, "h" * 40, "r" * 40, '{"a.py": "b.py"}')]


# -- verdicts reached through the engine or a Validator on a real repository -------------------------------------------


def _project_note(repo: Repo, engine: Engine, text: str) -> str:
    """An insight of the project layer (imported from a CLAUDE.md and accepted), as its item id."""
    claude = repo.write("CLAUDE.md", f"# Layout\n\n{text}\n")
    engine.import_file(str(claude))
    engine.accept_arrivals([], every=True)
    row = engine.conn.execute("SELECT id, scope_key FROM scoped_notes").fetchone()
    assert row["scope_key"] == engine.project_key != engine.scope.key
    return f"notes:{row['id']}"


def test_a_project_layer_memory_is_judged_against_the_current_checkout(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """Inside git the project layer's key is not the branch's, yet its references are checked against the
    checkout the engine stands in (as `checkouts` says): a gone file is stale, not unverified."""
    repo.write("src/app.py", "x = 1\n" * 5)
    repo.commit("app")
    engine = make_engine(repo.path)
    item = _project_note(repo, engine, "The work happens in src/app.py and src/gone.py always.")
    found = engine.inspect_memory(item)
    assert [(r["path"], r["status"]) for r in found.references] == [
        ("src/app.py", "exists"),
        ("src/gone.py", "missing"),
    ]
    assert "[stale: missing src/gone.py]" in engine.recall("work happens", book=False).text
    # Another store's project layer has no checkout here: it stays unknown.
    validator = Validator(engine.conn, engine.scope)
    assert validator.judge("project:/elsewhere", "src/app.py", "file").status == "unknown"
    assert validator.judge(engine.project_key, "src/app.py", "file").status == "exists"
    # An absolute path is judged on disk whatever the scope, and its verdict names it.
    assert validator.judge(engine.scope.key, str(repo.path / "src/app.py"), "absolute_path") == RefVerdict(
        str(repo.path / "src/app.py"), "absolute_path", "exists"
    )


LINES = "".join(f"line_{n:02d} = {n} * {n}  # value number {n}\n" for n in range(20))


def _by_subject(engine: Engine) -> dict[str, list[tuple[str, str, str | None]]]:
    """`validate-memory --all-scopes`: every memory's references as (path, verdict, to), by subject."""
    report = engine.validate_memory(all_scopes=True, persist=False)
    return {
        item["subject"]: [(r["path"], r["verdict"], r["to"]) for r in item["references"]] for item in report["items"]
    }  # type: ignore[attr-defined]


def test_a_branch_without_a_worktree_follows_its_references_through_its_own_commits_to_its_tip(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """A memory of a branch no worktree has checked out is judged at the branch's tip, and a reference recorded
    at an older commit of it follows the renames between (even to another basename), as in a worktree."""
    repo.write("a/x.py", LINES)
    repo.commit("x")
    repo.git("checkout", "-q", "-b", "side")
    make_engine(repo.path).note("decision", "side keeps a/x.py", "side x")
    (repo.path / "b").mkdir()
    repo.git("mv", "a/x.py", "b/y.py")
    repo.commit("side renames x")
    repo.git("checkout", "-q", "main")
    main = make_engine(repo.path)
    main.note("decision", "main keeps a/x.py", "main x")
    assert _by_subject(main) == {"main x": [("a/x.py", "exists", None)], "side x": [("a/x.py", "moved", "b/y.py")]}


def test_a_commit_git_cannot_read_leaves_every_reference_unverified_and_an_empty_tree_has_no_file(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """Judged at a commit: the files are that commit's tree; a commit git cannot list says nothing (unknown),
    and a commit whose tree is empty holds no file at all."""
    engine = make_engine(repo.path)
    item = engine.note("decision", "the title lives in README.md", "title").item_id
    head = repo.git("rev-parse", "HEAD").strip()
    empty = repo.git(
        "commit-tree", repo.git("hash-object", "-t", "tree", "-w", "/dev/null").strip(), "-m", "empty"
    ).strip()

    def at(commit: str, path: str = "README.md") -> str:
        return Validator(engine.conn, engine.scope, at_commit=commit).judge(engine.scope.key, path, "file").status

    assert [at(head), at("0" * 40), at(empty), at(empty, "XXXX")] == ["exists", "unknown", "missing", "missing"]
    unread = Validator(engine.conn, engine.scope, at_commit="0" * 40).validate(item, engine.scope.key)
    assert (unread.validity, unread.label, unread.refs) == (
        "refs unverified",
        None,
        (RefVerdict("README.md", "file", "unknown"),),
    )


def test_more_items_than_one_query_binds_are_each_judged_once(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """`validate_many` reads references 500 items at a time: the 501st item is judged, and only once."""
    engine = make_engine(repo.path)
    item = engine.note("decision", "the title lives in README.md", "title").item_id
    others = [(f"notes:none-{n}", engine.scope.key) for n in range(500)]
    for items in (others + [(item, engine.scope.key)], [(item, engine.scope.key)] + others):
        found = Validator(engine.conn, engine.scope).validate_many(items)
        assert len(found) == 501 and [r.status for r in found[item].refs] == ["exists"]
        assert sum(len(v.refs) for v in found.values()) == 1


def test_a_checkout_whose_directory_is_gone_says_nothing_about_its_files(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """A long-lived process (the MCP server) whose worktree was deleted under it cannot see any file: its
    references are unknown, never missing."""
    other = tmp_path / "wt-feat"
    repo.git("worktree", "add", "-q", "-b", "feat", str(other))
    scope = detect_scope(str(other))
    engine = make_engine(repo.path)
    live = Validator(engine.conn, scope)
    assert live.judge(scope.key, "README.md", "file", scope.head_oid).status == "exists"
    shutil.rmtree(other)
    gone = Validator(engine.conn, scope)
    assert [gone.judge(scope.key, p, "file", scope.head_oid) for p in ("README.md", "a/b.py")] == [
        RefVerdict("README.md", "file", "unknown"),
        RefVerdict("a/b.py", "file", "unknown"),
    ]
    assert gone.judge(scope.key, "a/b.py", "file") == RefVerdict("a/b.py", "file", "unknown")


def test_another_worktree_s_memory_has_its_anchors_read_in_that_worktree(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """A memory of another worktree, judged from here by its stored inventory, has its anchors read in the files
    of that worktree: a function changed there (and not here) is drifted."""
    repo.write("src/auth/session.py", SESSION)
    repo.commit("session")
    feat = tmp_path / "wt-feat"
    repo.git("worktree", "add", "-q", "-b", "feat", str(feat))
    there = make_engine(feat)
    item = there.note("decision", "refresh_token() in src/auth/session.py adds one", "tokens").item_id
    (feat / "src/auth/session.py").write_text(SESSION.replace("+ 1", "+ 2"), encoding="utf-8")
    here = make_engine(repo.path)
    found = Validator(here.conn, here.scope).validate(item, there.scope.key)
    assert [r.status for r in found.refs] == ["exists"]
    assert [(a.status, a.path) for a in found.anchors] == [("drifted", "src/auth/session.py")]


def _noted_in_feat(repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path) -> tuple[Path, Engine, str]:
    """A worktree `feat` of `repo`, its engine, and a decision noted there on `a/one.py` (committed in `repo`)."""
    repo.write("a/one.py", "one = 1\n" * 8)
    repo.commit("one")
    feat = tmp_path / "wt-feat"
    repo.git("worktree", "add", "-q", "-b", "feat", str(feat))
    there = make_engine(feat)
    return feat, there, there.note("decision", "a/one.py holds one", "one").item_id


def _moved_in_feat(feat: Path, there: Engine) -> None:
    """`a/one.py` renamed to `lib/uno.py` in a commit of `feat`, which its engine then refreshes."""
    (feat / "lib").mkdir()
    Repo(feat).git("mv", "a/one.py", "lib/uno.py")
    Repo(feat).commit("moved there")
    there.refresh()


def test_another_worktree_s_old_reference_follows_that_worktree_s_rename_map(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """A reference stored before HEADs were recorded, of another worktree's memory, follows the rename map that
    worktree's refreshes kept, not this one's."""
    feat, there, item = _noted_in_feat(repo, make_engine, tmp_path)
    there.conn.execute("UPDATE item_refs SET head=NULL")  # as an older version stored it
    _moved_in_feat(feat, there)
    here = make_engine(repo.path)
    found = Validator(here.conn, here.scope).validate(item, there.scope.key)
    assert [(r.status, r.moved_to) for r in found.refs] == [("moved", "lib/uno.py")]
    assert [(r.status, r.moved_to) for r in Validator(here.conn, here.scope).validate(item, here.scope.key).refs] == [
        ("exists", None)
    ]


def test_another_worktree_s_chain_missing_from_the_store_is_walked_in_its_repository(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """When the store holds no chain for another worktree's recorded HEAD (a store from before chains were kept),
    the chain is walked in that worktree's repository, not given up as unverified."""
    feat, there, item = _noted_in_feat(repo, make_engine, tmp_path)
    _moved_in_feat(feat, there)
    there.conn.execute("DELETE FROM rename_chains")
    inventory.chain_cache.clear()  # another process
    here = make_engine(repo.path)
    found = Validator(here.conn, here.scope).validate(item, there.scope.key)
    assert [(r.status, r.moved_to) for r in found.refs] == [("moved", "lib/uno.py")]


def test_a_branch_s_old_reference_reads_the_same_once_its_worktree_is_gone(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """A reference stored before HEADs were recorded follows the rename map its branch's refreshes kept, whether
    the branch is judged in its worktree or, that worktree removed, at the branch's tip: `moved` both times (the
    file went to another basename, so only the map can tell)."""
    feat, there, item = _noted_in_feat(repo, make_engine, tmp_path)
    there.conn.execute("UPDATE item_refs SET head=NULL")  # as an older version stored it
    _moved_in_feat(feat, there)
    here = make_engine(repo.path)
    assert _by_subject(here)["one"] == [("a/one.py", "moved", "lib/uno.py")]
    there.close()
    repo.git("worktree", "remove", "--force", str(feat))
    assert _by_subject(make_engine(repo.path))["one"] == [("a/one.py", "moved", "lib/uno.py")]


def test_another_worktree_s_staged_rename_reads_the_same_from_here_as_from_there(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """A rename staged (not committed) in another worktree is that worktree's checkout: its memory's reference
    reads `moved` judged from here, as it does judged there."""
    feat, there, item = _noted_in_feat(repo, make_engine, tmp_path)
    (feat / "lib").mkdir()
    Repo(feat).git("mv", "a/one.py", "lib/uno.py")
    there.refresh()
    assert [
        (r.status, r.moved_to) for r in Validator(there.conn, there.scope).validate(item, there.scope.key).refs
    ] == [("moved", "lib/uno.py")]
    here = make_engine(repo.path)
    found = Validator(here.conn, here.scope).validate(item, there.scope.key)
    assert [(r.status, r.moved_to) for r in found.refs] == [("moved", "lib/uno.py")]


def test_an_anchor_is_looked_for_only_in_a_file_its_reference_found(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """Another worktree is judged from here by its stored inventory: a file it no longer lists (untracked there and
    ignored) reads `missing`, and its anchor stays `unknown` though a file of that name could still be read: the
    anchor does not say `fresh` about a file its own reference did not find."""
    repo.write("a/one.py", LINES)
    repo.commit("one")
    feat = tmp_path / "wt-feat"
    repo.git("worktree", "add", "-q", "-b", "feat", str(feat))
    there = make_engine(feat)
    item = there.note("decision", "a/one.py:3-5 holds the squares", "one").item_id
    Repo(feat).git("rm", "-q", "--cached", "a/one.py")
    (repo.path / ".git" / "info" / "exclude").write_text("a/one.py\n", encoding="utf-8")
    there.refresh()
    here = make_engine(repo.path)
    found = Validator(here.conn, here.scope).validate(item, there.scope.key)
    assert [r.status for r in found.refs] == ["missing"]
    assert [(a.name, a.status) for a in found.anchors] == [("a/one.py:3-5", "unknown")]


def test_another_worktree_s_staging_is_read_again_when_it_changes_there(
    repo: Repo, make_engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """The staged renames kept between passes are keyed by the current worktree's index: another worktree's are
    read from that worktree every pass, so a second rename staged there (this index untouched) is seen."""
    feat, there, item = _noted_in_feat(repo, make_engine, tmp_path)
    (feat / "lib").mkdir()
    Repo(feat).git("mv", "a/one.py", "lib/uno.py")
    there.refresh()
    here = make_engine(repo.path)

    def from_here() -> list[tuple[str, str | None]]:
        return [(r.status, r.moved_to) for r in Validator(here.conn, here.scope).validate(item, there.scope.key).refs]

    assert from_here() == [("moved", "lib/uno.py")]
    Repo(feat).git("mv", "lib/uno.py", "lib/dos.py")
    there.refresh()
    assert from_here() == [("moved", "lib/dos.py")]


def test_a_pass_judges_each_reference_once_however_many_items_name_it(
    repo: Repo, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within one pass a (scope, path, recorded HEAD) is judged once and the verdict reused for every item naming
    it: two memories of `src/app.py` cost one look at the file."""
    repo.write("src/app.py", "x = 1\n")
    repo.commit("app")
    engine = make_engine(repo.path)
    items = [engine.note("decision", f"the app starts in src/app.py, reason {n}", f"start {n}").item_id for n in (1, 2)]
    looked: list[str] = []
    real_isfile = os.path.isfile

    def isfile(path: str) -> bool:
        looked.append(path)
        return real_isfile(path)

    monkeypatch.setattr(os.path, "isfile", isfile)
    found = Validator(engine.conn, engine.scope).validate_many([(item, engine.scope.key) for item in items])
    assert [[r.status for r in found[item].refs] for item in items] == [["exists"], ["exists"]]
    assert [p for p in looked if p.endswith("app.py")] == [os.path.join(engine.scope.worktree, "src/app.py")]
