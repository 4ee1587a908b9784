"""The surfaces an agent reads: recall, brief, state and the session brief, each within its budget."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Collection, Iterator, Mapping
from datetime import datetime
from typing import Any

from cortex_engine.base.labels import CONTESTED
from cortex_engine.base.records import field, record
from cortex_engine.base.tokens import budget_chars, estimate_tokens
from cortex_engine.base.untrusted import quote_path
from cortex_engine.memory.items import (
    ItemFacts,
    collapse,
    hotness,
    is_superseded,
    note_content,
    note_origin,
    note_status,
    split_trailers,
)
from cortex_engine.query.render import (
    NOTE_LINE_CHARS,
    Entry,
    Rendered,
    age_text,
    alternatives_line,
    assemble_budgeted,
    assemble_sections,
    clip,
    defuse,
    humanize_kind,
    inspect_pointer,
    item_labels,
    label_suffix,
    note_label_suffix,
    pack_degrading,
    render_memory_line,
    shorten,
    subject_tag,
)
from cortex_engine.query.retrieval import (
    DENSE_FLOOR,
    ITEM_COLUMNS,
    Candidate,
    Ranking,
    candidates,
    rerank,
    seat_contested,
    seat_superseded,
    supersession_group,
    term_weights,
    tokenize_topic,
)
from cortex_engine.query.route import STATE_BY_ADAPTER
from cortex_engine.scope.freshness import Validation, Validator
from cortex_engine.store.database import IN_SCOPE, in_scopes
from cortex_engine.store.queries import host_session_of
from cortex_engine.store.redact import clean_text

BUDGETS = {"header": 800, "session_brief": 150, "subagent_brief": 150, "brief": 450, "recall": 600, "state": 800}
RECALL_LIMIT = 8
"""The depth recall's candidate pool is sized for (5 × 8 = the 40 best full-text matches are reranked) and the
first depth it renders; without a `limit` it then goes deeper while the budget has room (see `recall`)."""
RECALL_MAX_LIMIT = 50
"""The deepest list recall shows, and the deepest a caller may ask for (`cortex recall --limit N`,
`cortex_recall(limit)`)."""
BRIEF_LIMIT = 5
BRIEF_KIND_PRIORITY = {"note:decision": 0, "note:intent": 1, "note:blocker": 2, "note:insight": 3}
STATE_WEIGHT = {"pinned": 5.0, "hot": 4.0, "warm": 2.0, "cold": 0.5, "archived": -5.0}
EMPTY_STATE = (
    "Cortex state: no current working memory for this scope.\n"
    "Use cortex_route for the capability map, or cortex_recall(topic) if you are resuming a known area."
)


@record(frozen=True)
class SurfaceItem:
    """One memory a surface rendered, with the labels it carried."""

    id: str
    kind: str
    subject: str | None
    labels: tuple[str, ...]
    references: tuple[dict[str, str | None], ...] = ()
    lines: tuple[str, ...] = ()
    """The lines the surface rendered for it, before the budget cut any (none where it shares a block)."""


@record
class Surface:
    """A rendered surface: exactly the text injected, its token estimate, and what it showed."""

    channel: str
    text: str
    budget: int
    items: list[SurfaceItem] = field(default_factory=list)
    topic: str | None = None
    query: str | None = None
    total_candidates: int = 0
    retrievers: tuple[str, ...] = ()

    @property
    def tokens(self) -> int:
        """The token estimate of the text."""
        return estimate_tokens(self.text)

    def spent(self) -> list[int]:
        """The tokens the text spends on each item, in `items` order: its lines as they stand in the text (a line
        the budget cut counts as cut, one it dropped not at all; each line of the text counts for one item)."""
        shown = self.text.split("\n")
        used: set[int] = set()
        out = []
        for item in self.items:
            found = []
            for wanted in item.lines:
                at = next((n for n, line in enumerate(shown) if n not in used and line == wanted), None)
                if at is None:  # cut to fit: what is left of it before the `…`, then its labels
                    at = next(
                        (
                            n
                            for n, line in enumerate(shown)
                            if n not in used and line.find("…") > 0 and wanted.startswith(line[: line.find("…")])
                        ),
                        None,
                    )
                if at is not None:
                    used.add(at)
                    found.append(shown[at])
            out.append(estimate_tokens("\n".join(found)) if found else 0)
        return out

    def to_dict(self) -> dict[str, object]:
        """The JSON contract: text, tokens, budget, items."""
        return {
            "channel": self.channel,
            "text": self.text,
            "tokens": self.tokens,
            "budget": self.budget,
            "items": [
                {
                    "id": i.id,
                    "kind": i.kind,
                    "subject": i.subject,
                    "labels": list(i.labels),
                    "references": list(i.references),
                    "tokens": tokens,
                }
                for i, tokens in zip(self.items, self.spent(), strict=True)
            ],
            **({"retrievers": list(self.retrievers)} if self.retrievers else {}),
        }


def _surface_item(
    row: sqlite3.Row | Mapping[str, Any], validation: Validation | None, *lines: str | None
) -> SurfaceItem:
    """What a surface showed of one item; `lines` are the lines it rendered for it (their tokens are its spend)."""
    return SurfaceItem(
        row["id"],
        row["kind"],
        row["subject"],
        tuple(item_labels(row["kind"], row["text"], validation)),
        tuple(validation.verdicts) if validation is not None else (),
        tuple(line for part in lines if part for line in part.split("\n")),
    )


@record
class Context:
    """What every surface needs: the connection, scopes, validator, clock and focus."""

    conn: sqlite3.Connection
    scope_key: str
    scope_keys: list[str]
    scope_label: str
    is_project_scope: bool
    validator: Validator
    now: datetime
    focus: str | None = None
    session_id: str | None = None
    dense: DenseSearch | None = None


DenseSearch = Callable[[sqlite3.Connection, list[str], str, int, Collection[int]], list[tuple[int, float]]]
"""The dense retriever a context may carry: (conn, scope keys, topic, k, include) → the k nearest items of those
scopes, (rowid, cosine) best first, then the cosines of the `include` items (the lexical candidates) that are not
among them. It filters by scope before it ranks (`semantic.vectors.dense_hits`)."""


def ranked(ctx: Context, topic: str, limit: int, *, exact: bool = False) -> tuple[str | None, int, list[Candidate]]:
    """Candidates for a topic, reranked, deduplicated and cut to `limit`; `exact` matches the topic as a phrase."""
    query, total, ranking = rank_pool(ctx, topic, limit, exact=exact)
    return query, total, seated(ctx, ranking, limit)


def entered(topic: str) -> str:
    """A topic as it enters retrieval: cleaned like stored text (secrets redacted, invisible characters removed)
    before anything is derived from it. The tokens, the full-text query and the lead line are derived forms the
    store's choke point cannot recognise a secret in (`sk ant api03 …`), so the topic is cleaned first."""
    return clean_text(topic)


def rank_pool(ctx: Context, topic: str, pool: int, *, exact: bool = False) -> tuple[str | None, int, Ranking]:
    """The reranked candidate pool sized for a list `pool` deep (`candidates`), its references not yet judged."""
    topic = entered(topic)
    tokens = tokenize_topic(topic)
    query, found = candidates(ctx.conn, ctx.scope_keys, tokens, pool, phrase=topic if exact else None)
    weights = term_weights(ctx.conn, tokens) if found else {}
    lexical_size = len(found)
    dense: dict[int, tuple[int, float]] | None = None
    if ctx.dense is not None and not exact and topic.strip():
        # Every lexical candidate's cosine is read, not only those among the k nearest: similarity is a feature
        # of the rerank, and a candidate that just missed the dense top k would otherwise lose all of it to one
        # that just made it (among 200 notes on one topic, which of them is in the top 40 is noise).
        have = {int(row["rowid"]) for row, _ in found}
        k = max(pool * 5, 20)
        answered = ctx.dense(ctx.conn, ctx.scope_keys, topic, k, have)
        hits = [hit for hit in answered if hit[1] >= DENSE_FLOOR]
        dense = {rowid: (rank, cosine) for rank, (rowid, cosine) in enumerate(hits, 1)}
        wanted = [rowid for rowid, _ in hits[:k] if rowid not in have]
        if wanted:  # the hits are this read's scopes already; archived items are not recalled
            rows = ctx.conn.execute(
                f"SELECT {ITEM_COLUMNS} FROM scoped_items m WHERE m.rowid IN ({','.join('?' * len(wanted))}) "
                "AND m.state != 'archived'",
                wanted,
            ).fetchall()
            rows.sort(key=lambda r: dense[int(r["rowid"])][0] if dense else 0)
            found = found + [(row, None) for row in rows]
    # The ranking judges its pool a batch at a time, as deep as the surface reads it: the pool's references are
    # read once, with the first batch, instead of once per batch.
    ctx.validator.expect([str(row["id"]) for row, _ in found])
    ranking = rerank(
        found,
        tokens,
        topic,
        ctx.scope_key,
        ctx.validator,
        ctx.now,
        focus=ctx.focus,
        weights=weights,
        dense=dense,
        lexical_size=lexical_size,
    )
    return query, len(found) - ranking.dropped, ranking


def seated(ctx: Context, ranking: Ranking, depth: int) -> list[Candidate]:
    """The best `depth` of a ranking with superseded notes seated below what replaced them (`seat_superseded`).

    Only what is taken is judged: the top `depth`, and deeper only to find the best item that is not superseded
    when every one of those is.
    """
    top = ranking.top(depth)
    extra = []
    if top and all(note_status(c.kind, c.row["text"]) == "superseded" for c in top):
        current = ranking.first(lambda c: note_status(c.kind, c.row["text"]) != "superseded", len(top))
        extra = [current] if current is not None else []
    brought = _replacements(ctx, top)
    out = seat_superseded(top + extra + brought)[:depth]
    # A replacement is shown for the superseded note it replaces; seated just above it, it can be the last line
    # kept while that note falls below the depth. Alone it did not match the topic: it gives its seat back to the
    # next current candidate, if there is one (when nothing current matched, what replaced the best retired note
    # is the answer, and it stays).
    shown = {supersession_group(c) for c in out if note_status(c.kind, c.row["text"]) == "superseded"}
    brought_ids = {c.id for c in brought}
    orphans = [c for c in out if c.id in brought_ids and supersession_group(c) not in shown]
    have = {c.id for c in out}
    for orphan in reversed(orphans):
        nxt = ranking.first(lambda c: c.id not in have and note_status(c.kind, c.row["text"]) != "superseded", len(top))
        if nxt is None:
            break
        out = [c for c in out if c.id != orphan.id] + [nxt]
        have.add(nxt.id)
    return out


def _replacements(ctx: Context, shown: list[Candidate]) -> list[Candidate]:
    """The active notes that superseded a shown note but did not match the topic themselves.

    A superseded decision is only half an answer: the surface also shows what holds now (seat_superseded
    places it just above the superseded one).
    """
    have = {supersession_group(c) for c in shown if note_status(c.kind, c.row["text"]) == "active"}
    wanted = {
        g
        for c in shown
        if (g := supersession_group(c)) is not None
        and g not in have
        and note_status(c.kind, c.row["text"]) == "superseded"
    }
    rows = []
    for kind, subject, scope_key in sorted(wanted):
        rows.extend(
            ctx.conn.execute(
                f"{ITEM_SELECT} WHERE {IN_SCOPE} AND kind=? AND subject=? AND id IN "
                "(SELECT 'notes:' || id FROM notes WHERE status='active' AND "
                f"{IN_SCOPE} AND subject=?) ORDER BY created_at DESC LIMIT 1",
                (scope_key, kind, subject, scope_key, subject),
            ).fetchall()
        )
    known = {c.id for c in shown}
    rows = [r for r in rows if r["id"] not in known]
    validations = ctx.validator.validate_many([(r["id"], r["scope_key"]) for r in rows])
    return [Candidate(r, None, validations[r["id"]]) for r in rows]


def lead_line(ctx: Context, top: Candidate) -> str:
    """`Most relevant — <Kind> [<subject>] (<age>, <validity>)` plus the item's status labels: the first line below.

    The validity (`refs OK`, `refs moved`, `stale refs`, …) already says what the reference labels say in full
    on the item's own line, so the lead repeats only the status labels (contested, superseded, resolved).
    """
    subject = subject_tag(top.row["subject"], lead=True)
    return (
        f"Most relevant — {humanize_kind(top.kind)}{subject} ({age_text(top.row['created_at'], ctx.now)}, "
        f"{top.validation.validity}){note_label_suffix(top.kind, top.row['text'])}"
    )


def recall(
    ctx: Context, topic: str, budget: int, detail: str | None = None, limit: int | None = None, adapter: str = "mcp"
) -> Surface:
    """Answer-shaped evidence for a topic: a lead line, then ranked items' lines, best first, within the budget.

    How deep it goes (the rule the README states): with a `limit`, the best `limit` items, as many of them as fit.
    Without one, items are added in rank order until the next line would overrun the budget, at most
    RECALL_MAX_LIMIT; the list starts RECALL_LIMIT deep and, while every line fits, deepens by as many lines as
    the room left holds at the length of those so far (plus one, to see the budget bind). Either way the
    pool reranked is the best 5 × max(limit, RECALL_LIMIT) full-text matches, so the top of a default recall is
    the same however deep its budget lets it go, and only the items rendered have their references judged.
    """
    topic = entered(topic)
    query, total, ranking = rank_pool(ctx, topic, max(limit or 0, RECALL_LIMIT))
    cap = limit or RECALL_MAX_LIMIT
    depth = limit or RECALL_LIMIT
    lines: dict[str, Entry] = {}
    while True:
        results = seated(ctx, ranking, depth)
        if not results:
            text = (
                f'No matches for "{collapse(defuse(topic))}". Try a broader topic, or {STATE_BY_ADAPTER[adapter]} '
                "for the working set."
            )
            return Surface("recall", text, budget, [], topic, query, total, ranking.retrievers)
        ordered = seat_contested(results)

        def entry(index: int, ordered: list[Candidate] = ordered) -> Entry:
            cand = ordered[index]
            if cand.id not in lines:
                lines[cand.id] = _recall_entry(cand, detail)
            return lines[cand.id]

        entries = Rendered(len(ordered), entry)  # only the lines the budget reaches are rendered
        beyond = max(0, len(ranking) - depth) if limit is None else 0

        def hint(n: int, beyond: int = beyond) -> str:
            n += beyond
            return f"…{n} more match{'es' if n != 1 else ''} trimmed (raise budget or refine topic)"

        lead = lead_line(ctx, ordered[0])
        done = assemble_budgeted(lead, entries, budget, hint)
        if done.dropped or depth >= cap or len(results) < depth or not beyond:
            break
        # Every line fit: go as deep as the room left holds lines as long as these, and one more to know it binds.
        per_line = max(1, (len(done.text) - len(lead)) // len(done.kept))
        depth = min(cap, depth + (budget_chars(budget) - len(done.text)) // per_line + 2)
    by_id = {c.id: c for c in ordered}
    items = [
        _surface_item(by_id[e.item_id].row, by_id[e.item_id].validation, e.line, e.continuation)
        for e in done.kept
        if e.item_id
    ]
    return Surface("recall", done.text, budget, items, topic, query, total, ranking.retrievers)


def _recall_entry(cand: Candidate, detail: str | None) -> Entry:
    """One recall line (with its score parts when `detail` is `scores`) and its alternatives line."""
    line = render_memory_line(cand.row, cand.validation, 3)
    if detail == "scores":
        line += (
            f" (score {cand.score:.1f}, lex {cand.lexical:.1f}, kind {cand.kind_weight:.1f}, "
            f"truth {cand.truth:.1f}, hot {cand.hot:.1f}"
            + (f", dense {cand.dense:.2f}" if cand.dense is not None else "")
            + ")"
        )
    return Entry(line, alternatives_line(cand.kind, cand.row["text"]), cand.id)


def brief(ctx: Context, topic: str, for_agent: str | None, budget: int) -> Surface:
    """A smaller topical brief: decisions first, then intents, blockers, insights, others."""
    topic = entered(topic)
    header = []
    if for_agent:
        header.append(f"Briefing for {collapse(defuse(for_agent))}:")
    if not ctx.is_project_scope:
        header.append(f"Scope: {ctx.scope_label}")
    if ctx.focus:
        header.append(f"Focus: {collapse(defuse(ctx.focus))}")
    query, total, ranking = rank_pool(ctx, topic, BRIEF_LIMIT)
    results = seated(ctx, ranking, BRIEF_LIMIT)
    if not results:
        text = "\n".join([*header, f'No context found for "{collapse(defuse(topic))}".'])
        return Surface("brief", text, budget, [], topic, query, total, ranking.retrievers)
    position = {c.id: i for i, c in enumerate(results)}
    by_kind = sorted(results, key=lambda c: (BRIEF_KIND_PRIORITY.get(c.kind, 99), position[c.id]))
    ordered: list[Candidate] = []
    run: list[Candidate] = []
    for cand in by_kind:
        if run and run[-1].kind != cand.kind:
            ordered.extend(seat_contested(run))
            run = []
        run.append(cand)
    ordered.extend(seat_contested(run))
    ordered = seat_superseded(ordered)
    lead = "\n".join([*header, lead_line(ctx, ordered[0])])
    entries = [
        Entry(render_memory_line(c.row, c.validation, 2), alternatives_line(c.kind, c.row["text"]), c.id)
        for c in ordered
    ]
    done = assemble_budgeted(lead, entries, budget, lambda n: f"…{n} more trimmed (raise budget or refine topic)")
    by_id = {c.id: c for c in ordered}
    items = [
        _surface_item(by_id[e.item_id].row, by_id[e.item_id].validation, e.line, e.continuation)
        for e in done.kept
        if e.item_id
    ]
    return Surface("brief", done.text, budget, items, topic, query, total, ranking.retrievers)


ITEM_SELECT = (
    "SELECT rowid, id, session_id, scope_type, scope_key, kind, source_table, source_id, subject, text, state, "
    "importance, access_count, last_accessed_at, created_at FROM scoped_items"
)


def facts(row: sqlite3.Row) -> ItemFacts:
    """The scoring view of an item row."""
    return ItemFacts(
        row["kind"],
        row["text"],
        row["state"],
        row["importance"],
        row["access_count"],
        row["last_accessed_at"],
        row["created_at"],
    )


def working_set(ctx: Context, limit: int) -> list[tuple[sqlite3.Row, Validation]]:
    """The scored working set of these scopes, stale items excluded, hottest first."""
    rows = ctx.conn.execute(
        f"{ITEM_SELECT} WHERE {in_scopes(len(ctx.scope_keys))} AND state "
        "!= 'archived' ORDER BY created_at DESC, rowid DESC LIMIT 500",
        ctx.scope_keys,
    ).fetchall()
    kept = []
    for row in rows:
        if row["state"] == "cold" and row["kind"] not in ("episode:command_failure", "branch_snapshot"):
            continue
        if row["kind"] == "command_run" and row["state"] != "hot":
            continue
        score = hotness(facts(row), ctx.now) + STATE_WEIGHT.get(row["state"], 0.0)
        score += 2.8 if row["scope_key"] == ctx.scope_key else 0.8
        kept.append((score, row))
    kept.sort(key=lambda pair: (-pair[0], -pair[1]["importance"]))  # stable: ties stay newest first, as read
    wanted = kept[: max(4 * limit, limit + 20)]
    validations = ctx.validator.validate_many([(row["id"], row["scope_key"]) for _, row in wanted])
    fresh = [(row, validations[row["id"]]) for _, row in wanted if not validations[row["id"]].stale]
    return fresh[:limit]


def _bullet(row: sqlite3.Row | Mapping[str, Any], validation: Validation | None) -> str:
    """A state bullet: kind, time, subject, content, and every label the item carries (status and references)."""
    kind, text = row["kind"], row["text"]
    body, _ = split_trailers(text)
    subject = subject_tag(row["subject"])
    content = clip(collapse(note_content(body)), NOTE_LINE_CHARS, inspect_pointer(row["id"]))
    line = f"- {humanize_kind(kind)} [{row['created_at'][:16].replace('T', ' ')}Z]: {subject}{content}"
    return line + label_suffix(kind, text, validation)


def _seat_rows(rows: list[sqlite3.Row]) -> list[sqlite3.Row]:
    """Contested grouping for plain rows (same subject and scope seated together)."""
    out: list[sqlite3.Row] = []
    placed: set[str] = set()
    for i, row in enumerate(rows):
        if row["id"] in placed:
            continue
        out.append(row)
        placed.add(row["id"])
        if "contested" not in item_labels(row["kind"], row["text"], None) or not row["subject"]:
            continue
        for other in rows[i + 1 :]:
            if (
                other["id"] not in placed
                and "contested" in item_labels(other["kind"], other["text"], None)
                and other["subject"] == row["subject"]
                and other["scope_key"] == row["scope_key"]
            ):
                out.append(other)
                placed.add(other["id"])
    return out


SECTION_ORDER = (
    ("note:intent", "Intents:"),
    ("note:focus", "Focus:"),
    ("note:decision", "Decisions:"),
    ("note:blocker", "Blockers:"),
    ("note:insight", "Insights:"),
)
EVIDENCE_KINDS = (
    "episode:command_failure",
    "episode:test_cycle",
    "episode:session_summary",
    "session_state",
    "command_run",
)


def _bullet_section(
    title: str, seated: list[sqlite3.Row], validations: Mapping[str, Validation]
) -> tuple[str, list[SurfaceItem]]:
    """A titled section of one bullet per row, and what it shows of each row."""
    bullets = [_bullet(row, validations[row["id"]]) for row in seated]
    shown = [_surface_item(row, validations[row["id"]], line) for row, line in zip(seated, bullets, strict=True)]
    return title + "\n" + "\n".join(bullets), shown


HOST_ID_CHARS = 80
"""The most of Claude Code's session id `state` shows (its ids are 36-character UUIDs; the hook's text is untrusted)."""


def _resume_tag(conn: sqlite3.Connection, session_id: str) -> str:
    """` (claude --resume <id>)` for a session Claude Code started, so an operator can match it to the host's; the id
    is the hook's text, shown defused on one line; '' when the session has none."""
    host = host_session_of(conn, session_id)
    if not host:
        return ""
    return f" (claude --resume {defuse(clip(collapse(defuse(host)), HOST_ID_CHARS))})"


def state(ctx: Context, budget: int, extra_sections: list[str] | None = None) -> Surface:
    """Current-session notes first, then the scored working set by kind, then recent evidence; whole sections."""
    sections: list[tuple[str, list[SurfaceItem]]] = []
    session_rows: list[sqlite3.Row] = []
    if ctx.session_id:
        rows = ctx.conn.execute(
            f"{ITEM_SELECT} WHERE session_id=? AND {IN_SCOPE} AND "
            "kind LIKE 'note:%' AND state NOT IN ('archived','cold') "
            "ORDER BY created_at DESC, rowid DESC LIMIT 20",
            (ctx.session_id, ctx.scope_key),
        ).fetchall()
        validations = ctx.validator.validate_many([(r["id"], r["scope_key"]) for r in rows])
        session_rows = [r for r in rows if not validations[r["id"]].stale and not is_superseded(r["kind"], r["text"])][
            :5
        ]
        if session_rows:
            title = f"Current session{_resume_tag(ctx.conn, ctx.session_id)}:"
            sections.append(_bullet_section(title, _seat_rows(session_rows), validations))
    snapshot = branch_snapshot(ctx)
    if snapshot is not None:
        row, block = snapshot
        sections.append(("Branch snapshot:\n" + block, [_surface_item(row, None)]))
    sections.extend((extra, []) for extra in extra_sections or [])
    in_session = {r["id"] for r in session_rows}
    working = [(r, v) for r, v in working_set(ctx, 12) if r["id"] not in in_session]
    for kind, title in SECTION_ORDER:
        pairs = [(r, v) for r, v in working if r["kind"] == kind]
        if pairs:
            sections.append(_bullet_section(title, _seat_rows([r for r, _ in pairs]), {r["id"]: v for r, v in pairs}))
    evidence: list[str] = []
    evidence_items: list[SurfaceItem] = []
    seen_lines: set[str] = set()
    for row, validation in working:
        if row["kind"] not in EVIDENCE_KINDS or len(evidence) == 4:
            continue
        first = row["text"].strip().split("\n", 1)[0].lower()
        if first in seen_lines:
            continue
        seen_lines.add(first)
        evidence.append(f"- {render_memory_line(row, validation, 2)}")
        evidence_items.append(_surface_item(row, validation, evidence[-1]))
    if evidence:
        sections.append(("Recent evidence:\n" + "\n".join(evidence), evidence_items))
    if not sections:
        return Surface("state", EMPTY_STATE, budget, [])
    text, kept = assemble_sections(
        [t for t, _ in sections], budget, [items[0].id if items else None for _, items in sections]
    )
    items = [item for index in kept for item in sections[index][1]]
    return Surface("state", text, budget, items)


SNAPSHOT_RENAMES = {"Focus: ": "Last focus: ", "Intents: ": "Stored intents: ", "Blockers: ": "Stored blockers: "}
_COMMAND_LINE = re.compile(r"^Command \([^)]+\): exit \??\d*$")


def branch_snapshot(ctx: Context) -> tuple[sqlite3.Row, str] | None:
    """This scope's snapshot item and its state block (command-only lines dropped)."""
    row = ctx.conn.execute(
        f"{ITEM_SELECT} WHERE {IN_SCOPE} AND kind='branch_snapshot' LIMIT 1", (ctx.scope_key,)
    ).fetchone()
    if row is None:
        return None
    lines = []
    for line in defuse(row["text"]).split("\n"):  # author text throughout: subjects, summaries, file names
        if _COMMAND_LINE.match(line.strip()):
            continue
        for old, new in SNAPSHOT_RENAMES.items():
            if line.startswith(old):
                line = new + line[len(old) :]
        lines.append(line)
    return row, "\n".join(lines)


BRIEF_LABEL_CHARS = 80
"""A SessionStart bullet's labels (and the scope's name in its header) take at most this many characters."""


def session_brief(
    ctx: Context,
    budget: int,
    ledger_files: list[str] | None = None,
    resume: str | None = None,
    pending: str | None = None,
) -> Surface:
    """The SessionStart brief: ≤3 load-bearing notes, the resume line, unchanged files; nothing on a cold start.

    Every side of an open contest in this scope comes first, marked, whatever its heat: an unresolved
    disagreement is the most load-bearing thing a new session can be told. The other notes fill what is left.
    """
    contested = open_contest_rows(ctx)
    contest_validations = ctx.validator.validate_many([(r["id"], r["scope_key"]) for r in contested])
    eligible = [(row, contest_validations[row["id"]]) for row in contested]
    seen = {row["id"] for row in contested}
    for row, validation in working_set_for_brief(ctx, 24):
        if row["kind"] not in ("note:decision", "note:blocker", "note:intent") or row["id"] in seen:
            continue
        if row["state"] not in ("pinned", "hot", "warm") or is_superseded(row["kind"], row["text"]):
            continue
        if validation.all_missing:
            continue
        eligible.append((row, validation))
    # The user's own notes take the seats before decisions read from the repository (`working_set_for_brief` ranks
    # them last): a folder of them, even one a team trusts (review policy `none`), cannot push every note
    # written here out of the brief.
    valid = {row["id"]: validation for row, validation in eligible}
    picked = _seat_rows([row for row, _ in eligible])
    picked = picked[: max(3, len(contested))]
    contest_ids = {row["id"] for row in contested}

    def bullet(row: sqlite3.Row, width: int) -> str:
        if not width:  # the leanest form: what the note is about and its labels, its words left to a recall
            line = f"- {row['kind'][5:]}: {subject_tag(row['subject'])}".rstrip()
            return clip(line + label_suffix(row["kind"], row["text"], valid[row["id"]]), len(line) + BRIEF_LABEL_CHARS)
        body, _ = split_trailers(row["text"])
        line = f"- [{age_text(row['created_at'], ctx.now)}] {row['kind'][5:]}: {subject_tag(row['subject'])}"
        line += shorten(note_content(body), width)
        # Labels are cut like any other text (their kind and a `…` kept): a 700-character path or a branch name of
        # thousands cannot push the line past what the brief can hold.
        return clip(line + label_suffix(row["kind"], row["text"], valid[row["id"]]), len(line) + BRIEF_LABEL_CHARS)

    def assemble(rows: list[sqlite3.Row], width: int, hidden: int, ledger: bool) -> list[str]:
        bullets = [bullet(row, width if row["id"] in contest_ids else 110) for row in rows]
        lines = [f"Cortex memory ({clip(ctx.scope_label, BRIEF_LABEL_CHARS)}):", *bullets]
        if hidden:
            lines.append(f"- {hidden} more open contest side{'s' if hidden != 1 else ''}: cortex_state lists them")
        if pending:  # one line, a count: what arrived from outside is not memory until a person accepts it
            lines.append(pending)
        if resume:
            lines.append(f"- resume: {shorten(defuse(resume), 110)}")
        if ledger and ledger_files:
            lines.append(
                "- read in this scope, still unchanged: " + ", ".join(_short_path(p) for p in ledger_files[:5])
            )
        lines.append("More: cortex_recall(topic).")
        return lines

    def attempts() -> Iterator[tuple[list[str], list[sqlite3.Row]]]:
        """The brief from fullest to leanest: the ledger line and the other notes give way first (from the bottom),
        then contest lines are cut shorter, then the last sides are named by count (an open contest's sides lead)."""
        rows, width, hidden, ledger = list(picked), 110, 0, True
        yield assemble(rows, width, hidden, ledger), list(rows)
        ledger = False
        yield assemble(rows, width, hidden, ledger), list(rows)
        while rows and rows[-1]["id"] not in contest_ids:
            rows.pop()
            yield assemble(rows, width, hidden, ledger), list(rows)
        for width in (80, 50, 30, 0):
            yield assemble(rows, width, hidden, ledger), list(rows)
        while len(rows) > 1:
            rows.pop()
            hidden += 1
            yield assemble(rows, width, hidden, ledger), list(rows)

    # The budget is spent, never exceeded (the one packer's rule); a brief with something to say is cut to fit,
    # never dropped whole.
    def whole(line: str, row: sqlite3.Row) -> bool:
        """A line cut to the last room still names its note's subject and carries `[contested]` if it is a side."""
        tag = subject_tag(row["subject"]).strip()
        contested = row["id"] in contest_ids and CONTESTED not in line
        return not contested and tag in line

    packed = pack_degrading(attempts(), budget, whole)
    if packed is None or len(packed[0]) <= 2:
        return Surface("session_brief", "", budget, [])
    lines, rows = packed
    shown = [_surface_item(row, valid[row["id"]]) for row in rows]
    return Surface("session_brief", "\n".join(lines), budget, shown)


def open_contest_rows(ctx: Context) -> list[sqlite3.Row]:
    """The items of every side of an open contest in this scope, seated by subject, oldest side first."""
    return ctx.conn.execute(
        f"{ITEM_SELECT} WHERE {IN_SCOPE} AND id IN "
        f"(SELECT 'notes:' || id FROM notes WHERE {IN_SCOPE} AND conflict=1 "
        "AND status='active') ORDER BY subject, created_at, rowid",
        (ctx.scope_key, ctx.scope_key),
    ).fetchall()


SHARED = "shared"
"""The origin of a decision read from the repository's decisions folder (`memory/sharing.ORIGIN`)."""


def working_set_for_brief(ctx: Context, limit: int) -> list[tuple[sqlite3.Row, Validation]]:
    """The working selection the session brief walks; unlike state it keeps stale items (they are labelled)."""
    rows = ctx.conn.execute(
        f"{ITEM_SELECT} WHERE {in_scopes(len(ctx.scope_keys))} AND state IN "
        "('pinned','hot','warm') ORDER BY created_at DESC, rowid DESC LIMIT 500",
        ctx.scope_keys,
    ).fetchall()
    if len(rows) == 500:  # a flood of newer items (a folder of decision files): the notes written here still compete
        seen = {r["id"] for r in rows}
        rows += [
            r
            for r in ctx.conn.execute(
                f"{ITEM_SELECT} WHERE {in_scopes(len(ctx.scope_keys))} AND state IN ('pinned','hot','warm') "
                "AND kind LIKE 'note:%' AND instr(text, ?) = 0 ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (*ctx.scope_keys, f"\nOrigin: {SHARED}", limit),
            )
            if r["id"] not in seen
        ]
    scored = sorted(  # stable: ties stay in the order read, newest first
        rows,
        key=lambda r: (
            # Decisions read from the repository come after the notes written here (see `session_brief`).
            note_origin(r["kind"], r["text"]) == SHARED,
            -(
                hotness(facts(r), ctx.now)
                + STATE_WEIGHT.get(r["state"], 0.0)
                + (2.8 if r["scope_key"] == ctx.scope_key else 0.8)
            ),
            -r["importance"],
        ),
    )[:limit]
    validations = ctx.validator.validate_many([(r["id"], r["scope_key"]) for r in scored])
    return [(r, validations[r["id"]]) for r in scored]


def _short_path(path: str) -> str:
    """A read file as the brief names it: quoted when it is not a plain path (`base/untrusted.quote_path`), the
    middle of a long one cut."""
    clean = quote_path(path)
    if len(clean) > 44:
        clean = clean[:12] + "…" + clean[-31:]
    return f'"{clean}"' if "," in clean and not clean.startswith('"') else clean


HEADER_CONTEST_SIDES = 4
"""How many open-contest sides the header names before it counts the rest."""


def header(ctx: Context, sessions: int, budget: int) -> Surface:
    """The full branch-aware header: a status line, open contests, hot items, the resume line, how to use memory."""
    focus = collapse(defuse(ctx.focus)) if ctx.focus else "unfocused"
    plural = "s" if sessions != 1 else ""
    lines = [f"Cortex: {focus} | {sessions} session{plural} on {ctx.scope_label}"]
    shown: list[SurfaceItem] = []
    working = working_set(ctx, 12)
    snapshot = branch_snapshot(ctx)
    if snapshot is not None:
        row, block = snapshot
        summary = [line for line in block.split("\n") if not line.startswith(("Stored intents: ", "Recent files: "))]
        lines.extend(summary[:4])
        shown.append(_surface_item(row, None))
    elif not working:
        lines.append("No memory on this scope yet.")
    # An open contest is what a new session most needs to hear: every side leads, marked, whatever its heat.
    contested = open_contest_rows(ctx)
    if contested:
        validations = ctx.validator.validate_many([(r["id"], r["scope_key"]) for r in contested])
        parts = []
        for row in contested[:HEADER_CONTEST_SIDES]:
            line = shorten(render_memory_line(_without_labels(row), None, 1), 110)
            parts.append(line + label_suffix(row["kind"], row["text"], validations[row["id"]]))
            shown.append(_surface_item(row, validations[row["id"]]))
        more = len(contested) - HEADER_CONTEST_SIDES
        lines.append("Contested: " + " | ".join(parts) + (f" | +{more} more sides: cortex_state" if more > 0 else ""))
    seated = {r["id"] for r in contested}
    hot = [
        (r, v)
        for r, v in working
        if r["state"] in ("hot", "pinned")
        and r["id"] not in seated
        and (r["kind"].startswith("note:") or r["kind"] in ("episode:command_failure", "episode:test_cycle"))
    ][:2]
    if hot:
        parts = []
        for row, validation in hot:
            line = shorten(render_memory_line(_without_labels(row), None, 1), 110)
            parts.append(line + label_suffix(row["kind"], row["text"], validation))
            shown.append(_surface_item(row, validation))
        lines.append("Hot: " + " | ".join(parts))
    resume = next(
        ((r, v) for r, v in working if r["kind"] in ("note:intent", "note:focus") and r["state"] in ("hot", "pinned")),
        None,
    )
    if resume is not None:
        row, validation = resume
        body, _ = split_trailers(row["text"])
        subject = subject_tag(row["subject"])
        line = f"Resume: {subject}{shorten(note_content(body), 100)}"
        lines.append(line + label_suffix(row["kind"], row["text"], validation))
        if all(s.id != row["id"] for s in shown):
            shown.append(_surface_item(row, validation))
    lines.append("Use cortex_recall(topic) before re-deriving past decisions; cortex_state for the working set.")
    text, _ = assemble_sections(["\n".join(lines)], budget)
    return Surface("header", text, budget, shown)


def _without_labels(row: sqlite3.Row) -> dict[str, object]:
    """A copy of the row whose text has no trailers, so truncation never cuts a label in half."""
    body, trailers = split_trailers(row["text"])
    return {**{k: row[k] for k in row.keys()}, "text": body}
