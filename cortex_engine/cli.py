"""The `cortex` command line: parse, make one engine call, print. Standard library only at import."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from cortex_engine.base.errors import CortexError, Refused, RuntimeUntrusted, StoreRefused

EXIT_ERROR = 1
EXIT_USAGE = 2
PEEK_HELP = "look without booking: no token-ledger entry, no reinforcement (a person looking is not a use)"


class UsageError(Exception):
    """A command line the parser cannot accept."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f]")


def _emit_json(payload: object) -> None:
    # JSON escapes C0 controls itself; DEL and the C1 range (U+009B is a CSI) would reach the terminal raw,
    # so they are escaped too. The document decodes to exactly the same text.
    text = json.dumps(payload, ensure_ascii=False, indent=2)
    sys.stdout.write(_UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")


def _print(text: str) -> None:
    sys.stdout.write(text + ("\n" if text and not text.endswith("\n") else ""))


def _engine(args: argparse.Namespace):  # noqa: ANN202 - the Engine type is imported lazily
    from cortex_engine.engine import open_engine

    return open_engine(args.cwd or os.getcwd())


def _lenient_limit(value: str) -> int | None:
    """A --limit value; anything that is not a whole number means the default page size."""
    try:
        return int(value)
    except ValueError:
        return None


def _read_text_arg(args: argparse.Namespace) -> str:
    if (args.text is None) == (args.file is None):
        raise UsageError("give exactly one of --text or --file")
    if args.text is not None:
        return str(args.text)
    try:
        with open(args.file, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise CortexError(f"cannot read {args.file}: {exc.__class__.__name__}", code="bad_file") from exc


# -- commands ------------------------------------------------------------------------------------


def cmd_note(args: argparse.Namespace) -> int:
    """Record a note."""
    from cortex_engine.results import messages

    with _engine(args) as engine:
        result = engine.note(args.kind, " ".join(args.text), args.subject, args.alternative or None)
    if args.json:
        _emit_json({
            "id": result.id, "item_id": result.item_id, "kind": result.kind, "subject": result.subject,
            "content": result.content, "timestamp": result.timestamp,
            "conflicts": [c.__dict__ for c in result.conflicts], "superseded": list(result.superseded),
            "text": messages.note_written(result, "cli"),
        })
    else:
        _print(messages.note_written(result, "cli"))
    return 0


def _surface_out(args: argparse.Namespace, surface) -> int:  # noqa: ANN001
    if args.json:
        _emit_json(surface.to_dict())
    else:
        _print(surface.text)
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    """Evidence for a topic (in another scope with --scope)."""
    with _engine(args) as engine:
        return _surface_out(args, engine.recall(" ".join(args.topic), args.budget, args.detail, book=not args.peek,
                                                 scope=args.scope, limit=args.limit))


def cmd_promote(args: argparse.Namespace) -> int:
    """Promote a branch's notes into this branch by hand (a squash merge git cannot recognise)."""
    from cortex_engine.results import messages

    with _engine(args) as engine:
        done = engine.promote(args.source, dry_run=args.dry_run)
    if args.json:
        _emit_json({"from": args.source, "dry_run": args.dry_run, "promoted": [p.to_dict() for p in done]})
    else:
        _print(messages.promoted(args.source, done, args.dry_run))
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    """Write decisions as MADR files for the user to commit."""
    with _engine(args) as engine:
        paths = engine.publish(args.ids)
    if args.json:
        _emit_json({"written": paths})
    else:
        _print("\n".join([f"Wrote {p}" for p in paths] + ["Review and commit them to share these decisions."]))
    return 0


def cmd_sync(args: argparse.Namespace) -> int:
    """Read the decisions folder at HEAD as shared decisions."""
    with _engine(args) as engine:
        result = engine.sync_shared(force=True)
    if args.json:
        _emit_json(result.to_dict())
        return 0
    lines = [f"{len(result.added)} added, {len(result.updated)} updated, {len(result.retired)} retired shared decisions."]
    from cortex_engine.base.untrusted import quote_path

    if result.pending:
        lines.append(f"{len(result.pending)} decision file(s) by another author wait for your review: `cortex inbox`.")
    lines += [f"skipped {quote_path(path)}: {why}" for path, why in result.malformed]
    _print("\n".join(lines))
    return 0


def cmd_inbox(args: argparse.Namespace) -> int:
    """List what arrived from outside, or accept / reject it (a person's verdict; refused from an agent's shell)."""
    from cortex_engine.base import settings
    from cortex_engine.results import ARRIVAL_STATES, describe_arrival

    if args.action == "list":
        if args.ids or args.all:
            raise UsageError("cortex inbox lists; give ids or --all to `cortex inbox accept` or `cortex inbox reject`")
        states = ARRIVAL_STATES if args.state == "all" else (args.state,)
        with _engine(args) as engine:
            found = engine.inbox(states)
        if args.json:
            _emit_json({"arrivals": [a.to_dict() for a in found]})
        elif not found:
            _print(f"The inbox holds no {'' if args.state == 'all' else args.state + ' '}arrival.")
        else:
            lines = [line for a in found for line in describe_arrival(a)]
            if args.state == "pending":
                lines.append("Accept with `cortex inbox accept ID` (or --all), reject with `cortex inbox reject ID`.")
            _print("\n".join(lines))
        return 0
    if settings.in_agent_shell():
        raise Refused("accepting or rejecting arrivals is the user's call, not the agent's: run it in your own "
                      "terminal (or in the TUI's Inbox), outside Claude Code", code="agent_shell")
    with _engine(args) as engine:
        act = engine.accept_arrivals if args.action == "accept" else engine.reject_arrivals
        done = act(list(args.ids), every=args.all)
    if args.json:
        _emit_json({args.action + "ed": [v.to_dict() for v in done]})
    else:
        verb = "Accepted" if args.action == "accept" else "Rejected"
        _print("\n".join([f"{verb} {v.id[:8]} ({v.channel}: {v.path})" + (f" as note {v.note_id}" if v.note_id else "")
                          for v in done] or [f"Nothing to {args.action}: the inbox holds no pending arrival."]))
    return 0


def cmd_branches(args: argparse.Namespace) -> int:
    """Every scope of the store."""
    from cortex_engine.results import messages

    with _engine(args) as engine:
        scopes = engine.branches()
    if args.json:
        _emit_json({"scopes": [s.to_dict() for s in scopes]})
    else:
        _print(messages.branch_scopes(scopes))
    return 0


def cmd_brief(args: argparse.Namespace) -> int:
    """A topical brief."""
    with _engine(args) as engine:
        return _surface_out(args, engine.brief(" ".join(args.topic), args.for_agent, args.budget, book=not args.peek))


def cmd_state(args: argparse.Namespace) -> int:
    """The working state."""
    with _engine(args) as engine:
        return _surface_out(args, engine.state(args.budget, book=not args.peek))


def cmd_session_brief(args: argparse.Namespace) -> int:
    """The SessionStart brief as it would be injected now: a preview, so nothing is booked."""
    with _engine(args) as engine:
        return _surface_out(args, engine.preview_session_brief())


def cmd_resolve(args: argparse.Namespace) -> int:
    """Resolve or supersede a note."""
    from cortex_engine.results import messages

    note_id = getattr(args, "note_id", None) or getattr(args, "id", None)
    if (note_id is None) == (args.subject is None):
        raise UsageError("give exactly one of a NOTE_ID (or --id) and --subject")
    with _engine(args) as engine:
        result = engine.resolve(note_id, subject=args.subject, status=args.status, replacement=args.replacement)
    if args.json:
        _emit_json({**result.__dict__, "text": messages.resolved(result)})
    else:
        _print(messages.resolved(result))
    return 0


def cmd_list_memory(args: argparse.Namespace) -> int:
    """List memory items."""
    from cortex_engine.results import messages

    split = lambda v: [x.strip() for x in v.split(",") if x.strip()] if v else None  # noqa: E731
    with _engine(args) as engine:
        page = engine.list_memory(
            scopes=args.scope, kinds=split(args.kind), states=split(args.state), labels=split(args.label),
            text=args.text, sort=args.sort, reverse=args.reverse, limit=args.limit, offset=args.offset,
        )
    if args.json:
        _emit_json(page.to_dict())
    else:
        _print(messages.memory_page(page))
    return 0


def cmd_inspect_memory(args: argparse.Namespace) -> int:
    """Inspect one memory item."""
    from cortex_engine.results import messages

    with _engine(args) as engine:
        result = engine.inspect_memory(args.id)
    if args.json:
        _emit_json(result.to_dict())
    else:
        _print(messages.inspection(result))
    return 0


def cmd_edit_memory(args: argparse.Namespace) -> int:
    """Edit one memory item's text."""
    from cortex_engine.results import messages

    text = _read_text_arg(args)
    with _engine(args) as engine:
        result = engine.edit_memory(args.id, text)
    if args.json:
        _emit_json({**result.__dict__, "text": messages.edited(result)})
    else:
        _print(messages.edited(result))
    return 0


def cmd_delete_memory(args: argparse.Namespace) -> int:
    """Preview or delete one memory item."""
    from cortex_engine.results import messages

    with _engine(args) as engine:
        result = engine.delete_memory(args.id, yes=args.yes)
    if args.json:
        _emit_json({**result.__dict__, "message": messages.deletion(result)})
    else:
        _print(messages.deletion(result))
    return 0


def cmd_reanchor(args: argparse.Namespace) -> int:
    """Re-anchor a drifted memory to the current code."""
    from cortex_engine.results import messages

    with _engine(args) as engine:
        result = engine.reanchor(args.id)
    message = messages.reanchored(result)
    if args.json:
        _emit_json({"id": result.id, "anchors": result.anchors, "message": message})
    else:
        _print(message)
    return 0


def cmd_rewrite_moved(args: argparse.Namespace) -> int:
    """Rewrite a memory's renamed file references to their new paths."""
    from cortex_engine.results import messages

    with _engine(args) as engine:
        result = engine.rewrite_moved(args.id)
    message = messages.rewrote_moved(result)
    if args.json:
        _emit_json({"id": result.id, "moves": result.moves, "references": result.edit.references, "message": message})
    else:
        _print(message)
    return 0


def cmd_validate_memory(args: argparse.Namespace) -> int:
    """Audit memory references against the checkout."""
    with _engine(args) as engine:
        report = engine.validate_memory(" ".join(args.topic) if args.topic else None, all_scopes=args.all_scopes)
    if args.json:
        _emit_json(report)
        return 0
    refs = report["references"]
    lines = [
        f"checked {report['checked']} memor{'y' if report['checked'] == 1 else 'ies'}; {report['stale']} stale; "
        + (f"{report['drifted']} drifted; " if report.get("drifted") else "") + "references: "
        + ", ".join(f"{n} {s}" for s, n in refs.items())  # type: ignore[attr-defined]
    ]
    for item in report["items"]:  # type: ignore[attr-defined]
        if item["label"]:
            lines.append(f"  {item['id']}  [{item['label']}]")
    for scope in report.get("scopes", []):  # type: ignore[attr-defined]
        lines.append(f"scope {scope['scope_key']}: {scope['checked']} checked, {scope['stale']} stale "
                     f"(against {scope['against']} {scope['where']})")
    for scope in report.get("unchecked", []):  # type: ignore[attr-defined]
        lines.append(f"scope {scope['scope_key']}: not checked ({scope['reason']})")
    _print("\n".join(lines))
    return 0


def cmd_store(args: argparse.Namespace) -> int:
    """Where this directory's store is (does not create it)."""
    from cortex_engine.engine import describe_store

    info = describe_store(args.cwd or os.getcwd())
    if args.json:
        _emit_json(info.to_dict())
        return 0
    _print("\n".join([
        f"Store:    {info.path}",
        f"Id:       {info.store_id}",
        f"Derived:  {info.derived}",
        f"Exists:   {'yes' if info.exists else 'no'}",
        f"Scope:    {info.scope_key}",
    ]))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """What the store holds for this scope."""
    with _engine(args) as engine:
        status = engine.status()
    if args.json:
        _emit_json(status)
        return 0
    states = status["items_by_state"]
    _print("\n".join([
        "OK",
        f"DB: {status['store']}",
        f"Scope: {status['scope_key']}",
        f"Items: {status['items']} (" + ", ".join(f"{k} {v}" for k, v in sorted(states.items())) + ")",  # type: ignore[attr-defined]
        f"Contested notes: {status['contested_notes']}",
        _semantic_line(status["semantic"]),  # type: ignore[arg-type]
    ]))
    return 0


def _semantic_line(state: dict[str, object]) -> str:
    """`Recall: …`: which retrievers a recall runs, and how to turn the dense one on when it is off."""
    if state["state"] == "on":
        return f"Recall: by words and by meaning ({state['detail']})"
    return f"Recall: by words only — {state['detail']}"


def cmd_demo(args: argparse.Namespace) -> int:
    """Seed a demo repository and open the TUI on it (or print its surfaces with --print)."""
    from cortex_engine.ops.demo import demo_target, seed_demo

    target, store_dir = demo_target(args.dir)
    # Said before anything is written, on stderr so --json stays one document.
    sys.stderr.write(f"Cortex demo: writing a demo repository to {target} and its store to {store_dir} "
                     "(both re-created on every run)\n")
    sys.stderr.flush()
    repo = seed_demo(args.dir)
    if args.print or args.json:
        from cortex_engine.engine import open_engine

        with open_engine(repo) as engine:
            brief = engine.preview_session_brief()
            state = engine.state(book=False)  # a person looking: nothing booked
        if args.json:
            _emit_json({"repo": str(repo), "session_brief": brief.to_dict(), "state": state.to_dict()})
        else:
            _print(f"Demo repository: {repo}\n\n{brief.text}\n\n{state.text}")
        return 0
    return _run_tui(str(repo))


def cmd_header(args: argparse.Namespace) -> int:
    """The full branch-aware header."""
    with _engine(args) as engine:
        return _surface_out(args, engine.header())


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Run one eval suite (or topics against the live store) and print the JSON result."""
    from cortex_engine.ops.evaluation.commands import evaluate

    topics = [t.strip() for t in (args.topics or "").split(",") if t.strip()]
    _emit_json(evaluate(args.cwd or os.getcwd(), args.suite, args.compare, topics))
    return 0


def cmd_eval_gate(args: argparse.Namespace) -> int:
    """Compare every eval suite with its locked baseline; exit 1 on any regression or ambiguity."""
    from cortex_engine.ops.evaluation.commands import require_eval_tree, under
    from cortex_engine.ops.evaluation.gate import regenerate_baseline, run_gate

    base = args.cwd or os.getcwd()
    suites_dir, baselines_dir = under(base, args.suites), under(base, args.baselines)
    require_eval_tree(base, suites_dir, baselines_dir)
    if args.regenerate_baseline:
        code, lines = regenerate_baseline(args.regenerate_baseline, suites_dir, baselines_dir)
        if args.json:
            _emit_json({"written": code == 0, "lines": lines})
        else:
            _print("\n".join(lines))
        return code
    gate = run_gate(suites_dir, baselines_dir, under(base, args.coverage))
    if args.json:
        _emit_json(gate.to_dict())
    else:
        _print("\n".join(gate.lines))
    if not gate.passed:
        sys.stderr.write(f"cortex: retrieval quality gate failed ({len(gate.failures)} problem(s))\n")
    return gate.exit_code


def _hook_payload() -> dict:
    """The host's hook JSON on stdin, when there is any (never blocks on a terminal)."""
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    try:
        raw = sys.stdin.read()
        value = json.loads(raw) if raw.strip() else {}
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def cmd_inject_header(args: argparse.Namespace) -> int:
    """SessionStart: start a fresh session, engage capture, print the brief (--quiet) or the full header."""
    from cortex_engine.engine import open_engine

    payload = _hook_payload()
    if args.quiet and not args.from_project:
        from cortex_engine.hookentry import project_wires_cortex

        if project_wires_cortex(os.environ.get("CLAUDE_PROJECT_DIR")):
            return 0  # the project's own SessionStart wiring (--from-project) starts this session
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) and os.path.isdir(payload["cwd"]) else None
    host = found if isinstance(found := payload.get("session_id"), str) else None
    try:
        with open_engine(cwd or args.cwd or os.getcwd()) as engine:
            engine.start_session(host)
            surface = engine.session_brief() if args.quiet else engine.header()
    except RuntimeUntrusted:
        if not args.quiet:
            raise
        return 0  # a runtime folder that came with the repository: the hook stays silent (`cortex doctor` says why)
    except Exception as exc:  # noqa: BLE001 - as the SessionStart hook it must never fail the host; say why
        if not args.quiet:
            raise
        message = exc.message if isinstance(exc, CortexError) else f"inject-header failed: {exc}"
        sys.stderr.write(f"cortex: {' '.join(str(message).split())[:300]}\n")
        return 0
    return _surface_out(args, surface) if surface.text or args.json else 0


def cmd_flush_spool(args: argparse.Namespace) -> int:
    """Replay the worktree's capture spool into the store; a refused store makes the hooks back off."""
    try:
        engine = _engine(args)
    except StoreRefused as exc:
        from cortex_engine.engine import back_off_capture

        back_off_capture(args.cwd or os.getcwd(), busy=exc.code == "store_busy")
        raise
    with engine:
        result = engine.flush_spool()
        if args.embed:  # the capture hook's detached flush: embed what is new, off the agent's path
            _embed_quietly(engine)
    _emit_json(result.to_dict()) if args.json else _print(json.dumps(result.to_dict()))
    return 0


EMBED_AFTER_FLUSH = 2000
"""The most items a detached flush embeds (a minute or so on one core); `cortex embed` or the server does the rest."""


def _embed_quietly(engine) -> None:  # noqa: ANN001 - the Engine type is imported lazily
    """Embed up to EMBED_AFTER_FLUSH new items when the semantic extra is installed; a refused model changes nothing."""
    import sqlite3

    from cortex_engine.engine import semantic_installed

    if not semantic_installed():
        return
    try:
        engine.embed_pending(limit=EMBED_AFTER_FLUSH)
    except (CortexError, sqlite3.Error):
        pass  # lexical recall still finds every item; doctor and status say why the model was refused


def cmd_embed(args: argparse.Namespace) -> int:
    """`cortex embed`: give every item without a sentence vector one (the semantic extra), with a progress bar."""
    from cortex_engine.progress import progress, wanted

    with _engine(args) as engine:
        total = engine.embedding_backlog()
        with progress("embedding", total, enabled=wanted(args.json), min_items=1) as tick:
            done = engine.embed_pending(tick=tick)
        state = engine.status()["semantic"]
    if args.json:
        _emit_json({"embedded": done, "vectors": state["vectors"], "items": state["items"]})
    else:
        _print(f"Embedded {done} item{'s' if done != 1 else ''}; {state['detail']}. "
               "recall and brief now rank by meaning as well as words.")
    return 0


def cmd_read_ledger(args: argparse.Namespace) -> int:
    """Whether files were already read in this scope, and whether they changed since."""
    with _engine(args) as engine:
        results = engine.read_ledger(args.paths)
    if args.json:
        _emit_json({"results": [r.to_dict() for r in results]})
    else:
        _print("\n".join(r.line() for r in results))
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    """Capture one event by hand into the scoped session (the same replay the hooks' spool gets)."""
    with _engine(args) as engine:
        recorded = engine.log_event(args.kind, file=args.file, command=args.cmd, exit_code=args.exit,
                                    stdout=args.stdout, stderr=args.stderr, description=args.desc)
    _emit_json({"recorded": recorded}) if args.json else _print(f"logged {args.kind}" if recorded else "nothing recorded")
    return 0


def cmd_substitution(args: argparse.Namespace) -> int:
    """Verified read substitution: on, off, or status (off by default)."""
    with _engine(args) as engine:
        state = engine.substitution(args.action)
    if args.json:
        _emit_json({"substitution": state})
    else:
        _print(f"Read substitution is {state} for this worktree."
               + (" Re-reading a substituted file in the same turn always returns the real text." if state == "on" else ""))
    return 0


def cmd_search_ledger(args: argparse.Namespace) -> int:
    """Did this search already find nothing, and would it still?"""
    query = {"pattern": args.pattern, "path": args.path, "glob": args.glob, "type": args.type,
             "case_insensitive": args.i, "multiline": args.multiline}
    with _engine(args) as engine:
        [verdict] = engine.search_ledger([query])
    _emit_json({"results": [verdict.to_dict()]}) if args.json else _print(verdict.describe())
    return 0


def cmd_engage(args: argparse.Namespace) -> int:
    """Re-enable capture for this worktree."""
    with _engine(args) as engine:
        engine.engage()
    _emit_json({"engaged": True}) if args.json else _print("Cortex engaged: capture is on for this worktree.")
    return 0


def cmd_disengage(args: argparse.Namespace) -> int:
    """Disable capture for this worktree."""
    with _engine(args) as engine:
        was = engine.disengage()
    if args.json:
        _emit_json({"engaged": False, "was_engaged": was})
    else:
        _print("Cortex disengaged. Event logging and gates disabled for this worktree.")
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    """Handle one hook event from stdin; prints only what the host expects, and always exits 0."""
    from cortex_engine.hookentry import run

    payload = _hook_payload()
    try:
        out = run(args.action, payload)
    except Exception as exc:  # noqa: BLE001 - a hook must never break the agent; say why on stderr
        sys.stderr.write(f"cortex: hook {args.action} failed: {' '.join(str(exc).split())[:200]}\n")
        return 0
    if out:
        _print(out)
    return 0


def cmd_reflect(args: argparse.Namespace) -> int:
    """Run a reflex by hand: the consult hint for a prompt, or the whisper for a file being edited."""
    from cortex_engine.hookentry import context_output

    with _engine(args) as engine:
        if args.event == "prompt":
            event, text = "UserPromptSubmit", engine.consult_hint(args.prompt or "")
        else:
            event, text = "PreToolUse", engine.whisper(args.event, args.file or args.cmd or "")
    if args.json:
        _emit_json(json.loads(context_output(event, text)) if text else {})
    elif text:
        _print(text)
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    """Token economy and retrieval health."""
    from cortex_engine.results import render_stats

    with _engine(args) as engine:
        report = engine.stats()
    _emit_json(report) if args.json else _print(render_stats(report))
    return 0


def cmd_suggest_notes(args: argparse.Namespace) -> int:
    """Suggest notes worth saving from a session (writes nothing)."""
    with _engine(args) as engine:
        result = engine.suggest_notes(args.session)
    if args.json:
        _emit_json(result)
    else:
        from cortex_engine.results import messages

        _print(messages.suggestions(result))
    return 0


def cmd_summarize(args: argparse.Namespace) -> int:
    """Write the current session's summary now."""
    from cortex_engine.results import strip_control

    with _engine(args) as engine:
        text = strip_control(engine.summarize(" ".join(args.description) if args.description else None))
    _emit_json({"summary": text}) if args.json else _print(text)
    return 0


def cmd_consolidate(args: argparse.Namespace) -> int:
    """Summarize ended sessions that have no summary yet."""
    with _engine(args) as engine:
        count = engine.consolidate()
    if args.json:
        _emit_json({"consolidated": count})
    else:
        _print("No unconsolidated sessions." if count == 0 else f"Consolidated {count} session(s).")
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    """Print the capability map."""
    from cortex_engine.results import ROUTE

    with _engine(args) as engine:
        engine.mark_consulted()
    _emit_json({"text": ROUTE}) if args.json else _print(ROUTE)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the engine headless as an MCP server over stdio (the only path that imports mcp)."""
    from cortex_engine.serve import main as serve

    return serve(args.cwd or os.getcwd())


def cmd_install(args: argparse.Namespace) -> int:
    """Render the hook scripts, merge Claude Code's wiring, register the MCP server, then run doctor."""
    from cortex_engine.ops.install import install

    result = install(args.cwd or os.getcwd(), scope=args.scope, hooks_dir=args.dir, dry_run=args.dry_run,
                     force=args.force)
    if args.json:
        _emit_json(result.to_dict())
    elif result.diagnostic is not None:
        _print(result.render() + "\n\n" + result.diagnostic.render())
    else:
        _print(result.render())
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

    result = uninstall(args.cwd or os.getcwd(), scope=args.scope, hooks_dir=args.dir, dry_run=args.dry_run,
                       purge=args.purge, confirm=_confirm(args))
    if args.json:
        _emit_json(result.to_dict())
    else:
        _print(result.render())
    return result.exit_code


def cmd_doctor(args: argparse.Namespace) -> int:
    """Diagnose the installation; exit 1 when any check fails. Changes nothing it reports on."""
    from cortex_engine.ops.doctor import diagnose

    report = diagnose(args.cwd or os.getcwd(), args.hooks_dir)
    if args.json:
        _emit_json(report.to_dict())
    else:
        _print(report.render())
    return report.exit_code


def cmd_gc(args: argparse.Namespace) -> int:
    """`cortex gc [--apply] [--json]`: report (or apply) retention; a directory with no store is left alone."""
    from cortex_engine.engine import describe_store
    from cortex_engine.progress import progress, wanted
    from cortex_engine.results import GC_STEPS

    if not describe_store(args.cwd or os.getcwd()).exists:
        if args.json:
            _emit_json({"dry_run": not args.apply, "store": None})
        else:
            _print("No store for this directory yet; nothing to collect.")
        return 0
    with _engine(args) as engine, progress("gc", GC_STEPS, enabled=args.apply and wanted(args.json), min_items=1) as tick:
        report = engine.gc(apply=args.apply, tick=tick)
    if args.json:
        _emit_json(report.to_dict())
    else:
        _print(report.render())
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write every note (or a scope's) as JSON Lines or Markdown, to stdout or --output."""
    from cortex_engine.progress import progress, wanted
    from cortex_engine.results import render_jsonl, render_markdown

    with _engine(args) as engine:
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
        raise CortexError(f"cannot write {args.output}: {exc.strerror or exc.__class__.__name__}", code="bad_file") from exc
    if args.json:
        _emit_json({"path": args.output, "format": args.format, "notes": len(notes)})
    else:
        _print(f"Exported {len(notes)} note(s) to {args.output} ({args.format}).")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Import a Cortex export, or Claude Code's CLAUDE.md / MEMORY.md as insight notes (one transaction)."""
    from contextlib import ExitStack

    from cortex_engine.progress import progress, wanted

    with _engine(args) as engine, ExitStack() as stack:
        def bar(total: int):  # noqa: ANN202 - a progress tick
            return stack.enter_context(progress("importing", total, enabled=wanted(args.json)))

        result = engine.import_file(args.file, scope=args.scope, progress=bar)
    _emit_json(result.to_dict()) if args.json else _print(result.render())
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    """Undo the last operator action of this scope (resolve, delete, edit, path rewrite), from its audit row."""
    with _engine(args) as engine:
        result = engine.undo()
    _emit_json(result.to_dict()) if args.json else _print(result.render())
    return 0


def cmd_backup(args: argparse.Namespace) -> int:
    """Copy the whole store to a file (SQLite's online backup: consistent while sessions write)."""
    from cortex_engine.ops.backup import backup

    result = backup(args.cwd or os.getcwd(), args.file, force=args.force)
    _emit_json(result.to_dict()) if args.json else _print(result.render())
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """Put a backup in place as this repository's store (refuses to replace one without --force; keeps a copy)."""
    from cortex_engine.ops.backup import restore

    result = restore(args.cwd or os.getcwd(), args.file, force=args.force)
    _emit_json(result.to_dict()) if args.json else _print(result.render())
    return 0


def cmd_completion(args: argparse.Namespace) -> int:
    """Print a shell completion script generated from this parser."""
    from cortex_engine.completion import script

    sys.stdout.write(script(args.shell, build_parser()))
    return 0


def _run_tui(cwd: str) -> int:
    from cortex_tui.app import run

    return run(cwd)


def cmd_tui(args: argparse.Namespace) -> int:
    """Open the operator TUI for this directory."""
    return _run_tui(args.cwd or os.getcwd())


# -- parser ------------------------------------------------------------------------------------


class _Ignored:
    """Swallows the argument definitions of sub-commands a run does not need."""

    def add_argument(self, *args: object, **kwargs: object) -> None:
        """Ignore one argument definition."""


_IGNORED = _Ignored()


def _command_of(argv: list[str]) -> str | None:
    """The sub-command named in argv (skipping -C/--cwd and its value), or None."""
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word in ("-C", "--cwd"):
            skip = True
            continue
        if word.startswith("-"):
            if word in ("-h", "--help", "--version"):
                return None
            continue
        return word
    return None


COMMAND_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("everyday", ("note", "recall", "brief", "state", "session-brief", "resolve", "inbox", "tui", "demo", "stats",
                  "route")),
    ("inspection and correction", (
        "list-memory", "inspect-memory", "edit-memory", "delete-memory", "validate-memory", "status", "store",
        "suggest-notes", "summarize", "consolidate", "read-ledger", "search-ledger", "log", "substitution", "engage",
        "disengage", "gc", "undo")),
    ("setup", ("install", "doctor", "serve", "embed", "eval-gate", "backup", "restore")),
)
"""The commands `cortex --help` lists, by group. The rest are internal (hook entry points, aliases) and unlisted."""
NO_JSON = frozenset({"tui", "serve"})
"""Commands where --json means nothing (they open a UI or speak a protocol)."""
HELP: dict[str, str] = {}
"""Each command's one-line help, as registered."""


def _grouped_help() -> str:
    """The epilog of `cortex --help`: one block per group, each command with its one-line help."""
    width = max(len(name) for _, names in COMMAND_GROUPS for name in names) + 2
    blocks = ["cortex COMMAND --help shows one command's options."]
    for title, names in COMMAND_GROUPS:
        blocks.append(f"{title}:\n" + "\n".join(f"  {name.ljust(width)}{HELP.get(name, '')}" for name in names))
    return "\n\n".join(blocks)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with `only`, just that sub-command (hooks start faster without the other forty)."""
    parser = _Parser(prog="cortex", description="Trust, freshness and economy for coding-agent memory.",
                     usage="cortex [-h] [--version] [-C CWD] [COMMAND ...]", formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version="cortex 0.1.0")
    parser.add_argument("-C", "--cwd", help="work as if started in this directory")
    parser.set_defaults(func=cmd_tui, json=False)
    parser.command_names = set()  # type: ignore[attr-defined]
    # The flat listing is suppressed: the epilog lists commands by group, and internals not at all.
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND", help=argparse.SUPPRESS)

    def add(name: str, func: Callable[[argparse.Namespace], int], help_text: str, **kw: object) -> argparse.ArgumentParser:
        if only is not None and name != only:
            return _IGNORED  # type: ignore[return-value]
        parser.command_names.add(name)  # type: ignore[attr-defined]
        # No `help=`: the flat listing stays empty and the epilog lists commands by group (internals unlisted).
        p = sub.add_parser(name, description=help_text, **kw)  # type: ignore[arg-type]
        HELP[name] = help_text
        if name not in NO_JSON:
            p.add_argument("--json", action="store_true", help="print the result as JSON")
        p.set_defaults(func=func, json=False)
        return p

    p = add("note", cmd_note, "record an insight, decision, intent, blocker or focus")
    p.add_argument("--kind", required=True, help="insight | decision | intent | blocker | focus")
    p.add_argument("--subject", help="what the note is about (required except for insight)")
    p.add_argument("--alternative", action="append", help="a rejected alternative (repeatable)")
    p.add_argument("text", nargs="+", help="the note text")

    for name, func, budget_help in (("recall", cmd_recall, 600), ("brief", cmd_brief, 450)):
        p = add(name, func, f"{name} memory for a topic (budget {budget_help} tokens)")
        p.add_argument("topic", nargs="+")
        p.add_argument("--budget", type=int)
        p.add_argument("--peek", action="store_true", help=PEEK_HELP)
        if name == "recall":
            p.add_argument("--detail", choices=["none", "scores"], default=None)
            p.add_argument("--scope", help="read another scope: a branch name (deleted or not) or a scope key")
            p.add_argument("--limit", type=int, help="show at most N items, 1-50 (default: as many as fit the budget)")
        else:
            p.add_argument("--for", dest="for_agent", help="the agent being briefed")
    p = add("state", cmd_state, "the working state of this branch (budget 800 tokens)")
    p.add_argument("--budget", type=int)
    p.add_argument("--peek", action="store_true", help=PEEK_HELP)
    add("session-brief", cmd_session_brief, "the SessionStart brief as it would be injected now")
    add("header", cmd_header, "the full branch-aware working-memory header")
    p = add("inject-header", cmd_inject_header, "SessionStart: start a session, engage capture, print the brief")
    p.add_argument("--quiet", action="store_true", help="print only the 150-token session brief (hook mode)")
    p.add_argument("--from-project", action="store_true",
                   help="run by the project's own wiring; without it, a --quiet run stands down where the project "
                        "wires Cortex (`install --scope project`), so a session starts once")
    p = add("flush-spool", cmd_flush_spool, "replay the worktree's capture spool into the store")
    p.add_argument("--embed", action="store_true", help="then embed new items (the semantic extra; the detached flush)")
    add("embed", cmd_embed, "give every memory item a sentence vector, so recall also finds by meaning "
        "(needs the semantic extra)")
    p = add("read-ledger", cmd_read_ledger, "have these files been read in this scope, and did they change since?")
    p.add_argument("paths", nargs="+")
    p = add("log", cmd_log, "capture one event by hand: read, edit, write, cmd or agent")
    p.add_argument("kind", choices=["read", "edit", "write", "cmd", "agent"])
    p.add_argument("--file")
    p.add_argument("--lines", help="accepted for compatibility; whole-file events are recorded")
    p.add_argument("--cmd")
    p.add_argument("--exit", type=int)
    p.add_argument("--stdout")
    p.add_argument("--stderr")
    p.add_argument("--desc")
    p = add("substitution", cmd_substitution, "verified read substitution for this worktree: on | off | status")
    p.add_argument("action", nargs="?", default="status", choices=["on", "off", "status"])
    p = add("search-ledger", cmd_search_ledger, "did this search already find nothing, and provably still would?")
    p.add_argument("pattern")
    p.add_argument("--path")
    p.add_argument("--glob")
    p.add_argument("--type")
    p.add_argument("-i", action="store_true", help="case-insensitive")
    p.add_argument("--multiline", action="store_true")
    add("engage", cmd_engage, "re-enable capture for this worktree")
    p = add("hook", cmd_hook, "handle one Claude Code hook event (payload on stdin; always exits 0)")
    p.add_argument("action", choices=["dispatch-pre", "subagent-start", "subagent-stop", "guard-memory", "end-of-turn",
                                      "reflect-pre", "reflect-prompt"])
    p = add("reflect", cmd_reflect, "run a reflex by hand: the consult hint or the whisper")
    p.add_argument("--event", choices=["prompt", "edit", "cmd"], required=True)
    p.add_argument("--prompt")
    p.add_argument("--file")
    p.add_argument("--cmd")
    add("stats", cmd_stats, "token spend (injected, saved, net, ratio) and retrieval health")
    p = add("suggest-notes", cmd_suggest_notes, "suggest notes worth saving from a session (writes nothing)")
    p.add_argument("--session")
    p = add("summarize", cmd_summarize, "write the current session's summary now")
    p.add_argument("description", nargs="*")
    add("consolidate", cmd_consolidate, "summarize ended sessions that have none yet")
    add("disengage", cmd_disengage, "disable capture for this worktree")
    p = add("evaluate", cmd_evaluate, "run a retrieval-quality suite (or topics on the live store) and print JSON")
    p.add_argument("--suite", help="a suite file, e.g. eval/suites/stemming.json")
    p.add_argument("--compare", help="a baseline file to compare the result with")
    p.add_argument("--topics", help="comma-separated topics to evaluate against the live store")
    p = add("eval-gate", cmd_eval_gate, "compare every suite with its locked baseline (fails closed)")
    p.add_argument("--suites", default="eval/suites")
    p.add_argument("--baselines", default="eval/baselines")
    p.add_argument("--coverage", default="eval/kind-coverage.json")
    p.add_argument("--regenerate-baseline", metavar="NAME", help="rewrite one suite's baseline (prints what it accepts)")

    for name in ("resolve", "note-resolve"):
        p = add(name, cmd_resolve, "mark a note resolved or superseded (by id or by subject)")
        if name == "resolve":
            p.add_argument("note_id", nargs="?")
        p.add_argument("--id", dest="id")
        p.add_argument("--subject")
        p.add_argument("--status", choices=["resolved", "superseded"], default="resolved")
        p.add_argument("--replacement", help="write this as the new note on the subject")

    p = add("list-memory", cmd_list_memory, "list every memory item (no default filters)")
    p.add_argument("--scope", action="append", help="a scope key (repeat for more; never comma-split)")
    p.add_argument("--kind", help="comma-separated kinds, e.g. note:decision,command_run")
    p.add_argument("--state", help="comma-separated states: pinned,hot,warm,cold,archived")
    p.add_argument("--limit", type=_lenient_limit, help="page size (default 20, at most 200; invalid or <= 0 means 20)")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--label", help="comma-separated labels, any of: contested,stale,drifted,superseded (judged as "
                                   "the listed labels are)")
    p.add_argument("--text", help="only items whose subject or text contains this (case-insensitive, literal)")
    p.add_argument("--sort", default="created", help="created (newest first, the default), kind, state, subject or scope")
    p.add_argument("--reverse", action="store_true", help="the sort's other direction")
    p = add("inspect-memory", cmd_inspect_memory, "show everything Cortex holds about one memory")
    p.add_argument("id")
    p = add("edit-memory", cmd_edit_memory, "replace a memory's text (audited)")
    p.add_argument("id")
    p.add_argument("--text")
    p.add_argument("--file")
    p = add("delete-memory", cmd_delete_memory, "preview deleting a memory; --yes deletes (audited)")
    p.add_argument("id")
    p.add_argument("--yes", action="store_true")
    p = add("reanchor", cmd_reanchor, "re-anchor a drifted memory to the current code, once it still holds (audited)")
    p.add_argument("id")
    p = add("rewrite-moved", cmd_rewrite_moved, "rewrite a memory's renamed file references to their new paths (audited)")
    p.add_argument("id")
    p = add("validate-memory", cmd_validate_memory, "check memory references against the checkout")
    p.add_argument("--topic", nargs="+")
    p.add_argument("--all-scopes", action="store_true",
                   help="check every branch and worktree of the store, each against its own checkout")
    p = add("promote", cmd_promote, "bring a merged branch's notes into this branch (for a squash merge)")
    p.add_argument("--from", dest="source", required=True, metavar="BRANCH", help="the branch to promote from")
    p.add_argument("--dry-run", action="store_true", help="show what would be promoted; write nothing")
    p = add("publish", cmd_publish, "write decisions as MADR files to commit (docs/decisions/; CORTEX_DECISIONS_DIR "
                                    "or `git config cortex.decisionsDir` moves it)")
    p.add_argument("ids", nargs="+", metavar="ID", help="a decision's note or memory id")
    add("sync", cmd_sync, "read the committed decisions folder at HEAD as shared decisions")
    p = add("inbox", cmd_inbox, "what arrived from outside (decision files by others, imports): list, accept or reject")
    p.add_argument("action", nargs="?", default="list", choices=["list", "accept", "reject"],
                   help="list (the default), accept or reject")
    p.add_argument("ids", nargs="*", metavar="ID", help="an arrival's id (or its first 8+ characters)")
    p.add_argument("--all", action="store_true", help="accept or reject every pending arrival of this branch")
    p.add_argument("--state", default="pending", choices=["pending", "accepted", "rejected", "withdrawn", "all"],
                   help="which arrivals to list (default pending)")
    add("branches", cmd_branches, "every scope of the store: notes, contests, activity, merged into, in git")
    add("store", cmd_store, "where this directory's store is")
    add("status", cmd_status, "what the store holds for this scope")
    p = add("demo", cmd_demo, "seed a demo repository and open the TUI on it")
    p.add_argument("--path", "--dir", dest="dir", help="where to create the demo repository")
    p.add_argument("--no-tui", "--print", dest="print", action="store_true",
                   help="print the demo's surfaces instead of opening the TUI")
    add("tui", cmd_tui, "open the operator TUI (the default)")
    add("serve", cmd_serve, "run Cortex as an MCP server over stdio (for Claude Code)")
    add("route", cmd_route, "which Cortex tool to use for what")
    for name in ("install", "install-hooks"):
        p = add(name, cmd_install, "install the hooks and the MCP server into Claude Code's settings, then run doctor")
        p.add_argument("--scope", default="user", help="user (~/.claude) or project (<project>/.claude and .mcp.json)")
        p.add_argument("--dry-run", action="store_true", help="report every outcome and write nothing")
        p.add_argument("--force", action="store_true", help="replace hook scripts you edited (a .bak is kept)")
        p.add_argument("--dir", help="where to write the hook scripts (default ~/.claude/hooks)")
    p = add("uninstall", cmd_uninstall, "remove what install added (hooks, wiring, MCP entry); keeps .bak copies and the store")
    p.add_argument("--scope", default="user", help="user (~/.claude) or project (<project>/.claude and .mcp.json)")
    p.add_argument("--dry-run", action="store_true", help="report every outcome and change nothing")
    p.add_argument("--dir", help="where install wrote the hook scripts (default: where install writes them)")
    p.add_argument("--purge", action="store_true", help="also delete this repository's store and runtime folder (asks)")
    p.add_argument("--yes", action="store_true", help="with --purge: do not ask")
    p = add("doctor", cmd_doctor, "diagnose the installation (exit 1 if any check fails)")
    p.add_argument("--hooks-dir", help="where the hook scripts are installed (default ~/.claude/hooks)")
    p = add("export", cmd_export, "write every note (kind, subject, alternatives, status, scope, contests) to a file")
    p.add_argument("--format", choices=["jsonl", "markdown"], default="jsonl",
                   help="jsonl (what import reads, the default) or markdown (for reading)")
    p.add_argument("--scope", action="append",
                   help="a scope key to export (repeatable; `here` = this worktree's scopes; default every scope)")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p = add("import", cmd_import, "import a Cortex export, or a CLAUDE.md / MEMORY.md as insight notes")
    p.add_argument("file")
    p.add_argument("--scope", help="store every note under this scope key (`here` = this worktree's scope)")
    add("undo", cmd_undo, "undo the last resolve, delete, edit or path rewrite in this scope (audited; refused if "
                          "what it changed has changed since)")
    p = add("backup", cmd_backup, "copy the whole store (every note, session and ledger) to one file you can move")
    p.add_argument("file", help="where to write the backup (refused if it exists, unless --force)")
    p.add_argument("--force", action="store_true", help="replace FILE if it exists")
    p = add("restore", cmd_restore, "put a `cortex backup` file in place as this repository's store")
    p.add_argument("file", help="a file written by `cortex backup`")
    p.add_argument("--force", action="store_true",
                   help="replace the store that exists here (a copy of it is kept beside it as cortex.db.before-restore)")
    p = add("completion", cmd_completion, "print a shell completion script: source <(cortex completion bash)")
    p.add_argument("shell", choices=["bash", "zsh", "fish"])
    p = add("gc", cmd_gc, "report what cleanup would remove; --apply removes it")
    p.add_argument("--apply", action="store_true")
    if only is None:
        parser.epilog = _grouped_help()
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    wants_json = "--json" in argv
    try:
        command = _command_of(argv)
        parser = build_parser(command)
        if command is not None and command not in parser.command_names:  # type: ignore[attr-defined]
            parser = build_parser()  # an unknown command: let the full parser say so
        args = parser.parse_args(argv)
    except UsageError as exc:
        return _fail(str(exc), "usage", wants_json, EXIT_USAGE)
    if args.cwd is not None and not os.path.isdir(args.cwd):
        return _fail(f"{args.cwd} is not a directory; -C takes a working directory", "bad_cwd", args.json, EXIT_ERROR)
    try:
        return int(args.func(args))
    except UsageError as exc:
        return _fail(str(exc), "usage", args.json, EXIT_USAGE)
    except CortexError as exc:
        from cortex_engine.results import messages

        return _fail(messages.error_text(exc, "cli"), exc.code, args.json, EXIT_ERROR, exc.details)
    except KeyboardInterrupt:
        return 130


def _fail(message: str, code: str, as_json: bool, exit_code: int, details: dict[str, object] | None = None) -> int:
    """Report an error: one `cortex:` line on stderr and, with --json, `{"error", "message", …details}` on stdout."""
    line = " ".join(message.split())
    sys.stderr.write(f"cortex: {line}\n")
    if as_json:
        extra = {k: v for k, v in (details or {}).items() if k not in ("error", "message")}
        try:
            json.dumps(extra)
        except (TypeError, ValueError):
            extra = {}
        _emit_json({"error": code, "message": line, **extra})
    return exit_code


if __name__ == "__main__":
    raise SystemExit(main())
