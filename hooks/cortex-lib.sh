# cortex-hook-template: __CORTEX_TEMPLATE_ID__
# Shared by the Cortex hooks (sourced, bash >= 3.2, no jq): read the payload, find the engaged runtime folder.
# Byte semantics (LC_ALL=C) keep every string operation linear on large multi-byte payloads; the Cortex process a
# hook runs gets the caller's locale back ($cortex_lc_all). Everything a hook creates is this user's alone.
cortex_lc_all=${LC_ALL-}
LC_ALL=C
umask 077

# cortex_read_payload: the hook JSON from stdin as one line in $payload (JSON strings hold no raw newlines).
# One linear pass by tr: bash's own ${payload//$'\n'/} is quadratic in the number of line breaks.
cortex_read_payload() {
  { payload=$(tr -d '\015\012'); } 2>/dev/null
  [ -n "$payload" ]
}

# cortex_find_runtime: walk up from the payload's cwd to the runtime folder this machine's Cortex engaged; sets
# $dir and $rt. A repository can commit a .cortex/ folder, links included, and no hook may run git per tool call,
# so a folder counts only when it is no link, is this user's, and its marker holds the key kept in Cortex's home
# (written there by Cortex after it checked the folder; a repository cannot know it).
cortex_find_runtime() {
  local re='"cwd"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)"' keyfile key= mark= standdown=
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
  [ ! -L "$rt" ] && [ -O "$rt" ] && [ ! -L "$rt/engaged" ] && [ -O "$rt/engaged" ] || return 1
  keyfile="${CORTEX_HOME:-$HOME/.cortex}/runtime.key"
  [ -f "$keyfile" ] || return 1
  IFS= read -r key < "$keyfile" 2>/dev/null || :
  { IFS= read -r mark; IFS= read -r standdown; } < "$rt/engaged" 2>/dev/null || :
  [ -n "$key" ] && [ "$mark" = "engaged=$key" ] || return 1
  if [ "$standdown" = "standdown=$key" ] && cortex_defers; then exit 0; fi
  return 0
}

# cortex_plain FILE: FILE is absent or a regular file, and not a link (a hook never reads or writes through one).
cortex_plain() {
  [ ! -L "$1" ] && { [ -f "$1" ] || [ ! -e "$1" ]; }
}

# cortex_defers: this script lies outside the project ($CLAUDE_PROJECT_DIR, else the worktree): the user's
# ~/.claude/hooks or the plugin's copy. It stands down (exit 0) where the engaged mark's second line says the project
# wires Cortex itself (`cortex install --scope project`), so a teammate with both set-ups is captured once. The rule
# is Python's (`capture.standdown`: a real PostToolUse hook entry running the project's existing capture script),
# applied when capture is engaged (SessionStart); no settings file is read per tool call. A script inside the
# project never defers.
cortex_defers() {
  local project=${CLAUDE_PROJECT_DIR:-$dir} here=${BASH_SOURCE[0]%/*}
  case $project in /*) ;; *) return 1 ;; esac
  case $here in /*) ;; *) return 1 ;; esac
  case $here/ in "${project%/}"/*) return 1 ;; esac
  return 0
}
