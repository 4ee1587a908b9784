"""The suite model and its loader: `eval/suites/<name>.json` read, checked key by key, into frozen dataclasses.

In: a suite file. Out: a `Suite` (seed items, sessions, fixtures, surface checks), or a one-line `SuiteError`.
Standard library only."""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from cortex_engine.base.clock import parse_iso
from cortex_engine.base.errors import CortexError
from cortex_engine.results import KIND_WEIGHTS, NOTE_KINDS

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
SUITE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_SUITE_KEYS = {"_comment", "seed", "fixtures", "surfaces", "expect_states"}
_SEED_KEYS = {
    "_comment",
    "now",
    "scope",
    "items",
    "app_graph",
    "renames",
    "deletions",
    "distractors",
    "reads",
    "sessions",
    "snapshots",
    "merges",
    "shared",
    "edits",
    "deletes",
    "cherry_picks",
    "elsewhere",
    "semantic",
}
_ELSEWHERE_KEYS = {"_comment", "branch", "count", "kind", "subject", "text"}
MAX_ELSEWHERE = 1000
_SHARED_KEYS = {"_comment", "id", "file", "text"}
_ITEM_KEYS = {
    "_comment",
    "id",
    "kind",
    "subject",
    "text",
    "alternatives",
    "resolve",
    "age_days",
    "created_at",
    "branch",
}
_SESSION_KEYS = {"_comment", "host", "age_days", "events"}
_EVENT_KEYS = {
    "_comment",
    "id",
    "kind",
    "bash",
    "exit",
    "stdout",
    "stderr",
    "summary",
    "subagent",
    "conclusion",
    "edit",
}
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
    "_comment",
    "topic",
    "expected_top",
    "expect_no_match",
    "allowed",
    "forbidden",
    "budget",
    "max_output_tokens",
    "fresh_after",
    "expect_output_contains",
    "expect_output_excludes",
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
    no_match: bool = False
    """The topic has no true answer in the seed: recall must say "No matches" (`expect_no_match`)."""

    @property
    def relevant(self) -> tuple[str, ...]:
        """The expected top item, then the allowed ones (none for a no-match fixture)."""
        return () if self.no_match else (self.expected_top, *self.allowed)


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
    deletes: tuple[str, ...] = ()
    """Labels of seeded notes deleted (`Engine.delete_memory`, as `cortex delete-memory --yes`) once all are written."""
    cherry_picks: tuple[str, ...] = ()
    """Branches that get a hotfix commit and a work-in-progress commit; only the hotfix is cherry-picked into the
    suite's branch (which moved on first), then the merge check runs."""
    elsewhere: tuple[tuple[str, int, str, str | None, str], ...] = ()
    """(branch, count, kind, subject, text): `count` notes written on another branch in one go, each text suffixed
    with its number (out-of-scope matches that may outrank the scope's own)."""
    semantic: bool = False
    """Every seeded item is embedded before the probes, so recall runs the hybrid path (the semantic extra; a
    suite that asks for it fails closed without it)."""

    def label_kinds(self) -> dict[str, str]:
        """Every label the suite defines (notes, captured events, snapshots) and the kind it names."""
        kinds = {item.label: item.kind for item in self.items}
        kinds.update(
            (event_label, event_kind)
            for session in self.sessions
            for e in session.events
            if (event_label := e.label) and (event_kind := e.kind)
        )  # a labelled event always has its kind
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


def checked_object(value: Any, where: str, keys: set[str]) -> dict[str, Any]:
    """`value` as a JSON object holding only `keys`, or a `SuiteError` that says where."""
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


def _num(value: object, where: str, *, lo: float, hi: float = math.inf, integer: bool = False) -> float:
    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
    if (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and ok_type
        and lo <= value <= hi
        and math.isfinite(value)
    ):
        return value
    kind = "an integer" if integer else "a number"
    raise _fail(where, f"must be {kind} between {lo} and {hi}")


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
    if path.suffix != ".json" or not SUITE_NAME.match(name):
        raise SuiteError(f"{path}: suite files are named <lowercase-name>.json")
    data = checked_object(read_json(path, "suite"), name, _SUITE_KEYS)
    if "seed" not in data:
        raise _fail(name, "has no seed (a suite without a seed scores nothing and would pass forever)")
    seed = checked_object(data["seed"], f"{name}: seed", _SEED_KEYS)
    now = _when(seed.get("now"), f"{name}: seed.now")
    scope = checked_object(
        seed.get("scope", {"type": "branch", "key": f"eval/{name}"}), f"{name}: seed.scope", {"type", "key"}
    )
    layer = scope.get("type", "branch")
    if layer not in ("branch", "project"):
        raise _fail(
            name,
            "seed.scope.type must be 'branch' (a branch of a seeded repository) or 'project' (a folder outside git)",
        )
    if layer == "project" and (
        "key" in scope or any(k in seed for k in ("app_graph", "renames", "deletions", "edits"))
    ):
        raise _fail(name, "a project suite runs outside git: it takes no scope key, app graph, renames or deletions")
    branch = "" if layer == "project" else _str(scope.get("key", f"eval/{name}"), f"{name}: seed.scope.key") or ""
    semantic = seed.get("semantic", False)
    if not isinstance(semantic, bool):
        raise _fail(name, "seed.semantic must be true or false")
    raw_items = seed.get("items", [])
    raw_sessions = seed.get("sessions", [])
    if not isinstance(raw_items, list) or not isinstance(raw_sessions, list) or not (raw_items or raw_sessions):
        raise _fail(name, "seed.items and seed.sessions must be lists, and at least one must be non-empty")
    items = tuple(_load_item(raw, f"{name}: seed.items[{i}]", now) for i, raw in enumerate(raw_items))
    sessions = tuple(_load_session(raw, f"{name}: seed.sessions[{i}]", now) for i, raw in enumerate(raw_sessions))
    raw_snapshots = checked_object(seed.get("snapshots", {}), f"{name}: seed.snapshots", {"_comment", *_SNAPSHOT_KINDS})
    snapshots = tuple(
        (kind, _str(raw_snapshots[kind], f"{name}: seed.snapshots.{kind}") or "")
        for kind in _SNAPSHOT_KINDS
        if kind in raw_snapshots
    )
    if snapshots and not sessions:
        raise _fail(name, "seed.snapshots needs seed.sessions (snapshots are what ended sessions leave)")
    if layer == "project" and any(item.branch for item in items):
        raise _fail(name, "a project suite has no branches to write on")
    if any(item.branch == branch for item in items):
        raise _fail(name, f"an item's branch is the suite's own branch {branch!r} (leave branch out instead)")
    if "distractors" in seed:
        items += distractors(
            checked_object(seed["distractors"], f"{name}: seed.distractors", _DISTRACTOR_KEYS),
            f"{name}: seed.distractors",
            now,
        )
    labels = [item.label for item in items]
    labels += [e.label for session in sessions for e in session.events if e.label]
    labels += [label for _, label in snapshots]
    labels += [
        found
        for entry in seed.get("shared") or []
        if isinstance(entry, dict) and isinstance(found := entry.get("id"), str) and found
    ]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise _fail(name, f"duplicate item id(s) {', '.join(duplicates)}")
    graph = checked_object(seed.get("app_graph", {}), f"{name}: seed.app_graph", {"_comment", "files", "contents"})
    files = _strs(graph.get("files"), f"{name}: seed.app_graph.files")
    raw_contents = checked_object(graph.get("contents", {}), f"{name}: seed.app_graph.contents", set(files))
    contents = tuple(
        (path, _str(text, f"{name}: seed.app_graph.contents[{path!r}]") or "")
        for path, text in sorted(raw_contents.items())
    )
    renames = []
    for i, raw in enumerate(seed.get("renames") or []):
        rename = checked_object(raw, f"{name}: seed.renames[{i}]", {"old_path", "new_path"})
        old = _str(rename.get("old_path"), f"{name}: seed.renames[{i}].old_path") or ""
        new = _str(rename.get("new_path"), f"{name}: seed.renames[{i}].new_path") or ""
        renames.append((old, new))
    deletions = _strs(seed.get("deletions"), f"{name}: seed.deletions")
    edits = []
    for i, raw in enumerate(seed.get("edits") or []):
        edit = checked_object(raw, f"{name}: seed.edits[{i}]", {"path", "text"})
        edits.append(
            (
                _str(edit.get("path"), f"{name}: seed.edits[{i}].path") or "",
                _str(edit.get("text"), f"{name}: seed.edits[{i}].text") or "",
            )
        )
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
        read = checked_object(raw, f"{name}: seed.reads[{i}]", _READ_KEYS)
        topic = _str(read.get("topic"), f"{name}: seed.reads[{i}].topic") or ""
        reads.append(
            (topic, int(_num(read.get("times", 1), f"{name}: seed.reads[{i}].times", lo=1, hi=50, integer=True)))
        )
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
        entry = checked_object(raw, f"{name}: seed.shared[{i}]", _SHARED_KEYS)
        file = _str(entry.get("file"), f"{name}: seed.shared[{i}].file") or ""
        if not re.fullmatch(r"docs/decisions/[A-Za-z0-9._-]+\.md", file):
            raise _fail(name, f"seed.shared[{i}].file must be docs/decisions/<name>.md")
        shared.append(
            (
                _str(entry.get("id"), f"{name}: seed.shared[{i}].id") or "",
                file,
                _str(entry.get("text"), f"{name}: seed.shared[{i}].text") or "",
            )
        )
    if shared and layer != "branch":
        raise _fail(name, "seed.shared needs a branch suite (decision files are read from a git HEAD)")
    deletes = _strs(seed.get("deletes"), f"{name}: seed.deletes")
    if any(d not in {item.label for item in items if item.branch is None} for d in deletes):
        raise _fail(name, "seed.deletes names an item the seed does not write on the suite's branch")
    cherry_picks = _strs(seed.get("cherry_picks"), f"{name}: seed.cherry_picks")
    if any(c not in seeded_branches or c in merges for c in cherry_picks):
        raise _fail(name, "seed.cherry_picks names a branch no seed item is written on, or one also merged")
    elsewhere = []
    for i, raw in enumerate(seed.get("elsewhere") or []):
        where = f"{name}: seed.elsewhere[{i}]"
        entry = checked_object(raw, where, _ELSEWHERE_KEYS)
        kind = _str(entry.get("kind", "note:insight"), f"{where}.kind") or ""
        if not kind.startswith("note:") or kind[5:] not in NOTE_KINDS:
            raise _fail(where, f"kind must be a note kind (note:{', note:'.join(NOTE_KINDS)})")
        elsewhere.append(
            (
                _str(entry.get("branch"), f"{where}.branch") or "",
                int(_num(entry.get("count"), f"{where}.count", lo=1, hi=MAX_ELSEWHERE, integer=True)),
                kind,
                _str(entry.get("subject"), f"{where}.subject", required=False),
                _str(entry.get("text"), f"{where}.text") or "",
            )
        )
    if (cherry_picks or elsewhere) and layer != "branch":
        raise _fail(name, "seed.cherry_picks and seed.elsewhere need a branch suite")
    return Suite(
        name,
        path,
        now,
        branch,
        items,
        files,
        tuple(renames),
        deletions,
        fixtures,
        surfaces,
        tuple(reads),
        tuple(states),
        sessions,
        snapshots,
        layer,
        contents,
        tuple(edits),
        merges,
        tuple(shared),
        deletes,
        cherry_picks,
        tuple(elsewhere),
        semantic,
    )


def _load_session(raw: Any, where: str, now: datetime) -> SeedSession:
    session = checked_object(raw, where, _SESSION_KEYS)
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
    event = checked_object(raw, where, _EVENT_KEYS)
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
        action,
        value,
        label,
        kind,
        exit=int(_num(event.get("exit", 0), f"{where}.exit", lo=0, hi=255, integer=True)),
        stdout=str(event.get("stdout", "")),
        stderr=str(event.get("stderr", "")),
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
    item = checked_object(raw, where, _ITEM_KEYS)
    label = _str(item.get("id"), f"{where}.id") or ""
    where = f"{where} ({label})"
    kind = _str(item.get("kind"), f"{where}.kind") or ""
    if kind not in KIND_WEIGHTS:
        raise _fail(where, f"kind {kind!r} is not a registered memory kind ({', '.join(registered_kinds())})")
    if not kind.startswith("note:"):
        raise _fail(
            where,
            f"{kind} is not seeded directly: capture it through seed.sessions (commands, failures, "
            "test cycles, summaries, subagent conclusions) or seed.snapshots, as the real pipeline does",
        )
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
        label,
        kind,
        text,
        subject,
        created,
        branch=branch,
        alternatives=_strs(item.get("alternatives"), f"{where}.alternatives"),
        resolve=resolve,
    )


def _load_fixture(raw: Any, where: str, labels: set[str]) -> Fixture:
    fx = checked_object(raw, where, _FIXTURE_KEYS)
    topic = _str(fx.get("topic"), f"{where}.topic") or ""
    where = f"{where} ({topic!r})"
    no_match = fx.get("expect_no_match", False)
    if not isinstance(no_match, bool):
        raise _fail(where, "expect_no_match must be true or false")
    if no_match and ("expected_top" in fx or "allowed" in fx):
        raise _fail(where, "a fixture that expects no match names no expected_top or allowed items")
    expected = "" if no_match else _str(fx.get("expected_top"), f"{where}.expected_top") or ""
    allowed = _strs(fx.get("allowed"), f"{where}.allowed")
    forbidden = _strs(fx.get("forbidden"), f"{where}.forbidden")
    unknown = sorted({expected, *allowed, *forbidden} - labels - ({""} if no_match else set()))
    if unknown:
        raise _fail(where, f"names item(s) the seed does not define: {', '.join(unknown)}")
    relevant = () if no_match else (expected, *allowed)
    if len(set(relevant)) != len(relevant) or set(relevant) & set(forbidden):
        raise _fail(where, "an item is named twice across expected_top, allowed and forbidden")
    if len(relevant) > MAX_RELEVANT:
        raise _fail(where, f"more than {MAX_RELEVANT} relevant items can never all be in the top 3")
    budget = fx.get("budget")
    max_out = fx.get("max_output_tokens")
    fresh = fx.get("fresh_after")
    return Fixture(
        topic,
        expected,
        allowed,
        forbidden,
        budget=None if budget is None else int(_num(budget, f"{where}.budget", lo=20, hi=20_000, integer=True)),
        max_output_tokens=None
        if max_out is None
        else int(_num(max_out, f"{where}.max_output_tokens", lo=1, integer=True)),
        fresh_after=None if fresh is None else _when(fresh, f"{where}.fresh_after"),
        contains=_strs(fx.get("expect_output_contains"), f"{where}.expect_output_contains"),
        excludes=_strs(fx.get("expect_output_excludes"), f"{where}.expect_output_excludes"),
        no_match=no_match,
    )


def _load_surface(raw: Any, where: str) -> SurfaceCheck:
    block = checked_object(raw, where, _SURFACE_KEYS)
    surface = block.get("surface")
    if surface not in SURFACES:
        raise _fail(
            where,
            f"unknown surface {surface!r} (known: {', '.join(SURFACES)}); its assertions would be read against nothing",
        )
    check = SurfaceCheck(
        surface,
        contains=_strs(block.get("expect_contains"), f"{where}.expect_contains"),
        excludes=_strs(block.get("expect_excludes"), f"{where}.expect_excludes"),
        max_tokens=None
        if block.get("max_tokens") is None
        else int(_num(block["max_tokens"], f"{where}.max_tokens", lo=1, integer=True)),
        budget=None
        if block.get("budget") is None
        else int(_num(block["budget"], f"{where}.budget", lo=20, hi=20_000, integer=True)),
        expect_budget=None
        if block.get("expect_budget") is None
        else int(_num(block["expect_budget"], f"{where}.expect_budget", lo=1, integer=True)),
    )
    if not (check.contains or check.excludes or check.max_tokens is not None or check.expect_budget is not None):
        raise _fail(where, f"the {surface} block asserts nothing")
    return check


def _check_paths(
    name: str,
    files: tuple[str, ...],
    renames: list[tuple[str, str]],
    deletions: tuple[str, ...],
    edited: list[str] | None = None,
) -> None:
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
