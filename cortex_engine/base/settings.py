"""Every `CORTEX_*` environment variable Python reads, read here and nowhere else (the hook scripts read
`CORTEX_BIN` themselves; it is listed here so that it is documented), and the user-level settings file
(`<home>/settings.json`, beside the stores). Standard library only (hook paths import it).

The review policy (which arrivals wait for a person) is read from that file, never from the environment: the
environment belongs to whoever started the process (an agent's shell among them), the file to the user, and only
`cortex review-policy`, at a person's terminal, lowers it.

Each function reads the environment when called, never at import: a test, the demo or a long-lived server
sees the value in force at that moment. A blank value is the same as an unset one, and a value that does not
parse falls back to the default rather than failing (a hook must never stop on a typo in a shell profile).
Switches (`CORTEX_SEMANTIC` among them) are on unless set to one of `OFF`'s spellings. `DOCUMENTED` is the table the
README's Settings section shows (a test keeps the two equal).
"""

from __future__ import annotations

import os
from pathlib import Path

HOME = "CORTEX_HOME"
NOW = "CORTEX_NOW"
WAL_MAX_BYTES = "CORTEX_WAL_MAX_BYTES"
DECISIONS_DIR = "CORTEX_DECISIONS_DIR"
SUBAGENT_BRIEF = "CORTEX_SUBAGENT_BRIEF"
STOP_NUDGE = "CORTEX_STOP_NUDGE"
GC_AUTO = "CORTEX_GC_AUTO"
INSTALL_BIN = "CORTEX_INSTALL_BIN"
HOOK_BIN = "CORTEX_BIN"  # read by the hook scripts themselves (bash), listed here so that it is documented
GC_EVENT_DAYS = "CORTEX_GC_EVENT_DAYS"
GC_RETRIEVAL_LOG_DAYS = "CORTEX_GC_RETRIEVAL_LOG_DAYS"
GC_RETRIEVAL_LOG_KEEP = "CORTEX_GC_RETRIEVAL_LOG_KEEP"
GC_SPOOL_SEEN_DAYS = "CORTEX_GC_SPOOL_SEEN_DAYS"
GC_ARCHIVED_DAYS = "CORTEX_GC_ARCHIVED_DAYS"
SEMANTIC = "CORTEX_SEMANTIC"
EMBEDDING_MODEL = "CORTEX_EMBEDDING_MODEL"

OFF = ("0", "off", "false", "no", "never", "disabled")
"""The spellings (any case) that turn a switch off."""

RETENTION_DAYS = {
    GC_EVENT_DAYS: 30,
    GC_RETRIEVAL_LOG_DAYS: 30,
    GC_RETRIEVAL_LOG_KEEP: 2000,
    GC_SPOOL_SEEN_DAYS: 30,
    GC_ARCHIVED_DAYS: 90,
}
"""`cortex gc`'s windows and their defaults (whole days, except the retrieval log's KEEP: a row count)."""

DOCUMENTED = {
    HOME: "where stores live (`~/.cortex` when unset): `<home>/projects/<label>-<id>/cortex.db`",
    NOW: "pin the engine clock to an ISO-8601 time (tests, demos); unset: the system clock",
    WAL_MAX_BYTES: "WAL size past which a flush checkpoints (an integer ≥ 4096; default 4 MiB)",
    DECISIONS_DIR: "the shared decisions folder inside the repository (default `docs/decisions`; "
    "`git config cortex.decisionsDir` when unset)",
    SUBAGENT_BRIEF: "switch: brief a subagent from its dispatch description (on)",
    STOP_NUDGE: "switch: the end-of-turn nudge to save what the session learnt (on)",
    GC_AUTO: "switch: the once-a-day `cortex gc` at session start (on)",
    INSTALL_BIN: "the `cortex` command `cortex install` bakes into hooks (default: the running one)",
    HOOK_BIN: "the `cortex` command an installed hook script runs (read by the script; default: the baked one)",
    GC_EVENT_DAYS: f"gc: days an ended, summarized session keeps its events ({RETENTION_DAYS[GC_EVENT_DAYS]})",
    GC_RETRIEVAL_LOG_DAYS: f"gc: days of retrieval log kept beyond the newest KEEP rows "
    f"({RETENTION_DAYS[GC_RETRIEVAL_LOG_DAYS]})",
    GC_RETRIEVAL_LOG_KEEP: f"gc: newest retrieval log rows always kept ({RETENTION_DAYS[GC_RETRIEVAL_LOG_KEEP]})",
    GC_SPOOL_SEEN_DAYS: f"gc: days a spool replay key is kept ({RETENTION_DAYS[GC_SPOOL_SEEN_DAYS]})",
    GC_ARCHIVED_DAYS: f"gc: days before an archived, never-accessed item (not a note) is pruned "
    f"({RETENTION_DAYS[GC_ARCHIVED_DAYS]})",
    SEMANTIC: "recall ranks by meaning too when the `semantic` extra is installed (on; `0` keeps recall lexical and "
    "loads no model; measured in bench/RESULTS.md)",
    EMBEDDING_MODEL: "a model file to use instead of the extra's (it must still have the pinned SHA-256)",
}
"""Every variable Cortex reads, with what it does (README: Settings)."""


def _raw(name: str) -> str:
    """The variable's value, stripped; '' when unset or blank."""
    return os.environ.get(name, "").strip()


def _switch(name: str) -> bool:
    """A switch: on unless set to one of the OFF spellings."""
    return _raw(name).lower() not in OFF


def home() -> Path:
    """`$CORTEX_HOME` (expanded and resolved) when set, else `~/.cortex`."""
    raw = _raw(HOME)
    return Path(raw).expanduser().resolve() if raw else Path.home() / ".cortex"


def fixed_now() -> str:
    """`$CORTEX_NOW` as given ('' when unset); the clock parses it."""
    return _raw(NOW)


def wal_max_bytes(default: int, minimum: int) -> int:
    """`$CORTEX_WAL_MAX_BYTES` when it is an integer ≥ `minimum`, else `default`."""
    raw = _raw(WAL_MAX_BYTES)
    return int(raw) if raw.isdigit() and int(raw) >= minimum else default


def decisions_dir() -> str:
    """`$CORTEX_DECISIONS_DIR` as given ('' when unset); `sharing` validates it."""
    return _raw(DECISIONS_DIR)


def subagent_brief() -> bool:
    """Whether subagents are briefed from their dispatch (`CORTEX_SUBAGENT_BRIEF`)."""
    return _switch(SUBAGENT_BRIEF)


def stop_nudge() -> bool:
    """Whether the end of a turn may nudge the agent to save a note (`CORTEX_STOP_NUDGE`)."""
    return _switch(STOP_NUDGE)


def gc_auto() -> bool:
    """Whether session start runs retention at most once a day (`CORTEX_GC_AUTO`)."""
    return _switch(GC_AUTO)


def install_bin() -> str:
    """`$CORTEX_INSTALL_BIN` as given ('' when unset); `wiring` makes it absolute."""
    return _raw(INSTALL_BIN)


REVIEW_CHOICES = ("others", "all", "none")
"""The review policies, the first the default: `others` (a decision file waits unless this store published it, and
every import waits), `all` (every decision file waits too) and `none` (nothing waits: a team that trusts its
repository)."""
REVIEW_STRICTNESS = {"none": 0, "others": 1, "all": 2}
"""How much each policy holds for a person: moving to a lower number lowers the review (a person's act)."""
REVIEW_WORDS = {
    "others": "decision files this store did not publish, and every import, wait in `cortex inbox` for you",
    "all": "every decision file and every import waits in `cortex inbox` for you",
    "none": "decision files by others and imports apply at once, without your review",
}
"""What each review policy means, in the words doctor and status use."""
SETTINGS_FILE = "settings.json"
REVIEW_KEY = "review_arrivals"
_MAX_SETTINGS_BYTES = 64 * 1024


def settings_file(home_dir: Path | None = None) -> Path:
    """The user-level settings file: `settings.json` in Cortex's home (beside the stores it governs)."""
    return (home_dir if home_dir is not None else home()) / SETTINGS_FILE


def _settings_object(path: Path) -> tuple[dict[str, object] | None, str | None]:
    """(the file's JSON object, None), (None, None) when there is no file, or (None, why it cannot be read)."""
    import json

    try:
        with open(path, "rb") as handle:
            raw = handle.read(_MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror or exc.__class__.__name__}"
    if len(raw) > _MAX_SETTINGS_BYTES:
        return None, f"{path} is over {_MAX_SETTINGS_BYTES // 1024} KiB"
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, f"{path} is not JSON"
    if not isinstance(value, dict):
        return None, f"{path} does not hold a JSON object"
    return value, None


def review_policy(home_dir: Path | None = None) -> tuple[str, str | None]:
    """(the review policy, a problem with the settings file or None).

    No file, or a file without the key: `others`, the default. A file that cannot be read or names no known policy
    resolves to the strictest, `all` (never to a policy nobody chose), and the problem says why (doctor shows it).
    """
    path = settings_file(home_dir)
    found, problem = _settings_object(path)
    if problem is not None:
        return "all", problem
    value = (found or {}).get(REVIEW_KEY)
    if value is None:
        return REVIEW_CHOICES[0], None
    mode = value.strip().lower() if isinstance(value, str) else ""
    if mode not in REVIEW_CHOICES:
        return "all", f"{path} names no known review policy ({REVIEW_KEY}: {json_text(value)})"
    return mode, None


def json_text(value: object) -> str:
    """A value as JSON, cut to 60 characters (for a message)."""
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def describe_review(mode: str, problem: str | None = None) -> str:
    """The review policy in one sentence (doctor, `cortex status`, `cortex review-policy`)."""
    words = REVIEW_WORDS.get(mode, REVIEW_WORDS["all"])
    return f"{mode}: {words}" + (f" ({problem}; read as `all`)" if problem else "")


def review_arrivals(home_dir: Path | None = None) -> str:
    """Which arrivals wait for a person: `others` (default), `all` or `none`, from the settings file."""
    return review_policy(home_dir)[0]


def write_review_arrivals(mode: str, home_dir: Path | None = None) -> Path:
    """Set the review policy in the settings file (other keys kept); returns the file. Written whole to a temporary
    file and renamed over the old one (a link at the name is replaced, not followed), readable by the user alone.

    The caller decides whether a person must confirm (`adapters/handlers/person.py`: lowering the review does).

    Raises:
        ValueError: `mode` is not one of `REVIEW_CHOICES`.
        OSError: the file cannot be written.
    """
    import json
    import tempfile

    if mode not in REVIEW_CHOICES:
        raise ValueError(f"review policy must be one of {', '.join(REVIEW_CHOICES)}")
    path = settings_file(home_dir)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    found, _ = _settings_object(path)
    body = json.dumps({**(found or {}), REVIEW_KEY: mode}, indent=2, sort_keys=True) + "\n"
    fd, temp = tempfile.mkstemp(prefix=".settings-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    return path


AGENT_SHELL = "CLAUDECODE"
"""Set by Claude Code in the environment of every command its agent runs (not a Cortex setting)."""


def in_agent_shell() -> bool:
    """Whether this process was started by a coding agent's shell tool (Claude Code sets `CLAUDECODE=1`)."""
    return bool(_raw(AGENT_SHELL))


def retention_days(name: str) -> int:
    """One of `RETENTION_DAYS`' windows: the variable when it is a whole number ≥ 1, else its default.

    Raises:
        KeyError: `name` is not one of the windows.
    """
    default = RETENTION_DAYS[name]
    try:
        value = int(_raw(name))
    except ValueError:
        return default
    return value if value >= 1 else default


def semantic() -> bool:
    """Whether the dense retriever may run when its extra is installed (`CORTEX_SEMANTIC`, a switch: on unless set
    to one of `OFF`'s spellings). With the cosine as a rerank feature, hybrid recall beats the lexical
    rank on LoCoMo, the commit-log replay and the anchor corpus, so having the extra is the opt-in."""
    return _raw(SEMANTIC).lower() not in OFF


def embedding_model() -> str:
    """`$CORTEX_EMBEDDING_MODEL` as given ('' when unset); `semantic.extra` checks its hash before it is run."""
    return _raw(EMBEDDING_MODEL)
