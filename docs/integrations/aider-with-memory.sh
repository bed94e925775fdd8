#!/bin/sh
# Start aider with orket's memory as a read-only file in its context:
# orket memory is written to .orket/memory/for-aider.md (ignored by git, as
# all of .orket) and passed with --read. Arguments go to aider.
set -eu
out=.orket/memory/for-aider.md
mkdir -p .orket/memory
orket memory --agent "${ORKET_AGENT:-aider}" > "$out"
exec aider --read "$out" "$@"
