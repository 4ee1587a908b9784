"""Mutation testing of the rule modules with mutmut, module by module, each against only the tests that cover it.

Usage (from the repository root, in a venv with `pip install -e '.[test]' mutmut`):

    python bench/mutation.py                      # every module in MODULES (slow: about an hour on 2 cores)
    python bench/mutation.py memory/notes.py ...  # some of them (paths under cortex_engine/)
    python bench/mutation.py --jobs 2 --out /tmp/mut
    python bench/mutation.py query/render.py --only '*x_clip*' --only '*x_label_suffix*'   # a sample: some functions

Each module is mutated in its own copy of the working tree (`<out>/<module>/`, so the checkout is never
touched), `mutmut run` runs there with the module's test files only, and the outcome of every mutant is read
from mutmut's own records. `<out>/results.json` gathers them; `bench/mutation-equivalent.json` names the
survivors judged equivalent (same observable behaviour) with the reason, keyed by what each mutant changes and
the function as it was judged (`bench/mutation_keys.py`: an edit to a function retires its judgements, a
renumbering cannot move one onto another mutant), and the score leaves them out:

    score = killed / (mutants checked - equivalent)

A test that starts `cortex` in a child process takes part like any other: `bench/mutation_child.py`, copied in
as `sitecustomize.py` and a pytest plugin, hands the functions the child reaches at mutmut's clean run to the
test that started it, and a child under a mutant runs the mutant.

With `--only` (mutmut's own name patterns, e.g. `*x_clip*`) only the functions named are mutated: a sample,
reported as such (the mutants not checked are counted apart).

`MUTATION.md` reports the last run. This is not part of CI: it is too slow for it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import mutation_child  # noqa: E402
import mutation_keys  # noqa: E402 (sibling scripts, not a package)

EQUIVALENT = mutation_keys.EQUIVALENT

# Module (under cortex_engine/) -> the test files that exercise it. Every mutant of the module runs only the
# tests of these files that reach the mutated function (mutmut records which at its first, clean run).
MODULES: dict[str, list[str]] = {
    "memory/notes.py": [
        "tests/test_notes.py",
        "tests/test_note_projection.py",
        "tests/test_inspection.py",
        "tests/test_freshness.py",
        "tests/test_undo.py",
        "tests/test_references.py",
        "tests/test_anchors.py",
    ],
    "memory/contradiction.py": ["tests/test_contradiction.py"],
    "memory/merges.py": ["tests/test_merges.py"],
    "query/retrieval.py": [
        "tests/test_retrieval.py",
        "tests/test_ranking.py",
        "tests/test_hybrid_fusion.py",
        "tests/test_surfaces.py",
    ],
    "query/render.py": [
        "tests/test_render_rules.py",
        "tests/test_budget_packer.py",
        "tests/test_surfaces.py",
        "tests/test_session_brief_budget.py",
        "tests/test_trust_exactness.py",
        "tests/security/test_budgets.py",
        "tests/security/test_forged_labels.py",
        "tests/security/test_long_labels.py",
    ],
    "memory/items.py": [
        "tests/test_items_rules.py",
        "tests/test_notes.py",
        "tests/test_trust_exactness.py",
        "tests/security/test_forged_labels.py",
    ],
    "memory/tiers.py": [
        "tests/test_tiers_rules.py",
        "tests/test_ranking.py",
        "tests/test_surfaces.py",
        "tests/test_engine_facade.py",
    ],
    "memory/sharing.py": ["tests/test_sharing.py", "tests/test_inbox.py"],
    "memory/transfer.py": ["tests/test_transfer_rules.py", "tests/test_transfer.py", "tests/test_inbox.py"],
    "memory/arrivals.py": [
        "tests/test_arrivals.py",
        "tests/test_inbox.py",
        "tests/test_sharing.py",
        "tests/test_transfer.py",
        "tests/security/test_secrets.py",
    ],
    "memory/inbox.py": [
        "tests/test_inbox.py",
        "tests/test_transfer.py",
        "tests/test_sharing.py",
        "tests/security/test_secrets.py",
    ],
    "memory/projection.py": [
        "tests/test_projection_rules.py",
        "tests/test_surfaces.py",
        "tests/test_flush_rules.py",
        "tests/test_capture.py",
    ],
    "scope/identity.py": ["tests/test_identity_rules.py", "tests/test_scope.py"],
    "scope/references.py": ["tests/test_references_rules.py", "tests/test_references.py"],
    "scope/history.py": ["tests/test_history_rules.py", "tests/test_history_freshness.py"],
    "scope/freshness.py": [
        "tests/test_freshness_rules.py",
        "tests/test_freshness.py",
        "tests/test_history_freshness.py",
        "tests/test_anchors.py",
    ],
    "scope/inventory.py": [
        "tests/test_inventory.py",
        "tests/test_freshness_rules.py",
        "tests/test_freshness.py",
        "tests/test_history_freshness.py",
    ],
    "scope/anchors.py": ["tests/test_anchors_rules.py", "tests/test_anchors.py"],
    "capture/flush.py": [
        "tests/test_flush_rules.py",
        "tests/test_capture.py",
        "tests/test_session_e2e.py",
        "tests/test_substitution.py",
        "tests/reliability/test_bad_input.py",
    ],
    "memory/corrections.py": [
        "tests/test_corrections.py",
        "tests/test_inspection.py",
        "tests/test_undo.py",
        "tests/test_engine_facade.py",
        "tests/test_capture.py",
        "tests/reliability/test_hostile_content.py",
    ],
    "scope/storeinfo.py": ["tests/test_storeinfo.py", "tests/test_store.py", "tests/test_engine_facade.py"],
    "capture/command_runs.py": ["tests/test_commands_rules.py", "tests/test_capture.py", "tests/test_flush_rules.py"],
    "capture/digests.py": [
        "tests/test_digests.py",
        "tests/test_flush_rules.py",
        "tests/test_capture.py",
        "tests/test_substitution.py",
    ],
}

STATUS = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    36: "timeout",
    37: "killed",
    -24: "timeout",
    24: "timeout",
    152: "timeout",
}
"""mutmut's exit codes (its `stats.status_by_exit_code`); a timeout counts as killed in the score."""

CHILD_HOOK = ("sitecustomize.py", "mutmut_children.py")
"""`bench/mutation_child.py` under the two names it serves by (a child's start-up hook, mutmut's pytest plugin)."""

_IGNORED = shutil.ignore_patterns(".git", ".venv", "mutants", "__pycache__", "*.egg-info", ".hypothesis")


_SHOW = """
import json, sys
from mutmut.__main__ import find_mutant, get_diff_for_mutant
names = json.loads(sys.stdin.read())
print(json.dumps({n: get_diff_for_mutant(n, path=find_mutant(n).path) for n in names}))
"""
"""Every survivor's diff in one process (`mutmut show` once per mutant costs a second each)."""


def prepare(module: str, tests: list[str], work: Path) -> None:
    """A copy of the working tree at `work` whose pyproject tells mutmut what to mutate and what to run."""
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(ROOT, work, ignore=_IGNORED)
    configure(module, tests, work)


def configure(module: str, tests: list[str], work: Path) -> None:
    """Write (or rewrite) the `[tool.mutmut]` section of the copy's pyproject: the module and its test files.

    A changed list of test files makes mutmut forget every verdict and record again which tests reach each
    function; `--again` relies on that so that the survivors meet the test files added since the run.
    """
    # the hook that lets a test's child processes (`cortex ...` in a temp repository) take part in the clean run
    for name in CHILD_HOOK:
        shutil.copyfile(ROOT / "bench" / "mutation_child.py", work / name)
    config = {
        "source_paths": [f"cortex_engine/{module}"],
        "pytest_add_cli_args_test_selection": tests,
        # `-n 0`: the suite's addopts spread tests over workers, but mutmut records which tests reach
        # each function, and runs each mutant, in its own process
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-p", "mutmut_children", "-n", "0", "-x", "-q"],
        "also_copy": ["cortex_engine", "cortex_tui", "tests", "eval", "hooks", "plugin", *CHILD_HOOK],
    }
    pyproject = work / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8").split("\n[tool.mutmut]\n", 1)[0]
    text += "\n[tool.mutmut]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in config.items())
    pyproject.write_text(text, encoding="utf-8")


def run(
    module: str,
    tests: list[str],
    out: Path,
    jobs: int,
    only: list[str],
    budget: float | None,
    survivors: list[str] | None = None,
) -> dict[str, object]:
    """Mutate one module (only the functions `only` names, when given); return each mutant's outcome and the
    survivors' diffs. With `survivors`, run only those mutants again in the last run's copy, with the tests as
    they are now (the module itself must not have changed, or the names would not match)."""
    work = out / module.replace("/", "-").removesuffix(".py")
    if survivors == ["--collect"]:
        pass  # read what the last run in `work` recorded (a run that was stopped)
    elif survivors is None:
        prepare(module, tests, work)
    else:
        shutil.copytree(ROOT / "tests", work / "tests", dirs_exist_ok=True, ignore=_IGNORED)
        configure(module, tests, work)
        only = survivors
    started = time.monotonic()
    if survivors != ["--collect"]:
        mutate(work, jobs, only, budget)
    seconds = round(time.monotonic() - started)
    outcome = outcomes(module, work)
    if outcome is None:
        return {"module": module, "error": (work / "mutmut.log").read_text()[-2000:], "seconds": seconds}
    alive = [name for name, status in outcome.items() if status in ("survived", "no tests")]
    shown = subprocess.run(
        [sys.executable, "-c", _SHOW], cwd=work, input=json.dumps(alive), capture_output=True, text=True
    )
    diffs = {
        name: "\n".join(
            line for line in diff.splitlines() if line.startswith(("-", "+")) and not line.startswith(("---", "+++"))
        )
        for name, diff in (json.loads(shown.stdout) if shown.returncode == 0 else {}).items()
    }
    return {
        "module": module,
        "tests": tests,
        "only": only,
        "seconds": seconds,
        "outcome": outcome,
        "survivor_diffs": diffs,
        "survivor_changes": survivor_changes(module, work, alive),
    }


def mutate(work: Path, jobs: int, only: list[str], budget: float | None) -> None:
    """`mutmut run` in the prepared copy `work` (only the functions `only` names, when given), stopped after
    `budget` seconds; its output goes to `work/mutmut.log`."""
    # mutmut ends each mutant's pytest with os._exit, so pytest's numbered temp folders keep their lock files and
    # its clean-up keeps them for three days: four lanes left 71 GB of them in /tmp in one evening and filled the
    # disk. Each run gets its own temp folder, removed when it ends.
    scratch = work / "tmp"
    scratch.mkdir(exist_ok=True)
    hits = work / "child-hits"  # where a test's child processes write what they reached
    hits.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(scratch), mutation_child.HITS: str(hits)}
    with (work / "mutmut.log").open("a") as log:
        mutmut = subprocess.Popen(
            [sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs), *only],
            cwd=work,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            mutmut.wait(timeout=budget)
        except subprocess.TimeoutExpired:  # out of time: what mutmut has recorded so far is the sample
            os.killpg(mutmut.pid, signal.SIGTERM)
            mutmut.wait()
    shutil.rmtree(scratch, ignore_errors=True)


def outcomes(module: str, work: Path) -> dict[str, str] | None:
    """Each mutant's outcome as mutmut recorded it in `work` (None when it recorded nothing: a failed start)."""
    meta = work / "mutants" / "cortex_engine" / f"{module}.meta"
    if not meta.exists():
        return None
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    return {name: STATUS.get(code, "suspicious") if code is not None else "not checked" for name, code in codes.items()}


def survivor_changes(module: str, work: Path, alive: list[str]) -> dict[str, dict[str, str]]:
    """What each surviving mutant changes (`mutation_keys`), read from the module as the run mutated it; a
    change more than one mutant of its function makes is left out (no judgement can name it alone)."""
    source = (work / "cortex_engine" / module).read_text(encoding="utf-8")
    mutants = mutation_keys.mutants_of(source, f"cortex_engine/{module}")
    made = Counter((m["function"], m["before"], m["after"]) for m in mutants.values())
    prefix = "cortex_engine." + module.removesuffix(".py").replace("/", ".") + "."
    out: dict[str, dict[str, str]] = {}
    for name in alive:
        change = mutants.get(name.removeprefix(prefix))
        if change and made[(change["function"], change["before"], change["after"])] == 1:
            out[name] = change
    return out


_SQL_WORD = re.compile(
    r"\b(select|update|insert|delete|values|from|where|into|set|order|by|limit|and|null|savepoint|"
    r"rollback|release)\b",
    re.IGNORECASE,
)
_ROW_KEY = re.compile(r'\[\s*"(\w+)"\s*\]')
_PY_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_SQL_START = re.compile(
    r"\s*(select|update|insert|delete|savepoint|rollback|release|where|and|order|group|limit|"
    r"values|from|join)\b\s*\S",
    re.IGNORECASE,
)
_SQL_LITERAL = re.compile(r"'[^']*'")
_FIELD = re.compile(r"\{[^}]*\}")
_SQL_MORE = re.compile(
    r"\b(excluded|coalesce|count|distinct|group|join|having|asc|desc|case|when|rowid|is not)\b", re.IGNORECASE
)


def _is_sql(text: str) -> bool:
    """A Python string literal that is (part of) an SQL statement: it starts like one (a statement's or clause's
    keyword and more: a lone "from" is a dict key), holds a `?` placeholder, or names two SQL words (one alone is
    English: "derived from the note")."""
    words = {m.lower() for m in _SQL_WORD.findall(text)} | {m.lower() for m in _SQL_MORE.findall(text)}
    return bool(_SQL_START.match(text)) or "?" in text or len(words) > 1


def _sql_case_only(before: str, after: str) -> bool:
    """Only the case of SQL text changed: the code outside string literals is the same, and each literal that
    differs is SQL whose quoted values (`'active'`: SQLite compares strings case-sensitively) are the same. An
    f-string's `{…}` field is SQL text too (a table alias, a row key); a mutant renaming a Python name in it
    fails to run."""
    strings, mutated = _PY_STRING.findall(before), _PY_STRING.findall(after)
    if len(strings) != len(mutated) or _PY_STRING.sub('""', before) != _PY_STRING.sub('""', after):
        return False
    changed = [(b, a) for b, a in zip(strings, mutated, strict=True) if b != a]
    return bool(changed) and all(
        _is_sql(b) and _SQL_LITERAL.findall(_FIELD.sub("", b)) == _SQL_LITERAL.findall(_FIELD.sub("", a))
        for b, a in changed
    )


_FALLBACK = re.compile(r'(_resync\(conn, [^,]+, |_scope_type_of\([^,]+, )("branch"|"project")')


def equivalent_by_rule(diff: str) -> str | None:
    """Why a surviving mutant cannot change behaviour, when one of the rules below says so; None otherwise.

    - SQL is case-insensitive (keywords, table and column names), and so are `sqlite3.Row` keys: a mutant
      that only changes the case inside a statement or a row subscript reads and writes the same rows. Not a
      quoted value inside the statement (`status='ACTIVE'` matches no row), nor a Python string compared in code
      (`== "DRIFTED"`), nor a message that merely holds an SQL word.
    - `_scope_type_of(key, fallback)` returns the fallback only for a scope key of no known type, which the
      store never holds (keys are built by `scope.identity`): its fallback argument is never used.
    """
    minus = [line[1:] for line in diff.splitlines() if line.startswith("-")]
    plus = [line[1:] for line in diff.splitlines() if line.startswith("+")]
    before, after = " ".join(minus), " ".join(plus)
    if before.lower() == after.lower() and before != after:
        if _sql_case_only(before, after):
            return "case inside SQL or a sqlite3.Row key (both case-insensitive)"
        if _ROW_KEY.sub(lambda m: m.group(0).lower(), before) == _ROW_KEY.sub(lambda m: m.group(0).lower(), after):
            return "case of a sqlite3.Row key (case-insensitive)"
    if before.replace(" ", "") != after.replace(" ", "") and _FALLBACK.search(before):
        if _FALLBACK.sub(r"\1", before).split(",")[:2] == _FALLBACK.sub(r"\1", after).split(",")[:2]:
            return "the scope-type fallback (never used: every stored scope key has a known type)"
    return None


def judged_reason(result: dict[str, object], name: str, entries: list[dict[str, str]]) -> str | None:
    """The reason an entry of the equivalents file gives for the survivor `name` of this run: same module, same
    function as judged (its digest), same change; None when no entry names it."""
    changes: dict[str, dict[str, str]] = result.get("survivor_changes", {})  # type: ignore[assignment]
    change = changes.get(name)
    if change is None:
        return None
    module = "cortex_engine." + str(result["module"]).removesuffix(".py").replace("/", ".")
    for entry in entries:
        if entry["module"] == module and all(entry[k] == change[k] for k in ("function", "digest", "before", "after")):
            return entry["reason"]
    return None


def score(result: dict[str, object], equivalent: list[dict[str, str]]) -> dict[str, object]:
    """Counts and the score of one module's run (mutants not checked, in a sample, are counted apart)."""
    outcome: dict[str, str] = result.get("outcome", {})  # type: ignore[assignment]
    diffs: dict[str, str] = result.get("survivor_diffs", {})  # type: ignore[assignment]
    checked = {name: status for name, status in outcome.items() if status != "not checked"}
    killed = sum(1 for s in checked.values() if s in ("killed", "timeout"))
    why = {
        name: judged_reason(result, name, equivalent) or equivalent_by_rule(diffs.get(name, ""))
        for name, s in checked.items()
        if s not in ("killed", "timeout")
    }
    left = sorted(name for name, reason in why.items() if reason is None)
    equiv = len(why) - len(left)
    judged = len(checked) - equiv
    return {
        "module": result["module"],
        "mutants": len(outcome),
        "checked": len(checked),
        "killed": killed,
        "equivalent": equiv,
        "not_killed": left,
        "score": round(100 * killed / judged, 1) if judged else None,
        "only": result.get("only") or [],
        "seconds": result.get("seconds"),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the modules asked for (all by default) and print one line per module."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="paths under cortex_engine/ (default: every module in MODULES)")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/cortex-mutation"), help="work folder")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="mutate only functions whose mutant names match this pattern (mutmut's, e.g. '*x_clip*'); repeatable",
    )
    parser.add_argument(
        "--minutes",
        type=float,
        help="stop each module's run after this long and report the mutants checked by then (a sample)",
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="run the last run's surviving mutants of each module again, with the tests as they are now",
    )
    parser.add_argument(
        "--collect", action="store_true", help="run nothing: read the results a stopped run left in --out"
    )
    parser.add_argument("--report", action="store_true", help="print the scores of the last run in --out and stop")
    args = parser.parse_args(argv)
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown module(s): {', '.join(unknown)}; choose from {', '.join(MODULES)}")
    args.out.mkdir(parents=True, exist_ok=True)
    results_path = args.out / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    equivalent = mutation_keys.judged() if EQUIVALENT.exists() else []
    if args.report:
        for module in results:
            print(json.dumps(score(results[module], equivalent) if "outcome" in results[module] else results[module]))
        return 0
    for module in args.modules or list(MODULES):
        again = None
        if args.again:
            if "outcome" not in results.get(module, {}):
                continue
            before = score(results[module], equivalent)
            again = list(before["not_killed"])  # type: ignore[call-overload]
            if not again:
                continue
        fresh = run(
            module,
            MODULES[module],
            args.out,
            args.jobs,
            args.only,
            args.minutes * 60 if args.minutes else None,
            ["--collect"] if args.collect else again,
        )
        if args.collect:
            fresh["only"] = args.only
        if again is not None and "outcome" in fresh:  # the rest of the last run stands
            last = results[module]
            rerun: dict[str, str] = fresh["outcome"]  # type: ignore[assignment]
            done = {name: rerun[name] for name in again if rerun.get(name, "not checked") != "not checked"}
            fresh["outcome"] = {**last["outcome"], **done}  # a survivor the time box did not reach stays one
            for field in ("survivor_diffs", "survivor_changes"):  # the rerun's survivors over the last run's
                kept: dict[str, object] = dict(last.get(field, {}))
                kept.update(fresh.get(field, {}))  # type: ignore[call-overload]
                fresh[field] = kept
            fresh["again"] = done
            fresh["only"] = last.get("only", [])
            fresh["seconds"] = last.get("seconds")
        results[module] = fresh
        # another run (of other modules, at the same time) may have written its own since this one started
        latest = json.loads(results_path.read_text()) if results_path.exists() else {}
        results_path.write_text(json.dumps({**latest, module: fresh}, indent=1, sort_keys=True))
        line = score(results[module], equivalent) if "outcome" in results[module] else results[module]
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
