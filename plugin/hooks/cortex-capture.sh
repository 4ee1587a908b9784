#!/usr/bin/env bash
# cortex-hook-template: cb0b9b9a6281dfba
# Cortex capture (PostToolUse, PostToolUseFailure): append the hook payload to the worktree's spool.
# Pure bash >= 3.2: no Python, no Node, no jq. Always exits 0 and prints nothing.
CORTEX_BIN="${CORTEX_BIN:-$(command -v cortex)}"
# The runtime folder's size cap in KiB (capture.RUNTIME_CAP): past it capture pauses until a flush succeeds.
CAP_KB=32768

. "${BASH_SOURCE[0]%/*}/cortex-lib.sh" 2>/dev/null || exit 0
cortex_read_payload || exit 0
# The runtime folder is found by walking up, so capture works from a subdirectory.
cortex_find_runtime || exit 0
# Paused at the size cap (the store refused its flushes): `cortex doctor` says why and what to do.
[ -e "$rt/paused" ] || [ -L "$rt/paused" ] && exit 0
cortex_plain "$rt/spool.jsonl" || exit 0

if [ -n "${EPOCHREALTIME:-}" ]; then
  t=${EPOCHREALTIME/,/.}
elif printf -v t '%(%s)T' -1 2>/dev/null; then
  :
else
  t=$(date +%s)
fi
now=${t%%.*}

# cortex_size: the folder's size in KiB in $kb (one du process).
cortex_size() {
  kb=$(du -sk "$rt" 2>/dev/null)
  kb=${kb%%[!0-9]*}
  kb=${kb:-0}
}

check=0
if [ ${#payload} -le 2960 ]; then
  # One short write (under 3000 bytes) with O_APPEND: concurrent hooks cannot interleave inside it.
  printf '%s\n' "{\"v\":1,\"t\":$t,\"p\":$payload}" >> "$rt/spool.jsonl" 2>/dev/null
  # Small lines grow the spool slowly: look at its size on about one call in 16 (a du costs a process).
  [ $((RANDOM % 16)) -eq 0 ] && check=1
else
  # A large payload goes to its own file first; the pointer line is appended only once it is whole.
  cortex_size
  if [ "$kb" -ge $CAP_KB ]; then
    cortex_plain "$rt/paused" && printf '%s\n' "$now" > "$rt/paused" 2>/dev/null
    exit 0
  fi
  [ -L "$rt/blobs" ] && exit 0
  [ -d "$rt/blobs" ] || mkdir "$rt/blobs" 2>/dev/null
  blob="$t-$$-$RANDOM.json"
  # noclobber: a name that already exists (a link included) is never written through.
  set -C
  printf '%s' "$payload" > "$rt/blobs/$blob" 2>/dev/null &&
    printf '%s\n' "{\"v\":1,\"t\":$t,\"blob\":\"$blob\"}" >> "$rt/spool.jsonl" 2>/dev/null
  set +C
  kb=$((kb + ${#payload} / 1024))
  check=2
fi
if [ $check -ne 0 ]; then
  [ $check -eq 1 ] && cortex_size
  if [ "$kb" -ge $CAP_KB ]; then
    cortex_plain "$rt/paused" && printf '%s\n' "$now" > "$rt/paused" 2>/dev/null
  fi
  # Past 256 KiB of pending capture, flush in a detached process (never in the agent's way), unless one was
  # spawned a moment ago or the store refused the last one (flush-after holds when to try again).
  if [ "$kb" -ge 256 ] && [ -x "$CORTEX_BIN" ] && cortex_plain "$rt/flush-after"; then
    after=0
    [ -f "$rt/flush-after" ] && { IFS= read -r after < "$rt/flush-after" || :; }
    case $after in ''|*[!0-9]*) after=0 ;; esac
    if [ "$now" -ge "$after" ]; then
      printf '%s\n' $((now + 60)) > "$rt/flush-after" 2>/dev/null
      (cd "$dir" && LC_ALL=$cortex_lc_all nohup "$CORTEX_BIN" flush-spool --embed >/dev/null 2>&1 &) >/dev/null 2>&1
    fi
  fi
fi
exit 0
