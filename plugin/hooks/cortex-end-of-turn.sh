#!/usr/bin/env bash
# cortex-hook-template: efa14c67f0a67784
# Cortex end of turn (Stop): flush the worktree's spool into the store, and offer (once) the notes a
# subagent's conclusion suggests. One Cortex process per turn. Always exits 0.
CORTEX_BIN="${CORTEX_BIN:-$(command -v cortex)}"

. "${BASH_SOURCE[0]%/*}/cortex-lib.sh" 2>/dev/null || exit 0
cortex_read_payload || exit 0
cortex_find_runtime || exit 0
# A new turn: files substituted in this one may be substituted again (never truncated through a link).
[ -f "$rt/turn-reads" ] && [ ! -L "$rt/turn-reads" ] && : > "$rt/turn-reads"
[ -x "$CORTEX_BIN" ] || exit 0
printf '%s' "$payload" | LC_ALL=$cortex_lc_all "$CORTEX_BIN" hook end-of-turn 2>/dev/null
exit 0
