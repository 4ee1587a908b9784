"""The `cortex` commands that inspect and correct memory, and look after this worktree's capture and the store."""

from __future__ import annotations

import argparse
import os

from cortex_engine.adapters.handlers.common import UsageError, emit_json, emit_text, engine_for
from cortex_engine.base.errors import CortexError


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


def cmd_list_memory(args: argparse.Namespace) -> int:
    """List memory items."""
    from cortex_engine.results import messages

    def split(value: str | None) -> list[str] | None:
        return [x.strip() for x in value.split(",") if x.strip()] if value else None

    with engine_for(args) as engine:
        page = engine.list_memory(
            scopes=args.scope,
            kinds=split(args.kind),
            states=split(args.state),
            labels=split(args.label),
            text=args.text,
            sort=args.sort,
            reverse=args.reverse,
            limit=args.limit,
            offset=args.offset,
        )
    if args.json:
        emit_json(page.to_dict())
    else:
        emit_text(messages.memory_page(page))
    return 0


def cmd_inspect_memory(args: argparse.Namespace) -> int:
    """Inspect one memory item."""
    from cortex_engine.results import messages

    with engine_for(args) as engine:
        result = engine.inspect_memory(args.id)
    if args.json:
        emit_json(result.to_dict())
    else:
        emit_text(messages.inspection(result))
    return 0


def cmd_edit_memory(args: argparse.Namespace) -> int:
    """Edit one memory item's text."""
    from cortex_engine.results import messages

    text = _read_text_arg(args)
    with engine_for(args) as engine:
        result = engine.edit_memory(args.id, text)
    if args.json:
        emit_json({**result.__dict__, "text": messages.edited(result)})
    else:
        emit_text(messages.edited(result))
    return 0


def cmd_delete_memory(args: argparse.Namespace) -> int:
    """Preview or delete one memory item."""
    from cortex_engine.results import messages

    with engine_for(args) as engine:
        result = engine.delete_memory(args.id, yes=args.yes)
    if args.json:
        emit_json({**result.__dict__, "message": messages.deletion(result)})
    else:
        emit_text(messages.deletion(result))
    return 0


def cmd_reanchor(args: argparse.Namespace) -> int:
    """Re-anchor a drifted memory to the current code."""
    from cortex_engine.results import messages

    with engine_for(args) as engine:
        result = engine.reanchor(args.id)
    message = messages.reanchored(result)
    if args.json:
        emit_json({"id": result.id, "anchors": result.anchors, "message": message})
    else:
        emit_text(message)
    return 0


def cmd_rewrite_moved(args: argparse.Namespace) -> int:
    """Rewrite a memory's renamed file references to their new paths."""
    from cortex_engine.results import messages

    with engine_for(args) as engine:
        result = engine.rewrite_moved(args.id)
    message = messages.rewrote_moved(result)
    if args.json:
        emit_json({"id": result.id, "moves": result.moves, "references": result.edit.references, "message": message})
    else:
        emit_text(message)
    return 0


def cmd_validate_memory(args: argparse.Namespace) -> int:
    """Audit memory references against the checkout."""
    with engine_for(args) as engine:
        report = engine.validate_memory(" ".join(args.topic) if args.topic else None, all_scopes=args.all_scopes)
        paths = (engine.identity.identifying_path, engine.identity.root)
    if args.json:
        emit_json(report)
        return 0
    from cortex_engine.results import messages, shown_scope_key

    lines = [messages.freshness_summary(report)]
    for item in report["items"]:  # type: ignore[attr-defined]
        if item["label"]:
            lines.append(f"  {item['id']}  [{item['label']}]")
    for scope in report.get("scopes", []):  # type: ignore[attr-defined]
        lines.append(
            f"scope {shown_scope_key(scope['scope_key'], *paths)}: {scope['checked']} checked, {scope['stale']} stale "
            f"(against {scope['against']} {scope['where']})"
        )
    for scope in report.get("unchecked", []):  # type: ignore[attr-defined]
        lines.append(f"scope {shown_scope_key(scope['scope_key'], *paths)}: not checked ({scope['reason']})")
    emit_text("\n".join(lines))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """What the store holds for this scope."""
    from cortex_engine.base.settings import describe_review

    with engine_for(args) as engine:
        status = engine.status()
    if args.json:
        emit_json(status)
        return 0
    states: dict[str, int] = status["items_by_state"]  # type: ignore[assignment]
    by_state = " (" + ", ".join(f"{k} {v}" for k, v in sorted(states.items())) + ")" if states else ""
    problem: str | None = status["review_policy_problem"]  # type: ignore[assignment]
    emit_text(
        "\n".join(
            [
                "OK",
                f"DB: {status['store']}",
                f"Scope: {status['scope_key_shown']}",
                *(
                    [f"Session: {status['session']}" + _host_part(status.get("host_session_id"))]
                    if status.get("session")
                    else []
                ),
                f"Items: {status['items']}{by_state}",
                f"Contested notes: {status['contested_notes']}",
                "Review: " + describe_review(str(status["review_policy"]), problem),
                _semantic_line(status["semantic"]),  # type: ignore[arg-type]
            ]
        )
    )
    return 0


def _host_part(host: object) -> str:
    """` (Claude Code session <id>)` for a session the host started (what `claude --resume` takes), else ''."""
    return f" (Claude Code session {host})" if isinstance(host, str) and host else ""


def _semantic_line(state: dict[str, object]) -> str:
    """`Recall: …`: which retrievers a recall runs, and how to turn the dense one on when it is off."""
    if state["state"] == "on":
        return f"Recall: by words and by meaning ({state['detail']})"
    return f"Recall: by words only — {state['detail']}"


def cmd_store(args: argparse.Namespace) -> int:
    """Where this directory's store is (does not create it)."""
    from cortex_engine.engine import describe_store

    info = describe_store(args.cwd or os.getcwd())
    if args.json:
        emit_json(info.to_dict())
        return 0
    emit_text(
        "\n".join(
            [
                f"Store:    {info.path}",
                f"Id:       {info.store_id}",
                f"Derived:  {info.derived}",
                f"Exists:   {'yes' if info.exists else 'no'}",
                f"Scope:    {info.scope_key_shown}",
            ]
        )
    )
    return 0


def cmd_suggest_notes(args: argparse.Namespace) -> int:
    """Suggest notes worth saving from a session (writes nothing)."""
    with engine_for(args) as engine:
        result = engine.suggest_notes(args.session)
    if args.json:
        emit_json(result)
    else:
        from cortex_engine.results import messages

        emit_text(messages.suggestions(result))
    return 0


def cmd_summarize(args: argparse.Namespace) -> int:
    """Write the current session's summary now."""
    from cortex_engine.results import strip_control

    with engine_for(args) as engine:
        text = strip_control(engine.summarize(" ".join(args.description) if args.description else None))
    emit_json({"summary": text}) if args.json else emit_text(text)
    return 0


def cmd_consolidate(args: argparse.Namespace) -> int:
    """Summarize ended sessions that have no summary yet."""
    with engine_for(args) as engine:
        count = engine.consolidate()
    if args.json:
        emit_json({"consolidated": count})
    else:
        emit_text("No unconsolidated sessions." if count == 0 else f"Consolidated {count} session(s).")
    return 0


def cmd_read_ledger(args: argparse.Namespace) -> int:
    """Whether files were already read in this scope, and whether they changed since."""
    with engine_for(args) as engine:
        results = engine.read_ledger(args.paths)
    if args.json:
        emit_json({"results": [r.to_dict() for r in results]})
    else:
        emit_text("\n".join(r.line() for r in results))
    return 0


def cmd_search_ledger(args: argparse.Namespace) -> int:
    """Did this search already find nothing, and would it still?"""
    query = {
        "pattern": args.pattern,
        "path": args.path,
        "glob": args.glob,
        "type": args.type,
        "case_insensitive": args.i,
        "multiline": args.multiline,
    }
    with engine_for(args) as engine:
        [verdict] = engine.search_ledger([query])
    emit_json({"results": [verdict.to_dict()]}) if args.json else emit_text(verdict.describe())
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    """Capture one event by hand into the scoped session (the same replay the hooks' spool gets)."""
    with engine_for(args) as engine:
        recorded = engine.log_event(
            args.kind,
            file=args.file,
            command=args.cmd,
            exit_code=args.exit,
            stdout=args.stdout,
            stderr=args.stderr,
            description=args.desc,
        )
    emit_json({"recorded": recorded}) if args.json else emit_text(
        f"logged {args.kind}" if recorded else "nothing recorded"
    )
    return 0


def cmd_substitution(args: argparse.Namespace) -> int:
    """Verified read substitution: on, off, or status (off by default)."""
    with engine_for(args) as engine:
        state = engine.substitution(args.action)
    if args.json:
        emit_json({"substitution": state})
    else:
        emit_text(
            f"Read substitution is {state} for this worktree."
            + (" Re-reading a substituted file in the same turn always returns the real text." if state == "on" else "")
        )
    return 0


def cmd_engage(args: argparse.Namespace) -> int:
    """Re-enable capture for this worktree."""
    with engine_for(args) as engine:
        engine.engage()
    emit_json({"engaged": True}) if args.json else emit_text("Cortex engaged: capture is on for this worktree.")
    return 0


def cmd_disengage(args: argparse.Namespace) -> int:
    """Disable capture for this worktree."""
    with engine_for(args) as engine:
        was = engine.disengage()
    if args.json:
        emit_json({"engaged": False, "was_engaged": was})
    else:
        emit_text("Cortex disengaged. Event logging and gates disabled for this worktree.")
    return 0


def cmd_gc(args: argparse.Namespace) -> int:
    """`cortex gc [--apply] [--json]`: report (or apply) retention; a directory with no store is left alone."""
    from cortex_engine.adapters.progress import progress, wanted
    from cortex_engine.engine import describe_store
    from cortex_engine.results import GC_STEPS

    if not describe_store(args.cwd or os.getcwd()).exists:
        if args.json:
            emit_json({"dry_run": not args.apply, "store": None})
        else:
            emit_text("No store for this directory yet; nothing to collect.")
        return 0
    with (
        engine_for(args) as engine,
        progress("gc", GC_STEPS, enabled=args.apply and wanted(args.json), min_items=1) as tick,
    ):
        report = engine.gc(apply=args.apply, tick=tick)
    if args.json:
        emit_json(report.to_dict())
    else:
        emit_text(report.render())
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    """Undo the last operator action of this scope (resolve, delete, edit, path rewrite), from its audit row: a
    person's act, typed at a terminal (the TUI's undo key is the other way)."""
    from cortex_engine.adapters.handlers.person import confirm, require_person

    require_person("undoing an action", "cortex undo")
    with engine_for(args) as engine:
        shown = engine.undo_pending()
        confirm([shown.render()], "undo it")
        result = engine.undo(expected=shown.correction)
    emit_json(result.to_dict()) if args.json else emit_text(result.render())
    return 0
