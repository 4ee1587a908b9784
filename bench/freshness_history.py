"""Freshness on real history: replay a repository's commits as notes, then judge them against today's HEAD.

Usage:
    python bench/freshness_history.py --synthetic                 # builds its own repository (renames, rewrites,
                                                                  # deletions, root files, merges of user/7.x branches)
    python bench/freshness_history.py --repo PATH [--commits 150] # any git repository (a clone or a bare mirror)

What it does, in a scratch clone (the source repository is never modified, and nothing of it is kept):
  1. picks N commits of the first-parent line that touched `.py` files, oldest first;
  2. for each: `git reset --hard <commit>`, then a note (the engine call behind `cortex note`) whose text is the
     commit's subject followed by the `.py` files the commit touched, so merge texts (`Merge pull request #12
     from user/7.x`) are replayed too;
  3. resets to the original HEAD and classifies every (note, path) pair against git: alive (the path is at HEAD),
     renamed-to-X, deleted — by its own chain over `git log -M --name-status` (every commit of the range,
     topological order), independent of the engine's code;
  4. asks the engine for its verdicts (validate-memory, timed cold and warm, in process and as a CLI process)
     and reports accuracy per class, false alarms (a live or renamed path called missing, or a reference the
     note never named that reads missing), and a warm in-process validate over 1,000 notes.

Targets: every alive path exists, >= 98 % of renamed paths moved to the right path, >= 98 % of
deleted paths missing, zero false alarms, warm validate over 1,000 notes < 100 ms. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cortex_engine.engine import Engine  # noqa: E402
from cortex_engine.scope import inventory  # noqa: E402
from cortex_engine.scope.freshness import Validator  # noqa: E402
from cortex_engine.store import queries  # noqa: E402

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "LC_ALL": "C",
}
PATHS_PER_NOTE = 6
WARM_NOTES = 1000
TARGET_WARM_MS = 100.0


def git(repo: Path, *args: str) -> str:
    """Run git in `repo`; its stdout (raises on failure)."""
    done = subprocess.run(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout


# -- the synthetic repository ------------------------------------------------------------------------------


class Synth:
    """A deterministic repository whose history holds every class of the issue, many times over."""

    def __init__(self, path: Path, seed: int) -> None:
        self.path = path
        self.rng = random.Random(seed)
        self.serial = 0
        self.when = datetime(2020, 1, 1, tzinfo=UTC)

    def body(self, name: str, lines: int | None = None) -> str:
        self.serial += 1
        count = lines or self.rng.randint(20, 40)
        return "".join(
            f"{name.replace('/', '_').replace('.', '_')}_{self.serial}_{n} = {self.rng.random()!r}\n"
            for n in range(count)
        )

    def write(self, rel: str, text: str) -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def files(self) -> list[str]:
        return sorted(f for f in git(self.path, "ls-files").splitlines() if f.endswith(".py"))

    def commit(self, message: str) -> None:
        self.when += timedelta(hours=1)
        stamp = self.when.strftime("%Y-%m-%dT%H:%M:%S+0000")
        git(self.path, "add", "-A")
        subprocess.run(
            ["git", "commit", "-q", "--allow-empty", "-m", message],
            cwd=self.path,
            check=True,
            env={**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp},
        )

    def move(self, old: str, new: str) -> None:
        (self.path / new).parent.mkdir(parents=True, exist_ok=True)
        git(self.path, "mv", old, new)

    def rework(self, rel: str, fraction: float) -> None:
        """Replace `fraction` of the file's lines with new ones."""
        lines = (self.path / rel).read_text(encoding="utf-8").splitlines(keepends=True)
        keep = int(round(len(lines) * (1 - fraction)))
        self.write(rel, "".join(lines[:keep]) + self.body(rel, max(1, len(lines) - keep)))

    def build(self, steps: int) -> None:
        git(self.path, "init", "-q", "-b", "main")
        packages = ["pkg", "pkg/cli", "pkg/core", "pkg/util", "tests", "tests/unit"]
        for package in packages:
            self.write(f"{package}/__init__.py", self.body(package, 3))
            for n in range(3):
                self.write(f"{package}/mod_{n}.py", self.body(package))
        self.write("setup.py", self.body("setup"))
        self.write("tool.py", self.body("tool"))
        self.write("conftest.py", self.body("conftest"))
        self.write("README.md", "# synthetic\n")
        self.commit("initial layout")
        moved_to_src = False
        for step in range(steps):
            files = self.files()
            roll = self.rng.random()
            pick = self.rng.choice(files)
            folder = os.path.dirname(pick)
            if step == steps // 2 and not moved_to_src:
                moved_to_src = True
                self.move("pkg", "src/pkg")
                self.commit("move the package into src/")
                for f in self.files():
                    if f.startswith("src/pkg/") and f.endswith("__init__.py"):
                        self.rework(f, 1.0)
                self.commit("sort imports everywhere")
            elif step == steps // 3:
                git(self.path, "rm", "-q", "setup.py", "conftest.py")
                self.move("tool.py", "src/tool/__init__.py" if moved_to_src else "pkg/tool/__init__.py")
                self.commit("drop setup.py and conftest.py, make tool a package")
            elif roll < 0.25:
                new = f"{folder}/new_{self.serial}.py" if folder else f"new_{self.serial}.py"
                self.write(new, self.body(new))
                self.commit(f"add {os.path.basename(new)}")
            elif roll < 0.40:
                self.rework(pick, 0.2)
                self.commit(f"tweak {os.path.basename(pick)}")
            elif roll < 0.52:
                target = f"{folder}/renamed_{self.serial}.py" if folder else f"renamed_{self.serial}.py"
                self.serial += 1
                self.move(pick, target)
                self.commit(f"rename {os.path.basename(pick)}")
            elif roll < 0.62:
                target = f"{folder}/moved_{self.serial}.py" if folder else f"moved_{self.serial}.py"
                self.serial += 1
                self.move(pick, target)
                self.commit(f"move {os.path.basename(pick)}")
                self.rework(target, 1.0)
                self.commit(f"rewrite {os.path.basename(target)}")
            elif roll < 0.70:
                target = f"{folder}/similar_{self.serial}.py" if folder else f"similar_{self.serial}.py"
                self.serial += 1
                self.move(pick, target)
                self.rework(target, 0.4)
                self.commit(f"rename and rework {os.path.basename(pick)}")
            elif roll < 0.80 and not pick.endswith("__init__.py"):
                git(self.path, "rm", "-q", pick)
                self.commit(f"delete {os.path.basename(pick)}")
            else:
                branch = self.rng.choice(["user/7.x", "origin/8.0.x", "feature/bash_completion_6.6", "dev/2.1"])
                number = 100 + step
                git(self.path, "checkout", "-q", "-b", f"b{number}")
                self.rework(pick, 0.3)
                self.commit(f"work on {os.path.basename(pick)}")
                if self.rng.random() < 0.5 and not pick.endswith("__init__.py"):
                    self.move(pick, f"{folder}/branch_{self.serial}.py" if folder else f"branch_{self.serial}.py")
                    self.serial += 1
                    self.commit("rename on the branch")
                git(self.path, "checkout", "-q", "main")
                self.when += timedelta(hours=1)
                stamp = self.when.strftime("%Y-%m-%dT%H:%M:%S+0000")
                subprocess.run(
                    [
                        "git",
                        "merge",
                        "-q",
                        "--no-ff",
                        "-m",
                        f"Merge pull request #{number} from {branch}",
                        f"b{number}",
                    ],
                    cwd=self.path,
                    check=True,
                    capture_output=True,
                    env={**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp},
                )
                git(self.path, "branch", "-q", "-D", f"b{number}")


# -- ground truth -------------------------------------------------------------------------------------------


def _log(repo: Path, oldest: str, head: str) -> tuple[list[str], dict[str, list[str]], dict[str, list[list[str]]]]:
    """Every commit from `oldest` (exclusive) to `head`, oldest first, with its parents and name-status records."""
    out = git(
        repo,
        "log",
        "--reverse",
        "--topo-order",
        "-M",
        "--name-status",
        "-z",
        "--format=%x01%H %P",
        head,
        f"^{oldest}",
        "--",
    )
    order: list[str] = []
    parents: dict[str, list[str]] = {}
    changes: dict[str, list[list[str]]] = {}
    for record in out.split("\x01")[1:]:
        header, _, body = record.partition("\0")
        oid, *rest = header.split()
        fields = [f for f in body.lstrip("\n").split("\0") if f != ""]
        entries, i = [], 0
        while i < len(fields):
            width = 3 if fields[i][0] in "RC" else 2
            entries.append(fields[i : i + width])
            i += width
        order.append(oid)
        parents[oid] = rest
        changes[oid] = entries
    return order, parents, changes


def truth(repo: Path, pairs: list[tuple[str, str]], head: str) -> dict[tuple[str, str], tuple[str, str | None]]:
    """For each (commit, path): ("alive", None) | ("renamed", X) | ("deleted", None) | ("unclassified", None)."""
    alive = set(git(repo, "ls-tree", "-r", "--name-only", head).splitlines())
    commits = sorted({c for c, _ in pairs})
    base = git(repo, "merge-base", "--octopus", *commits).strip() if len(commits) > 1 else commits[0]
    order, parents, changes = _log(repo, base, head)
    result: dict[tuple[str, str], tuple[str, str | None]] = {}
    for commit in commits:
        before: set[str] = set()
        stack = [commit]
        while stack:
            oid = stack.pop()
            if oid in before or oid not in parents:
                continue
            before.add(oid)
            stack.extend(parents[oid])
        span = [oid for oid in order if oid not in before]
        for c, path in pairs:
            if c != commit:
                continue
            if path in alive:
                result[(c, path)] = ("alive", None)
                continue
            where: str | None = path
            for oid in span:
                for entry in changes[oid]:
                    if entry[0].startswith("R") and entry[1] == where:
                        where = entry[2]
                        break
                    if entry[0] == "D" and entry[1] == where:
                        where = None
                        break
                if where is None:
                    break
            if where is None:
                result[(c, path)] = ("deleted", None)
            elif where != path and where in alive:
                result[(c, path)] = ("renamed", where)
            else:
                result[(c, path)] = ("unclassified", where)
    return result


# -- the replay ---------------------------------------------------------------------------------------------


def pick_commits(repo: Path, count: int) -> list[tuple[str, str, list[str]]]:
    """N first-parent commits that touched .py files, evenly spread, oldest first: (oid, subject, paths)."""
    out = git(
        repo,
        "log",
        "--first-parent",
        "-m",
        "--reverse",
        "-M",
        "--name-status",
        "-z",
        "--diff-filter=AMR",
        "--format=%x01%H%x02%s",
        "HEAD",
        "--",
    )
    found = []
    for record in out.split("\x01")[1:]:
        header, _, body = record.partition("\0")
        oid, _, subject = header.strip("\n").partition("\x02")
        fields = [f for f in body.lstrip("\n").split("\0") if f != ""]
        paths, i = [], 0
        while i < len(fields):
            width = 3 if fields[i][0] in "RC" else 2
            new = fields[i + width - 1]
            if new.endswith(".py") and new not in paths:
                paths.append(new)
            i += width
        if paths:
            found.append((oid, subject, paths[:PATHS_PER_NOTE]))
    if len(found) <= count:
        return found
    step = len(found) / count
    return [found[int(i * step)] for i in range(count)]


def replay(source: Path, count: int, work: Path) -> dict[str, object]:
    """Replay `count` commits of `source` as notes in a scratch clone, then judge them at HEAD."""
    clone = work / "clone"
    git(work, "clone", "-q", "--no-hardlinks", str(source), str(clone))
    head = git(clone, "rev-parse", "HEAD").strip()
    branch = git(clone, "rev-parse", "--abbrev-ref", "HEAD").strip()
    commits = pick_commits(clone, count)
    home = work / "home"
    os.environ["CORTEX_HOME"] = str(home)
    clock_at = [datetime(2026, 1, 1, tzinfo=UTC)]

    def clock() -> datetime:
        clock_at[0] += timedelta(seconds=1)
        return clock_at[0]

    named: dict[str, tuple[str, list[str]]] = {}
    started = time.perf_counter()
    for oid, subject, paths in commits:
        git(clone, "reset", "-q", "--hard", oid)
        engine = Engine(str(clone), home=home, clock=clock)
        try:
            wrote = engine.note("insight", f"{subject}\ntouches {', '.join(paths)}")
        finally:
            engine.close()
        named[wrote.item_id] = (oid, paths)
    replay_s = time.perf_counter() - started
    git(clone, "reset", "-q", "--hard", head)
    if branch != "HEAD":
        git(clone, "checkout", "-q", branch)
    pairs = [(oid, path) for oid, paths in named.values() for path in paths]
    expected = truth(clone, pairs, head)

    engine = Engine(str(clone), home=home, clock=clock)
    try:
        started = time.perf_counter()
        report = engine.validate_memory(persist=False)
        cold_ms = (time.perf_counter() - started) * 1000
        warm_runs = []
        for _ in range(3):
            started = time.perf_counter()
            engine.validate_memory(persist=False)
            warm_runs.append((time.perf_counter() - started) * 1000)
        scored = score(report, named, expected)
        # The worst case: no chain stored or cached (a store that never saw HEAD move), walked in one pass.
        engine.conn.execute("DELETE FROM rename_chains")
        inventory.chain_cache.clear()
        started = time.perf_counter()
        scratch = engine.validate_memory(persist=False)
        scratch_ms = (time.perf_counter() - started) * 1000
        scored["same_verdicts_from_scratch"] = scratch["items"] == report["items"]
        cli_ms = cli_validate(clone)
        warm_1000 = warm_validate(engine, WARM_NOTES)
    finally:
        engine.close()
    return {
        "commits_replayed": len(commits),
        "notes": len(named),
        "pairs": len(pairs),
        "replay_s": round(replay_s, 1),
        "validate_all_notes_ms": {
            "cold_in_process": round(cold_ms, 1),
            "warm_in_process": round(min(warm_runs), 1),
            "no_stored_chains_in_process": round(scratch_ms, 1),
            "cli_process": cli_ms,
        },
        "warm_validate_1000_notes_ms": warm_1000,
        **scored,
    }


def score(
    report: dict, named: dict[str, tuple[str, list[str]]], expected: dict[tuple[str, str], tuple[str, str | None]]
) -> dict[str, object]:
    """Accuracy per class, false alarms and misses, from the engine's report and the ground truth."""
    got: dict[tuple[str, str], tuple[str, str | None]] = {}
    extra: Counter[str] = Counter()
    false_alarms: list[str] = []
    for item in report["items"]:
        if item["id"] not in named:
            continue
        oid, paths = named[item["id"]]
        for ref in item["references"]:
            if ref["path"] in paths:
                got[(oid, ref["path"])] = (ref["status"], ref["moved_to"])
            else:
                extra[ref["status"]] += 1
                if ref["status"] == "missing":
                    false_alarms.append(f"{oid[:10]} {ref['path']} (not a named path)")
    classes: dict[str, dict[str, object]] = {}
    misses: list[str] = []
    for (oid, path), (kind, to) in sorted(expected.items(), key=lambda kv: kv[1][0]):
        verdict = got.get((oid, path), ("not extracted", None))
        right = {
            "alive": verdict[0] == "exists",
            "renamed": verdict == ("moved", to),
            "deleted": verdict[0] == "missing",
            "unclassified": verdict[0] != "missing",
        }[kind]
        entry = classes.setdefault(kind, {"pairs": 0, "right": 0})
        entry["pairs"] = int(entry["pairs"]) + 1
        entry["right"] = int(entry["right"]) + int(right)
        if not right:
            misses.append(f"{kind:8} {oid[:10]} {path} -> {to}: engine says {verdict[0]} {verdict[1] or ''}".rstrip())
        if kind in ("alive", "renamed") and verdict[0] == "missing":
            false_alarms.append(f"{oid[:10]} {path} ({kind}) called missing")
    for entry in classes.values():
        entry["accuracy"] = round(100.0 * int(entry["right"]) / max(1, int(entry["pairs"])), 1)
    return {"classes": classes, "false_alarms": false_alarms, "extra_references": dict(extra), "misses": misses[:40]}


def cli_validate(clone: Path) -> float:
    """Wall time of one `cortex validate-memory --json` process (warm store, fresh process)."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "cortex_engine.adapters.cli", "validate-memory", "--json"],
        cwd=clone,
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return round((time.perf_counter() - started) * 1000, 1)


def warm_validate(engine: Engine, notes: int) -> dict[str, object]:
    """Copy the replayed notes' items and references up to `notes` items, then time a warm validate over them."""
    conn: sqlite3.Connection = engine.conn
    rows = conn.execute(
        "SELECT * FROM memory_items WHERE id IN (SELECT memory_item_id FROM memory_references)"
    ).fetchall()
    refs = conn.execute("SELECT * FROM memory_references").fetchall()
    by_item: dict[str, list[sqlite3.Row]] = {}
    for ref in refs:
        by_item.setdefault(ref["memory_item_id"], []).append(ref)
    conn.execute("BEGIN")
    n = 0
    while rows and len(rows) * (n + 1) < notes:
        n += 1
        for row in rows:
            if len(rows) * n + rows.index(row) >= notes:
                break
            copy = {k: row[k] for k in row.keys() if k not in ("source_table", "source_id")}
            copy["id"] = f"{row['id']}:copy{n}"
            copy["own_source"] = "[null, null]"  # schema 11: a copy has no source
            conn.execute(
                f"INSERT INTO memory_items({','.join(copy)}) VALUES ({','.join('?' * len(copy))})", tuple(copy.values())
            )
            for ref in by_item.get(row["id"], []):
                queries.add_references(
                    conn,
                    copy["id"],
                    [(ref["reference_type"], ref["raw_reference"], ref["normalized_path"])],
                    ref["head_oid"],
                )
    conn.execute("COMMIT")
    items = [
        (r["id"], r["scope_key"])
        for r in conn.execute(
            "SELECT id, scope_key FROM scoped_items WHERE id IN (SELECT memory_item_id FROM memory_references)"
        )
    ]
    Validator(conn, engine.scope).validate_many(items)  # warm-up: this process's chain cache
    runs = []
    for _ in range(7):
        started = time.perf_counter()
        Validator(conn, engine.scope).validate_many(items)
        runs.append((time.perf_counter() - started) * 1000)
    median = statistics.median(runs)
    return {
        "notes": len(items),
        "median_ms": round(median, 1),
        "target_ms": TARGET_WARM_MS,
        "met": median < TARGET_WARM_MS,
    }


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, replay, print the report (and write it with --out)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--repo", type=Path, help="any git repository (never modified: a scratch clone is used)")
    source.add_argument("--synthetic", action="store_true", help="build a repository with every class of the issue")
    parser.add_argument("--commits", type=int, default=150, help="how many commits to replay (default 150)")
    parser.add_argument("--steps", type=int, default=240, help="--synthetic: how many history steps to build")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, help="also write the report as JSON here")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="cortex-freshness-"))
    try:
        if args.synthetic:
            origin = work / "synthetic"
            origin.mkdir()
            Synth(origin, args.seed).build(args.steps)
            name = f"synthetic(seed={args.seed}, steps={args.steps})"
        else:
            origin = args.repo.resolve()
            name = str(origin)
        result = {"repository": name, **replay(origin, args.commits, work)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
