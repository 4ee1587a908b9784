#!/usr/bin/env bash
# cortex-hook-template: 4e6fafa389ca9555
# Cortex end of turn (Stop): flush the worktree's spool into the store, and offer (once) the notes a
# subagent's conclusion suggests. One Cortex process per turn. Always exits 0.
CORTEX_BIN="${CORTEX_BIN:-$(command -v cortex)}"

. "${BASH_SOURCE[0]%/*}/cortex-lib.sh" 2>/dev/null || exit 0
cortex_read_payload || exit 0
cortex_find_runtime || exit 0
# A new turn: files substituted in this one may be substituted again.
[ -f "$rt/turn-reads" ] && : > "$rt/turn-reads"
[ -x "$CORTEX_BIN" ] || exit 0
printf '%s' "$payload" | "$CORTEX_BIN" hook end-of-turn 2>/dev/null
exit 0
