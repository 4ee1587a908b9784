"""Agent-facing asks built from more than one surface call: a recall read in another scope, and the subagent brief.

In: the surfaces' `Context` for this worktree (and for another scope, the scope and the name asked for). Out: a
`Surface`, or the brief's text. Booking stays with the caller (`query.economy`).
"""

from __future__ import annotations

from cortex_engine.base import records
from cortex_engine.base.tokens import estimate_tokens
from cortex_engine.memory import merges
from cortex_engine.memory.items import collapse, note_content, split_trailers
from cortex_engine.query import surfaces
from cortex_engine.query.limits import MIN_BUDGET
from cortex_engine.query.render import strip_control
from cortex_engine.query.surfaces import BUDGETS, Surface
from cortex_engine.scope.identity import Scope


def recall_elsewhere(
    ctx: surfaces.Context,
    scope: Scope,
    name: str,
    topic: str,
    budget: int,
    detail: str | None,
    limit: int | None,
    adapter: str,
) -> Surface:
    """A recall read in the scope `name` names (a branch, deleted or not, or a full key), its lines led by where
    they come from; the lead is paid for from the budget.

    Raises:
        NotFound: `name` names nothing in the store.
    """
    keys = merges.scope_keys_for(ctx.conn, scope, name)
    lead = f"From scope {strip_control(name.strip())} (not this branch; read only when asked):"
    inner = surfaces.recall(
        records.replace(ctx, scope_key=keys[0], scope_keys=keys),
        topic,
        max(MIN_BUDGET, budget - estimate_tokens(lead) - 1),
        detail,
        limit,
        adapter,
    )
    return Surface(
        inner.channel,
        f"{lead}\n{inner.text}",
        budget,
        inner.items,
        inner.topic,
        inner.query,
        inner.total_candidates,
        inner.retrievers,
    )


def subagent_brief(ctx: surfaces.Context, description: str, agent_type: str, prompt_prefix: str) -> str:
    """The SubagentStart brief's text: ≤150 tokens; "" when nothing matches or all of it is already pasted."""
    _, _, results = surfaces.ranked(ctx, description, surfaces.BRIEF_LIMIT)
    if not results:
        return ""
    notes = [c for c in results if c.kind.startswith("note:")] or results
    if prompt_prefix and all(
        collapse(strip_control(note_content(split_trailers(c.row["text"])[0]))).lower() in prompt_prefix for c in notes
    ):
        return ""
    # The brief is packed to its budget by the one packer (`render.assemble_budgeted`); nothing to cut here.
    return surfaces.brief(ctx, description, agent_type, BUDGETS["subagent_brief"]).text
