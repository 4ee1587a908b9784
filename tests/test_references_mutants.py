"""Where an unrooted span begins (a mutant of `_unrooted_spans` no other test killed).

A URL's scheme begins at its first letter (RFC 3986: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`), so the digits,
dots, `+` and `-` written just before it are not part of the span that hides paths: a file name made of them stays
a reference.
"""

from __future__ import annotations

from cortex_engine.scope.references import extract_references


class Repo:
    """A repository that tracks these names at its root, names no ref and tracked nothing else."""

    def __init__(self, roots: set[str]) -> None:
        """Answer from `roots`."""
        self.roots = roots

    def tracked_root_file(self, name: str) -> bool:
        """Tracked at the root."""
        return name in self.roots

    def names_ref(self, path: str) -> bool:
        """No ref."""
        return False

    def ever_tracked(self, path: str) -> bool:
        """Only the root files."""
        return path in self.roots


def found(text: str, repo: Repo) -> list[str]:
    """The normalized references extracted from `text`."""
    return [ref.normalized for ref in extract_references(None, text, repo)]


def test_a_name_before_a_scheme_s_first_letter_is_outside_the_url() -> None:
    repo = Repo({"1.py", "-.md", "x1.py"})
    assert found("see 1.py://host/a/b.py", repo) == ["1.py"]  # the scheme is `py`; the path after it stays hidden
    assert found("-.md://x", repo) == ["-.md"]
    assert found("x1.py://host/a", repo) == []  # here the whole run is the scheme
