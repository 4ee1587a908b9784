"""Bad input: a fuzz corpus (built here, nothing binary committed) and hypothesis properties fed to the capture
hook, the flush, the CLI (argv and stdin) and the MCP tools over the SDK's stdio client.

Promises checked: hooks exit 0, print nothing and finish within the host's timeout (HOOK_TIMEOUT); a flush never raises,
accounts for every spool line (processed + skipped + duplicates) and never lets a bad line cost a good one; the CLI
answers with exit 0, or one `cortex:` line on stderr and exit 1 (2 for usage), never a traceback; MCP answers
bad calls with an error result and keeps serving; the notes written before are all still there and
`PRAGMA integrity_check` is ok afterwards.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import random
import subprocess
import sys
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortex_engine.adapters import cli
from cortex_engine.capture import digests
from cortex_engine.capture import flush as capture
from cortex_engine.engine import Engine
from cortex_engine.store.redact import clean_text
from tests.conftest import Repo, examples, run_in_process

from ._support import ROOT, assert_intact, hook_path, run_hook, spool_line

FUZZ = settings(
    max_examples=examples(60),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)
"""Deterministic (derandomized) so CI sees the same examples every run; shared fixtures are intended. The counts
named are the deep profile's; the suite runs a fifth of them (`tests.conftest.examples`)."""

RTL = "\u05e2\u05d1\u05e8\u05d9\u05ea \u202eevil\u202c"
EMOJI = "\U0001f680 rocket \U0001f9ea"
COMBINING = "cafe\u0301 n\u0303 a\u0308\u0308"
FTS = "\"unbalanced OR NEAR(a b, 3) * ^start col:x -y AND (grp NOT z) 'q"
WEIRD_DIRS = ["with space", 'quote"d', "single'q", "new\nline", "back\\slash", RTL, EMOJI, COMBINING, "tab\there"]
CANARIES = [
    ("decision", "queue engine", "use kafka for the queue engine"),
    ("blocker", "ci", "the CI runner is out of disk"),
    ("insight", None, "the parser is quadratic on long lines"),
]


@pytest.fixture
def live(repo: Repo, make_engine) -> Engine:
    """An engaged worktree with a session and three canary notes that must survive everything below."""
    for name in WEIRD_DIRS:
        (repo.path / "src" / name).mkdir(parents=True, exist_ok=True)
        (repo.path / "src" / name / "f.py").write_text("x = 1\n")
    repo.commit("weird dirs")
    engine = make_engine(repo.path)
    engine.start_session("host-fuzz")
    for kind, subject, text in CANARIES:
        engine.note(kind, text, subject)
    return engine


def canaries_intact(engine: Engine) -> None:
    """The notes written before the fuzzing are all there, unchanged, and the store passes its checks."""
    rows = engine.conn.execute("SELECT kind, subject, content FROM scoped_notes").fetchall()
    assert set(CANARIES) <= {(r["kind"], r["subject"], r["content"]) for r in rows}
    assert_intact(engine.identity.db_path)


def bash_event(repo: Repo, tool_use: str, command: str | None = None, **extra: object) -> dict:
    """A Bash PostToolUse payload whose command (`echo <tool_use>` by default) shows whether it was booked."""
    return {
        "session_id": "host-fuzz",
        "cwd": str(repo.path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_use_id": tool_use,
        "tool_input": {"command": command or f"echo {tool_use}"},
        "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False},
        **extra,
    }


def hook_corpus(repo: Repo) -> list[tuple[str, bytes, str | None]]:
    """(name, stdin bytes, what it must book: `echo <id>` for a Bash call, `read:<target>` / `<type>:` for others,
    or None when it must book nothing)."""
    rng = random.Random(8)
    good = json.dumps(bash_event(repo, "c-trunc")).encode()

    def event(
        name: str, key_id: str, *, ascii_only: bool = False, witness: str | None = None, **fields: object
    ) -> tuple[str, bytes, str]:
        payload = {**bash_event(repo, key_id), **fields}
        return name, json.dumps(payload, ensure_ascii=ascii_only).encode(), witness or f"echo {key_id}"

    def mangled(name: str, key_id: str, old: bytes, new: bytes, booked: bool) -> tuple[str, bytes, str | None]:
        body = json.dumps(bash_event(repo, key_id)).encode().replace(old, new, 1)
        return name, body, f"echo {key_id}" if booked else None

    deep = (
        b'{"cwd":"' + str(repo.path).encode() + b'","tool_name":"Bash","hook_event_name":"PostToolUse",'
        b'"tool_use_id":"c-deep","tool_input":{"command":"deep"},"tool_response":'
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}"
    )
    corpus: list[tuple[str, bytes, str | None]] = [
        ("empty", b"", None),
        ("whitespace", b" \n\t\r\n", None),
        ("not json", b"this is not json at all", None),
        ("truncated 25%", good[: len(good) // 4], None),
        ("truncated 50%", good[: len(good) // 2], None),
        ("truncated 90%", good[: len(good) * 9 // 10], None),
        ("a json array", b"[1, 2, 3]", None),
        ("cwd is a number", b'{"cwd": 42, "tool_name": "Bash"}', None),
        ("cwd is a list", b'{"cwd": ["/tmp"], "tool_name": "Bash"}', None),
        (
            "cwd missing",
            json.dumps({k: v for k, v in bash_event(repo, "c-nocwd").items() if k != "cwd"}).encode(),
            None,
        ),
        ("cwd relative", json.dumps({**bash_event(repo, "c-rel"), "cwd": "relative/dir"}).encode(), None),
        mangled(
            "cwd elsewhere, the repo in another key", "c-elsewhere", b'"cwd"', b'"cwd": "/nonexistent", "cwd2"', False
        ),
        event("cwd is a file", "c-file", cwd=str(repo.path / "README.md")),
        event("cwd does not exist", "c-gone", cwd=str(repo.path / "src" / "no such dir" / "deeper")),
        event(
            "10 MB tool output",
            "c-10mb",
            tool_response={"stdout": "y" * 10_000_000, "stderr": "", "interrupted": False},
        ),
        ("binary garbage", bytes(rng.getrandbits(8) for _ in range(65536)), None),
        mangled("raw NUL bytes (bash drops them)", "c-rawnul", b'"ok"', b'"o\x00\x00k"', True),
        mangled("raw invalid utf-8", "c-badutf", b'"ok"', b'"\xff\xfe"', False),
        mangled("utf-8 BOM first", "c-bom", b"{", b"\xef\xbb\xbf{", False),
        mangled("pretty-printed with CRLF", "c-pretty", b", ", b",\r\n  ", True),
        event("NUL escapes in a command", "c-nul", tool_input={"command": "echo a\u0000b"}, witness="echo a\u0000b"),
        (
            "NUL escape in a read path",
            json.dumps(
                {
                    **bash_event(repo, "c-nulpath"),
                    "tool_name": "Read",
                    "tool_input": {"file_path": str(repo.path) + "/a\u0000b"},
                }
            ).encode(),
            None,
        ),
        ("deep nesting, 100000 levels", deep, None),
        event("nesting, 400 levels", "c-nest", tool_response=json.loads("[" * 400 + "]" * 400)),
        event(
            "wrong types everywhere",
            "c-types",
            session_id=7,
            tool_input={"command": "ls -c-types", "run_in_background": "yes"},
            tool_response="a string",
            agent_type=["x"],
            witness="ls -c-types",
        ),
        event("exit code past 64 bits", "c-exit", tool_response={"stdout": "", "stderr": "", "exit_code": 10**30}),
        event(
            "failure with a 5000-digit exit status",
            "c-fail",
            hook_event_name="PostToolUseFailure",
            error="Command exited with status code " + "9" * 5000,
        ),
        event(
            "lone surrogate escape",
            "c-surrogate",
            ascii_only=True,
            tool_input={"command": "echo \ud800 c-surrogate"},
            witness="echo \ufffd c-surrogate",
        ),
        event(
            "unicode command",
            "c-uni",
            tool_input={"command": f"echo {RTL} {EMOJI} {COMBINING}"},
            witness=f"echo {RTL} {EMOJI} {COMBINING}",
        ),
        event(
            "FTS5 syntax in a grep pattern",
            "c-fts",
            tool_name="Grep",
            tool_input={"pattern": FTS, "path": str(repo.path)},
            tool_response={"mode": "files_with_matches", "filenames": [], "numFiles": 0},
            witness=f"search:{repo.path}",
        ),
        event(
            "agent description in RTL and emoji",
            "c-agent",
            tool_name="Agent",
            tool_input={"description": f"{RTL} {EMOJI}", "subagent_type": COMBINING},
            witness="agent:",
        ),
        ("a megabyte without cwd", b'{"x":"' + b"z" * 1_000_000 + b'"}', None),
    ]
    for n, name in enumerate(WEIRD_DIRS):
        where = repo.path / "src" / name
        corpus.append(
            event(
                f"cwd {name!r}",
                f"c-dir-{n}",
                cwd=str(where),
                tool_name="Read",
                tool_input={"file_path": str(where / "f.py")},
                witness=f"read:{digests.relative_path(str(where / 'f.py'), str(repo.path))}",
                tool_response={"file": {"content": "x = 1\n", "numLines": 1, "startLine": 1, "totalLines": 1}},
            )
        )
    return corpus


def test_capture_hook_fuzz_corpus(live: Engine, repo: Repo, tmp_path: Path) -> None:
    """Figures: 41 corpus payloads through the capture hook; each exits 0 silently in time; the flush books
    exactly the well-formed ones, once each, and skips the rest without losing a neighbour."""
    corpus = hook_corpus(repo)
    assert len(corpus) == 41
    path_env = hook_path(tmp_path)
    runs = {name: run_hook("cortex-capture.sh", body, path_env) for name, body, _ in corpus}
    loud = {
        name: (r.code, r.stdout[:80], r.stderr[:200])
        for name, r in runs.items()
        if (r.code, r.stdout, r.stderr) != (0, b"", b"")
    }
    assert loud == {}
    result = live.flush_spool()
    commands = Counter(c for (c,) in live.conn.execute("SELECT command_summary FROM command_runs"))
    others = Counter(
        f"{t}:{target or ''}" for t, target in live.conn.execute("SELECT type, target FROM events WHERE type != 'cmd'")
    )
    # Stored strings lose control and format characters on the way in: compare the same way.
    booked = {
        name: commands[clean_text(w)] if w.startswith(("echo", "ls")) else others[clean_text(w)]
        for name, _, w in corpus
        if w
    }
    assert booked == {name: 1 for name, _, w in corpus if w}
    assert result.processed == len(booked)
    # Nothing else was booked: every Bash-shaped item that should not land would show as `echo c-<id>`.
    assert sorted(c for c in commands if c.startswith("echo c-")) == sorted(
        w for _, _, w in corpus if w and w.startswith("echo c-")
    )
    assert list((capture.runtime_dir(repo.path) / capture.CLAIMS).iterdir()) == []
    assert list((capture.runtime_dir(repo.path) / capture.BLOBS).iterdir()) == []
    canaries_intact(live)


def test_every_hook_script_exits_quietly_on_bad_input(live: Engine, repo: Repo, tmp_path: Path) -> None:
    """The hooks that start Cortex (end of turn, reflexes, subagent, substitution) also stay quiet on bad input:
    they print only what the host expects (nothing here) and exit 0, with the real CLI behind CORTEX_BIN."""
    wrapper = tmp_path / "cortex-bin"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m cortex_engine.adapters.cli "$@"\n')
    wrapper.chmod(0o755)
    env = {"CORTEX_BIN": str(wrapper), "CORTEX_HOME": os.environ["CORTEX_HOME"], "PYTHONPATH": str(ROOT)}
    bodies = {
        "garbage": b"\x00\xff{not json",
        "deep": b'{"cwd":"' + str(repo.path).encode() + b'","x":' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        "wrong types": json.dumps(
            {
                "cwd": str(repo.path),
                "session_id": 5,
                "tool_name": ["Edit"],
                "tool_input": "x",
                "agent_id": {"a": 1},
                "prompt": 7,
                "stop_hook_active": "yes",
            }
        ).encode(),
        "cwd is a file": json.dumps(
            {
                "cwd": str(repo.path / "README.md"),
                "session_id": "host-fuzz",
                "prompt": FTS,
                "tool_name": "Edit",
                "tool_input": {"file_path": f"{repo.path}/src/{RTL}.py"},
            }
        ).encode(),
    }
    scripts = [
        ("cortex-end-of-turn.sh", ()),
        ("cortex-reflect.sh", ("reflect-prompt",)),
        ("cortex-reflect.sh", ("reflect-pre",)),
        ("cortex-subagent.sh", ("subagent-stop",)),
        ("cortex-substitute.sh", ()),
    ]
    path_env = hook_path(tmp_path) + os.pathsep + "/usr/bin:/bin"
    runs = {
        (s, a, name): run_hook(s, body, path_env, args=a, extra_env=env)
        for (s, a), (name, body) in itertools.product(scripts, bodies.items())
    }
    assert len(runs) == 20
    loud = {
        k: (r.code, r.stdout[:120], r.stderr[:200])
        for k, r in runs.items()
        if (r.code, r.stdout, r.stderr) != (0, b"", b"")
    }
    assert loud == {}
    canaries_intact(live)


junk = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80) | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def spool_entries(draw: st.DrawFn, repo: Path) -> object:
    """A spool entry that is plausible in shape and wrong in detail: types, paths, sizes, encodings."""
    paths = st.sampled_from(
        [
            str(repo),
            str(repo / "src"),
            str(repo / "README.md"),
            str(repo / "missing" / "dir"),
            "",
            "relative/path",
            "/dev/null",
            str(repo) + "/a\x00b",
            f"{repo}/src/{RTL}",
            f"{repo}/src/{EMOJI}",
        ]
    )
    text = st.text(max_size=40) | st.sampled_from([FTS, RTL, EMOJI, COMBINING, "\x1b[2J", "a\x00b", "x" * 4000])
    tool_input = st.fixed_dictionaries(
        {},
        optional={
            "file_path": paths | junk,
            "command": text | junk,
            "pattern": text | junk,
            "path": paths | junk,
            "glob": text | junk,
            "offset": junk,
            "limit": junk,
            "description": text | junk,
            "run_in_background": junk,
        },
    )
    response = st.fixed_dictionaries(
        {},
        optional={
            "stdout": text | junk,
            "stderr": text | junk,
            "exit_code": junk,
            "interrupted": junk,
            "numFiles": junk,
            "filenames": junk,
            "mode": junk,
            "content": junk,
            "file": st.fixed_dictionaries(
                {}, optional={"content": text | junk, "numLines": junk, "totalLines": junk, "startLine": junk}
            ),
        },
    )
    payload = st.fixed_dictionaries(
        {},
        optional={
            "session_id": st.sampled_from(["host-fuzz", "other"]) | junk,
            "cwd": paths | junk,
            "hook_event_name": st.sampled_from(["PostToolUse", "PostToolUseFailure", "PreToolUse"]) | junk,
            "tool_name": st.sampled_from(
                ["Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Bash", "Grep", "Agent", "Task"]
            )
            | junk,
            "tool_use_id": st.text(max_size=8) | junk,
            "tool_input": tool_input | junk,
            "tool_response": response | junk,
            "agent_id": st.sampled_from(["agent-1", ""]) | junk,
            "agent_type": junk,
            "error": text | junk,
            "is_interrupt": junk,
        },
    )
    credit = st.fixed_dictionaries({}, optional={"path": paths | junk, "size": junk, "line": text | junk})
    entry = st.fixed_dictionaries(
        {}, optional={"v": junk, "t": junk, "p": payload | junk, "blob": text | junk, "credit": credit | junk}
    )
    return draw(entry | junk)


def test_flush_property_every_line_accounted_and_no_bad_line_costs_a_good_one(live: Engine, repo: Repo) -> None:
    """Property (hypothesis, 120 examples of 1-6 lines): the flush never raises; processed + skipped + duplicates
    equals the number of lines; a well-formed line after the junk is booked exactly once; no claim is left."""
    counter = itertools.count()
    spool = capture.runtime_dir(repo.path) / capture.SPOOL

    @settings(FUZZ, max_examples=examples(120))
    @given(
        st.lists(
            spool_entries(repo.path) | st.text(max_size=60).map(lambda s: "\x00raw\x00" + s), min_size=1, max_size=5
        ),
        st.booleans(),
    )
    def check(entries: list[object], torn: bool) -> None:
        sentinel_id = f"sentinel-{next(counter)}"
        lines = [
            e.replace("\n", " ") if isinstance(e, str) else json.dumps(e, ensure_ascii=bool(len(sentinel_id) % 2))
            for e in entries
        ]
        lines = [line for line in lines if line.strip()]
        lines.append(spool_line(bash_event(repo, sentinel_id, f"echo {sentinel_id}")))
        body = "\n".join(lines) + "\n" + ('{"v":1,"t":17' if torn else "")
        spool.write_bytes(body.encode("utf-8", "surrogatepass"))
        result = live.flush_spool()
        assert result.processed + result.skipped + result.duplicates == len(lines) + int(torn)
        assert all(": skipped a payload (" in e for e in result.errors)
        booked = live.conn.execute(
            "SELECT COUNT(*) FROM command_runs WHERE command_summary=?", (f"echo {sentinel_id}",)
        ).fetchone()[0]
        assert booked == 1
        assert list((capture.runtime_dir(repo.path) / capture.CLAIMS).iterdir()) == []

    check()
    assert next(counter) == examples(120)
    canaries_intact(live)


POISON = {
    "deep nesting": '{"v":1,"t":1,"p":{"a":' + "[" * 100_000 + "]" * 100_000 + "}}",
    "NUL in a read path": spool_line(
        {
            "cwd": "/",
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "tool_use_id": "p-nul",
            "tool_input": {"file_path": "/a\u0000b"},
        }
    ),
    "NUL in an edit path": spool_line(
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_use_id": "p-edit",
            "tool_input": {"file_path": "/a\u0000b"},
        }
    ),
    "NUL in a grep path": spool_line(
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Grep",
            "tool_use_id": "p-grep",
            "tool_input": {"pattern": "x", "path": "/x\u0000"},
            "tool_response": {"numFiles": 0},
        }
    ),
    "exit code past 64 bits": spool_line(
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_use_id": "p-exit",
            "tool_input": {"command": "ls"},
            "tool_response": {"exit_code": 10**30},
        }
    ),
    "exit status of 5000 digits": spool_line(
        {
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_use_id": "p-digits",
            "tool_input": {"command": "make"},
            "error": "exit code " + "9" * 5000,
        }
    ),
    "credit size past 64 bits": json.dumps(
        {
            "v": 1,
            "t": 1,
            "credit": {"path": "/x", "size": 10**30, "line": "l"},
            "p": {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_use_id": "p-credit"},
        }
    ),
    "lone surrogate": spool_line(
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_use_id": "p-sur",
            "tool_input": {"command": "echo \ud800"},
        }
    ),
    "blob pointing outside": json.dumps({"v": 1, "t": 1, "blob": "../../../../etc/passwd"}),
}


@pytest.mark.parametrize("name", sorted(POISON))
def test_one_poisonous_line_never_stops_capture(live: Engine, repo: Repo, name: str) -> None:
    """Regression: each of these used to raise out of the flush, leaving a claim that failed every later flush
    first — capture stopped for good. Now the line is skipped (or booked, sanitized) and its neighbours land."""
    spool = capture.runtime_dir(repo.path) / capture.SPOOL
    before = spool_line(bash_event(repo, "n-before", "echo before"))
    after = spool_line(bash_event(repo, "n-after", "echo after"))
    spool.write_text("\n".join([before, POISON[name], after]) + "\n")
    result = live.flush_spool()
    assert result.processed + result.skipped == 3
    commands = {c for (c,) in live.conn.execute("SELECT command_summary FROM command_runs")}
    assert {"echo before", "echo after"} <= commands
    assert list((capture.runtime_dir(repo.path) / capture.CLAIMS).iterdir()) == []
    spool.write_text(spool_line(bash_event(repo, "n-later", "echo later")) + "\n")
    assert live.flush_spool().processed == 1
    canaries_intact(live)


def test_payload_without_a_usable_cwd_books_to_the_spools_worktree(live: Engine, repo: Repo, tmp_path: Path) -> None:
    """A payload whose cwd is missing or not a directory belongs to the worktree whose spool holds it (the hook
    found that worktree by walking up), not to whatever directory the flushing process happens to run in."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    spool = capture.runtime_dir(repo.path) / capture.SPOOL
    lines = [
        spool_line({k: v for k, v in bash_event(repo, "w-nocwd", "echo nocwd").items() if k != "cwd"}),
        spool_line({**bash_event(repo, "w-file", "echo file"), "cwd": str(repo.path / "README.md")}),
        spool_line({**bash_event(repo, "w-gone", "echo gone"), "cwd": str(repo.path / "gone" / "deeper")}),
    ]
    spool.write_text("\n".join(lines) + "\n")
    here = os.getcwd()
    os.chdir(elsewhere)
    try:
        assert live.flush_spool().processed == 3
    finally:
        os.chdir(here)
    scopes = {s for (s,) in live.conn.execute("SELECT DISTINCT scope_key FROM command_runs")}
    assert scopes == {live.scope.key}


# -- the CLI -------------------------------------------------------------------------------------------------


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """The CLI in this process: exit code, stdout, stderr (an escaping exception fails the test)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def check_cli_contract(argv: list[str], code: int, out: str, err: str) -> None:
    """Exit 0 with nothing on stderr, or 1/2 with exactly one `cortex:` line (and a JSON error with --json)."""
    assert code in (0, 1, 2), (argv, code)
    as_json = argv[-1:] == ["--json"] and "--" not in argv
    if code == 0:
        assert err == "", (argv, err)
        if as_json:
            json.loads(out)
        return
    assert err.startswith("cortex: ") and err.endswith("\n") and err.count("\n") == 1, (argv, err)
    if as_json and code == 1:
        data = json.loads(out)
        assert set(data) >= {"error", "message"}, (argv, data)


# No NUL: an operating system cannot pass one in argv (MCP can, and is fed NUL below).
words = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
) | st.sampled_from(
    [
        FTS,
        RTL,
        EMOJI,
        COMBINING,
        "",
        " ",
        "-",
        "--",
        "-x",
        "x" * 25_000,
        'a "quoted" path',
        "new\nline",
        "tab\tbyte",
        "../../etc/passwd",
        "*",
        "NEAR",
        "notes:",
        "AND OR NOT",
    ]
)
numbers = st.sampled_from(["0", "-1", "19", "20", "20000", "20001", "abc", "1e3", "99999999999999999999999", " 5", ""])


@st.composite
def cli_argv(draw: st.DrawFn, repo: Path) -> list[str]:
    """A command line: a real sub-command with arguments of every wrong kind, maybe -C and --json."""
    kind = st.sampled_from(["insight", "decision", "intent", "blocker", "focus", "", "Decision", "note"]) | words
    templates = {
        "note": lambda: [
            "note",
            "--kind",
            draw(kind),
            *(["--subject", draw(words)] if draw(st.booleans()) else []),
            *draw(st.lists(words, min_size=1, max_size=3)),
        ],
        "recall": lambda: [
            "recall",
            *draw(st.lists(words, min_size=1, max_size=3)),
            *(["--budget", draw(numbers)] if draw(st.booleans()) else []),
        ],
        "brief": lambda: ["brief", draw(words), *(["--for", draw(words)] if draw(st.booleans()) else [])],
        "state": lambda: ["state", *(["--budget", draw(numbers)] if draw(st.booleans()) else [])],
        "list-memory": lambda: [
            "list-memory",
            "--limit",
            draw(numbers),
            "--offset",
            draw(numbers),
            "--kind",
            draw(words),
            "--state",
            draw(st.sampled_from(["hot", "warm,cold", "bogus", ""])),
        ],
        "inspect-memory": lambda: ["inspect-memory", draw(words)],
        "edit-memory": lambda: ["edit-memory", draw(words), "--text", draw(words)],
        "delete-memory": lambda: ["delete-memory", draw(words)],
        "resolve": lambda: [
            "resolve",
            *draw(st.sampled_from([["--subject"], ["--id"], []])),
            draw(words),
            "--status",
            draw(st.sampled_from(["resolved", "superseded", "bogus"])),
        ],
        "read-ledger": lambda: ["read-ledger", *draw(st.lists(words, min_size=1, max_size=3))],
        "search-ledger": lambda: [
            "search-ledger",
            draw(words),
            *(["--glob", draw(words)] if draw(st.booleans()) else []),
        ],
        "validate-memory": lambda: ["validate-memory", "--topic", draw(words)],
        "log": lambda: [
            "log",
            draw(st.sampled_from(["cmd", "read", "agent", "bogus"])),
            "--cmd",
            draw(words),
            "--file",
            draw(words),
            "--exit",
            draw(numbers),
            "--stderr",
            draw(words),
        ],
        "misc": lambda: [
            draw(
                st.sampled_from(
                    [
                        "session-brief",
                        "header",
                        "stats",
                        "status",
                        "store",
                        "suggest-notes",
                        "consolidate",
                        "route",
                        "substitution",
                        "bogus-command",
                    ]
                )
            )
        ],
    }
    argv = templates[draw(st.sampled_from(sorted(templates)))]()
    where = draw(st.sampled_from([None, str(repo), str(repo / "src"), str(repo / "README.md")]))
    return (["-C", where] if where else []) + argv + (["--json"] if draw(st.booleans()) else [])


def test_cli_argv_property_one_line_errors_never_a_traceback(live: Engine, repo: Repo) -> None:
    """Property (hypothesis, 150 command lines): exit 0/1/2, errors are one `cortex:` line, --json errors are
    JSON, nothing escapes as an exception; the canary notes survive."""
    codes: Counter[int] = Counter()

    @settings(FUZZ, max_examples=examples(150))
    @given(cli_argv(repo.path))
    def check(argv: list[str]) -> None:
        code, out, err = run_cli(argv)
        check_cli_contract(argv, code, out, err)
        codes[code] += 1

    here = os.getcwd()
    os.chdir(repo.path)
    try:
        check()
    finally:
        os.chdir(here)
    assert sum(codes.values()) == examples(150) and set(codes) == {
        0,
        1,
        2,
    }  # successes, refusals and usage errors all seen
    canaries_intact(live)


CLI_CORPUS = [
    (["note", "--kind", "decision", "--subject", RTL, f"use {EMOJI} for {COMBINING}"], 0),
    (["note", "--kind", "insight", "x" * 20_001], 1),
    (["note", "--kind", "decision", "no subject given"], 1),
    (["note", "--kind", "nonsense", "text"], 1),
    (["recall", FTS], 0),
    (["recall", RTL, EMOJI], 0),
    (["state", "--budget", "19"], 1),
    (["state", "--budget", "abc"], 2),
    (["list-memory", "--offset", "99999999999999999999999"], 1),
    (["inspect-memory", "no-such-id"], 1),
    (["edit-memory", "x", "--text", "a", "--file", "b"], 2),
    (["resolve"], 2),
    (["log", "read"], 1),
    (["no-such-command"], 2),
]


@pytest.mark.parametrize(("argv", "code"), CLI_CORPUS, ids=[" ".join(a)[:40] for a, _ in CLI_CORPUS])
def test_cli_corpus_through_the_real_binary(live: Engine, repo: Repo, argv: list[str], code: int) -> None:
    """The documented exit code and a one-line `cortex:` error, from a real process (no traceback)."""
    done = subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", *argv],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == code, done.stderr
    check_cli_contract(argv, done.returncode, done.stdout, done.stderr)


STDIN_CORPUS = {
    "empty": b"",
    "garbage": b"\x00\xff\xfe not json",
    "array": b"[1,2,3]",
    "wrong types": b'{"cwd": 5, "session_id": ["x"], "prompt": {}}',
    "cwd is a file": b'{"cwd": "/etc/hostname", "session_id": "s"}',
    "10 MB": b'{"cwd": "/nonexistent", "x": "' + b"y" * 10_000_000 + b'"}',
    "deep nesting": b'{"cwd": "/tmp", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
}


REAL_PROCESS_STDIN = ("garbage", "10 MB", "deep nesting")


@pytest.mark.parametrize(
    "argv",
    [["inject-header", "--quiet"], ["hook", "end-of-turn"], ["hook", "reflect-prompt"], ["hook", "subagent-start"]],
    ids=lambda a: " ".join(a),
)
@pytest.mark.parametrize("name", list(STDIN_CORPUS))
def test_cli_hook_stdin_corpus(live: Engine, repo: Repo, argv: list[str], name: str) -> None:
    """The stdin-reading commands the host calls: exit 0, nothing on stdout, at most one `cortex:` line, no
    traceback. SessionStart's command and the payloads where a real process differs from this one (undecodable
    bytes, a pipe larger than its buffer, nesting past the recursion limit) run the real executable; the others run
    the CLI in this process (`run_in_process`: an escaping exception fails the test where it is raised)."""
    if argv == ["inject-header", "--quiet"] or name in REAL_PROCESS_STDIN:
        done = subprocess.run(
            [sys.executable, "-m", "cortex_engine.adapters.cli", *argv],
            input=STDIN_CORPUS[name],
            cwd=repo.path,
            capture_output=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        code, out, err = done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    else:
        run = run_in_process(repo.path, argv, stdin=STDIN_CORPUS[name])
        code, out, err = run.code, run.out, run.err
    assert (code, "Traceback" in err) == (0, False), err[-400:]
    assert out == "" or argv[0] == "inject-header", out[-400:]
    assert err == "" or (err.startswith("cortex: ") and err.count("\n") == 1)


@pytest.mark.parametrize("where", ["missing", "file"])
def test_cli_refuses_a_working_directory_that_is_not_one(live: Engine, repo: Repo, tmp_path: Path, where: str) -> None:
    """`-C` naming a missing directory or a file is an error, and no store is created for it."""
    target = tmp_path / "no-such-dir" if where == "missing" else repo.path / "README.md"
    stores = sorted(p.name for p in (Path(os.environ["CORTEX_HOME"]) / "projects").iterdir())
    code, out, err = run_cli(["-C", str(target), "note", "--kind", "insight", "misplaced"])
    assert code == 1 and err.startswith("cortex: ")
    assert sorted(p.name for p in (Path(os.environ["CORTEX_HOME"]) / "projects").iterdir()) == stores


# -- MCP -----------------------------------------------------------------------------------------------------


def test_mcp_tools_answer_bad_calls_with_errors_and_keep_serving(live: Engine, repo: Repo, tmp_path: Path) -> None:
    """Over the SDK's stdio client: wrong types, missing arguments, out-of-range budgets, huge and hostile text,
    FTS syntax, unicode — every call gets an answer (an error result where the input is bad), the server keeps
    serving, writes nothing but protocol to stdout, and the store stays intact."""
    from tests import test_mcp_server as mcp_tests  # a rename must fail loudly, never skip

    calls: list[tuple[str, dict, bool]] = [
        ("cortex_note", {"kind": "decision", "content": "x"}, True),  # decision without a subject
        ("cortex_note", {"kind": "verdict", "content": "x", "subject": "s"}, True),
        ("cortex_note", {"kind": "insight", "content": ""}, True),
        ("cortex_note", {"kind": "insight", "content": 42}, True),
        ("cortex_note", {"kind": "insight", "content": "x" * 20_001}, True),
        ("cortex_note", {"kind": "insight"}, True),
        ("cortex_note", {"kind": "insight", "content": "nul\x00byte and \x1b[2J escape"}, False),
        (
            "cortex_note",
            {
                "kind": "decision",
                "subject": RTL,
                "content": f"use {EMOJI} {COMBINING}",
                "alternatives": [FTS, "x" * 3000],
            },
            True,
        ),  # alternatives past 2000 characters
        (
            "cortex_note",
            {"kind": "decision", "subject": RTL, "content": f"use {EMOJI} {COMBINING}", "alternatives": [FTS]},
            False,
        ),
        ("cortex_recall", {"topic": FTS}, False),
        ("cortex_recall", {"topic": ""}, True),
        ("cortex_recall", {"topic": "x", "budget": 10}, True),
        ("cortex_recall", {"topic": "x", "budget": "lots"}, True),
        ("cortex_recall", {"topic": "x", "detail": "everything"}, True),
        ("cortex_brief", {"topic": RTL, "for_agent": EMOJI}, False),
        ("cortex_state", {"budget": 10**30}, True),
        ("cortex_resolve", {}, True),
        ("cortex_resolve", {"note_id": "no-such-note"}, True),
        ("cortex_resolve", {"subject": "x", "status": "deleted"}, True),
        ("cortex_read_ledger", {"paths": [f"src/{RTL}.py", f"src/{EMOJI} x.py"]}, False),
        ("cortex_read_ledger", {"paths": ["../../etc/passwd"]}, True),  # outside the worktree
        ("cortex_read_ledger", {"paths": ["a\x00b"]}, True),  # an error result saying the path holds a NUL
        ("cortex_read_ledger", {"paths": 5}, True),
        ("cortex_search_ledger", {"queries": [{"pattern": ""}]}, True),
        ("cortex_search_ledger", {"queries": [{"pattern": FTS, "path": "/nonexistent"}, "plain"]}, False),
        ("cortex_validate_memory", {"topic": FTS}, False),
        ("cortex_suggest_notes", {"session_id": "no-such-session"}, True),  # says so, not empty
        ("cortex_no_such_tool", {}, True),
        ("cortex_state", {}, False),  # still serving after all of the above
    ]

    async def script(session):  # noqa: ANN001, ANN202 - the SDK's ClientSession
        answers = []
        for name, arguments, _ in calls:
            try:
                result = await session.call_tool(name, arguments)
                answers.append((bool(result.is_error), mcp_tests.text(result)))
            except Exception as exc:  # noqa: BLE001 - a protocol-level rejection is an answer too
                answers.append((True, f"{type(exc).__name__}: {exc}"))
        return answers

    answers, stray = mcp_tests.serve(repo, tmp_path, script)
    assert len(answers) == len(calls) == 29
    wrong = [
        (name, args, expected, got, text[:160])
        for (name, args, expected), (got, text) in zip(calls, answers, strict=True)
        if got != expected
    ]
    assert wrong == []
    assert all(text.strip() for _, text in answers)
    log = (tmp_path / "serve.stderr").read_text()
    # Every bad call above is an expected failure: none reaches the server's log as an unexpected exception.
    assert "raised an unexpected exception" not in log and "Traceback" not in log, log[-2000:]
    assert stray == []
    canaries_intact(live)
