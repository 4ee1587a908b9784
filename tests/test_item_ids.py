"""Every id shown is one `inspect-memory` takes back to the item it was shown for; a prefix that names two items is
refused everywhere an id is taken, with the candidates; short ids are lengthened where they would collide."""

from __future__ import annotations

import json
from pathlib import Path

from cortex_engine.engine import Engine
from cortex_engine.store.database import scope_id

from .conftest import Repo
from .install_helpers import cortex


def _listed(cwd: Path) -> list[dict[str, str]]:
    done = cortex(cwd, "list-memory", "--json")
    assert done.code == 0, done.err
    return json.loads(done.out)["items"]


def test_a_failure_its_run_a_summary_and_the_snapshot_each_show_an_id_inspect_takes(repo: Repo) -> None:
    assert cortex(repo.path, "log", "cmd", "--cmd", "pytest tests/x.py", "--exit", "1", "--stderr", "boom").code == 0
    assert cortex(repo.path, "note", "--kind", "decision", "--subject", "queue", "use kafka").code == 0
    assert cortex(repo.path, "summarize", "worked on the queue").code == 0
    items = _listed(repo.path)
    kinds = {i["kind"] for i in items}
    assert {"episode:command_failure", "command_run", "episode:session_summary", "branch_snapshot"} <= kinds
    shorts = [i["short_id"] for i in items]
    assert len(set(shorts)) == len(shorts) and all(len(s) >= 8 for s in shorts)
    text = cortex(repo.path, "list-memory").out
    for item in items:
        assert f"\n{item['short_id']} " in text
        shown = cortex(repo.path, "inspect-memory", item["short_id"], "--json")
        assert shown.code == 0, (item, shown.err)
        assert json.loads(shown.out)["id"] == item["id"]
    # The failure and its run share their capture's uuid: that uuid names the run, and the failure has its own id.
    run = next(i for i in items if i["kind"] == "command_run")
    failure = next(i for i in items if i["kind"] == "episode:command_failure")
    assert run["id"].split(":")[-1] == failure["id"].split(":")[-1]
    assert json.loads(cortex(repo.path, "inspect-memory", run["short_id"], "--json").out)["id"] == run["id"]


def _twin(engine: Engine, item_id: str, text: str) -> None:
    engine.conn.execute(
        "INSERT INTO memory_items(id, scope_type, scope_id, kind, subject, text, state, importance, created_at) "
        "VALUES (?, ?, ?, 'command_run', NULL, ?, 'warm', 0.5, '2026-08-02T18:00:00.000Z')",
        (item_id, engine.scope.type, scope_id(engine.conn, engine.scope.key), text),
    )


def test_colliding_short_ids_are_lengthened_and_an_ambiguous_prefix_is_refused_everywhere(
    repo: Repo, make_engine
) -> None:
    engine = make_engine(repo.path)
    engine.note("insight", "a first note so the store exists")
    _twin(engine, "command_runs:77afd26f-1111-4000-8000-000000000001", "pytest -q failed")
    _twin(engine, "command_runs:77afd26f-1122-4000-8000-000000000002", "pytest -q passed")
    engine.conn.commit()
    engine.close()
    shorts = sorted(i["short_id"] for i in _listed(repo.path) if i["kind"] == "command_run")
    assert shorts == ["77afd26f-111", "77afd26f-112"]
    for args in (
        ("inspect-memory", "77afd26f"),
        ("delete-memory", "--yes", "77afd26f"),
        ("edit-memory", "77afd26f", "--text", "x"),
    ):
        done = cortex(repo.path, *args)
        assert done.code != 0 and done.err.startswith("cortex: "), (args, done.out)
        assert (
            "matches more than one memory item" in done.err
            and "77afd26f-111" in done.err
            and "77afd26f-112" in done.err
        )
    assert len([i for i in _listed(repo.path) if i["kind"] == "command_run"]) == 2  # nothing was deleted
    shown = cortex(repo.path, "inspect-memory", "77afd26f-112", "--json")
    assert json.loads(shown.out)["id"] == "command_runs:77afd26f-1122-4000-8000-000000000002"


def test_a_digest_handle_and_an_own_id_that_share_eight_characters_are_lengthened_even_in_a_warm_process(
    repo: Repo, make_engine
) -> None:
    """An episode's handle is a digest of its id; a command run whose own id begins with the same 8 characters makes
    both longer, in a process that listed before the second arrived (what it kept of the first listing is not
    reused once the store changed) as in a fresh `list-memory`; each id shown is one `inspect-memory` takes back."""
    import hashlib

    from cortex_engine.query.listing import list_memory

    engine = make_engine(repo.path)
    engine.note("insight", "a first note so the store exists")
    episode = "episodes:test_cycle:5c0ffee0-0000-4000-8000-000000000001"
    digest = hashlib.sha1(episode.encode()).hexdigest()
    twin = f"command_runs:{digest[:8]}-{digest[8:12]}-4000-8000-000000000002"
    _twin(engine, twin, "pytest -q failed")
    engine.conn.commit()

    def shown() -> dict[str, str]:
        return {str(i["id"]): str(i["short_id"]) for i in list_memory(engine.conn).items}

    assert shown()[twin] == digest[:8]
    engine.conn.execute(
        "INSERT INTO memory_items(id, scope_type, scope_id, kind, subject, text, state, importance, created_at) "
        "VALUES (?, ?, ?, 'episode:test_cycle', NULL, 'pytest cycle', 'warm', 0.5, '2026-08-02T18:01:00.000Z')",
        (episode, engine.scope.type, scope_id(engine.conn, engine.scope.key)),
    )
    engine.conn.commit()
    warm = shown()
    assert (warm[episode], warm[twin]) == (digest[:9], f"{digest[:8]}-"), warm
    engine.close()
    listed = {i["id"]: i["short_id"] for i in _listed(repo.path)}
    assert (listed[episode], listed[twin]) == (digest[:9], f"{digest[:8]}-")
    assert len(set(listed.values())) == len(listed)
    for item_id in (episode, twin):
        done = cortex(repo.path, "inspect-memory", listed[item_id], "--json")
        assert done.code == 0 and json.loads(done.out)["id"] == item_id, done.err
    refused = cortex(repo.path, "inspect-memory", digest[:8])
    assert refused.code != 0 and "matches more than one memory item" in refused.err
