"""The anchor rules at their boundaries (found by mutation testing of `scope/anchors.py`).

What a note's text anchors (line ranges written after a path, symbols it names), how an anchor is named, and
what `locate` says about it in the file as it is now: fresh where it is, fresh where it moved, drifted, missing.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any, cast

import pytest

from cortex_engine.engine import Engine
from cortex_engine.scope import anchors

from .conftest import Repo
from .test_cli import ok_json

BODY = "import os\n\n\ndef refresh_token(x):\n    y = x + 1\n    return y\n\n\ndef other(a):\n    return a * 2\n"


@pytest.fixture
def root(tmp_path: Path) -> str:
    """A checkout holding `src/a.py` (BODY: `refresh_token` on lines 4-6, `other` on 9-10)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(BODY)
    return str(tmp_path)


def made(root: str, text: str, paths: tuple[str, ...] = ("src/a.py",)) -> list[tuple[str | None, int, int, str, str]]:
    """The anchors a note's text makes: (symbol, start, end, name, kind)."""
    return [(a.symbol, a.start, a.end, a.name, a.kind) for a in anchors.find_anchors(root, list(paths), text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see src/a.py:4-6", [(None, 4, 6, "src/a.py:4-6", "lines")]),
        ("see src/a.py#L4-L6", [(None, 4, 6, "src/a.py:4-6", "lines")]),
        ("see src/a.py#L4-6", [(None, 4, 6, "src/a.py:4-6", "lines")]),
        ("see src/a.py#L5", [(None, 5, 5, "src/a.py:5", "lines")]),
        ("src/a.py:6-4 backwards", [(None, 4, 6, "src/a.py:4-6", "lines")]),
        ("./src/a.py:5", [(None, 5, 5, "src/a.py:5", "lines")]),
        (
            "src/a.py:5 and src/a.py:9-10",
            [(None, 5, 5, "src/a.py:5", "lines"), (None, 9, 10, "src/a.py:9-10", "lines")],
        ),
        ("src/a.py:4-900 runs past the end", [(None, 4, 10, "src/a.py:4-10", "lines")]),
        ("src/a.py:10", [(None, 10, 10, "src/a.py:10", "lines")]),
        ("src/a.py:11", []),  # past the last line
        ("src/a.py:0", []),
        ("src/a.py:2", []),  # a blank line anchors nothing
        ("xsrc/a.py:4", []),  # the path inside a longer one
        ("lib/src/a.py:4", []),
        ("src/a.py:41x", []),
        ("src/a.py:45", []),
    ],
)
def test_a_line_range_written_after_the_path_is_anchored(root: str, text: str, expected: list[Any]) -> None:
    assert made(root, text) == expected


def test_a_path_written_again_inside_its_own_range_is_noted_and_anchored_once(repo: Repo) -> None:
    """`see 1.py:1.py here` through `cortex note`: the range `:1` after `1.py` is where the next `1.py` starts, so
    the scan resumes past the range; the note is stored and anchors line 1 of `1.py`, once."""
    repo.write("1.py", "x = 1\ny = 2\n")
    repo.commit("one file")
    note = ok_json(repo.path, "note", "--kind", "insight", "see 1.py:1.py here")
    shown = ok_json(repo.path, "inspect-memory", note["item_id"])
    assert [(a["recorded"]["path"], a["recorded"]["start"], a["recorded"]["end"]) for a in shown["anchors"]] == [
        ("1.py", 1, 1)
    ]


def test_a_range_of_400_lines_or_more_is_not_anchored(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x\n" * 500)
    assert [(a.start, a.end) for a in anchors.find_anchors(str(tmp_path), ["big.txt"], "big.txt:1-400")] == [(1, 400)]
    assert anchors.find_anchors(str(tmp_path), ["big.txt"], "big.txt:1-401") == []


def test_a_named_symbol_is_anchored_with_its_span(root: str) -> None:
    assert made(root, "refresh_token() in src/a.py") == [("refresh_token", 4, 6, "src/a.py:refresh_token", "symbol")]
    assert made(root, "src/a.py:4-6 and `other`") == [
        (None, 4, 6, "src/a.py:4-6", "lines"),
        ("other", 9, 10, "src/a.py:other", "symbol"),
    ]
    assert made(root, "nothing_here() in src/a.py") == []


def test_a_file_of_no_known_language_gets_ranges_but_no_symbols(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("def refresh_token(x):\n    return x\n")
    found = anchors.find_anchors(str(tmp_path), ["notes.txt"], "refresh_token() in notes.txt:1")
    assert [(a.symbol, a.start, a.end) for a in found] == [(None, 1, 1)]


def test_a_symbol_defined_twice_is_not_anchored(tmp_path: Path) -> None:
    (tmp_path / "b.py").write_text(
        "class A:\n    def run(self):\n        return 1\n\n\nclass B:\n    def run(self):\n        return 2\n"
    )
    assert anchors.find_anchors(str(tmp_path), ["b.py"], "run_all calls `run` in b.py") == []
    assert [(a.symbol, a.start, a.end) for a in anchors.find_anchors(str(tmp_path), ["b.py"], "B.run() in b.py")] == [
        ("B.run", 7, 8)
    ]


def test_at_most_eight_anchors_per_note(tmp_path: Path) -> None:
    (tmp_path / "c.py").write_text("".join(f"x{n} = {n}\n" for n in range(20)))
    text = " ".join(f"c.py:{n}" for n in range(1, 12))
    found = anchors.find_anchors(str(tmp_path), ["c.py"], text)
    assert [a.start for a in found] == list(range(1, 9))


def test_the_same_anchor_written_twice_is_one(root: str) -> None:
    assert made(root, "src/a.py:5 and again src/a.py:5") == [(None, 5, 5, "src/a.py:5", "lines")]


def test_named_symbols_read_separators_as_dots_and_skip_keywords_and_short_names() -> None:
    assert anchors.named_symbols("A::run, B#stop, `go()`, ab(), if (x), print(y), self.x, abc()") == [
        "A.run",
        "B.stop",
        "self.x",
        "abc",
    ]
    assert anchors.named_symbols("fooBar and snake_case then Plain") == ["fooBar", "snake_case"]


def source() -> anchors.Source:
    """BODY as the file `src/a.py` now reads."""
    return anchors.source_of("src/a.py", BODY)


def test_locate_finds_an_unchanged_symbol_and_range_fresh_where_they_are() -> None:
    lines = BODY.splitlines(keepends=True)
    digest = anchors.span_digest(lines, 4, 6)
    tagged = anchors.symbol_digest(lines, anchors.Span(4, 6))
    assert anchors.locate(source(), "refresh_token", 4, 6, tagged) == anchors.Located("fresh", 4, 6, tagged)
    # an anchor of the format before decorators counted (a bare digest) is answered with its digest as format 2
    assert anchors.locate(source(), "refresh_token", 4, 6, digest) == anchors.Located("fresh", 4, 6, tagged)
    assert anchors.locate(source(), None, 4, 6, digest) == anchors.Located("fresh", 4, 6, digest)
    assert anchors.locate(None, "refresh_token", 4, 6, digest) == anchors.Located("unknown")


def test_locate_follows_moved_content_to_its_nearest_copy() -> None:
    digest = anchors.span_digest(["    return a * 2\n"], 1, 1)
    text = "x = 1\n    return a * 2\n" + "pass\n" * 5 + "return a*2\n" + "pass\n"
    # a fresh Source each time: `find_content` keeps its first answer per (length, digest), whatever `near` was
    assert anchors.locate(anchors.source_of("a.py", text), None, 9, 9, digest) == anchors.Located("fresh", 8, 8, digest)
    assert anchors.locate(anchors.source_of("a.py", text), None, 3, 3, digest) == anchors.Located("fresh", 2, 2, digest)


def test_locate_says_drifted_or_missing_when_the_content_is_gone() -> None:
    lines = BODY.splitlines(keepends=True)
    digest = anchors.span_digest(lines, 4, 6)
    changed = anchors.source_of("src/a.py", BODY.replace("x + 1", "x + 2"))
    now = anchors.span_digest(changed.lines, 4, 6)
    tagged = anchors.symbol_digest(changed.lines, anchors.Span(4, 6))
    assert anchors.locate(changed, "refresh_token", 4, 6, digest) == anchors.Located("drifted", 4, 6, tagged)
    assert anchors.locate(changed, None, 4, 6, digest) == anchors.Located("drifted", 4, 6, now)
    assert anchors.locate(changed, None, 8, 12, digest) == anchors.Located("drifted", 8, 10, None)
    assert anchors.locate(changed, "renew_token", 4, 6, digest) == anchors.Located("missing")


def test_a_drifted_symbol_defined_twice_is_placed_at_the_definition_nearest_its_old_place() -> None:
    text = "class A:\n    def run(self):\n        return 1\n\n\nclass B:\n    def run(self):\n        return 2\n"
    twice = anchors.source_of("b.py", text)
    assert anchors.locate(twice, "run", 6, 7, "0" * 20).start == 7
    assert anchors.locate(twice, "run", 3, 3, "0" * 20).start == 2


def test_short_diff_shows_the_changed_lines_and_marks_a_cut() -> None:
    assert anchors.short_diff(["a\n", "b\n", "c\n"], ["a\n", "B\n", "C\n"], 4) == ["-b", "-c", "+B", "+C"]
    assert anchors.short_diff(["a\n", "b\n", "c\n"], ["a\n", "B\n", "C\n"], 3) == ["-b", "-c", "+B", "…"]
    assert anchors.short_diff(["a\n"], ["a\n"], 3) == []


def test_whitespace_never_changes_a_digest() -> None:
    spaced = anchors.span_digest(["def f( x ):\n", "  return x\n"], 1, 2)
    assert spaced == anchors.span_digest(["def f(x):return x"], 1, 1)
    assert anchors.span_digest(["a\n", "b\n"], 1, 1) != anchors.span_digest(["a\n", "b\n"], 1, 2)


def spans_of(path: str, text: str) -> dict[str, list[tuple[int, int]]]:
    """Every definition a file holds, as `Source.definitions` finds them (the anchors bench reads these)."""
    found = anchors.source_of(path, text).definitions()
    return {name: [(s.start, s.end) for s in spans] for name, spans in found.items()}


def test_python_definitions_are_found_with_their_qualified_names() -> None:
    text = (
        "class A:\n    def m(self):\n        return 1\n\n    async def n(self):\n        return 2\n\n\n"
        "def f():\n    def inner():\n        pass\n    return inner\n"
    )
    assert spans_of("x.py", text) == {
        "A": [(1, 6)],
        "A.m": [(2, 3)],
        "m": [(2, 3)],
        "A.n": [(5, 6)],
        "n": [(5, 6)],
        "f": [(9, 12)],
        "f.inner": [(10, 11)],
        "inner": [(10, 11)],
    }


def test_braces_inside_strings_do_not_end_a_definition() -> None:
    text = (
        'function f() {\n  const s = "}";\n  const t = "\\"}";\n  const u = `a\n}`;\n  return s;\n}\n\n'
        "function g() {\n  return 1;\n}\n"
    )
    assert spans_of("x.js", text) == {"f": [(1, 7)], "g": [(9, 11)]}


def test_an_unterminated_quote_ends_at_its_line() -> None:
    assert spans_of("x.go", "func f() rune {\n\tr := '}\n\treturn r\n}\n") == {"f": [(1, 4)]}


def test_rust_char_literals_are_strings_and_lifetimes_are_not() -> None:
    text = (
        "fn brace() -> char {\n    let c = '{';\n    c\n}\n\n"
        "fn quote<'a>(s: &'a str) -> char {\n    let q = '\\\"'; {\n    q }\n}\n"
    )
    assert spans_of("x.rs", text) == {"brace": [(1, 4)], "quote": [(6, 9)]}


def test_moved_content_is_found_on_the_first_and_the_last_lines() -> None:
    digest = anchors.span_digest(["x = 1\n", "y = 2\n"], 1, 2)
    first = anchors.source_of("a.py", "x = 1\ny = 2\npass\npass\n")
    assert anchors.locate(first, None, 3, 4, digest) == anchors.Located("fresh", 1, 2, digest)
    last = anchors.source_of("a.py", "pass\npass\nx = 1\ny = 2\n")
    assert anchors.locate(last, None, 1, 2, digest) == anchors.Located("fresh", 3, 4, digest)


def test_a_window_is_never_shorter_than_the_anchored_span() -> None:
    """A span ending in a blank line, whose first line alone ends the file, is not found there."""
    digest = anchors.span_digest(["x = 1\n", "\n"], 1, 2)
    assert anchors.locate(anchors.source_of("a.py", "pass\nx = 1\n"), None, 5, 6, digest).status == "drifted"


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("x.js", "function f() {\n  // }\n  /* } */\n  return 1;\n}\n", {"f": [(1, 5)]}),  # braces in comments
        ("x.js", "function f() {\n  /* } \n", {}),  # an unclosed comment: no end
        ("x.js", "function f() { // }", {}),
        ("x.js", "function f() {\n  return 1;\n}\n/", {"f": [(1, 3)]}),
        ("x.js", "function f(a = {}) {\n  return a;\n}\n", {"f": [(1, 3)]}),  # a brace inside the parameters
        ("x.js", "function f(a, [b]) {\n  return (a);\n}\n", {"f": [(1, 3)]}),
        ("x.js", "function f()\n}\n{\n}\n", {}),  # a closing brace before any body
        ("x.js", "function print() {\n}\nfunction other() {\n}\n", {"other": [(3, 4)]}),  # a skipped name, then more
        # an overload declaration ends on its `;`; a function's body follows
        (
            "x.ts",
            "export function f(a: number): number;\nexport function f(a) {\n  return a;\n}\n",
            {"f": [(1, 1), (2, 4)]},
        ),
        # a method must have a body: an abstract one is none, and the walk goes on to the next
        (
            "x.java",
            "abstract class A {\n  abstract int size();\n  int two() {\n    return 2;\n  }\n}\n",
            {"A": [(1, 6)], "two": [(3, 5)], "A.two": [(3, 5)]},
        ),
        ("x.go", "func (s *Store) Refresh() {\n}\n", {"Refresh": [(1, 2)], "Store.Refresh": [(1, 2)]}),
        # an `impl` only qualifies what it holds: it is no definition of `Store`
        (
            "x.rs",
            "pub struct Store { n: u32 }\n\nimpl Store {\n    pub fn refresh(&mut self) -> u32 {\n"
            "        self.n\n    }\n}\n",
            {"Store": [(1, 1)], "refresh": [(4, 6)], "Store.refresh": [(4, 6)]},
        ),
        ("notes.txt", "function f() {}\n", {}),  # no known language: no definitions
    ],
)
def test_definition_ends(path: str, text: str, expected: dict[str, Any]) -> None:
    assert spans_of(path, text) == expected


def test_a_method_body_must_open_within_eight_lines_of_its_header() -> None:
    near = "class A {\n  run()" + "\n" * 9 + "  {\n    return 1;\n  }\n}\n"
    assert spans_of("x.js", near)["A.run"] == [(2, 13)]
    far = "class A {\n  run()" + "\n" * 10 + "  {\n    return 1;\n  }\n}\n"
    assert spans_of("x.js", far) == {"A": [(1, 15)]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("function f() {\n  return 1;\n", {}),  # the file ends inside the body
        ("function f() {\n  return X; }\n\nfunction g() {\n}\n", {"f": [(1, 2)], "g": [(4, 5)]}),
        ("function f() {\n  return a * b;\n}\n", {"f": [(1, 3)]}),  # `*` alone opens no comment
        ("function f() {\n  return a /", {}),  # a `/` as the last character
        ("function f() {\n  return a/X;\n}\n", {"f": [(1, 3)]}),
        ("function f() {\n  // }\n  return 1;\n}\n", {"f": [(1, 4)]}),
        ("function f() {\n  /* }\n  } */\n  return 1;\n}\n", {"f": [(1, 5)]}),  # a block comment over two lines
        ("function f() {\n  const u = `abc", {}),  # a template string open at the end of the file
        ('function f() {\n  return "a"}\n', {"f": [(1, 2)]}),  # a brace right after a string
    ],
)
def test_a_body_is_read_past_strings_and_comments_to_its_own_brace(text: str, expected: dict[str, Any]) -> None:
    assert spans_of("x.js", text) == expected


def test_short_diff_keeps_trailing_spaces_and_letters() -> None:
    assert anchors.short_diff(["a  \n", "fooX\n"], ["b\n", "fooX\n"], 5) == ["-a  ", "+b"]
    assert anchors.short_diff(["keepX\n"], ["keepY\n"], 5) == ["-keepX", "+keepY"]


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("x.js", "function f() {\n  /**/ return 1;\n}\n", {"f": [(1, 3)]}),  # an empty block comment
        ("x.js", "function f() {\n  return 1; // x\n}\n", {"f": [(1, 3)]}),  # a line comment, then `}` at a line start
        (
            "x.js",
            "function f() {\n  return s.match(X, /{/);\n}\n",
            {"f": [(1, 3)]},
        ),  # a brace in a regex, in parentheses
        ("x.js", "function f() {\n  return g(a)(/{/);\n}\n", {"f": [(1, 3)]}),
        ("x.js", "function f() {\n  return g((a), /{/);\n}\n", {"f": [(1, 3)]}),
        ("x.rs", "fn f(x: [u8; 4]) -> u8 {\n    x[0]\n}\n", {"f": [(1, 3)]}),  # a `;` inside brackets ends nothing
        ("x.js", "class A {\n}\nfunction g() {\n}\n", {"A": [(1, 2)], "g": [(3, 4)]}),  # after a class: not its member
        ("x.js", "class A {\n  run() {\n  }}\n", {"A": [(1, 3)], "run": [(2, 3)], "A.run": [(2, 3)]}),  # ending with it
    ],
)
def test_definition_ends_inside_parentheses_and_containers(path: str, text: str, expected: dict[str, Any]) -> None:
    assert spans_of(path, text) == expected


def test_a_python_name_is_found_after_an_occurrence_at_the_start_of_the_file() -> None:
    assert anchors.source_of("a.py", "run_all = 1\ndef run():\n    return 1\n").spans("run") == [anchors.Span(2, 3)]


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("x.rs", "fn f() -> [u8; 4] {\n    [0; 4]\n}\n", {"f": [(1, 3)]}),  # a `;` in the return type ends nothing
        ("x.js", "function f() {\n  /* a */ }\n\nfunction g() {\n  /* b */\n}\n", {"f": [(1, 2)], "g": [(4, 6)]}),
        ("x.js", "/* head */\nfunction f() {\n  /* } */\n  return 1;\n}\n", {"f": [(2, 5)]}),  # a comment before it
        ("x.js", "function f() {\n  /* a *//* } */\n  return 1;\n}\n", {"f": [(1, 4)]}),  # two comments back to back
    ],
)
def test_a_block_comment_ends_at_its_own_first_close(path: str, text: str, expected: dict[str, Any]) -> None:
    assert spans_of(path, text) == expected


def test_the_scan_resumes_right_after_a_block_comment_s_close() -> None:
    """`*//x` closes the comment at `*/`; the `/` after it starts no second comment."""
    assert spans_of("x.js", "function f() {\n  /* a *//x }\n}\n") == {"f": [(1, 2)]}


# -- where a definition ends, what a note's text anchors, how `locate` finds it again, which files are read ---


LONG_PARAMETERS = {
    "web/store.ts": (
        "class Store {\n  refreshToken(\n"
        + "".join(f"    p{k}: number,\n" for k in range(10))
        + "  ): number {\n    const y = p0 + 1;\n    return y;\n  }\n}\n"
    ),
    "src/Store.java": (
        "public class Store {\n  public int refreshToken(\n"
        + "".join(f"      int p{k}{',' if k < 9 else ''}\n" for k in range(10))
        + "  ) {\n    int y = p0 + 1;\n    return y;\n  }\n}\n"
    ),
}


@pytest.mark.parametrize("path", sorted(LONG_PARAMETERS))
def test_a_method_whose_parameters_run_over_ten_lines_is_anchored_and_drifts_with_its_body(
    tmp_path: Path, path: str
) -> None:
    text = LONG_PARAMETERS[path]
    (tmp_path / path).parent.mkdir(parents=True)
    (tmp_path / path).write_text(text)
    found = anchors.find_anchors(str(tmp_path), [path], f"Store.refreshToken() in {path} adds one")
    assert [(a.symbol, a.start, a.end) for a in found] == [("Store.refreshToken", 2, 16)]
    anchor = found[0]
    same = anchors.source_of(path, text)
    assert anchors.locate(same, anchor.symbol, anchor.start, anchor.end, anchor.digest).status == "fresh"
    edited = anchors.source_of(path, text.replace("p0 + 1", "p0 + 2"))
    assert anchors.locate(edited, anchor.symbol, anchor.start, anchor.end, anchor.digest) == anchors.Located(
        "drifted", 2, 16, anchors.symbol_digest(edited.lines, anchors.Span(2, 16))
    )


def labels(engine: Engine) -> list[object]:
    """The freshness label of each memory of the scope."""
    items = cast("list[dict[str, object]]", engine.validate_memory(persist=False)["items"])
    return [item["label"] for item in items]


def test_a_claim_on_a_method_with_a_long_parameter_list_goes_stale_when_its_body_changes(
    repo: Repo, engine: Engine
) -> None:
    path = "web/store.ts"
    repo.write(path, LONG_PARAMETERS[path])
    repo.commit("store")
    engine.note("decision", f"Store.refreshToken() in {path} adds one before returning", "token refresh")
    assert labels(engine) == [None]
    repo.write(path, LONG_PARAMETERS[path].replace("p0 + 1", "p0 + 2"))
    assert labels(engine) == [f"drifted: {path}:Store.refreshToken changed"]


def test_two_anchors_of_the_same_content_are_each_found_at_the_copy_nearest_where_they_were() -> None:
    block = "retry(3)\nbackoff(2)\n"
    text = "a = 1\n" + block + "".join(f"x{k} = {k}\n" for k in range(20)) + block
    lines = text.splitlines(keepends=True)
    digest = anchors.span_digest(lines, 2, 3)
    assert anchors.span_digest(lines, 24, 25) == digest
    moved = anchors.source_of("src/conf.py", "# one\n# two\n" + text)  # both copies two lines down
    assert anchors.locate(moved, None, 2, 3, digest) == anchors.Located("fresh", 4, 5, digest)
    assert anchors.locate(moved, None, 24, 25, digest) == anchors.Located("fresh", 26, 27, digest)


def spans(path: str, text: str, *names: str) -> dict[str, list[tuple[int, int]]]:
    """The spans `Source.spans` gives each name (what `find_anchors` and `locate` ask)."""
    source = anchors.source_of(path, text)
    return {name: [(s.start, s.end) for s in source.spans(name)] for name in names}


def test_ruby_definitions_end_on_the_end_at_their_own_indentation() -> None:
    text = (
        "module Auth\n  class Store\n    def refresh?(x)\n      if x\n        1\n      end\n    end\n\n"
        "    def self.build!\n      end_time = new\n    end\n  end\nend\n\ndef orphan\n  1\n"
    )
    assert anchors.source_of("lib/auth.rb", text).definitions() == {
        "Auth": [anchors.Span(1, 13)],
        "Store": [anchors.Span(2, 12)],
        "Auth.Store": [anchors.Span(2, 12)],
        "refresh?": [anchors.Span(3, 7)],
        "Store.refresh?": [anchors.Span(3, 7)],
        "build!": [anchors.Span(9, 11)],
        "Store.build!": [anchors.Span(9, 11)],
    }  # `orphan` never ends


# A file `ast` cannot parse whole (a Python 2 print at the end): only the scan can find its definitions.
BROKEN_TAIL = "\n\nprint 'py2'\n"


def test_python_definitions_are_qualified_by_the_walk_up_their_headers_without_parsing_the_file() -> None:
    text = (
        "class A:\n    def g(\n        self,  # (a note\n        x,\n    ) -> int:\n        return x\n\n"
        "    @property\n    def f(self):\n        def inner():\n            return 1\n        return inner\n"
        + BROKEN_TAIL
    )
    assert spans("x.py", text, "A.g", "g", "A.f", "f", "f.inner", "A.f.inner", "inner", "B.f", "A", "A.inner") == {
        "A.g": [(2, 6)],
        "g": [(2, 6)],
        "A.f": [(8, 12)],
        "f": [(8, 12)],
        "f.inner": [(10, 11)],
        "A.f.inner": [(10, 11)],
        "inner": [(10, 11)],
        "B.f": [],
        "A": [(1, 12)],
        "A.inner": [],
    }


@pytest.mark.parametrize(
    "header",
    ["        self,\n    ):", "        self,\n):", "        self, x=[\n    ]) -> int:", "        self, x={\n    }):"],
)
def test_a_header_closed_at_a_lower_indentation_is_passed_on_the_way_up(header: str) -> None:
    text = f"class A:\n    def g(\n{header}\n        def f():\n            return 1\n        return f\n"
    assert spans("x.py", text + BROKEN_TAIL, "A.g.f", "g.f") == {"A.g.f": [(5, 6)], "g.f": [(5, 6)]}


def test_the_walk_up_reads_one_space_indentation_and_the_file_s_first_line() -> None:
    assert spans("x.py", "class A:\n def f(self):\n  return 1\n" + BROKEN_TAIL, "A.f") == {"A.f": [(2, 3)]}
    assert spans("x.py", "\ndef f():\n    return 1\n" + BROKEN_TAIL, "f") == {"f": [(2, 3)]}
    # a fragment that starts indented: the walk ends at the first line, not at the file's last
    assert spans("x.py", "\n    def f():\n        pass\nclass Z: pass\n", "Z.f", "f") == {"Z.f": [], "f": [(2, 3)]}


def test_only_a_definition_of_the_whole_name_on_its_own_line_counts() -> None:
    assert spans("x.py", "def refresh_all():\n    pass\n" + BROKEN_TAIL, "refresh") == {"refresh": []}
    assert spans("x.py", "def fetch(fetch_all):\n    return fetch_all\n" + BROKEN_TAIL, "fetch") == {"fetch": [(1, 2)]}


def test_a_one_line_definition_is_one_line() -> None:
    assert spans("x.py", "def h(): return 1\nx = 2\n" + BROKEN_TAIL, "h") == {"h": [(1, 1)]}
    assert spans("x.py", "def h(): return MAX\nx = 2\n" + BROKEN_TAIL, "h") == {"h": [(1, 1)]}


def test_a_header_s_brackets_are_counted_outside_its_comments() -> None:
    text = (
        "class A:\n    def g(\n        self,  # a) the size, #b) the rest\n        x=MAX,\n    ) -> int:\n"
        "        return x\n" + BROKEN_TAIL
    )
    assert spans("x.py", text, "A.g") == {"A.g": [(2, 6)]}


def test_a_header_ends_at_its_colon_even_with_a_bracket_left_open_in_a_string() -> None:
    text = 'def f(x="("):\n    return x\n\n\ndef g():\n    return 2\n'
    assert spans("x.py", text + BROKEN_TAIL, "f", "g") == {"f": [(1, 2)], "g": [(5, 6)]}


def test_a_header_left_open_at_the_end_of_the_file_ends_on_the_last_line() -> None:
    assert anchors.source_of("x.py", "def f(\n    a,\n").definitions() == {"f": [anchors.Span(1, 2)]}


def test_a_flush_left_comment_does_not_end_a_body() -> None:
    text = "def f():\n    x = 1\n# a flush-left comment\n    return x\n" + BROKEN_TAIL
    assert spans("x.py", text, "f") == {"f": [(1, 4)]}


def test_a_definition_the_walk_cannot_qualify_is_asked_of_ast() -> None:
    # a flush-left string between the method and its class: the walk cannot tell it from code
    text = 'class A:\n    doc = """\nflush left\n"""\n    def f(self):\n        return 1\n'
    assert spans("x.py", text, "A.f", "B.f") == {"A.f": [(5, 6)], "B.f": []}
    assert spans("x.py", text + BROKEN_TAIL, "A.f") == {"A.f": []}
    text = 'class A:\n    doc = """\nXML schema"""\n    def f(self):\n        return 1\n'  # not a header's closer
    assert spans("x.py", text, "A.f") == {"A.f": [(4, 5)]}
    assert spans("x.py", text + BROKEN_TAIL, "A.f") == {"A.f": []}


def test_a_definition_the_walk_qualifies_is_kept_beside_one_it_could_not() -> None:
    text = "if X:\n    def f():\n        return 0\nclass A:\n    def f(self):\n        return 1\n"
    assert spans("x.py", text + BROKEN_TAIL, "A.f") == {"A.f": [(5, 6)]}


def test_a_cut_that_is_not_one_definition_is_asked_of_ast() -> None:
    # the scan cuts `f` at the flush-left line inside its string; `ast` reads it whole
    text = 'def f():\n    s = """\nflush-left\n"""\n    return s\n\n\ndef g():\n    return 2\n'
    assert spans("x.py", text, "f", "g") == {"f": [(1, 5)], "g": [(8, 9)]}
    assert spans("x.py", text + BROKEN_TAIL, "f", "g") == {"f": [], "g": [(8, 9)]}


def test_a_symbol_defined_over_400_lines_or_more_is_not_anchored(tmp_path: Path) -> None:
    body = "".join(f"    x{k} = {k}\n" for k in range(400))
    (tmp_path / "big.py").write_text("def huge_function():\n" + body + "\n\ndef small_one():\n    return 1\n")
    found = anchors.find_anchors(str(tmp_path), ["big.py"], "huge_function() and small_one() in big.py")
    assert [(a.symbol, a.start, a.end) for a in found] == [("small_one", 404, 405)]
    (tmp_path / "big.py").write_text("def huge_function():\n" + body[: -len("    x399 = 399\n")])
    found = anchors.find_anchors(str(tmp_path), ["big.py"], "huge_function() in big.py")
    assert [(a.symbol, a.start, a.end) for a in found] == [("huge_function", 1, 400)]


def test_the_symbols_of_a_note_are_looked_for_in_each_of_its_files(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def alpha_fn():\n    return 1\n")
    (tmp_path / "b.py").write_text("def beta_fn():\n    return 2\n")
    found = anchors.find_anchors(str(tmp_path), ["a.py", "b.py"], "alpha_fn() calls beta_fn()")
    assert [(a.path, a.symbol) for a in found] == [("a.py", "alpha_fn"), ("b.py", "beta_fn")]


def test_two_moved_ranges_of_different_content_are_each_found() -> None:
    text = "a = 1\nb = 2\nc = 3\nd = 4\n"
    lines = text.splitlines(keepends=True)
    first, second = anchors.span_digest(lines, 1, 2), anchors.span_digest(lines, 3, 3)
    moved = anchors.source_of("src/conf.py", "# new\n" + text)
    assert anchors.locate(moved, None, 1, 2, first) == anchors.Located("fresh", 2, 3, first)
    assert anchors.locate(moved, None, 3, 3, second) == anchors.Located("fresh", 4, 4, second)


def test_read_source_reads_only_a_regular_file_inside_the_root_without_following_links(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.py").write_text("y = 2\n")
    os.symlink(outside / "b.py", root / "src" / "link.py")
    os.symlink(outside, root / "linked")
    source = anchors.read_source(str(root), "src/a.py")
    assert source is not None and source.text == "x = 1\n" and source.language == "python"
    os.symlink(outside, root / "src" / "deeper")
    for rel in (
        "",
        "/etc/passwd",
        "../outside/b.py",
        "src/../src/a.py",
        "src/missing.py",
        "src",
        "src/link.py",
        "linked/b.py",
        "src/deeper/b.py",
        "src/a.py\0",
    ):
        assert anchors.read_source(str(root), rel) is None, rel


def test_an_absolute_path_is_never_read_even_where_the_root_has_its_directories(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    root = tmp_path / "root"
    (root / str(tmp_path).lstrip("/")).mkdir(parents=True)
    assert anchors.read_source(str(root), str(outside)) is None


def test_read_source_refuses_a_file_over_the_cap_or_with_a_nul_in_its_head(tmp_path: Path) -> None:
    (tmp_path / "cap.txt").write_bytes(b"x" * anchors.MAX_FILE_BYTES)
    (tmp_path / "over.txt").write_bytes(b"x" * (anchors.MAX_FILE_BYTES + 1))
    (tmp_path / "nul.txt").write_bytes(b"x" * 8191 + b"\0")
    (tmp_path / "late.txt").write_bytes(b"x" * 8192 + b"\0")
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    cap = anchors.read_source(str(tmp_path), "cap.txt")
    assert cap is not None and len(cap.text) == anchors.MAX_FILE_BYTES
    assert anchors.read_source(str(tmp_path), "over.txt") is None
    assert anchors.read_source(str(tmp_path), "nul.txt") is None
    late = anchors.read_source(str(tmp_path), "late.txt")
    assert late is not None and late.text.endswith("x\0")
    latin = anchors.read_source(str(tmp_path), "latin.txt")
    assert latin is not None and latin.lines == ["caf\ufffd\n"] and latin.language is None


def test_read_source_rereads_a_file_whose_size_or_time_changed(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("x = 1\n")
    assert anchors.read_source(str(tmp_path), "a.py").text == "x = 1\n"  # type: ignore[union-attr]
    stamp = os.stat(target).st_mtime_ns
    target.write_text("x = 2\n")
    os.utime(target, ns=(stamp, stamp))
    assert anchors.read_source(str(tmp_path), "a.py").text == "x = 1\n"  # type: ignore[union-attr]  # same key
    os.utime(target, ns=(stamp + 10**9, stamp + 10**9))
    assert anchors.read_source(str(tmp_path), "a.py").text == "x = 2\n"  # type: ignore[union-attr]
    target.write_text("x = 33\n")
    os.utime(target, ns=(stamp + 10**9, stamp + 10**9))
    assert anchors.read_source(str(tmp_path), "a.py").text == "x = 33\n"  # type: ignore[union-attr]


def test_the_oldest_quarter_of_the_files_read_is_forgotten_when_the_cache_is_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(anchors, "_sources", {})
    monkeypatch.setattr(anchors, "SOURCE_CACHE_SIZE", 8)
    stamp = 10**18
    for k in range(9):
        (tmp_path / f"f{k}.py").write_text("a = 1\n")
        os.utime(tmp_path / f"f{k}.py", ns=(stamp, stamp))
        assert anchors.read_source(str(tmp_path), f"f{k}.py") is not None
    for k in range(9):  # rewritten with the same size and time: only a forgotten file is read again
        (tmp_path / f"f{k}.py").write_text("b = 2\n")
        os.utime(tmp_path / f"f{k}.py", ns=(stamp, stamp))
    order = [1, *range(2, 9), 0]  # f0 and f1 were forgotten; reading f1 again fills the room f0 and f1 left
    texts = [anchors.read_source(str(tmp_path), f"f{k}.py").text for k in order]  # type: ignore[union-attr]
    assert texts == ["b = 2\n"] + ["a = 1\n"] * 7 + ["b = 2\n"]


def test_a_qualified_name_whose_last_part_is_a_keyword_or_builtin_is_no_symbol() -> None:
    assert anchors.named_symbols("call Config.type and x.len or Store.refresh") == ["Store.refresh"]


@pytest.mark.parametrize(
    ("text", "symbol"),
    [
        ("Store.refresh keeps it", "Store.refresh"),  # only a qualified name
        ("the `refresh` method keeps it", "refresh"),  # only a backticked one
        ("refresh() keeps it", "refresh"),  # only a call
        ("refresh_all keeps it", "refresh_all"),  # only a code-shaped word
    ],
)
def test_a_note_naming_code_any_one_way_has_its_file_read(tmp_path: Path, text: str, symbol: str) -> None:
    (tmp_path / "a.py").write_text(
        "class Store:\n    def refresh(self):\n        return 1\n\ndef refresh_all():\n    return 2\n"
    )
    assert [a.symbol for a in anchors.find_anchors(str(tmp_path), ["a.py"], text)] == [symbol]


def test_a_rust_lifetime_before_the_body_does_not_hide_its_brace() -> None:
    text = "fn first<'a>(x: &'a [u8]) -> &'a u8 {\n    &x[0]\n}\n"
    assert anchors.source_of("src/lib.rs", text).definitions() == {"first": [anchors.Span(1, 3)]}


def test_a_drifted_symbol_is_placed_at_the_first_of_two_definitions_as_near() -> None:
    text = "if X:\n    def f():\n        return 1\nelse:\n    pass\n    def f():\n        return 2\n"
    source = anchors.source_of("x.py", text)
    assert anchors.locate(source, "f", 4, 5, "0" * 20) == anchors.Located(
        "drifted", 2, 3, anchors.symbol_digest(source.lines, anchors.Span(2, 3))
    )


def test_a_changed_range_on_the_last_line_is_drifted_with_what_it_holds_now() -> None:
    source = anchors.source_of("x.py", "a = 1\nb = 2\n")
    assert anchors.locate(source, None, 2, 2, "0" * 20) == anchors.Located(
        "drifted", 2, 2, anchors.span_digest(source.lines, 2, 2)
    )
    assert anchors.locate(source, None, 2, 3, "0" * 20) == anchors.Located("drifted", 2, 2, None)  # past the end


def test_a_line_range_is_anchored_with_the_digest_of_its_own_lines(tmp_path: Path) -> None:
    text = "a = 1\nb = 2\n\n\nc = 3\nd = 4\n"
    (tmp_path / "a.py").write_text(text)
    lines = text.splitlines(keepends=True)
    assert anchors.find_anchors(str(tmp_path), ["missing.py", "a.py"], "a.py:1-2, a.py:3-4 and a.py:5") == [
        anchors.Anchor("a.py", None, 1, 2, anchors.span_digest(lines, 1, 2)),  # the unreadable path is passed over
        anchors.Anchor("a.py", None, 5, 5, anchors.span_digest(lines, 5, 5)),
    ]  # two blank lines anchor nothing


def test_a_path_written_with_its_dot_slash_inside_a_sentence_is_read_only_when_the_dot_starts_a_word(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a = 1\nb = 2\n")
    assert [a.start for a in anchors.find_anchors(str(tmp_path), ["src/a.py"], "see ./src/a.py:2")] == [2]
    assert anchors.find_anchors(str(tmp_path), ["src/a.py"], "see x./src/a.py:2") == []


def test_every_file_and_every_symbol_of_a_note_is_tried(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha_fn\n")
    (tmp_path / "a.py").write_text("def alpha_fn():\n    return beta_fn()\n")
    found = anchors.find_anchors(str(tmp_path), ["notes.txt", "a.py"], "beta_fn() is called by alpha_fn()")
    assert [(a.path, a.symbol) for a in found] == [("a.py", "alpha_fn")]  # `beta_fn` is only called there


def test_a_name_a_file_calls_but_does_not_define_is_no_anchor(tmp_path: Path) -> None:
    (tmp_path / "app.js").write_text("function alpha() {\n  return betaFn();\n}\n")
    found = anchors.find_anchors(str(tmp_path), ["app.js"], "betaFn() is called by alpha()")
    assert [(a.symbol, a.start, a.end) for a in found] == [("alpha", 1, 3)]
    assert anchors.locate(anchors.source_of("app.js", "x = 1;\n"), "betaFn", 1, 3, "0" * 20).status == "missing"


def test_a_definition_grown_past_400_lines_is_still_found_where_the_scan_cut_it() -> None:
    # the cut (ending at the flush-left string) is kept as it is: too long to anchor, so it is not parsed
    text = "def big():\n" + "".join(f"    x{k} = {k}\n" for k in range(399)) + '    s = """\nflush\n"""\n' + BROKEN_TAIL
    source = anchors.source_of("x.py", text)
    assert anchors.locate(source, "big", 1, 3, "0" * 20) == anchors.Located(
        "drifted", 1, 401, anchors.symbol_digest(source.lines, anchors.Span(1, 401))
    )


def test_a_definition_far_down_a_file_is_confirmed_by_ast_like_any_other() -> None:
    text = "".join(f"x{k} = {k}\n" for k in range(300)) + 'def f():\n    s = """\nflush-left\n"""\n    return s\n'
    assert spans("x.py", text, "f") == {"f": [(301, 305)]}


def test_a_span_git_decoded_with_escaped_bytes_still_has_a_digest() -> None:
    """`inspect-memory` hashes the span as git shows it (undecodable bytes escaped as lone surrogates)."""
    assert anchors.span_digest(["caf\udce9\n"], 1, 1) != anchors.span_digest(["caf\ufffd\n"], 1, 1)


def test_a_mention_of_the_path_without_a_range_does_not_end_the_search(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"line {k}\n" for k in range(1, 7)))
    assert [a.start for a in anchors.find_anchors(str(tmp_path), ["a.txt"], "a.txt, then a.txt:5")] == [5]


def test_a_tab_indented_file_is_cut_by_the_scan_like_a_space_indented_one() -> None:
    """A file mid-edit that `ast` cannot parse still has its tab-indented definitions found (not `missing`)."""
    text = "class A:\n\tdef g(self):\n\t\treturn 1\n\n\t@property\n\tdef f(self):\n\t\treturn 2\n"
    # the decorator is part of the method's span (from its `@` line, the header on line 6)
    assert spans("x.py", text + BROKEN_TAIL, "A.f", "A.g", "A") == {"A.f": [(5, 7)], "A.g": [(2, 3)], "A": [(1, 7)]}
    assert anchors.source_of("x.py", text).definitions()["A.f"] == [anchors.Span(5, 7, 6)]


# --- the walk's doubt, the whole-file parse it spares, the per-note cap -------------------------

MODEL = """import numpy as np


class Model:
    weights = (np.eye(3)
@ np.ones((3, 3)))

    def forward(self, x):
        y = x + 1
        return y
"""


def test_a_flush_left_line_inside_brackets_that_starts_with_an_at_sign_leaves_the_walk_in_doubt() -> None:
    """A matrix product continued on a flush-left `@` line is below the class, not a decorator (a decorator sits at
    its definition's own indentation, which the walk up meets first): the walk that passes it cannot qualify
    `forward` and must ask `ast`, which finds `Model.forward`."""
    source = anchors.source_of("model.py", MODEL)
    assert source.spans("Model.forward") == [anchors.Span(8, 10)]
    indented = anchors.source_of("model.py", MODEL.replace("\n@ np", "\n  @ np"))
    assert indented.spans("Model.forward") == [anchors.Span(8, 10)]


def test_a_name_the_scan_rules_out_without_doubt_costs_no_parse_of_the_whole_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The scan answers a name the file does not define, or defines only under another owner, when every line its
    walk up passed was a definition: no whole-file `ast` parse (a note names many such names). A walk that passed
    a block (`if`) is in doubt and does parse the file."""
    text = "class B:\n    def f(self):\n        return 1\n\n\ndef g():\n    return 2\n"
    parsed: list[str] = []
    real_parse = ast.parse

    def parse(source: str) -> ast.Module:
        parsed.append(source)
        return real_parse(source)

    monkeypatch.setattr(ast, "parse", parse)
    source = anchors.source_of("m.py", text)
    assert source.spans("A.f") == [] and source.spans("h") == [] and source.spans("g.f") == []
    assert text not in parsed
    in_doubt = "class B:\n    if True:\n        def f(self):\n            return 1\n"
    assert anchors.source_of("m.py", in_doubt).spans("A.f") == []
    assert in_doubt in parsed


def test_a_range_written_twice_counts_once_toward_the_anchors_of_a_note(tmp_path: Path) -> None:
    """At most MAX_ANCHORS distinct anchors a note: a range written twice is one anchor, so seven ranges of the
    first file, one of them repeated, leave room for the next file's."""
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("".join(f"v{i} = {i}\n" for i in range(1, 40)), encoding="utf-8")
    ranges = " ".join(f"a.py:{i}-{i + 1}" for i in range(1, 14, 2))
    found = anchors.find_anchors(str(tmp_path), ["a.py", "b.py"], f"{ranges} a.py:1-2 and b.py:1-3")
    assert anchors.MAX_ANCHORS == 8
    assert [(a.path, a.start, a.end) for a in found] == [("a.py", i, i + 1) for i in range(1, 14, 2)] + [("b.py", 1, 3)]
