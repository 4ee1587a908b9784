"""Memory rules: what a note means. In: notes written by a person, an agent or capture. Out: `memory_items`,
the one retrieval layer, with trust state (active, contested, superseded, resolved) and tiers.

`notes` writes, supersedes and resolves; `contradiction` detects opposing notes; `items` projects notes into
memory_items, defuses author text and derives tiers (`tiers` refreshes them and books what a read reinforces);
`corrections` edits, rewrites, re-anchors and deletes items for a person, each audited; `projection` projects captured
rows; `merges` and `sharing` bring notes home from merged branches and shared decision files; `transfer` exports notes
and imports them (also Claude Code's own memory files)."""
