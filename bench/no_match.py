"""Queries with no true match, hybrid: does recall still say "No matches", and how far is the nearest stranger from
the dense-only threshold? Run it under each tree to compare encoders (`PYTHONPATH=<tree>`).

Usage:
    python bench/no_match.py [--stores DIR] [--locomo] [--out FILE]

- The reference corpus's tiers under `--stores` (built and embedded by `bench/anchor_precision.py --hybrid
  --stores DIR` under the same tree: each tree its own vectors): its query with no answer (q18, "graphql federation
  gateway") and "zzzz nonexistent topic", ranked 8 deep in the recall order lexically and hybrid (the real
  encoder for the topic); how many items each returns, and the dense side's nearest cosine, its 20th (the store's
  background) and the margin `nearest - max(DENSE_FLOOR, background) - STANDOUT` (a dense-only hit passes at >= 0).
- `--locomo`: every category-5 (adversarial: not in the conversation) question of LoCoMo, one store per
  conversation as `bench/locomo.py` builds it, with the vectors of `bench/dense.py`'s cache (per encoder): how many
  return nothing lexically, and how many of those hybrid still answers (dense-only), with the margins.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

CORPUS = Path("/work/shared/data/anchor")
NONSENSE = "zzzz nonexistent topic"


def margin(hits: list[tuple[int, float]]) -> dict[str, float | None]:
    """The nearest cosine, the background (20th) and the nearest one's distance from the dense-only threshold."""
    from cortex_engine.query import retrieval

    if not hits:
        return {"nearest": None, "background": None, "margin": None}
    cosines = [c for _, c in hits]
    background = cosines[retrieval.BACKGROUND_RANK - 1] if len(cosines) >= retrieval.BACKGROUND_RANK else None
    floor = max(retrieval.DENSE_FLOOR, background or 0.0) + retrieval.STANDOUT
    return {
        "nearest": round(cosines[0], 3),
        "background": background and round(background, 3),
        "margin": round(cosines[0] - floor, 3),
    }


def anchor(stores: Path) -> dict[str, Any]:
    """The corpus's tiers as `bench/anchor_precision.py` left them (vectors stored)."""
    import anchor_replay

    from cortex_engine.base import records
    from cortex_engine.engine import Engine
    from cortex_engine.query import surfaces
    from cortex_engine.semantic import model, vectors

    queries = json.loads((CORPUS / "queries.json").read_text())["queries"]
    topics = [q["text"] for q in queries if not any(q["relevant"].values())] + [NONSENSE]
    out: dict[str, Any] = {}
    for where in sorted(stores.glob("tier-*")):
        n = int(where.name.split("-")[1])
        later = anchor_replay.START + timedelta(minutes=n + 1)
        with Engine(where / "repo", home=where / "home", clock=lambda later=later: later) as engine:
            search = engine.dense_search()
            if search is None:
                out[where.name] = {"error": f"no dense retriever: {engine.dense_problem or 'no vectors'}"}
                continue
            ctx = engine._context()
            hybrid = records.replace(ctx, dense=search)
            tier: dict[str, Any] = {}
            for topic in topics:
                hits = vectors.dense_hits(engine.conn, ctx.scope_keys, model.load().embed_topic(topic), 20)
                tier[topic] = {
                    "lexical": len(surfaces.ranked(ctx, topic, 8)[2]),
                    "hybrid": len(surfaces.ranked(hybrid, topic, 8)[2]),
                    **margin(hits),
                }
            out[where.name] = tier
    return out


def locomo() -> dict[str, Any]:
    """Category-5 questions per conversation: lexical empty, hybrid still answering, and the margins."""
    import locomo as bench

    import bench.dense as shared
    from cortex_engine.semantic.vectors import embed_text

    data = json.loads(bench.default_path().read_text())
    asked = empty = answered = 0
    margins: list[float] = []
    for sample in data:
        units = bench.turns(sample["conversation"])
        questions = [q["question"] for q in sample["qa"] if q.get("category") == 5]
        if not questions:
            continue
        unit_vectors, _ = shared.embed_all([embed_text(None, u[1]) for u in units])
        question_vectors, _ = shared.embed_all(questions)
        by_text = {u[1]: unit_vectors[embed_text(None, u[1])] for u in units}
        lexical = bench.cortex_rankings(units, questions)
        hybrid = bench.cortex_rankings(units, questions, (by_text, question_vectors))
        import numpy as np

        matrix = np.stack([by_text[u[1]] for u in units])
        for question, lex, hyb in zip(questions, lexical, hybrid, strict=True):
            asked += 1
            if lex:
                continue
            empty += 1
            answered += bool(hyb)
            cosines = np.sort(matrix @ question_vectors[question])[::-1][:20]
            found = margin([(0, float(c)) for c in cosines])["margin"]
            if found is not None:
                margins.append(found)
    return {
        "category_5_questions": asked,
        "lexical_empty": empty,
        "hybrid_answers_among_them": answered,
        "margin_max": max(margins) if margins else None,
        "margins_top5": sorted(margins, reverse=True)[:5],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=Path)
    parser.add_argument("--locomo", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    from cortex_engine.semantic import extra

    report: dict[str, Any] = {"encoder": int(getattr(extra, "ENCODER", 1))}
    if args.stores:
        report["anchor"] = anchor(args.stores)
    if args.locomo:
        report["locomo"] = locomo()
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
