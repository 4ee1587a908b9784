"""The anchor corpus (cortex-bench-corpus/v1, read from its path, never copied): P@8 and top-1, lexical against hybrid.

Usage:
    python bench/anchor_hybrid.py [--corpus DIR] [--n 1000|10000]

The first N notes of `notes-10000.json` (N = 1000 is the corpus's own 1k prefix) are written through the engine in
order, one minute apart (a revising note supersedes the one it revises, as `Engine.note` does with a subject);
each of the 20 queries is ranked by `surfaces.ranked` (the recall order, seated) 8 deep, once lexically and once
hybrid (every note embedded; the vectors cached as bench/dense.py does). P@8 = relevant notes in the top 8 / 8
(over `relevant`); top-1 = the first result is in `relevant_active`; the no-match query (q18) counts as right
when nothing is returned. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

START = datetime(2026, 4, 18, 9, 0, tzinfo=UTC)


def main() -> int:
    """Replay, rank both ways, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/data/anchor"))
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()

    import bench.dense as shared
    from cortex_engine.base import records
    from cortex_engine.engine import Engine
    from cortex_engine.query import surfaces
    from cortex_engine.semantic.vectors import embed_text

    notes = json.loads((args.corpus / "notes-10000.json").read_text())["notes"][: args.n]
    queries = json.loads((args.corpus / "queries.json").read_text())["queries"]
    key = str(args.n)
    with tempfile.TemporaryDirectory(prefix="anchor-") as tmp:
        work = Path(tmp, "repo")
        work.mkdir()
        engine = Engine(work, home=Path(tmp, "home"), clock=lambda: START)
        index_of: dict[str, int] = {}
        for note in notes:
            engine.clock = lambda n=note["i"]: START + timedelta(minutes=n)  # type: ignore[misc]
            written = engine.note(note["kind"], note["content"], note["subject"], note.get("alternatives") or None)
            index_of[written.item_id] = note["i"]
        engine.clock = lambda: START + timedelta(minutes=len(notes) + 1)
        rows = engine.conn.execute("SELECT rowid, id, subject, text FROM memory_items").fetchall()
        texts = {r[1]: embed_text(r[2], r[3]) for r in rows}
        vectors, took = shared.embed_all(list(texts.values()) + [q["text"] for q in queries])
        ctx = engine._context()
        shared.store_vectors(engine.conn, {r[0]: vectors[texts[r[1]]] for r in rows})
        hybrid_ctx = records.replace(ctx, dense=shared.searcher(vectors))
        report: dict[str, object] = {"notes": len(notes), "embedding": took}
        for name, context in (("lexical", ctx), ("hybrid", hybrid_ctx)):
            precision, top1, per = [], [], {}
            for q in queries:
                _, _, ranked = surfaces.ranked(context, q["text"], 8)
                got = [index_of.get(c.id) for c in ranked]
                relevant = set(q["relevant"][key])
                active = set(q["relevant_active"][key])
                if not relevant:
                    hit1 = 1.0 if not got else 0.0
                    p8 = hit1
                else:
                    hit1 = 1.0 if got and got[0] in active else 0.0
                    p8 = sum(1 for g in got[:8] if g in relevant) / 8
                precision.append(p8)
                top1.append(hit1)
                per[q["id"]] = {"p8": p8, "top1": hit1}
            report[name] = {
                "p_at_8": round(sum(precision) / len(precision), 3),
                "top1": round(sum(top1) / len(top1), 3),
                "per_query": per,
            }
        engine.close()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
