"""The benchmark cannot silently rot: its smallest tier runs end to end (figures printed, not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_smallest_tier_runs_end_to_end(tmp_path: Path) -> None:
    """`bench/run.py --tiers 1000 --quick` writes results.json and RESULTS.md with every figure measured."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--tiers", "1000", "--quick", "--no-locomo",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    print(done.stdout)
    report = json.loads((tmp_path / "results.json").read_text())
    tier = report["tiers"]["1000"]
    figures = ("capture_hook_ms", "inject_header_ms", "reflect_edit_ms", "recall_cli_ms", "recall_inprocess_ms",
               "flush_1k_lines_ms", "doctor_ms", "mcp_recall_ms", "mcp_note_ms", "serve_first_answer_ms")
    assert {f: tier[f]["median"] > 0 for f in figures} == {f: True for f in figures}
    assert tier["items"] > 500 and tier["flush_processed"] > 0
    assert "| capture_hook_ms | 1,000 |" in (tmp_path / "RESULTS.md").read_text()
