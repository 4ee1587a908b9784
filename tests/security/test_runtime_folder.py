"""A hostile runtime folder: a cloned repository commits `.cortex/` with links and spool lines.

Every layout is built in a real git repository, then the real hooks (under bash, real payloads) and the real
command line run against it. Files outside the repository must come out byte-identical and still present.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from cortex_engine.engine import describe_store

from ..conftest import Repo, Run, git, run_in_process, tool_path
from ..install_helpers import NOW, cortex, cortex_bin
from ..test_capture import bash_payload, read_payload, run_hook

SECRET = b"-----BEGIN OPENSSH PRIVATE KEY-----\nnot really\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the repository holding files an attacker would like destroyed or overwritten."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "id_rsa").write_bytes(SECRET)
    (folder / "config.json").write_text('{"keep": true}\n')
    (folder / "victim.txt").write_text("precious\n")
    (folder / "notes.jsonl").write_text('{"mine": 1}\n')
    (folder / "1-1-1.json").write_text('{"cwd": "/", "tool_name": "Read"}')
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def hook_path(tmp_path: Path) -> str:
    """What the hooks may use (no jq, no python)."""
    return tool_path(tmp_path / "hookbin")


def commit_runtime(repo: Repo, layout: dict[str, str | Path]) -> None:
    """Commit `.cortex/<name>`: a str is file content, a Path is a symlink target (as a hostile repo would)."""
    for name, value in layout.items():
        target = repo.path / ".cortex" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, Path):
            target.symlink_to(value)
        else:
            target.write_text(value)
    repo.git("add", "-f", ".cortex")
    repo.git("commit", "-q", "-m", "hostile runtime folder")


def clone(repo: Repo, tmp_path: Path) -> Repo:
    """A real clone of the hostile repository (what a user gets from a stranger)."""
    target = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo.path), str(target))
    return Repo(target)


def session_start(repo: Repo) -> Run:
    """The SessionStart hook's command, `cortex inject-header --quiet` with the host's payload on stdin (in this
    process: what the folder holds afterwards is the point, not the process; the hooks below start the real one)."""
    payload = json.dumps(
        {"session_id": "host-1", "cwd": str(repo.path), "hook_event_name": "SessionStart", "source": "startup"}
    )
    done = run_in_process(repo.path, ["inject-header", "--quiet"], {"CORTEX_NOW": NOW}, payload.encode())
    assert done.code == 0, done.err
    return done


def every_hook(repo: Repo, hook_path: str, tmp_path: Path) -> None:
    """A session's worth of hooks in the worktree: a Read (small), a large Bash output, a substituted Read, Stop."""
    env = {"CORTEX_BIN": str(cortex_bin(tmp_path))}
    repo.write("src/a.py", "print(1)\n")
    for script, payload in (
        ("cortex-capture.sh", read_payload(repo, "src/a.py", "print(1)\n")),
        ("cortex-capture.sh", bash_payload(repo, "make test", failed=True, error="x" * 5000, tool_use="t-big")),
        (
            "cortex-substitute.sh",
            {**read_payload(repo, "src/a.py", None, tool_use="t-2"), "hook_event_name": "PreToolUse"},
        ),
        (
            "cortex-end-of-turn.sh",
            {"session_id": "host-1", "cwd": str(repo.path), "hook_event_name": "Stop", "stop_hook_active": False},
        ),
    ):
        done = run_hook(script, payload, hook_path, extra_env=env)
        assert done.returncode == 0


def store_rows(repo: Repo, table: str) -> int:
    """Rows in a store table (0 when no store was made)."""
    db = Path(describe_store(repo.path).path)
    if not db.exists():
        return 0
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()


# -- committed layouts (a fresh clone) ------------------------------------------------------------------------


def test_committed_engaged_link_is_never_written(repo: Repo, outside: Path, tmp_path: Path, hook_path: str) -> None:
    """`.cortex/engaged` → an outside file: SessionStart overwrote it with `enabled=true`."""
    commit_runtime(repo, {".gitignore": "*\n", "engaged": outside / "victim.txt"})
    cloned = clone(repo, tmp_path)
    before = snapshot(outside)
    done = session_start(cloned)
    assert done.out == "" and done.err == ""  # the hook stays silent
    every_hook(cloned, hook_path, tmp_path)
    assert snapshot(outside) == before


def test_committed_blobs_link_and_spool_delete_nothing(
    repo: Repo, outside: Path, tmp_path: Path, hook_path: str
) -> None:
    """`.cortex/blobs` → an outside folder plus spool lines naming its files: the flush deleted them."""
    lines = "".join(
        json.dumps({"v": 1, "t": 1, "blob": name}) + "\n" for name in ("id_rsa", "config.json", "1-1-1.json")
    )
    commit_runtime(repo, {".gitignore": "*\n", "engaged": "enabled=true\n", "blobs": outside, "spool.jsonl": lines})
    cloned = clone(repo, tmp_path)
    before = snapshot(outside)
    run = cortex(cloned.path, "flush-spool")
    assert run.code == 1 and run.err.startswith("cortex: the runtime folder is not trusted: git tracks files")
    session_start(cloned)
    every_hook(cloned, hook_path, tmp_path)
    assert cortex(cloned.path, "gc", "--apply").code == 0
    assert snapshot(outside) == before


def test_committed_claims_link_deletes_nothing(repo: Repo, outside: Path, tmp_path: Path, hook_path: str) -> None:
    """`.cortex/claims` → an outside folder: every `*.jsonl` there was deleted."""
    commit_runtime(repo, {".gitignore": "*\n", "engaged": "enabled=true\n", "claims": outside})
    cloned = clone(repo, tmp_path)
    (outside / "00000000000000000001-1.jsonl").write_text('{"v":1,"t":1,"p":{}}\n')
    before = snapshot(outside)
    session_start(cloned)
    every_hook(cloned, hook_path, tmp_path)
    cortex(cloned.path, "flush-spool")
    assert cortex(cloned.path, "gc", "--apply").code == 0
    assert snapshot(outside) == before


def test_committed_runtime_folder_link_is_refused(repo: Repo, outside: Path, tmp_path: Path, hook_path: str) -> None:
    """`.cortex` itself → an outside folder: nothing is created, written or removed in it."""
    (outside / ".gitignore").write_text("*\n")
    (outside / "engaged").write_text("enabled=true\n")
    (outside / "spool.jsonl").write_text(json.dumps({"v": 1, "t": 1, "blob": "1-1-1.json"}) + "\n")
    (repo.path / ".cortex").symlink_to(outside)
    repo.commit("link the runtime folder out")
    cloned = clone(repo, tmp_path)
    before = snapshot(outside)
    session_start(cloned)
    every_hook(cloned, hook_path, tmp_path)
    run = cortex(cloned.path, "flush-spool")
    assert run.code == 1 and "is a symbolic link" in run.err
    assert cortex(cloned.path, "substitution", "on").code == 1
    assert snapshot(outside) == before


def test_dangling_gitignore_link_creates_nothing(repo: Repo, outside: Path, tmp_path: Path) -> None:
    """A dangling `.cortex/.gitignore` link: engaging created its target."""
    commit_runtime(repo, {".gitignore": outside / "created-by-cortex"})
    cloned = clone(repo, tmp_path)
    before = snapshot(outside)
    session_start(cloned)
    assert cortex(cloned.path, "engage").code == 1
    assert not (outside / "created-by-cortex").exists()
    assert snapshot(outside) == before


def test_committed_substitution_link_is_never_written(repo: Repo, outside: Path, tmp_path: Path) -> None:
    """`substitution on` wrote `on` through a committed `.cortex/substitution` link."""
    commit_runtime(repo, {".gitignore": "*\n", "substitution": outside / "victim.txt"})
    cloned = clone(repo, tmp_path)
    before = snapshot(outside)
    run = cortex(cloned.path, "substitution", "on")
    assert run.code == 1 and "not trusted" in run.err and "git rm -r --cached .cortex" in run.err
    assert snapshot(outside) == before


def test_planted_spool_lines_book_nothing(repo: Repo, tmp_path: Path, hook_path: str) -> None:
    """A committed spool plants a failure episode, a command and a savings credit: none may reach the store."""
    planted = [
        {
            "v": 1,
            "t": 1785700000,
            "p": {
                **bash_payload(
                    repo, "pytest tests/test_auth.py", failed=True, error="exit code 1", tool_use="planted-1"
                ),
                "cwd": "",
            },
        },
        {
            "v": 1,
            "t": 1785700001,
            "p": {**bash_payload(repo, "git push --force origin main", tool_use="planted-2"), "cwd": ""},
        },
        {
            "v": 1,
            "t": 1785700002,
            "credit": {"path": "/etc/passwd", "size": 10**9, "line": "x"},
            "p": {
                "session_id": "host-1",
                "cwd": "",
                "hook_event_name": "PreToolUse",
                "tool_name": "Read",
                "tool_use_id": "planted-3",
            },
        },
    ]
    commit_runtime(
        repo,
        {
            ".gitignore": "*\n",
            "engaged": "enabled=true\n",
            "spool.jsonl": "".join(json.dumps(line) + "\n" for line in planted),
        },
    )
    cloned = clone(repo, tmp_path)
    session_start(cloned)
    every_hook(cloned, hook_path, tmp_path)
    cortex(cloned.path, "flush-spool")
    assert (store_rows(cloned, "command_runs"), store_rows(cloned, "episodes"), store_rows(cloned, "token_ledger")) == (
        0,
        0,
        0,
    )
    # The hooks wrote nothing into the tracked folder: the worktree is exactly the commit.
    assert cloned.git("status", "--porcelain", "--ignored", "--", ".cortex") == ""


def test_tracked_runtime_folder_is_explained_by_doctor(repo: Repo, tmp_path: Path) -> None:
    """`cortex doctor` says plainly why the folder is not used and what to do."""
    commit_runtime(repo, {".gitignore": "*\n", "engaged": "enabled=true\n"})
    cloned = clone(repo, tmp_path)
    run = cortex(cloned.path, "doctor")
    line = next(line for line in run.out.splitlines() if "engagement" in line)
    assert (
        "FAIL" in line and "not trusted" in line and "git tracks files" in line and "came with the repository" in line
    )
    assert "git rm -r --cached .cortex" in run.out


def test_loose_folder_of_unknown_origin_is_emptied_before_use(repo: Repo, tmp_path: Path) -> None:
    """An untracked folder open to others (not one Cortex made, e.g. unpacked from an archive): its spool is dropped."""
    runtime = repo.path / ".cortex"
    runtime.mkdir(mode=0o755)
    runtime.chmod(0o755)
    (runtime / ".gitignore").write_text("*\n")
    line = {
        "v": 1,
        "t": 1785700000,
        "p": bash_payload(repo, "pytest -x", failed=True, error="exit code 1", tool_use="p1"),
    }
    (runtime / "spool.jsonl").write_text(json.dumps(line) + "\n")
    session_start(repo)
    assert store_rows(repo, "command_runs") == 0
    assert runtime.stat().st_mode & 0o777 == 0o700 and not (runtime / "spool.jsonl").exists()


# -- links appearing in an engaged folder (a `git pull` during a live session) --------------------------------


@pytest.fixture
def live(repo: Repo, tmp_path: Path) -> Repo:
    """A worktree SessionStart engaged (as after the first Claude Code session)."""
    session_start(repo)
    assert (repo.path / ".cortex" / "engaged").is_file()
    return repo


def test_pulled_turn_reads_link_is_not_truncated(live: Repo, outside: Path, tmp_path: Path, hook_path: str) -> None:
    """`.cortex/turn-reads` arrives as a link mid-session: the Stop hook truncated its target to 0 bytes."""
    (live.path / ".cortex" / "turn-reads").symlink_to(outside / "victim.txt")
    live.git("add", "-f", ".cortex/turn-reads")
    live.git("commit", "-q", "-m", "pulled")
    before = snapshot(outside)
    every_hook(live, hook_path, tmp_path)
    assert snapshot(outside) == before


@pytest.mark.parametrize(
    "name", ["blobs", "claims", "spool.jsonl", "index", "turn-reads", "substitution", "paused", "flush-after"]
)
def test_untracked_link_inside_an_engaged_folder_is_never_followed(
    live: Repo, outside: Path, tmp_path: Path, hook_path: str, name: str
) -> None:
    """Any entry of an engaged folder replaced by a link (untracked): hooks, flush, gc and CLI never go through it."""
    runtime = live.path / ".cortex"
    entry = runtime / name
    if entry.is_dir():
        for child in entry.iterdir():
            child.unlink()
        entry.rmdir()
    else:
        entry.unlink(missing_ok=True)
    entry.symlink_to(outside if name in ("blobs", "claims") else outside / "victim.txt")
    (outside / "00000000000000000002-1.jsonl").write_text(json.dumps({"v": 1, "t": 1, "blob": "1-1-1.json"}) + "\n")
    before = snapshot(outside)
    every_hook(live, hook_path, tmp_path)
    big = bash_payload(live, "make", failed=True, error="y" * 9000, tool_use="t-big-2")
    for _ in range(3):
        assert (
            run_hook(
                "cortex-capture.sh", big, hook_path, extra_env={"CORTEX_BIN": str(cortex_bin(tmp_path))}
            ).returncode
            == 0
        )
    cortex(live.path, "flush-spool")
    cortex(live.path, "substitution", "on")
    cortex(live.path, "substitution", "off")
    cortex(live.path, "gc", "--apply")
    cortex(live.path, "doctor")
    session_start(live)
    assert snapshot(outside) == before


def test_spool_blob_names_outside_the_hook_shape_are_refused(live: Repo, tmp_path: Path) -> None:
    """A spool line naming `../x` or any other name the hook never makes opens and removes nothing."""
    decoy = live.path / "keep.json"
    decoy.write_text('{"cwd": "/", "tool_name": "Read"}')
    blobs = live.path / ".cortex" / "blobs"
    (blobs / "id_rsa").write_bytes(SECRET)
    lines = [{"v": 1, "t": 1, "blob": name} for name in ("../../keep.json", "id_rsa", "..", "", "1-1-1.json/..")]
    (live.path / ".cortex" / "spool.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    run = cortex(live.path, "flush-spool", "--json")
    assert run.code == 0 and run.data()["skipped"] == len(lines)
    assert decoy.read_text() == '{"cwd": "/", "tool_name": "Read"}' and (blobs / "id_rsa").read_bytes() == SECRET


def test_runtime_folder_and_files_are_private(live: Repo, tmp_path: Path, hook_path: str) -> None:
    """The folder is 0700, every file Cortex or a hook creates in it 0600, and the store 0600 in a 0700 folder."""
    every_hook(live, hook_path, tmp_path)
    run_hook("cortex-capture.sh", bash_payload(live, "ls", tool_use="t-ls"), hook_path)
    runtime = live.path / ".cortex"
    assert runtime.stat().st_mode & 0o777 == 0o700
    modes = {str(p.relative_to(runtime)): p.stat().st_mode & 0o777 for p in runtime.rglob("*")}
    assert "engaged" in modes and "spool.jsonl" in modes
    assert {name: mode for name, mode in modes.items() if mode not in (0o600, 0o700)} == {}
    db = Path(describe_store(live.path).path)
    assert db.stat().st_mode & 0o777 == 0o600 and db.parent.stat().st_mode & 0o777 == 0o700


def test_flush_deletes_raw_spool_and_blobs_once_committed(live: Repo, tmp_path: Path, hook_path: str) -> None:
    """After a flush nothing raw is left in the runtime folder: no spool, no claim, no blob holds the payload."""
    marker = "RAW-PAYLOAD-MARKER-7f3a"
    run_hook("cortex-capture.sh", bash_payload(live, f"echo {marker}", stdout=marker * 400, tool_use="t-1"), hook_path)
    run_hook("cortex-capture.sh", bash_payload(live, f"echo {marker}", tool_use="t-2"), hook_path)
    run_hook("cortex-capture.sh", {**bash_payload(live, "x", tool_use="t-3"), "tool_response": [marker]}, hook_path)
    assert cortex(live.path, "flush-spool").code == 0
    runtime = live.path / ".cortex"
    leftovers = [
        str(p.relative_to(runtime)) for p in runtime.rglob("*") if p.is_file() and marker.encode() in p.read_bytes()
    ]
    assert leftovers == []
