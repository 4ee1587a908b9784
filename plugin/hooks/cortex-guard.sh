#!/usr/bin/env bash
# cortex-hook-template: 73067ad7b9c79a28
# Cortex guard (PreToolUse Bash and the file tools, the plugin): an agent's shell command that would approve for the
# person is denied before it runs, with a reason telling the agent to ask the person. Denied: accepting or rejecting
# inbox arrivals, lowering the review policy (or writing the settings file that holds it), `cortex restore` and
# `cortex undo`, and writing the store file itself (sqlite3, rm, mv, cp, a redirect … on cortex.db); and a Write or
# Edit into Cortex's home (`$CORTEX_HOME`, `~/.cortex`) or onto a cortex.db.
# Bash alone: no jq, no Python (a command over 4 KiB is cleaned by one sed, where there is one: bash's own
# substitutions grow with the square of its length); anything unparsed is read whole (more is denied, never less).
# The CLI refuses the same commands without a terminal anyway; this says why before the agent tries.
# Always exits 0: a deny is a JSON answer on stdout.

payload=$(</dev/stdin) 2>/dev/null || IFS= read -r -d '' payload

deny() {
  printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"%s"}}\n' \
    "Cortex: ${1} is the user's call, not the agent's. Do not run it, and do not work around this guard: ask the person to do it themselves in their own terminal (or in the Cortex TUI), and tell them why."
  exit 0
}

# The file tools (Write, Edit, MultiEdit, NotebookEdit): only where they write, Cortex's home or a store file.
if [[ $payload =~ \"tool_name\"[[:space:]]*:[[:space:]]*\"(Write|Edit|MultiEdit|NotebookEdit)\" ]]; then
  [[ $payload =~ \"(file_path|notebook_path)\"[[:space:]]*:[[:space:]]*\"([^\"]*)\" ]] || exit 0
  target=${BASH_REMATCH[2]}
  home=${CORTEX_HOME:-${HOME:-/nonexistent}/.cortex}
  home=${home%/}
  if [[ ${target,,} =~ (^|/)\.cortex/|cortex\.db ]] || [[ $target == "$home"/* ]]; then
    deny "writing the Cortex store or settings file"
  fi
  exit 0
fi
# The command is the first "command" string of the payload; escaped quotes and backslashes are kept apart first.
cmd=$payload
case $payload in
  *'"command"'*) # (a `case` glob with one star each side; `[[ == ]]` globs backtrack on long text)
    rest=${payload#*\"command\"}
    rest=${rest#"${rest%%[![:space:]]*}"}
    if [ "${rest:0:1}" = ":" ]; then
      rest=${rest:1}
      rest=${rest#"${rest%%[![:space:]]*}"}
      if [ "${rest:0:1}" = '"' ]; then
        rest=${rest:1}
        rest=${rest//\\\\/$'\001'}
        rest=${rest//\\\"/$'\002'}
        [[ $rest =~ ^[^\"]* ]] && cmd=${BASH_REMATCH[0]}  # up to the closing quote (a regex: `%%` is quadratic)
      fi
    fi
    ;;
esac
# As the shell would read the words: JSON's \n \t \r are blanks, quotes and backslashes join what they split.
if [ ${#cmd} -gt 4096 ] && command -v sed >/dev/null 2>&1; then
  cmd=$(printf '%s' "$cmd" | LC_ALL=C sed -e 's/\\[nrt]/ /g' -e "s/"$'[\\\\"\'\001\002]'"//g")
else
  cmd=${cmd//\\n/ }
  cmd=${cmd//\\t/ }
  cmd=${cmd//\\r/ }
  cmd=${cmd//$'\001'/}
  cmd=${cmd//$'\002'/}
  cmd=${cmd//\\/}
  cmd=${cmd//\"/}
  cmd=${cmd//\'/}
fi
cmd=${cmd,,}

s='[[:space:]]'
w='(^|[^a-z0-9_.-])'
write_op="$w(sqlite3|rm|mv|cp|ln|tee|dd|truncate|shred|install|rsync|sed|perl|python|python3|ruby|node|chmod|touch)([^a-z0-9_.-]|$)|>"
cli="cortex(_engine(\.adapters)?\.cli|_bin\}?)?($s+(-c|--cwd)($s+|=)[^[:space:]]+)?$s+"
what=
if [[ $cmd =~ inbox$s.*(accept|reject) ]]; then
  what="accepting or rejecting inbox arrivals"
elif [[ $cmd =~ review-policy($s+-[^[:space:]]*)*$s+(none|others) || $cmd =~ review_arrivals ]]; then
  what="lowering the review of arrivals"
elif [[ $cmd =~ ${cli}restore([^a-z0-9_-]|$) ]]; then
  what="restoring the store from a backup"
elif [[ $cmd =~ ${cli}undo([^a-z0-9_-]|$) ]]; then
  what="undoing an action"
elif [[ $cmd =~ cortex\.db|\.cortex/projects && $cmd =~ $write_op ]]; then
  what="writing the Cortex store file directly"
elif [[ $cmd =~ \.cortex/settings\.json|cortex_home.*settings\.json && $cmd =~ $write_op ]]; then
  what="writing the Cortex settings file (the review policy)"
fi
[ -n "$what" ] || exit 0
deny "$what"
