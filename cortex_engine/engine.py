"""Engine: the one API that the CLI, the MCP server, the TUI and the hooks call."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cortex_engine.base import settings
from cortex_engine.base.clock import Clock
from cortex_engine.base.lazy import LazyModule
from cortex_engine.capture import digests, engagement, sessions
from cortex_engine.capture import flush as capture
from cortex_engine.engine_core import EngineCore
from cortex_engine.memory import notes as notes_mod
from cortex_engine.memory.notes import NoteWrite, Resolution
from cortex_engine.query import surfaces
from cortex_engine.query.limits import MAX_BUDGET, MIN_BUDGET, check_budget, check_path
from cortex_engine.query.surfaces import Surface
from cortex_engine.scope.freshness import Validator, refresh_app_graph
from cortex_engine.scope.storeinfo import StoreInfo, describe_store
from cortex_engine.store import queries as store_queries
from cortex_engine.store import reports as store_reports

if TYPE_CHECKING:
    from cortex_engine.capture.gc import GcReport
    from cortex_engine.query.undo import Pending as UndoPending
    from cortex_engine.query.undo import Undo

# Imported on first use: SessionStart, reflexes and flushes never pay for what they do not call.
if TYPE_CHECKING:  # the real modules, so that mypy checks every call through a lazy handle
    from cortex_engine.capture import agents, direct, ledger, reflex, searchledger
    from cortex_engine.memory import arrivals, corrections, merges, sharing, transfer
    from cortex_engine.memory import inbox as review
    from cortex_engine.query import asks, inspection, listing, reports
else:
    agents = LazyModule("capture.agents")
    corrections = LazyModule("memory.corrections")
    direct = LazyModule("capture.direct")
    asks = LazyModule("query.asks")
    inspection = LazyModule("query.inspection")
    listing = LazyModule("query.listing")
    reports = LazyModule("query.reports")
    merges = LazyModule("memory.merges")
    arrivals = LazyModule("memory.arrivals")
    review = LazyModule("memory.inbox")  # not `inbox`: that is the Engine method listing it
    sharing = LazyModule("memory.sharing")
    ledger = LazyModule("capture.ledger")
    searchledger = LazyModule("capture.searchledger")
    reflex = LazyModule("capture.reflex")
    transfer = LazyModule("memory.transfer")

__all__ = [
    "MAX_BUDGET",
    "MIN_BUDGET",
    "Engine",
    "StoreInfo",
    "back_off_capture",
    "check_budget",
    "check_path",
    "describe_store",
    "engaged_worktree",
    "open_engine",
    "semantic_installed",
]
"""The facade's names; the bounds, `StoreInfo` and `describe_store` are defined in their stages (adapters read
them here)."""


class Engine(EngineCore):
    """The Cortex engine over one store, seen from one working directory's scope."""

    def brief_for_subagent(self, description: str, agent_type: str, prompt_prefix: str, child_session: str) -> str:
        """The SubagentStart brief's text: ≤150 tokens; "" when nothing matches or all of it is already pasted."""
        self.refresh()
        text = asks.subagent_brief(self._context(), description, agent_type, prompt_prefix)
        self.book_text("subagent_brief", text, child_session)
        return text

    # -- notes ----------------------------------------------------------------------------------

    def note(
        self, kind: str, text: str, subject: str | None = None, alternatives: list[str] | None = None
    ) -> NoteWrite:
        """Record a note; reports any active decision on the subject it contradicts.

        Raises:
            InvalidInput: unknown kind, empty text, missing subject (nothing is written).
        """
        notes_mod.validate_note(kind, text, subject, alternatives)
        refresh_app_graph(self.conn, self.scope, self.now())
        session_id = self.ensure_session()
        return notes_mod.write_note(self.conn, self.scope, session_id, kind, text, subject, alternatives, self.now())

    def resolve(
        self,
        note_id: str | None = None,
        *,
        subject: str | None = None,
        status: str = "resolved",
        replacement: str | None = None,
        expected_sides: Sequence[str] | None = None,
    ) -> Resolution:
        """Resolve or supersede a note by id, or by subject in this scope, optionally with a replacement.

        Args:
            expected_sides: the contest's note ids as the caller saw them (a dialog left open); when the open
                contest is no longer exactly these sides, nothing is written.

        Raises:
            InvalidInput, NotFound, Refused: see `notes.resolve_note` (Refused `contest_changed` for a stale contest).
        """
        session = self.current_session()
        return notes_mod.resolve_note(
            self.conn,
            self.scope,
            session["id"] if session is not None else None,
            self.now(),
            note_id=note_id,
            subject=subject,
            status=status,
            replacement=replacement,
            expected_sides=expected_sides,
        )

    def undo(self, *, expected: int | None = None) -> Undo:
        """Undo the newest operator action (resolve, delete, edit, path rewrite) of this scope; audited. With
        `expected`, only when that is still the action `undo_pending` showed.

        Raises:
            NotFound: nothing to undo. Refused: what it changed has changed since (nothing is written).
        """
        from cortex_engine.query.undo import undo_last

        return undo_last(self.conn, self.scope_keys, self.scope.type, self.now(), expected=expected)

    def undo_pending(self) -> UndoPending:
        """The action `undo` would take back now, and the newer ones it would pass over (reads only).

        Raises:
            NotFound: nothing to undo. Refused: no action left can be undone.
        """
        from cortex_engine.query.undo import pending

        return pending(self.conn, self.scope_keys, self.scope.type)

    # -- surfaces -------------------------------------------------------------------------------

    def recall(
        self,
        topic: str,
        budget: int | None = None,
        detail: str | None = None,
        *,
        book: bool = True,
        scope: str | None = None,
        limit: int | None = None,
        adapter: str = "mcp",
    ) -> Surface:
        """Evidence for a topic within the recall budget (default 600).

        Args:
            book: False for an operator's look (the TUI): nothing is booked, reinforced or marked consulted.
            scope: read another scope instead (a branch name, deleted or not, or a full scope key); its lines
                are led by the scope they come from.
            limit: show at most this many ranked items (1..50); by default as many as fit the budget, at most
                50 (`surfaces.recall` states the rule).
            adapter: the caller's surface (`mcp` or `cli`): a hint names the next step in its words.

        Raises:
            NotFound: `scope` names nothing in the store.
            InvalidInput: a budget outside 20..20000 or a limit outside 1..50.
        """
        budget = check_budget(budget, "recall")
        if limit is not None and not 1 <= limit <= surfaces.RECALL_MAX_LIMIT:
            from cortex_engine.base.errors import InvalidInput

            raise InvalidInput(f"limit must be between 1 and {surfaces.RECALL_MAX_LIMIT} items", code="bad_limit")
        self.refresh()
        if scope is not None:
            surface = asks.recall_elsewhere(
                self._context(dense=True), self.scope, scope, topic, budget, detail, limit, adapter
            )
        else:
            surface = surfaces.recall(self._context(dense=True), topic, budget, detail, limit, adapter)
        if not book:
            return surface
        self.mark_consulted()
        return self.book(surface, reinforce=True)

    def brief(
        self, topic: str, for_agent: str | None = None, budget: int | None = None, *, book: bool = True
    ) -> Surface:
        """A smaller topical brief within the brief budget (default 450); `book` as for recall."""
        budget = check_budget(budget, "brief")
        self.refresh()
        surface = surfaces.brief(self._context(dense=True), topic, for_agent, budget)
        if not book:
            return surface
        self.mark_consulted()
        return self.book(surface, reinforce=True)

    def state(self, budget: int | None = None, *, book: bool = True) -> Surface:
        """The working state within the state budget (default 800); `book` as for recall."""
        budget = check_budget(budget, "state")
        self.refresh()
        pending = arrivals.pending_line(arrivals.pending_count(self.conn, self.scope_keys))
        surface = surfaces.state(self._context(), budget, [pending[2:]] if pending else None)
        if not book:
            return surface
        self.mark_consulted()
        return self.book(surface)

    def session_brief(self, budget: int | None = None, *, book: bool = True) -> Surface:
        """The SessionStart brief (default 150 tokens): empty on a cold start."""
        budget = check_budget(budget, "session_brief")
        self.refresh()
        files = ledger.known_unchanged(self.conn, self.scope)
        pending = arrivals.pending_line(arrivals.pending_count(self.conn, self.scope_keys))
        resume = reports.resume_line(self.conn, self.scope.key, self.clock())
        surface = surfaces.session_brief(self._context(), budget, ledger_files=files, resume=resume, pending=pending)
        return self.book(surface) if book else surface

    def header(self, budget: int | None = None) -> Surface:
        """The full branch-aware header (`inject-header` without --quiet)."""
        budget = check_budget(budget, "header")
        self.refresh()
        count = store_queries.primary_session_count(self.conn, self.scope.key)
        return self.book(surfaces.header(self._context(), count, budget))

    def preview_session_brief(self) -> Surface:
        """The session brief exactly as injected, without booking it (for the operator's view)."""
        return self.session_brief(book=False)

    # -- capture --------------------------------------------------------------------------------

    def flush_spool(self, *, turn_end: bool = False) -> capture.FlushResult:
        """Replay this worktree's spool (and any orphaned claims) into the store.

        Args:
            turn_end: the Stop hook's flush, which sees a whole turn and so may certify reads for substitution.

        Raises:
            RuntimeUntrusted: the runtime folder is a link, someone else's, open to others, or tracked by git.
        """
        folder = capture.find_runtime(self.cwd)
        done = (
            capture.FlushResult()
            if folder is None
            else capture.flush_spool(self.conn, folder, self.clock(), turn_end=turn_end)
        )
        self.check_merges()
        return done

    # -- the hooks that need the store (the hook adapter, `hookentry`, puts each answer on the wire) ------

    def host_session(self, host: str) -> str:
        """The primary session for the host's session id (`""`: the current one), created when there is none."""
        return sessions.host_primary(self.conn, self.scope, host, self.now())

    def consult_hint(self, prompt: str, session: str | None = None) -> str:
        """The consult hint for a prompt ("" when it is not due); `session` defaults to the current one."""
        return reflex.consult_hint(self.conn, self.scope.key, session or self.ensure_session(), prompt, self.now())

    def whisper(self, event: str, anchor: str, session: str | None = None) -> str:
        """The reflex whisper for the file or command at hand ("" when not confident); an absolute path inside
        the worktree is read as the worktree-relative path memory names."""
        if event == "edit":
            anchor = digests.relative_path(anchor, self.scope.worktree)
        return reflex.whisper(self.conn, session or self.ensure_session(), event, anchor, self._fresh_context)

    def dispatch_pre(self, payload: dict[str, object]) -> None:
        """PreToolUse of an Agent call: record the dispatch, so the subagent it starts can be briefed."""
        agents.dispatch_pre(self, payload)

    def subagent_start(self, payload: dict[str, object]) -> str:
        """SubagentStart: the child's session, and its brief's text ("" for none)."""
        return agents.subagent_start(self, payload)

    def subagent_stop(self, payload: dict[str, object]) -> None:
        """SubagentStop: flush what the subagent did, then keep its conclusion."""
        self.flush_spool()
        agents.subagent_stop(self, payload)

    def guard_memory(self, payload: dict[str, object]) -> str:
        """PreToolUse in a subagent: the reason to deny a call that would retire earlier work ("" allows it)."""
        return agents.guard(self, payload)

    def end_of_turn(self, payload: dict[str, object]) -> str:
        """Stop: flush the turn, replay failures only the transcript reports, and the reason to offer candidate
        notes ("" lets the turn end; also when `CORTEX_STOP_NUDGE` is off)."""
        self.flush_spool(turn_end=True)
        transcript = payload.get("transcript_path")
        if isinstance(transcript, str) and transcript:
            self.replay_transcript_failures(transcript, payload)
        if not settings.stop_nudge():
            return ""
        host = found if isinstance(found := payload.get("session_id"), str) else ""
        return agents.end_of_turn_nudge(self, self.host_session(host))

    def gc(self, *, apply: bool = False, tick: Callable[[int], None] | None = None) -> GcReport:
        """Retention: find (with `apply`, delete) what the retention windows allow; see `capture/gc.py`."""
        from cortex_engine.capture.gc import run_gc

        return run_gc(self.conn, self.clock(), self.cwd, apply=apply, tick=tick)

    # -- memory follows git ----------------------------------------------------------------------

    def check_merges(self, *, force: bool = False) -> merges.MergeCheck:
        """Bring merged branches' notes into this branch's scope; a no-op unless HEAD moved since the last check."""
        return merges.check(self.conn, self.scope, self.now(), force=force)

    def promote(self, branch: str, *, dry_run: bool = False) -> list[merges.Promotion]:
        """Promote a branch's active notes into this branch's scope by hand (a squash merge git cannot see).

        Raises:
            InvalidInput: not on a branch, or the branch named is this one.
            NotFound: the store holds no memory of that branch.
        """
        return merges.promote(self.conn, self.scope, branch, self.now(), dry_run=dry_run)

    def publish(self, ids: list[str]) -> list[str]:
        """Write decisions as MADR files in the repository's decisions folder; returns the paths, for the user to
        commit.

        Raises:
            NotFound: an id names no note.
            InvalidInput: a note is not a decision, or the folder is misconfigured or a symlink.
        """
        return sharing.publish(self.conn, self.scope, ids, self.now())

    def sync_shared(self, *, force: bool = False) -> sharing.SyncResult:
        """Read the decisions folder at HEAD into this branch's scope as `(shared)` decisions (when HEAD moved).

        Raises:
            InvalidInput: the configured decisions folder is not a path inside the repository.
        """
        return sharing.sync(self.conn, self.scope, self.now(), review=self.review_policy(), force=force)

    def branches(self) -> list[merges.BranchScope]:
        """Every scope of the store: notes, open contests, last activity, merged into, exists in git."""
        return merges.list_scopes(self.conn, self.scope)

    def replay_transcript_failures(self, transcript_path: str, payload: dict[str, object]) -> int:
        """Record failed Bash calls the host reported only in its transcript (no PostToolUseFailure); idempotent."""
        return direct.replay_transcript_failures(self.conn, self.cwd, transcript_path, payload, self.clock())

    def log_event(
        self,
        kind: str,
        *,
        file: str | None = None,
        command: str | None = None,
        exit_code: int | None = None,
        stdout: str | None = None,
        stderr: str | None = None,
        description: str | None = None,
    ) -> bool:
        """Capture one event directly (`cortex log …`), through the same replay the spool uses.

        Raises:
            InvalidInput: an unknown kind, or a kind without what it needs (a file, a command, a description).
        """
        return direct.log_event(
            self.conn,
            self.scope,
            self.cwd,
            self.clock(),
            kind,
            file=file,
            command=command,
            exit_code=exit_code,
            stdout=stdout,
            stderr=stderr,
            description=description,
        )

    def substitution(self, action: str) -> str:
        """Turn verified read substitution on or off for this worktree, or report it: on | off | status.

        Raises:
            InvalidInput: another action.
        """
        return engagement.substitution(self.scope.worktree, action)

    def start_session(self, host_session_id: str | None = None, source: str | None = None) -> str:
        """SessionStart: flush leftovers, read shared decisions, end this scope's primary, start a fresh one, engage
        capture.

        `source` is Claude Code's (`startup`, `resume`, `clear`, `compact`): a resumed or compacted host session
        carries on the Cortex session it had (`sessions.begin`).

        Raises:
            RuntimeUntrusted: the worktree's runtime folder came with the repository (or is a link, someone else's):
                nothing is flushed, started or engaged.
        """
        engagement.reclaim_or_refuse(self.scope.worktree)
        from cortex_engine.capture import gc

        gc.tidy_at_start(self.conn)  # first, so this start's own writes reuse the pages the merge frees
        self.flush_spool()
        from cortex_engine.base.errors import InvalidInput

        try:
            self.sync_shared()
        except InvalidInput as exc:  # a bad decisions-folder setting must not cost the session its start
            import logging  # here, not at import: one-shot commands never pay for it

            logging.getLogger(__name__).warning("shared decisions not read: %s", exc.message)
        session_id = sessions.begin(self.conn, self.scope, self.now(), host_session_id, source)
        engagement.fresh_context(self.conn, self.scope.worktree)
        gc.auto(self.conn, self.clock(), self.cwd)  # retention at most once a day; CORTEX_GC_AUTO=0 turns it off
        return session_id

    def engage(self) -> None:
        """Re-enable capture for this worktree."""
        engagement.engage(self.scope.worktree)

    def disengage(self) -> bool:
        """Disable capture for this worktree; returns whether it was engaged."""
        return engagement.disengage(self.scope.worktree)

    def read_ledger(self, paths: list[str]) -> list[ledger.LedgerVerdict]:
        """For each path: unread, unchanged-since, changed-since or edited-by-you-since (by re-hashing).

        Raises:
            InvalidInput: a path holds a NUL character.
        """
        for path in paths:
            check_path(path)
        session_id = self._session_id()
        return [ledger.judge(self.conn, self.scope, session_id, p, self.cwd) for p in paths]

    def search_ledger(self, queries: list[dict[str, object]]) -> list[searchledger.SearchVerdict]:
        """For each search (at most 16): no-matches-at when it provably still finds nothing, else miss or unknown.

        Raises:
            InvalidInput: a query's path holds a NUL character.
        """
        queries = queries[: searchledger.MAX_QUERIES]
        for query in queries:
            if isinstance(path := query.get("path"), str):
                check_path(path)
        return [searchledger.check(self.conn, self.scope, q) for q in queries]

    def stats(self) -> dict[str, object]:
        """Injected, saved (evidence only), net and ratio for the session and the scope, plus retrieval health."""
        from cortex_engine.query.economy import stats

        return stats(self.conn, self.scope, str(self.identity.db_path))

    def suggest_notes(self, session_id: str | None = None) -> dict[str, object]:
        """Notes worth saving from a session tree (default: the current one); never writes.

        Raises:
            NotFound: `session_id` names no session of this scope.
        """
        if session_id is not None and not self.activity(1, session_id=session_id):
            from cortex_engine.base.errors import NotFound

            raise NotFound(f'no session "{session_id[:80]}" in this scope', code="unknown_session", id=session_id)
        session = session_id or self._session_id()
        if session is None:
            return {"session_id": None, "suggestions": []}
        tree = sessions.tree(self.conn, session)
        return {"session_id": session, "suggestions": [s.to_dict() for s in agents.suggestions_for(self, tree)]}

    def summarize(self, description: str | None = None) -> str:
        """Write the current session's summary now (a checkpoint); returns its text.

        Raises:
            InvalidInput: a description over `sessions.SUMMARY_DESCRIPTION_CHARS` characters (nothing is written).
        """
        sessions.check_description(description)
        if capture.runtime_problem(self.scope.worktree) is None:
            self.flush_spool()  # an untrusted runtime folder is never read: the summary covers what is stored
        return sessions.summarize(self.conn, self.scope, self.now(), description)

    def consolidate(self) -> int:
        """Summarize every ended session of this scope that has no summary yet."""
        return sessions.consolidate(self.conn, self.scope, self.now())

    def mark_consulted(self) -> None:
        """The agent asked memory something: the consult hint is no longer needed this session."""
        session_id = self._session_id()
        if session_id is not None and session_id != self._consulted:
            from cortex_engine.capture.reflex import flag, set_flag

            if not flag(self.conn, session_id, "consulted"):
                set_flag(self.conn, session_id, "consulted")
            self._consulted = session_id

    def activity(self, limit: int = 20, *, session_id: str | None = None) -> list[dict[str, object]]:
        """Sessions and subagent sessions of this scope, newest first, with what each did and injected (its own tokens).

        Args:
            session_id: only this session (an empty list when it is not one of this scope's).
        """
        return reports.activity(self.conn, self.scope.key, limit, session_id)

    def data_version(self) -> int:
        """SQLite's data_version: changes when another connection commits (a cheap change probe)."""
        return store_reports.data_version(self.conn)

    def memory_mark(self) -> tuple[object, ...]:
        """A cheap fingerprint of what memory views show: equal marks mean no memory row changed (what it covers,
        and what it leaves out: `query.reports.memory_mark`). Reads only."""
        return reports.memory_mark(self.conn, self.scope)

    # -- inspection and correction -------------------------------------------------------------

    def list_memory(
        self,
        *,
        scopes: list[str] | None = None,
        kinds: list[str] | None = None,
        states: list[str] | None = None,
        text: str | None = None,
        labels: list[str] | None = None,
        sort: str = "created",
        reverse: bool = False,
        limit: int | None = None,
        offset: int = 0,
        start: listing.PageKey | None = None,
        before: listing.PageKey | None = None,
        oldest: bool = False,
    ) -> listing.Page:
        """Every memory item, newest first, with its trust labels and one freshness verdict per referenced path.

        No default filters. Reads only. A page is found by `offset`, or by key (`start`, `before`, `oldest`: see
        `listing.list_memory`), which costs the same on the last page as on the first.

        Args:
            text: only items whose subject or text contains this (case-insensitive substring).
            labels: only items carrying any of `listing.LABEL_FILTERS` (contested, stale, moved, drifted, superseded),
                judged as the listed labels are (stale, moved and drifted against the checkout as it is now).
            sort: one of `listing.SORTS`; `reverse` flips its natural direction.

        Raises:
            InvalidInput: an unknown kind (full or short name), state, label or sort, a negative offset, or two ways
                of paging.
        """
        refresh_app_graph(self.conn, self.scope, self.now())  # labels judged against the checkout as it is now
        validator = Validator(self.conn, self.scope)
        return listing.label(
            listing.list_memory(
                self.conn,
                scopes=scopes,
                kinds=kinds,
                states=states,
                text=text,
                labels=labels,
                validator=validator,
                sort=sort,
                reverse=reverse,
                limit=limit,
                offset=offset,
                start=start,
                before=before,
                oldest=oldest,
            ),
            validator,
        )

    def memory_key(
        self,
        item_id: str,
        *,
        scopes: list[str] | None = None,
        kinds: list[str] | None = None,
        states: list[str] | None = None,
    ) -> listing.PageKey | None:
        """An item's place in `list_memory`'s order under these filters (None when they do not list it). Reads only."""
        return listing.memory_key(self.conn, item_id, scopes=scopes, kinds=kinds, states=states)

    def inspect_memory(self, item_id: str) -> inspection.Inspection:
        """Everything about one item (trust, conflict, references, access, corrections). Reads only."""
        refresh_app_graph(self.conn, self.scope, self.now())
        return inspection.inspect_memory(self.conn, self.scope, item_id)

    def edit_memory(self, item_id: str, text: str) -> corrections.Edit:
        """Replace a memory's text through the audited edit; spoofed trailers are refused."""
        return corrections.edit_memory(self.conn, item_id, text, self.now())

    def delete_memory(self, item_id: str, *, yes: bool = False) -> corrections.Deletion:
        """Preview a delete, or with `yes` delete it and everything derived from it (audited).

        Derived: the contest it was part of ends, the session focus it set falls back, and this scope's branch
        snapshot (focus, intents, blockers) is rebuilt without it, so brief, header and stats stop naming it.
        """
        result = corrections.delete_memory(self.conn, item_id, self.now(), yes=yes)
        if result.deleted and result.scope_key == self.scope.key and result.kind != "branch_snapshot":
            sessions.resnapshot(self.conn, self.scope, self.now())
        return result

    def reanchor(self, item_id: str) -> corrections.Reanchor:
        """Re-anchor a drifted memory to the code as it is now (after the caller checked it still holds); audited.

        Raises:
            NotFound: no such item. Refused: nothing drifted.
        """
        refresh_app_graph(self.conn, self.scope, self.now())
        return corrections.reanchor_memory(self.conn, self.scope, item_id, self.now())

    def locate_reference(self, item_id: str) -> inspection.Location:
        """The file and line to open to check a memory (its drifted span, a renamed file's new place, …); changes no
        memory.

        Raises:
            NotFound: no such item, or none of its files is in the checkout.
        """
        refresh_app_graph(self.conn, self.scope, self.now())
        return inspection.locate_reference(self.conn, self.scope, item_id)

    def rewrite_moved(self, item_id: str, *, expected_text: str | None = None) -> corrections.MovedRewrite:
        """Rewrite a memory's renamed file references (`[moved: a → b]`) to their new paths in its text; audited.

        Args:
            item_id: the memory item (or note) id.
            expected_text: the item's text as the caller showed it; if it changed since, nothing is written.

        Raises:
            NotFound: no such item. Refused: it changed since it was shown, or has no moved reference in its text.
        """
        refresh_app_graph(self.conn, self.scope, self.now())
        return corrections.rewrite_moved_references(
            self.conn, self.scope, item_id, self.now(), expected_text=expected_text
        )

    def validate_memory(
        self, topic: str | None = None, *, persist: bool = True, all_scopes: bool = False
    ) -> dict[str, object]:
        """Audit memories' references against the checkout (deletes nothing); persists each verdict unless told not to.

        `all_scopes` checks every scope of the store, each against its own checkout state (its worktree, else its
        branch tip from git objects), and lists the scopes it could not check.
        """
        self.refresh()
        return reports.validate(
            self._context(), self.scope, self.project_key, topic, persist=persist, all_scopes=all_scopes, now=self.now()
        )

    def contests(self) -> list[dict[str, object]]:
        """Every open contest in this scope: the active contested notes of a subject, seated together."""
        return reports.contests(self.conn, self.scope.key)

    # -- export / import ------------------------------------------------------------------------

    def export_notes(self, scopes: list[str] | None = None) -> list[transfer.ExportedNote]:
        """Every note (of `scopes`; `here` names this worktree's scopes) as `transfer.ExportedNote`s.

        Raises:
            InvalidInput: a scope key no note carries.
        """
        keys: list[str] = []
        for key in scopes or []:
            for each in self.scope_keys if key == "here" else [key]:
                if each not in keys:
                    keys.append(each)
        return transfer.export_notes(self.conn, keys or None, implied=tuple(self.scope_keys))

    def import_file(
        self, path: str, *, scope: str | None = None, progress: Callable[[int], Callable[[int], None]] | None = None
    ) -> transfer.ImportResult:
        """Import a Cortex JSON Lines export, or a CLAUDE.md / MEMORY.md as insights of the project layer.

        Notes an export holds under another repository's scopes (another clone, another machine) land in this
        worktree's scope, and another project layer in this one (`transfer.map_foreign_scopes`).

        Args:
            scope: put every note under this scope key instead (`here`: this worktree's own scope).
            progress: called with the number of notes read; returns the `tick(n)` to call per note.

        Raises:
            InvalidInput: the file is unreadable, not importable, or holds a bad line (nothing is imported).
        """
        fmt, incoming, skipped = transfer.read_file(path, default_scope=self.project_key, now=self.now())
        written = {n.id: n.scope for n in incoming}
        if scope is not None:
            incoming = transfer.rescope(incoming, self.scope.key if scope == "here" else scope)
        else:
            incoming, _ = transfer.map_foreign_scopes(incoming, self.scope, self.project_key)
        result = transfer.ImportResult(path, fmt, len(incoming), skipped=skipped)
        if arrivals.needs_review("import", self.review_policy()):  # what a file claims waits for a person
            transfer.hold_for_review(self.conn, result, incoming, self.now())
        else:
            tick = progress(len(incoming)) if progress is not None else None
            transfer.import_notes(self.conn, result, incoming, tick)
        # What the report says was moved or lands unread is said of the notes this import wrote (or holds), never of
        # those already in the store, which it left as they were.
        taken = set(result.added) | set(result.pending)
        if scope is None:
            result.remapped = sum(1 for n in incoming if n.id in taken and written[n.id] != n.scope)
        result.unread_scopes = sorted({n.scope for n in incoming if n.id in taken} - set(self.scope_keys))
        return result

    # -- the inbox: arrivals from outside, for a person to accept or reject ----------------------

    def inbox(self, states: tuple[str, ...] = ("pending",)) -> list[arrivals.Arrival]:
        """The arrivals of every scope of this store in these states (pending by default), oldest first."""
        return arrivals.listing(self.conn, None, states)

    def pending_arrivals(self) -> int:
        """How many arrivals of this worktree's scopes wait for review."""
        return arrivals.pending_count(self.conn, self.scope_keys)

    def accept_arrivals(self, ids: list[str], *, every: bool = False) -> list[review.Verdict]:
        """A person accepts arrivals: each becomes a note under the usual rules. Only the CLI and the TUI call this.

        Raises:
            NotFound: an id names no arrival.
            InvalidInput: neither ids nor `every`, or an ambiguous prefix.
            Refused: an arrival is no longer pending, or is a decision file of another branch.
        """
        return review.accept(self.conn, self.scope, ids, self.now(), every=every)

    def arrival_file(self, arrival_id: str) -> str:
        """The absolute path of the file an arrival came from (a decision file in this worktree, an imported file).

        Raises:
            NotFound: no arrival carries that id.
        """
        row = arrivals.find(self.conn, arrival_id)
        return row["path"] if row["channel"] == "import" else os.path.join(self.scope.worktree, row["path"])

    def arrival_commit(self, arrival_id: str) -> str:
        """Git's account of the commit a decision-file arrival came from (author text, to be shown as such).

        Raises:
            NotFound: no arrival carries that id.
            InvalidInput: it names no commit, or git cannot show it.
        """
        return sharing.commit_text(self.scope.worktree, arrivals.find(self.conn, arrival_id)["commit_oid"])

    def preview_verdict(self, ids: list[str], *, every: bool = False, accepting: bool = True) -> list[arrivals.Arrival]:
        """The arrivals accepting (or rejecting) these ids or `every` would take, for a person to confirm; reads only.

        Raises:
            As `accept_arrivals` / `reject_arrivals`, before anything is written.
        """
        return review.preview(self.conn, self.scope, ids, every=every, accepting=accepting)

    def reject_arrivals(self, ids: list[str], *, every: bool = False) -> list[review.Verdict]:
        """A person rejects arrivals: they never become notes (the same decision file is not offered again).

        Raises:
            NotFound: an id names no arrival.
            InvalidInput: neither ids nor `every`, or an ambiguous prefix.
            Refused: an arrival is no longer pending.
        """
        return review.reject(self.conn, self.scope, ids, self.now(), every=every)

    # -- store ----------------------------------------------------------------------------------

    def store_info(self) -> StoreInfo:
        """Where this directory's store lives and how its identity was derived."""
        return describe_store(self.cwd, self.identity.store_dir.parent.parent)

    def status(self) -> dict[str, object]:
        """Counts that say what this store holds for this scope, and whether recall also ranks by meaning."""
        mode, problem = settings.review_policy(self.home)
        return {
            **engagement.status(self.conn, self.scope, self.identity),
            "review_policy": mode,
            "review_policy_problem": problem,
        }


def engaged_worktree(cwd: str) -> str | None:
    """The worktree whose capture is engaged for `cwd` (its runtime folder trusted and keyed to this machine)."""
    folder = capture.find_runtime(cwd)
    return str(folder.parent) if folder is not None and capture.is_engaged(folder.parent) else None


def project_wires_cortex(project_dir: str | None) -> bool:
    """Whether the project at `project_dir` wires Cortex itself, so user-level and plugin hooks stand down there
    (`capture.standdown`, the one rule)."""
    from cortex_engine.capture.standdown import project_capture

    return project_capture(project_dir) is not None


def back_off_capture(cwd: str, busy: bool) -> None:
    """The store refused a flush: make this worktree's hooks wait before the next one (30 s when only busy)."""
    import time

    folder = capture.find_runtime(cwd)
    if folder is not None:
        capture.back_off(folder, time.time(), 30 if busy else None)


def semantic_installed() -> bool:
    """Whether the semantic extra is installed and not turned off (found, not imported: the model is not loaded)."""
    from cortex_engine.semantic import extra

    return extra.availability().installed


def open_engine(
    cwd: str | os.PathLike[str] = ".",
    *,
    home: Path | None = None,
    clock: Clock | None = None,
    create: bool = True,
    empty_if_missing: bool = False,
) -> Engine:
    """Open the engine for a working directory (see `Engine`; `create=False` opens only a store that exists, and
    with `empty_if_missing` reads a missing one as empty, creating nothing)."""
    return Engine(cwd, home=home, clock=clock, create=create, empty_if_missing=empty_if_missing)
