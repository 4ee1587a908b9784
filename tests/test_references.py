"""Tests for reference extraction from memory subject and text (reference behaviour §5.1)."""

from __future__ import annotations

import dataclasses

import pytest

from cortex_engine.scope.references import Reference, extract_references


def normalized(subject: str | None, text: str) -> list[str]:
    """The normalized paths extracted from `subject` and `text`, in output order."""
    return [ref.normalized for ref in extract_references(subject, text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The store lives in src/db/store.ts now.", Reference("src/db/store.ts", "src/db/store.ts", "file")),
        ("run ./src/a.py first", Reference("./src/a.py", "src/a.py", "file")),
        ("crash at src/app.py:42:7 on boot", Reference("src/app.py", "src/app.py", "file")),
        ("(see src/x/y.md).", Reference("src/x/y.md", "src/x/y.md", "file")),
        ("edit ../shared/config.json", Reference("../shared/config.json", "../shared/config.json", "file")),
        ("backslashes src\\db\\store.ts too", Reference("src\\db\\store.ts", "src/db/store.ts", "file")),
        ("check /etc/hosts.conf", Reference("/etc/hosts.conf", "/etc/hosts.conf", "absolute_path")),
        ("todo in ~/notes/todo.md", Reference("~/notes/todo.md", "~/notes/todo.md", "absolute_path")),
        ("rules in ~/.claude/CLAUDE.md", Reference("~/.claude/CLAUDE.md", "~/.claude/CLAUDE.md", "absolute_path")),
        (
            "saved to C:\\Users\\me\\file.txt yesterday",
            Reference("C:\\Users\\me\\file.txt", "C:/Users/me/file.txt", "absolute_path"),
        ),
        (
            "log at C:\\logs\\app.log:12:3",
            Reference("C:\\logs\\app.log", "C:/logs/app.log", "absolute_path"),
        ),
        (
            "in C:\\Program Files\\tool\\cfg.ini.",
            Reference("C:\\Program Files\\tool\\cfg.ini", "C:/Program Files/tool/cfg.ini", "absolute_path"),
        ),
        ("open('/tmp/_allow.sql')", Reference("/tmp/_allow.sql", "/tmp/_allow.sql", "absolute_path")),
    ],
)
def test_single_reference_is_extracted_trimmed_and_typed(text: str, expected: Reference) -> None:
    """Each shape yields exactly one reference with the right raw, normalized and type."""
    assert extract_references(None, text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "Update README.md before release.",
        "see https://example.com/a/b.html for details",
        "cloned https://github.com/obra/superpowers.git",
        "edit <project>/.claude/settings.json",
        "read ${HOME}/x/y.json",
        "under {root}/a/b.ts",
        "copy to %APPDATA%/x/y.json",
        "rg -g **/*.ts",
        "path = homedir()+'/.claude/settings.json'",
        "never pass --no-verify",
        "bumped to 1.2.3 then 1.2.4",
        "the a/b split has no extension",
        "",
    ],
)
def test_non_references_are_not_extracted(text: str) -> None:
    """Bare names, URLs, placeholder/glob roots, concatenations, flags and versions yield nothing."""
    assert extract_references(None, text) == []


@pytest.mark.parametrize(
    ("subject", "text", "expected"),
    [
        ("fix src/auth/login.ts", "the token was stale", ["src/auth/login.ts"]),
        ("src/a/one.py", "and src/b/two.py", ["src/a/one.py", "src/b/two.py"]),
        ("", "src/only/text.py", ["src/only/text.py"]),
        (None, "src/only/text.py", ["src/only/text.py"]),
        ("same src/d/x.py", "again ./src/d/x.py", ["src/d/x.py"]),
    ],
)
def test_subject_contributes_references(subject: str | None, text: str, expected: list[str]) -> None:
    """References come from the subject and the text, subject first; None or empty subject is fine."""
    assert normalized(subject, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("src/a/b.py then ./src/a/b.py then src\\a\\b.py", ["src/a/b.py"]),
        ("/etc/app/x.conf and /etc/app/x.conf", ["/etc/app/x.conf"]),
    ],
)
def test_duplicates_collapse_to_the_first_occurrence(text: str, expected: list[str]) -> None:
    """Spellings that normalize to the same path are reported once."""
    assert normalized(None, text) == expected


def test_first_spelling_is_kept_as_raw() -> None:
    """The kept raw form is the first one written."""
    refs = extract_references(None, "./src/a/b.py and src/a/b.py")
    assert [ref.raw for ref in refs] == ["./src/a/b.py"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("C:\\repo\\src\\db\\store.ts", ["C:/repo/src/db/store.ts"]),
        ("see /home/me/proj/src/db/store.ts", ["/home/me/proj/src/db/store.ts"]),
        ("/home/me/proj/src/db/store.ts and later src/db/store.ts", ["/home/me/proj/src/db/store.ts"]),
        ("src/db/store.ts before /home/me/proj/src/db/store.ts", ["/home/me/proj/src/db/store.ts"]),
        ("~/.claude/settings.json", ["~/.claude/settings.json"]),
        ("/srv/app/main.py and lib/util.py", ["/srv/app/main.py", "lib/util.py"]),
    ],
)
def test_relative_inside_an_absolute_reference_is_dropped(text: str, expected: list[str]) -> None:
    """A relative path contained in an absolute reference is not reported separately."""
    assert normalized(None, text) == expected


def test_output_follows_order_of_first_appearance() -> None:
    """Mixed kinds come out in text order, not grouped by kind."""
    text = "first lib/a.py, then /etc/b.conf, then ~/c/d.md, then D:\\e\\f.txt, then g/h.rs"
    assert normalized("subj x/y.go", text) == [
        "x/y.go",
        "lib/a.py",
        "/etc/b.conf",
        "~/c/d.md",
        "D:/e/f.txt",
        "g/h.rs",
    ]


def test_forward_slash_drive_path_is_one_reference() -> None:
    """`C:/a/b.txt` is one drive path, not also a POSIX `/a/b.txt`."""
    assert extract_references(None, "at C:/work/repo/b.txt") == [
        Reference("C:/work/repo/b.txt", "C:/work/repo/b.txt", "absolute_path")
    ]


def test_path_after_a_url_is_still_extracted() -> None:
    """Only matches beginning inside the URL are rejected; a later path on the line survives."""
    assert normalized(None, "docs https://example.com/a/b.html then src/ok/file.ts") == ["src/ok/file.ts"]


@pytest.mark.parametrize(
    "text",
    [
        "/." * 10_000,
        "./" * 10_000,
        "a/" * 10_000,
        "a." * 10_000,
        "*" * 20_000,
        "a1" * 10_000,
        "a:/" * 6_667,
        "~/" * 10_000,
        "/" * 20_000,
    ],
)
def test_pathological_input_finishes(text: str) -> None:
    """Long runs of slashes, dots, stars, letters and drive roots are scanned without blowing up."""
    assert extract_references(None, text) == []


def test_many_references_in_long_text() -> None:
    """A long text with many distinct paths yields each one once, in order."""
    text = " ".join(f"see src/m{i}/f.py and /abs/m{i}/g.c" for i in range(200))
    refs = normalized(None, text)
    assert len(refs) == 400
    assert refs[:2] == ["src/m0/f.py", "/abs/m0/g.c"]


def test_reference_is_frozen() -> None:
    """References are immutable values."""
    ref = extract_references(None, "src/a/b.py")[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ref.raw = "x"  # type: ignore[misc]  # assigning to a frozen field is the point of the test
