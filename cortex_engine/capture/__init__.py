"""Capture: what the agent did. In: hook events appended to the worktree's spool (`.cortex/`). Out: sessions,
command runs, episodes, ledgers and consolidated session summaries in the store.

`runtime` is the only code that touches `.cortex/`; `flush` replays the spool into the store (`direct` records
what comes from elsewhere through the same replay); `sessions` is the session lifecycle and `engagement` turns
capture on in a worktree; `command_runs`,
`transcript`, `ledger`, `searchledger` and `consolidation` shape what was captured; `agents` and `reflex`
answer the hooks that need an engine (subagent briefs, the memory guard, hints); `gc` is retention of what
capture stored (events, retrieval logs, archived items, runtime blobs)."""
