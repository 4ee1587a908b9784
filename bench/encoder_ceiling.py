"""How many items per CPU-second the float encoder could reach at all: where its time goes, operator by operator.

Usage:
    python bench/encoder_ceiling.py [--notes 400] [--rounds 3] [--out FILE]

Embeds the reference corpus's first `--notes` notes (as `bench/encoder_cost.py` does: subject + content, ~44 tokens
each) with the shipped encoder, once plainly (items per CPU-second, the process's CPU) and once under onnxruntime's
profiler (the time of every operator; one thread, so its time is CPU). From the profile's input shapes it counts
each matrix product's floating-point operations and gives:

- the share of the run each operator type takes;
- the rate the float matrix products run at (GFLOP/s), against the one-thread float32 GEMM rate numpy reaches on
  the same shapes in this process (the core's practical ceiling for them);
- the ceiling: items per CPU-second if every operator but the matrix products cost nothing and the products ran at
  numpy's rate. A goal above the ceiling cannot be met by batching, padding or any other setting of the float graph.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = Path(os.environ.get("CORTEX_ANCHOR_CORPUS", "/work/shared/data/anchor"))


def _texts(count: int) -> list[str]:
    notes = json.loads((CORPUS / "notes-10000.json").read_text())["notes"][:count]
    return [(n["subject"] + ": " if n.get("subject") else "") + n["content"] for n in notes]


def _profiled(texts: list[str]) -> list[dict]:
    """The encoder's run over `texts` under onnxruntime's profiler: one event per operator run."""
    import onnxruntime as ort

    from cortex_engine.semantic import extra, graph, model

    embedder = model.load()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.enable_profiling = True
    folder = tempfile.mkdtemp(prefix="cortex-ceiling-")
    options.profile_file_prefix = os.path.join(folder, "run")
    path = extra.model_file()
    assert path is not None
    data = Path(path).read_bytes()
    session = ort.InferenceSession(graph.rewrite(data, matmuls=extra.INTEGER_PRODUCTS), options)
    embedder._session = session  # the same graph and options as the shipped one, with the profiler on
    embedder.embed(texts)
    session.end_profiling()
    (trace,) = glob.glob(os.path.join(folder, "run*.json"))
    events = json.loads(Path(trace).read_text())
    return [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]


def _product(event: dict) -> tuple[int, int, int] | None:
    """A matrix product's (rows, inner, columns) from its input and output shapes (a weight, being constant, is
    not among the profiled inputs: the columns come from the output)."""
    inputs = [next(iter(s.values())) for s in event["args"].get("input_type_shape", [])]
    outputs = [next(iter(s.values())) for s in event["args"].get("output_type_shape", [])]
    if not inputs or not outputs or not inputs[0] or not outputs[0]:
        return None
    rows = 1
    for dim in inputs[0][:-1]:
        rows *= dim
    return rows, inputs[0][-1], outputs[0][-1]


def _numpy_rate(shapes: Counter) -> float:
    """GFLOP/s numpy's one-thread float32 GEMM reaches on the products' shapes (weighted as the run weighs them)."""
    import numpy as np

    flops = seconds = 0.0
    for (rows, inner, cols), count in shapes.most_common(8):
        a = np.random.default_rng(0).random((rows, inner), dtype=np.float32)
        w = np.random.default_rng(1).random((inner, cols), dtype=np.float32)
        for _ in range(5):
            a @ w
        began = time.process_time()
        repeats = max(20, count)
        for _ in range(repeats):
            a @ w
        seconds += time.process_time() - began
        flops += 2.0 * rows * inner * cols * repeats
    return flops / seconds / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")  # numpy's GEMM on one thread, as the encoder runs
    from cortex_engine.semantic import model

    texts = _texts(args.notes)
    embedder = model.load()
    embedder.embed(texts[:16])  # warm
    rates = []
    for _ in range(args.rounds):
        began = time.process_time()
        embedder.embed(texts)
        rates.append(len(texts) / (time.process_time() - began))
    tokens = sum(len(ids) for ids in embedder._token_ids(texts))
    events = _profiled(texts)
    by_op: Counter = Counter()
    matmul_us = 0
    matmul_flops = 0
    shapes: Counter = Counter()
    for event in events:
        op = event["args"].get("op_name", "?")
        by_op[op] += event["dur"]
        product = _product(event) if op in ("MatMul", "FusedMatMul") else None
        if product is not None:
            rows, inner, cols = product
            matmul_us += event["dur"]
            matmul_flops += 2 * rows * inner * cols
            shapes[product] += 1
    total_us = sum(by_op.values())
    numpy_gflops = _numpy_rate(shapes)
    encoder_gflops = matmul_flops / matmul_us / 1e3
    ceiling = len(texts) / (matmul_flops / (numpy_gflops * 1e9))
    result = {
        "notes": len(texts),
        "tokens_per_item": round(tokens / len(texts), 1),
        "items_per_cpu_s": round(statistics.median(rates), 1),
        "items_per_cpu_s_runs": [round(r, 1) for r in rates],
        "operator_share": {op: round(us / total_us, 3) for op, us in by_op.most_common(8)},
        "matmul_gflop_per_item": round(matmul_flops / len(texts) / 1e9, 3),
        "matmul_gflops_encoder": round(encoder_gflops, 1),
        "matmul_gflops_numpy": round(numpy_gflops, 1),
        "ceiling_items_per_cpu_s": round(ceiling, 1),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
