"""The hermetic scenario a suite runs in: a temporary git repository and Cortex home, a fixed clock, the
seed written through the real engine, renames and deletions committed, and a snapshot to restore before
each probe. Standard library only."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from cortex_engine.base import settings
from cortex_engine.base.clock import iso
from cortex_engine.ops.evaluation.suites import SeedEvent, SeedItem, SeedSession, Suite, SuiteError

_GIT_REDIRECTS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CEILING_DIRECTORIES",
)


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
        "GIT_AUTHOR_NAME": "Cortex Eval",
        "GIT_AUTHOR_EMAIL": "eval@example.invalid",
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_NAME": "Cortex Eval",
        "GIT_COMMITTER_EMAIL": "eval@example.invalid",
        "GIT_COMMITTER_DATE": stamp,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "LC_ALL": "C",
    }
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SuiteError(f"git {' '.join(args[:2])} failed in the scenario repository: {done.stderr.strip()}")


class Scenario:
    """A seeded scenario: temp repository, temp Cortex home, engine, and a snapshot to probe from."""

    def __init__(self, suite: Suite, root: Path) -> None:
        """Build the repository and seed every item through the engine."""
        from cortex_engine.engine import Engine

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
                target.write_text(
                    contents.get(path, f"// {path}: seeded by the {suite.name} eval suite\n"), encoding="utf-8"
                )
            _git(self.repo, suite.now, "add", "-A")
            _git(self.repo, suite.now, "commit", "-q", "--allow-empty", "-m", "eval: app graph")
        self.home = root / "home"
        self.engine = Engine(self.repo, home=self.home, clock=self.clock)
        if self.engine.scope.type != suite.layer:
            self.engine.close()
            raise SuiteError(
                f"{suite.name}: the scenario folder {self.repo} resolved to a {self.engine.scope.type} scope, "
                f"not {suite.layer} (is the temp dir inside a git repository?)"
            )
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
        if suite.deletes:
            item_of = {label: item_id for item_id, label in self.labels.items()}
            for label in suite.deletes:
                self.engine.delete_memory(item_of[label], yes=True)
        for entry in suite.elsewhere:
            self._elsewhere(*entry)
        if suite.merges:
            self._merge(suite.merges)
        if suite.cherry_picks:
            self._cherry_pick(suite.cherry_picks)
        if suite.shared:
            self._share(suite.shared)
        self.engine.refresh()  # records the app graph at the seeded HEAD, so later moves diff against it
        if suite.renames:
            moved: set[str] = set()
            for old, new in suite.renames:
                if old in moved:  # a path renamed again: a commit of its own, so history holds a chain
                    _git(self.repo, suite.now, "commit", "-q", "-m", "eval: renames")
                    moved.clear()
                target = self.repo / new
                target.parent.mkdir(parents=True, exist_ok=True)
                _git(self.repo, suite.now, "mv", old, new)
                moved.add(new)
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
        if suite.semantic:
            self._embed()
        for topic, times in suite.reads:
            self.read(topic, times)
        self._snapshot = sqlite3.connect(":memory:")
        self.engine.conn.backup(self._snapshot)

    def _embed(self) -> None:
        """Embed every seeded item (the semantic extra's encoder on one CPU thread: the same vectors every run)."""
        from cortex_engine.base.errors import SemanticUnavailable

        try:
            self.engine.embed_pending()
        except SemanticUnavailable as exc:
            raise SuiteError(f"{self.suite.name}: seed.semantic needs the dense retriever: {exc.message}") from exc
        if self.engine.dense_search() is None:
            raise SuiteError(
                f"{self.suite.name}: seed.semantic: the dense retriever did not start ({self.engine.dense_problem})"
            )

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
            return {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Edit",
                "tool_input": {"file_path": str(target), "old_string": "a", "new_string": "b"},
                "tool_response": {"filePath": str(target)},
            }
        call = {**base, "tool_name": "Bash", "tool_input": {"command": event.value}}
        if event.exit:
            error = f"Command failed with exit code {event.exit}\n{event.stderr}".strip()
            return {**call, "hook_event_name": "PostToolUseFailure", "error": error, "is_interrupt": False}
        return {
            **call,
            "hook_event_name": "PostToolUse",
            "tool_response": {"stdout": event.stdout, "stderr": event.stderr, "interrupted": False},
        }

    def _spool(self, payload: dict[str, Any]) -> None:
        """Append one line to the worktree's spool exactly as the capture hook writes it."""
        from cortex_engine.capture.flush import SPOOL, open_runtime, runtime_dir

        line = json.dumps({"v": 1, "t": self.clock.at.timestamp(), "p": payload}, ensure_ascii=False)
        with open_runtime(runtime_dir(self.repo)) as rt:  # the one way into .cortex/: no link is ever followed
            rt.append(SPOOL, (line + "\n").encode("utf-8"))

    def _subagent(self, host: str, n: int, event: SeedEvent) -> None:
        """SubagentStart, then SubagentStop with the subagent's last message, through the hook handlers."""
        agent = {"session_id": host, "cwd": str(self.repo), "agent_id": f"{host}-agent-{n}", "agent_type": event.value}
        self.engine.subagent_start({**agent, "hook_event_name": "SubagentStart"})
        self.engine.subagent_stop(
            {
                **agent,
                "hook_event_name": "SubagentStop",
                "stop_hook_active": False,
                "last_assistant_message": event.conclusion,
            },
        )

    def _ids(self, kind: str | None) -> set[str]:
        """Ids of every item of a kind (through the engine's read-only listing)."""
        if kind is None:
            return set()
        from cortex_engine.results import LIST_MAX

        return {str(i["id"]) for i in self.engine.list_memory(kinds=[kind], limit=LIST_MAX).items}

    def _newest(self, kind: str, before: set[str], *, upsert: bool = False) -> str:
        """The item of `kind` the last step wrote: the new one, or for an upserted kind the newest one."""
        from cortex_engine.results import LIST_MAX

        page = self.engine.list_memory(kinds=[kind], scopes=self.engine.scope_keys, limit=LIST_MAX).items
        fresh = [i for i in page if str(i["id"]) not in before]
        found = fresh or (page if upsert else [])
        if not found:
            raise SuiteError(f"{self.suite.name}: the pipeline wrote no {kind} item where the suite expects one")
        return str(found[0]["id"])

    def _seed_on_branch(self, item: SeedItem) -> str:
        """Write a note as an agent on another branch would: check it out, open an engine there, come back."""
        from cortex_engine.engine import Engine

        assert item.branch is not None
        exists = (
            subprocess.run(
                ["git", "rev-parse", "--verify", "-q", f"refs/heads/{item.branch}"], cwd=self.repo, capture_output=True
            ).returncode
            == 0
        )
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
        from cortex_engine.engine import Engine

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

    def _elsewhere(self, branch: str, count: int, kind: str, subject: str | None, text: str) -> None:
        """Write `count` notes on another branch through one engine there (`text (n)` each), then come back."""
        from cortex_engine.engine import Engine

        exists = (
            subprocess.run(
                ["git", "rev-parse", "--verify", "-q", f"refs/heads/{branch}"], cwd=self.repo, capture_output=True
            ).returncode
            == 0
        )
        _git(self.repo, self.clock.at, "checkout", "-q", *(() if exists else ("-b",)), branch)
        try:
            with Engine(self.repo, home=self.home, clock=self.clock) as other:
                for n in range(count):
                    other.note(kind[5:], f"{text} ({n})", subject)
        finally:
            _git(self.repo, self.clock.at, "checkout", "-q", self.suite.branch)

    def _cherry_pick(self, branches: tuple[str, ...]) -> None:
        """Per branch: a hotfix commit and a work-in-progress commit on it; the suite's branch moves on, then
        takes the hotfix alone (`git cherry-pick`); the merge check then runs as the next flush would."""
        from cortex_engine.engine import Engine

        for branch in branches:
            slug = re.sub(r"[^a-z0-9]+", "-", branch.lower())
            _git(self.repo, self.clock.at, "checkout", "-q", branch)
            for step in ("hotfix", "wip"):
                (self.repo / f"{step}-{slug}.txt").write_text(f"{step} on {branch}\n", encoding="utf-8")
                _git(self.repo, self.clock.at, "add", "-A")
                _git(self.repo, self.clock.at, "commit", "-q", "-m", f"eval: {step} on {branch}")
            _git(self.repo, self.clock.at, "checkout", "-q", self.suite.branch)
            _git(self.repo, self.clock.at, "commit", "-q", "--allow-empty", "-m", f"eval: before picking from {branch}")
            _git(self.repo, self.clock.at, "cherry-pick", f"{branch}~1")
        self.engine.close()
        self.engine = Engine(self.repo, home=self.home, clock=self.clock)  # the scope's HEAD moved
        for promoted in self.engine.check_merges().promoted:
            original = f"notes:{promoted.source_note_id}"
            if original in self.labels and promoted.note_id:
                self.labels[f"notes:{promoted.note_id}"] = self.labels.pop(original)

    def _share(self, files: tuple[tuple[str, str, str], ...]) -> None:
        """Commit the decision files, reopen at the new HEAD and sync them as SessionStart would."""
        from cortex_engine.engine import Engine

        for _, path, text in files:
            target = self.repo / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        _git(self.repo, self.clock.at, "add", "-A")
        _git(self.repo, self.clock.at, "commit", "-q", "-m", "eval: shared decisions")
        self.engine.close()
        self.engine = Engine(self.repo, home=self.home, clock=self.clock)
        # A suite's decision files are the repository's own (a team that trusts it): they apply without the inbox.
        # The policy is the scenario's own home's settings file, never the user's.
        from cortex_engine.base import settings

        settings.write_review_arrivals("none", self.home)
        done = self.engine.sync_shared(force=True)
        by_path = dict(done.notes)
        for label, path, _ in files:
            if path not in by_path:
                raise SuiteError(
                    f"{self.suite.name}: the shared decision file {path} was not imported "
                    f"({dict(done.malformed).get(path, 'no decision written')})"
                )
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
    # A suite runs the retrievers it names whatever the caller's shell says: hybrid for a semantic suite, lexical for
    # every other (its locked order was measured lexically, and no model is loaded for it).
    switch = settings.SEMANTIC
    before = os.environ.get(switch)
    os.environ[switch] = "1" if suite.semantic else "0"
    try:
        with _git_isolated():
            built = Scenario(suite, root)
            yield built
    finally:
        if before is None:
            os.environ.pop(switch, None)
        else:
            os.environ[switch] = before
        if built is not None:
            built.close()
        shutil.rmtree(root, ignore_errors=True)
