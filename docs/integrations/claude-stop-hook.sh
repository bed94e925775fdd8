#!/bin/sh
# Claude Code Stop hook: before Claude ends its turn, verify the tree with
# orket. On failure it exits 2, so Claude reads why (the failing step's
# tail, the outcome code, the advisories) and keeps working.
# Settings: see docs/integrations.md.
cd "${CLAUDE_PROJECT_DIR:-.}" || exit 0
cat > /dev/null   # the hook's JSON input is not needed
if out=$(orket run 2>&1); then
  exit 0
fi
{
  echo "orket verify failed; fix this before finishing:"
  printf '%s\n' "$out" | tail -n 60
} >&2
exit 2
