"""Reference extraction's repository rules at their boundaries (found by mutation testing of `scope/references.py`).

With a repository to ask, a bare file name is a reference only when tracked at the root, and a relative candidate
shaped like a branch (a version tail, a merge message's `from …`, a ref's name) is one only if it was ever tracked.
"""

from __future__ import annotations

from cortex_engine.scope.references import extract_references, rewrite_path


class Repo:
    """A repository's answers, fixed: files tracked at the root, ref names, paths ever tracked."""

    def __init__(
        self, roots: set[str] | None = None, refs: set[str] | None = None, ever: set[str] | None = None
    ) -> None:
        """Answer from these sets (each empty when not given)."""
        self.roots, self.refs, self.ever = roots or set(), refs or set(), ever or set()

    def tracked_root_file(self, name: str) -> bool:
        """Tracked at the root."""
        return name in self.roots

    def names_ref(self, path: str) -> bool:
        """A ref's short name."""
        return path in self.refs

    def ever_tracked(self, path: str) -> bool:
        """Some commit had it."""
        return path in self.ever


def found(text: str, repo: Repo | None = None) -> list[str]:
    """The normalized references extracted from `text`."""
    return [ref.normalized for ref in extract_references(None, text, repo)]


def test_a_bare_name_is_a_reference_only_when_the_repository_tracks_it_at_its_root() -> None:
    assert found("see main.py and other.py", Repo(roots={"main.py"})) == ["main.py"]
    assert found("see main.py and other.py") == []


def test_a_branch_shaped_path_is_a_reference_only_if_it_was_ever_tracked() -> None:
    assert found("released user/7.x and src/a.py", Repo()) == ["src/a.py"]
    assert found("released user/7.x", Repo(ever={"user/7.x"})) == ["user/7.x"]
    assert found("released user/7.x") == ["user/7.x"]  # no repository to ask: kept
    assert found("Merge pull request #1 from user/fix.py", Repo()) == []
    assert found("Merge pull request #1 from user/fix.py", Repo(ever={"user/fix.py"})) == ["user/fix.py"]
    assert found("rebased on origin/main.rs", Repo(refs={"origin/main.rs"})) == []


def test_an_absolute_path_is_never_taken_for_a_branch() -> None:
    assert found("see /home/u/src/a.py", Repo(refs={"home/u/src/a.py", "/home/u/src/a.py"})) == ["/home/u/src/a.py"]


def test_a_windows_path_ends_on_its_own_line() -> None:
    assert found("C:\\tmp\nnotes.txt") == []
    assert found("C:\\tmp\\notes.txt here") == ["C:/tmp/notes.txt"]


def test_a_path_before_an_unrooted_span_is_kept() -> None:
    assert found("src/c.py <x>/a/b.py") == ["src/c.py"]


def test_rewrite_path_replaces_every_mention_and_nothing_longer() -> None:
    text = "see src/a.py:3 and ./src/a.py, lib/src/a.py, src/a.pyc, src\\a.py"
    assert rewrite_path(text, "src/a.py", "src/b.py") == (
        "see src/b.py:3 and ./src/b.py, lib/src/a.py, src/a.pyc, src/b.py",
        3,
    )
    assert rewrite_path("src/a.py.bak and src/a.pyx", "src/a.py", "src/b.py") == ("src/a.py.bak and src/a.pyx", 0)


def test_a_merge_message_is_read_on_its_own_line() -> None:
    assert found("Merge pull request #1 from user/fix.py\nthanks", Repo()) == []


def test_a_skipped_candidate_does_not_end_the_walk() -> None:
    assert found("http://x/a.py and src/b.py") == ["src/b.py"]  # the first is inside a URL
    assert found("see other.py and main.py", Repo(roots={"main.py"})) == ["main.py"]  # the first is not tracked


def test_a_repeated_path_is_kept_once_and_the_walk_goes_on() -> None:
    assert found("src/a.py, ./src/a.py and src/b.py") == ["src/a.py", "src/b.py"]


def test_the_scans_a_text_cannot_hold_are_skipped_and_nothing_else() -> None:
    """Extraction skips a pattern's scan when the text lacks what every match of it holds (`://`, `<`, `{`, `%`,
    `*` or `+` for an unrooted span, `:/` or `:\\` for a drive root, `~` for a home path). Over random texts of
    path characters each skip is checked against the scan itself: the spans found are the pattern's matches, and
    the references found are those a text with every mark appended at its end (so no scan is skipped) has before
    it (the marks sit on a line of their own and start nothing)."""
    import random
    import re

    from cortex_engine.scope import references

    rng = random.Random(7)
    alphabet = "ab/\\.~:<>{}%*+-_ '\"`\nC1$"
    words = [
        "src/a.py",
        "~/q/b.md",
        "C:\\w\\c.txt",
        "D:/e/f.ts",
        "http://h/p/g.py",
        "<root>/h.go",
        "${X}/i.rs",
        "%APP%/j.js",
        "**/k.py",
        "+ '/l.py",
        "./m.py",
        "n.c",
    ]
    found_any = {"span": 0, "drive": 0, "home": 0}
    for _ in range(600):
        text = "".join(
            rng.choice(words) if rng.random() < 0.15 else rng.choice(alphabet) for _ in range(rng.randrange(1, 60))
        )
        starts, ends = references._unrooted_spans(text)
        expected = [
            (m.start("scheme") if m.start("scheme") >= 0 else m.start(), m.end())
            for m in references._UNROOTED_SPAN.finditer(text)
        ]
        assert list(zip(starts, ends, strict=True)) == expected, text
        whole = text + "\n \n" + " ".join(references._SPAN_MARKS) + " :/ :\\ ~"
        refs = extract_references(None, text)
        assert refs == [r for r in extract_references(None, whole) if whole.find(r.raw) < len(text)], text
        found_any["span"] += bool(expected)
        found_any["drive"] += any(re.match(r"[A-Za-z]:/", r.normalized) for r in refs)
        found_any["home"] += any(r.normalized.startswith("~/") for r in refs)
    assert min(found_any.values()) > 20, found_any


def test_a_name_before_a_scheme_s_first_letter_is_outside_the_url() -> None:
    """A URL's scheme begins at its first letter (RFC 3986: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`), so the
    digits, dots, `+` and `-` written just before it are not part of the span that hides paths: a file name made of
    them stays a reference."""
    names = {"1.py", "-.md", "x1.py"}
    repo = Repo(roots=names, ever=names)
    assert found("see 1.py://host/a/b.py", repo) == ["1.py"]  # the scheme is `py`; the path after it stays hidden
    assert found("-.md://x", repo) == ["-.md"]
    assert found("x1.py://host/a", repo) == []  # here the whole run is the scheme
