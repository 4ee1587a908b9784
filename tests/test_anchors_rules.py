"""The anchor rules at their boundaries (found by mutation testing of `scope/anchors.py`).

What a note's text anchors (line ranges written after a path, symbols it names), how an anchor is named, and
what `locate` says about it in the file as it is now: fresh where it is, fresh where it moved, drifted, missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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
