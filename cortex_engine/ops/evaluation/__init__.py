"""Retrieval-quality harness: hermetic seeded suites, per-fixture metrics, and the fail-closed gate.

One module per job: `suites` (the model and its loader) → `scenario` (the hermetic repository and store)
→ `runner` (fixtures and surface probes, metrics) → `gate` (baselines, coverage, regeneration);
`own_store` evaluates the user's own store; `verbs` are `cortex evaluate` and `cortex eval-gate`.

A suite (`eval/suites/<name>.json`) seeds a fresh scenario through the real engine: a temporary git
repository on branch `eval/<name>` holding the suite's app-graph files, a temporary Cortex home, and a
fixed scenario clock. Notes go through `Engine.note` and `Engine.resolve` (so contests and supersession
apply); other memory kinds are inserted as memory_items rows with their references extracted. Renames
and deletions are committed with `git mv` / `git rm` after seeding, so freshness sees a real history.

Every fixture and surface probe runs against the same freshly seeded state (the store is restored from
a snapshot before each probe), so a probe's reads never reinforce what a later probe ranks.

The gate compares each suite with its locked baseline (`eval/baselines/<name>.json`) and fails closed on
anything it cannot judge. Standard library only.
"""
