"""What a recall spends follows what its budget can show, not the size of its pool.

A recall reranks a pool of full-text matches (5 × its first depth), but it judges references only as deep as its
ranking is read, renders only the lines its budget reaches, and reads the references of the pool in one go. Each
test counts the work (items judged, lines rendered, statements run) through the real engine on a real repository.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cortex_engine.engine import Engine
from cortex_engine.memory.items import collapse
from cortex_engine.query import retrieval, surfaces
from cortex_engine.scope.freshness import Validator

from .conftest import Repo

POOL = surfaces.RECALL_LIMIT * 5


def _count(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, size: Callable[..., int]) -> list[int]:
    """Wrap `owner.name` (the real one still runs) and record `size(*args)` of each call."""
    real = getattr(owner, name)
    seen: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        seen.append(size(*args, **kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return seen


@pytest.fixture
def crowded(repo: Repo, engine: Engine) -> Engine:
    """Sixty notes on one topic, each naming a file the checkout has: a pool of POOL, references that hold."""
    repo.write("src/pool.py", "def acquire():\n    return 1\n")
    repo.commit("pool")
    for i in range(60):
        engine.note("insight", f"src/pool.py pool timeout waits {i} seconds before the retry number {i * 7}")
    return engine


@pytest.mark.parametrize("budget", [60, 120, 250])
def test_a_recall_judges_and_renders_what_its_budget_shows_not_its_pool(
    crowded: Engine, monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    """Items judged stay within two batches of what is shown, however large the pool; lines rendered within two of
    it (the line that no longer fit, and one the trimmed-count hint took the room of: every line here is longer
    than the hint). Judging or rendering the whole pool (40 here) fails this."""
    judged = _count(monkeypatch, Validator, "validate_many", lambda self, items: len(items))
    rendered = _count(monkeypatch, surfaces, "_recall_entry", lambda cand, detail: 1)
    surface = crowded.recall("pool timeout", budget=budget, book=False)
    shown = len(surface.items)
    assert surface.total_candidates == POOL and 1 <= shown < POOL // 2
    assert sum(rendered) <= shown + 2
    assert sum(judged) <= shown + 2 * retrieval.CHECK_BATCH < POOL


def test_a_pool_judged_in_several_batches_reads_its_references_once(
    crowded: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ranking asks for its pool's verdicts a batch at a time; the references of the whole pool are read with
    the first batch, so a deeper read judges more items with no more statements."""
    statements: list[str] = []
    crowded.conn.set_trace_callback(statements.append)
    judged = _count(monkeypatch, Validator, "validate_many", lambda self, items: len(items))
    crowded.recall("pool timeout", budget=4000, book=False)
    crowded.conn.set_trace_callback(None)
    assert len([n for n in judged if n]) >= 2
    assert len([s for s in statements if "FROM memory_references" in s]) == 1
    assert len([s for s in statements if "FROM memory_anchors" in s]) == 1


def test_batches_read_with_the_pool_judge_as_batches_read_alone(repo: Repo, engine: Engine) -> None:
    """Verdicts are the same whether a batch's references were read with the pool's or on their own: files that
    exist, files gone, a file moved by a commit, and an anchored symbol."""
    repo.write("src/kept.py", "def kept():\n    return 1\n")
    repo.write("src/old.py", "def moved():\n    return 2\n")
    repo.write("src/gone.py", "x = 1\n")
    repo.commit("files")
    notes = [
        "src/kept.py holds kept()",
        "src/old.py holds moved()",
        "src/gone.py sets x",
        "src/kept.py and src/gone.py both",
        "src/kept.py:kept returns one",
        "nothing named here",
    ]
    ids = [engine.note("insight", text).item_id for text in notes]
    repo.git("mv", "src/old.py", "src/new.py")
    repo.git("rm", "-q", "src/gone.py")
    repo.commit("move and remove")
    context = engine._context()
    items = [(item_id, context.scope_key) for item_id in ids]
    alone = Validator(engine.conn, engine.scope)
    expected = {k: v for batch in (items[:2], items[2:4], items[4:]) for k, v in alone.validate_many(batch).items()}
    pooled = Validator(engine.conn, engine.scope)
    pooled.expect(ids)
    got = {k: v for batch in (items[:2], items[2:4], items[4:]) for k, v in pooled.validate_many(batch).items()}
    assert got == expected
    assert {v.validity for v in got.values()} >= {"refs OK", "stale refs", "refs moved", "no file refs"}


def test_the_pool_is_the_first_matches_of_the_wider_span_even_among_equal_scores(engine: Engine) -> None:
    """The pool is ranked alone (`LIMIT pool`) and the wider span only when the pool does not do: SQLite keeps the
    first of equal scores it meets whatever the limit, so the pool is the span's first rows. Fifty notes of one
    shape score exactly alike here."""
    for i in range(50):
        engine.note("insight", f"pool timeout case {i:03d}")
    conn: sqlite3.Connection = engine.conn
    query = retrieval.fts_query(retrieval.tokenize_topic("pool timeout")) or ""
    span = retrieval.best_matches(conn, query, 4 * 20)
    assert len({score for _, score in span}) < len(span) // 2  # ties, many of them
    for pool in (1, 7, 20, 33):
        assert retrieval.best_matches(conn, query, pool) == span[:pool]


@given(st.text(alphabet=st.characters(max_codepoint=127)) | st.text(max_size=12))
@example("src/db/pool.ts_timeout\x1fWAIT-3s\t(ok)")
def test_the_rerank_reads_ascii_text_into_the_words_the_pattern_finds(text: str) -> None:
    """`said` splits ASCII text without the regular expression: the same words, in order, as `_WORD` finds (an
    underscore, a control character and punctuation part words; letters and digits do not)."""
    words, forms = retrieval.said(text)
    assert words == retrieval._WORD.findall(text.lower())
    assert set(words) <= forms


_SPACES = "".join(chr(c) for c in range(0x3100) if chr(c).isspace())


@given(st.text(alphabet=st.sampled_from("ab(\u00e9" + _SPACES + "\u200b\u2028\u3000\x1c")))
@example(" a\u00a0\u2003b\x1c\x1fc\u3000 ")
def test_collapsing_whitespace_keeps_the_words_the_pattern_kept(text: str) -> None:
    """Every line a surface renders is collapsed: split at exactly the characters `\\s` matches, as the pattern
    it replaced did (no-break and ideographic spaces, information separators; a zero-width space is no space)."""
    assert collapse(text) == re.sub(r"\s+", " ", text).strip()
