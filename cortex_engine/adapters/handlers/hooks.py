"""The hooks' `cortex` entry points (inject-header, flush-spool, hook, header) and `reflect`, their hand-run twin.

These run on the agent's path, so they import nothing heavy and fail soft where the host expects it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from cortex_engine.adapters.handlers.common import emit_json, emit_text, engine_for, surface_out
from cortex_engine.base.errors import CortexError, RuntimeUntrusted, StoreRefused

if TYPE_CHECKING:
    from cortex_engine.engine import Engine


def cmd_header(args: argparse.Namespace) -> int:
    """The full branch-aware header."""
    with engine_for(args) as engine:
        return surface_out(args, engine.header())


def _hook_payload() -> dict[str, Any]:
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
        from cortex_engine.adapters.hookentry import project_wires_cortex

        if project_wires_cortex(os.environ.get("CLAUDE_PROJECT_DIR")):
            return 0  # the project's own SessionStart wiring (--from-project) starts this session
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) and os.path.isdir(payload["cwd"]) else None
    host = found if isinstance(found := payload.get("session_id"), str) else None
    source = found if isinstance(found := payload.get("source"), str) else None
    try:
        with open_engine(cwd or args.cwd or os.getcwd()) as engine:
            engine.start_session(host, source)
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
    return surface_out(args, surface) if surface.text or args.json else 0


def cmd_flush_spool(args: argparse.Namespace) -> int:
    """Replay the worktree's capture spool into the store; a refused store makes the hooks back off."""
    try:
        engine = engine_for(args)
    except StoreRefused as exc:
        from cortex_engine.engine import back_off_capture

        back_off_capture(args.cwd or os.getcwd(), busy=exc.code == "store_busy")
        raise
    with engine:
        result = engine.flush_spool()
        if args.embed:  # the capture hook's detached flush: embed what is new, off the agent's path
            _embed_quietly(engine)
    emit_json(result.to_dict()) if args.json else emit_text(json.dumps(result.to_dict()))
    return 0


EMBED_AFTER_FLUSH = 2000
"""The most items a detached flush embeds (a minute or so on one core); `cortex embed` or the server does the rest."""


def _embed_quietly(engine: Engine) -> None:
    """Embed up to EMBED_AFTER_FLUSH new items when the semantic extra is installed; a refused model changes nothing."""
    import sqlite3

    from cortex_engine.engine import semantic_installed

    if not semantic_installed():
        return
    try:
        engine.embed_pending(limit=EMBED_AFTER_FLUSH)
    except (CortexError, sqlite3.Error):
        pass  # lexical recall still finds every item; doctor and status say why the model was refused


def cmd_hook(args: argparse.Namespace) -> int:
    """Handle one hook event from stdin; prints only what the host expects, and always exits 0."""
    from cortex_engine.adapters.hookentry import run

    payload = _hook_payload()
    try:
        out = run(args.action, payload)
    except Exception as exc:  # noqa: BLE001 - a hook must never break the agent; say why on stderr
        sys.stderr.write(f"cortex: hook {args.action} failed: {' '.join(str(exc).split())[:200]}\n")
        return 0
    if out:
        emit_text(out)
    return 0


def cmd_reflect(args: argparse.Namespace) -> int:
    """Run a reflex by hand: the consult hint for a prompt, or the whisper for a file being edited."""
    from cortex_engine.adapters.hookentry import context_output

    with engine_for(args) as engine:
        if args.event == "prompt":
            event, text = "UserPromptSubmit", engine.consult_hint(args.prompt or "")
        else:
            event, text = "PreToolUse", engine.whisper(args.event, args.file or args.cmd or "")
    if args.json:
        emit_json(json.loads(context_output(event, text)) if text else {})
    elif text:
        emit_text(text)
    return 0
