"""The anchor rules the mutation runs of `scope/anchors.py` found untested (issue 27, seventh round).

Each test names the behaviour a surviving mutant changed: where a definition ends, what a note's text anchors,
how `locate` finds an anchor's content again, which files are read at all.
"""

from __future__ import annotations

import pytest

from cortex_engine.engine import Engine
from cortex_engine.scope import anchors

from .conftest import Repo

# A method whose parameter list runs over ten lines, each language's way (TypeScript, Java).
LONG_PARAMETERS = {
    "web/store.ts": ("class Store {\n  refreshToken(\n" + "".join(f"    p{k}: number,\n" for k in range(10))
                     + "  ): number {\n    const y = p0 + 1;\n    return y;\n  }\n}\n"),
    "src/Store.java": ("public class Store {\n  public int refreshToken(\n"
                       + "".join(f"      int p{k}{',' if k < 9 else ''}\n" for k in range(10))
                       + "  ) {\n    int y = p0 + 1;\n    return y;\n  }\n}\n"),
}


@pytest.mark.parametrize("path", sorted(LONG_PARAMETERS))
def test_a_method_whose_parameters_run_over_ten_lines_is_anchored_and_drifts_with_its_body(
        tmp_path, path: str) -> None:
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
        "drifted", 2, 16, anchors.span_digest(edited.lines, 2, 16))


def test_a_claim_on_a_method_with_a_long_parameter_list_goes_stale_when_its_body_changes(
        repo: Repo, engine: Engine) -> None:
    path = "web/store.ts"
    repo.write(path, LONG_PARAMETERS[path])
    repo.commit("store")
    engine.note("decision", f"Store.refreshToken() in {path} adds one before returning", "token refresh")
    items = engine.validate_memory(persist=False)["items"]
    assert [item["label"] for item in items] == [None]
    repo.write(path, LONG_PARAMETERS[path].replace("p0 + 1", "p0 + 2"))
    items = engine.validate_memory(persist=False)["items"]
    assert [item["label"] for item in items] == [f"drifted: {path}:Store.refreshToken changed"]


def test_two_anchors_of_the_same_content_are_each_found_at_the_copy_nearest_where_they_were() -> None:
    block = "retry(3)\nbackoff(2)\n"
    text = "a = 1\n" + block + "".join(f"x{k} = {k}\n" for k in range(20)) + block
    lines = text.splitlines(keepends=True)
    digest = anchors.span_digest(lines, 2, 3)
    assert anchors.span_digest(lines, 24, 25) == digest
    moved = anchors.source_of("src/conf.py", "# one\n# two\n" + text)  # both copies two lines down
    assert anchors.locate(moved, None, 2, 3, digest) == anchors.Located("fresh", 4, 5, digest)
    assert anchors.locate(moved, None, 24, 25, digest) == anchors.Located("fresh", 26, 27, digest)
