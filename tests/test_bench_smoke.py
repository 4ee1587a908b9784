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


def test_freshness_history_replays_a_synthetic_repository(tmp_path: Path) -> None:
    """`bench/freshness_history.py --synthetic` builds, replays and scores every class, with no false alarm."""
    out = tmp_path / "freshness.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "freshness_history.py"), "--synthetic", "--steps", "40",
                           "--commits", "15", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["notes"] == 15 and report["pairs"] >= 15
    assert set(report["classes"]) <= {"alive", "renamed", "deleted", "unclassified"} and "alive" in report["classes"]
    assert report["false_alarms"] == []
    assert report["warm_validate_1000_notes_ms"]["notes"] == 1000
