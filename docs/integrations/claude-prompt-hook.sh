#!/bin/sh
# Claude Code UserPromptSubmit hook: put orket's advisories (past failures
# likely to repeat here, with their preflight checks) into Claude's context
# before it starts. Whatever it prints is added to the prompt's context.
cd "${CLAUDE_PROJECT_DIR:-.}" || exit 0
cat > /dev/null
echo "orket advisories for this repository (past failures likely to repeat):"
orket preflight 2>/dev/null || true
exit 0
