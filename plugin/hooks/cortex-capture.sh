#!/usr/bin/env bash
# cortex-hook-template: 0dae02ad9f011f55
# Cortex capture (PostToolUse, PostToolUseFailure): append the hook payload to the worktree's spool.
# Pure bash >= 3.2: no Python, no Node, no jq. Always exits 0 and prints nothing.
CORTEX_BIN="${CORTEX_BIN:-$(command -v cortex)}"

. "${BASH_SOURCE[0]%/*}/cortex-lib.sh" 2>/dev/null || exit 0
cortex_read_payload || exit 0
# The runtime folder is found by walking up, so capture works from a subdirectory.
cortex_find_runtime || exit 0

if [ -n "${EPOCHREALTIME:-}" ]; then
  t=${EPOCHREALTIME/,/.}
elif printf -v t '%(%s)T' -1 2>/dev/null; then
  :
else
  t=$(date +%s)
fi

line="{\"v\":1,\"t\":$t,\"p\":$payload}"
check=0
if [ ${#line} -le 3000 ]; then
  # One short write with O_APPEND: concurrent hooks cannot interleave inside it.
  printf '%s\n' "$line" >> "$rt/spool.jsonl" 2>/dev/null
  # Small lines grow the spool slowly: look at its size on about one call in 16 (a du costs a process).
  [ $((RANDOM % 16)) -eq 0 ] && check=1
else
  # A large payload goes to its own file first; the pointer line is appended only once it is whole.
  blob="$t-$$-$RANDOM.json"
  [ -d "$rt/blobs" ] || mkdir -p "$rt/blobs" 2>/dev/null
  printf '%s' "$payload" > "$rt/blobs/$blob" 2>/dev/null &&
    printf '%s\n' "{\"v\":1,\"t\":$t,\"blob\":\"$blob\"}" >> "$rt/spool.jsonl" 2>/dev/null
  check=1
fi
if [ $check -eq 1 ]; then
  # Past 256 KiB of pending capture, flush in a detached process (never in the agent's way).
  kb=$(du -sk "$rt" 2>/dev/null)
  kb=${kb%%[!0-9]*}
  if [ "${kb:-0}" -ge 256 ] && [ -x "$CORTEX_BIN" ]; then
    (cd "$dir" && nohup "$CORTEX_BIN" flush-spool >/dev/null 2>&1 &) >/dev/null 2>&1
  fi
fi
exit 0
