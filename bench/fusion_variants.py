"""How to join the dense retriever to the lexical rerank: every variant scored on the same candidates.

Usage:
    python bench/fusion_variants.py locomo [--data PATH]
    python bench/fusion_variants.py commitlog --repo PATH

Each query is recalled once through the hybrid path (`surfaces.ranked`, the semantic extra's vectors cached as
bench/dense.py does: set CORTEX_BENCH_EMBED_CACHE as the other benches do); `retrieval.fuse` is watched to record
every candidate's lexical score (the rerank's `base` before fusion), whether full-text search found it, and its
dense rank and cosine. The variants then reorder those same candidates offline: the lexical order alone,
reciprocal rank fusion of the lexical and dense ranks (k = 60) at several dense weights, and the cosine as a
rerank feature (`base + w × (cosine − floor)`, the product's rule at w = DENSE_WEIGHT). Truth terms and seating
are left out (no note of these sets has references or a supersession), so the product's own figures come from
bench/locomo.py --hybrid and bench/commitlog.py; these match them to 0.1 on the variant the product runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

Cand = tuple[str, float, bool, tuple[int, float] | None, int]
"""(unit id, lexical score, found by full-text search, dense (rank, cosine) or None, rerank order)."""
Scorer = Callable[[Cand, int | None, float], float | None]
"""(candidate, its lexical rank or None, the query's background cosine: its BACKGROUND_RANK-th dense hit's) →
its score, or None to drop it."""


def watch() -> list[list[Any]]:
    """Record the candidates `retrieval.fuse` receives, one list per call."""
    from cortex_engine.query import retrieval

    calls: list[list[Any]] = []
    original = retrieval.fuse

    def spy(cands: list[Any], lexical_rows: set[int], dense: dict[int, tuple[int, float]]) -> list[Any]:
        calls.append(
            [
                (c.id, c.base, int(c.row["rowid"]) in lexical_rows, dense.get(int(c.row["rowid"])), c.order)
                for c in cands
            ]
        )
        return original(cands, lexical_rows, dense)

    retrieval.fuse = spy
    return calls


def recorded(ctx: Any, calls: list[list[Any]], ids: dict[str, str], question: str, depth: int) -> list[Cand]:
    """One question's candidates, their item ids mapped to the set's unit ids."""
    from cortex_engine.query import surfaces

    calls.clear()
    surfaces.ranked(ctx, question, depth)
    return [(ids[c[0]], *c[1:]) for c in calls[0] if c[0] in ids] if calls else []


def locomo(path: Path) -> list[dict[str, Any]]:
    """Every LoCoMo question with its candidates."""
    import bench.dense as shared
    import bench.locomo as base
    from cortex_engine.base import records
    from cortex_engine.engine import Engine
    from cortex_engine.semantic.vectors import embed_text

    calls = watch()
    out = []
    for sample in json.loads(path.read_text()):
        units = base.turns(sample["conversation"])
        known = {u[0] for u in units}
        qa = [(q["question"], base.gold_ids(q.get("evidence", []), known), q.get("category")) for q in sample["qa"]]
        qa = [q for q in qa if q[1]]
        unit_vectors, _ = shared.embed_all([embed_text(None, u[1]) for u in units])
        question_vectors, _ = shared.embed_all([q[0] for q in qa])
        with tempfile.TemporaryDirectory(prefix="fusion-") as tmp:
            Path(tmp, "c").mkdir()
            engine = Engine(Path(tmp, "c"), home=Path(tmp, "home"), clock=lambda first=units[0][2]: first)
            ids: dict[str, str] = {}
            texts: dict[str, str] = {}
            for ident, text, when in units:
                engine.clock = lambda when=when: when  # type: ignore[misc]
                item = engine.note("insight", text).item_id
                ids[item], texts[item] = ident, text
            engine.clock = lambda last=units[-1][2]: last  # type: ignore[misc]
            engine.refresh()
            rowids = {r[1]: r[0] for r in engine.conn.execute("SELECT rowid, id FROM memory_items")}
            shared.store_vectors(engine.conn, {rowids[i]: unit_vectors[embed_text(None, texts[i])] for i in ids})
            ctx = records.replace(engine._context(), dense=shared.searcher(question_vectors))
            for question, gold, category in qa:
                out.append(
                    {
                        "gold": gold,
                        "splits": base.splits_of(category),
                        "cands": recorded(ctx, calls, ids, question, len(units)),
                    }
                )
            engine.close()
    return out


def commitlog(repo: Path, changelog: str = "CHANGES.md", stores: Path | None = None) -> list[dict[str, Any]]:
    """Every changelog query of the commit-log replay with its candidates."""
    import bench.commitlog as base
    import bench.dense as shared
    from cortex_engine.base import records
    from cortex_engine.semantic.vectors import embed_text

    calls = watch()
    log = base.commits(repo)
    by_pr: dict[str, list[str]] = {}
    for sha, _, _, pr in log:
        if pr:
            by_pr.setdefault(pr, []).append(sha)
    units = [(sha, text, when) for sha, text, when, _ in log]
    text_of = {sha: text for sha, text, _ in units}
    qa = [(q, [s for pr in prs for s in by_pr.get(pr, [])]) for q, prs in base.entries(repo, changelog)]
    qa = [(q, gold) for q, gold in qa if gold]
    out = []
    with tempfile.TemporaryDirectory(prefix="fusion-") as tmp:
        engine, ids, rowids = base.cortex_store(units, stores or Path(tmp))
        unit_vectors, _ = shared.embed_all([embed_text(None, t) for _, t, _ in units])
        question_vectors, _ = shared.embed_all([q for q, _ in qa])
        shared.store_vectors(
            engine.conn, {rowids[item]: unit_vectors[embed_text(None, text_of[sha])] for item, sha in ids.items()}
        )
        ctx = records.replace(engine._context(), dense=shared.searcher(question_vectors))
        for question, gold in qa:
            low = max(base.overlap(question, text_of[g].split("\n")[0]) for g in gold) <= 1 / 3
            out.append(
                {
                    "gold": gold,
                    "splits": ("all", "low overlap") if low else ("all",),
                    "cands": recorded(ctx, calls, ids, question, 50),
                }
            )
        engine.close()
    return out


def ordered(cands: list[Cand], scorer: Scorer) -> list[str]:
    """The candidates a variant keeps, best first (rerank order breaks ties)."""
    lexical = sorted((c for c in cands if c[2]), key=lambda c: (-c[1], c[4]))
    rank = {c[0]: i for i, c in enumerate(lexical, 1)}
    cosines = sorted((c[3][1] for c in cands if c[3] is not None), reverse=True)
    background = cosines[BACKGROUND_RANK - 1] if len(cosines) >= BACKGROUND_RANK else 0.0
    scored = [(s, c) for c in cands if (s := scorer(c, rank.get(c[0]), background)) is not None]
    return [c[0] for s, c in sorted(scored, key=lambda sc: (-sc[0], sc[1][4]))]


BACKGROUND_RANK = 20
"""As `retrieval.BACKGROUND_RANK`: the dense hit that stands for a query's background similarity."""


def lexical_only(c: Cand, rank: int | None, background: float) -> float | None:
    """The lexical rerank's order, dense-only candidates dropped."""
    return None if rank is None else -rank


def rrf(weight: float, k: int = 60) -> Scorer:
    """Reciprocal rank fusion, the dense rank weighted."""
    return lambda c, rank, _: (
        (0.0 if rank is None else 1 / (k + rank)) + (0.0 if c[3] is None else weight / (k + c[3][0]))
    )


def feature(weight: float, floor: float = 0.2) -> Scorer:
    """The cosine above `floor` as a rerank feature."""
    return lambda c, rank, _: c[1] + (0.0 if c[3] is None else weight * (c[3][1] - floor))


def above_background(weight: float, share: float = 1.0, floor: float = 0.2) -> Scorer:
    """The cosine above the query's background as a rerank feature: only what stands out of the topic's neighbours
    earns (`share` of the way from the floor to the background: 1 the background itself, 0.5 halfway)."""

    def score(c: Cand, rank: int | None, background: float) -> float:
        above = floor + share * max(0.0, background - floor)
        return c[1] + (0.0 if c[3] is None else weight * max(0.0, c[3][1] - above))

    return score


VARIANTS: dict[str, Scorer] = {
    "lexical": lexical_only,
    **{f"rrf dense x{w}": rrf(w) for w in (1.0, 0.5, 0.35, 0.25)},
    **{f"cosine feature {w:g}": feature(w) for w in (4.0, 8.0, 12.0, 14.0, 16.0, 20.0)},
    **{f"above background {w:g}": above_background(w) for w in (14.0, 20.0, 28.0)},
    **{f"above mid-background {w:g}": above_background(w, 0.5) for w in (14.0, 20.0)},
}


def table(queries: list[dict[str, Any]]) -> str:
    """Every variant's R@1/R@10/MRR per split, as Markdown."""
    splits = sorted({s for q in queries for s in q["splits"]})
    lines = ["| variant | " + " | ".join(f"{s} R@10 / MRR" for s in splits) + " |", "|---|" + "---|" * len(splits)]
    for name, scorer in VARIANTS.items():
        totals: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for q in queries:
            position = {ident: i for i, ident in enumerate(ordered(q["cands"], scorer))}
            ranks = sorted(position[g] for g in q["gold"] if g in position)
            got = (sum(1 for r in ranks if r < 10) / len(q["gold"]), 1 / (ranks[0] + 1) if ranks else 0.0)
            for split in q["splits"]:
                totals[split].append(got)
        cells = [
            f"{100 * sum(t[0] for t in totals[s]) / len(totals[s]):.1f} / "
            f"{sum(t[1] for t in totals[s]) / len(totals[s]):.3f}"
            for s in splits
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    """Record one set's candidates, print the variants' table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", choices=["locomo", "commitlog"])
    parser.add_argument("--data", type=Path)
    parser.add_argument("--repo", type=Path)
    parser.add_argument("--changelog", default="CHANGES.md", help="commitlog: the changelog's path in the repository")
    parser.add_argument("--stores", type=Path, help="commitlog: a store built by bench/commitlog.py --stores, reused")
    args = parser.parse_args()
    if args.set == "locomo":
        import bench.locomo as base

        queries = locomo(args.data or base.default_path())
    else:
        if args.repo is None:
            parser.error("commitlog needs --repo")
        queries = commitlog(args.repo, args.changelog, args.stores)
    print(table(queries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
