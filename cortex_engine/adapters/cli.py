"""The `cortex` command line: parse, make one engine call, print. Standard library only at import.

`COMMANDS` is the one table of sub-commands; their handlers live in `cortex_engine.adapters.handlers`, one module
per group.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from cortex_engine.adapters.command_table import GROUPS, Command, arg, command, grouped_help, hidden, lazy
from cortex_engine.adapters.handlers.common import UsageError, emit_json
from cortex_engine.adapters.handlers.everyday import (
    cmd_brief,
    cmd_demo,
    cmd_inbox,
    cmd_note,
    cmd_recall,
    cmd_resolve,
    cmd_route,
    cmd_session_brief,
    cmd_state,
    cmd_stats,
    cmd_tui,
)
from cortex_engine.adapters.handlers.hooks import cmd_flush_spool, cmd_header, cmd_hook, cmd_inject_header, cmd_reflect
from cortex_engine.adapters.handlers.inspection import (
    cmd_consolidate,
    cmd_delete_memory,
    cmd_disengage,
    cmd_edit_memory,
    cmd_engage,
    cmd_gc,
    cmd_inspect_memory,
    cmd_list_memory,
    cmd_log,
    cmd_read_ledger,
    cmd_reanchor,
    cmd_rewrite_moved,
    cmd_search_ledger,
    cmd_status,
    cmd_store,
    cmd_substitution,
    cmd_suggest_notes,
    cmd_summarize,
    cmd_undo,
    cmd_validate_memory,
)
from cortex_engine.adapters.handlers.setup import (
    cmd_backup,
    cmd_doctor,
    cmd_embed,
    cmd_eval_gate,
    cmd_evaluate,
    cmd_install,
    cmd_restore,
    cmd_serve,
    cmd_uninstall,
)
from cortex_engine.adapters.handlers.sharing import (
    cmd_branches,
    cmd_export,
    cmd_import,
    cmd_promote,
    cmd_publish,
    cmd_review_policy,
    cmd_sync,
)
from cortex_engine.base.errors import CortexError

EXIT_ERROR = 1
EXIT_USAGE = 2
PEEK_HELP = "look without booking: no token-ledger entry, no reinforcement (a person looking is not a use)"


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _lenient_limit(value: str) -> int | None:
    """A --limit value; anything that is not a whole number means the default page size."""
    try:
        return int(value)
    except ValueError:
        return None


def cmd_completion(args: argparse.Namespace) -> int:
    """Print a shell completion script written from the command table."""
    from cortex_engine.adapters.completion import script

    sys.stdout.write(script(args.shell, COMMANDS, GLOBAL_ARGS))
    return 0


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
# To add a command: write its `cmd_*` function in `handlers/<group>.py`, then ONE row below:
# `command(name, cmd_x, group, help, arg(...))` with a group from `command_table.GROUPS`, or
# `hidden(name, cmd_x, why, help, ...)` for a hook entry point or alias.
# The parser, `cortex --help`, the shell completions and the README check are all read from these rows.

EVERYDAY, INSPECTION, SHARING, SETUP = GROUPS
_BUDGET = arg("--budget", type=int, help="the token budget (default: the surface's own)")
_PEEK = arg("--peek", action="store_true", help=PEEK_HELP)
_ID = arg("id", help="a memory or note id (8 characters or more of it)")
_INSTALL_ARGS = (
    arg(
        "--scope",
        default="user",
        values=lazy("ops.install", "SCOPES"),
        help="user (~/.claude) or project (<project>/.claude and .mcp.json)",
    ),
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
    command(
        "note",
        cmd_note,
        EVERYDAY,
        "record an insight, decision, intent, blocker or focus",
        arg(
            "--kind",
            required=True,
            values=lazy("memory.items", "NOTE_KINDS"),
            help="insight | decision | intent | blocker | focus",
        ),
        arg("--subject", help="what the note is about (required except for insight)"),
        arg("--alternative", action="append", help="a rejected alternative (repeatable)"),
        arg("text", nargs="+", help="the note text"),
    ),
    command(
        "recall",
        cmd_recall,
        EVERYDAY,
        "recall memory for a topic (budget 600 tokens)",
        arg("topic", nargs="+", help="what to recall"),
        _BUDGET,
        _PEEK,
        arg("--detail", choices=["none", "scores"], default=None, help="show each item's scores"),
        arg("--scope", help="read another scope: a branch name (deleted or not) or a scope key"),
        arg("--limit", type=int, help="show at most N items, 1-50 (default: as many as fit the budget)"),
        reads=True,
    ),
    command(
        "brief",
        cmd_brief,
        EVERYDAY,
        "brief memory for a topic (budget 450 tokens)",
        arg("topic", nargs="+", help="what the brief is about"),
        _BUDGET,
        _PEEK,
        arg("--for", dest="for_agent", help="the agent being briefed"),
        reads=True,
    ),
    command(
        "state", cmd_state, EVERYDAY, "the working state of this branch (budget 800 tokens)", _BUDGET, _PEEK, reads=True
    ),
    command(
        "session-brief", cmd_session_brief, EVERYDAY, "the SessionStart brief as it would be injected now", reads=True
    ),
    command(
        "resolve",
        cmd_resolve,
        EVERYDAY,
        "mark a note resolved or superseded (by id or by subject)",
        arg("note_id", nargs="?", help="the note to resolve"),
        *_RESOLVE_ARGS,
    ),
    command(
        "inbox",
        cmd_inbox,
        EVERYDAY,
        "what arrived from outside (decision files by others, imports): list, or accept or reject (asks you at a "
        "terminal)",
        arg(
            "action",
            nargs="?",
            default="list",
            choices=["list", "accept", "reject"],
            help="list (the default), accept or reject",
        ),
        arg("ids", nargs="*", metavar="ID", help="an arrival's id (or its first 8+ characters)"),
        arg("--all", action="store_true", help="accept or reject every pending arrival of this branch"),
        arg(
            "--state",
            default="pending",
            choices=["pending", "accepted", "rejected", "withdrawn", "all"],
            help="which arrivals to list (default pending)",
        ),
    ),
    command("tui", cmd_tui, EVERYDAY, "open the operator TUI (the default)", json=False),
    command(
        "demo",
        cmd_demo,
        EVERYDAY,
        "seed a demo repository and open the TUI on it",
        arg("--path", "--dir", dest="dir", complete="dir", help="where to create the demo repository"),
        arg(
            "--no-tui",
            "--print",
            dest="print",
            action="store_true",
            help="print the demo's surfaces instead of opening the TUI",
        ),
    ),
    command("stats", cmd_stats, EVERYDAY, "token spend (injected, saved, net, ratio) and retrieval health", reads=True),
    command("route", cmd_route, EVERYDAY, "which Cortex tool to use for what"),
    # inspection and correction
    command(
        "list-memory",
        cmd_list_memory,
        INSPECTION,
        "list every memory item (no default filters)",
        arg("--scope", action="append", help="a scope key (repeat for more; never comma-split)"),
        arg("--kind", help="comma-separated kinds, e.g. note:decision,command_run"),
        arg(
            "--state",
            values=lazy("memory.items", "STATES"),
            help="comma-separated states: pinned,hot,warm,cold,archived",
        ),
        arg("--limit", type=_lenient_limit, help="page size (default 20, at most 200; invalid or <= 0 means 20)"),
        arg("--offset", type=int, default=0, help="skip this many items"),
        arg(
            "--label",
            values=lazy("query.inspection", "LABEL_FILTERS"),
            help="comma-separated labels, any of: contested,stale,drifted,superseded (judged as the listed labels are)",
        ),
        arg("--text", help="only items whose subject or text contains this (case-insensitive, literal)"),
        arg(
            "--sort",
            default="created",
            values=lazy("query.inspection", "SORTS"),
            help="created (newest first, the default), kind, state, subject or scope",
        ),
        arg("--reverse", action="store_true", help="the sort's other direction"),
        reads=True,
    ),
    command(
        "inspect-memory",
        cmd_inspect_memory,
        INSPECTION,
        "show everything Cortex holds about one memory",
        _ID,
        reads=True,
    ),
    command(
        "edit-memory",
        cmd_edit_memory,
        INSPECTION,
        "replace a memory's text (audited)",
        _ID,
        arg("--text", help="the new text"),
        arg("--file", complete="file", help="read the new text from this file"),
    ),
    command(
        "delete-memory",
        cmd_delete_memory,
        INSPECTION,
        "preview deleting a memory; --yes deletes (audited)",
        _ID,
        arg("--yes", action="store_true", help="delete (without it: only the preview)"),
    ),
    command(
        "reanchor",
        cmd_reanchor,
        INSPECTION,
        "re-anchor a drifted memory to the current code, once it still holds (audited)",
        _ID,
    ),
    command(
        "rewrite-moved",
        cmd_rewrite_moved,
        INSPECTION,
        "rewrite a memory's renamed file references to their new paths (audited)",
        _ID,
    ),
    command(
        "validate-memory",
        cmd_validate_memory,
        INSPECTION,
        "check memory references against the checkout",
        arg("--topic", nargs="+", help="only memories about this topic"),
        arg(
            "--all-scopes",
            action="store_true",
            help="check every branch and worktree of the store, each against its own checkout",
        ),
        reads=True,
    ),
    command("status", cmd_status, INSPECTION, "what the store holds for this scope", reads=True),
    command("store", cmd_store, INSPECTION, "where this directory's store is"),
    command(
        "suggest-notes",
        cmd_suggest_notes,
        INSPECTION,
        "suggest notes worth saving from a session (writes nothing)",
        arg("--session", help="a session id (default: the latest)"),
        reads=True,
    ),
    command(
        "summarize",
        cmd_summarize,
        INSPECTION,
        "write the current session's summary now",
        arg("description", nargs="*", help="what the session was about"),
    ),
    command("consolidate", cmd_consolidate, INSPECTION, "summarize ended sessions that have none yet"),
    command(
        "read-ledger",
        cmd_read_ledger,
        INSPECTION,
        "have these files been read in this scope, and did they change since?",
        arg("paths", nargs="+", complete="file", help="the files"),
        reads=True,
    ),
    command(
        "search-ledger",
        cmd_search_ledger,
        INSPECTION,
        "did this search already find nothing, and provably still would?",
        arg("pattern", help="the search pattern"),
        arg("--path", complete="file", help="where the search looked"),
        arg("--glob", help="the search's glob"),
        arg("--type", help="the search's file type"),
        arg("-i", action="store_true", help="case-insensitive"),
        arg("--multiline", action="store_true", help="the pattern spans lines"),
        reads=True,
    ),
    command(
        "log",
        cmd_log,
        INSPECTION,
        "capture one event by hand: read, edit, write, cmd or agent",
        arg("kind", choices=["read", "edit", "write", "cmd", "agent"], help="the event's kind"),
        arg("--file", complete="file", help="the file read, edited or written"),
        arg("--lines", help="accepted for compatibility; whole-file events are recorded"),
        arg("--cmd", help="the command run"),
        arg("--exit", type=int, help="the command's exit code"),
        arg("--stdout", help="the command's output"),
        arg("--stderr", help="the command's error output"),
        arg("--desc", help="what an agent was asked"),
    ),
    command(
        "substitution",
        cmd_substitution,
        INSPECTION,
        "verified read substitution for this worktree: on | off | status",
        arg("action", nargs="?", default="status", choices=["on", "off", "status"], help="turn it on or off, or ask"),
    ),
    command("engage", cmd_engage, INSPECTION, "re-enable capture for this worktree"),
    command("disengage", cmd_disengage, INSPECTION, "disable capture for this worktree"),
    command(
        "gc",
        cmd_gc,
        INSPECTION,
        "report what cleanup would remove; --apply removes it",
        arg("--apply", action="store_true", help="remove it"),
    ),
    command(
        "undo",
        cmd_undo,
        INSPECTION,
        "undo the last resolve, delete, edit or path rewrite in this scope "
        "(asks you at a terminal; audited; refused if what it changed has changed since)",
    ),
    # sharing
    command(
        "promote",
        cmd_promote,
        SHARING,
        "bring a merged branch's notes into this branch (for a squash merge)",
        arg("--from", dest="source", required=True, metavar="BRANCH", help="the branch to promote from"),
        arg("--dry-run", action="store_true", help="show what would be promoted; write nothing"),
    ),
    command(
        "publish",
        cmd_publish,
        SHARING,
        "write decisions as MADR files to commit (docs/decisions/; "
        "CORTEX_DECISIONS_DIR or `git config cortex.decisionsDir` moves it)",
        arg("ids", nargs="+", metavar="ID", help="a decision's note or memory id"),
    ),
    command("sync", cmd_sync, SHARING, "read the committed decisions folder at HEAD as shared decisions"),
    command(
        "review-policy",
        cmd_review_policy,
        SHARING,
        "which arrivals wait in the inbox: show it, or set others | all | none (lowering it asks you at a terminal)",
        arg("policy", nargs="?", choices=["others", "all", "none"], help="the policy to set (default: show it)"),
    ),
    command(
        "branches",
        cmd_branches,
        SHARING,
        "every scope of the store: notes, contests, activity, merged into, in git",
        reads=True,
    ),
    command(
        "export",
        cmd_export,
        SHARING,
        "write every note (kind, subject, alternatives, status, scope, contests) to a file",
        arg(
            "--format",
            choices=["jsonl", "markdown"],
            default="jsonl",
            help="jsonl (what import reads, the default) or markdown (for reading)",
        ),
        arg(
            "--scope",
            action="append",
            help="a scope key to export (repeatable; `here` = this worktree's scopes; default every scope)",
        ),
        arg("-o", "--output", complete="file", help="write to this file instead of stdout"),
        reads=True,
    ),
    command(
        "import",
        cmd_import,
        SHARING,
        "import a Cortex export, or a CLAUDE.md / MEMORY.md as insight notes",
        arg("file", complete="file", help="an export (.jsonl) or a CLAUDE.md / MEMORY.md"),
        arg("--scope", help="store every note under this scope key (`here` = this worktree's scope)"),
    ),
    # setup
    command(
        "install",
        cmd_install,
        SETUP,
        "install the hooks and the MCP server into Claude Code's settings, then run doctor",
        *_INSTALL_ARGS,
    ),
    command(
        "uninstall",
        cmd_uninstall,
        SETUP,
        "remove what install added (hooks, wiring, MCP entry); keeps .bak copies and the store",
        arg(
            "--scope",
            default="user",
            values=lazy("ops.install", "SCOPES"),
            help="user (~/.claude) or project (<project>/.claude and .mcp.json)",
        ),
        arg("--dry-run", action="store_true", help="report every outcome and change nothing"),
        arg("--dir", complete="dir", help="where install wrote the hook scripts (default: where install writes them)"),
        arg("--purge", action="store_true", help="also delete this repository's store and runtime folder (asks)"),
        arg("--yes", action="store_true", help="with --purge: do not ask"),
    ),
    command(
        "doctor",
        cmd_doctor,
        SETUP,
        "diagnose the installation (exit 1 if any check fails)",
        arg("--hooks-dir", complete="dir", help="where the hook scripts are installed (default ~/.claude/hooks)"),
    ),
    command("serve", cmd_serve, SETUP, "run Cortex as an MCP server over stdio (for Claude Code)", json=False),
    command(
        "embed",
        cmd_embed,
        SETUP,
        "give every memory item a sentence vector, so recall also finds by meaning "
        "(needs the semantic extra; CORTEX_SEMANTIC=0 turns it off)",
    ),
    command(
        "backup",
        cmd_backup,
        SETUP,
        "copy the whole store (every note, session and ledger) to one file you can move",
        arg("file", complete="file", help="where to write the backup (refused if it exists, unless --force)"),
        arg("--force", action="store_true", help="replace FILE if it exists"),
    ),
    command(
        "restore",
        cmd_restore,
        SETUP,
        "put a `cortex backup` file in place as this repository's store",
        arg("file", complete="file", help="a file written by `cortex backup`"),
        arg(
            "--force",
            action="store_true",
            help="replace the store that exists here (a copy of it is kept beside it as cortex.db.before-restore, "
            "or the next free .before-restore.N)",
        ),
    ),
    command(
        "completion",
        cmd_completion,
        SETUP,
        "print a shell completion script: source <(cortex completion bash)",
        arg("shell", choices=["bash", "zsh", "fish"], help="the shell"),
    ),
    command(
        "eval-gate",
        cmd_eval_gate,
        SETUP,
        "compare every suite with its locked baseline (fails closed)",
        arg("--suites", default="eval/suites", complete="dir", help="the suites folder"),
        arg("--baselines", default="eval/baselines", complete="dir", help="the baselines folder"),
        arg("--coverage", default="eval/kind-coverage.json", complete="file", help="the kind-coverage file"),
        arg("--regenerate-baseline", metavar="NAME", help="rewrite one suite's baseline (prints what it accepts)"),
    ),
    # hidden: hook entry points, a developer's tool and old names
    hidden(
        "header",
        cmd_header,
        "the hooks' full header; `state` is the person's view",
        "the full branch-aware working-memory header",
        reads=True,
    ),
    hidden(
        "inject-header",
        cmd_inject_header,
        "the SessionStart hook's entry point",
        "SessionStart: start a session, engage capture, print the brief",
        arg("--quiet", action="store_true", help="print only the 150-token session brief (hook mode)"),
        arg(
            "--from-project",
            action="store_true",
            help="run by the project's own wiring; without it, a --quiet run stands down where the project "
            "wires Cortex (`install --scope project`), so a session starts once",
        ),
    ),
    hidden(
        "flush-spool",
        cmd_flush_spool,
        "the capture hooks' entry point",
        "replay the worktree's capture spool into the store",
        arg("--embed", action="store_true", help="then embed new items (the semantic extra; the detached flush)"),
    ),
    hidden(
        "hook",
        cmd_hook,
        "Claude Code's hook entry point",
        "handle one Claude Code hook event (payload on stdin; always exits 0)",
        arg(
            "action",
            choices=[
                "dispatch-pre",
                "subagent-start",
                "subagent-stop",
                "guard-memory",
                "end-of-turn",
                "reflect-pre",
                "reflect-prompt",
            ],
            help="the hook event",
        ),
    ),
    hidden(
        "reflect",
        cmd_reflect,
        "a hook reflex run by hand, for debugging hooks",
        "run a reflex by hand: the consult hint or the whisper",
        arg("--event", choices=["prompt", "edit", "cmd"], required=True, help="which reflex"),
        arg("--prompt", help="the prompt (for --event prompt)"),
        arg("--file", complete="file", help="the file being edited (for --event edit)"),
        arg("--cmd", help="the command (for --event cmd)"),
    ),
    hidden(
        "evaluate",
        cmd_evaluate,
        "a developer's tool; eval-gate is the check",
        "run a retrieval-quality suite (or topics on the live store) and print JSON",
        arg("--suite", complete="file", help="a suite file, e.g. eval/suites/stemming.json"),
        arg("--compare", complete="file", help="a baseline file to compare the result with"),
        arg("--topics", help="comma-separated topics to evaluate against the live store"),
    ),
    hidden(
        "note-resolve",
        cmd_resolve,
        "the old name of resolve",
        "mark a note resolved or superseded (by id or by subject)",
        *_RESOLVE_ARGS,
    ),
    hidden(
        "install-hooks",
        cmd_install,
        "the old name of install",
        "install the hooks and the MCP server into Claude Code's settings, then run doctor",
        *_INSTALL_ARGS,
    ),
)
"""Every `cortex` sub-command, in the order `--help` lists them within a group."""
COMMAND_BY_NAME = {c.name: c for c in COMMANDS}
GLOBAL_ARGS = (
    arg("--version", action="version", version="cortex 0.1.0"),
    arg("-C", "--cwd", complete="dir", help="work as if started in this directory"),
)
"""The options before the sub-command."""


def unknown_command(name: str) -> str:
    """The one line for a command that does not exist: the closest listed ones, else every listed one (never a
    hidden entry point)."""
    import difflib

    listed = [c.name for c in COMMANDS if not c.why_hidden]
    close = difflib.get_close_matches(name, listed, n=3, cutoff=0.6)
    if close:
        return f"unknown command {name!r}; did you mean {' or '.join(close)}? (`cortex --help` lists every command)"
    return f"unknown command {name!r}; choose from {', '.join(listed)}"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser from `COMMANDS`; with `only`, just that sub-command (hooks start faster without the rest)."""
    parser = _Parser(
        prog="cortex",
        description="Trust, freshness and economy for coding-agent memory.",
        usage="cortex [-h] [--version] [-C CWD] [COMMAND ...]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for a in GLOBAL_ARGS:
        parser.add_argument(*a.flags, **a.kw)
    parser.set_defaults(func=cmd_tui, json=False, reads=False)
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
        if command is not None and command not in COMMAND_BY_NAME:
            raise UsageError(unknown_command(command))
        parser = build_parser(command)
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
        emit_json({"error": code, "message": line, **extra})
    return exit_code


if __name__ == "__main__":
    raise SystemExit(main())
