"""Precision on the seeded synthetic stores (bench/synth.py): P@8 and top-1 of recall, to hold across ranking changes.

Protocol: the store of one tier (built by `synth.build`, or an existing one with `--store DIR`); 60 topics drawn
with a fixed seed from synth's own vocabulary as `<tech> <area> <module>`, kept when at least one item holds all
three words. An item is relevant when its subject and text hold all three as whole words (the gold is this rule,
not a ranker's opinion). P@8 = relevant items in the top 8 / min(8, relevant items); top-1 = the first is relevant.
Recall runs as an operator's look (nothing booked), so one topic does not reinforce the next.

Run it against another tree to compare: `PYTHONPATH=<tree> python bench/seeded.py --store DIR`. Nothing is booked,
but a store that booked recalls since (the latency runs reheat what they show) ranks differently: compare two
trees on the same store state, back to back.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth  # noqa: E402

TOPICS = 60
_WORD = re.compile(r"[a-z0-9]+")


def topics(conn: sqlite3.Connection, rng: random.Random) -> list[tuple[str, set[str]]]:
    """Up to TOPICS (topic, ids of relevant items) pairs, each with at least one relevant item."""
    rows = [
        (r[0], set(_WORD.findall(f"{r[1] or ''} {r[2]}".lower())))
        for r in conn.execute("SELECT id, subject, text FROM memory_items WHERE state != 'archived'")
    ]
    out: list[tuple[str, set[str]]] = []
    seen: set[str] = set()
    for _ in range(TOPICS * 50):
        words = (rng.choice(synth.TECH), rng.choice(synth.AREAS), rng.choice(synth.MODULES))
        topic = " ".join(words)
        if topic in seen:
            continue
        seen.add(topic)
        relevant = {ident for ident, have in rows if all(w in have for w in words)}
        if relevant:
            out.append((topic, relevant))
        if len(out) == TOPICS:
            break
    return out


def measure(repo: Path, home: Path) -> dict[str, object]:
    """P@8 and top-1 of the engine on this store, with the per-topic top 8."""
    from cortex_engine.engine import Engine
    from cortex_engine.scope.identity import store_identity

    conn = sqlite3.connect(store_identity(str(repo), home).db_path)
    pairs = topics(conn, random.Random(11))
    conn.close()
    engine = Engine(repo, home=home, clock=lambda: synth.NOW)
    precision, top1, per_topic = [], [], {}
    for topic, relevant in pairs:
        ranking = [item.id for item in engine.recall(topic, book=False).items][:8]
        hits = sum(1 for ident in ranking if ident in relevant)
        precision.append(hits / min(8, len(relevant)))
        top1.append(1 if ranking and ranking[0] in relevant else 0)
        per_topic[topic] = ranking
    engine.close()
    return {
        "topics": len(pairs),
        "p_at_8": round(sum(precision) / len(precision), 4),
        "top1": round(sum(top1) / len(top1), 4),
        "rankings": per_topic,
    }


def main(argv: list[str] | None = None) -> int:
    """Build (or open) the tier's store and print its figures as JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=1000, help="tier to build when no --store is given")
    parser.add_argument("--store", help="an existing synth root (holding repo/ and home/)")
    parser.add_argument("--rankings", action="store_true", help="also print each topic's top 8 ids")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cortex-seeded-") as tmp:
        root = Path(args.store) if args.store else Path(tmp, f"tier-{args.items}")
        if not args.store:
            synth.build(root, args.items, files=400 if args.items <= 1000 else 3000)
        result = measure(root / "repo", root / "home")
    if not args.rankings:
        result.pop("rankings")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
