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
from cortex_engine.command_table import GROUPS, Command, arg, command, grouped_help, hidden, lazy

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
    """The engine for the command being run: a one-shot read (`reads` in its row) never creates a store."""
    from cortex_engine.engine import open_engine

    row = COMMAND_BY_NAME.get(getattr(args, "command", None) or "")
    reads = row is not None and row.reads
    return open_engine(args.cwd or os.getcwd(), create=not reads, empty_if_missing=reads)


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
                                                 scope=args.scope, limit=args.limit, adapter="cli"))


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
    from cortex_engine.results import messages

    lines = [messages.freshness_summary(report)]
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

    if not (args.print or args.json):
        _require_terminal("`cortex demo --print` prints the demo's surfaces instead")
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
    """Print a shell completion script written from the command table."""
    from cortex_engine.completion import script

    sys.stdout.write(script(args.shell, COMMANDS, GLOBAL_ARGS))
    return 0


def _require_terminal(instead: str) -> None:
    """The TUI draws on a terminal: without one (a pipe, a script, an agent's shell) it would hang writing escape
    codes to nobody, so say what to run instead (issue 29)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(f"the Cortex TUI needs a terminal and stdin or stdout is not one; {instead}, and "
                         "`cortex --help` lists every command")


def _run_tui(cwd: str) -> int:
    _require_terminal("run it in a terminal")
    from cortex_tui.app import run

    return run(cwd)


def cmd_tui(args: argparse.Namespace) -> int:
    """Open the operator TUI for this directory."""
    return _run_tui(args.cwd or os.getcwd())


# -- parser ------------------------------------------------------------------------------------


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


# -- the command table ------------------------------------------------------------------------------
# To add a command: write its `cmd_*` function above, then ONE row below: `command(name, cmd_x, group, help, arg(...))`
# with a group from `command_table.GROUPS`, or `hidden(name, cmd_x, why, help, ...)` for a hook entry point or alias.
# The parser, `cortex --help`, the shell completions and the README check are all read from these rows.

EVERYDAY, INSPECTION, SHARING, SETUP = GROUPS
_BUDGET = arg("--budget", type=int, help="the token budget (default: the surface's own)")
_PEEK = arg("--peek", action="store_true", help=PEEK_HELP)
_ID = arg("id", help="a memory or note id (8 characters or more of it)")
_INSTALL_ARGS = (
    arg("--scope", default="user", values=lazy("ops.install", "SCOPES"),
        help="user (~/.claude) or project (<project>/.claude and .mcp.json)"),
    arg("--dry-run", action="store_true", help="report every outcome and write nothing"),
    arg("--force", action="store_true", help="replace hook scripts you edited (a .bak is kept)"),
    arg("--dir", complete="dir", help="where to write the hook scripts (default ~/.claude/hooks)"),
)
_RESOLVE_ARGS = (
    arg("--id", dest="id", help="the note id (instead of NOTE_ID)"),
    arg("--subject", help="resolve the active note on this subject"),
    arg("--status", choices=["resolved", "superseded"], default="resolved", help="the status the note takes"),
    arg("--replacement", help="write this as the new note on the subject"),
)

COMMANDS: tuple[Command, ...] = (
    # everyday
    command("note", cmd_note, EVERYDAY, "record an insight, decision, intent, blocker or focus",
            arg("--kind", required=True, values=lazy("memory.items", "NOTE_KINDS"),
                help="insight | decision | intent | blocker | focus"),
            arg("--subject", help="what the note is about (required except for insight)"),
            arg("--alternative", action="append", help="a rejected alternative (repeatable)"),
            arg("text", nargs="+", help="the note text")),
    command("recall", cmd_recall, EVERYDAY, "recall memory for a topic (budget 600 tokens)",
            arg("topic", nargs="+", help="what to recall"), _BUDGET, _PEEK,
            arg("--detail", choices=["none", "scores"], default=None, help="show each item's scores"),
            arg("--scope", help="read another scope: a branch name (deleted or not) or a scope key"),
            arg("--limit", type=int, help="show at most N items, 1-50 (default: as many as fit the budget)"),
            reads=True),
    command("brief", cmd_brief, EVERYDAY, "brief memory for a topic (budget 450 tokens)",
            arg("topic", nargs="+", help="what the brief is about"), _BUDGET, _PEEK,
            arg("--for", dest="for_agent", help="the agent being briefed"), reads=True),
    command("state", cmd_state, EVERYDAY, "the working state of this branch (budget 800 tokens)", _BUDGET, _PEEK,
            reads=True),
    command("session-brief", cmd_session_brief, EVERYDAY, "the SessionStart brief as it would be injected now",
            reads=True),
    command("resolve", cmd_resolve, EVERYDAY, "mark a note resolved or superseded (by id or by subject)",
            arg("note_id", nargs="?", help="the note to resolve"), *_RESOLVE_ARGS),
    command("inbox", cmd_inbox, EVERYDAY,
            "what arrived from outside (decision files by others, imports): list, accept or reject",
            arg("action", nargs="?", default="list", choices=["list", "accept", "reject"],
                help="list (the default), accept or reject"),
            arg("ids", nargs="*", metavar="ID", help="an arrival's id (or its first 8+ characters)"),
            arg("--all", action="store_true", help="accept or reject every pending arrival of this branch"),
            arg("--state", default="pending", choices=["pending", "accepted", "rejected", "withdrawn", "all"],
                help="which arrivals to list (default pending)")),
    command("tui", cmd_tui, EVERYDAY, "open the operator TUI (the default)", json=False),
    command("demo", cmd_demo, EVERYDAY, "seed a demo repository and open the TUI on it",
            arg("--path", "--dir", dest="dir", complete="dir", help="where to create the demo repository"),
            arg("--no-tui", "--print", dest="print", action="store_true",
                help="print the demo's surfaces instead of opening the TUI")),
    command("stats", cmd_stats, EVERYDAY, "token spend (injected, saved, net, ratio) and retrieval health", reads=True),
    command("route", cmd_route, EVERYDAY, "which Cortex tool to use for what"),
    # inspection and correction
    command("list-memory", cmd_list_memory, INSPECTION, "list every memory item (no default filters)",
            arg("--scope", action="append", help="a scope key (repeat for more; never comma-split)"),
            arg("--kind", help="comma-separated kinds, e.g. note:decision,command_run"),
            arg("--state", values=lazy("memory.items", "STATES"),
                help="comma-separated states: pinned,hot,warm,cold,archived"),
            arg("--limit", type=_lenient_limit, help="page size (default 20, at most 200; invalid or <= 0 means 20)"),
            arg("--offset", type=int, default=0, help="skip this many items"),
            arg("--label", values=lazy("query.inspection", "LABEL_FILTERS"),
                help="comma-separated labels, any of: contested,stale,drifted,superseded (judged as the listed "
                     "labels are)"),
            arg("--text", help="only items whose subject or text contains this (case-insensitive, literal)"),
            arg("--sort", default="created", values=lazy("query.inspection", "SORTS"),
                help="created (newest first, the default), kind, state, subject or scope"),
            arg("--reverse", action="store_true", help="the sort's other direction"), reads=True),
    command("inspect-memory", cmd_inspect_memory, INSPECTION, "show everything Cortex holds about one memory", _ID,
            reads=True),
    command("edit-memory", cmd_edit_memory, INSPECTION, "replace a memory's text (audited)", _ID,
            arg("--text", help="the new text"),
            arg("--file", complete="file", help="read the new text from this file")),
    command("delete-memory", cmd_delete_memory, INSPECTION, "preview deleting a memory; --yes deletes (audited)", _ID,
            arg("--yes", action="store_true", help="delete (without it: only the preview)")),
    command("reanchor", cmd_reanchor, INSPECTION,
            "re-anchor a drifted memory to the current code, once it still holds (audited)", _ID),
    command("rewrite-moved", cmd_rewrite_moved, INSPECTION,
            "rewrite a memory's renamed file references to their new paths (audited)", _ID),
    command("validate-memory", cmd_validate_memory, INSPECTION, "check memory references against the checkout",
            arg("--topic", nargs="+", help="only memories about this topic"),
            arg("--all-scopes", action="store_true",
                help="check every branch and worktree of the store, each against its own checkout"), reads=True),
    command("status", cmd_status, INSPECTION, "what the store holds for this scope", reads=True),
    command("store", cmd_store, INSPECTION, "where this directory's store is"),
    command("suggest-notes", cmd_suggest_notes, INSPECTION,
            "suggest notes worth saving from a session (writes nothing)",
            arg("--session", help="a session id (default: the latest)"), reads=True),
    command("summarize", cmd_summarize, INSPECTION, "write the current session's summary now",
            arg("description", nargs="*", help="what the session was about")),
    command("consolidate", cmd_consolidate, INSPECTION, "summarize ended sessions that have none yet"),
    command("read-ledger", cmd_read_ledger, INSPECTION,
            "have these files been read in this scope, and did they change since?",
            arg("paths", nargs="+", complete="file", help="the files"), reads=True),
    command("search-ledger", cmd_search_ledger, INSPECTION,
            "did this search already find nothing, and provably still would?",
            arg("pattern", help="the search pattern"),
            arg("--path", complete="file", help="where the search looked"),
            arg("--glob", help="the search's glob"),
            arg("--type", help="the search's file type"),
            arg("-i", action="store_true", help="case-insensitive"),
            arg("--multiline", action="store_true", help="the pattern spans lines"), reads=True),
    command("log", cmd_log, INSPECTION, "capture one event by hand: read, edit, write, cmd or agent",
            arg("kind", choices=["read", "edit", "write", "cmd", "agent"], help="the event's kind"),
            arg("--file", complete="file", help="the file read, edited or written"),
            arg("--lines", help="accepted for compatibility; whole-file events are recorded"),
            arg("--cmd", help="the command run"),
            arg("--exit", type=int, help="the command's exit code"),
            arg("--stdout", help="the command's output"),
            arg("--stderr", help="the command's error output"),
            arg("--desc", help="what an agent was asked")),
    command("substitution", cmd_substitution, INSPECTION,
            "verified read substitution for this worktree: on | off | status",
            arg("action", nargs="?", default="status", choices=["on", "off", "status"],
                help="turn it on or off, or ask")),
    command("engage", cmd_engage, INSPECTION, "re-enable capture for this worktree"),
    command("disengage", cmd_disengage, INSPECTION, "disable capture for this worktree"),
    command("gc", cmd_gc, INSPECTION, "report what cleanup would remove; --apply removes it",
            arg("--apply", action="store_true", help="remove it")),
    command("undo", cmd_undo, INSPECTION, "undo the last resolve, delete, edit or path rewrite in this scope "
            "(audited; refused if what it changed has changed since)"),
    # sharing
    command("promote", cmd_promote, SHARING, "bring a merged branch's notes into this branch (for a squash merge)",
            arg("--from", dest="source", required=True, metavar="BRANCH", help="the branch to promote from"),
            arg("--dry-run", action="store_true", help="show what would be promoted; write nothing")),
    command("publish", cmd_publish, SHARING, "write decisions as MADR files to commit (docs/decisions/; "
            "CORTEX_DECISIONS_DIR or `git config cortex.decisionsDir` moves it)",
            arg("ids", nargs="+", metavar="ID", help="a decision's note or memory id")),
    command("sync", cmd_sync, SHARING, "read the committed decisions folder at HEAD as shared decisions"),
    command("branches", cmd_branches, SHARING,
            "every scope of the store: notes, contests, activity, merged into, in git",
            reads=True),
    command("export", cmd_export, SHARING,
            "write every note (kind, subject, alternatives, status, scope, contests) to a file",
            arg("--format", choices=["jsonl", "markdown"], default="jsonl",
                help="jsonl (what import reads, the default) or markdown (for reading)"),
            arg("--scope", action="append",
                help="a scope key to export (repeatable; `here` = this worktree's scopes; default every scope)"),
            arg("-o", "--output", complete="file", help="write to this file instead of stdout"), reads=True),
    command("import", cmd_import, SHARING, "import a Cortex export, or a CLAUDE.md / MEMORY.md as insight notes",
            arg("file", complete="file", help="an export (.jsonl) or a CLAUDE.md / MEMORY.md"),
            arg("--scope", help="store every note under this scope key (`here` = this worktree's scope)")),
    # setup
    command("install", cmd_install, SETUP,
            "install the hooks and the MCP server into Claude Code's settings, then run doctor", *_INSTALL_ARGS),
    command("uninstall", cmd_uninstall, SETUP,
            "remove what install added (hooks, wiring, MCP entry); keeps .bak copies and the store",
            arg("--scope", default="user", values=lazy("ops.install", "SCOPES"),
                help="user (~/.claude) or project (<project>/.claude and .mcp.json)"),
            arg("--dry-run", action="store_true", help="report every outcome and change nothing"),
            arg("--dir", complete="dir",
                help="where install wrote the hook scripts (default: where install writes them)"),
            arg("--purge", action="store_true", help="also delete this repository's store and runtime folder (asks)"),
            arg("--yes", action="store_true", help="with --purge: do not ask")),
    command("doctor", cmd_doctor, SETUP, "diagnose the installation (exit 1 if any check fails)",
            arg("--hooks-dir", complete="dir", help="where the hook scripts are installed (default ~/.claude/hooks)")),
    command("serve", cmd_serve, SETUP, "run Cortex as an MCP server over stdio (for Claude Code)", json=False),
    command("embed", cmd_embed, SETUP, "give every memory item a sentence vector, so recall also finds by meaning "
            "(needs the semantic extra and CORTEX_SEMANTIC=1)"),
    command("backup", cmd_backup, SETUP, "copy the whole store (every note, session and ledger) to one file you can move",
            arg("file", complete="file", help="where to write the backup (refused if it exists, unless --force)"),
            arg("--force", action="store_true", help="replace FILE if it exists")),
    command("restore", cmd_restore, SETUP, "put a `cortex backup` file in place as this repository's store",
            arg("file", complete="file", help="a file written by `cortex backup`"),
            arg("--force", action="store_true",
                help="replace the store that exists here (a copy of it is kept beside it as cortex.db.before-restore)")),
    command("completion", cmd_completion, SETUP, "print a shell completion script: source <(cortex completion bash)",
            arg("shell", choices=["bash", "zsh", "fish"], help="the shell")),
    command("eval-gate", cmd_eval_gate, SETUP, "compare every suite with its locked baseline (fails closed)",
            arg("--suites", default="eval/suites", complete="dir", help="the suites folder"),
            arg("--baselines", default="eval/baselines", complete="dir", help="the baselines folder"),
            arg("--coverage", default="eval/kind-coverage.json", complete="file", help="the kind-coverage file"),
            arg("--regenerate-baseline", metavar="NAME", help="rewrite one suite's baseline (prints what it accepts)")),
    # hidden: hook entry points, a developer's tool and old names
    hidden("header", cmd_header, "the hooks' full header; `state` is the person's view",
           "the full branch-aware working-memory header", reads=True),
    hidden("inject-header", cmd_inject_header, "the SessionStart hook's entry point",
           "SessionStart: start a session, engage capture, print the brief",
           arg("--quiet", action="store_true", help="print only the 150-token session brief (hook mode)"),
           arg("--from-project", action="store_true",
               help="run by the project's own wiring; without it, a --quiet run stands down where the project "
                    "wires Cortex (`install --scope project`), so a session starts once")),
    hidden("flush-spool", cmd_flush_spool, "the capture hooks' entry point",
           "replay the worktree's capture spool into the store",
           arg("--embed", action="store_true", help="then embed new items (the semantic extra; the detached flush)")),
    hidden("hook", cmd_hook, "Claude Code's hook entry point", "handle one Claude Code hook event (payload on stdin; "
           "always exits 0)",
           arg("action", choices=["dispatch-pre", "subagent-start", "subagent-stop", "guard-memory", "end-of-turn",
                                  "reflect-pre", "reflect-prompt"], help="the hook event")),
    hidden("reflect", cmd_reflect, "a hook reflex run by hand, for debugging hooks",
           "run a reflex by hand: the consult hint or the whisper",
           arg("--event", choices=["prompt", "edit", "cmd"], required=True, help="which reflex"),
           arg("--prompt", help="the prompt (for --event prompt)"),
           arg("--file", complete="file", help="the file being edited (for --event edit)"),
           arg("--cmd", help="the command (for --event cmd)")),
    hidden("evaluate", cmd_evaluate, "a developer's tool; eval-gate is the check",
           "run a retrieval-quality suite (or topics on the live store) and print JSON",
           arg("--suite", complete="file", help="a suite file, e.g. eval/suites/stemming.json"),
           arg("--compare", complete="file", help="a baseline file to compare the result with"),
           arg("--topics", help="comma-separated topics to evaluate against the live store")),
    hidden("note-resolve", cmd_resolve, "the old name of resolve", "mark a note resolved or superseded (by id or by "
           "subject)", *_RESOLVE_ARGS),
    hidden("install-hooks", cmd_install, "the old name of install",
           "install the hooks and the MCP server into Claude Code's settings, then run doctor", *_INSTALL_ARGS),
)
"""Every `cortex` sub-command, in the order `--help` lists them within a group."""
COMMAND_BY_NAME = {c.name: c for c in COMMANDS}
GLOBAL_ARGS = (
    arg("--version", action="version", version="cortex 0.1.0"),
    arg("-C", "--cwd", complete="dir", help="work as if started in this directory"),
)
"""The options before the sub-command."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser from `COMMANDS`; with `only`, just that sub-command (hooks start faster without the rest)."""
    parser = _Parser(prog="cortex", description="Trust, freshness and economy for coding-agent memory.",
                     usage="cortex [-h] [--version] [-C CWD] [COMMAND ...]", formatter_class=argparse.RawDescriptionHelpFormatter)
    for a in GLOBAL_ARGS:
        parser.add_argument(*a.flags, **a.kw)
    parser.set_defaults(func=cmd_tui, json=False)
    # The flat listing is suppressed: the epilog lists commands by group, and hidden ones not at all.
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND", help=argparse.SUPPRESS)
    for row in COMMANDS:
        if only is None or row.name == only:
            row.add_to(sub)
    if only is None:
        parser.epilog = grouped_help(COMMANDS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    wants_json = "--json" in argv
    try:
        command = _command_of(argv)
        # an unknown command: the full parser says so
        parser = build_parser(command if command in COMMAND_BY_NAME else None)
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
