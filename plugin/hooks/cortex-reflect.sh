#!/usr/bin/env bash
# cortex-hook-template: ea299de8644bfaba
# Cortex reflexes: reflect-pre (PreToolUse Edit|Write: the whisper) and reflect-prompt (UserPromptSubmit:
# the consult hint). Only when the worktree is engaged. Always exits 0.
CORTEX_BIN="${CORTEX_BIN:-$(command -v cortex)}"
action=${1:-reflect-prompt}
case $action in reflect-pre|reflect-prompt) ;; *) exit 0 ;; esac

. "${BASH_SOURCE[0]%/*}/cortex-lib.sh" 2>/dev/null || exit 0
cortex_read_payload || exit 0
cortex_find_runtime || exit 0
[ -x "$CORTEX_BIN" ] || exit 0
printf '%s' "$payload" | LC_ALL=$cortex_lc_all "$CORTEX_BIN" hook "$action" 2>/dev/null
exit 0
