#!/usr/bin/env bash
# cortex-hook-template: 789b2bf146426a54
# Cortex verified read substitution (PreToolUse Read; opt-in with `cortex substitution on`). When a whole
# file this session already read is byte-identical now (size and sha256 checked at this moment), the Read
# is answered with one line instead of the file. A second Read of it in the same turn always goes through,
# so the real bytes are one re-read away. Pure bash + a sha256 tool; anything uncertain lets the Read run.
CORTEX_BIN="${CORTEX_BIN:-$(command -v cortex)}"

. "${BASH_SOURCE[0]%/*}/cortex-lib.sh" 2>/dev/null || exit 0
cortex_read_payload || exit 0
cortex_find_runtime || exit 0
# Never through a link: the markers and files read and appended here must be plain files in the folder.
[ -f "$rt/substitution" ] && [ -f "$rt/index" ] || exit 0
cortex_plain "$rt/substitution" && cortex_plain "$rt/index" && cortex_plain "$rt/turn-reads" &&
  cortex_plain "$rt/spool.jsonl" || exit 0
[ -e "$rt/paused" ] || [ -L "$rt/paused" ] && exit 0
case $payload in *'"offset"'*|*'"limit"'*|*'"pages"'*) exit 0 ;; esac

re='"file_path"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)"'
[[ $payload =~ $re ]] || exit 0
file=${BASH_REMATCH[1]}
case $file in *\\*) exit 0 ;; /*) ;; *) exit 0 ;; esac
re='"session_id"[[:space:]]*:[[:space:]]*"([A-Za-z0-9._:-]+)"'
[[ $payload =~ $re ]] || exit 0
session=${BASH_REMATCH[1]}
re='"tool_use_id"[[:space:]]*:[[:space:]]*"([A-Za-z0-9._:-]+)"'
[[ $payload =~ $re ]] || exit 0
tool_use=${BASH_REMATCH[1]}

# Already substituted in this turn: the agent is asking for the real text.
if [ -f "$rt/turn-reads" ]; then
  while IFS= read -r seen; do
    [ "$seen" = "$file" ] && exit 0
  done < "$rt/turn-reads"
fi

want_sha= want_size=
while IFS=$'\t' read -r p sha size sess; do
  if [ "$p" = "$file" ] && [ "$sess" = "$session" ]; then
    want_sha=$sha want_size=$size
    break
  fi
done < "$rt/index"
[ -n "$want_sha" ] && [ -f "$file" ] || exit 0

size=$(wc -c < "$file" 2>/dev/null) || exit 0
size=${size//[!0-9]/}
[ "$size" = "$want_size" ] || exit 0
if command -v sha256sum >/dev/null 2>&1; then
  sum=$(sha256sum < "$file" 2>/dev/null)
elif command -v shasum >/dev/null 2>&1; then
  sum=$(shasum -a 256 < "$file" 2>/dev/null)
else
  exit 0
fi
sum=${sum%% *}
[ "$sum" = "$want_sha" ] || exit 0

tokens=$(( (size + 3) / 4 ))
shown=${file//\\/\\\\}
shown=${shown//\"/\\\"}
line="[cortex] substituted: $shown is byte-identical to the copy already in this session's context (verified by sha256 just now). Full content ~$tokens tokens. Read it again to get the real text."
printf '%s\n' "$file" >> "$rt/turn-reads"
if [ -n "${EPOCHREALTIME:-}" ]; then t=${EPOCHREALTIME/,/.}; elif printf -v t '%(%s)T' -1 2>/dev/null; then :; else t=$(date +%s); fi
printf '%s\n' "{\"v\":1,\"t\":$t,\"credit\":{\"path\":\"$shown\",\"size\":$size,\"line\":\"$line\"},\"p\":{\"session_id\":\"$session\",\"cwd\":\"${dir//\"/\\\"}\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Read\",\"tool_use_id\":\"$tool_use\"}}" >> "$rt/spool.jsonl"
printf '%s\n' "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"$line\"}}"
exit 0
