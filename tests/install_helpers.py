"""Shared helpers for the install and doctor tests: run the real CLI against a temp home, snapshot trees."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, Run, cortex_bin, run_in_process

__all__ = [
    "NOW",
    "ROOT",
    "backup_of",
    "cortex",
    "cortex_bin",
    "cortex_process",
    "commands",
    "digest",
    "settings",
    "tree",
]

NOW = "2026-08-02T18:00:00Z"


def cortex(cwd: Path, *args: str, bin_path: Path | None = None, env: dict[str, str] | None = None) -> Run:
    """The command line in `cwd` with the test's HOME/CORTEX_HOME and a pinned clock, run in this process (see
    `tests.conftest.run_in_process`); `cortex_process` starts the real executable where the process is the point."""
    extra = {"CORTEX_NOW": NOW, **(env or {})}
    if bin_path is not None:
        extra["CORTEX_INSTALL_BIN"] = str(bin_path)
    return run_in_process(cwd, list(args), extra)


def cortex_process(cwd: Path, *args: str, bin_path: Path | None = None, env: dict[str, str] | None = None) -> Run:
    """Run the real command line in `cwd` as its own process with the test's HOME/CORTEX_HOME and a pinned clock."""
    full = {**os.environ, "CORTEX_NOW": NOW, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(ROOT), **(env or {})}
    if bin_path is not None:
        full["CORTEX_INSTALL_BIN"] = str(bin_path)
    done = subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", *args], cwd=cwd, env=full, capture_output=True, timeout=120
    )
    return Run(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))


def tree(*roots: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file under the roots: path → (content, mode, mtime_ns). Directories are listed too (empty bytes)."""
    found: dict[str, tuple[bytes, int, int]] = {}
    for root in roots:
        if not root.exists():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for name in dirnames:
                found[os.path.join(dirpath, name) + "/"] = (b"", 0, 0)
            for name in filenames:
                path = os.path.join(dirpath, name)
                st = os.lstat(path)
                with open(path, "rb") as handle:
                    found[path] = (handle.read(), st.st_mode, st.st_mtime_ns)
    return found


def digest(snapshot: dict[str, tuple[bytes, int, int]]) -> str:
    """One hash over a tree snapshot (paths, bytes, modes, mtimes)."""
    h = hashlib.sha256()
    for path in sorted(snapshot):
        data, mode, mtime = snapshot[path]
        h.update(f"{path}\0{mode}\0{mtime}\0".encode())
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def settings(path: Path) -> dict:
    """A settings file parsed."""
    return json.loads(path.read_text(encoding="utf-8"))


def commands(data: dict, event: str) -> list[tuple[object, str]]:
    """(matcher, command) of every hook of an event."""
    return [
        (group.get("matcher"), hook["command"])
        for group in data.get("hooks", {}).get(event, [])
        for hook in group["hooks"]
    ]


def backup_of(path: Path, number: int = 0) -> Path:
    """Where install keeps the copy of `path` it replaced: under Cortex's home (`$CORTEX_HOME/backups`), mirroring
    the file's real path, `.bak` then `.bak.1`, `.bak.2`, …"""
    real = Path(os.path.realpath(path))
    mirrored = Path(os.environ["CORTEX_HOME"]) / "backups" / real.relative_to(real.anchor)
    return mirrored.with_name(mirrored.name + (".bak" if number == 0 else f".bak.{number}"))
