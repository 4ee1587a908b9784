"""Projection of captured rows, the rules mutation testing of `memory/projection.py` found untested.

An item's references are re-read on every re-projection (the old ones replaced, not kept), and an episode's
target, its subject, is read before its text: it is the first path its freshness label names.
"""

from __future__ import annotations

from cortex_engine.engine import Engine
from cortex_engine.memory.projection import sync_episode_item

from .test_projection_rules import episode, references


def stale_label(engine: Engine, item_id: str) -> str | None:
    """The freshness label of one item, judged now (nothing persisted)."""
    labels = {i["id"]: i["label"] for i in engine.validate_memory(persist=False)["items"]}
    return labels[item_id]


def test_a_re_projection_replaces_the_item_s_references(engine: Engine) -> None:
    """The episode's summary named one file, then another: the item references the new one only."""
    episode(engine, "e", "test_cycle", summary="tests failed in src/a.py")
    assert references(engine, "episodes:e") == ["src/a.py"]
    engine.conn.execute("UPDATE episodes SET summary='tests failed in src/c.py' WHERE id='e'")
    sync_episode_item(engine.conn, "e")
    assert references(engine, "episodes:e") == ["src/c.py"]


def test_an_episode_s_target_is_the_first_path_its_freshness_label_names(engine: Engine) -> None:
    """Neither file exists: the label lists the target before the file its summary named first."""
    episode(engine, "e", "command_failure", summary="tests failed in src/b.py", target="src/a.py")
    assert stale_label(engine, "episodes:e") == "stale: missing src/a.py, src/b.py"
