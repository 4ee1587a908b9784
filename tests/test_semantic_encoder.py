"""The encoder's costs: the graph rewrite (the vocabulary table stays int8, the vectors do not move by a bit) and
the topics a warm process remembers."""

from __future__ import annotations

import functools
import string
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cortex_engine.semantic import extra as semantic
from cortex_engine.semantic import graph, wordpiece

pytest.importorskip("onnxruntime", reason="the semantic extra is part of the test extra")

import onnxruntime as ort  # type: ignore[import-untyped]  # noqa: E402 - after the skip

from cortex_engine.semantic import model  # noqa: E402 - after the skip

TEXTS = [
    "use kafka for the queue engine; partitions give us ordering per account",
    "event streaming choice",
    "x",
    "the invoice pdf export needs the fonts bundled or it falls back to courier " * 40,  # cut at MAX_TOKENS
]


@pytest.fixture(scope="module")
def pinned() -> str:
    path = semantic.model_file()
    if path is None or semantic.model_problem(path) is not None:
        pytest.skip("the pinned model file is not installed")
    return path


def test_the_rewritten_graph_computes_the_file_s_vectors_the_tables_exactly_the_products_closely(pinned: str) -> None:
    """Gathering the embedding tables as int8 (what the encoder runs) gives, bit for bit, what the unchanged file
    computes; the integer matrix products (`INTEGER_PRODUCTS`, off) move each vector a little (cosine to the file's
    0.99 for a sentence, 0.979 for the one-letter text), never towards another text's."""
    embedder = model.Embedder(pinned)
    shipped = embedder.embed(TEXTS)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    embedder._session = ort.InferenceSession(pinned, options, providers=["CPUExecutionProvider"])
    original = embedder.embed(TEXTS)
    assert shipped.shape == (len(TEXTS), semantic.DIMENSIONS)
    assert (shipped == original).all()
    with open(pinned, "rb") as handle:
        products = graph.rewrite(handle.read(), matmuls=True)
    embedder._session = ort.InferenceSession(products, options, providers=["CPUExecutionProvider"])
    cosines = embedder.embed(TEXTS) @ original.T
    assert (cosines.diagonal() >= 0.97).all() and (cosines.diagonal() < 1.0).any()
    assert (cosines.argmax(axis=1) == list(range(len(TEXTS)))).all()


def test_the_embedding_tables_are_gathered_as_int8_and_the_products_run_on_int8_weights(pinned: str) -> None:
    """The two tables read by Gather lose their Cast and Mul; with `matmuls=False` the matrix products keep theirs
    (float32, as the file has them), by default every one runs on its int8 weights."""
    with open(pinned, "rb") as handle:
        data = handle.read()
    out = graph.rewrite(data, matmuls=False)
    assert out != data
    nodes = [graph._Node(v) for f, _, v, _ in graph._fields(_graph_of(out)) if f == 1 and not isinstance(v, int)]
    before = [graph._Node(v) for f, _, v, _ in graph._fields(_graph_of(data)) if f == 1 and not isinstance(v, int)]
    gathered = [n.inputs[0] for n in nodes if n.op == "Gather"]
    assert "inner.embeddings.word_embeddings.weight_q" in gathered
    assert "inner.embeddings.word_embeddings.weight" not in gathered
    assert sum(n.op == "MatMul" for n in nodes) == sum(n.op == "MatMul" for n in before)
    assert not any(n.domain for n in nodes)
    products = [graph._Node(v) for f, _, v, _ in graph._fields(_graph_of(graph.rewrite(data))) if f == 1]
    integer = [n for n in products if n.op == "DynamicQuantizeMatMul" and n.domain == graph.MS_DOMAIN]
    assert len(integer) >= 36 and len(integer) + sum(n.op == "MatMul" for n in products) == sum(
        n.op == "MatMul" for n in before
    )


def test_bytes_it_cannot_rewrite_pass_through_unchanged() -> None:
    """No graph, or no pattern that matches exactly: the bytes are returned as given."""
    assert graph.rewrite(b"") == b""
    assert graph.rewrite(graph._put(1, "not a graph")) == graph._put(1, "not a graph")


def _graph_of(data: bytes) -> memoryview:
    found = next(v for f, _, v, _ in graph._fields(memoryview(data)) if f == 7 and not isinstance(v, int))
    assert isinstance(found, memoryview)
    return found


def test_a_remembered_topic_is_the_vector_a_new_run_computes_and_the_oldest_is_forgotten(
    pinned: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`embed_topic` answers a repeated topic from memory with the same vector; past TOPICS_KEPT the least recent
    topic is computed again."""
    monkeypatch.setattr(model, "TOPICS_KEPT", 2)
    embedder = model.Embedder(pinned)
    first = embedder.embed_topic(TEXTS[1])
    assert (first == embedder.embed([TEXTS[1]])[0]).all() and not first.flags.writeable
    assert embedder.embed_topic(TEXTS[1]) is first
    embedder.embed_topic(TEXTS[0])
    embedder.embed_topic(TEXTS[2])  # three topics: the least recently asked (TEXTS[1]) is forgotten
    again = embedder.embed_topic(TEXTS[1])
    assert again is not first and (again == first).all()


ASCII = st.lists(st.sampled_from([*string.printable, "\x00", "\x0b", "\x1f", "\x7f", "##", "[SEP]"]), max_size=400).map(
    "".join
)


@functools.cache
def _both() -> tuple[Any, wordpiece.WordPiece]:
    return model._library_tokenizer(), wordpiece.WordPiece(model._TOKENIZER)


@settings(max_examples=40, deadline=None)
@example(text="b" * 100 + " " + "b" * 101 + " embeddings ##x")
@example(text="word " * 300)
@given(text=st.one_of(ASCII, st.lists(st.text(string.ascii_letters + "#", min_size=1, max_size=120)).map(" ".join)))
def test_the_python_wordpiece_gives_the_library_s_ids_for_every_text_it_takes(text: str) -> None:
    """ASCII text (control characters, punctuation, `##`, words over 100 characters, past 256 tokens) is cut as the
    library cuts it; a text naming a special token is left to the library."""
    library, pieces = _both()
    if pieces.handles(text):
        assert pieces.encode(text, model.MAX_TOKENS) == library.encode(text).ids
    else:
        assert "[SEP]" in text


def test_a_text_the_python_wordpiece_does_not_take_is_cut_by_the_library(pinned: str) -> None:
    """Non-ASCII text and special-token names go to the library, loaded only then; the ids are its own."""
    embedder = model.Embedder(pinned)
    assert embedder._tokenizer is None
    embedder._token_ids(["plain ascii"])
    assert embedder._tokenizer is None
    texts = ["café naïve 東京 ﬁle", "the [SEP] token", "plain ascii"]
    library = model._library_tokenizer()
    assert embedder._token_ids(texts) == [library.encode(t).ids for t in texts]
    assert embedder._tokenizer is not None
