"""Retrieval quality on LoCoMo (CC BY-NC 4.0, read from its path, never copied): a sanity check, not a target.

Protocol: one store per conversation; one memory per dialogue turn, text `(<session date>) <speaker> said, "<text>"`;
each question is the topic; gold = its evidence dialogue ids (split on `;`, `,` and spaces, `D:11:26` → `D11:26`,
ids absent from the conversation dropped). Categories 1–4 are the main score, 5 is reported separately.
recall@k = the mean fraction of a question's gold turns found in the top k; MRR = mean 1/rank of the first gold turn;
both over the full ranking. Cortex's ranking is compared with plain SQLite FTS5 bm25 and rank-bm25 on the same units.
"""

from __future__ import annotations

import json
import re
import sqlite3
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_ID = re.compile(r"D:?(\d+):(\d+)")
_WORD = re.compile(r"[a-z0-9]+")


def parse_date(text: str) -> datetime:
    """LoCoMo session stamps look like `1:56 pm on 8 May, 2023`."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return datetime(2023, 1, 1, tzinfo=UTC)


def turns(conversation: dict[str, Any]) -> list[tuple[str, str, datetime]]:
    """(dia_id, memory text, when) for every dialogue turn."""
    out = []
    n = 1
    while f"session_{n}" in conversation:
        when_text = conversation.get(f"session_{n}_date_time", "")
        when = parse_date(when_text)
        for turn in conversation[f"session_{n}"]:
            text = f'({when_text}) {turn["speaker"]} said, "{turn.get("text", "")}"'
            out.append((turn["dia_id"], text, when))
        n += 1
    return out


def gold_ids(evidence: list[str], known: set[str]) -> list[str]:
    """Normalised evidence ids that exist in the conversation."""
    found = []
    for raw in evidence:
        for part in re.split(r"[;,\s]+", raw):
            match = _ID.search(part)
            if match:
                ident = f"D{match.group(1)}:{match.group(2)}"
                if ident in known and ident not in found:
                    found.append(ident)
    return found


def score(ranking: list[str], gold: list[str]) -> tuple[float, float, float, float]:
    """(recall@1, recall@5, recall@10, reciprocal rank)."""
    position = {ident: i for i, ident in enumerate(ranking)}
    ranks = sorted(position[g] for g in gold if g in position)
    recall = [sum(1 for r in ranks if r < k) / len(gold) for k in (1, 5, 10)]
    return recall[0], recall[1], recall[2], (1 / (ranks[0] + 1)) if ranks else 0.0


def cortex_rankings(
    units: list[tuple[str, str, datetime]],
    questions: list[str],
    dense: tuple[dict[str, object], dict[str, object]] | None = None,
) -> list[list[str]]:
    """Cortex's full ranking for each question over one store holding the conversation.

    With `dense` (unit vectors by text, question vectors by question) the store holds every unit's vector and
    the ranking is the hybrid one recall uses when the semantic extra is on.
    """
    from cortex_engine.engine import Engine
    from cortex_engine.query import surfaces

    with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
        work = Path(tmp, "conversation")
        work.mkdir()
        engine = Engine(work, home=Path(tmp, "home"), clock=lambda: units[0][2])
        ids: dict[str, str] = {}
        texts: dict[str, str] = {}
        for ident, text, when in units:
            engine.clock = lambda when=when: when  # type: ignore[misc]
            item = engine.note("insight", text).item_id
            ids[item] = ident
            texts[item] = text
        engine.clock = lambda: units[-1][2]
        engine.refresh()
        ctx = engine._context()
        if dense is not None:
            import bench.dense as shared
            from cortex_engine.base import records

            unit_vectors, question_vectors = dense
            rowids = {r[1]: r[0] for r in engine.conn.execute("SELECT rowid, id FROM memory_items")}
            shared.store_vectors(engine.conn, {rowids[item]: unit_vectors[texts[item]] for item in ids})
            ctx = records.replace(ctx, dense=shared.searcher(question_vectors))
        rankings = []
        for question in questions:
            _, _, ranked = surfaces.ranked(ctx, question, len(units))
            rankings.append([ids[c.id] for c in ranked if c.id in ids])
        engine.close()
    return rankings


def fts_rankings(units: list[tuple[str, str, datetime]], questions: list[str]) -> list[list[str]]:
    """Plain SQLite FTS5 (porter unicode61) bm25 over the same units, words OR-ed."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
    conn.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)", [(i, u[1]) for i, u in enumerate(units)])
    rankings: list[list[str]] = []
    for question in questions:
        words = _WORD.findall(question.lower())
        if not words:
            rankings.append([])
            continue
        query = " OR ".join(f'"{w}"' for w in words)
        rows = conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t)", (query,)).fetchall()
        rankings.append([units[r[0]][0] for r in rows])
    return rankings


def bm25_rankings(units: list[tuple[str, str, datetime]], questions: list[str]) -> list[list[str]] | None:
    """rank-bm25's BM25Okapi over the same units, or None when the package is not installed."""
    try:
        from rank_bm25 import BM25Okapi  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return None
    model = BM25Okapi([_WORD.findall(u[1].lower()) or [""] for u in units])
    rankings = []
    for question in questions:
        scores = model.get_scores(_WORD.findall(question.lower()))
        order = sorted(range(len(units)), key=lambda i: -scores[i])
        rankings.append([units[i][0] for i in order if scores[i] > 0])
    return rankings


SPLITS = ("cat 1", "cat 2", "cat 3", "cat 4", "cat 1-4", "cat 5")
"""Each of the main categories, their union (the main score), and category 5 (adversarial) apart."""


def splits_of(category: object) -> tuple[str, ...]:
    """The report rows a question counts in: its own category, plus `cat 1-4` for categories 1 to 4."""
    if category in (1, 2, 3, 4):
        return (f"cat {category}", "cat 1-4")
    return ("cat 5",) if category == 5 else ()


def evaluate(path: Path) -> dict[str, object] | None:
    """All three rankers over every conversation; None (with a message) when the data is absent."""
    if not path.is_file():
        print(f"LoCoMo skipped: {path} not found", flush=True)
        return {"note": f"skipped: {path} not found", "rows": []}
    data = json.loads(path.read_text())
    totals: dict[tuple[str, str], list[tuple[float, float, float, float]]] = {}
    embedding: dict[str, float] = {}
    for sample in data:
        units = turns(sample["conversation"])
        known = {u[0] for u in units}
        qa = [(q["question"], gold_ids(q.get("evidence", []), known), q.get("category")) for q in sample["qa"]]
        qa = [q for q in qa if q[1]]
        questions = [q[0] for q in qa]
        rankers = {"cortex": cortex_rankings(units, questions), "fts5 bm25": fts_rankings(units, questions)}
        extra = bm25_rankings(units, questions)
        if extra is not None:
            rankers["rank-bm25"] = extra
        if HYBRID:
            import numpy as np

            import bench.dense as shared
            from cortex_engine.semantic.vectors import embed_text

            unit_vectors, took = shared.embed_all([embed_text(None, u[1]) for u in units])
            question_vectors, took_q = shared.embed_all(questions)
            embedding["embedded"] = embedding.get("embedded", 0) + took["embedded"] + took_q["embedded"]
            embedding["seconds"] = round(embedding.get("seconds", 0.0) + took["seconds"] + took_q["seconds"], 2)
            by_text = {u[1]: unit_vectors[embed_text(None, u[1])] for u in units}
            matrix = np.stack([by_text[u[1]] for u in units])
            ident = [u[0] for u in units]
            rankers["dense"] = [shared.dense_ranking(matrix, ident, question_vectors[q]) for q in questions]
            rankers["cortex hybrid"] = cortex_rankings(units, questions, (by_text, question_vectors))
        for name, rankings in rankers.items():
            for (_, gold, category), ranking in zip(qa, rankings, strict=True):
                for split in splits_of(category):
                    totals.setdefault((name, split), []).append(score(ranking, gold))
    rows = []
    for split in SPLITS:
        for name in ("cortex hybrid", "dense", "cortex", "fts5 bm25", "rank-bm25"):
            scores = totals.get((name, split))
            if not scores:
                continue
            n = len(scores)
            mean = [round(100 * sum(s[i] for s in scores) / n, 1) for i in range(3)]
            rows.append(
                {
                    "ranker": name,
                    "split": split,
                    "questions": n,
                    "r1": mean[0],
                    "r5": mean[1],
                    "r10": mean[2],
                    "mrr": round(sum(s[3] for s in scores) / n, 3),
                }
            )
    note = (
        "LoCoMo (CC BY-NC 4.0) read from its path, not copied. recall@k = mean % of a question's gold turns in the "
        "top k; MRR over the full ranking. A check of the ranking, not a training set: no weight is tuned to it. "
        "Targets for Cortex on categories 1-4: R@10 >= 61, MRR >= 0.47, and no category below plain FTS5 on R@10."
    )
    if HYBRID:
        note += (
            " Hybrid targets, categories 1-4: cortex hybrid R@10 >= 67, MRR >= 0.53, >= cortex + 4 on "
            "R@10, no category below cortex. Dense: all-MiniLM-L6-v2 int8, one CPU thread."
        )
    return {"note": note, "rows": rows, **({"embedding": embedding} if HYBRID else {})}


HYBRID = False
"""Set by `--hybrid`: also rank with the dense retriever alone and with Cortex's hybrid recall (the semantic extra)."""


def table(report: dict[str, object]) -> str:
    """The rows as a Markdown table (what `python bench/locomo.py --table` prints)."""
    lines = ["| ranker | split | questions | R@1 | R@5 | R@10 | MRR |", "|---|---|---|---|---|---|---|"]
    rows: list[dict[str, object]] = report["rows"]  # type: ignore[assignment]
    for row in rows:
        lines.append(
            f"| {row['ranker']} | {row['split']} | {row['questions']} | {row['r1']} | {row['r5']} | "
            f"{row['r10']} | {row['mrr']} |"
        )
    return "\n".join(lines)


def default_path() -> Path:
    """`shared/data/locomo/locomo10.json` beside the nearest folder above this checkout that has it (a worktree
    sits deeper than the main checkout), else where the main checkout would find it."""
    here = Path(__file__).resolve()
    for folder in here.parents[1:]:
        found = folder / "shared" / "data" / "locomo" / "locomo10.json"
        if found.is_file():
            return found
    return here.parents[2] / "shared" / "data" / "locomo" / "locomo10.json"


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    HYBRID = "--hybrid" in sys.argv
    args = [a for a in sys.argv[1:] if a not in ("--table", "--hybrid")]
    result = evaluate(Path(args[0]) if args else default_path())
    print(table(result) if result is not None and "--table" in sys.argv else json.dumps(result, indent=2))
