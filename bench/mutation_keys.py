"""What a mutant changed, as text: the key under which a survivor is judged equivalent.

mutmut numbers the mutants of a function in the order it makes them (`x_clip__mutmut_7`), so an edit to the
function renumbers them, and an entry keyed by the number starts to excuse another mutant. A judgement is kept
here by what the mutant changes instead:

- `function`: mutmut's name of the function (`x_clip`, `xǁMatrixǁsearch`);
- `before` / `after`: the statements that differ, each as `ast.unparse` prints it (one line a statement, no
  comments, no layout), so reformatting the file changes neither;
- `digest`: the function as it was judged (the digest of its unparsed source).

An entry excuses a mutant only while both hold: the function's digest is the one judged (any edit to the
function retires every judgement made on it, to be judged again) and exactly one of its mutants makes that
change. `python bench/mutation_keys.py --check` rebuilds every judged function at the checkout, lists the
entries that no longer excuse anything and exits 1 if there is one (`--quick`: by the functions' digests alone, as
tests/test_mutation_keys.py runs it); a module under `AWAITING` has its stale entries listed apart.

Needs mutmut (`pip install mutmut==3.8.1`); imported only when mutants are built.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENT = ROOT / "bench" / "mutation-equivalent.json"


@functools.lru_cache(maxsize=256)
def _unparsed(code: str) -> list[str]:
    """A function's source as `ast.unparse` prints it, split into lines (layout and comments gone); cached, as
    every mutant of a function is compared with the same original."""
    return ast.unparse(ast.parse(code)).splitlines()


def function_digest(code: str) -> str:
    """The digest of a function's unparsed source: the same for any layout of the same code."""
    return hashlib.sha256("\n".join(_unparsed(code)).encode()).hexdigest()[:16]


def change(original: str, mutant: str) -> tuple[str, str]:
    """The unparsed lines that differ between a function and its mutant: (before, after), newline-joined."""
    old, new = list(_unparsed(original)), ast.unparse(ast.parse(mutant)).splitlines()
    before: list[str] = []
    after: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            before.extend(line.strip() for line in old[i1:i2])
            after.extend(line.strip() for line in new[j1:j2])
    return "\n".join(before), "\n".join(after)


class _Config:
    """The one setting of mutmut's that decides which mutants are made, as bench/mutation.py leaves it."""

    do_not_mutate_patterns: list[str] = []


def mutants_of(source: str, filename: str = "module.py") -> dict[str, dict[str, str]]:
    """Every mutant mutmut makes of `source`, by its short name (`x_clip__mutmut_7`): the function's mutmut
    name, its digest, and the change (before, after)."""
    import libcst as cst
    from mutmut import configuration
    from mutmut.mutation.diff_apply import read_mutant_function, read_original_function
    from mutmut.mutation.file_mutation import mutate_file_contents

    if configuration._config is None:  # what bench/mutation.py configures: no pattern is kept from mutation
        configuration._config = _Config()  # type: ignore[assignment]
    mutated = mutate_file_contents(filename, source)
    module = cst.parse_module(mutated.code)
    out: dict[str, dict[str, str]] = {}
    originals: dict[str, tuple[str, str]] = {}  # function -> (its source, its digest): built once a function
    for name in mutated.mutant_names:
        function = name.rsplit("__mutmut_", 1)[0]
        if function not in originals:
            original = cst.Module([read_original_function(module, name)]).code
            originals[function] = (original, function_digest(original))
        original, digest = originals[function]
        mutant = cst.Module([read_mutant_function(module, name)]).code
        before, after = change(original, mutant)
        out[name] = {"function": function, "digest": digest, "before": before, "after": after}
    return out


def module_of(entry: dict[str, str]) -> str:
    """The path under the checkout of an entry's module (`cortex_engine.memory.notes` -> cortex_engine/...)."""
    return entry["module"].replace(".", "/") + ".py"


def key(entry: dict[str, str]) -> tuple[str, str, str, str]:
    """What identifies a judgement: module, function, and the change."""
    return entry["module"], entry["function"], entry["before"], entry["after"]


def judged(path: Path = EQUIVALENT) -> list[dict[str, str]]:
    """The entries of the equivalents file."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return list(data["equivalent"])


def excusing(entries: list[dict[str, str]], mutants: dict[str, dict[str, str]], module: str) -> dict[str, str]:
    """The mutants of `module` (short name -> reason) that the entries excuse: the function's digest is the one
    judged and exactly one mutant of it makes the judged change."""
    by_change = Counter((m["function"], m["before"], m["after"]) for m in mutants.values())
    wanted = {
        (e["function"], e["before"], e["after"]): e
        for e in entries
        if e["module"] == module and by_change[(e["function"], e["before"], e["after"])] == 1
    }
    out: dict[str, str] = {}
    for name, m in mutants.items():
        entry = wanted.get((m["function"], m["before"], m["after"]))
        if entry is not None and entry["digest"] == m["digest"]:
            out[name] = entry["reason"]
    return out


def function_source(source: str, function: str) -> str | None:
    """The source of one function of a module, by its mutmut name (`x_f`, `xǁClassǁmethod`), decorators
    included and a method inside its class: enough for mutmut to make the same mutants with the same names."""
    tree = ast.parse(source)
    lines = source.splitlines()

    def text(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        return "\n".join(lines[start - 1 : node.end_lineno]) + "\n"

    if "ǁ" in function:
        _, cls, name = function.split("ǁ")
        body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), [])
        prefix = f"class {cls}:\n"
    else:
        name, body, prefix = function.removeprefix("x_"), tree.body, ""
    found = [n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name]
    return prefix + text(found[0]) if len(found) == 1 else None


AWAITING: dict[str, str] = {}
"""Modules (a package covers its modules) whose stale entries are listed apart instead of failing the check:
their code was changing in parallel work when the record was judged, so they are judged after it lands. Remove a
module once its entries are judged again; an entry listed under it still excuses nothing meanwhile."""


def awaiting(module: str) -> str | None:
    """Why an entry of `module` is listed apart when stale (`AWAITING`), or None when its staleness fails."""
    for name, why in AWAITING.items():
        if module == name or module.startswith(name + "."):
            return why
    return None


@functools.lru_cache(maxsize=64)
def _module_source(file: Path) -> str | None:
    return file.read_text(encoding="utf-8") if file.exists() else None


@functools.lru_cache(maxsize=64)
def _module_tree(file: Path) -> ast.Module | None:
    source = _module_source(file)
    return ast.parse(source) if source is not None else None


def current_digest(root: Path, module: str, function: str) -> str | None:
    """The digest of `function` of `module` as it is at `root`, as `mutants_of` gives it (the function alone, a
    method out of its class), without building a mutant; None when the module or the function is gone."""
    tree = _module_tree(root / module_of({"module": module}))
    if tree is None:
        return None
    body: list[ast.stmt] = tree.body
    name = function.removeprefix("x_")
    if "ǁ" in function:
        _, cls, name = function.split("ǁ")
        body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), [])
    found = [n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name]
    if len(found) != 1:
        return None
    return hashlib.sha256(ast.unparse(found[0]).encode()).hexdigest()[:16]


def stale(root: Path = ROOT, path: Path = EQUIVALENT) -> list[str]:
    """The quick check (no mutant built): one line per entry judged on another version of its function (the
    function changed since, or is gone). An entry that passes still has to name exactly one mutant (`check`)."""
    _module_source.cache_clear()
    _module_tree.cache_clear()
    problems = []
    for e in judged(path):
        now = current_digest(root, e["module"], e["function"])
        if now != e["digest"]:
            since = "is gone" if now is None else "changed since it was judged"
            problems.append(f"{e['module']}.{e['function']}: {e['before']!r} -> {e['after']!r}: the function {since}")
    return problems


def check(root: Path = ROOT, path: Path = EQUIVALENT) -> list[str]:
    """The whole check: rebuild every judged function at `root` with mutmut; one line per entry that excuses
    nothing (its function changed since it was judged, or no mutant, or more than one, makes its change)."""
    entries = judged(path)
    _module_source.cache_clear()
    problems: list[str] = []
    for module, function in sorted({(e["module"], e["function"]) for e in entries}):
        source = _module_source(root / module_of({"module": module}))
        code = function_source(source, function) if source is not None else None
        mutants = mutants_of(code) if code else {}
        ours = [e for e in entries if (e["module"], e["function"]) == (module, function)]
        excused = {(mutants[n]["before"], mutants[n]["after"]) for n in excusing(ours, mutants, module)}
        problems += [
            f"{module}.{function}: {e['before']!r} -> {e['after']!r} excuses nothing now"
            for e in ours
            if (e["before"], e["after"]) not in excused
        ]
    return problems


def report(problems: list[str], total: int) -> tuple[list[str], int]:
    """The check's printout and exit code: entries of modules under `AWAITING` are listed apart and do not fail
    it; any other stale entry does (exit 1)."""
    failing = [p for p in problems if awaiting(p.split(": ", 1)[0].rsplit(".", 1)[0]) is None]
    waiting = [p for p in problems if p not in failing]
    lines = [*failing]
    if waiting:
        lines.append(f"{len(waiting)} stale entries of modules awaiting judgement (listed, not failing; AWAITING):")
        lines += [f"  {p}" for p in waiting]
    lines.append(f"{total - len(problems)} of {total} entries excuse exactly one mutant at this checkout")
    return lines, 1 if failing else 0


def main(argv: list[str] | None = None) -> int:
    """`--check`: list the entries that no longer excuse a mutant (exit 1 if any outside `AWAITING`); `--quick`:
    the same, by the functions' digests alone (seconds instead of minutes: no mutant is built)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="rebuild each judged mutant and check it still applies")
    parser.add_argument("--quick", action="store_true", help="with --check: compare the functions' digests only")
    args = parser.parse_args(argv)
    if not args.check:
        parser.print_help()
        return 2
    lines, code = report(stale() if args.quick else check(), len(judged()))
    print("\n".join(lines))
    return code


if __name__ == "__main__":
    sys.exit(main())
