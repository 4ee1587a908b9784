"""`cortex doctor` names each broken piece, exits 1 on a failure, and changes nothing it reports on."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cortex_engine.engine import Engine, describe_store
from cortex_engine.ops import wiring
from cortex_engine.ops.doctor import diagnose
from cortex_engine.ops.install import install

from .conftest import Repo
from .install_helpers import cortex, cortex_bin, digest, settings, tree

DOCTOR_PROCESSES = 4
"""Processes one doctor run may start: a few git reads (two today, both `rev-parse` to find the store); never a
hook, the CLI, the MCP server or anything per file."""


@pytest.fixture
def installed(repo: Repo, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Cortex installed (user scope) into the temp home; returns the hooks directory."""
    monkeypatch.setenv("CORTEX_INSTALL_BIN", str(cortex_bin(tmp_path)))
    result = install(str(repo.path), diagnose=False)
    assert result.refused == []
    return isolated_home / ".claude" / "hooks"


@pytest.fixture
def started(installed: Path, repo: Repo, make_engine) -> Engine:
    """Installed and one session started: the store exists and the worktree is engaged."""
    engine = make_engine(repo.path)
    engine.start_session("host-1")
    return engine


def statuses(cwd: Path, hooks_dir: str | None = None) -> dict[str, tuple[str, str]]:
    report = diagnose(str(cwd), hooks_dir)
    return {c.name: (c.status, c.detail) for c in report.checks}


def test_a_healthy_installation_passes_every_check(
    started: Engine, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After install and a session: every check passes and the exit code is 0. Doctor reads files and the store and
    starts at most DOCTOR_PROCESSES processes (git, to find the store): what keeps it within its budget (
    a count, not a wall-clock bound; `doctor_ms` is in bench/)."""
    spawned: list[object] = []

    class Counting(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, args: object, *rest: object, **kw: object) -> None:
            spawned.append(args)
            super().__init__(args, *rest, **kw)  # type: ignore[arg-type]

    with monkeypatch.context() as patched:
        patched.setattr(subprocess, "Popen", Counting)
        report = diagnose(str(repo.path))
    assert [(c.name, c.status) for c in report.checks if c.status != "pass"] == []
    assert {c.name for c in report.checks} == {
        "settings",
        "hook-wiring",
        "capture-matcher",
        "reflect-matcher",
        "dispatch-matcher",
        "guard-matcher",
        "hook-scripts",
        "hook-substitution",
        "hook-currency",
        "hook-interpreter",
        "engagement",
        "store",
        "database",
        "spool",
        "mcp",
        "digest-index",
        "substitution",
        "subagent-sessions",
        "memory-guard",
        "semantic",
        "review-policy",
    }
    assert report.exit_code == 0
    assert len(spawned) <= DOCTOR_PROCESSES, spawned
    run = cortex(repo.path, "doctor")
    assert run.code == 0 and f"All {len(report.checks)} checks pass." in run.out


def test_a_brand_new_project_exits_zero_and_says_why(installed: Path, repo: Repo) -> None:
    """Installed, never started: exactly `database` and `engagement` cannot pass yet; they are notes saying the
    first session creates them, not failures; the store line says where it will be; exit 0."""
    run = cortex(repo.path, "doctor", "--json")
    data = run.data()
    assert run.code == 0
    assert {c["name"] for c in data["checks"] if c["status"] == "note"} == {"database", "engagement"}
    assert (data["failing"], data["notes"], data["fresh_project"], data["exit_code"]) == (0, 2, True, 0)
    text = cortex(repo.path, "doctor").out
    assert "FAIL" not in text and "fix:" not in text
    assert f"All {len(data['checks']) - 2} checks pass (2 notes)." in text
    assert "The first Claude Code session here creates" in text and "so this exits 0" in text
    store = next(line for line in text.splitlines() if line.split()[:2] == ["PASS", "store"])
    assert "to be created at" in store
    assert not Path(describe_store(repo.path).path).parent.exists()


def test_nothing_installed_fails(repo: Repo) -> None:
    """No settings, no scripts, no server: failures beyond the fresh-project pair exit 1, each with a fix."""
    run = cortex(repo.path, "doctor", "--json")
    assert run.code == 1
    failing = {c["name"]: c for c in run.data()["checks"] if c["status"] == "fail"}
    assert {"settings", "hook-wiring", "hook-scripts", "mcp", "database", "engagement"} <= set(failing)
    assert all(c["fix"] for c in failing.values())
    assert run.data()["fresh_project"] is False


def test_a_missing_store_under_an_engaged_worktree_is_not_excused(started: Engine, repo: Repo) -> None:
    """The store alone missing is not a fresh project: exit 1."""
    started.close()
    for path in Path(describe_store(repo.path).path).parent.iterdir():
        path.unlink()
    report = diagnose(str(repo.path))
    assert report.check("database").status == "fail" and "no store yet" in report.check("database").detail
    assert (report.fresh_project, report.exit_code) == (False, 1)


def test_missing_script_is_named(started: Engine, repo: Repo, installed: Path) -> None:
    (installed / "cortex-reflect.sh").unlink()
    report = diagnose(str(repo.path))
    check = report.check("hook-scripts")
    assert check.status == "fail" and "cortex-reflect.sh" in check.detail and check.fix == "run `cortex install`"
    assert report.exit_code == 1


def test_stale_stamp_is_named(started: Engine, repo: Repo, installed: Path) -> None:
    script = installed / "cortex-end-of-turn.sh"
    script.write_text(
        script.read_text().replace(wiring.template_digest(wiring.template_text(script.name)), "00000000deadbeef")
    )
    report = diagnose(str(repo.path))
    check = report.check("hook-currency")
    assert check.status == "fail"
    assert "cortex-end-of-turn.sh (stamp 00000000deadbeef" in check.detail
    assert report.exit_code == 1


def test_unsubstituted_placeholder_is_named(started: Engine, repo: Repo, installed: Path) -> None:
    (installed / "cortex-subagent.sh").write_text(wiring.template_text("cortex-subagent.sh"))
    report = diagnose(str(repo.path))
    check = report.check("hook-substitution")
    assert check.status == "fail" and "cortex-subagent.sh" in check.detail
    assert report.check("hook-currency").status == "fail"
    assert report.exit_code == 1


def test_lost_matcher_is_a_named_warning(started: Engine, repo: Repo, isolated_home: Path) -> None:
    """A PostToolUse matcher that lost Agent and Bash warns by name (warnings do not fail the run)."""
    target = isolated_home / ".claude" / "settings.json"
    data = settings(target)
    data["hooks"]["PostToolUse"][0]["matcher"] = "Read|Edit|Write|MultiEdit|NotebookEdit|Grep"
    target.write_text(json.dumps(data))
    report = diagnose(str(repo.path))
    check = report.check("capture-matcher")
    assert check.status == "warn"
    assert "PostToolUse matcher 'Read|Edit|Write|MultiEdit|NotebookEdit|Grep' omits Agent, Bash" in check.detail
    assert check.fix is not None and "cortex install" in check.fix
    assert report.exit_code == 0


def test_lost_wiring_and_bad_interpreter_fail(started: Engine, repo: Repo, isolated_home: Path) -> None:
    target = isolated_home / ".claude" / "settings.json"
    data = settings(target)
    del data["hooks"]["Stop"]
    data["hooks"]["SessionStart"][0]["hooks"][0]["command"] = '"/gone/cortex" inject-header --quiet'
    target.write_text(json.dumps(data))
    report = diagnose(str(repo.path))
    assert report.check("hook-wiring").detail == "1 of 11 wirings missing: Stop cortex-end-of-turn.sh"
    assert (
        "/gone/cortex (first word of the SessionStart command) is not found" in report.check("hook-interpreter").detail
    )
    assert report.exit_code == 1


def test_unparseable_settings_fail(started: Engine, repo: Repo) -> None:
    local = repo.path / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text("{oops")
    check = diagnose(str(repo.path)).check("settings")
    assert check.status == "fail" and "settings.local.json: not valid JSON" in check.detail


def test_newer_schema_fails_with_an_upgrade_fix_and_is_not_touched(started: Engine, repo: Repo) -> None:
    started.conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    started.close()
    report = diagnose(str(repo.path))
    check = report.check("database")
    assert check.status == "fail" and "newer Cortex (schema 99" in check.detail
    assert check.fix is not None and check.fix.startswith("upgrade Cortex")
    assert report.exit_code == 1
    conn = sqlite3.connect(describe_store(repo.path).path)
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "99"
    conn.close()


def test_big_spool_fails_and_stale_spool_warns(started: Engine, repo: Repo) -> None:
    runtime = repo.path / ".cortex"
    old = time.time() - 2 * 3600
    (runtime / "spool.jsonl").write_text(json.dumps({"v": 1, "t": old, "p": {}}) + "\n")
    stale = diagnose(str(repo.path)).check("spool")
    assert stale.status == "warn" and "the oldest pending capture is 120 min old" in stale.detail
    (runtime / "claims" / "00000000000000000001-1.jsonl").write_bytes(b"x" * (300 * 1024))
    report = diagnose(str(repo.path))
    big = report.check("spool")
    assert big.status == "fail" and "past the 256 KiB flush threshold" in big.detail and "1 claim" in big.detail
    assert big.fix is not None and "cortex flush-spool" in big.fix
    assert report.exit_code == 1


def test_missing_mcp_registration_fails(started: Engine, repo: Repo, isolated_home: Path) -> None:
    (isolated_home / ".claude.json").write_text("{}")
    check = diagnose(str(repo.path)).check("mcp")
    assert check.status == "fail" and "not registered" in check.detail and "claude mcp add" in (check.fix or "")


def test_disengaged_worktree_warns(started: Engine, repo: Repo) -> None:
    started.disengage()
    report = diagnose(str(repo.path))
    assert report.check("engagement").status == "warn"
    assert report.exit_code == 0


def test_doctor_changes_nothing(started: Engine, repo: Repo, isolated_home: Path) -> None:
    """Not a byte, mode or mtime changes under the home (store included) or the project."""
    started.flush_spool()
    started.close()
    (repo.path / ".cortex" / "spool.jsonl").write_text('{"v":1,"t":1,"p":{}}\n')
    before = tree(isolated_home, repo.path)
    text = cortex(repo.path, "doctor")
    as_json = cortex(repo.path, "doctor", "--json")
    assert (text.code, as_json.code) == (0, 0)
    assert digest(tree(isolated_home, repo.path)) == digest(before)


def test_doctor_on_a_fresh_project_creates_no_store(repo: Repo) -> None:
    before = tree(repo.path)
    cortex(repo.path, "doctor")
    assert digest(tree(repo.path)) == digest(before)
    assert not Path(describe_store(repo.path).path).exists()
    assert not (repo.path / ".cortex").exists()


def test_hooks_dir_option_inspects_that_directory(started: Engine, repo: Repo, tmp_path: Path) -> None:
    empty = tmp_path / "other-hooks"
    empty.mkdir()
    run = cortex(repo.path, "doctor", "--hooks-dir", str(empty), "--json")
    assert run.code == 1
    check = next(c for c in run.data()["checks"] if c["name"] == "hook-scripts")
    assert check["status"] == "fail" and str(empty / "cortex-capture.sh") in check["detail"]
    assert run.data()["hooks_dir"] == str(empty)


def test_install_doctor_and_gc_load_no_heavy_modules() -> None:
    """The adapters other than `serve` stay standard-library only (mcp is imported by serve alone)."""
    code = (
        "import sys, cortex_engine.ops.install, cortex_engine.ops.doctor, "
        "cortex_engine.capture.gc, cortex_engine.ops.wiring; "
        "print(' '.join(m for m in ('mcp', 'textual', 'rich', 'pydantic', 'watchdog') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


# -- the substitution index, the digest index, subagent sessions, the memory guard ----------------


def test_substitution_on_without_a_readable_index_warns(started: Engine, repo: Repo) -> None:
    """Substitution switched on but the index is missing, then half garbage: each is a warning with its fix."""
    started.substitution("on")
    index = repo.path / ".cortex" / "index"
    index.unlink(missing_ok=True)
    assert statuses(repo.path)["substitution"][0] == "warn"
    index.write_text(f"/abs/a.py\t{'a' * 64}\t12\tclaude-1\nnot a line\n")
    checks = statuses(repo.path)
    assert checks["digest-index"] == (
        "warn",
        "1 of 2 lines of " + str(index).replace(str(Path.home()), "~") + " do not parse; substitution skips them",
    )
    assert checks["substitution"] == ("pass", "on; 1 read can be answered from the index")


def test_subagent_sessions_left_open_and_guard_refusals_are_reported(started: Engine, repo: Repo) -> None:
    """A child session still open after its parent ended warns; refusals by the memory guard are counted."""
    primary = started.current_session()["id"]
    started.conn.execute(
        "INSERT INTO sessions(id, parent_session_id, started_at, agent_type, agent_id, status, scope_type, scope_key) "
        "VALUES ('child-1', ?, ?, 'Explore', 'agent-1', 'active', 'branch', ?)",
        (primary, started.now(), started.scope.key),
    )
    assert statuses(repo.path)["subagent-sessions"][0] == "pass"
    started.conn.execute("UPDATE sessions SET status='ended' WHERE id=?", (primary,))
    started.book_text("memory_guard_deny", "Cortex refused this", "child-1")
    checks = statuses(repo.path)
    assert checks["subagent-sessions"][0] == "warn" and "1 subagent session left open" in checks["subagent-sessions"][1]
    assert checks["memory-guard"][0] == "pass" and checks["memory-guard"][1].startswith("1 subagent call refused")


def test_briefs_that_never_pair_warn(started: Engine, repo: Repo) -> None:
    """Three dispatches captured and no subagent briefed: the SubagentStart side is not reaching Cortex."""
    started.conn.execute("INSERT INTO counters(key, value) VALUES ('subagent_dispatch_count', 3)")
    check = statuses(repo.path)["subagent-sessions"]
    assert check[0] == "warn" and "no subagent was ever briefed" in check[1]
