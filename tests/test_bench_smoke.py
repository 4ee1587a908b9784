"""The benchmark cannot silently rot: its smallest tier runs end to end (figures printed, not asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_smallest_tier_runs_end_to_end(tmp_path: Path, bin_path: Path) -> None:
    """`bench/run.py --tiers 1000 --quick --runs 1` writes results.json and RESULTS.md with every figure measured."""
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--tiers",
            "1000",
            "--quick",
            "--runs",
            "1",
            "--no-locomo",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    print(done.stdout)
    report = json.loads((tmp_path / "results.json").read_text())
    tier = report["tiers"]["1000"]
    figures = (
        "capture_hook_ms",
        "inject_header_ms",
        "reflect_edit_ms",
        "recall_cli_ms",
        "recall_inprocess_ms",
        "flush_1k_lines_ms",
        "doctor_ms",
        "mcp_recall_ms",
        "mcp_note_ms",
        "serve_first_answer_ms",
    )
    assert {f: tier[f]["median"] > 0 for f in figures} == {f: True for f in figures}
    assert tier["items"] > 500 and tier["flush_processed"] > 0
    assert "| capture_hook_ms | 1,000 |" in (tmp_path / "RESULTS.md").read_text()


def test_freshness_history_replays_a_synthetic_repository(tmp_path: Path) -> None:
    """`bench/freshness_history.py --synthetic` builds, replays and scores every class, with no false alarm."""
    out = tmp_path / "freshness.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "freshness_history.py"),
            "--synthetic",
            "--steps",
            "40",
            "--commits",
            "15",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["notes"] == 15 and report["pairs"] >= 15
    assert set(report["classes"]) <= {"alive", "renamed", "deleted", "unclassified"} and "alive" in report["classes"]
    assert report["false_alarms"] == []
    assert report["warm_validate_1000_notes_ms"]["notes"] == 1000


def test_anchors_history_replays_a_small_repository(tmp_path: Path) -> None:
    """`bench/anchors_history.py` replays commits that changed functions and scores them against git log -L."""
    repo = tmp_path / "origin"
    repo.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
    }

    def commit(body: str, message: str) -> None:
        (repo / "pkg").mkdir(exist_ok=True)
        (repo / "pkg" / "core.py").write_text(body)
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", message], cwd=repo, check=True, env=env)

    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    funcs = {name: f"def {name}(x):\n    return x + 1\n" for name in ("alpha", "beta", "gamma")}
    commit("\n\n".join(funcs.values()), "start")
    for n, name in enumerate(funcs, start=2):
        funcs[name] = funcs[name].replace("+ 1", f"+ {n}")
        commit("\n\n".join(funcs.values()), f"change {name}")
    funcs["beta"] = funcs["beta"].replace("x +", "x * 2 +")
    commit("\n\n".join(funcs.values()), "change beta again")
    out = tmp_path / "anchors.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "anchors_history.py"),
            "--repo",
            str(repo),
            "--commits",
            "4",
            "--window",
            "4",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["anchors_made"] == 4
    assert report["classes"] == {"fresh": 3, "drifted": 1, "missing": 0, "unknown_file_gone": 0}
    assert report["agreement"] == 1.0 and report["drifted_on_identical_text"] == []
    assert report["warm_check_1000_notes_ms"]["notes"] == 1000


def test_anchors_follow_mines_by_git_s_yardstick_and_skips_what_ast_cannot_read(tmp_path: Path) -> None:
    """`bench/anchors_follow.py`'s truth: a name that went to another file keeping under half its lines is not a
    move by git's measure, and a name deleted while a changed file does not parse (Python 2) is not known gone."""
    sys.path.insert(0, str(ROOT))
    from bench.anchors_follow import mine

    repo = tmp_path / "origin"
    (repo / "pkg").mkdir(parents=True)
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
    }

    def commit(files: dict[str, str], message: str) -> None:
        for name, body in files.items():
            if body:
                (repo / "pkg" / name).write_text(body)
            else:
                (repo / "pkg" / name).unlink()
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", message], cwd=repo, check=True, env=env)

    methods = "".join(f"    def test_{n}(self):\n        assert run({n}) == {n * 2}\n\n" for n in range(6))
    suite = f"class Suite:\n{methods}"
    funcs = {name: f"def {name}(x):\n    y = x * 2\n    return y + {len(name)}\n" for name in ("lone", "drop", "keep")}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    legacy = "def old(x):\n    try:\n        return int(x)\n    except ValueError, e:\n        return 0\n"
    commit({"a.py": "\n\n".join([suite, *funcs.values()]), "legacy.py": legacy}, "start")
    split = suite.split("    def test_1")[0]
    rest = "class Other:\n    def test_1" + suite.split("    def test_1")[1]
    commit({"a.py": "\n\n".join(funcs.values()), "b.py": split + "\n\n" + rest}, "split Suite on the way")
    commit({"a.py": funcs["drop"] + "\n\n" + funcs["keep"], "c.py": funcs["lone"]}, "move lone whole")
    commit({"a.py": funcs["keep"], "legacy.py": legacy + "\n\n" + funcs["drop"]}, "drop into a Python 2 file")
    commit({"a.py": "def other():\n    return 1\n"}, "delete keep")
    events = {(str(e["class"]), str(e["name"])) for e in mine(repo, 10, 10)}
    assert ("moved, rewritten", "Suite") in events and ("moved", "Suite") not in events
    assert ("moved", "lone") in events
    assert ("gone", "keep") in events and ("gone", "drop") not in events
