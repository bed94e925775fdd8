#!/bin/sh
# Codex reads AGENTS.md. This keeps an "orket memory" section of it up to
# date: run it before `codex` (or from a git hook). Everything outside the
# markers is yours and is left as it is; the section is replaced whole.
# Usage: codex-agents-md.sh [AGENT] (default: codex)
set -eu
agent=${1:-codex}
file=AGENTS.md
begin='<!-- orket memory: begin (written by orket; edit .orket/memory/AGENT_MEMORY.md instead) -->'
end='<!-- orket memory: end -->'
tmp=$(mktemp "${TMPDIR:-/tmp}/agents.XXXXXX")
trap 'rm -f "$tmp"' EXIT
if [ -f "$file" ]; then
	awk -v b="$begin" -v e="$end" '$0 == b {skip = 1; next} $0 == e {skip = 0; next} !skip' "$file" > "$tmp"
fi
{
	cat "$tmp"
	[ -s "$tmp" ] && [ -n "$(tail -c 1 "$tmp")" ] && echo
	echo "$begin"
	orket memory --agent "$agent"
	echo "$end"
} > "$file.orket-new"
mv "$file.orket-new" "$file"
