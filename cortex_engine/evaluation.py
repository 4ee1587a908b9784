"""Retrieval-quality harness: hermetic seeded suites, per-fixture metrics, and the fail-closed gate.

A suite (`eval/suites/<name>.json`) seeds a fresh scenario through the real engine: a temporary git
repository on branch `eval/<name>` holding the suite's app-graph files, a temporary Cortex home, and a
fixed scenario clock. Notes go through `Engine.note` and `Engine.resolve` (so contests and supersession
apply); other memory kinds are inserted as memory_items rows with their references extracted. Renames
and deletions are committed with `git mv` / `git rm` after seeding, so freshness sees a real history.

Every fixture and surface probe runs against the same freshly seeded state (the store is restored from
a snapshot before each probe), so a probe's reads never reinforce what a later probe ranks.

The gate compares each suite with its locked baseline (`eval/baselines/<name>.json`) and fails closed on
anything it cannot judge. Standard library only.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from .clock import iso, parse_iso
from .errors import CortexError
from .memory import KIND_WEIGHTS, NOTE_KINDS
from .tokens import estimate_tokens

RESULT_SCHEMA = 1
"""Version of the evaluation-result and baseline JSON shape."""

GATED_METRICS: dict[str, int] = {"top1_hit": -1, "recall_at_3": -1, "output_tokens": 1}
"""Gated metrics and the direction that fails: -1 fails on a drop, +1 fails on a rise."""

REPORTED_METRICS = ("noise_count", "stale_count")
"""Metrics recorded and reported but never gated."""

METRICS = (*GATED_METRICS, *REPORTED_METRICS)
COUNT_METRICS = frozenset({"output_tokens", "noise_count", "stale_count"})
SURFACES = ("brief", "header", "full_state")
"""The whole rendered surfaces a suite may assert on."""

RECALL_DEPTH = 20_000
"""The budget of the ranking probe: high enough that recall keeps every result it retrieved."""

RANK_DEPTH = 5
"""How deep the gate compares a fixture's ranking with its baseline's (nDCG@RANK_DEPTH)."""

MAX_RELEVANT = 3
REGENERATE_REMINDER = "Baseline-Regenerated: <why this quality change is intended>"
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_GIT_REDIRECTS = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
    "GIT_NAMESPACE", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CEILING_DIRECTORIES",
)
_SUITE_KEYS = {"_comment", "seed", "fixtures", "surfaces", "expect_states"}
_SEED_KEYS = {
    "_comment", "now", "scope", "items", "app_graph", "renames", "deletions", "distractors", "reads", "sessions",
    "snapshots", "merges", "shared", "edits",
}
_SHARED_KEYS = {"_comment", "id", "file", "text"}
_ITEM_KEYS = {"_comment", "id", "kind", "subject", "text", "alternatives", "resolve", "age_days", "created_at", "branch"}
_SESSION_KEYS = {"_comment", "host", "age_days", "events"}
_EVENT_KEYS = {"_comment", "id", "kind", "bash", "exit", "stdout", "stderr", "summary", "subagent", "conclusion", "edit"}
_EVENT_ACTIONS = ("bash", "summary", "subagent", "edit")
_EVENT_KINDS = {
    "bash": ("command_run", "episode:command_failure", "episode:test_cycle"),
    "summary": ("episode:session_summary",),
    "subagent": ("episode:subagent_conclusion",),
    "edit": (),
}
"""What each captured event can produce, so a label names exactly one item the real pipeline wrote."""
_SNAPSHOT_KINDS = ("branch_snapshot", "project_snapshot")
_DISTRACTOR_KEYS = {"_comment", "count", "seed", "words", "max_age_days"}
_READ_KEYS = {"_comment", "topic", "times"}
TIERS = ("pinned", "hot", "warm", "cold", "archived")
MAX_DISTRACTORS = 1000
_FILLER = (
    "the of service worker retries cache layer request handler module config deploy review notes staging metrics "
    "dashboard timeout window batch schema field client server session token queue index build pipeline release "
    "latency budget owner team ticket follow-up rollout flag default path option plugin adapter format parser"
).split()
"""Filler vocabulary for generated distractors: common engineering words, shared across every suite."""
_FIXTURE_KEYS = {
    "_comment", "topic", "expected_top", "allowed", "forbidden", "budget", "max_output_tokens", "fresh_after",
    "expect_output_contains", "expect_output_excludes",
}
_SURFACE_KEYS = {"_comment", "surface", "expect_contains", "expect_excludes", "max_tokens", "budget", "expect_budget"}


class SuiteError(CortexError):
    """A suite, baseline or manifest the harness cannot use as written."""

    code = "bad_suite"


# -- suite model -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeedItem:
    """One note to seed through the engine, as an agent would write it."""

    label: str
    kind: str
    text: str
    subject: str | None
    created: datetime
    alternatives: tuple[str, ...] = ()
    resolve: str | None = None
    branch: str | None = None

    @property
    def is_note(self) -> bool:
        """Whether the item is a note (every seeded item is; other kinds are captured through sessions)."""
        return self.kind.startswith("note:")


@dataclass(frozen=True)
class SeedEvent:
    """One thing an agent does in a captured session: a Bash call, an edit, a summary or a subagent's answer."""

    action: str
    value: str
    label: str | None = None
    kind: str | None = None
    exit: int = 0
    stdout: str = ""
    stderr: str = ""
    conclusion: str = ""


@dataclass(frozen=True)
class SeedSession:
    """A host session replayed through the real pipeline: SessionStart, hook payloads → spool → flush, the end."""

    host: str
    started: datetime
    events: tuple[SeedEvent, ...]


@dataclass(frozen=True)
class Fixture:
    """One recall query and what its ranking and output must show."""

    topic: str
    expected_top: str
    allowed: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    budget: int | None = None
    max_output_tokens: int | None = None
    fresh_after: datetime | None = None
    contains: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()

    @property
    def relevant(self) -> tuple[str, ...]:
        """The expected top item, then the allowed ones."""
        return (self.expected_top, *self.allowed)


@dataclass(frozen=True)
class SurfaceCheck:
    """Assertions on one whole rendered surface."""

    surface: str
    contains: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    max_tokens: int | None = None
    budget: int | None = None
    expect_budget: int | None = None
    """The budget the surface must report spending against (the documented default when `budget` is unset)."""


@dataclass(frozen=True)
class Suite:
    """A parsed, validated suite file."""

    name: str
    path: Path
    now: datetime
    branch: str
    items: tuple[SeedItem, ...]
    files: tuple[str, ...]
    renames: tuple[tuple[str, str], ...]
    deletions: tuple[str, ...]
    fixtures: tuple[Fixture, ...]
    surfaces: tuple[SurfaceCheck, ...]
    reads: tuple[tuple[str, int], ...] = ()
    expect_states: tuple[tuple[str, tuple[str, ...]], ...] = ()
    sessions: tuple[SeedSession, ...] = ()
    snapshots: tuple[tuple[str, str], ...] = ()
    """(kind, label) of the snapshots the session lifecycle leaves once every session has ended."""
    layer: str = "branch"
    """'branch': a branch of a seeded git repository; 'project': a folder outside git (the project layer)."""
    contents: tuple[tuple[str, str], ...] = ()
    """(path, text) of app-graph files seeded with this text instead of a placeholder line."""
    edits: tuple[tuple[str, str], ...] = ()
    """(path, text) written over files after seeding and the renames, committed before the deletions."""
    merges: tuple[str, ...] = ()
    """Branches merged (`git merge --no-ff`) into the suite's branch once seeded; the merge check then runs."""
    shared: tuple[tuple[str, str, str], ...] = ()
    """(label, path, text) of decision files committed once seeded, then read back as `(shared)` decisions."""

    def label_kinds(self) -> dict[str, str]:
        """Every label the suite defines (notes, captured events, snapshots) and the kind it names."""
        kinds = {item.label: item.kind for item in self.items}
        kinds.update((event_label, event_kind) for session in self.sessions for e in session.events
                     if (event_label := e.label) and (event_kind := e.kind))  # a labelled event always has its kind
        kinds.update((label, kind) for kind, label in self.snapshots)
        kinds.update((label, "note:decision") for label, _, _ in self.shared)
        return kinds

    def exercised_kinds(self) -> set[str]:
        """Kinds of the items some fixture names (as expected top, allowed or forbidden)."""
        by_label = self.label_kinds()
        return {by_label[ref] for f in self.fixtures for ref in (*f.relevant, *f.forbidden)}


def registered_kinds() -> list[str]:
    """Every memory_items kind the engine registers (the keys of KIND_WEIGHTS)."""
    return sorted(KIND_WEIGHTS)


def read_json(path: Path, what: str) -> Any:
    """Read one JSON file.

    Raises:
        SuiteError: the file is missing, unreadable or not valid JSON.
    """
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"cannot read {what} {path}: {exc.__class__.__name__}: {exc}") from exc
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise SuiteError(f"{what} {path} is not valid JSON: {exc}") from exc


def _fail(where: str, message: str) -> SuiteError:
    return SuiteError(f"{where}: {message}")


def _obj(value: Any, where: str, keys: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, "must be a JSON object")
    unknown = sorted(set(value) - keys)
    if unknown:
        raise _fail(where, f"unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(keys))})")
    return value


def _str(value: Any, where: str, *, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, "must be a non-empty string")
    return value


def _strs(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(where, "must be a list of non-empty strings")
    return tuple(value)


def _num(value: Any, where: str, *, lo: float, hi: float = math.inf, integer: bool = False) -> float:
    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok_type or not (lo <= value <= hi) or not math.isfinite(value):
        kind = "an integer" if integer else "a number"
        raise _fail(where, f"must be {kind} between {lo} and {hi}")
    return value


def _when(value: Any, where: str) -> datetime:
    stamp = parse_iso(value) if isinstance(value, str) else None
    if stamp is None:
        raise _fail(where, "must be an ISO-8601 time")
    return stamp


def load_suite(path: Path) -> Suite:
    """Parse and validate a suite file; anything ambiguous is refused.

    Raises:
        SuiteError: unreadable or invalid JSON, a missing seed or fixtures, an unknown key, kind,
            surface or item reference, or a fixture that could never pass.
    """
    name = path.stem
    if path.suffix != ".json" or not _NAME.match(name):
        raise SuiteError(f"{path}: suite files are named <lowercase-name>.json")
    data = _obj(read_json(path, "suite"), name, _SUITE_KEYS)
    if "seed" not in data:
        raise _fail(name, "has no seed (a suite without a seed scores nothing and would pass forever)")
    seed = _obj(data["seed"], f"{name}: seed", _SEED_KEYS)
    now = _when(seed.get("now"), f"{name}: seed.now")
    scope = _obj(seed.get("scope", {"type": "branch", "key": f"eval/{name}"}), f"{name}: seed.scope", {"type", "key"})
    layer = scope.get("type", "branch")
    if layer not in ("branch", "project"):
        raise _fail(name, "seed.scope.type must be 'branch' (a branch of a seeded repository) or 'project' (a folder "
                          "outside git)")
    if layer == "project" and ("key" in scope or any(k in seed for k in ("app_graph", "renames", "deletions", "edits"))):
        raise _fail(name, "a project suite runs outside git: it takes no scope key, app graph, renames or deletions")
    branch = "" if layer == "project" else _str(scope.get("key", f"eval/{name}"), f"{name}: seed.scope.key") or ""
    raw_items = seed.get("items", [])
    raw_sessions = seed.get("sessions", [])
    if not isinstance(raw_items, list) or not isinstance(raw_sessions, list) or not (raw_items or raw_sessions):
        raise _fail(name, "seed.items and seed.sessions must be lists, and at least one must be non-empty")
    items = tuple(_load_item(raw, f"{name}: seed.items[{i}]", now) for i, raw in enumerate(raw_items))
    sessions = tuple(_load_session(raw, f"{name}: seed.sessions[{i}]", now) for i, raw in enumerate(raw_sessions))
    raw_snapshots = _obj(seed.get("snapshots", {}), f"{name}: seed.snapshots", {"_comment", *_SNAPSHOT_KINDS})
    snapshots = tuple((kind, _str(raw_snapshots[kind], f"{name}: seed.snapshots.{kind}") or "")
                      for kind in _SNAPSHOT_KINDS if kind in raw_snapshots)
    if snapshots and not sessions:
        raise _fail(name, "seed.snapshots needs seed.sessions (snapshots are what ended sessions leave)")
    if layer == "project" and any(item.branch for item in items):
        raise _fail(name, "a project suite has no branches to write on")
    if any(item.branch == branch for item in items):
        raise _fail(name, f"an item's branch is the suite's own branch {branch!r} (leave branch out instead)")
    if "distractors" in seed:
        items += distractors(_obj(seed["distractors"], f"{name}: seed.distractors", _DISTRACTOR_KEYS),
                             f"{name}: seed.distractors", now)
    labels = [item.label for item in items]
    labels += [e.label for session in sessions for e in session.events if e.label]
    labels += [label for _, label in snapshots]
    labels += [found for entry in seed.get("shared") or []
               if isinstance(entry, dict) and isinstance(found := entry.get("id"), str) and found]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise _fail(name, f"duplicate item id(s) {', '.join(duplicates)}")
    graph = _obj(seed.get("app_graph", {}), f"{name}: seed.app_graph", {"_comment", "files", "contents"})
    files = _strs(graph.get("files"), f"{name}: seed.app_graph.files")
    raw_contents = _obj(graph.get("contents", {}), f"{name}: seed.app_graph.contents", set(files))
    contents = tuple((path, _str(text, f"{name}: seed.app_graph.contents[{path!r}]") or "")
                     for path, text in sorted(raw_contents.items()))
    renames = []
    for i, raw in enumerate(seed.get("renames") or []):
        rename = _obj(raw, f"{name}: seed.renames[{i}]", {"old_path", "new_path"})
        old = _str(rename.get("old_path"), f"{name}: seed.renames[{i}].old_path") or ""
        new = _str(rename.get("new_path"), f"{name}: seed.renames[{i}].new_path") or ""
        renames.append((old, new))
    deletions = _strs(seed.get("deletions"), f"{name}: seed.deletions")
    edits = []
    for i, raw in enumerate(seed.get("edits") or []):
        edit = _obj(raw, f"{name}: seed.edits[{i}]", {"path", "text"})
        edits.append((_str(edit.get("path"), f"{name}: seed.edits[{i}].path") or "",
                      _str(edit.get("text"), f"{name}: seed.edits[{i}].text") or ""))
    _check_paths(name, files, renames, deletions, [path for path, _ in edits])

    raw_fixtures = data.get("fixtures")
    if not isinstance(raw_fixtures, list) or not raw_fixtures:
        raise _fail(name, "has no fixtures (a suite without fixtures scores nothing and would pass forever)")
    fixtures = tuple(_load_fixture(raw, f"{name}: fixtures[{i}]", set(labels)) for i, raw in enumerate(raw_fixtures))
    topics = [f.topic.strip().lower() for f in fixtures]
    if len(set(topics)) != len(topics):
        raise _fail(name, "two fixtures share a topic (fixtures are keyed by topic in the baseline)")
    raw_surfaces = data.get("surfaces", [])
    if not isinstance(raw_surfaces, list):
        raise _fail(name, "surfaces must be a list")
    surfaces = tuple(_load_surface(raw, f"{name}: surfaces[{i}]") for i, raw in enumerate(raw_surfaces))
    reads = []
    for i, raw in enumerate(seed.get("reads") or []):
        read = _obj(raw, f"{name}: seed.reads[{i}]", _READ_KEYS)
        topic = _str(read.get("topic"), f"{name}: seed.reads[{i}].topic") or ""
        reads.append((topic, int(_num(read.get("times", 1), f"{name}: seed.reads[{i}].times", lo=1, hi=50, integer=True))))
    raw_states = data.get("expect_states", {})
    if not isinstance(raw_states, dict):
        raise _fail(name, "expect_states must map item ids to lists of tiers")
    states = []
    for label, tiers in sorted(raw_states.items()):
        where = f"{name}: expect_states[{label!r}]"
        if label == "_comment":
            continue
        if label not in labels:
            raise _fail(where, "names an item the seed does not define")
        allowed_tiers = _strs(tiers, where)
        if not allowed_tiers or any(t not in TIERS for t in allowed_tiers):
            raise _fail(where, f"must list one or more of {', '.join(TIERS)}")
        states.append((label, allowed_tiers))
    merges = _strs(seed.get("merges"), f"{name}: seed.merges")
    seeded_branches = {item.branch for item in items if item.branch}
    if any(m not in seeded_branches for m in merges):
        raise _fail(name, "seed.merges names a branch no seed item is written on")
    shared = []
    for i, raw in enumerate(seed.get("shared") or []):
        entry = _obj(raw, f"{name}: seed.shared[{i}]", _SHARED_KEYS)
        file = _str(entry.get("file"), f"{name}: seed.shared[{i}].file") or ""
        if not re.fullmatch(r"docs/decisions/[A-Za-z0-9._-]+\.md", file):
            raise _fail(name, f"seed.shared[{i}].file must be docs/decisions/<name>.md")
        shared.append((_str(entry.get("id"), f"{name}: seed.shared[{i}].id") or "", file,
                       _str(entry.get("text"), f"{name}: seed.shared[{i}].text") or ""))
    if shared and layer != "branch":
        raise _fail(name, "seed.shared needs a branch suite (decision files are read from a git HEAD)")
    return Suite(name, path, now, branch, items, files, tuple(renames), deletions, fixtures, surfaces,
                 tuple(reads), tuple(states), sessions, snapshots, layer, contents, tuple(edits), merges, tuple(shared))


def _load_session(raw: Any, where: str, now: datetime) -> SeedSession:
    session = _obj(raw, where, _SESSION_KEYS)
    host = _str(session.get("host"), f"{where}.host") or ""
    started = now - timedelta(days=_num(session.get("age_days", 0), f"{where}.age_days", lo=0, hi=3650))
    raw_events = session.get("events")
    if not isinstance(raw_events, list) or not raw_events:
        raise _fail(where, "events must be a non-empty list")
    events = tuple(_load_event(e, f"{where}.events[{i}]") for i, e in enumerate(raw_events))
    if started + timedelta(minutes=len(events)) > now:
        raise _fail(where, "its events (one a minute) would run past the scenario clock; make it older")
    return SeedSession(host, started, events)


def _load_event(raw: Any, where: str) -> SeedEvent:
    event = _obj(raw, where, _EVENT_KEYS)
    actions = [a for a in _EVENT_ACTIONS if a in event]
    if len(actions) != 1:
        raise _fail(where, f"must hold exactly one of {', '.join(_EVENT_ACTIONS)}")
    action = actions[0]
    value = _str(event[action], f"{where}.{action}") or ""
    label = _str(event.get("id"), f"{where}.id", required=False)
    kind = _str(event.get("kind"), f"{where}.kind", required=False)
    possible = _EVENT_KINDS[action]
    if label is not None:
        if kind is None and len(possible) == 1:
            kind = possible[0]
        if kind not in possible:
            raise _fail(where, f"a {action} event labels one of: {', '.join(possible) or 'nothing'} (give kind)")
    elif kind is not None:
        raise _fail(where, "kind without id names nothing")
    if action != "bash" and any(k in event for k in ("exit", "stdout", "stderr")):
        raise _fail(where, "exit, stdout and stderr belong to bash events")
    if ("conclusion" in event) != (action == "subagent"):
        raise _fail(where, "a subagent event needs its conclusion (and only it has one)")
    return SeedEvent(
        action, value, label, kind,
        exit=int(_num(event.get("exit", 0), f"{where}.exit", lo=0, hi=255, integer=True)),
        stdout=str(event.get("stdout", "")), stderr=str(event.get("stderr", "")),
        conclusion=_str(event.get("conclusion"), f"{where}.conclusion", required=False) or "",
    )


def distractors(spec: dict[str, Any], where: str, now: datetime) -> tuple[SeedItem, ...]:
    """Deterministic distractor notes: each shares one of `words` with the answers, plus filler.

    The same spec always gives the same items (ids `distractor-<n>`), so baselines stay stable; they make
    top-1 and recall@3 measure ranking among look-alikes rather than mere presence.
    """
    count = int(_num(spec.get("count"), f"{where}.count", lo=1, hi=MAX_DISTRACTORS, integer=True))
    rng = random.Random(int(_num(spec.get("seed", 0), f"{where}.seed", lo=0, hi=2**31, integer=True)))
    words = _strs(spec.get("words"), f"{where}.words")
    if not words:
        raise _fail(where, "words must name the terms distractors share with the answers")
    max_age = float(_num(spec.get("max_age_days", 365), f"{where}.max_age_days", lo=0, hi=3650))
    # Filler never carries a shared word in another form ("deploy" for "deploys"): one shared term per distractor.
    stems = {w.lower()[:4] for w in words}
    filler = [f for f in _FILLER if f[:4] not in stems]
    out = []
    for n in range(count):
        shared = [rng.choice(words)]
        body = rng.sample(filler, k=rng.randint(5, 10))
        text = " ".join(rng.sample([*shared, *body], k=len(shared) + len(body))) + f" (case {n})"
        created = now - timedelta(days=round(rng.uniform(0, max_age), 3))
        if rng.random() < 0.25:
            out.append(SeedItem(f"distractor-{n}", "note:decision", text, f"{rng.choice(body)} {n}", created))
        else:
            out.append(SeedItem(f"distractor-{n}", "note:insight", text, None, created))
    return tuple(out)


def _load_item(raw: Any, where: str, now: datetime) -> SeedItem:
    item = _obj(raw, where, _ITEM_KEYS)
    label = _str(item.get("id"), f"{where}.id") or ""
    where = f"{where} ({label})"
    kind = _str(item.get("kind"), f"{where}.kind") or ""
    if kind not in KIND_WEIGHTS:
        raise _fail(where, f"kind {kind!r} is not a registered memory kind ({', '.join(registered_kinds())})")
    if not kind.startswith("note:"):
        raise _fail(where, f"{kind} is not seeded directly: capture it through seed.sessions (commands, failures, "
                           "test cycles, summaries, subagent conclusions) or seed.snapshots, as the real pipeline does")
    if kind[5:] not in NOTE_KINDS:
        raise _fail(where, f"unknown note kind {kind!r}")
    text = _str(item.get("text"), f"{where}.text") or ""
    subject = _str(item.get("subject"), f"{where}.subject", required=False)
    if "age_days" in item and "created_at" in item:
        raise _fail(where, "give age_days or created_at, not both")
    if "created_at" in item:
        created = _when(item["created_at"], f"{where}.created_at")
    else:
        created = now - timedelta(days=_num(item.get("age_days", 0), f"{where}.age_days", lo=0, hi=3650))
    if created > now:
        raise _fail(where, "is created after the scenario clock")
    resolve = item.get("resolve")
    if resolve is not None and resolve not in ("resolved", "superseded"):
        raise _fail(where, "resolve must be 'resolved' or 'superseded'")
    branch = _str(item.get("branch"), f"{where}.branch", required=False)
    if branch is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,99}", branch):
        raise _fail(where, "branch must be a plain branch name")
    return SeedItem(
        label, kind, text, subject, created, branch=branch,
        alternatives=_strs(item.get("alternatives"), f"{where}.alternatives"),
        resolve=resolve,
    )


def _load_fixture(raw: Any, where: str, labels: set[str]) -> Fixture:
    fx = _obj(raw, where, _FIXTURE_KEYS)
    topic = _str(fx.get("topic"), f"{where}.topic") or ""
    where = f"{where} ({topic!r})"
    expected = _str(fx.get("expected_top"), f"{where}.expected_top") or ""
    allowed = _strs(fx.get("allowed"), f"{where}.allowed")
    forbidden = _strs(fx.get("forbidden"), f"{where}.forbidden")
    unknown = sorted({expected, *allowed, *forbidden} - labels)
    if unknown:
        raise _fail(where, f"names item(s) the seed does not define: {', '.join(unknown)}")
    relevant = (expected, *allowed)
    if len(set(relevant)) != len(relevant) or set(relevant) & set(forbidden):
        raise _fail(where, "an item is named twice across expected_top, allowed and forbidden")
    if len(relevant) > MAX_RELEVANT:
        raise _fail(where, f"more than {MAX_RELEVANT} relevant items can never all be in the top 3")
    budget = fx.get("budget")
    max_out = fx.get("max_output_tokens")
    fresh = fx.get("fresh_after")
    return Fixture(
        topic, expected, allowed, forbidden,
        budget=None if budget is None else int(_num(budget, f"{where}.budget", lo=20, hi=20_000, integer=True)),
        max_output_tokens=None if max_out is None else int(_num(max_out, f"{where}.max_output_tokens", lo=1, integer=True)),
        fresh_after=None if fresh is None else _when(fresh, f"{where}.fresh_after"),
        contains=_strs(fx.get("expect_output_contains"), f"{where}.expect_output_contains"),
        excludes=_strs(fx.get("expect_output_excludes"), f"{where}.expect_output_excludes"),
    )


def _load_surface(raw: Any, where: str) -> SurfaceCheck:
    block = _obj(raw, where, _SURFACE_KEYS)
    surface = block.get("surface")
    if surface not in SURFACES:
        raise _fail(where, f"unknown surface {surface!r} (known: {', '.join(SURFACES)}); "
                           "its assertions would be read against nothing")
    check = SurfaceCheck(
        surface,
        contains=_strs(block.get("expect_contains"), f"{where}.expect_contains"),
        excludes=_strs(block.get("expect_excludes"), f"{where}.expect_excludes"),
        max_tokens=None if block.get("max_tokens") is None
        else int(_num(block["max_tokens"], f"{where}.max_tokens", lo=1, integer=True)),
        budget=None if block.get("budget") is None
        else int(_num(block["budget"], f"{where}.budget", lo=20, hi=20_000, integer=True)),
        expect_budget=None if block.get("expect_budget") is None
        else int(_num(block["expect_budget"], f"{where}.expect_budget", lo=1, integer=True)),
    )
    if not (check.contains or check.excludes or check.max_tokens is not None or check.expect_budget is not None):
        raise _fail(where, f"the {surface} block asserts nothing")
    return check


def _check_paths(name: str, files: tuple[str, ...], renames: list[tuple[str, str]], deletions: tuple[str, ...],
                 edited: list[str] | None = None) -> None:
    for path in (*files, *(p for pair in renames for p in pair), *deletions, *(edited or ())):
        parts = path.split("/")
        if path.startswith("/") or "\\" in path or any(p in ("", ".", "..", ".git") for p in parts):
            raise _fail(name, f"app-graph path {path!r} must be a plain relative path")
    present = set(files)
    for old, new in renames:
        if old not in present or new in present:
            raise _fail(name, f"rename {old} -> {new} needs {old} in the app graph and {new} not yet in it")
        present.discard(old)
        present.add(new)
    for path in edited or ():
        if path not in present:
            raise _fail(name, f"edit of {path} needs it in the app graph (after the renames)")
    for path in deletions:
        if path not in present:
            raise _fail(name, f"deletion of {path} needs it in the app graph")
        present.discard(path)


# -- the hermetic scenario ---------------------------------------------------------------------


class ScenarioClock:
    """A settable clock: seeding moves it to each item's time, probes run at the scenario's now."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        """The time the scenario is at."""
        return self.at


@contextmanager
def _git_isolated() -> Iterator[None]:
    """Keep an enclosing git invocation (e.g. a hook's GIT_DIR) from redirecting the scenario's git."""
    saved = {key: os.environ.pop(key) for key in _GIT_REDIRECTS if key in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def _git(repo: Path, now: datetime, *args: str) -> None:
    stamp = iso(now)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Cortex Eval", "GIT_AUTHOR_EMAIL": "eval@example.invalid", "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_NAME": "Cortex Eval", "GIT_COMMITTER_EMAIL": "eval@example.invalid", "GIT_COMMITTER_DATE": stamp,
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C",
    }
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SuiteError(f"git {' '.join(args[:2])} failed in the scenario repository: {done.stderr.strip()}")


class Scenario:
    """A seeded scenario: temp repository, temp Cortex home, engine, and a snapshot to probe from."""

    def __init__(self, suite: Suite, root: Path) -> None:
        """Build the repository and seed every item through the engine."""
        from .engine import Engine

        self.suite = suite
        self.clock = ScenarioClock(suite.now)
        self.repo = root / "repo"
        self.repo.mkdir()
        if suite.layer == "branch":
            _git(self.repo, suite.now, "init", "-q", "-b", suite.branch)
            contents = dict(suite.contents)
            for path in suite.files:
                target = self.repo / path
                target.parent.mkdir(parents=True, exist_ok=True)
                # Distinct, non-empty contents keep git's rename detection unambiguous.
                target.write_text(contents.get(path, f"// {path}: seeded by the {suite.name} eval suite\n"),
                                  encoding="utf-8")
            _git(self.repo, suite.now, "add", "-A")
            _git(self.repo, suite.now, "commit", "-q", "--allow-empty", "-m", "eval: app graph")
        self.home = root / "home"
        self.engine = Engine(self.repo, home=self.home, clock=self.clock)
        if self.engine.scope.type != suite.layer:
            self.engine.close()
            raise SuiteError(f"{suite.name}: the scenario folder {self.repo} resolved to a {self.engine.scope.type} scope, "
                             f"not {suite.layer} (is the temp dir inside a git repository?)")
        self.labels: dict[str, str] = {}
        for item in suite.items:
            self.clock.at = item.created
            self.labels[self.seed(item)] = item.label
        for session in suite.sessions:
            self.capture(session)
        if suite.sessions:
            # The probe runs in a session of its own: SessionStart ends the last seeded one (its summary and the
            # snapshots are written then, exactly as the next real session would write them).
            self.clock.at = suite.now
            self.engine.start_session("eval-probe")
            for kind, label in suite.snapshots:
                self.labels[self._newest(kind, set(), upsert=True)] = label
        self.clock.at = suite.now
        if suite.merges:
            self._merge(suite.merges)
        if suite.shared:
            self._share(suite.shared)
        self.engine.refresh()  # records the app graph at the seeded HEAD, so later moves diff against it
        if suite.renames:
            for old, new in suite.renames:
                target = self.repo / new
                target.parent.mkdir(parents=True, exist_ok=True)
                _git(self.repo, suite.now, "mv", old, new)
            _git(self.repo, suite.now, "commit", "-q", "-m", "eval: renames")
        if suite.edits:
            for path, text in suite.edits:
                (self.repo / path).write_text(text, encoding="utf-8")
            _git(self.repo, suite.now, "add", "-A")
            _git(self.repo, suite.now, "commit", "-q", "-m", "eval: edits")
        if suite.deletions:
            _git(self.repo, suite.now, "rm", "-q", *suite.deletions)
            _git(self.repo, suite.now, "commit", "-q", "-m", "eval: deletions")
        self.engine.refresh()
        for topic, times in suite.reads:
            self.read(topic, times)
        self._snapshot = sqlite3.connect(":memory:")
        self.engine.conn.backup(self._snapshot)

    def seed(self, item: SeedItem) -> str:
        """Write one item through the engine; returns its memory-item id."""
        if item.is_note and item.branch is not None:
            return self._seed_on_branch(item)
        written = self.engine.note(item.kind[5:], item.text, item.subject, list(item.alternatives) or None)
        if item.resolve is not None:
            self.engine.resolve(written.id, status=item.resolve)
        return written.item_id

    def capture(self, session: SeedSession) -> None:
        """Replay one host session through the real pipeline, one event a minute.

        SessionStart as the hook runs it, then each tool call as the payload Claude Code sends, appended to the
        worktree's spool in the capture hook's line format and flushed as the Stop hook flushes it; summaries
        through the engine's summarize (cortex_summarize), subagents through the SubagentStart/Stop handlers.
        """
        self.clock.at = session.started
        self.engine.start_session(session.host)
        for n, event in enumerate(session.events, start=1):
            self.clock.at = session.started + timedelta(minutes=n)
            before = self._ids(event.kind) if event.kind else set()
            if event.action == "summary":
                self.engine.summarize(event.value)
            elif event.action == "subagent":
                self._subagent(session.host, n, event)
            else:
                self._spool(self._payload(session.host, n, event))
                self.engine.flush_spool(turn_end=True)
            if event.label and event.kind:
                # A summary is rewritten in place when the session checkpoints again; everything else is new.
                upsert = event.kind == "episode:session_summary"
                self.labels[self._newest(event.kind, before, upsert=upsert)] = event.label

    def _payload(self, host: str, n: int, event: SeedEvent) -> dict[str, Any]:
        """The PostToolUse / PostToolUseFailure payload Claude Code sends for the event's tool call."""
        base = {"session_id": host, "transcript_path": "", "cwd": str(self.repo), "tool_use_id": f"{host}-{n}"}
        if event.action == "edit":
            target = self.repo / event.value
            return {**base, "hook_event_name": "PostToolUse", "tool_name": "Edit",
                    "tool_input": {"file_path": str(target), "old_string": "a", "new_string": "b"},
                    "tool_response": {"filePath": str(target)}}
        call = {**base, "tool_name": "Bash", "tool_input": {"command": event.value}}
        if event.exit:
            error = f"Command failed with exit code {event.exit}\n{event.stderr}".strip()
            return {**call, "hook_event_name": "PostToolUseFailure", "error": error, "is_interrupt": False}
        return {**call, "hook_event_name": "PostToolUse",
                "tool_response": {"stdout": event.stdout, "stderr": event.stderr, "interrupted": False}}

    def _spool(self, payload: dict[str, Any]) -> None:
        """Append one line to the worktree's spool exactly as the capture hook writes it."""
        from .capture import SPOOL, open_runtime, runtime_dir

        line = json.dumps({"v": 1, "t": self.clock.at.timestamp(), "p": payload}, ensure_ascii=False)
        with open_runtime(runtime_dir(self.repo)) as rt:  # the one way into .cortex/: no link is ever followed
            rt.append(SPOOL, (line + "\n").encode("utf-8"))

    def _subagent(self, host: str, n: int, event: SeedEvent) -> None:
        """SubagentStart, then SubagentStop with the subagent's last message, through the hook handlers."""
        from . import agents

        agent = {"session_id": host, "cwd": str(self.repo), "agent_id": f"{host}-agent-{n}", "agent_type": event.value}
        agents.subagent_start(self.engine, {**agent, "hook_event_name": "SubagentStart"})
        agents.subagent_stop(self.engine, {**agent, "hook_event_name": "SubagentStop", "stop_hook_active": False,
                                           "last_assistant_message": event.conclusion})

    def _ids(self, kind: str | None) -> set[str]:
        """Ids of every item of a kind (through the engine's read-only listing)."""
        if kind is None:
            return set()
        from .inspection import LIST_MAX

        return {str(i["id"]) for i in self.engine.list_memory(kinds=[kind], limit=LIST_MAX).items}

    def _newest(self, kind: str, before: set[str], *, upsert: bool = False) -> str:
        """The item of `kind` the last step wrote: the new one, or for an upserted kind the newest one."""
        from .inspection import LIST_MAX

        page = self.engine.list_memory(kinds=[kind], scopes=self.engine.scope_keys, limit=LIST_MAX).items
        fresh = [i for i in page if str(i["id"]) not in before]
        found = fresh or (page if upsert else [])
        if not found:
            raise SuiteError(f"{self.suite.name}: the pipeline wrote no {kind} item where the suite expects one")
        return str(found[0]["id"])

    def _seed_on_branch(self, item: SeedItem) -> str:
        """Write a note as an agent on another branch would: check it out, open an engine there, come back."""
        from .engine import Engine

        assert item.branch is not None
        exists = subprocess.run(["git", "rev-parse", "--verify", "-q", f"refs/heads/{item.branch}"], cwd=self.repo,
                                capture_output=True).returncode == 0
        _git(self.repo, self.clock.at, "checkout", "-q", *(() if exists else ("-b",)), item.branch)
        try:
            with Engine(self.repo, home=self.home, clock=self.clock) as other:
                written = other.note(item.kind[5:], item.text, item.subject, list(item.alternatives) or None)
                if item.resolve is not None:
                    other.resolve(written.id, status=item.resolve)
        finally:
            _git(self.repo, self.clock.at, "checkout", "-q", self.suite.branch)
        return written.item_id

    def _merge(self, branches: tuple[str, ...]) -> None:
        """Commit on each branch, merge it with `--no-ff`, then run the merge check as the next flush would.

        A merged note's label moves to the copy promoted into the suite's branch (its original stays behind).
        """
        from .engine import Engine

        for branch in branches:
            _git(self.repo, self.clock.at, "checkout", "-q", branch)
            _git(self.repo, self.clock.at, "commit", "-q", "--allow-empty", "-m", f"eval: work on {branch}")
            _git(self.repo, self.clock.at, "checkout", "-q", self.suite.branch)
            _git(self.repo, self.clock.at, "merge", "-q", "--no-ff", "-m", f"eval: merge {branch}", branch)
        self.engine.close()
        self.engine = Engine(self.repo, home=self.home, clock=self.clock)  # the scope's HEAD moved
        for promoted in self.engine.check_merges().promoted:
            original = f"notes:{promoted.source_note_id}"
            if original in self.labels and promoted.note_id:
                self.labels[f"notes:{promoted.note_id}"] = self.labels.pop(original)

    def _share(self, files: tuple[tuple[str, str, str], ...]) -> None:
        """Commit the decision files, reopen at the new HEAD and sync them as SessionStart would."""
        from .engine import Engine

        for _, path, text in files:
            target = self.repo / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        _git(self.repo, self.clock.at, "add", "-A")
        _git(self.repo, self.clock.at, "commit", "-q", "-m", "eval: shared decisions")
        self.engine.close()
        self.engine = Engine(self.repo, home=self.home, clock=self.clock)
        done = self.engine.sync_shared(force=True)
        by_path = dict(done.notes)
        for label, path, _ in files:
            if path not in by_path:
                raise SuiteError(f"{self.suite.name}: the shared decision file {path} was not imported "
                                 f"({dict(done.malformed).get(path, 'no decision written')})")
            self.labels[f"notes:{by_path[path]}"] = label

    def read(self, topic: str, times: int) -> None:
        """Recall a topic as an agent would (booked, so reads reinforce what they show)."""
        for _ in range(times):
            self.engine.recall(topic)

    def state_of(self, label: str) -> str:
        """The tier a seeded item is in now (through the engine's read-only inspection)."""
        item_id = next(i for i, name in self.labels.items() if name == label)
        return str(self.engine.inspect_memory(item_id).item["state"])

    def restore(self) -> None:
        """Put the store back exactly as seeded (undoing bookings and reinforcement of earlier probes)."""
        self._snapshot.backup(self.engine.conn)

    def close(self) -> None:
        """Close the engine and the snapshot."""
        self.engine.close()
        self._snapshot.close()


@contextmanager
def scenario(suite: Suite) -> Iterator[Scenario]:
    """Seed a suite in a fresh temporary directory; everything is removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="cortex-eval-")).resolve()
    built: Scenario | None = None
    try:
        with _git_isolated():
            built = Scenario(suite, root)
            yield built
    finally:
        if built is not None:
            built.close()
        shutil.rmtree(root, ignore_errors=True)


# -- running a suite ---------------------------------------------------------------------------


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def run_fixture(sc: Scenario, fx: Fixture) -> dict[str, Any]:
    """Run one fixture: rank the topic at full recall depth, then render it at the fixture's budget."""
    sc.restore()
    ranking_surface = sc.engine.recall(fx.topic, RECALL_DEPTH)
    ranking = [sc.labels.get(i.id, f"(unseeded {i.kind})") for i in ranking_surface.items]
    by_label = {label: item_id for item_id, label in sc.labels.items()}
    sc.restore()
    rendered = sc.engine.recall(fx.topic, fx.budget)
    output = rendered.text
    top3 = ranking[:3]
    top1 = 1 if ranking and ranking[0] == fx.expected_top else 0
    recall3 = round(sum(1 for ref in fx.relevant if ref in top3) / len(fx.relevant), 4)
    noise = sum(1 for ref in fx.forbidden if ref in ranking)
    stale = 0
    if fx.fresh_after is not None:
        for ref in top3:
            if ref in fx.relevant:
                stamp = parse_iso(str(sc.engine.inspect_memory(by_label[ref]).item["created_at"]))
                stale += 1 if stamp is None or stamp < fx.fresh_after else 0
    tokens = estimate_tokens(output)
    failures = []
    if not top1:
        failures.append(f"top is {ranking[0] if ranking else 'nothing'}, expected {fx.expected_top}")
    missing = [ref for ref in fx.relevant if ref not in top3]
    if missing:
        failures.append(f"not in the top 3: {', '.join(missing)}")
    if noise:
        failures.append(f"forbidden item(s) retrieved: {', '.join(r for r in fx.forbidden if r in ranking)}")
    if stale:
        failures.append(f"{stale} relevant top-3 item(s) older than fresh_after")
    if fx.max_output_tokens is not None and tokens > fx.max_output_tokens:
        failures.append(f"output is {tokens} tokens, over max_output_tokens {fx.max_output_tokens}")
    lowered = output.lower()
    failures += [f"output lacks {n!r}" for n in fx.contains if n.lower() not in lowered]
    failures += [f"output contains {n!r}" for n in fx.excludes if n.lower() in lowered]
    return {
        "topic": fx.topic,
        "expected_top": fx.expected_top,
        "top": ranking[0] if ranking else None,
        "ranking": ranking,
        "budget": rendered.budget,
        "top1_hit": top1,
        "recall_at_3": recall3,
        "output_tokens": tokens,
        "noise_count": noise,
        "stale_count": stale,
        "passed": not failures,
        "failures": failures,
        "output": output,
    }


def run_surface(sc: Scenario, check: SurfaceCheck) -> dict[str, Any]:
    """Render one whole surface on the seeded state and check it (case-sensitive)."""
    sc.restore()
    if check.surface == "brief":
        surface = sc.engine.session_brief(check.budget)
    elif check.surface == "header":
        surface = sc.engine.header(check.budget)
    else:
        surface = sc.engine.state(check.budget)
    text = surface.text
    failures = [f"lacks {n!r}" for n in check.contains if n not in text]
    failures += [f"contains {n!r}" for n in check.excludes if n in text]
    if check.max_tokens is not None and surface.tokens > check.max_tokens:
        failures.append(f"is {surface.tokens} tokens, over max_tokens {check.max_tokens}")
    if check.expect_budget is not None and surface.budget != check.expect_budget:
        failures.append(f"spends against a budget of {surface.budget}, expected {check.expect_budget}")
    return {
        "surface": check.surface, "budget": surface.budget, "tokens": surface.tokens,
        "passed": not failures, "failures": failures, "text": text,
    }


def run_suite(suite: Suite) -> dict[str, Any]:
    """Seed a suite hermetically and evaluate every fixture and surface.

    Returns:
        The evaluation result (JSON-ready; the same suite always gives byte-identical JSON).

    Raises:
        SuiteError: the scenario could not be built, or the engine refused a seeded item.
    """
    try:
        with scenario(suite) as sc:
            fixtures = [run_fixture(sc, fx) for fx in suite.fixtures]
            surfaces = [run_surface(sc, check) for check in suite.surfaces]
            sc.restore()
            states = [run_state_check(sc, label, tiers) for label, tiers in suite.expect_states]
    except SuiteError:
        raise
    except CortexError as exc:
        raise SuiteError(f"{suite.name}: the engine refused the scenario: {exc.message}") from exc
    metrics = {
        "top1_hit": _mean([f["top1_hit"] for f in fixtures]),
        "recall_at_3": _mean([f["recall_at_3"] for f in fixtures]),
        "output_tokens": sum(f["output_tokens"] for f in fixtures),
        "noise_count": sum(f["noise_count"] for f in fixtures),
        "stale_count": sum(f["stale_count"] for f in fixtures),
    }
    return {
        "suite": suite.name,
        "schema_version": RESULT_SCHEMA,
        "generated_at": iso(suite.now),
        "scope": suite.branch,
        "seeded_items": len(suite.items),
        "kinds_exercised": sorted(suite.exercised_kinds()),
        "metrics": metrics,
        "passed": all(f["passed"] for f in fixtures) and all(s["passed"] for s in surfaces)
        and all(s["passed"] for s in states),
        "fixtures": fixtures,
        "surfaces": surfaces,
        "states": states,
    }


def run_state_check(sc: Scenario, label: str, tiers: tuple[str, ...]) -> dict[str, Any]:
    """Check the tier a seeded item holds after seeding and the suite's reads."""
    state = sc.state_of(label)
    passed = state in tiers
    failures = [] if passed else [f"is {state}, expected {' or '.join(tiers)}"]
    return {"item": label, "state": state, "expected": list(tiers), "passed": passed, "failures": failures}


def baseline_of(result: dict[str, Any]) -> dict[str, Any]:
    """The locked part of a result: metrics per fixture and per suite (no rendered text)."""
    return {
        "suite": result["suite"],
        "schema_version": RESULT_SCHEMA,
        "metrics": result["metrics"],
        "fixtures": [
            {"topic": f["topic"], "top": f["top"], "ranking": f["ranking"], "passed": f["passed"],
             **{m: f[m] for m in METRICS}}
            for f in result["fixtures"]
        ],
    }


def dumps(payload: object) -> str:
    """Stable JSON text for results and baselines."""
    return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"


# -- comparing with a baseline -----------------------------------------------------------------


def _metric(values: Any, metric: str) -> float | None:
    value = values.get(metric) if isinstance(values, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.4f}".rstrip("0")


def ranking_agreement(now: list[str], base: list[str], depth: int = RANK_DEPTH) -> float:
    """nDCG@depth of `now`, graded by `base`: the baseline's rank r (0-based) is worth depth - r.

    1.0 exactly when the top `depth` of both rankings agree position by position; any swap, drop or intruder
    in the baseline's top `depth` lowers it, and a move near the top costs more than one near the bottom.
    """
    gain = {ref: depth - r for r, ref in enumerate(base[:depth])}
    ideal = sum(g / math.log2(r + 2) for r, g in enumerate(sorted(gain.values(), reverse=True)))
    if ideal == 0:
        return 1.0
    actual = sum(gain.get(ref, 0) / math.log2(r + 2) for r, ref in enumerate(now[:depth]))
    return round(actual / ideal, 4)


def compare(result: dict[str, Any], baseline: Any) -> tuple[list[str], list[str], dict[str, Any]]:
    """Compare a suite result with its baseline.

    Returns:
        (problems that fail the gate, regressions of gated metrics, deltas for reporting). Problems
        include every regression plus anything the baseline does not let the gate judge.
    """
    name = result["suite"]
    problems: list[str] = []
    regressions: list[str] = []
    deltas: dict[str, Any] = {"fixtures": {}}
    if not isinstance(baseline, dict) or not isinstance(baseline.get("metrics"), dict):
        return [f"{name}: baseline has no metrics object"], [], deltas

    def judge(where: str, now_values: dict[str, Any], base_values: Any, into: dict[str, Any]) -> None:
        for metric in METRICS:
            base = _metric(base_values, metric)
            if base is None:
                problems.append(f"{where}: baseline lacks metric {metric} (a missing value would un-gate it)")
                continue
            delta: float = round(float(now_values[metric]) - base, 4)
            if metric in COUNT_METRICS and delta.is_integer():
                delta = int(delta)
            into[f"{metric}_delta"] = delta
            direction = GATED_METRICS.get(metric)
            if direction is not None and delta * direction > 0:
                line = f"{where}: {metric} {'+' if delta > 0 else ''}{_fmt(delta)} (baseline {_fmt(base)} → now {_fmt(float(now_values[metric]))})"
                regressions.append(line)
                problems.append(line)

    judge(name, result["metrics"], baseline["metrics"], deltas)
    base_fixtures = baseline.get("fixtures")
    if not isinstance(base_fixtures, list):
        problems.append(f"{name}: baseline has no fixtures list")
        return problems, regressions, deltas
    by_topic = {key: f for f in base_fixtures if isinstance(f, dict) and isinstance(key := f.get("topic"), str)}
    if len(by_topic) < len(base_fixtures):
        problems.append(f"{name}: baseline has a fixture without a topic (regenerate the baseline)")
    current = {f["topic"] for f in result["fixtures"]}
    for fixture in result["fixtures"]:
        topic = fixture["topic"]
        where = f"{name} [{topic}]"
        if topic not in by_topic:
            problems.append(f"{where}: fixture has no baseline entry (run cortex eval-gate --regenerate-baseline {name})")
            continue
        into: dict[str, Any] = {}
        judge(where, fixture, by_topic[topic], into)
        base_ranking = by_topic[topic].get("ranking")
        if not isinstance(base_ranking, list):
            problems.append(f"{where}: baseline lacks its ranking (the order could not be gated)")
        else:
            agreement = ranking_agreement(fixture["ranking"], base_ranking)
            into["ranking_ndcg"] = agreement
            if agreement < 1.0:
                line = (f"{where}: ranking order drops against the baseline (nDCG@{RANK_DEPTH} {_fmt(agreement)}): "
                        f"baseline {base_ranking[:RANK_DEPTH]} → now {fixture['ranking'][:RANK_DEPTH]}")
                regressions.append(line)
                problems.append(line)
        deltas["fixtures"][topic] = into
    for topic in sorted(t for t in by_topic if t not in current):
        problems.append(f"{name} [{topic}]: baseline fixture no longer exists in the suite")
    return problems, regressions, deltas


def own_failures(result: dict[str, Any], baseline: Any = None) -> list[str]:
    """Failures of the suite's own assertions (fixtures, surfaces, tiers); no baseline can excuse them."""
    base_passed = {}
    if isinstance(baseline, dict) and isinstance(baseline.get("fixtures"), list):
        base_passed = {f.get("topic"): f.get("passed") for f in baseline["fixtures"] if isinstance(f, dict)}
    out = []
    name = result["suite"]
    for fixture in result["fixtures"]:
        if fixture["passed"]:
            continue
        note = " (the baseline recorded it failing too; that does not excuse it)" if base_passed.get(fixture["topic"]) is False else ""
        out.append(f"{name} [{fixture['topic']}]: fixture fails its own assertions: {'; '.join(fixture['failures'])}{note}")
    for surface in result["surfaces"]:
        if not surface["passed"]:
            out.append(f"{name} <{surface['surface']}>: surface {'; '.join(surface['failures'])}")
    for state in result.get("states", []):
        if not state["passed"]:
            out.append(f"{name} {{{state['item']}}}: tier {'; '.join(state['failures'])}")
    return out


# -- the gate ----------------------------------------------------------------------------------


@dataclass
class GateResult:
    """What the gate found: report lines in order, the failures among them, and each suite's result."""

    lines: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when nothing failed."""
        return not self.failures

    @property
    def exit_code(self) -> int:
        """0 when the gate passed, else 1."""
        return 0 if self.passed else 1

    def fail(self, message: str) -> None:
        """Record one failure (also as a report line)."""
        self.failures.append(message)
        self.lines.append(f"FAIL  {message}")

    def to_dict(self) -> dict[str, object]:
        """The `eval-gate --json` shape."""
        return {
            "passed": self.passed,
            "failures": self.failures,
            "suites": {name: r["metrics"] for name, r in self.results.items()},
        }


def _json_entries(directory: Path, what: str, gate: GateResult) -> dict[str, Path] | None:
    """The `<name>.json` files of a directory; anything else in it fails the gate."""
    if not directory.is_dir():
        gate.fail(f"no {what} directory at {directory}")
        return None
    found: dict[str, Path] = {}
    for entry in sorted(directory.iterdir()):
        if entry.is_file() and entry.suffix == ".json" and _NAME.match(entry.stem):
            found[entry.stem] = entry
        else:
            gate.fail(f"unexpected entry {entry} in the {what} directory (only <lowercase-name>.json files belong there)")
    return found


def load_coverage(path: Path) -> list[str]:
    """The kinds `eval/kind-coverage.json` grandfathers.

    Raises:
        SuiteError: the manifest is unreadable or malformed.
    """
    data = _obj(read_json(path, "kind-coverage manifest"), f"kind-coverage manifest {path}", {"_comment", "grandfathered"})
    kinds = data.get("grandfathered")
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        raise SuiteError(f"kind-coverage manifest {path}: grandfathered must be a list of kind names")
    return list(kinds)


def check_coverage(suites: dict[str, Suite], coverage: Path, gate: GateResult) -> None:
    """Every registered kind must be exercised by a fixture or grandfathered, and only uncovered kinds may be."""
    covered: dict[str, list[str]] = {}
    for name, suite in suites.items():
        for kind in suite.exercised_kinds():
            covered.setdefault(kind, []).append(name)
    try:
        grandfathered = load_coverage(coverage)
    except SuiteError as exc:
        gate.fail(f"{exc.message} (it grandfathers nothing until it can be read)")
        grandfathered = []
    registered = set(KIND_WEIGHTS)
    for kind in grandfathered:
        if kind not in registered:
            gate.fail(f"kind-coverage manifest grandfathers {kind!r}, which is not a registered memory kind")
        elif kind in covered:
            gate.fail(f"kind-coverage manifest grandfathers {kind!r}, but suite(s) {', '.join(covered[kind])} exercise it; "
                      "remove it from the manifest")
    if len(set(grandfathered)) != len(grandfathered):
        gate.fail("kind-coverage manifest lists a kind twice")
    for kind in sorted(registered - set(covered) - set(grandfathered)):
        gate.fail(f"memory_items kind {kind!r} is registered but no locked suite exercises it "
                  f"(add a fixture naming an item of that kind, or grandfather it in {coverage})")


def run_gate(suites_dir: Path, baselines_dir: Path, coverage: Path) -> GateResult:
    """Run every suite and compare it with its locked baseline; fail closed on anything ambiguous.

    Args:
        suites_dir: the `eval/suites` directory.
        baselines_dir: the `eval/baselines` directory.
        coverage: the `eval/kind-coverage.json` manifest.

    Returns:
        The gate's result; `exit_code` is 1 when anything failed.
    """
    gate = GateResult()
    suite_files = _json_entries(suites_dir, "suites", gate)
    baseline_files = _json_entries(baselines_dir, "baselines", gate) or {}
    if suite_files is not None and not suite_files:
        gate.fail(f"no suites in {suites_dir}")
    suites: dict[str, Suite] = {}
    for name, path in (suite_files or {}).items():
        try:
            suites[name] = load_suite(path)
        except SuiteError as exc:
            gate.fail(exc.message)
    for name in sorted(set(baseline_files) - set(suite_files or {})):
        gate.fail(f"{name}: baseline {baseline_files[name]} has no suite (deleting a suite must not silently stop gating it)")
    for name, suite in suites.items():
        baseline: Any = None
        if name not in baseline_files:
            gate.fail(f"{name}: suite has no baseline (run cortex eval-gate --regenerate-baseline {name})")
        else:
            try:
                baseline = read_json(baseline_files[name], "baseline")
            except SuiteError as exc:
                gate.fail(f"{name}: {exc.message}")
        try:
            result = run_suite(suite)
        except SuiteError as exc:
            gate.fail(exc.message)
            continue
        gate.results[name] = result
        problems = own_failures(result, baseline)
        if baseline is not None:
            problems += compare(result, baseline)[0]
        for problem in problems:
            gate.fail(problem)
        if not problems and name in baseline_files:
            m = result["metrics"]
            gate.lines.append(f"ok    {name}  " + " ".join(f"{k}={_fmt(m[k])}" for k in METRICS))
    check_coverage(suites, coverage, gate)
    if gate.passed:
        gate.lines.append(f"Retrieval quality gate passed ({len(suites)} suites).")
    else:
        gate.lines.append(
            f"Retrieval quality gate FAILED: {len(gate.failures)} problem(s) above. Fix the cause; regenerating a "
            "baseline is never the way to turn a red gate green."
        )
    return gate


def regenerate_baseline(name: str, suites_dir: Path, baselines_dir: Path) -> tuple[int, list[str]]:
    """Rewrite one suite's baseline, listing the regressions it accepts.

    Returns:
        (exit code, report lines). Refuses (exit 1) when the suite's own assertions fail.
    """
    if not _NAME.match(name):
        raise SuiteError(f"--regenerate-baseline takes a bare suite name (like 'budget'), not {name!r}")
    suite = load_suite(suites_dir / f"{name}.json")
    result = run_suite(suite)
    failing = own_failures(result)
    if failing:
        return 1, [f"FAIL  {line}" for line in failing] + [f"refused: {name}'s own assertions fail; no baseline was written"]
    target = baselines_dir / f"{name}.json"
    lines: list[str] = []
    if target.exists():
        try:
            old = read_json(target, "baseline")
        except SuiteError as exc:
            old = None
            lines.append(f"replacing an unreadable baseline: {exc.message}")
        if old is not None:
            _, regressions, _ = compare(result, old)
            lines += [f"accepting regression: {line}" for line in regressions]
            if not regressions:
                lines.append(f"{name}: no gated metric regresses against the old baseline")
    else:
        lines.append(f"{name}: new baseline (no previous one to compare)")
    text = dumps(baseline_of(result))
    baselines_dir.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    m = result["metrics"]
    lines.append(f"wrote {target}  " + " ".join(f"{k}={_fmt(m[k])}" for k in METRICS))
    lines.append(f"Commit it with a trailer on that same commit:  {REGENERATE_REMINDER}")
    return 0, lines


# -- the live store ----------------------------------------------------------------------------


def _preview(surface: Any) -> dict[str, object]:
    return {"chars": len(surface.text), "est_tokens": surface.tokens, "preview": surface.text[:320]}


def evaluate_live(cwd: str, topics: list[str]) -> dict[str, Any]:
    """Evaluate the store of `cwd` on a private copy, so nothing is booked or reinforced in the real one.

    Raises:
        SuiteError: there is no store for this directory yet.
    """
    from .engine import Engine
    from .scope import store_identity
    from .store import SCHEMA_VERSION

    ident = store_identity(os.path.realpath(cwd))
    if not ident.db_path.exists():
        raise SuiteError(f"no Cortex store for {cwd} yet ({ident.db_path}); nothing to evaluate", code="no_store")
    root = Path(tempfile.mkdtemp(prefix="cortex-evaluate-")).resolve()
    try:
        copy = root / ident.db_path.relative_to(ident.store_dir.parent.parent)
        copy.parent.mkdir(parents=True)
        source = sqlite3.connect(f"file:{ident.db_path}?mode=ro", uri=True)
        target = sqlite3.connect(copy)
        try:
            source.backup(target)
        finally:
            source.close()
            target.close()
        with Engine(cwd, home=root) as engine:
            tables = {
                t: engine.conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]
                for t in ("sessions", "notes", "memory_items", "memory_references", "retrieval_log", "token_ledger")
            }
            result: dict[str, Any] = {
                "db_path": str(ident.db_path),
                "generated_at": engine.now(),
                "schema_version": SCHEMA_VERSION,
                "tables": tables,
                "header": _preview(engine.header()),
                "full_state": _preview(engine.state()),
                "session_brief": _preview(engine.preview_session_brief()),
                "topics": [],
            }
            for topic in topics:
                surface = engine.recall(topic)
                result["topics"].append({
                    "topic": topic, "tokens": surface.tokens, "budget": surface.budget,
                    "items": [{"id": i.id, "kind": i.kind, "labels": list(i.labels)} for i in surface.items],
                    "text": surface.text,
                })
        return result
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- what `cortex evaluate` and `cortex eval-gate` ask for (the CLI prints the results) -------------------------


def under(base: str | Path, value: str) -> Path:
    """`value` as a path, relative to `base` unless it is absolute."""
    path = Path(value)
    return path if path.is_absolute() else Path(base) / path


def evaluate(base: str | Path, suite: str | None, compare_with: str | None, topics: list[str]) -> dict[str, Any]:
    """`cortex evaluate`: a suite's result (compared with a baseline when asked), or the live store's on `topics`.

    Raises:
        SuiteError: a baseline to compare with but no suite, or a suite or baseline that cannot be judged.
    """
    if compare_with and not suite:
        raise SuiteError("--compare needs --suite", code="bad_args")
    if not suite:
        return evaluate_live(str(base), topics)
    result = run_suite(load_suite(under(base, suite)))
    if compare_with:
        baseline = read_json(under(base, compare_with), "baseline")
        problems, _, deltas = compare(result, baseline)
        result["quality_comparison"] = {**deltas, "problems": problems}
    return result


def require_eval_tree(base: str | Path, suites_dir: Path, baselines_dir: Path) -> None:
    """Refuse to gate a directory that is not the Cortex source tree (neither folder exists).

    Raises:
        SuiteError: neither the suites nor the baselines folder exists (a user's repository, most likely).
    """
    if not suites_dir.is_dir() and not baselines_dir.is_dir():
        # Not the Cortex source tree (a user's repository): say where the gate runs instead of failing every check.
        raise SuiteError(f"eval-gate runs in the Cortex source tree, which holds eval/suites and eval/baselines "
                         f"(none under {base}); run it from there or pass --suites and --baselines",
                         code="not_cortex_tree")
