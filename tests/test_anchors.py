"""Claim-level freshness: anchors on symbols and line ranges, checked against real git checkouts."""

from __future__ import annotations

import os

import pytest

from cortex_engine.engine import Engine
from cortex_engine.scope import anchors
from cortex_engine.scope.freshness import AnchorVerdict, RefVerdict, Validation

from .conftest import Repo
from .test_cli import fail, ok, ok_json

# name -> (path, target function, other function, renamed target), each body a format of (target, other).
LANGS = {
    "python": (
        "src/auth/session.py",
        "def refresh_token(x):\n    y = x + 1\n    return y\n",
        "def other(a):\n    return a * 2\n",
        "def renew_token(x):\n    y = x + 1\n    return y\n",
    ),
    "ts": (
        "web/session.ts",
        "export function refreshToken(x: number): number {\n  const y = x + 1;\n  return y;\n}\n",
        "export const other = (a: number) => {\n  return a * 2;\n};\n",
        "export function renewToken(x: number): number {\n  const y = x + 1;\n  return y;\n}\n",
    ),
    "go": (
        "pkg/session/session.go",
        "func (s *Store) RefreshToken(x int) int {\n\ty := x + 1\n\treturn y\n}\n",
        "func other(a int) int {\n\treturn a * 2\n}\n",
        "func (s *Store) RenewToken(x int) int {\n\ty := x + 1\n\treturn y\n}\n",
    ),
}
NAMES = {"python": "refresh_token", "ts": "refreshToken", "go": "RefreshToken"}
HEADS = {
    "python": "import os\n\n",
    "ts": "import { x } from './x';\n\n",
    "go": "package session\n\ntype Store struct{}\n\n",
}


def note_on(repo: Repo, engine: Engine, lang: str) -> str:
    path, target, other, _ = LANGS[lang]
    repo.write(path, HEADS[lang] + target + "\n" + other)
    repo.commit(f"{lang} session")
    engine.note("decision", f"{NAMES[lang]}() in {path} adds one before returning", "token refresh")
    return path


def label(engine: Engine) -> str | None:
    """The freshness label of the scope's one anchored memory."""
    items = engine.validate_memory(persist=False)["items"]
    assert len(items) == 1
    return items[0]["label"]


def anchored(engine: Engine) -> list[tuple]:
    return [tuple(r) for r in engine.conn.execute("SELECT path, symbol, start_line, end_line FROM memory_anchors")]


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_symbol_edited_is_drifted(repo: Repo, engine: Engine, lang: str) -> None:
    path = note_on(repo, engine, lang)
    assert [a[:2] for a in anchored(engine)] == [(path, NAMES[lang])]
    assert label(engine) is None
    _, target, other, _ = LANGS[lang]
    repo.write(path, HEADS[lang] + target.replace("+ 1", "+ 2") + "\n" + other)
    assert label(engine) == f"drifted: {path}:{NAMES[lang]} changed"  # uncommitted edit
    repo.commit("add two")
    assert label(engine) == f"drifted: {path}:{NAMES[lang]} changed"


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_symbol_moved_within_file_is_fresh(repo: Repo, engine: Engine, lang: str) -> None:
    path = note_on(repo, engine, lang)
    _, target, other, _ = LANGS[lang]
    repo.write(path, HEADS[lang] + other + "\n\n" + other.replace("other", "third") + "\n" + target)
    repo.commit("reorder")
    assert label(engine) is None


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_symbol_follows_git_mv(repo: Repo, engine: Engine, lang: str) -> None:
    path = note_on(repo, engine, lang)
    moved = path.replace("session.", "tokens.")
    repo.git("mv", path, moved)
    repo.commit("rename the file")
    report = engine.validate_memory(persist=False)["items"][0]
    assert report["label"] == f"moved: {path} → {moved}"
    _, target, other, _ = LANGS[lang]
    repo.write(moved, HEADS[lang] + target.replace("+ 1", "+ 3") + "\n" + other)
    assert label(engine) == f"moved: {path} → {moved}; drifted: {moved}:{NAMES[lang]} changed"


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_symbol_renamed_or_deleted_is_missing(repo: Repo, engine: Engine, lang: str) -> None:
    path = note_on(repo, engine, lang)
    _, _, other, renamed = LANGS[lang]
    repo.write(path, HEADS[lang] + renamed + "\n" + other)
    repo.commit("rename the function")
    new = NAMES[lang].replace("refresh", "renew").replace("Refresh", "Renew")  # renamed in place, the body the same
    assert label(engine) == f"moved: {path}:{NAMES[lang]} → {path}:{new}"
    repo.write(path, HEADS[lang] + renamed.replace("+ 1", "+ 2") + "\n" + other)
    assert label(engine) == f"stale: missing {path}:{NAMES[lang]}"  # renamed and changed: not the same code
    repo.write(path, HEADS[lang] + other)
    assert label(engine) == f"stale: missing {path}:{NAMES[lang]}"


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_whitespace_only_change_is_not_drift(repo: Repo, engine: Engine, lang: str) -> None:
    path = note_on(repo, engine, lang)
    _, target, other, _ = LANGS[lang]
    spaced = target.replace("+ 1", "+  1").replace("\n", "  \n").replace("return y", "return  y")
    if lang != "python":
        spaced = spaced.replace("{\n", "{\n\n")
    repo.write(path, HEADS[lang] + spaced + "\n" + other)
    assert label(engine) is None


def test_qualified_python_method_and_class(repo: Repo, engine: Engine) -> None:
    body = (
        "class SessionStore:\n    def refresh(self):\n        return 1\n\n"
        "class Other:\n    def refresh(self):\n        return 2\n"
    )
    repo.write("src/store.py", body)
    repo.commit("stores")
    engine.note("decision", "SessionStore.refresh in src/store.py returns one; refresh() alone is ambiguous", "s")
    assert anchored(engine) == [("src/store.py", "SessionStore.refresh", 2, 3)]
    repo.write("src/store.py", body.replace("return 1", "return 3"))
    assert label(engine) == "drifted: src/store.py:SessionStore.refresh changed"


def test_line_range_follows_inserted_code(repo: Repo, engine: Engine) -> None:
    body = "".join(f"value_{n} = {n} * 7\n" for n in range(30))
    repo.write("src/table.py", body)
    repo.commit("table")
    engine.note("insight", "the constants at src/table.py:10-12 and src/table.py#L20-L21 are tuned", None)
    assert anchored(engine) == [("src/table.py", None, 10, 12), ("src/table.py", None, 20, 21)]
    repo.write("src/table.py", "import math\n\n\n" + body)
    repo.commit("import above")
    assert label(engine) is None
    repo.write("src/table.py", "import math\n\n\n" + body.replace("value_11 = 11", "value_11 = 12"))
    assert label(engine) == "drifted: src/table.py:10-12 changed"


def test_no_anchor_through_symlink_or_over_cap(repo: Repo, engine: Engine, tmp_path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("def secret_thing():\n    return 1\n")
    (repo.path / "src").mkdir()
    os.symlink(outside, repo.path / "src" / "link.py")
    repo.write("src/big.py", "def huge_function():\n    return 1\n" + "# pad\n" * (anchors.MAX_FILE_BYTES // 6))
    repo.commit("link and big")
    engine.note("insight", "secret_thing() in src/link.py and huge_function() in src/big.py", None)
    assert anchored(engine) == []


def test_note_without_symbol_keeps_file_level(repo: Repo, engine: Engine) -> None:
    repo.write("src/plain.py", "def helper_fn():\n    return 1\n")
    repo.commit("plain")
    engine.note("insight", "src/plain.py is small", None)
    assert anchored(engine) == []
    repo.write("src/plain.py", "def helper_fn():\n    return 2\n")
    assert label(engine) is None


SAMPLES = {
    "rust": (
        "src/lib.rs",
        "pub struct Store { n: u32 }\n\nimpl Store {\n    pub fn refresh(&mut self) -> u32 {\n"
        "        self.n += 1;\n        self.n\n    }\n}\n\nfn helper<'a>(s: &'a str) -> &'a str {\n    s\n}\n",
        {"Store.refresh": (4, 7), "helper": (10, 12), "Store": (1, 1)},
    ),
    "java": (
        "src/Store.java",
        "public class Store {\n    private int n;\n\n    public int refresh(int x) {\n        if (x > 0) {\n"
        "            n += x;\n        }\n        return n;\n    }\n}\n",
        {"Store.refresh": (4, 9), "Store": (1, 10)},
    ),
    "ruby": (
        "lib/store.rb",
        "module Auth\n  class Store\n    def refresh(x)\n      if x\n        1\n      end\n    end\n\n"
        "    def self.build\n      new\n    end\n  end\nend\n",
        {"Store.refresh": (3, 7), "Store.build": (9, 11), "Auth": (1, 13)},
    ),
    "js": (
        "web/app.js",
        "class Store {\n  async refresh(x) {\n    return { x };\n  }\n}\n\nconst handler = async (req) => {\n"
        "  return req;\n};\n\nfunction plain() {\n  if (a) { b(); }\n}\n",
        {"Store.refresh": (2, 4), "handler": (7, 9), "plain": (11, 13)},
    ),
}


@pytest.mark.parametrize("lang", sorted(SAMPLES))
def test_definition_patterns(lang: str) -> None:
    path, text, expected = SAMPLES[lang]
    source = anchors.source_of(path, text)
    found = {name: (s[0].start, s[0].end) for name in expected for s in [source.spans(name)] if s}
    assert found == expected


def test_named_symbols() -> None:
    text = "SessionStore.refresh and `parse_args` call refresh_token(); see Foo::bar, if (x) and plainword"
    assert anchors.named_symbols(text) == ["SessionStore.refresh", "parse_args", "refresh_token", "Foo.bar"]


def test_inspect_shows_anchor_diff_and_reanchor_clears_drift(repo: Repo) -> None:
    """Through the real CLI: recall labels the drift, inspect-memory shows the span's diff and commit,
    `cortex reanchor` (audited) makes the note fresh again, and a second reanchor is refused."""
    path, target, other, _ = LANGS["python"]
    repo.write(path, HEADS["python"] + target + "\n" + other)
    repo.commit("session")
    written = ok_json(
        repo.path,
        "note",
        "--kind",
        "decision",
        "--subject",
        "tokens",
        "refresh_token() in src/auth/session.py adds one",
    )
    repo.write(path, HEADS["python"] + target.replace("+ 1", "+ 2") + "\n" + other)
    repo.commit("add two instead")
    recalled = ok_json(repo.path, "recall", "refresh_token")
    assert recalled["items"][0]["labels"] == ["drifted: src/auth/session.py:refresh_token changed"]
    assert {"path": "src/auth/session.py:refresh_token", "verdict": "drifted", "to": None} in recalled["items"][0][
        "references"
    ]
    assert "[drifted: src/auth/session.py:refresh_token changed]" in ok(repo.path, "recall", "refresh_token")
    item_id = recalled["items"][0]["id"]
    shown = ok_json(repo.path, "inspect-memory", item_id)
    (anchor,) = shown["anchors"]
    assert (anchor["status"], anchor["recorded"]["start"], anchor["current"]["start"]) == ("drifted", 3, 3)
    assert anchor["recorded"]["hash"] != anchor["current"]["hash"]
    assert anchor["diff"] == ["-    y = x + 1", "+    y = x + 2"]
    assert anchor["changed_in"].endswith("add two instead")
    text = ok(repo.path, "inspect-memory", item_id)
    assert "drifted  src/auth/session.py:refresh_token (recorded lines 3-5" in text and "+    y = x + 2" in text
    done = ok_json(repo.path, "reanchor", item_id)
    assert [a["anchor"] for a in done["anchors"]] == ["src/auth/session.py:refresh_token"]
    assert ok_json(repo.path, "recall", "refresh_token")["items"][0]["labels"] == []
    shown = ok_json(repo.path, "inspect-memory", item_id)
    assert shown["corrections"][-1]["operation"] == "reanchor"
    assert written["id"]
    refused = fail(repo.path, "reanchor", item_id, code="refused")
    assert "no drifted anchor" in refused["message"]
    fail(repo.path, "reanchor", "no-such-id", code="not_found")


def _validation(ref_status: str, anchor_statuses: tuple[str, ...]) -> Validation:
    refs = (RefVerdict("src/a.py", "file", ref_status),)
    pinned = tuple(
        AnchorVerdict(n, f"src/a.py:f{n}", "src/a.py", "src/a.py", f"f{n}", 1, 2, "h", None, s)
        for n, s in enumerate(anchor_statuses)
    )
    return Validation(refs, pinned)


def test_drift_ranks_between_fresh_and_missing() -> None:
    fresh = _validation("exists", ("fresh",))
    drifted = _validation("exists", ("drifted",))
    very = _validation("exists", ("drifted",) * 6)
    gone = _validation("missing", ())
    symbol_gone = _validation("exists", ("missing",))
    for historical in (False, True):
        scores = [v.ranking_score(historical) for v in (fresh, drifted, very, gone, symbol_gone)]
        assert scores[0] > scores[1] >= scores[2] > scores[3]
        assert scores[4] == scores[3]
    assert very.ranking_score(False) == -3.0  # capped
    assert (drifted.validity, symbol_gone.validity, fresh.validity) == ("code drifted", "stale refs", "refs OK")


def test_validate_memory_reports_drifted_items_for_the_freshness_pane(repo: Repo, engine: Engine) -> None:
    """validate-memory (where the TUI's Freshness pane reads) counts drifted items and lists each anchor's span."""
    path = note_on(repo, engine, "python")
    _, target, other, _ = LANGS["python"]
    repo.write(path, HEADS["python"] + other + "\n\n" + target.replace("+ 1", "+ 2"))
    report = engine.validate_memory(persist=False)
    assert (report["stale"], report["drifted"]) == (0, 1)
    assert report["items"][0]["anchors"] == [
        {
            "anchor": f"{path}:refresh_token",
            "status": "drifted",
            "path": path,
            "symbol": "refresh_token",
            "start": 7,
            "end": 9,
            "moved_to": None,
            "drifted": True,
        }
    ]
    text = ok(repo.path, "validate-memory")
    assert text.startswith("checked 1 memory; 0 stale; 1 drifted; references: 1 exists")
    assert f"[drifted: {path}:refresh_token changed]" in text


def test_python_qualification_survives_multiline_headers_and_flush_left_strings() -> None:
    """A nested def under a multi-line method header, and a method after a flush-left string, are still found."""
    text = (
        "class AppGroup:\n    def command(\n        self, *args\n    ) -> None:\n"
        "        def decorator(f):\n            return f\n        return decorator\n\n"
        '    def helper(self):\n        s = """\nflush left\n"""\n        def inner():\n            return s\n'
        "        return inner\n"
    )
    source = anchors.source_of("src/cli.py", text)
    assert [(s.start, s.end) for s in source.spans("AppGroup.command.decorator")] == [(5, 6)]
    assert [(s.start, s.end) for s in source.spans("AppGroup.helper.inner")] == [(13, 14)]


def test_module_sized_definition_is_not_anchored(tmp_path) -> None:
    body = "class Huge:\n" + "".join(f"    def m{n}(self):\n        return {n}\n" for n in range(anchors.MAX_LINE_SPAN))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "huge.py").write_text(body + "def tiny_helper():\n    return 1\n")
    found = anchors.find_anchors(str(tmp_path), ["src/huge.py"], "`Huge` in src/huge.py, Huge.m3() and tiny_helper()")
    assert [(a.symbol, a.start, a.end) for a in found] == [("Huge.m3", 8, 9), ("tiny_helper", 802, 803)]


def test_session_brief_says_code_drifted(repo: Repo, engine: Engine, clock) -> None:
    """The SessionStart brief carries the drifted label on the note's line, like every other label."""
    path = note_on(repo, engine, "python")
    _, target, other, _ = LANGS["python"]
    repo.write(path, HEADS["python"] + target.replace("+ 1", "+ 2") + "\n" + other)
    clock.advance(minutes=5)
    text = engine.session_brief(book=False).text
    line = next(line for line in text.splitlines() if "refresh_token() in src/auth/session.py" in line)
    assert "[drifted: src/auth/session.py:refresh_token changed]" in line


def test_captured_failure_is_not_anchored(repo: Repo, engine: Engine) -> None:
    """Only notes (claims someone wrote) are anchored; a captured traceback naming a function is not."""
    path, target, other, _ = LANGS["python"]
    repo.write(path, HEADS["python"] + target + "\n" + other)
    repo.commit("session")
    engine.refresh()  # the checkout's inventory is recorded, so extraction knows the repository
    ok(
        repo.path,
        "log",
        "cmd",
        "--cmd",
        "pytest -q",
        "--exit",
        "1",
        "--stderr",
        f'File "{path}", line 5, in refresh_token\n    return y\nAssertionError',
    )
    refs = engine.conn.execute("SELECT COUNT(*) FROM memory_references").fetchone()[0]
    assert refs >= 1 and anchored(engine) == []
