"""Subagents: dispatch capture, the subagent brief, conclusions kept and offered once, and the memory guard."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from cortex_engine.base import settings
from cortex_engine.base.clock import iso
from cortex_engine.memory.items import collapse
from cortex_engine.memory.projection import sync_episode_item
from cortex_engine.query.render import defuse, strip_control
from cortex_engine.store import queries
from cortex_engine.store.database import transaction
from cortex_engine.store.redact import clean_text, redact

if TYPE_CHECKING:
    from cortex_engine.scope.identity import Scope


class Host(Protocol):
    """What the subagent hooks need, and all they may touch: the store and scope, the clock, the booking of what a
    hook injects, and the subagent brief (a surface, rendered and booked by the facade). `Engine` is one."""

    @property
    def conn(self) -> sqlite3.Connection: ...

    @property
    def scope(self) -> Scope: ...

    def clock(self) -> datetime: ...

    def now(self) -> str: ...

    def book_text(self, channel: str, text: str, session_id: str | None = None) -> None: ...

    def brief_for_subagent(self, description: str, agent_type: str, prompt_prefix: str, child_session: str) -> str: ...


HORIZON_SECONDS = 300
CONCLUSION_CHARS = 4000
PREFIX_CHARS = 8192
NUDGE_ITEMS = 3
NUDGE_CHARS = 140

_DECISION = re.compile(r"\b(decided|decision|we'll use|use|using|chose|chosen|picked|settled on)\b", re.I)
_BLOCKER = re.compile(r"\b(blocked|blocker|blocking|stuck|failed|failure|cannot|can't|unable|missing|error)\b", re.I)
_INTENT = re.compile(r"\b(next|plan|planned|todo|to-do|follow-?up|later|need to|will|going to)\b", re.I)
_ROUTINE = re.compile(r"\b(pass(ed|ing)?|success(ful)?|done|completed|progress|read|looked at|inspected)\b", re.I)
_LEAD = re.compile(r"^(?:decided|decision|next|plan|todo|to-do|follow-up)\s*[:,-]?\s*|^we'll\s+|^will\s+", re.I)
_SUBJECT_AFTER = re.compile(
    r"\b(?:use|using|chose|chosen|picked|settled on|wire|into|for|about|on)\s+([A-Za-z0-9_.-]{2,})", re.I
)
_STOP = frozenset("the a an and or but this that with from into for about then than have has was were are is".split())


def normalize_prompt(text: str) -> str:
    """Whitespace-collapsed, trimmed, lowercased."""
    return collapse(text).lower()


def dispatch_pre(engine: Host, payload: Mapping[str, object]) -> None:
    """PreToolUse on Agent: remember the dispatch description so the matching subagent can be briefed."""
    if not settings.subagent_brief():
        return
    tool_input = found if isinstance(found := payload.get("tool_input"), dict) else {}
    host = payload.get("session_id")
    agent_type = tool_input.get("subagent_type") or "general-purpose"
    description = tool_input.get("description") or ""
    prompt = tool_input.get("prompt") or ""
    if not isinstance(host, str) or not host or not isinstance(description, str) or not description.strip():
        return
    if queries.active_primary(engine.conn, engine.scope.key, host) is None:
        return
    prompt_text = prompt if isinstance(prompt, str) else ""
    with transaction(engine.conn):
        queries.record_dispatch(
            engine.conn,
            engine.scope.key,
            host,
            str(agent_type),
            payload.get("tool_use_id"),
            clean_text(description.strip())[:500],
            hashlib.sha256(prompt_text.encode()).hexdigest()[:16],
            # Cleaned before it is lowercased: provider prefixes and key headers are recognised by their case.
            normalize_prompt(clean_text(prompt_text))[:PREFIX_CHARS],
            engine.now(),
        )
        queries.bump_counter(engine.conn, "subagent_dispatch_count")


def subagent_start(engine: Host, payload: Mapping[str, object]) -> str:
    """SubagentStart: create the child session; brief it when exactly one recorded dispatch matches.

    Returns the brief's text ("" for none)."""
    agent_id = payload.get("agent_id") or payload.get("agentId")
    host = found if isinstance(found := payload.get("session_id"), str) else ""
    if not isinstance(agent_id, str) or not agent_id:
        return ""
    primary = queries.active_primary(engine.conn, engine.scope.key, host)
    if primary is None:
        return ""
    agent_type = payload.get("agent_type") or payload.get("agentType") or "subagent"
    from cortex_engine.capture.sessions import child_session

    now = engine.now()
    with transaction(engine.conn):
        child = child_session(engine.conn, engine.scope, primary, agent_id, str(agent_type), now)
        queries.bump_counter(engine.conn, "subagent_start_count")
    if not settings.subagent_brief():
        return ""
    horizon = iso(engine.clock() - timedelta(seconds=HORIZON_SECONDS))
    pending = queries.pending_dispatches(engine.conn, host, str(agent_type), horizon)
    if len(pending) != 1:
        if len(pending) > 1:
            with transaction(engine.conn):
                queries.bump_counter(engine.conn, "subagent_ambiguous_count")
        return ""
    dispatch = pending[0]
    with transaction(engine.conn):
        claimed = queries.claim_dispatch(engine.conn, dispatch["id"], agent_id, now)
        if claimed:
            queries.bump_counter(engine.conn, "subagent_paired_count")
    if not claimed:
        return ""
    surface = engine.brief_for_subagent(
        dispatch["description"], str(agent_type), dispatch["prompt_prefix"] or "", child
    )
    return surface


def conclusion_text(payload: Mapping[str, object]) -> tuple[str, str]:
    """The subagent's final answer: the payload's last message, else the transcript's last assistant text."""
    message = payload.get("last_assistant_message")
    if isinstance(message, str) and message.strip():
        return message, "message"
    path = payload.get("agent_transcript_path")
    if not isinstance(path, str) or not os.path.isfile(path):
        return "", "none"
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.path.getsize(path) - 256 * 1024))
            tail = handle.read().decode("utf-8", "replace")
    except OSError:
        return "", "none"
    last = ""
    for line in tail.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        msg = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(msg, dict) or msg.get("role", entry.get("type")) != "assistant":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            last = content or last
        elif isinstance(content, list):
            texts = [c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"]
            if any(t.strip() for t in texts):
                last = "\n".join(texts)
    return last, "transcript" if last else "none"


def subagent_stop(engine: Host, payload: Mapping[str, object]) -> None:
    """SubagentStop: keep the subagent's conclusion (once, trimmed at 4000 characters and said so)."""
    if payload.get("stop_hook_active") is True:
        return
    agent_id = payload.get("agent_id") or payload.get("agentId")
    if not isinstance(agent_id, str) or not agent_id:
        return
    child = queries.latest_agent_session(engine.conn, engine.scope.key, agent_id)
    if child is None:
        return
    text, source = conclusion_text(payload)
    text = strip_control(redact(text.replace("\r\n", "\n"))).strip()
    if not text:
        return
    truncated = len(text) > CONCLUSION_CHARS
    if truncated:
        text = text[: CONCLUSION_CHARS - 1].rstrip() + "…"
    episode_id = f"subagent_conclusion:{child['id']}"
    meta = {"agent_id": agent_id, "source": source, "truncated": truncated, "surfaced_at": None}
    with transaction(engine.conn):
        queries.insert_episode_once(
            engine.conn,
            episode_id,
            child["id"],
            child["scope_key"],
            "subagent_conclusion",
            text + ("\n[trimmed at 4000 characters]" if truncated else ""),
            child["agent_type"],
            json.dumps(meta),
            engine.now(),
        )
        sync_episode_item(engine.conn, episode_id)
        queries.end_session(engine.conn, child["id"], engine.now())


@dataclass(frozen=True)
class Suggestion:
    """A note worth saving, offered (never written)."""

    kind: str
    subject: str | None
    content: str
    confidence: float
    evidence: tuple[str, ...]
    source_id: str | None = None

    def to_dict(self) -> dict[str, object]:
        """JSON shape."""
        return {
            "kind": self.kind,
            "subject": self.subject,
            "content": self.content,
            "confidence": self.confidence,
            "evidence": list(self.evidence),
        }


def classify(text: str) -> tuple[str, float] | None:
    """decision 0.82 / blocker 0.80 / intent 0.72 from the words a text uses; None when routine."""
    if _DECISION.search(text):
        return "decision", 0.82
    if _BLOCKER.search(text):
        return "blocker", 0.80
    if _INTENT.search(text):
        return "intent", 0.72
    return None


def _subject(text: str) -> str | None:
    match = _SUBJECT_AFTER.search(text)
    if match:
        word: str = match.group(1)  # the pattern's one group always takes part in a match
        return word.lower().strip(".-")
    for word in re.findall(r"[A-Za-z0-9_-]{3,}", text):
        if word.lower() not in _STOP:
            return word.lower()
    return None


def suggestions_for(engine: Host, session_ids: list[str]) -> list[Suggestion]:
    """Candidate notes from these sessions' episodes (conclusions first) and failed commands; never writes."""
    rows = queries.episodes_of_sessions(engine.conn, session_ids)
    found: list[Suggestion] = []
    seen: set[tuple[str, str]] = set()
    for row in rows:
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", defuse(row["summary"])):
            text = collapse(sentence)
            if len(text) < 12:
                continue
            verdict = classify(text)
            if verdict is None:
                continue
            kind, confidence = verdict
            content = _LEAD.sub("", text).strip()
            key = (kind, content.lower())
            if key in seen or confidence < 0.6:
                continue
            seen.add(key)
            evidence = f"episode:{row['kind']}: {text if len(text) <= 180 else text[:177] + '...'}"
            found.append(Suggestion(kind, _subject(content) or kind, content, confidence, (evidence,), row["id"]))
    return found


def end_of_turn_nudge(engine: Host, primary: str) -> str:
    """At turn end: offer notes suggested by subagent conclusions not yet offered; each is offered once.

    Returns the reason to keep the turn going ("" to let it end)."""
    children = queries.child_session_ids(engine.conn, primary)
    if not children:
        return ""
    fresh = queries.subagent_conclusions(engine.conn, children)
    unsurfaced = [r["id"] for r in fresh if not json.loads(r["metadata_json"] or "{}").get("surfaced_at")]
    if not unsurfaced:
        return ""
    picks = [s for s in suggestions_for(engine, children) if s.source_id in unsurfaced][:NUDGE_ITEMS]
    now = engine.now()
    with transaction(engine.conn):
        for episode_id in unsurfaced:
            meta = json.loads(queries.episode_metadata(engine.conn, episode_id) or "{}")
            meta["surfaced_at"] = now
            queries.set_episode_metadata(engine.conn, episode_id, json.dumps(meta))
    if not picks:
        return ""
    lines = ["Cortex found candidate notes from this turn:"]
    for s in picks:
        content = s.content if len(s.content) <= NUDGE_CHARS else s.content[: NUDGE_CHARS - 1] + "…"
        lines.append(f"- {s.kind}: {content}")
    lines.append("Write the load-bearing ones with cortex_note(kind, content); if none apply, reply DONE.")
    reason = "\n".join(lines)
    engine.book_text("stop_nudge", reason, primary)
    return reason


# -- memory guard ---------------------------------------------------------------------------------

_CORTEX_WORD = re.compile(r"(^|/)cortex[^/]*$|\.js$|^-m$")


def _shell_targets(command: str) -> list[tuple[str, str, str | None]]:
    """(verb, id or '', subject or None) for each memory-changing cortex call in a shell command."""
    found: list[tuple[str, str, str | None]] = []
    try:
        words = shlex.split(command)
    except ValueError:
        return found
    expanded: list[str] = []
    for i, word in enumerate(words):
        if word == "-c" and i > 0 and words[i - 1].endswith(("bash", "sh", "zsh")) and i + 1 < len(words):
            try:
                expanded.extend(shlex.split(words[i + 1]))
            except ValueError:
                pass
    words = words + expanded
    for i, word in enumerate(words):
        if i == 0 or not (_CORTEX_WORD.search(words[i - 1]) or words[i - 1] == "cortex_engine.adapters.cli"):
            continue
        rest = words[i + 1 : i + 8]
        if word == "note-resolve" or word == "resolve":
            note_id = _flag(rest, "--id") or (
                rest[0] if word == "resolve" and rest and not rest[0].startswith("-") else ""
            )
            found.append(("retire", note_id, _flag(rest, "--subject") or None))
        elif word in ("edit-memory", "reanchor", "rewrite-moved") and rest:
            found.append(("rewrite", rest[0], None))
        elif word == "delete-memory" and rest and "--yes" in rest:
            found.append(("delete", rest[0], None))
    return found


def _flag(words: list[str], name: str) -> str:
    for i, word in enumerate(words):
        if word == name and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return ""


def guard(engine: Host, payload: Mapping[str, object]) -> str:
    """PreToolUse for a subagent: deny retiring, rewriting or deleting earlier work on this branch.

    Returns the reason for the denial ("" to allow)."""
    agent_id = payload.get("agent_id") or payload.get("agentId")
    if not isinstance(agent_id, str) or not agent_id:
        return ""
    host = found if isinstance(found := payload.get("session_id"), str) else ""
    primary = queries.active_primary(engine.conn, engine.scope.key, host)
    if primary is None:
        return ""
    child = queries.agent_session_under(engine.conn, engine.scope.key, agent_id, primary)
    if child is None:
        return ""
    tree = {primary, *queries.child_session_ids(engine.conn, primary)}
    tool = found if isinstance(found := payload.get("tool_name"), str) else ""
    tool_input = found if isinstance(found := payload.get("tool_input"), dict) else {}
    targets: list[tuple[str, dict[str, object]]] = []
    if tool.endswith("cortex_note"):
        kind, subject = tool_input.get("kind"), tool_input.get("subject")
        if kind in ("decision", "intent") and isinstance(subject, str) and subject.strip():
            for row in queries.uncontested_active_notes(
                engine.conn, engine.scope.key, " ".join(subject.split()).lower(), kind
            ):
                targets.append(("retire", dict(row)))
    elif tool.endswith("cortex_resolve"):
        targets.extend(
            ("retire", n) for n in _named_notes(engine, str(tool_input.get("note_id") or ""), tool_input.get("subject"))
        )
    elif tool.endswith("cortex_reanchor"):  # like `cortex reanchor ID` in Bash: it rewrites what the note claims
        ident = str(tool_input.get("item_id") or "")
        targets.extend(("rewrite", n) for n in _named_notes(engine, ident, None) if ident)
    elif tool in ("Bash", "PowerShell", "shell_command"):
        for verb, ident, subject in _shell_targets(str(tool_input.get("command") or "")):
            targets.extend((verb, n) for n in _named_notes(engine, ident, subject))
    outside = [
        (verb, n) for verb, n in targets if n.get("session_id") not in tree and n.get("scope_key") == engine.scope.key
    ]
    if not outside:
        return ""
    verb = next(v for v in ("delete", "rewrite", "retire") if any(x == v for x, _ in outside))
    count = len(outside)
    lines = [
        f"Cortex refused this: a subagent may not {verb} memory from earlier work on this branch.",
        f"This call would {verb} {'1 memory' if count == 1 else f'{count} memories'} "
        "that this conversation did not write:",
    ]
    for _, note in outside[:3]:
        subject = f"[{note.get('subject')}]" if note.get("subject") else ""
        lines.append(f"  - {note.get('kind')}{subject} ({note.get('id')})")
    if count > 3:
        lines.append(f"  - …and {count - 3} more")
    lines.append(
        "Put the finding in your final message instead — it is recorded automatically, and the parent can act on it."
    )
    reason = "\n".join(lines)
    engine.book_text("memory_guard_deny", reason, child)
    return reason


def _named_notes(engine: Host, ident: str, subject: object) -> list[dict[str, object]]:
    """The notes an id (note or item id) or a subject names in this scope; nothing when unsure."""
    if ident:
        note_id = ident[len("notes:") :] if ident.startswith("notes:") else ident
        row = queries.note_row(engine.conn, note_id)
        if row is None:
            source = queries.item_source(engine.conn, ident)
            if source is not None and source[0] == "notes" and source[1] is not None:
                row = queries.note_row(engine.conn, source[1])
        return [dict(row)] if row is not None else []
    if isinstance(subject, str) and subject.strip():
        row = queries.latest_active_note(engine.conn, engine.scope.key, " ".join(subject.split()).lower())
        return [dict(row)] if row is not None else []
    return []
