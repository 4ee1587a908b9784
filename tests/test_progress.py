"""Progress bars: drawn on stderr for a person at a terminal, nothing when piped or with --json,
and rich never loaded by the engine or a hook path."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from cortex_engine.base import settings

from .conftest import Repo

ROOT = Path(__file__).resolve().parent.parent
COUNT = 1200


def export_file(tmp_path: Path, scope: str) -> Path:
    """A JSON Lines export of COUNT insights (enough for a bar)."""
    path = tmp_path / "many.jsonl"
    lines = [json.dumps({"cortex_export": 1})]
    lines += [
        json.dumps(
            {
                "id": f"00000000-0000-4000-8000-{n:012d}",
                "scope": scope,
                "kind": "insight",
                "timestamp": f"2026-08-01T00:{n // 60 % 60:02d}:{n % 60:02d}Z",
                "content": f"fact number {n}",
            }
        )
        for n in range(COUNT)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def run(repo: Repo, *args: str, tty: bool) -> tuple[int, str, bytes]:
    """Run the CLI with stdout piped and stderr a terminal (tty) or a pipe; returns (code, stdout, stderr)."""
    # The bar is for applying notes: an import applies them at once only when arrivals need no review.
    settings.write_review_arrivals("none")  # the user's settings file, in this test's CORTEX_HOME
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm", "COLUMNS": "100"}
    if not tty:
        done = subprocess.run(
            [sys.executable, "-m", "cortex_engine.adapters.cli", *args],
            cwd=repo.path,
            env=env,
            capture_output=True,
            timeout=120,
        )
        return done.returncode, done.stdout.decode(), done.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cortex_engine.adapters.cli", *args],
        cwd=repo.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    out = proc.stdout.read().decode() if proc.stdout else ""
    os.close(master)
    return proc.wait(timeout=120), out, err


def test_import_shows_a_bar_only_on_a_terminal(repo: Repo, tmp_path: Path) -> None:
    """Importing 1200 notes: a bar on a terminal's stderr; nothing on a pipe; nothing with --json."""
    scope = f"project:{repo.path}"
    path = export_file(tmp_path, scope)
    code, out, err = run(repo, "import", str(path), tty=True)
    assert code == 0 and f"Imported {COUNT} note(s)" in out
    assert b"importing" in err and f"{COUNT}/{COUNT}".encode() in err
    code, out, err = run(repo, "import", str(path), "--json", tty=True)
    assert code == 0 and json.loads(out)["already_present"] == COUNT and err == b""
    code, out, err = run(repo, "export", tty=False)
    assert code == 0 and err == b"" and len(out.splitlines()) == COUNT + 1


def test_rich_is_not_loaded_without_a_terminal(repo: Repo, tmp_path: Path) -> None:
    """Piped, the CLI adapter never imports rich for import/export (the engine takes a plain callback)."""
    path = export_file(tmp_path, f"project:{repo.path}")
    code = (
        "import sys, io\nfrom cortex_engine.adapters import cli\n"
        f"cli.main(['import', {str(path)!r}])\ncli.main(['export', '-o', {str(tmp_path / 'out.jsonl')!r}])\n"
        "print('LOADED', 'rich' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=repo.path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.stdout.strip().splitlines()[-1] == "LOADED False", done.stderr
