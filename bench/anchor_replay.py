"""Replay the reference's benchmark corpus through `Engine.note`, then measure the store.

Usage:
    python bench/anchor_replay.py build --out DIR [--n 10000] [--corpus FILE]
    python bench/anchor_replay.py size DIR

The corpus is the reference's (`../shared/data/anchor/notes-10000.json`, format in its FORMAT.md); it stays
there and is read, never copied. `build` makes DIR/repo (a throwaway git repository on `main`) and DIR/home
(CORTEX_HOME), then replays the first N notes as the reference's benchmark seeds them: one session per 25
notes (`Engine.start_session`, which ends the previous one and syncs the branch snapshot), each note through
`Engine.note` with its kind, subject, content and alternatives. The clock is injected: a minute per note from
a fixed start, so every build is the same. N above the corpus's length cycles it, each later pass tagging
its content with the pass number (contents stay unique).

`size` checkpoints the WAL and prints the store's size and SQLite's dbstat breakdown as JSON. Run either
under the tree to measure: `PYTHONPATH=<tree> python bench/anchor_replay.py ...`.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

CORPUS = Path(os.environ.get("CORTEX_ANCHOR_CORPUS", "/work/shared/data/anchor/notes-10000.json"))
START = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
PER_SESSION = 25
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def corpus_notes(n: int, corpus: Path = CORPUS) -> list[dict]:
    """The first n notes of the corpus in write order (cycled, content tagged per pass, past its end)."""
    notes = json.loads(corpus.read_text(encoding="utf-8"))["notes"]
    out = []
    for i in range(n):
        note = dict(notes[i % len(notes)])
        if i >= len(notes):
            note["content"] = f"{note['content']} (pass {i // len(notes) + 1})"
        out.append(note)
    return out


def make_repo(root: Path) -> Path:
    """A throwaway git repository with one commit on `main`."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "bench"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)
    return repo


def build(out: Path, n: int, corpus: Path = CORPUS, *, wall_clock: bool = False) -> dict[str, float]:
    """Replay n notes into a fresh store under `out`; returns the wall seconds and per-note milliseconds.

    `wall_clock` stamps each note with the real time instead, as the reference's own seed does (the whole corpus
    is then written within a minute or two, so recency no longer orders it).
    """
    from cortex_engine.engine import Engine

    repo = make_repo(out)
    home = out / "home"
    tick = [0]

    def clock() -> datetime:
        if wall_clock:
            return datetime.now(UTC)
        return START + timedelta(seconds=60 * tick[0])

    notes = corpus_notes(n, corpus)
    started = time.perf_counter()
    with Engine(repo, home=home, clock=clock) as engine:
        for i, note in enumerate(notes):
            tick[0] = i
            if i % PER_SESSION == 0:
                engine.start_session()
            engine.note(note["kind"], note["content"], note.get("subject"), note.get("alternatives"))
        tick[0] = len(notes)
        engine.start_session()  # ends the last session and syncs its snapshot, as the reference's seed does
    wall = time.perf_counter() - started
    return {"notes": n, "build_s": round(wall, 1), "note_ms": round(wall * 1000 / max(n, 1), 2)}


def store_path(home: Path) -> Path:
    (db,) = home.glob("projects/*/cortex.db")
    return db


def size(home: Path) -> dict[str, object]:
    """Checkpoint the store under `home`, then its size, schema and the dbstat breakdown (MiB per object)."""
    db = store_path(home)
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
        notes = conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0]
        objects = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
    finally:
        conn.close()
    bytes_ = db.stat().st_size
    return {
        "schema": int(version),
        "notes": notes,
        "bytes": bytes_,
        "mib": round(bytes_ / 1048576, 2),
        "bytes_per_note": round(bytes_ / max(notes, 1)),
        "dbstat_mib": {name: round(total / 1048576, 2) for name, total in objects if total >= 10240},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--n", type=int, default=10000)
    b.add_argument("--corpus", type=Path, default=CORPUS)
    s = sub.add_parser("size")
    s.add_argument("dir", type=Path)
    args = parser.parse_args(argv)
    if args.cmd == "build":
        report = build(args.out, args.n, args.corpus)
        report.update(size(args.out / "home"))
    else:
        report = size(args.dir / "home")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
