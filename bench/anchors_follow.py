"""Claim-level anchors on real history, the classes that follow code: decorator-only changes, functions moved to
another file, functions renamed in place; with the classes the anchors already judged (changed, unchanged, gone).

Usage:
    python bench/anchors_follow.py --repo PATH [--window 1500] [--per-class 40] [--base-tree DIR] [--out report.json]
        [--keep DIR]   (keep the scratch clone and its store in DIR, a new directory)
    python bench/anchors_follow.py --cost-only DIR [--base-tree DIR] [--rounds 5] [--no-bytecode]
        (step 5 alone on a kept DIR)

What it does, in a scratch clone (the source repository is never modified, and nothing of it is kept):
  1. walks the last `--window` first-parent, non-merge commits touching `.py`, oldest first, and reads each changed
     Python file before and after the commit with `ast` (independent of the engine's definitions code). An event is:
     - `decorators`: a definition whose decorator lines changed and whose own lines (header to end) did not
       (whitespace aside); its neighbours in the same file, untouched by the commit, are `unchanged` events;
     - `moved`: a qualified name no longer defined in one file and newly defined in another by the same commit,
       keeping at least half of its lines as git measures a rename (`kept_share`); below that, `moved, rewritten`
       (the name went on, most of the code did not: a class split in two);
     - `gone`: a top-level name deleted from a file that stays, neither moved nor renamed, by a commit whose every
       changed file `ast` parses (Python 2 code does not parse: the name may have gone into it);
     - `renamed`: a name gone from a file and another new in it whose text, the new name read as the old, is equal.
     Functions the commit changed otherwise are `changed` events (at most `--per-class` of each class).
  2. for each event, `git reset --hard <commit>^` and a note (the engine call behind `cortex note`) naming the
     definition where it was: `name() in path`; then `git reset --hard <commit>` and the engine's verdict on it;
  3. truth at that commit from git and `ast` alone: the definition where the note named it (its file followed
     through git's renames), compared with its text at the note's commit: only its decorators differ ->
     decorators, its own lines differ -> changed, equal -> unchanged; gone from there but defined under the same
     qualified name in the file the commit moved it to -> moved (or `moved, rewritten`, as above); defined under
     the new name with the same text -> renamed (with other text: renamed+changed); otherwise gone;
  4. the confusion matrix per truth class;
  5. at HEAD, the CPU cost of a warm `validate-memory` over every note of the store (most of them now on code that
     moved on: the follow path's worst case) with this tree and with `--base-tree` (a checkout of the engine
     before this change), interleaved, median of `--rounds` processes each.

Expected: decorators -> drifted, moved -> moved naming the new file (+ drifted when changed), renamed -> moved
naming the new name, changed -> drifted, unchanged -> fresh, gone -> missing (or the file gone: unknown);
`moved, rewritten` is shown, not scored (the engine's own threshold decides it).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.anchors_history import git  # noqa: E402
from cortex_engine.engine import Engine  # noqa: E402
from cortex_engine.scope.freshness import Validator  # noqa: E402

Definition = tuple[str, str, int, tuple[str, ...]]
"""(decorator text, own text from the header, header line, its lines whitespace-free with blank ones dropped)"""


def definitions(text: str) -> dict[str, Definition]:
    """Every function and class `ast` finds, by qualified name: its decorators' text and its own (whitespace-free)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    lines = text.splitlines()
    found: dict[str, Definition] = {}
    seen: set[str] = set()

    def walk(body: list[ast.stmt], outer: list[str]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = ".".join([*outer, node.name])
                first = min((d.lineno for d in node.decorator_list), default=node.lineno)
                deco = "".join("".join(lines[first - 1 : node.lineno - 1]).split())
                own = "".join("".join(lines[node.lineno - 1 : node.end_lineno]).split())
                kept = tuple(s for line in lines[first - 1 : node.end_lineno] if (s := "".join(line.split())))
                if name in seen:
                    found.pop(name, None)  # defined twice: no single answer
                else:
                    found[name] = (deco, own, node.lineno, kept)
                seen.add(name)
                walk(node.body, [*outer, node.name])

    walk(tree.body, [])
    return found


GIT_RENAME_SHARE = 0.5
"""git's own yardstick for a rename (`-M50%`): the share of the larger side's lines found in the other."""


def kept_share(then: Definition, now: Definition) -> float:
    """How much of a definition another one keeps, as git measures a rename (copied content over the larger
    side's size), by whole lines, whitespace removed: independent of the engine's own measure (difflib's ratio)."""
    shared = sum((Counter(then[3]) & Counter(now[3])).values())
    return shared / max(len(then[3]), len(now[3]), 1)


def parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def show(repo: Path, oid: str, path: str) -> str | None:
    out = subprocess.run(
        ["git", "show", f"{oid}:{path}"], cwd=repo, capture_output=True, text=True, errors="replace", check=False
    )
    return out.stdout if out.returncode == 0 else None


def mine(repo: Path, window: int, per_class: int) -> list[dict[str, object]]:
    """The events of the last `window` commits (see the module docstring), at most `per_class` of each class."""
    out = git(repo, "log", "--first-parent", "--no-merges", f"-n{window}", "--format=%H", "--", "*.py")
    commits = out.split()  # newest first: the events nearest today, until each class has its share
    events: list[dict[str, object]] = []
    count: dict[str, int] = {}

    def add(kind: str, **event: object) -> None:
        if count.get(kind, 0) < per_class:
            count[kind] = count.get(kind, 0) + 1
            events.append({"class": kind, **event})

    for oid in commits:
        status = git(repo, "diff", "--name-status", "--no-renames", f"{oid}^", oid, "--", "*.py", check=False)
        files = [line.split("\t", 1) for line in status.splitlines() if "\t" in line]
        before: dict[str, dict[str, Definition]] = {}
        after: dict[str, dict[str, Definition]] = {}
        unread = False  # a changed file `ast` cannot parse (Python 2): what it defines is unknown
        for letter, path in files:
            old = show(repo, f"{oid}^", path) if letter != "A" else None
            new = show(repo, oid, path) if letter != "D" else None
            before[path] = definitions(old) if old else {}
            after[path] = definitions(new) if new else {}
            unread = unread or any(text and not parses(text) for text in (old, new))
        gone = {(p, n) for p in before for n in before[p] if n not in after.get(p, {})}
        born = {(p, n) for p in after for n in after[p] if n not in before.get(p, {})}
        for path, name in sorted(gone):
            if name.rsplit(".", 1)[-1].startswith("__"):
                continue
            elsewhere = [p for p, n in born if n == name and p != path]
            if len(elsewhere) == 1:
                alike = kept_share(before[path][name], after[elsewhere[0]][name]) >= GIT_RENAME_SHARE
                kind = "moved" if alike else "moved, rewritten"  # (git would not call it the same code)
                add(kind, commit=oid, path=path, name=name, to_path=elsewhere[0], to_name=name)
                continue
            if not unread and not any(n == name for _, n in born) and "." not in name and after.get(path):
                add("gone", commit=oid, path=path, name=name)  # (a rename below takes it back)
            deco, own, *_ = before[path][name]
            short = name.rsplit(".", 1)[-1]
            for p, n in sorted(born):
                if p != path or n.rsplit(".", 1)[0:-1] != name.rsplit(".", 1)[0:-1]:
                    continue
                d2, o2, *_ = after[p][n]
                new_short = n.rsplit(".", 1)[-1]
                if d2 == deco and o2.replace(new_short, short) == own and new_short != short:
                    if events and events[-1]["class"] == "gone" and events[-1]["name"] == name:
                        events.pop()
                        count["gone"] -= 1
                    add("renamed", commit=oid, path=path, name=name, to_path=path, to_name=n)
                    break
        for path in after:
            for name, (deco, own, *_) in after[path].items():
                if name not in before.get(path, {}) or "." in name and name.count(".") > 1:
                    continue
                was = before[path][name]
                if was[1] == own and was[0] != deco:
                    add("decorators", commit=oid, path=path, name=name)
                    for other, (d3, o3, *_) in before[path].items():
                        if other != name and "." not in other and after[path].get(other, (None, None))[:2] == (d3, o3):
                            add("unchanged", commit=oid, path=path, name=other)
                            break
                elif was[1] != own and not name.rsplit(".", 1)[-1].startswith("__"):
                    add("changed", commit=oid, path=path, name=name)
        if all(
            count.get(k, 0) >= per_class for k in ("decorators", "moved", "renamed", "changed", "unchanged", "gone")
        ):
            break
    return events


_renamed: dict[tuple[str, str], list[tuple[str, str]]] = {}


def at_head(repo: Path, commit: str, path: str, head: str = "HEAD") -> str:
    """Where `path` of commit `commit` is at `head`, following git's renames commit by commit (`git log -M`)."""
    if (commit, head) not in _renamed:
        out = git(
            repo,
            "log",
            "--reverse",
            "--first-parent",
            "-M",
            "--diff-filter=R",
            "--name-status",
            "-z",
            "--format=",
            f"{commit}..{head}",
            "--",
            check=False,
        ).split("\0")
        moves: list[tuple[str, str]] = []
        i = 0
        while i < len(out) - 2:
            if out[i].strip().startswith("R"):
                moves.append((out[i + 1], out[i + 2]))
                i += 3
            else:
                i += 1
        _renamed[(commit, head)] = moves
    where = path
    for old, new in _renamed[(commit, head)]:
        if old == where:
            where = new
    return where


def truth(repo: Path, event: dict[str, object], at: str) -> str:
    """The class of an event's definition at commit `at` (checked out), from git and `ast` alone (its file followed
    by git's renames)."""
    commit, path, name = str(event["commit"]), str(event["path"]), str(event["name"])
    then = definitions(show(repo, f"{commit}^", path) or "").get(name)
    where = repo / at_head(repo, f"{commit}^", path, at)
    here = definitions(where.read_text(errors="replace")) if where.is_file() else {}
    now = here.get(name)
    if then is not None and now is not None:
        if now[1] != then[1]:
            return "changed"
        return "decorators" if now[0] != then[0] else "unchanged"
    if str(event["class"]).startswith("moved"):
        target = repo / at_head(repo, commit, str(event["to_path"]), at)
        moved = definitions(target.read_text(errors="replace")).get(name) if target.is_file() else None
        if moved is not None and then is not None:
            return "moved" if kept_share(then, moved) >= GIT_RENAME_SHARE else "moved, rewritten"
    if event["class"] == "renamed" and then is not None:
        renamed = here.get(str(event["to_name"]))
        if renamed is not None:
            short, new = name.rsplit(".", 1)[-1], str(event["to_name"]).rsplit(".", 1)[-1]
            same = renamed[0] == then[0] and renamed[1].replace(new, short) == then[1]
            return "renamed" if same else "renamed+changed"
    return "gone"


def outcome(event: dict[str, object], verdict: object, target: tuple[str, str] | None) -> str:
    """The engine's answer for one anchor, in the matrix's words (`target`: where the event took it, at HEAD)."""
    if verdict is None:
        return "not anchored"
    status = verdict.status
    if status == "moved":
        where = (verdict.path, verdict.current_symbol)
        right = where == target
        return ("moved" if right else "moved elsewhere") + (" + drifted" if verdict.changed else "")
    return str(status)


def replay(source: Path, window: int, per_class: int, work: Path) -> tuple[dict[str, object], Path, Path]:
    clone = work / "clone"
    git(work, "clone", "-q", "--no-hardlinks", str(source), str(clone))
    head = git(clone, "rev-parse", "HEAD").strip()
    home = work / "home"
    os.environ["CORTEX_HOME"] = str(home)
    at = [datetime(2026, 1, 1, tzinfo=UTC)]

    def clock() -> datetime:
        at[0] += timedelta(seconds=1)
        return at[0]

    events = mine(clone, window, per_class)
    matrix: dict[str, dict[str, int]] = {}
    rows = []
    for event in sorted(events, key=lambda e: str(e["commit"])):
        # The note is written where the code was (the commit's parent) and judged where the commit took it.
        git(clone, "reset", "-q", "--hard", f"{event['commit']}^")
        engine = Engine(str(clone), home=home, clock=clock)
        try:
            wrote = engine.note("insight", f"{event['name']}() in {event['path']} is what the claim is about")
            git(clone, "reset", "-q", "--hard", str(event["commit"]))
            engine.refresh()
            validation = Validator(engine.conn, engine.scope).validate(wrote.item_id, engine.scope.key)
        finally:
            engine.close()
        anchored = [a for a in validation.anchors if a.symbol == event["name"]]
        cls = truth(clone, event, str(event["commit"]))
        target = (str(event["to_path"]), str(event["to_name"])) if "to_path" in event else None
        got = outcome(event, anchored[0] if anchored else None, target)
        matrix.setdefault(cls, {}).setdefault(got, 0)
        matrix[cls][got] += 1
        rows.append({**event, "truth": cls, "engine": got, "label": validation.label})
    git(clone, "reset", "-q", "--hard", head)
    written = rows
    return (
        {
            "events_mined": {
                k: sum(e["class"] == k for e in events) for k in sorted({str(e["class"]) for e in events})
            },
            "notes": len(written),
            "judged_at": "each event's own commit; validate-memory's cost at HEAD over every note",
            "confusion": matrix,
            "rows": rows,
        },
        clone,
        home,
    )


COST = """
import sys, time, statistics, os
from cortex_engine.engine import Engine
from pathlib import Path
e = Engine(sys.argv[1], home=Path(sys.argv[2]))
g = os.times(); t = time.thread_time(); e.validate_memory(persist=False); cold = (time.thread_time() - t) * 1000
g2 = os.times(); git = (g2.children_user + g2.children_system - g.children_user - g.children_system) * 1000
runs = []
for _ in range(int(sys.argv[3])):
    t = time.thread_time(); e.validate_memory(persist=False); runs.append((time.thread_time() - t) * 1000)
print(cold, statistics.median(runs), git)
"""


def cost(clone: Path, home: Path, base: Path | None, rounds: int, bytecode: bool = True) -> dict[str, object]:
    """CPU ms of a warm in-process `validate-memory` (median of 3 per process) and of each process's first one
    (`cold`: what one `cortex validate-memory` pays, every file read and every answer found afresh; `cold_git`: the
    CPU of the git processes it ran, counted apart), this tree and the base tree alternating, `rounds` processes
    each; the store is copied so both read the same rows. With `bytecode` each tree's modules are compiled first
    (as an install has them; into a cache of the bench's own, `PYTHONPYCACHEPREFIX`), else every process compiles
    the modules the check imports (what a checkout run with `PYTHONDONTWRITEBYTECODE` pays)."""
    trees = {"this": ROOT} | ({"base": base} if base else {})
    caches = {name: Path(tempfile.mkdtemp(prefix="cortex-pyc-")) for name in trees}
    for name, tree in trees.items():
        if bytecode:
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", str(tree / "cortex_engine")],
                env={**os.environ, "PYTHONPYCACHEPREFIX": str(caches[name])},
                capture_output=True,
                check=True,
            )
    runs: dict[str, list[float]] = {k: [] for k in trees}
    colds: dict[str, list[float]] = {k: [] for k in trees}
    gits: dict[str, list[float]] = {k: [] for k in trees}
    for _ in range(rounds):
        for name, tree in trees.items():
            copy = Path(tempfile.mkdtemp(prefix="cortex-cost-"))
            shutil.copytree(home, copy / "home")
            done = subprocess.run(
                # -P: the tree under test alone on the path (not the working directory's engine)
                [sys.executable, "-P", "-c", COST, str(clone), str(copy / "home"), "3"],
                cwd=copy,
                env={
                    **os.environ,
                    "PYTHONPATH": str(tree),
                    "CORTEX_HOME": str(copy / "home"),
                    "PYTHONPYCACHEPREFIX": str(caches[name]),  # empty without `bytecode`
                    "PYTHONDONTWRITEBYTECODE": "1",
                },
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise SystemExit(f"cost run with {tree} failed:\n{done.stderr[-2000:]}")
            cold, warm, git_ms = done.stdout.split()
            colds[name].append(float(cold))
            gits[name].append(float(git_ms))
            runs[name].append(float(warm))
            shutil.rmtree(copy, ignore_errors=True)
    for cache in caches.values():
        shutil.rmtree(cache, ignore_errors=True)
    out: dict[str, object] = {"bytecode": bytecode} | {
        k: {
            "median_cpu_ms": round(statistics.median(v), 1),
            "runs": [round(x, 1) for x in v],
            "cold_median_cpu_ms": round(statistics.median(colds[k]), 1),
            "cold_runs": [round(x, 1) for x in colds[k]],
            "cold_git_median_cpu_ms": round(statistics.median(gits[k]), 1),
        }
        for k, v in runs.items()
    }
    if base:
        out["ratio"] = round(statistics.median(runs["this"]) / statistics.median(runs["base"]), 2)
        out["cold_ratio"] = round(statistics.median(colds["this"]) / statistics.median(colds["base"]), 2)
        both = {k: [c + g for c, g in zip(colds[k], gits[k], strict=True)] for k in trees}
        out["cold_with_git_ratio"] = round(statistics.median(both["this"]) / statistics.median(both["base"]), 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="a git repository (never modified)")
    parser.add_argument("--window", type=int, default=1500, help="mine this many recent commits (default 1500)")
    parser.add_argument("--per-class", type=int, default=40, help="events of each class at most (default 40)")
    parser.add_argument("--base-tree", type=Path, help="a checkout of the engine to compare validate-memory's cost")
    parser.add_argument("--rounds", type=int, default=5, help="cost: processes per tree, interleaved (default 5)")
    parser.add_argument("--out", type=Path, help="also write the report as JSON here")
    parser.add_argument("--keep", type=Path, help="replay in this new directory and keep its clone and store")
    parser.add_argument("--cost-only", type=Path, help="measure the cost alone on a directory kept by --keep")
    parser.add_argument(
        "--no-bytecode", action="store_true", help="cost: every process compiles what it imports (no .pyc)"
    )
    args = parser.parse_args(argv)
    if args.cost_only:
        clone, home = args.cost_only / "clone", args.cost_only / "home"
        print(json.dumps(cost(clone, home, args.base_tree, args.rounds, not args.no_bytecode), indent=2))
        return 0
    if args.repo is None:
        parser.error("--repo is required (or --cost-only DIR)")
    work = args.keep or Path(tempfile.mkdtemp(prefix="cortex-follow-"))
    work.mkdir(parents=True, exist_ok=bool(args.keep is None))
    try:
        report, clone, home = replay(args.repo.resolve(), args.window, args.per_class, work)
        if args.out:
            args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        report = {
            "repository": str(args.repo.resolve()),
            **report,
            "validate_cost": cost(clone, home, args.base_tree, args.rounds, not args.no_bytecode),
        }
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
