"""Is Cortex byte-compiled when it is installed from a wheel (pip, pipx)? And what does that buy a one-shot start?

Usage:
    python bench/bytecode.py [--tree TREE] [--runs N]

Builds a wheel of TREE (`pip wheel`, the same build pipx runs), installs it into a fresh virtual environment
with pip's default options, then reports: how many of the installed `cortex_engine` modules have a `.pyc` for
this interpreter, whether importing the engine rewrote any of them (a stale or missing one would be rewritten),
and the CPU of `import cortex_engine.engine` with that bytecode against a copy without it (every start then
compiles). pip compiles at install unless told `--no-compile`; `uv tool install` only with `--compile-bytecode`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path


def cpu_ms(python: Path, code: str, env: dict[str, str], cwd: Path) -> float:
    """CPU milliseconds of one interpreter running `code` in `cwd` (away from any source checkout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(python), "-c", code], env=env, check=True, capture_output=True, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def main(argv: list[str] | None = None) -> int:
    """Print the figures as JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cortex-bytecode-") as scratch:
        root = Path(scratch)
        build = root / "src"
        shutil.copytree(args.tree, build, ignore=shutil.ignore_patterns(".git", "__pycache__", "build", "*.egg-info"))
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(build), "-w", str(root / "dist")],
            check=True,
            capture_output=True,
        )
        (wheel,) = (root / "dist").glob("*.whl")
        subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
        python = root / "venv" / "bin" / "python"
        subprocess.run(
            [str(python), "-m", "pip", "install", "--no-deps", "-q", str(wheel)], check=True, capture_output=True
        )
        purelib = Path(
            subprocess.run(
                [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
        )
        package = purelib / "cortex_engine"
        tag = sys.implementation.cache_tag
        sources = sorted(p.stem for p in package.glob("*.py"))
        compiled = sorted(p.name.split(".")[0] for p in (package / "__pycache__").glob(f"*.{tag}.pyc"))
        stamps = {p: p.stat().st_mtime_ns for p in (package / "__pycache__").glob("*.pyc")}
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
        where = subprocess.run(
            [
                str(python),
                "-c",
                "import cortex_engine.engine, cortex_engine.adapters.cli; print(cortex_engine.__file__)",
            ],
            env=env,
            check=True,
            capture_output=True,
            text=True,
            cwd=root,
        ).stdout.strip()
        assert Path(where).is_relative_to(package), where
        rewritten = [p.name for p, stamp in stamps.items() if p.stat().st_mtime_ns != stamp]
        bare = root / "bare"
        shutil.copytree(package, bare / "cortex_engine", ignore=shutil.ignore_patterns("__pycache__"))
        no_bytecode = {**env, "PYTHONPATH": str(bare), "PYTHONDONTWRITEBYTECODE": "1"}
        samples: dict[str, list[float]] = {"with_bytecode_ms": [], "without_bytecode_ms": []}
        for _ in range(args.runs):
            samples["with_bytecode_ms"].append(cpu_ms(python, "import cortex_engine.engine", env, root))
            samples["without_bytecode_ms"].append(cpu_ms(python, "import cortex_engine.engine", no_bytecode, root))
    report = {
        "installer": "pip install <wheel> (defaults)",
        "python": sysconfig.get_python_version(),
        "modules": len(sources),
        "compiled": len(compiled),
        "missing": sorted(set(sources) - set(compiled)),
        "rewritten_on_first_import": rewritten,
        **{key: round(statistics.median(values), 1) for key, values in samples.items()},
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
