"""The reference's own corpus, seeded as its benchmark seeds it: P@8 and top-1 per query, with the ranks behind them.

Usage:
    python bench/anchor_precision.py [--n 1000 --n 10000] [--hybrid] [--stores DIR] [--out report.json]

Run it under the tree to measure (`PYTHONPATH=<tree> python bench/anchor_precision.py ...`): the store is built by
`bench/anchor_replay.build` (a session per 25 notes, one minute a note) under `--stores` (reused when present, so
an interleaved old/new run builds each tier once per tree), then each of the 20 queries is ranked 8 deep in the
recall order (`surfaces.ranked`, seated) lexically and, with `--hybrid`, with the dense retriever too (every item
embedded through `bench/dense.py`'s cache). The measure is the reference's (its FORMAT.md: "compare against
relevant_active"): over the 19 answerable queries, P@8 = current relevant notes in the top 8 / 8 and top-1 = the
first result is one (a superseded revision shown counts as wrong; `p_at_8_any_revision` counts it right); the no-match
query (q18) is reported apart, with how many items it returned. Per query it prints the indexes returned, which of
them are wrong, and for a top-1 miss the first right note's rank and both score breakdowns. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

CORPUS = Path("/work/shared/data/anchor")


def parts(cand: object) -> dict[str, object]:
    """A candidate's score parts as recall's `detail=scores` shows them."""
    c = cand
    return {
        "score": round(c.score, 2),  # type: ignore[attr-defined]
        "lex": round(c.lexical, 2),  # type: ignore[attr-defined]
        "bm25": None if c.bm25 is None else round(c.bm25, 2),  # type: ignore[attr-defined]
        "kind": c.kind,  # type: ignore[attr-defined]
        "truth": round(c.truth, 2),  # type: ignore[attr-defined]
        "dense": None if c.dense is None else round(c.dense, 3),  # type: ignore[attr-defined]
    }


def measure(engine: object, index_of: dict[str, int], queries: list[dict], key: str, dense: object) -> dict:
    """P@8 and top-1 over the answerable queries, and what each query returned."""
    from cortex_engine.base import records
    from cortex_engine.query import surfaces

    ctx = engine._context()  # type: ignore[attr-defined]
    if dense is not None:
        ctx = records.replace(ctx, dense=dense)
    per: dict[str, dict] = {}
    p8s, tops, loose = [], [], []
    cpu = 0.0
    for q in queries:
        began = time.process_time()
        _, total, got = surfaces.ranked(ctx, q["text"], 8)
        cpu += time.process_time() - began
        idx = [index_of.get(c.id) for c in got]
        relevant = set(q["relevant"][key])
        active = set(q["relevant_active"][key])
        entry: dict[str, object] = {"text": q["text"], "returned": len(got), "pool": total}
        if not relevant:
            entry["no_match_ok"] = not got
            per[q["id"]] = entry
            continue
        p8 = sum(1 for i in idx[:8] if i in active) / 8
        top1 = bool(idx) and idx[0] in active
        p8s.append(p8)
        loose.append(sum(1 for i in idx[:8] if i in relevant) / 8)
        tops.append(top1)
        entry.update({"p8": p8, "top1": top1, "got": idx, "wrong": [i for i in idx if i not in active]})
        entry["superseded_shown"] = [i for i in idx if i in relevant and i not in active]
        if not top1:
            _, _, deep = surfaces.ranked(ctx, q["text"], 200)
            first = next((r for r, c in enumerate(deep, 1) if index_of.get(c.id) in active), None)
            entry["first_right_rank"] = first
            entry["top_parts"] = parts(got[0]) if got else None
            if first is not None:
                entry["right_parts"] = parts(deep[first - 1])
                entry["right_index"] = index_of.get(deep[first - 1].id)
        per[q["id"]] = entry
    return {
        "p_at_8": round(sum(p8s) / len(p8s), 3),
        "p_at_8_any_revision": round(sum(loose) / len(loose), 3),
        "top1": sum(tops),
        "answerable": len(p8s),
        "cpu_ms_per_query": round(cpu * 1000 / len(queries), 2),
        "per_query": per,
    }


def main() -> int:
    """Build (or reuse) each tier's store, rank, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--n", type=int, action="append")
    parser.add_argument("--hybrid", action="store_true")
    parser.add_argument("--stores", type=Path, default=None, help="keep the built stores here (per tier)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--wall-clock", action="store_true", help="seed at the real time, as the reference does")
    args = parser.parse_args()

    import anchor_replay

    from cortex_engine.engine import Engine

    queries = json.loads((args.corpus / "queries.json").read_text())["queries"]
    report: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="anchor-precision-") as tmp:
        base = args.stores or Path(tmp)
        for n in args.n or [1000, 10000]:
            where = base / f"tier-{n}"
            if not (where / "repo").is_dir():
                anchor_replay.build(where, n, args.corpus / "notes-10000.json", wall_clock=args.wall_clock)
            notes = anchor_replay.corpus_notes(n, args.corpus / "notes-10000.json")
            by_content = {note["content"]: note["i"] for note in notes}
            later = anchor_replay.START + timedelta(minutes=n + 1)
            with Engine(where / "repo", home=where / "home", clock=lambda later=later: later) as engine:
                if args.wall_clock:
                    engine.clock = lambda: datetime.now(UTC)
                rows = engine.conn.execute("SELECT rowid, id, subject, text FROM memory_items").fetchall()
                # An item's text is `<kind>: <content>`, then its trailer lines (subject, alternatives, status).
                index_of = {}
                for r in rows:
                    first = r[3].split("\n")[0]
                    content = first.split(": ", 1)[-1]
                    if content in by_content:
                        index_of[r[1]] = by_content[content]
                tier: dict[str, object] = {"items": len(rows), "mapped": len(index_of)}
                tier["lexical"] = measure(engine, index_of, queries, str(n), None)
                if args.hybrid:
                    import dense as shared

                    from cortex_engine.semantic.vectors import embed_text

                    texts = {r[0]: embed_text(r[2], r[3]) for r in rows}
                    vectors, took = shared.embed_all(list(texts.values()) + [q["text"] for q in queries])
                    engine.conn.execute("DELETE FROM item_vectors")
                    shared.store_vectors(engine.conn, {rowid: vectors[t] for rowid, t in texts.items()})
                    tier["embedding"] = took
                    tier["hybrid"] = measure(engine, index_of, queries, str(n), shared.searcher(vectors))
                report[str(n)] = tier
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
