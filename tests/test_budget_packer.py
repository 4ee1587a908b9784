"""One budget rule: tokens and characters convert in `base/tokens` only, and surfaces that give way in steps pack
through `render.pack_degrading` (the 4-characters-per-token ratio was once hard-coded in four places, and they
disagreed)."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from cortex_engine.base.tokens import CHARS_PER_TOKEN, budget_chars, estimate_file_tokens, estimate_tokens
from cortex_engine.query.render import Entry, Rendered, assemble_budgeted, fits, pack_degrading

ROOT = Path(__file__).resolve().parent.parent


def _ratio_literals(tree: ast.AST) -> list[int]:
    """Lines where the literal 4 scales a budget or a length (`budget * 4`, `len(text) / 4`, `4 * limit`)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, (ast.Mult, ast.Div, ast.FloorDiv)):
            continue
        for literal, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(literal, ast.Constant) and literal.value == CHARS_PER_TOKEN:
                names = {n.id for n in ast.walk(other) if isinstance(n, ast.Name)}
                if "len" in names or any("budget" in name or "token" in name for name in names):
                    found.append(node.lineno)
    return found


def test_no_module_converts_tokens_to_characters_but_base_tokens() -> None:
    offenders = []
    scanned = 0
    for path in sorted((ROOT / "cortex_engine").rglob("*.py")) + sorted((ROOT / "cortex_tui").rglob("*.py")):
        if path == ROOT / "cortex_engine" / "base" / "tokens.py":
            continue
        scanned += 1
        lines = _ratio_literals(ast.parse(path.read_text(encoding="utf-8")))
        offenders += [f"{path.relative_to(ROOT)}:{line}" for line in lines]
    assert scanned > 50
    assert offenders == []


def test_the_scan_finds_a_hard_coded_ratio() -> None:
    assert _ratio_literals(ast.parse("limit = budget * 4\nn = len(text) // 4\nx = 4 * count\n")) == [1, 2]


def test_the_substitution_hook_counts_tokens_as_the_engine_books_them() -> None:
    """The hook cannot import Python: its shell arithmetic is run and compared with `estimate_file_tokens`."""
    hook = (ROOT / "hooks" / "cortex-substitute.sh").read_text(encoding="utf-8")
    formulas = re.findall(r"^tokens=(\$\(\(.*\)\))$", hook, re.MULTILINE)
    assert len(formulas) == 1
    sizes = [0, 1, 3, 4, 5, 7, 8, 9, 4095, 4096, 4097, 1_000_003]
    script = "; ".join(f"size={size}; echo {formulas[0]}" for size in sizes)
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert [int(n) for n in out] == [estimate_file_tokens(size) for size in sizes]


@given(st.text(max_size=200))
def test_a_budget_holds_exactly_the_characters_that_cost_it(text: str) -> None:
    tokens = estimate_tokens(text)
    assert len(text) <= budget_chars(tokens)
    assert tokens == 0 or len(text) > budget_chars(tokens - 1)


def _attempts(sizes: list[list[int]]) -> list[tuple[list[str], list[int]]]:
    return [
        ([f"head {i}", *("x" * n for n in lines), "More: cortex_recall(topic)."], list(range(len(lines))))
        for i, lines in enumerate(sizes)
    ]


@given(st.lists(st.lists(st.integers(0, 300), min_size=0, max_size=5), min_size=1, max_size=6), st.integers(5, 200))
def test_pack_degrading_takes_the_first_attempt_that_fits_and_never_overruns(
    sizes: list[list[int]], budget: int
) -> None:
    attempts = _attempts(sizes)
    packed = pack_degrading(iter(attempts), budget)
    first_fit = next((a for a in attempts if fits(a[0], budget)), None)
    if first_fit is not None:
        assert packed == first_fit
    elif packed is not None:  # none fit: the last one cut, its head and pointer whole, one entry shown
        lines, shown = packed
        assert lines[0] == attempts[-1][0][0] and lines[-1] == attempts[-1][0][-1] and len(lines) == 3
        assert shown == attempts[-1][1][:1]
    if packed is not None:
        assert estimate_tokens("\n".join(packed[0])) <= budget


def test_pack_degrading_stops_rendering_at_the_first_fit() -> None:
    rendered = []

    def attempts():  # noqa: ANN202
        for n in (900, 300, 10, 5):
            rendered.append(n)
            yield ["head", "x" * n, "tail"], [n]

    assert pack_degrading(attempts(), 50) == (["head", "x" * 10, "tail"], [10])
    assert rendered == [900, 300, 10]


def test_pack_degrading_cuts_the_last_attempt_when_none_fits() -> None:
    packed = pack_degrading(iter([(["head", "y" * 400, "z" * 50, "tail"], [1, 2])]), 30)
    assert packed is not None
    lines, shown = packed
    assert lines[0] == "head" and lines[-1] == "tail" and lines[1].endswith("…") and shown == [1]
    assert estimate_tokens("\n".join(lines)) <= 30
    assert pack_degrading(iter([(["head", "tail"], [])]), 1) is None


@given(
    st.lists(st.tuples(st.integers(0, 400), st.one_of(st.none(), st.integers(0, 120))), max_size=12),
    st.one_of(st.none(), st.integers(0, 300)),
    st.integers(1, 400),
)
def test_assemble_budgeted_reads_lines_lazily_to_the_same_answer(
    sizes: list[tuple[int, int | None]], lead_size: int | None, budget: int
) -> None:
    """Lines rendered as the packer reads them pack exactly as the same lines rendered up front, and only the lines
    kept and the one that no longer fit are rendered."""
    entries = [
        Entry(f"{i}:" + "x" * n, None if c is None else "  " + "y" * c, f"id{i}") for i, (n, c) in enumerate(sizes)
    ]
    lead = None if lead_size is None else "L" * lead_size

    def hint(n: int) -> str:
        return f"…{n} more"

    lazy = Rendered(len(entries), entries.__getitem__)
    eager = assemble_budgeted(lead, entries, budget, hint)
    assert assemble_budgeted(lead, lazy, budget, hint) == eager
    chars, fitted = len(lead or ""), 0  # how many lines fit before any give way to the trimmed-count hint
    for entry in entries:
        cost = len(entry.line) + (1 if lead or fitted else 0)
        if fitted and chars + cost > budget_chars(budget):
            break
        chars, fitted = chars + cost, fitted + 1
    assert lazy.rendered == min(len(entries), fitted + 1) and len(eager.kept) <= fitted


def test_rendered_renders_each_entry_once() -> None:
    made: list[int] = []

    def render(i: int) -> Entry:
        made.append(i)
        return Entry(f"line {i}")

    lines = Rendered(3, render)
    assert lines[1] == lines[-2] == Entry("line 1") and lines[0:3] == [Entry(f"line {i}") for i in range(3)]
    assert made == [1, 0, 2] and len(lines) == 3
