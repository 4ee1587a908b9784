"""`cortex install` against temporary homes and projects, through the real command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cortex_engine.engine import Engine
from cortex_engine.ops import wiring
from cortex_engine.ops.wiring import WIRINGS

from .conftest import Repo
from .install_helpers import backup_of, commands, cortex, digest, settings, tree

CAPTURE = "Read|Edit|Write|MultiEdit|NotebookEdit|Bash|Grep|Agent"


@pytest.fixture
def home(isolated_home: Path) -> Path:
    """The temp HOME of this test."""
    return isolated_home


def hooks(home: Path) -> Path:
    return home / ".claude" / "hooks"


def expected_script(name: str, bin_path: Path) -> str:
    return wiring.render(wiring.template_text(name), str(bin_path))


def test_fresh_install_writes_scripts_wiring_and_mcp(repo: Repo, home: Path, bin_path: Path) -> None:
    """Scripts rendered with the stamp and the cortex path, 10 wirings, the MCP server, then doctor (exit 0)."""
    run = cortex(repo.path, "install", bin_path=bin_path)
    assert run.code == 0, run.out + run.err
    assert "Install complete." in run.out
    assert (
        "Cortex doctor — " in run.out
        and "The installation itself is complete: nothing to fix, so this exits 0." in run.out
    )
    for name in wiring.TEMPLATES:
        path = hooks(home) / name
        body = path.read_text(encoding="utf-8")
        assert (name, body) == (name, expected_script(name, bin_path))
        assert f"# cortex-hook-template: {wiring.template_digest(wiring.template_text(name))}\n" in body
        assert "__CORTEX_" not in body and "\r" not in body
        assert (path.stat().st_mode & 0o777) == 0o755
    assert f'CORTEX_BIN="${{CORTEX_BIN:-{bin_path}}}"' in (hooks(home) / "cortex-capture.sh").read_text()
    data = settings(home / ".claude" / "settings.json")
    assert commands(data, "SessionStart") == [(None, f'"{bin_path}" inject-header --quiet')]
    assert commands(data, "PostToolUse") == [(CAPTURE, f'bash "{hooks(home)}/cortex-capture.sh"')]
    assert commands(data, "PostToolUseFailure") == [(CAPTURE, f'bash "{hooks(home)}/cortex-capture.sh"')]
    assert commands(data, "PreToolUse") == [
        ("Edit|Write|MultiEdit", f'bash "{hooks(home)}/cortex-reflect.sh" reflect-pre'),
        ("Read", f'bash "{hooks(home)}/cortex-substitute.sh"'),
        ("Agent", f'bash "{hooks(home)}/cortex-subagent.sh" dispatch-pre'),
        (
            "mcp__cortex__cortex_note|mcp__cortex__cortex_resolve|mcp__cortex__cortex_reanchor|Bash",
            f'bash "{hooks(home)}/cortex-subagent.sh" guard-memory',
        ),
    ]
    assert commands(data, "Stop") == [(None, f'bash "{hooks(home)}/cortex-end-of-turn.sh"')]
    assert sum(len(commands(data, e)) for e in data["hooks"]) == len(WIRINGS) == 11
    assert settings(home / ".claude.json") == {"mcpServers": {"cortex": {"command": str(bin_path), "args": ["serve"]}}}
    assert not (repo.path / ".gitignore").exists()
    assert list(home.rglob("*.bak")) == []


def test_second_run_is_byte_identical_and_says_nothing_changed(repo: Repo, home: Path, bin_path: Path) -> None:
    """Re-running changes no byte, mode or mtime, writes no backup, and says so."""
    assert cortex(repo.path, "install", bin_path=bin_path).code == 0
    before = tree(home, repo.path)
    run = cortex(repo.path, "install", bin_path=bin_path)
    assert run.code == 0
    assert "Nothing changed — this installation is already current." in run.out
    assert digest(tree(home, repo.path)) == digest(before)


def test_edited_script_is_refused_then_replaced_with_force(repo: Repo, home: Path, bin_path: Path) -> None:
    """An edited script (current stamp) is refused and named; --force replaces it and keeps it under Cortex's home."""
    assert cortex(repo.path, "install", bin_path=bin_path).code == 0
    script = hooks(home) / "cortex-capture.sh"
    edited = script.read_text() + "echo my tweak >&2\n"
    script.write_text(edited)
    run = cortex(repo.path, "install", bin_path=bin_path)
    assert run.code == 1
    assert "STOP   hook:cortex-capture.sh" in run.out and "--force" in run.out
    assert "1 action(s) refused (hook:cortex-capture.sh)" in run.out
    assert script.read_text() == edited
    assert not backup_of(script).exists()
    forced = cortex(repo.path, "install", "--force", bin_path=bin_path)
    assert forced.code == 0, forced.out
    assert script.read_text() == expected_script("cortex-capture.sh", bin_path)
    assert backup_of(script).read_text() == edited


def test_other_builds_script_is_replaced_with_a_backup(repo: Repo, home: Path, bin_path: Path) -> None:
    """A script whose stamp is not this build's (or that has none) is backed up and replaced, not refused."""
    hooks(home).mkdir(parents=True)
    old = "#!/usr/bin/env bash\n# cortex-hook-template: 0123456789abcdef\nexit 0\n"
    (hooks(home) / "cortex-reflect.sh").write_text(old)
    (hooks(home) / "cortex-subagent.sh").write_text("#!/bin/sh\nexit 0\n")
    run = cortex(repo.path, "install", bin_path=bin_path)
    assert run.code == 0, run.out
    assert "stamp 0123456789abcdef" in run.out and "no stamp" in run.out
    assert backup_of(hooks(home) / "cortex-reflect.sh").read_text() == old
    assert (hooks(home) / "cortex-reflect.sh").read_text() == expected_script("cortex-reflect.sh", bin_path)


def test_moved_cortex_rewrites_scripts_and_repairs_the_session_start_command(
    repo: Repo, home: Path, bin_path: Path, tmp_path: Path
) -> None:
    """Only the baked path changed: scripts are updated (not refused) and the wiring's command follows."""
    assert cortex(repo.path, "install", bin_path=bin_path).code == 0
    moved = tmp_path / "elsewhere" / "cortex"
    moved.parent.mkdir()
    shutil.copy2(bin_path, moved)
    run = cortex(repo.path, "install", bin_path=moved)
    assert run.code == 0, run.out
    assert "paths changed" in run.out
    assert (hooks(home) / "cortex-capture.sh").read_text() == expected_script("cortex-capture.sh", moved)
    assert str(bin_path) in backup_of(hooks(home) / "cortex-capture.sh").read_text()
    data = settings(home / ".claude" / "settings.json")
    assert commands(data, "SessionStart") == [(None, f'"{moved}" inject-header --quiet')]
    assert settings(home / ".claude.json")["mcpServers"]["cortex"]["command"] == str(bin_path)  # left alone


def test_unparseable_settings_are_refused_and_untouched(repo: Repo, home: Path, bin_path: Path) -> None:
    """A settings file that does not parse is never clobbered; the run exits 1 and names it."""
    target = home / ".claude" / "settings.json"
    target.parent.mkdir(parents=True)
    target.write_bytes(b'{"hooks": {,}\n')
    run = cortex(repo.path, "install", bin_path=bin_path)
    assert run.code == 1
    assert "STOP   settings" in run.out and "not valid JSON" in run.out
    assert target.read_bytes() == b'{"hooks": {,}\n'
    assert not backup_of(target).exists()
    assert (hooks(home) / "cortex-capture.sh").is_file()


def test_settings_of_the_wrong_shape_are_refused(repo: Repo, home: Path, bin_path: Path) -> None:
    """`hooks` that is not an object is refused the same way (Claude Code could not read our wiring in it)."""
    target = home / ".claude" / "settings.json"
    target.parent.mkdir(parents=True)
    target.write_text('{"hooks": ["nope"]}\n')
    run = cortex(repo.path, "install", bin_path=bin_path)
    assert run.code == 1
    assert '"hooks" is not a JSON object' in run.out
    assert target.read_text() == '{"hooks": ["nope"]}\n'


def test_project_scope_writes_project_settings_and_mcp_json(repo: Repo, home: Path, bin_path: Path) -> None:
    """--scope project: <project>/.claude/settings.json and <project>/.mcp.json; nothing in the user's files.
    Everything it writes is portable: no path of this machine, `cortex` found through PATH."""
    sub = repo.path / "src"
    sub.mkdir()
    run = cortex(sub, "install", "--scope", "project", bin_path=bin_path)
    assert run.code == 0, run.out
    data = settings(repo.path / ".claude" / "settings.json")
    assert sum(len(commands(data, e)) for e in data["hooks"]) == 11
    assert settings(repo.path / ".mcp.json") == {"mcpServers": {"cortex": {"command": "cortex", "args": ["serve"]}}}
    written = [
        repo.path / ".claude" / "settings.json",
        repo.path / ".mcp.json",
        *sorted((repo.path / ".claude" / "hooks").iterdir()),
    ]
    assert len(written) == 2 + len(wiring.TEMPLATES)
    for path in written:
        text = path.read_text()
        assert str(repo.path.parent) not in text and str(bin_path) not in text, path
    assert (None, 'bash "$CLAUDE_PROJECT_DIR/.claude/hooks/cortex-end-of-turn.sh"') in commands(data, "Stop")
    assert not (home / ".claude" / "hooks").exists()
    assert not (home / ".claude" / "settings.json").exists()
    assert not (home / ".claude.json").exists()
    again = cortex(sub, "install", "--scope", "project", bin_path=bin_path)
    assert "Nothing changed" in again.out


def test_unknown_scope_is_rejected(repo: Repo, home: Path, bin_path: Path) -> None:
    """An unrecognised scope is an error (exit 1), not silently `user`; nothing is written."""
    run = cortex(repo.path, "install", "--scope", "global", bin_path=bin_path)
    assert run.code == 1
    assert run.err.startswith("cortex: unknown --scope 'global'")
    assert tree(home) == {}


def test_dry_run_writes_nothing_and_runs_no_doctor(repo: Repo, home: Path, bin_path: Path) -> None:
    """--dry-run reports every outcome in the conditional (it printed `WROTE settings` while writing nothing), writes
    nothing, and has nothing to diagnose."""
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"theme": "dark"}\n')
    before = tree(home, repo.path)
    run = cortex(repo.path, "install", "--dry-run", bin_path=bin_path)
    assert run.code == 0
    assert "WOULD CREATE  hook:cortex-capture.sh" in run.out and "Re-run without --dry-run to apply." in run.out
    assert "WOULD WRITE   settings" in run.out and "WROTE" not in run.out and "NEW " not in run.out
    assert "Cortex doctor" not in run.out
    as_json = cortex(repo.path, "install", "--dry-run", "--json", bin_path=bin_path).data()
    assert as_json["dry_run"] is True and as_json["diagnostic"] is None
    assert {a["name"]: a["status"] for a in as_json["actions"]}["settings"] == "updated"
    assert {a["status"] for a in as_json["actions"]} == {"created", "updated"}
    assert digest(tree(home, repo.path)) == digest(before)


def test_json_result_embeds_the_diagnostic(repo: Repo, home: Path, bin_path: Path) -> None:
    """--json carries every action and doctor's report, so a script sees why a run exited as it did."""
    data = cortex(repo.path, "install", "--json", bin_path=bin_path).data()
    assert [a["name"] for a in data["actions"]] == [*(f"hook:{n}" for n in wiring.TEMPLATES), "settings", "mcp"]
    assert data["diagnostic"]["fresh_project"] is True
    failing = {c["name"] for c in data["diagnostic"]["checks"] if c["status"] == "note"}
    assert failing == {"database", "engagement"}
    assert data["exit_code"] == 0


def test_drifted_matcher_and_command_are_repaired_in_place(repo: Repo, home: Path, bin_path: Path) -> None:
    """A matcher that lost tools and a command naming a cortex that moved are rewritten, not duplicated."""
    assert cortex(repo.path, "install", bin_path=bin_path).code == 0
    target = home / ".claude" / "settings.json"
    data = settings(target)
    data["hooks"]["PostToolUse"][0]["matcher"] = "Read|Edit|Write"
    data["hooks"]["SessionStart"][0]["hooks"][0]["command"] = '"/old/place/cortex" inject-header --quiet'
    data["hooks"]["PostToolUse"].append({"matcher": "Write", "hooks": [{"type": "command", "command": "my-formatter"}]})
    data["theme"] = "dark"
    target.write_text(json.dumps(data))
    run = cortex(repo.path, "install", bin_path=bin_path)
    assert run.code == 0, run.out
    assert "repaired the matcher of PostToolUse cortex-capture.sh" in run.out
    assert "repaired the command of SessionStart inject-header" in run.out
    fixed = settings(target)
    assert commands(fixed, "PostToolUse") == [
        (CAPTURE, f'bash "{hooks(home)}/cortex-capture.sh"'),
        ("Write", "my-formatter"),
    ]
    assert commands(fixed, "SessionStart") == [(None, f'"{bin_path}" inject-header --quiet')]
    assert fixed["theme"] == "dark"
    assert settings(backup_of(target))["hooks"]["PostToolUse"][0]["matcher"] == "Read|Edit|Write"


def test_a_shared_group_keeps_its_matcher_and_ours_moves_out(repo: Repo, home: Path, bin_path: Path) -> None:
    """When our hook shares a group with the user's, widening the matcher would change theirs: ours moves out."""
    target = home / ".claude" / "settings.json"
    target.parent.mkdir(parents=True)
    shared = {
        "matcher": "Read",
        "hooks": [
            {"type": "command", "command": "audit-reads"},
            {"type": "command", "command": f'bash "{hooks(home)}/cortex-capture.sh"'},
        ],
    }
    target.write_text(json.dumps({"hooks": {"PostToolUse": [shared]}}))
    assert cortex(repo.path, "install", bin_path=bin_path).code == 0
    assert commands(settings(target), "PostToolUse") == [
        ("Read", "audit-reads"),
        (CAPTURE, f'bash "{hooks(home)}/cortex-capture.sh"'),
    ]


def test_wiring_another_settings_file_provides_is_not_duplicated(repo: Repo, home: Path, bin_path: Path) -> None:
    """The project's settings already run the Stop hook: the user-scope install does not add a second one."""
    project_settings = repo.path / ".claude" / "settings.local.json"
    project_settings.parent.mkdir()
    project_settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [{"hooks": [{"type": "command", "command": 'bash "/opt/hooks/cortex-end-of-turn.sh"'}]}]
                }
            }
        )
    )
    run = cortex(repo.path, "install", bin_path=bin_path)
    assert "already wired in another settings file: Stop cortex-end-of-turn.sh" in run.out
    data = settings(home / ".claude" / "settings.json")
    assert "Stop" not in data["hooks"]
    assert sum(len(commands(data, e)) for e in data["hooks"]) == 10
    assert project_settings.read_text().startswith('{"hooks": {"Stop"')


@pytest.mark.parametrize("bad", ["$HOME", "`id`", "back\\slash"])
def test_hooks_dir_the_shell_would_expand_is_refused(
    repo: Repo, home: Path, bin_path: Path, tmp_path: Path, bad: str
) -> None:
    """$, a backtick or a backslash in the hooks directory is refused before anything is written."""
    run = cortex(repo.path, "install", "--dir", str(tmp_path / f"hooks-{bad}"), bin_path=bin_path)
    assert run.code == 1
    assert "refusing hooks directory" in run.err and "spaces are fine" in run.err
    assert tree(home) == {}
    assert not any(p.name.startswith("hooks-") for p in tmp_path.iterdir())


def test_hooks_dir_with_spaces_works(repo: Repo, home: Path, bin_path: Path, tmp_path: Path) -> None:
    """Spaces are fine: the wiring quotes the path."""
    target = tmp_path / "my hooks"
    run = cortex(repo.path, "install", "--dir", str(target), bin_path=bin_path)
    assert run.code == 0, run.out
    assert commands(settings(home / ".claude" / "settings.json"), "Stop") == [
        (None, f'bash "{target}/cortex-end-of-turn.sh"')
    ]


def test_existing_mcp_registration_is_left_alone(repo: Repo, home: Path, bin_path: Path) -> None:
    """A `cortex` server already registered (maybe a preferred checkout) is not touched, nor its file."""
    claude_json = home / ".claude.json"
    original = json.dumps(
        {"numStartups": 3, "mcpServers": {"cortex": {"command": "/src/cortex/bin/cortex", "args": ["serve"]}}}
    )
    claude_json.write_text(original)
    run = cortex(repo.path, "install", bin_path=bin_path)
    assert "a cortex server is already registered in ~/.claude.json; left as it is" in run.out
    assert claude_json.read_text() == original


def test_user_scope_keeps_other_keys_of_claude_json(repo: Repo, home: Path, bin_path: Path) -> None:
    """Registering in ~/.claude.json keeps everything else in it and backs the old file up."""
    claude_json = home / ".claude.json"
    claude_json.write_text(json.dumps({"numStartups": 3, "mcpServers": {"other": {"command": "x"}}}))
    assert cortex(repo.path, "install", bin_path=bin_path).code == 0
    data = settings(claude_json)
    assert data["numStartups"] == 3 and set(data["mcpServers"]) == {"other", "cortex"}
    assert settings(backup_of(claude_json)) == {
        "numStartups": 3,
        "mcpServers": {"other": {"command": "x"}},
    }


def test_the_installed_capture_hook_captures(
    repo: Repo, home: Path, bin_path: Path, tmp_path: Path, make_engine
) -> None:
    """The script install wrote, run under bash without jq, lands a Read in the store."""
    assert cortex(repo.path, "install", bin_path=bin_path).code == 0
    engine: Engine = make_engine(repo.path)
    engine.start_session("host-1")
    path_dir = tmp_path / "nojq"
    path_dir.mkdir()
    for tool in ("cat", "tr", "du", "mkdir", "date", "nohup"):
        (path_dir / tool).symlink_to(shutil.which(tool))
    payload = {
        "session_id": "host-1",
        "cwd": str(repo.path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_use_id": "toolu_1",
        "tool_input": {"file_path": str(repo.path / "README.md")},
        "tool_response": {
            "type": "text",
            "file": {
                "filePath": str(repo.path / "README.md"),
                "content": "# test\n",
                "numLines": 1,
                "startLine": 1,
                "totalLines": 1,
            },
        },
    }
    done = subprocess.run(
        [shutil.which("bash") or "/bin/bash", str(hooks(home) / "cortex-capture.sh")],
        input=json.dumps(payload).encode(),
        env={"PATH": str(path_dir), "HOME": os.environ["HOME"]},
        capture_output=True,
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert engine.flush_spool().processed == 1
    [verdict] = engine.read_ledger(["README.md"])
    assert verdict.verdict == "unchanged-since"


def test_project_scope_beside_a_user_install_is_whole_and_captures_once(
    repo: Repo,
    home: Path,
    bin_path: Path,
    tmp_path: Path,
) -> None:
    """With the user-scope install already there, `--scope project` still writes the whole team
    set-up (settings with every wiring, `.mcp.json`). When Claude Code runs the hooks of both settings files, the
    user's copies stand down for the project's: one session start, one capture line per tool call. In a project
    without its own wiring the user's hooks still capture."""
    from .conftest import HOOK_TOOLS, tool_path

    assert cortex(repo.path, "install", bin_path=bin_path).code == 0
    on_path = {"PATH": f"{bin_path.parent}{os.pathsep}{os.environ['PATH']}"}
    run = cortex(repo.path, "install", "--scope", "project", bin_path=bin_path, env=on_path)
    assert run.code == 0 and "already wired in another settings file" not in run.out, run.out
    project = settings(repo.path / ".claude" / "settings.json")
    assert sum(len(commands(project, e)) for e in project["hooks"]) == len(WIRINGS)
    assert settings(repo.path / ".mcp.json") == {"mcpServers": {"cortex": {"command": "cortex", "args": ["serve"]}}}
    assert commands(project, "SessionStart") == [
        (None, "cortex inject-header --quiet --from-project 2>/dev/null || true")
    ]
    user = settings(home / ".claude" / "settings.json")

    tools = Path(tool_path(tmp_path / "tools", (*HOOK_TOOLS, "sh", "bash", "git")))
    shutil.copy(bin_path, tools / "cortex")
    env = {
        "PATH": str(tools),
        "HOME": str(home),
        "CORTEX_HOME": os.environ["CORTEX_HOME"],
        "CLAUDE_PROJECT_DIR": str(repo.path),
        "CORTEX_NOW": "2026-08-02T18:00:00Z",
    }
    assert cortex(repo.path, "note", "--kind", "decision", "--subject", "queue", "use kafka for the queue").code == 0

    def fire(files: list[dict], event: str, payload: dict) -> list[str]:
        """Every command of `event` from the given settings, as Claude Code runs them; their stdout."""
        body = json.dumps({"session_id": "s-1", "cwd": str(repo.path), "hook_event_name": event, **payload})
        outs = []
        for data in files:
            for _, command in commands(data, event):
                done = subprocess.run(
                    ["sh", "-c", command],
                    input=body,
                    text=True,
                    capture_output=True,
                    env=env,
                    cwd=repo.path,
                    timeout=60,
                )
                assert done.returncode == 0, (command, done.stderr)
                outs.append(done.stdout)
        return outs

    read = {
        "tool_name": "Read",
        "tool_use_id": "t-1",
        "tool_input": {"file_path": str(repo.path / "README.md")},
        "tool_response": {"type": "text"},
    }
    started = fire([project, user], "SessionStart", {"source": "startup"})
    assert len(started) == 2 and sum(1 for out in started if "use kafka" in out) == 1
    fire([project, user], "PostToolUse", read)
    spool = repo.path / ".cortex" / "spool.jsonl"
    assert len(spool.read_text().splitlines()) == 1

    # The same user-scope hooks in a project that does not wire Cortex itself: they capture. Claude Code reads its
    # hooks when a session starts, and so does the stand-down rule: the next session is the one that changes.
    (repo.path / ".claude" / "settings.json").unlink()
    fire([user], "SessionStart", {"source": "startup"})
    fire([user], "PostToolUse", {**read, "tool_use_id": "t-2"})
    assert [line for line in spool.read_text().splitlines() if '"t-2"' in line] != []  # (the start flushed t-1)


def test_a_cortex_from_a_checkouts_venv_is_named_before_it_is_baked_into_every_project(
    repo: Repo,
    home: Path,
    bin_path: Path,
    tmp_path: Path,
) -> None:
    """`cortex install` run from a repository's own virtual environment (a newcomer after `pip install -e .`
    and `cortex demo`) says that every project's hooks would depend on that environment and how to avoid it; the
    operator view in the demo repository names no install at all."""
    from cortex_engine.ops.demo import MARKER
    from cortex_engine.ops.presence import DEMO_FIX, hooks_installed

    venv = repo.path / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    baked = venv / "bin" / "cortex"
    shutil.copy(bin_path, baked)
    run = cortex(repo.path, "install", bin_path=baked)
    assert "NOTE   cortex" in run.out and "pipx install" in run.out and str(venv) in run.out.replace("\n", "")
    assert cortex(repo.path, "install", "--dry-run", bin_path=bin_path).out.count("NOTE") == 0

    demo = tmp_path / "demo-service"
    demo.mkdir()
    (demo / MARKER).write_text("created by `cortex demo`\n")
    seen = hooks_installed(str(demo), tmp_path / "nobody")
    assert not seen.installed and seen.fix == DEMO_FIX and "cortex install" not in seen.fix
    assert hooks_installed(str(repo.path), tmp_path / "nobody").fix == "cortex install"
