"""The `cortex` commands that share memory: promote, publish, sync, branches, export and import."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from cortex_engine.adapters.handlers.common import emit_json, emit_text, engine_for
from cortex_engine.base.errors import CortexError

if TYPE_CHECKING:
    from cortex_engine.adapters.progress import Tick


def cmd_promote(args: argparse.Namespace) -> int:
    """Promote a branch's notes into this branch by hand (a squash merge git cannot recognise)."""
    from cortex_engine.results import messages

    with engine_for(args) as engine:
        done = engine.promote(args.source, dry_run=args.dry_run)
    if args.json:
        emit_json({"from": args.source, "dry_run": args.dry_run, "promoted": [p.to_dict() for p in done]})
    else:
        emit_text(messages.promoted(args.source, done, args.dry_run))
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    """Write decisions as MADR files for the user to commit."""
    with engine_for(args) as engine:
        paths = engine.publish(args.ids)
    if args.json:
        emit_json({"written": paths})
    else:
        emit_text("\n".join([f"Wrote {p}" for p in paths] + ["Review and commit them to share these decisions."]))
    return 0


def cmd_sync(args: argparse.Namespace) -> int:
    """Read the decisions folder at HEAD as shared decisions."""
    with engine_for(args) as engine:
        result = engine.sync_shared(force=True)
    if args.json:
        emit_json(result.to_dict())
        return 0
    lines = [
        f"{len(result.added) - len(result.recorded)} added, {len(result.updated)} updated, {len(result.retired)} "
        "retired shared decisions."
    ]
    from cortex_engine.base.untrusted import quote_path

    if result.recorded:
        lines.append(
            f"{len(result.recorded)} file(s) read and nothing written (your own published note, or a status that no "
            "longer holds): " + ", ".join(quote_path(p) for p in result.recorded[:5])
        )
    if result.pending:
        lines.append(
            f"{len(result.pending)} decision file(s) this store did not publish wait for your review, not added: "
            + ", ".join(quote_path(p) for p in result.pending[:5])
            + " (`cortex inbox`)."
        )
    lines += [f"skipped {quote_path(path)}: {why}" for path, why in result.malformed]
    emit_text("\n".join(lines))
    return 0


def cmd_branches(args: argparse.Namespace) -> int:
    """Every scope of the store."""
    from cortex_engine.results import messages

    with engine_for(args) as engine:
        scopes = engine.branches()
    if args.json:
        emit_json({"scopes": [s.to_dict() for s in scopes]})
    else:
        emit_text(messages.branch_scopes(scopes))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write every note (or a scope's) as JSON Lines or Markdown, to stdout or --output."""
    from cortex_engine.adapters.progress import progress, wanted
    from cortex_engine.results import render_jsonl, render_markdown

    with engine_for(args) as engine:
        notes = engine.export_notes(args.scope)
    if args.format == "jsonl":
        with progress("exporting", len(notes), enabled=wanted(args.json)) as tick:
            text = render_jsonl(notes, tick)
    else:
        text = render_markdown(notes)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        with open(args.output, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    except OSError as exc:
        raise CortexError(
            f"cannot write {args.output}: {exc.strerror or exc.__class__.__name__}", code="bad_file"
        ) from exc
    if args.json:
        emit_json({"path": args.output, "format": args.format, "notes": len(notes)})
    else:
        emit_text(f"Exported {len(notes)} note(s) to {args.output} ({args.format}).")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Import a Cortex export, or Claude Code's CLAUDE.md / MEMORY.md as insight notes (one transaction)."""
    from contextlib import ExitStack

    from cortex_engine.adapters.progress import progress, wanted

    with engine_for(args) as engine, ExitStack() as stack:

        def bar(total: int) -> Tick:
            return stack.enter_context(progress("importing", total, enabled=wanted(args.json)))

        result = engine.import_file(args.file, scope=args.scope, progress=bar)
    emit_json(result.to_dict()) if args.json else emit_text(result.render())
    return 0


def cmd_review_policy(args: argparse.Namespace) -> int:
    """Show the review policy, or set it: raising it is scriptable, lowering it is a person's act at a terminal."""
    from cortex_engine.base import settings

    current, problem = settings.review_policy()
    wanted = args.policy
    if wanted is not None and wanted != current or wanted is not None and problem:
        if settings.REVIEW_STRICTNESS[wanted] < settings.REVIEW_STRICTNESS[current]:
            from cortex_engine.adapters.handlers.person import confirm, require_person

            require_person("lowering the review of arrivals", f"cortex review-policy {wanted}")
            confirm(
                [
                    f"Review policy now {settings.describe_review(current, problem)}.",
                    f"It would become {wanted}: " + settings.REVIEW_WORDS[wanted] + ".",
                ],
                f"lower it to {wanted}",
            )
        try:
            settings.write_review_arrivals(wanted)
        except OSError as exc:
            raise CortexError(
                f"cannot write {settings.settings_file()}: {exc.strerror or exc.__class__.__name__}; nothing changed",
                code="bad_file",
            ) from exc
        current, problem = wanted, None
    path = str(settings.settings_file())
    if args.json:
        emit_json(
            {"policy": current, "problem": problem, "file": path, "text": settings.describe_review(current, problem)}
        )
    else:
        emit_text(f"Review policy {settings.describe_review(current, problem)}\n(from {path})")
    return 0
