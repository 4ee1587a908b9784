#!/usr/bin/env bash
# cortex-hook-template: bc0394448cd2212a
# Cortex subagent hooks: dispatch-pre (PreToolUse Agent), subagent-start, subagent-stop, guard-memory.
# One Cortex process per subagent event, never per ordinary tool call. Always exits 0.
CORTEX_BIN="${CORTEX_BIN:-$(command -v cortex)}"
action=${1:-}
case $action in dispatch-pre|subagent-start|subagent-stop|guard-memory) ;; *) exit 0 ;; esac

. "${BASH_SOURCE[0]%/*}/cortex-lib.sh" 2>/dev/null || exit 0
cortex_read_payload || exit 0
if [ "$action" = guard-memory ]; then
  # Only a subagent's call can be refused: without an agent id there is nothing to check.
  case $payload in *'"agent_id"'*|*'"agentId"'*) ;; *) exit 0 ;; esac
fi
cortex_find_runtime || exit 0
[ -x "$CORTEX_BIN" ] || exit 0
printf '%s' "$payload" | LC_ALL=$cortex_lc_all "$CORTEX_BIN" hook "$action" 2>/dev/null
exit 0
