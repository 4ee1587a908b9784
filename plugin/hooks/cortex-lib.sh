# cortex-hook-template: ccb4008a5078a568
# Shared by the Cortex hooks (sourced, bash >= 3.2, no jq): read the payload, find the engaged runtime folder.

# cortex_read_payload: the hook JSON from stdin as one line in $payload (JSON strings hold no raw newlines).
cortex_read_payload() {
  { payload=$(cat); } 2>/dev/null
  payload=${payload//$'\r'/}
  payload=${payload//$'\n'/}
  [ -n "$payload" ]
}

# cortex_find_runtime: walk up from the payload's cwd to an engaged .cortex folder; sets $dir and $rt.
cortex_find_runtime() {
  local re='"cwd"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)"'
  [[ $payload =~ $re ]] || return 1
  dir=${BASH_REMATCH[1]}
  dir=${dir//\\\//\/}
  dir=${dir//\\\\/\\}
  case $dir in /*) ;; *) return 1 ;; esac
  while [ ! -f "$dir/.cortex/engaged" ]; do
    [ -n "$dir" ] && [ "$dir" != "/" ] || return 1
    dir=${dir%/*}
    [ -n "$dir" ] || dir=/
  done
  rt="$dir/.cortex"
}
