"""The `cortex` setup commands: install, uninstall, doctor, serve, embed, backup, restore and the eval gate."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import cast

from cortex_engine.adapters.handlers.common import emit_json, emit_text, engine_for


def cmd_install(args: argparse.Namespace) -> int:
    """Render the hook scripts, merge Claude Code's wiring, register the MCP server, then run doctor."""
    from cortex_engine.ops.install import install

    result = install(
        args.cwd or os.getcwd(), scope=args.scope, hooks_dir=args.dir, dry_run=args.dry_run, force=args.force
    )
    if args.json:
        emit_json(result.to_dict())
    elif result.diagnostic is not None:
        emit_text(result.render() + "\n\n" + result.diagnostic.render())
    else:
        emit_text(result.render())
    return result.exit_code


def _confirm(args: argparse.Namespace) -> Callable[[str], bool]:
    """A yes/no question for a person: yes with --yes; no when stdin is not a terminal (nobody to ask)."""

    def ask(question: str) -> bool:
        if args.yes:
            return True
        if not sys.stdin.isatty():
            return False
        sys.stderr.write(f"{question} [y/N] ")
        sys.stderr.flush()
        return sys.stdin.readline().strip().lower() in ("y", "yes")

    return ask


def cmd_uninstall(args: argparse.Namespace) -> int:
    """Remove what install added (scripts it wrote, the wiring, the server entry); the store only with --purge."""
    from cortex_engine.ops.uninstall import uninstall

    result = uninstall(
        args.cwd or os.getcwd(),
        scope=args.scope,
        hooks_dir=args.dir,
        dry_run=args.dry_run,
        purge=args.purge,
        confirm=_confirm(args),
    )
    if args.json:
        emit_json(result.to_dict())
    else:
        emit_text(result.render())
    return result.exit_code


def cmd_doctor(args: argparse.Namespace) -> int:
    """Diagnose the installation; exit 1 when any check fails. Changes nothing it reports on."""
    from cortex_engine.ops.doctor import diagnose

    report = diagnose(args.cwd or os.getcwd(), args.hooks_dir)
    if args.json:
        emit_json(report.to_dict())
    else:
        emit_text(report.render())
    return report.exit_code


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the engine headless as an MCP server over stdio (the only path that imports mcp)."""
    from cortex_engine.adapters.serve import main as serve

    return serve(args.cwd or os.getcwd())


def cmd_embed(args: argparse.Namespace) -> int:
    """`cortex embed`: give every item without a sentence vector one (the semantic extra), with a progress bar."""
    from cortex_engine.adapters.progress import progress, wanted

    with engine_for(args) as engine:
        total = engine.embedding_backlog()
        with progress("embedding", total, enabled=wanted(args.json), min_items=1) as tick:
            done = engine.embed_pending(tick=tick)
        state = cast("dict[str, object]", engine.status()["semantic"])
    if args.json:
        emit_json({"embedded": done, "vectors": state["vectors"], "items": state["items"]})
    else:
        emit_text(
            f"Embedded {done} item{'s' if done != 1 else ''}; {state['detail']}. "
            "recall and brief now rank by meaning as well as words."
        )
    return 0


def cmd_backup(args: argparse.Namespace) -> int:
    """Copy the whole store to a file (SQLite's online backup: consistent while sessions write)."""
    from cortex_engine.ops.backup import backup

    result = backup(args.cwd or os.getcwd(), args.file, force=args.force)
    emit_json(result.to_dict()) if args.json else emit_text(result.render())
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """Put a backup in place as this repository's store (refuses to replace one without --force; keeps a copy)."""
    from cortex_engine.ops.backup import restore

    result = restore(args.cwd or os.getcwd(), args.file, force=args.force)
    emit_json(result.to_dict()) if args.json else emit_text(result.render())
    return 0


def cmd_eval_gate(args: argparse.Namespace) -> int:
    """Compare every eval suite with its locked baseline; exit 1 on any regression or ambiguity."""
    from cortex_engine.ops.evaluation.gate import regenerate_baseline, run_gate
    from cortex_engine.ops.evaluation.verbs import require_eval_tree, under

    base = args.cwd or os.getcwd()
    suites_dir, baselines_dir = under(base, args.suites), under(base, args.baselines)
    require_eval_tree(base, suites_dir, baselines_dir)
    if args.regenerate_baseline:
        code, lines = regenerate_baseline(args.regenerate_baseline, suites_dir, baselines_dir)
        if args.json:
            emit_json({"written": code == 0, "lines": lines})
        else:
            emit_text("\n".join(lines))
        return code
    gate = run_gate(suites_dir, baselines_dir, under(base, args.coverage))
    if args.json:
        emit_json(gate.to_dict())
    else:
        emit_text("\n".join(gate.lines))
    if not gate.passed:
        sys.stderr.write(f"cortex: retrieval quality gate failed ({len(gate.failures)} problem(s))\n")
    return gate.exit_code


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Run one eval suite (or topics against the live store) and print the JSON result."""
    from cortex_engine.ops.evaluation.verbs import evaluate

    topics = [t.strip() for t in (args.topics or "").split(",") if t.strip()]
    emit_json(evaluate(args.cwd or os.getcwd(), args.suite, args.compare, topics))
    return 0
