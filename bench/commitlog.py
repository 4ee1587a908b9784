"""Recall on a real commit log, queried by its own changelog: plain FTS5, Cortex lexical, dense, hybrid.

Usage:
    python bench/commitlog.py --repo PATH [--changelog CHANGES.md] [--out FILE] [--losses N]

PATH is any git repository (a clone or a bare mirror; it is only read, and nothing of it is kept or committed).
The replay used for bench/RESULTS.md is psf/black, fetched as a bare mirror.

Protocol: every non-merge commit is one note (`<subject>\\n\\n<body>`, body cut at 600 characters), written at its
commit date through the engine, in one store that lives in a checkout of PATH at HEAD (`--empty-dir`: in an empty
directory, as before, where every file a commit names reads missing). Every changelog bullet at HEAD that cites pull
requests `(#N)` is one query, with its `#N` references removed; its gold commits are those whose subject ends with
one of those `(#N)` (squash merges). recall@k = mean fraction of a query's gold commits in the top k; MRR = mean
1/rank of the first gold commit (Cortex ranks `--depth` deep, 50 by default: a gold commit below that adds < 0.02 to
MRR). `low overlap` is the slice of queries sharing at most a third of their content words with their gold commit's
subject.

`--losses N` lists the N queries the rerank loses most against plain FTS5 order (first-gold rank before → after),
and with the semantic extra the N queries hybrid loses most against Cortex lexical, each with the score parts of
the item that displaced the gold one and of the gold one (when it is ranked `--depth` deep).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.locomo import fts_rankings, score  # noqa: E402

if TYPE_CHECKING:
    from cortex_engine.engine import Engine
    from cortex_engine.query.retrieval import Candidate

BODY_CHARS = 600
_PR = re.compile(r"\(#(\d+)\)\s*$")
_REF = re.compile(r"\(?#\d+\)?")
_LINK = re.compile(r"\(?\[#\d+\]\([^)]*\)\)?")
"""A pull request cited as a Markdown link, `[#2984](https://…/pull/2984)` (starlette, httpx): removed whole."""
_WORD = re.compile(r"[a-z0-9]+")


def commits(repo: Path) -> list[tuple[str, str, datetime, str | None]]:
    """(sha, note text, commit date, PR number of a squash merge) of every non-merge commit, oldest first."""
    out = subprocess.run(
        ["git", "log", "--no-merges", "--reverse", "--format=%H%x01%cI%x01%s%x01%b%x02"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found = []
    for record in out.split("\x02"):
        record = record.strip("\n")
        if not record:
            continue
        sha, when, subject, body = record.split("\x01", 3)
        body = body.strip()[:BODY_CHARS]
        text = subject + ("\n\n" + body if body else "")
        match = _PR.search(subject)
        found.append((sha, text, datetime.fromisoformat(when), match.group(1) if match else None))
    return found


def entries(repo: Path, changelog: str) -> list[tuple[str, list[str]]]:
    """(query, cited PR numbers) for every changelog bullet citing a pull request."""
    text = subprocess.run(
        ["git", "show", f"HEAD:{changelog}"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout
    bullets: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        if line.startswith(("- ", "* ")):
            if current:
                bullets.append(" ".join(current))
            current = [line[2:].strip()]
        elif current and line.startswith("  ") and line.strip():
            current.append(line.strip())
        else:
            if current:
                bullets.append(" ".join(current))
            current = []
    if current:
        bullets.append(" ".join(current))
    out = []
    for bullet in bullets:
        prs = re.findall(r"#(\d+)", bullet)
        query = " ".join(_REF.sub(" ", _LINK.sub(" ", bullet)).split()).strip(" .,;")
        if prs and len(_WORD.findall(query.lower())) >= 3:
            out.append((query, prs))
    return out


def overlap(query: str, text: str) -> float:
    """The share of the query's words (3+ letters) that the text has."""
    words = {w for w in _WORD.findall(query.lower()) if len(w) > 2}
    have = set(_WORD.findall(text.lower()))
    return len(words & have) / len(words) if words else 0.0


def cortex_store(
    units: list[tuple[str, str, datetime]], tmp: Path, repo: Path | None = None
) -> tuple[Engine, dict[str, str], dict[str, int]]:
    """One store holding every commit as an insight note, written at its commit date: (engine, item ids, rowids).

    With `repo`, the store lives in a checkout of it at HEAD, as a user's would: a commit naming a file that is
    still there has fresh references, one naming a deleted file stale ones. In an empty directory every path a
    commit names reads missing, which ranked the commits that name files (most of httpx's) below the rest.
    A store `tmp` already holds (`--stores`: `ids.json` beside it) is opened again, not rebuilt.
    """
    from cortex_engine.engine import Engine

    work = tmp / "log"
    kept = tmp / "ids.json"
    if kept.is_file():
        engine = Engine(work, home=tmp / "home", clock=lambda: units[-1][2])
        ids = json.loads(kept.read_text())
        rowids = {r[1]: r[0] for r in engine.conn.execute("SELECT rowid, id FROM memory_items")}
        return engine, ids, rowids
    if repo is None:
        work.mkdir()
    else:
        subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(work)], check=True, capture_output=True)
    engine = Engine(work, home=tmp / "home", clock=lambda: units[0][2])
    ids: dict[str, str] = {}
    for ident, text, when in units:
        engine.clock = lambda when=when: when  # type: ignore[misc]
        ids[engine.note("insight", text).item_id] = ident
    engine.clock = lambda: units[-1][2]
    engine.refresh()
    kept.write_text(json.dumps(ids))
    rowids = {r[1]: r[0] for r in engine.conn.execute("SELECT rowid, id FROM memory_items")}
    return engine, ids, rowids


def parts_of(cand: Candidate) -> str:
    """A candidate's score parts, as the loss lists print them."""
    dense = f" dense {cand.dense:.2f}" if cand.dense is not None else ""
    bm25 = f" bm25 {cand.bm25:.1f}" if cand.bm25 is not None else ""
    return f"lex {cand.lexical:.1f}{bm25} truth {cand.truth:.1f}{dense} score {cand.score:.1f}"


def main() -> int:
    """Replay, rank, score; print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--changelog", default="CHANGES.md")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--losses", type=int, default=15)
    parser.add_argument("--depth", type=int, default=50, help="how deep Cortex ranks (R@10 and MRR need little)")
    parser.add_argument(
        "--empty-dir", action="store_true", help="keep the store in an empty directory (before: every path missing)"
    )
    parser.add_argument("--stores", type=Path, help="keep the built store here and reuse it on the next run")
    parser.add_argument("--ranks", type=Path, help="write every query's first-gold rank per ranker here (JSON)")
    args = parser.parse_args()

    from cortex_engine.base import records
    from cortex_engine.query import surfaces

    log = commits(args.repo)
    by_pr: dict[str, list[str]] = {}
    for sha, _, _, pr in log:
        if pr:
            by_pr.setdefault(pr, []).append(sha)
    units = [(sha, text, when) for sha, text, when, _ in log]
    text_of = {sha: text for sha, text, _ in units}
    qa = [(q, [s for pr in prs for s in by_pr.get(pr, [])]) for q, prs in entries(args.repo, args.changelog)]
    qa = [(q, gold) for q, gold in qa if gold]
    questions = [q for q, _ in qa]
    low = {q for q, gold in qa if max(overlap(q, text_of[g].split("\n")[0]) for g in gold) <= 1 / 3}

    rankers: dict[str, list[list[str]]] = {"fts5 bm25": fts_rankings(units, questions)}
    details: dict[str, list[list[tuple[str, str]]]] = {}
    embedding: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="commitlog-") as tmp:
        where = Path(tmp)
        if args.stores is not None:
            where = args.stores
            where.mkdir(parents=True, exist_ok=True)
        engine, ids, rowids = cortex_store(units, where, None if args.empty_dir else args.repo)
        ctx = engine._context()
        lexical, parts = [], []
        for question in questions:
            _, _, ranked = surfaces.ranked(ctx, question, args.depth)
            lexical.append([ids[c.id] for c in ranked if c.id in ids])
            parts.append([(ids[c.id], parts_of(c)) for c in ranked if c.id in ids])
        rankers["cortex"] = lexical
        details["cortex"] = parts
        import bench.dense as shared

        if shared.available():
            import numpy as np

            from cortex_engine.semantic.vectors import embed_text

            unit_vectors, took = shared.embed_all([embed_text(None, t) for _, t, _ in units])
            question_vectors, took_q = shared.embed_all(questions)
            embedding = {
                "embedded": took["embedded"] + took_q["embedded"],
                "seconds": round(took["seconds"] + took_q["seconds"], 2),
            }
            by_sha = {sha: unit_vectors[embed_text(None, text)] for sha, text, _ in units}
            matrix = np.stack([by_sha[sha] for sha, _, _ in units])
            rankers["dense"] = [
                shared.dense_ranking(matrix, [u[0] for u in units], question_vectors[q]) for q in questions
            ]
            shared.store_vectors(engine.conn, {rowids[item]: by_sha[sha] for item, sha in ids.items()})
            hybrid_ctx = records.replace(ctx, dense=shared.searcher(question_vectors))
            hybrid, hybrid_parts = [], []
            for question in questions:
                _, _, ranked = surfaces.ranked(hybrid_ctx, question, args.depth)
                hybrid.append([ids[c.id] for c in ranked if c.id in ids])
                hybrid_parts.append([(ids[c.id], parts_of(c)) for c in ranked if c.id in ids])
            rankers["cortex hybrid"] = hybrid
            details["cortex hybrid"] = hybrid_parts
        engine.close()

    rows = []
    for split, keep in (("all", None), ("low overlap", low)):
        for name, rankings in rankers.items():
            scores = [score(r, gold) for (q, gold), r in zip(qa, rankings, strict=True) if keep is None or q in keep]
            n = len(scores)
            mean = [round(100 * sum(s[i] for s in scores) / n, 1) for i in range(3)]
            rows.append(
                {
                    "ranker": name,
                    "split": split,
                    "queries": n,
                    "r1": mean[0],
                    "r5": mean[1],
                    "r10": mean[2],
                    "mrr": round(sum(s[3] for s in scores) / n, 3),
                }
            )

    def first(ranking: list[str], gold: list[str]) -> int | None:
        position = {ident: i for i, ident in enumerate(ranking)}
        found = [position[g] for g in gold if g in position]
        return min(found) + 1 if found else None

    def compare(old: str, new: str) -> dict[str, object]:
        """Where `new` moves the first gold commit against `old`: counts, and the worst losses with their parts."""
        far = 10**6
        moves: list[tuple[int, int, dict[str, object]]] = []  # (rank before, rank after, what the report prints)
        for i, (q, gold) in enumerate(qa):
            before, after = first(rankers[old][i], gold), first(rankers[new][i], gold)
            b, a = before or far, after or far
            if b != a:
                lead = rankers[new][i][0] if rankers[new][i] else None
                parts = dict(details.get(new, [[]] * len(qa))[i])
                moves.append(
                    (
                        b,
                        a,
                        {
                            "query": q[:140],
                            "before": before,
                            "after": after,
                            "gold": gold[0][:10],
                            "top": (text_of[lead].split("\n")[0][:100] if lead else None),
                            "top_parts": parts.get(lead or "", ""),
                            "gold_parts": parts.get(gold[0], ""),
                            "gold_subject": text_of[gold[0]].split("\n")[0][:100],
                        },
                    )
                )
        lost = sorted((m for m in moves if m[1] > m[0]), key=lambda m: (m[0] > 10, -(m[1] - m[0])))
        won = [m for m in moves if m[1] < m[0]]
        crossed = Counter(("lost" if m[1] > 10 >= m[0] else "won" if m[0] > 10 >= m[1] else "inside") for m in moves)
        return {
            "lost": len(lost),
            "won": len(won),
            "top10_crossings": dict(crossed),
            "worst_losses": [m[2] for m in lost[: args.losses]],
        }

    report = {
        "repo": str(args.repo),
        "commits": len(units),
        "queries": len(qa),
        "low_overlap_queries": len(low),
        "rows": rows,
        "embedding": embedding,
        "rerank_vs_fts5": compare("fts5 bm25", "cortex"),
        **({"hybrid_vs_lexical": compare("cortex", "cortex hybrid")} if "cortex hybrid" in rankers else {}),
    }
    if args.ranks:
        args.ranks.write_text(
            json.dumps(
                [{"query": q, **{n: first(r[i], gold) for n, r in rankers.items()}} for i, (q, gold) in enumerate(qa)]
            )
        )
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
