"""The everyday `cortex` commands: notes, recall and the other surfaces, the inbox, the TUI and its demo."""

from __future__ import annotations

import argparse
import os
import sys

from cortex_engine.adapters.handlers.common import UsageError, emit_json, emit_text, engine_for, surface_out


def cmd_note(args: argparse.Namespace) -> int:
    """Record a note."""
    from cortex_engine.results import messages

    with engine_for(args) as engine:
        result = engine.note(args.kind, " ".join(args.text), args.subject, args.alternative or None)
    if args.json:
        emit_json(
            {
                "id": result.id,
                "item_id": result.item_id,
                "kind": result.kind,
                "subject": result.subject,
                "content": result.content,
                "timestamp": result.timestamp,
                "conflicts": [c.__dict__ for c in result.conflicts],
                "superseded": list(result.superseded),
                "text": messages.note_written(result, "cli"),
            }
        )
    else:
        emit_text(messages.note_written(result, "cli"))
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    """Evidence for a topic (in another scope with --scope)."""
    with engine_for(args) as engine:
        return surface_out(
            args,
            engine.recall(
                " ".join(args.topic),
                args.budget,
                args.detail,
                book=not args.peek,
                scope=args.scope,
                limit=args.limit,
                adapter="cli",
            ),
        )


def cmd_brief(args: argparse.Namespace) -> int:
    """A topical brief."""
    with engine_for(args) as engine:
        return surface_out(args, engine.brief(" ".join(args.topic), args.for_agent, args.budget, book=not args.peek))


def cmd_state(args: argparse.Namespace) -> int:
    """The working state."""
    with engine_for(args) as engine:
        return surface_out(args, engine.state(args.budget, book=not args.peek))


def cmd_session_brief(args: argparse.Namespace) -> int:
    """The SessionStart brief as it would be injected now: a preview, so nothing is booked."""
    with engine_for(args) as engine:
        return surface_out(args, engine.preview_session_brief())


def cmd_resolve(args: argparse.Namespace) -> int:
    """Resolve or supersede a note."""
    from cortex_engine.results import messages

    note_id = getattr(args, "note_id", None) or getattr(args, "id", None)
    if (note_id is None) == (args.subject is None):
        raise UsageError("give exactly one of a NOTE_ID (or --id) and --subject")
    with engine_for(args) as engine:
        result = engine.resolve(note_id, subject=args.subject, status=args.status, replacement=args.replacement)
    if args.json:
        emit_json({**result.__dict__, "text": messages.resolved(result)})
    else:
        emit_text(messages.resolved(result))
    return 0


def cmd_inbox(args: argparse.Namespace) -> int:
    """List what arrived from outside, or accept / reject it: a person's verdict, typed at a terminal."""
    from cortex_engine.results import ARRIVAL_STATES, describe_arrival

    if args.action == "list":
        if args.ids or args.all:
            raise UsageError("cortex inbox lists; give ids or --all to `cortex inbox accept` or `cortex inbox reject`")
        states = ARRIVAL_STATES if args.state == "all" else (args.state,)
        with engine_for(args) as engine:
            found = engine.inbox(states)
        if args.json:
            emit_json({"arrivals": [a.to_dict() for a in found]})
        elif not found:
            emit_text(f"The inbox holds no {'' if args.state == 'all' else args.state + ' '}arrival.")
        else:
            lines = [line for a in found for line in describe_arrival(a)]
            if args.state == "pending":
                lines.append("Accept with `cortex inbox accept ID` (or --all), reject with `cortex inbox reject ID`.")
            emit_text("\n".join(lines))
        return 0
    from cortex_engine.adapters.handlers.person import confirm, require_person

    require_person("accepting or rejecting arrivals", f"cortex inbox {args.action}")
    with engine_for(args) as engine:
        accepting = args.action == "accept"
        chosen = engine.preview_verdict(list(args.ids), every=args.all, accepting=accepting)
        done = []
        if chosen:
            noun = "arrival" if len(chosen) == 1 else f"{len(chosen)} arrivals"
            confirm(
                [line for a in chosen for line in describe_arrival(a)],
                f"{args.action} {'this' if len(chosen) == 1 else 'these'} {noun}",
            )
            act = engine.accept_arrivals if accepting else engine.reject_arrivals
            done = act([a.id for a in chosen])
    if args.json:
        emit_json({args.action + "ed": [v.to_dict() for v in done]})
    else:
        verb = "Accepted" if args.action == "accept" else "Rejected"
        emit_text(
            "\n".join(
                [
                    f"{verb} {v.id[:8]} ({v.channel}: {v.path})" + (f" as note {v.note_id}" if v.note_id else "")
                    for v in done
                ]
                or [f"Nothing to {args.action}: the inbox holds no pending arrival."]
            )
        )
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    """Token economy and retrieval health."""
    from cortex_engine.results import render_stats

    with engine_for(args) as engine:
        report = engine.stats()
    emit_json(report) if args.json else emit_text(render_stats(report))
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    """Print the capability map."""
    from cortex_engine.results import ROUTE

    with engine_for(args) as engine:
        engine.mark_consulted()
    emit_json({"text": ROUTE}) if args.json else emit_text(ROUTE)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Seed a demo repository and open the TUI on it (or print its surfaces with --print)."""
    from cortex_engine.ops.demo import demo_target, seed_demo

    if not (args.print or args.json):
        _require_terminal("`cortex demo --print` prints the demo's surfaces instead")
    target, store_dir = demo_target(args.dir)
    # Said before anything is written, on stderr so --json stays one document.
    sys.stderr.write(
        f"Cortex demo: writing a demo repository to {target} and its store to {store_dir} "
        "(both re-created on every run)\n"
    )
    sys.stderr.flush()
    repo = seed_demo(args.dir)
    if args.print or args.json:
        from cortex_engine.engine import open_engine

        with open_engine(repo) as engine:
            brief = engine.preview_session_brief()
            state = engine.state(book=False)  # a person looking: nothing booked
        if args.json:
            emit_json({"repo": str(repo), "session_brief": brief.to_dict(), "state": state.to_dict()})
        else:
            emit_text(f"Demo repository: {repo}\n\n{brief.text}\n\n{state.text}")
        return 0
    return _run_tui(str(repo))


def _require_terminal(instead: str) -> None:
    """The TUI draws on a terminal: without one (a pipe, a script, an agent's shell) it would hang writing escape
    codes to nobody, so say what to run instead."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            f"the Cortex TUI needs a terminal and stdin or stdout is not one; {instead}, and "
            "`cortex --help` lists every command"
        )


def _run_tui(cwd: str) -> int:
    _require_terminal("run it in a terminal")
    from cortex_tui.app import run

    return run(cwd)


def cmd_tui(args: argparse.Namespace) -> int:
    """Open the operator TUI for this directory."""
    return _run_tui(args.cwd or os.getcwd())
