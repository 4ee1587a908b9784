"""Evaluating the live store: the same metrics for topics against the user's own memory (`cortex evaluate`).
Standard library only."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from cortex_engine.ops.evaluation.suites import SuiteError


def _preview(surface: Any) -> dict[str, object]:
    return {"chars": len(surface.text), "est_tokens": surface.tokens, "preview": surface.text[:320]}


def evaluate_live(cwd: str, topics: list[str]) -> dict[str, Any]:
    """Evaluate the store of `cwd` on a private copy, so nothing is booked or reinforced in the real one.

    Raises:
        SuiteError: there is no store for this directory yet.
    """
    from cortex_engine.engine import Engine
    from cortex_engine.scope.identity import store_identity
    from cortex_engine.store.database import SCHEMA_VERSION

    ident = store_identity(os.path.realpath(cwd))
    if not ident.db_path.exists():
        raise SuiteError(f"no Cortex store for {cwd} yet ({ident.db_path}); nothing to evaluate", code="no_store")
    root = Path(tempfile.mkdtemp(prefix="cortex-evaluate-")).resolve()
    try:
        copy = root / ident.db_path.relative_to(ident.store_dir.parent.parent)
        copy.parent.mkdir(parents=True)
        source = sqlite3.connect(f"file:{ident.db_path}?mode=ro", uri=True)
        target = sqlite3.connect(copy)
        try:
            source.backup(target)
        finally:
            source.close()
            target.close()
        with Engine(cwd, home=root) as engine:
            tables = {
                t: engine.conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]
                for t in ("sessions", "notes", "memory_items", "memory_references", "retrieval_log", "token_ledger")
            }
            result: dict[str, Any] = {
                "db_path": str(ident.db_path),
                "generated_at": engine.now(),
                "schema_version": SCHEMA_VERSION,
                "tables": tables,
                "header": _preview(engine.header()),
                "full_state": _preview(engine.state()),
                "session_brief": _preview(engine.preview_session_brief()),
                "topics": [],
            }
            for topic in topics:
                surface = engine.recall(topic)
                result["topics"].append(
                    {
                        "topic": topic,
                        "tokens": surface.tokens,
                        "budget": surface.budget,
                        "items": [{"id": i.id, "kind": i.kind, "labels": list(i.labels)} for i in surface.items],
                        "text": surface.text,
                    }
                )
        return result
    finally:
        shutil.rmtree(root, ignore_errors=True)
