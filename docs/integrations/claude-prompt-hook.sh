#!/bin/sh
# Claude Code hook (UserPromptSubmit or SessionStart): put what orket knows
# into Claude's context before it plans: the agent memory people keep, the
# patterns of reviewers' rejections, earlier reviews of the area, and past
# failures of the checks with their preflight checks. Whatever it prints
# is added to the context. ORKET_AGENT names the agent (default: claude).
cd "${CLAUDE_PROJECT_DIR:-.}" || exit 0
cat > /dev/null
orket memory --agent "${ORKET_AGENT:-claude}" 2>/dev/null || true
exit 0
