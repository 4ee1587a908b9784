"""The Claude Code plugin and its marketplace entry: the four files validate against schemas written
from Claude Code's plugin reference, they are what `cortex_engine.ops.plugin` generates from the install tables,
every hook runs exactly as the plugin declares it against real payloads, and install/doctor recognise a user
who has the plugin."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from cortex_engine.ops import plugin, wiring

from .conftest import HOOK_TOOLS, Repo, tool_path
from .install_helpers import NOW, ROOT, cortex, cortex_bin

SCHEMAS = Path(__file__).resolve().parent / "schemas"
FILES = {
    "plugin.schema.json": ROOT / "plugin" / ".claude-plugin" / "plugin.json",
    "hooks.schema.json": ROOT / "plugin" / "hooks" / "hooks.json",
    "mcp.schema.json": ROOT / "plugin" / ".mcp.json",
    "marketplace.schema.json": ROOT / ".claude-plugin" / "marketplace.json",
}


@pytest.mark.parametrize("schema_name", sorted(FILES))
def test_plugin_files_validate_against_their_schema(schema_name: str) -> None:
    """Each shipped file is valid under the schema for its kind (and the schema itself is valid)."""
    schema = json.loads((SCHEMAS / schema_name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(json.loads(FILES[schema_name].read_text()))


def test_schemas_reject_what_claude_code_would_not_load() -> None:
    """The schemas can fail: a hook without a command, a manifest without a name, a source outside ./."""

    def invalid(name: str, doc: dict) -> bool:
        return not jsonschema.Draft202012Validator(json.loads((SCHEMAS / name).read_text())).is_valid(doc)

    assert invalid("hooks.schema.json", {"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}})
    assert invalid("hooks.schema.json", {"hooks": {"OnSave": [{"hooks": [{"type": "command", "command": "x"}]}]}})
    assert invalid("plugin.schema.json", {"version": "0.1.0"})
    assert invalid(
        "marketplace.schema.json", {"name": "m", "owner": {"name": "o"}, "plugins": [{"name": "p", "source": "plugin"}]}
    )
    assert invalid("mcp.schema.json", {"mcpServers": {"cortex": {"args": ["serve"]}}})


def test_committed_plugin_is_what_the_install_tables_generate() -> None:
    """No drift: the plugin's hooks, scripts and server are generated from WIRINGS and the templates
    (regenerate with `python -m cortex_engine.ops.plugin`)."""
    for rel, data in plugin.plugin_files().items():
        assert (ROOT / rel).read_bytes() == data, f"{rel} is stale: run python -m cortex_engine.ops.plugin"
    keys = {(event, key) for event, key, _ in _declared()}
    assert keys == {(w.event, w.key) for w in plugin.PLUGIN_WIRINGS}
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    entry = marketplace["plugins"][0]
    assert (ROOT / entry["source"] / ".claude-plugin" / "plugin.json").is_file()
    assert entry["name"] == json.loads(FILES["plugin.schema.json"].read_text())["name"]


def test_guard_matcher_selects_the_plugin_tool_names() -> None:
    """Plugin MCP tools are named mcp__plugin_<plugin>_<server>__<tool>: the guard still selects them."""
    for tool in ("mcp__plugin_cortex_cortex__cortex_note", "mcp__cortex__cortex_resolve", "Bash"):
        assert re.fullmatch(plugin.GUARD_MATCHER, tool)
    assert not re.fullmatch(plugin.GUARD_MATCHER, "mcp__plugin_cortex_cortex__cortex_recall")


# -- every hook as declared ------------------------------------------------------------------------


PAYLOADS = {
    ("SessionStart", "inject-header"): {"source": "startup"},
    ("PostToolUse", "cortex-capture.sh"): {
        "tool_name": "Read",
        "tool_use_id": "toolu_1",
        "tool_input": {"file_path": "{repo}/src/api.py"},
        "tool_response": {"type": "text", "file": {"filePath": "{repo}/src/api.py", "content": "x\n"}},
    },
    ("PostToolUseFailure", "cortex-capture.sh"): {
        "tool_name": "Bash",
        "tool_use_id": "toolu_2",
        "tool_input": {"command": "python -m pytest"},
        "error": "Command exited with non-zero status code 1",
    },
    ("PreToolUse", "cortex-reflect.sh reflect-pre"): {
        "tool_name": "Edit",
        "tool_input": {"file_path": "{repo}/src/api.py"},
    },
    ("PreToolUse", "cortex-substitute.sh"): {
        "tool_name": "Read",
        "tool_use_id": "toolu_3",
        "tool_input": {"file_path": "{repo}/src/api.py"},
    },
    ("PreToolUse", "cortex-subagent.sh dispatch-pre"): {
        "tool_name": "Agent",
        "tool_use_id": "toolu_4",
        "tool_input": {
            "description": "review the api serving",
            "subagent_type": "general-purpose",
            "prompt": "review the api serving plan",
        },
    },
    ("SubagentStart", "cortex-subagent.sh subagent-start"): {"agent_id": "agent-7", "agent_type": "general-purpose"},
    ("PreToolUse", "cortex-subagent.sh guard-memory"): {
        "tool_name": "mcp__plugin_cortex_cortex__cortex_note",
        "agent_id": "agent-7",
        "tool_input": {"kind": "decision", "subject": "api serving", "content": "serve it elsewhere"},
    },
    ("SubagentStop", "cortex-subagent.sh subagent-stop"): {
        "agent_id": "agent-7",
        "agent_type": "general-purpose",
        "last_assistant_message": "The plan holds.",
    },
    ("PreToolUse", "cortex-guard.sh"): {"tool_name": "Bash", "tool_input": {"command": "git status"}},
    ("UserPromptSubmit", "cortex-reflect.sh reflect-prompt"): {"prompt": "why do we serve the api behind the gateway?"},
    ("Stop", "cortex-end-of-turn.sh"): {"stop_hook_active": False},
}


def _declared() -> list[tuple[str, str, str]]:
    """(event, wiring key, command) in the order the plugin declares them."""
    data = json.loads((ROOT / "plugin" / "hooks" / "hooks.json").read_text())
    # The guard is the plugin's own hook (not one `cortex install` wires): named by its script.
    return [
        (event, key or (plugin.GUARD_SCRIPT if plugin.GUARD_SCRIPT in command else ""), command)
        for event, _, command, key in wiring.hook_entries(data)
    ]


def _run(command: str, event: str, fields: dict, repo: Repo, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run one declared command through the shell, as Claude Code does, with its payload on stdin."""
    body = json.loads(json.dumps(fields).replace("{repo}", str(repo.path)))
    payload = {
        "session_id": "claude-1",
        "transcript_path": "/dev/null",
        "cwd": str(repo.path),
        "hook_event_name": event,
        **body,
    }
    return subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(payload),
        text=True,
        capture_output=True,
        env=env,
        timeout=60,
        cwd=repo.path,
    )


def _env(tmp_path: Path, *, with_cortex: bool) -> dict[str, str]:
    tools = tool_path(tmp_path / ("tools-c" if with_cortex else "tools"), (*HOOK_TOOLS, "sh", "bash", "git"))
    if with_cortex:
        shutil.copy(cortex_bin(tmp_path), Path(tools) / "cortex")
    return {
        "PATH": tools,
        "HOME": os.environ["HOME"],
        "CORTEX_HOME": os.environ["CORTEX_HOME"],
        "CORTEX_NOW": NOW,
        "PYTHONPATH": str(ROOT),
        "CLAUDE_PLUGIN_ROOT": str(ROOT / "plugin"),
        "CLAUDE_PROJECT_DIR": "/nonexistent",
    }


def test_every_plugin_hook_runs_as_declared_against_real_payloads(repo: Repo, tmp_path: Path) -> None:
    """With only `cortex` on PATH and CLAUDE_PLUGIN_ROOT set, each declared command exits 0 and does its work:
    SessionStart engages, capture spools, subagent-start briefs, Stop flushes the spool into the store."""
    repo.write("src/api.py", "x\n")
    repo.commit("api")
    env = _env(tmp_path, with_cortex=True)
    declared = _declared()
    assert {(e, k) for e, k, _ in declared} == set(PAYLOADS)
    assert (
        cortex(
            repo.path, "note", "--kind", "decision", "--subject", "api serving", "serve the api behind the gateway"
        ).code
        == 0
    )
    outputs: dict[tuple[str, str], str] = {}
    for event, key in PAYLOADS:  # a session's order: start, tools, subagent, prompt, stop
        command = next(c for e, k, c in declared if (e, k) == (event, key))
        assert "${CLAUDE_PLUGIN_ROOT}" in command or key == "inject-header"
        done = _run(command, event, PAYLOADS[(event, key)], repo, env)
        assert done.returncode == 0 and done.stderr == "", (key, done.stderr)
        outputs[(event, key)] = done.stdout
        if key == "cortex-capture.sh":
            assert (repo.path / ".cortex" / "spool.jsonl").stat().st_size > 0
    assert (repo.path / ".cortex" / "engaged").is_file()
    brief = json.loads(outputs[("SubagentStart", "cortex-subagent.sh subagent-start")])
    assert "serve the api behind the gateway" in brief["hookSpecificOutput"]["additionalContext"]
    events = cortex(repo.path, "stats", "--json")
    assert events.code == 0
    assert (
        not (repo.path / ".cortex" / "spool.jsonl").exists()
        or (repo.path / ".cortex" / "spool.jsonl").stat().st_size == 0
    )


def test_plugin_hooks_without_cortex_on_path_do_nothing_and_exit_zero(repo: Repo, tmp_path: Path) -> None:
    """A teammate without `cortex` installed: every hook, SessionStart's included, exits 0 silently (never
    blocks the agent; doctor is where they learn what is missing)."""
    (repo.path / ".cortex").mkdir()
    (repo.path / ".cortex" / "engaged").write_text("")
    env = _env(tmp_path, with_cortex=False)
    ran = 0
    for event, key, command in _declared():
        done = _run(command, event, PAYLOADS[(event, key)], repo, env)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), key
        ran += 1
    assert ran == len(plugin.PLUGIN_WIRINGS)


# -- a user who has the plugin ----------------------------------------------------------------------


def _enable_plugin(home: Path) -> Path:
    """What `/plugin install cortex@cortex-memory` leaves behind: the plugin copied into Claude Code's cache,
    recorded in installed_plugins.json, and enabled in ~/.claude/settings.json."""
    key = f"{plugin.PLUGIN_NAME}@{plugin.MARKETPLACE_NAME}"
    target = home / ".claude" / "plugins" / "cache" / plugin.MARKETPLACE_NAME / plugin.PLUGIN_NAME / plugin.VERSION
    shutil.copytree(ROOT / "plugin", target)
    (home / ".claude" / "plugins" / "installed_plugins.json").write_text(
        json.dumps(
            {"version": 2, "plugins": {key: [{"scope": "user", "installPath": str(target), "version": plugin.VERSION}]}}
        )
    )
    settings = home / ".claude" / "settings.json"
    settings.write_text(json.dumps({"enabledPlugins": {key: True}}))
    return target


def test_doctor_recognises_a_plugin_setup_and_install_does_not_double_wire(
    repo: Repo,
    isolated_home: Path,
    tmp_path: Path,
) -> None:
    """Plugin enabled, `cortex` on PATH: doctor passes everything but the fresh-project pair; install adds no
    wiring and no server; a settings-file installation beside the plugin is reported as wired twice."""
    _enable_plugin(isolated_home)
    bin_path = cortex_bin(tmp_path)
    env = {"PATH": f"{bin_path.parent}{os.pathsep}{os.environ['PATH']}"}
    report = cortex(repo.path, "doctor", "--json", env=env).data()
    failing = {c["name"] for c in report["checks"] if c["status"] != "pass"}
    assert failing == {"database", "engagement"} and report["exit_code"] == 0
    assert next(c for c in report["checks"] if c["name"] == "plugin")["status"] == "pass"
    guard = next(c for c in report["checks"] if c["name"] == "guard-matcher")
    plugin_hooks = json.loads((ROOT / "plugin" / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    used = next(m["matcher"] for m in plugin_hooks["PreToolUse"] if "guard-memory" in m["hooks"][0]["command"])
    assert guard["detail"] == f"PreToolUse select {used}"  # what the plugin wires, not what `cortex install` writes

    before = (isolated_home / ".claude" / "settings.json").read_bytes()
    installed = cortex(repo.path, "install", "--json", bin_path=bin_path, env=env).data()
    assert [a["name"] for a in installed["actions"]] == ["plugin"]
    assert (isolated_home / ".claude" / "settings.json").read_bytes() == before
    assert not (isolated_home / ".claude.json").exists() and not (isolated_home / ".claude" / "hooks").exists()

    settings = isolated_home / ".claude" / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": f'bash "{isolated_home}/.claude/hooks/cortex-end-of-turn.sh"',
                                }
                            ]
                        }
                    ]
                }
            }
        )
    )
    (repo.path / ".claude").mkdir()
    (repo.path / ".claude" / "settings.local.json").write_text(
        json.dumps({"enabledPlugins": {f"{plugin.PLUGIN_NAME}@{plugin.MARKETPLACE_NAME}": True}})
    )
    twice = cortex(repo.path, "doctor", "--json", env=env).data()
    duplicate = next(c for c in twice["checks"] if c["name"] == "duplicates")
    assert duplicate["status"] == "warn" and "Stop cortex-end-of-turn.sh" in duplicate["detail"]


def test_doctor_says_when_the_enabled_plugin_is_not_installed(repo: Repo, isolated_home: Path) -> None:
    """Enabled in settings but never installed by Claude Code: a failing `plugin` check naming the command."""
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"cortex@elsewhere": True}}))
    report = cortex(repo.path, "doctor", "--json").data()
    check = next(c for c in report["checks"] if c["name"] == "plugin")
    assert check["status"] == "fail" and "/plugin install cortex@elsewhere" in check["fix"]
    assert report["exit_code"] == 1


def test_project_scope_doctor_names_what_this_machine_lacks(
    repo: Repo, isolated_home: Path, tmp_path: Path, bin_path: Path
) -> None:
    """A teammate cloned a project set up with --scope project but has no `cortex` on PATH: doctor says so,
    once for the hooks and once for the server, with how to get it."""
    assert cortex(repo.path, "install", "--scope", "project", bin_path=bin_path).code == 0
    env = {"PATH": tool_path(tmp_path / "nocortex", ("git", "bash"))}
    report = cortex(repo.path, "doctor", "--json", env=env).data()
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["hook-interpreter"]["status"] == "fail" and "not on PATH" in checks["hook-interpreter"]["detail"]
    assert checks["mcp"]["status"] == "fail" and "pipx install" in checks["mcp"]["fix"]
    env_ok = {"PATH": f"{bin_path.parent}{os.pathsep}{env['PATH']}"}
    healthy = cortex(repo.path, "doctor", "--json", env=env_ok).data()
    assert healthy["exit_code"] == 0 and {c["name"] for c in healthy["checks"] if c["status"] == "note"} == {
        "database",
        "engagement",
    }


def test_a_plugin_user_is_told_capture_is_on_by_doctor_install_and_the_operator_view(
    repo: Repo,
    isolated_home: Path,
    tmp_path: Path,
) -> None:
    """One rule for "is Cortex wired here". With only the plugin (no settings-file hooks), a
    session's hooks capture, and the operator view, doctor and install all say the plugin wires it."""
    from cortex_engine.ops.presence import hooks_installed, survey
    from cortex_tui.data.target import StoreTarget

    target_dir = _enable_plugin(isolated_home)
    repo.write("src/api.py", "x\n")
    repo.commit("api")
    env = {**_env(tmp_path, with_cortex=True), "CLAUDE_PLUGIN_ROOT": str(target_dir)}
    declared = json.loads((target_dir / "hooks" / "hooks.json").read_text())
    for event, key in (("SessionStart", "inject-header"), ("PostToolUse", "cortex-capture.sh")):
        command = next(c for e, _, c, k in wiring.hook_entries(declared) if (e, k) == (event, key))
        assert _run(command, event, PAYLOADS[(event, key)], repo, env).returncode == 0
    assert (repo.path / ".cortex" / "spool.jsonl").stat().st_size > 0  # the session really was captured

    seen = StoreTarget(str(repo.path / "src"), user_home=isolated_home).hooks()
    assert (seen.installed, seen.via) == (True, "plugin")
    assert "cortex@cortex-memory" in (seen.where or "")
    assert hooks_installed(str(repo.path), isolated_home) == seen
    assert survey(str(repo.path)).capture is not None
    report = cortex(repo.path, "doctor", "--json", env={"PATH": env["PATH"]}).data()
    assert next(c for c in report["checks"] if c["name"] == "hook-wiring")["status"] == "pass"

    # Disabled in the project's local settings (the most specific file decides): capture is off everywhere.
    repo.write(".claude/settings.local.json", json.dumps({"enabledPlugins": {"cortex@cortex-memory": False}}))
    off = hooks_installed(str(repo.path), isolated_home)
    assert not off.installed and str(repo.path / ".claude" / "settings.local.json") in off.checked


CLAUDE = shutil.which("claude")


@pytest.mark.skipif(
    CLAUDE is None,
    reason="Claude Code's CLI is not on PATH (npm install -g @anthropic-ai/claude-code); "
    "the schema tests above still run",
)
@pytest.mark.parametrize("target", [".", "plugin"])
def test_claude_code_validates_the_marketplace_and_the_plugin_strictly(target: str, tmp_path: Path) -> None:
    """`claude plugin validate --strict` (warnings are errors) passes the marketplace and the plugin,
    its commands and skill included; run by Claude Code's own CLI wherever it is installed."""
    assert CLAUDE is not None
    env = {"HOME": str(tmp_path), "PATH": os.environ["PATH"], "DISABLE_AUTOUPDATER": "1"}
    done = subprocess.run(
        [CLAUDE, "plugin", "validate", "--strict", str(ROOT / target)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout


def _frontmatter(path: Path) -> dict[str, str]:
    """The `key: value` lines between a markdown file's leading `---` fences."""
    head, sep, _ = path.read_text(encoding="utf-8").removeprefix("---\n").partition("\n---\n")
    assert sep, f"{path} has no frontmatter"
    return {k.strip(): v.strip().strip('"') for k, _, v in (line.partition(":") for line in head.splitlines())}


def test_the_plugin_ships_commands_for_the_everyday_verbs_and_a_skill() -> None:
    """/cortex:recall, /cortex:decide, /cortex:state, /cortex:resolve, each described and naming a tool the
    server really has; and a skill that says when to reach for Cortex."""
    from cortex_engine.adapters.mcp_server import ANNOTATIONS as TOOL_NAMES

    commands = {p.stem: p for p in (ROOT / "plugin" / "commands").glob("*.md")}
    assert set(commands) == {"recall", "decide", "state", "resolve"}
    for name, path in commands.items():
        assert _frontmatter(path)["description"], name
        named = set(re.findall(r"`(cortex_[a-z_]+)`", path.read_text()))
        assert named and named <= set(TOOL_NAMES), (name, named)
    skill = _frontmatter(ROOT / "plugin" / "skills" / "cortex-memory" / "SKILL.md")
    assert skill["name"] == "cortex-memory" and "before" in skill["description"]


# -- the guard: what only a person may run ----------------------------------------------------------------

DENIED = {
    "cortex inbox accept --all": "accepting or rejecting inbox arrivals",
    "CLAUDECODE= cortex inbox accept --all": "accepting or rejecting inbox arrivals",
    'env -u CLAUDECODE cortex   inbox  "accept" 0123abcd': "accepting or rejecting inbox arrivals",
    "cortex -C /r inbox reject --all": "accepting or rejecting inbox arrivals",
    "co\\rtex inbox ac''cept": "accepting or rejecting inbox arrivals",
    "cortex \\\n  inbox accept": "accepting or rejecting inbox arrivals",
    'script -qc "cortex inbox accept --all" /dev/null': "accepting or rejecting inbox arrivals",
    "python -m cortex_engine.adapters.cli inbox accept --all": "accepting or rejecting inbox arrivals",
    "cortex review-policy none": "lowering the review of arrivals",
    "cortex review-policy others": "lowering the review of arrivals",
    """echo '{"review_arrivals": "none"}' > ~/.cortex/settings.json""": "lowering the review of arrivals",
    "cp /tmp/s.json $CORTEX_HOME/settings.json": "writing the Cortex settings file (the review policy)",
    "cortex restore --force ~/cortex-backup.db": "restoring the store from a backup",
    "cortex -C /repo undo": "undoing an action",
    "python3 -m cortex_engine.adapters.cli undo --json": "undoing an action",
    'sqlite3 ~/.cortex/projects/r-1/cortex.db "UPDATE notes SET status=1"': "writing the Cortex store file directly",
    "rm -f ~/.cortex/projects/r-1/cortex.db-wal": "writing the Cortex store file directly",
    "cp evil.db ~/.cortex/projects/r-1/cortex.db": "writing the Cortex store file directly",
    "cat evil.sql > ~/.cortex/projects/r-1/cortex.db": "writing the Cortex store file directly",
}
ALLOWED = (
    "git status",
    "cortex inbox",
    "cortex inbox --state all --json",
    "cortex review-policy",
    "cortex review-policy all",
    "cat ~/.cortex/settings.json",
    'cortex recall "how to undo a resolve"',
    "cortex note --kind insight 'restore drills run weekly'",
    "ls ~/.cortex/projects/*/cortex.db",
    "cortex backup /tmp/cortex-backup.db",
    "cortex status",
    "pytest tests/test_undo.py",
)


def test_the_guard_denies_what_only_a_person_may_run_with_bash_alone(repo: Repo, tmp_path: Path) -> None:
    """The plugin's PreToolUse guard on Bash, run as declared with bash as the only program on PATH (no jq, no
    Python): every command that would approve for the person (the shapes an injected agent tries: blank or unset
    `CLAUDECODE`, quotes and backslashes that split words, wrappers, the module run directly) is denied with Claude
    Code's deny answer and a reason telling the agent to ask the person; everyday commands pass silently. On the
    file tools it denies a write into Cortex's home or onto a store file, and nothing else."""
    bash = shutil.which("bash")
    assert bash is not None
    only = tmp_path / "only-bash"
    only.mkdir()
    (only / "bash").symlink_to(bash)
    (only / "sh").symlink_to(shutil.which("sh") or bash)
    env = {"PATH": str(only), "HOME": os.environ["HOME"], "CLAUDE_PLUGIN_ROOT": str(ROOT / "plugin")}
    (command,) = [c for e, k, c in _declared() if k == plugin.GUARD_SCRIPT]
    (group,) = [
        g
        for g in json.loads((ROOT / "plugin" / "hooks" / "hooks.json").read_text())["hooks"]["PreToolUse"]
        if plugin.GUARD_SCRIPT in g["hooks"][0]["command"]
    ]
    assert group["matcher"] == plugin.GUARD_TOOLS == "Bash|Write|Edit|MultiEdit|NotebookEdit"
    seen: dict[str, str | None] = {}
    for text in [*DENIED, *ALLOWED]:
        fields = {"tool_name": "Bash", "tool_input": {"command": text, "description": "run it"}, "tool_use_id": "t"}
        done = _run(command, "PreToolUse", fields, repo, env)
        assert (done.returncode, done.stderr) == (0, ""), text
        if not done.stdout:
            seen[text] = None
            continue
        answer = json.loads(done.stdout)["hookSpecificOutput"]
        assert (answer["hookEventName"], answer["permissionDecision"]) == ("PreToolUse", "deny")
        assert "ask the person" in answer["permissionDecisionReason"]
        seen[text] = answer["permissionDecisionReason"].removeprefix("Cortex: ").split(" is the user's call")[0]
    assert seen == {**DENIED, **dict.fromkeys(ALLOWED)}
    home = os.environ["CORTEX_HOME"]
    writes = {
        ("Write", f"{home}/settings.json"): True,
        ("Edit", f"{home}/projects/r-1/cortex.db"): True,
        ("MultiEdit", "/elsewhere/cortex.db"): True,
        ("Write", str(repo.path / "docs" / "cortex inbox accept.md")): False,
        ("Edit", str(repo.path / "src" / "api.py")): False,
    }
    denied = {}
    for (tool, path), _ in writes.items():
        fields = {"tool_name": tool, "tool_input": {"file_path": path, "content": "cortex inbox accept --all"}}
        done = _run(command, "PreToolUse", fields, repo, {**env, "CORTEX_HOME": home})
        denied[(tool, path)] = '"permissionDecision":"deny"' in done.stdout
    assert denied == writes


def test_every_plugin_command_quotes_its_arguments_and_passes_the_flags_through() -> None:
    """`$ARGUMENTS` is quoted wherever a command names it (a topic with `;` or `$(…)` is text, not shell); the
    decide and resolve fallbacks keep the rejected alternatives and the replacement (`--alternative`,
    `--replacement`)."""
    texts = {p.stem: p.read_text(encoding="utf-8") for p in (ROOT / "plugin" / "commands").glob("*.md")}
    uses = [(name, m.start()) for name, text in texts.items() for m in re.finditer(r"\$ARGUMENTS", text)]
    assert len(uses) == 4
    assert all(texts[name][at - 1] == '"' and texts[name][at + 10] == '"' for name, at in uses), uses
    assert '--alternative "<rejected alternative>"' in texts["decide"]
    assert '--replacement "<replacement text>"' in texts["resolve"]
