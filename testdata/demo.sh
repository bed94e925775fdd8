#!/bin/sh
# The demo of `make demo`: orket end to end on a throwaway copy of
# testdata/example. Every step says what it shows and fails loudly if orket
# does not behave as described.
set -eu

ORKET=${ORKET:-$(pwd)/bin/orket}
EXAMPLE=$(pwd)/testdata/example
WORK=$(mktemp -d "${TMPDIR:-/tmp}/orket-demo.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then B=$(printf '\033[1m') N=$(printf '\033[0m'); else B= N=; fi
step() { printf '\n%s== %s%s\n' "$B" "$*" "$N"; }
fail() { printf 'demo FAILED: %s\n' "$*" >&2; exit 1; }
run() { printf '$ %s\n' "$*"; "$@"; }

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.com
export GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.com

step "A fresh repository: a small Go service"
cp -R "$EXAMPLE"/. "$WORK"
cd "$WORK"
git init -q -b main
git add -A
git commit -q -m "greeter"
git ls-files

step "orket init detects the verify steps from go.mod"
run "$ORKET" init
grep -q 'run: go test ./...' orket.yaml || fail "orket.yaml has no go test step"
[ -f .orket/.gitignore ] || fail ".orket/.gitignore was not written"

step "orket schema --check reads orket.yaml as a run would"
run "$ORKET" schema --check

step "A mistake in orket.yaml is named with its line and what to write"
cp orket.yaml orket.yaml.good
sed 's/^  profiles:/  profils:/' orket.yaml.good > orket.yaml
if "$ORKET" schema --check 2>err.txt; then fail "a broken orket.yaml was accepted"; fi
cat err.txt
grep -q 'E_CONFIG_INVALID: orket.yaml:7: unknown key "profils" in verify; did you mean "profiles"' err.txt || fail "wrong error"
mv orket.yaml.good orket.yaml

step "Agents and CI read one JSON object"
run "$ORKET" schema --check --json

step "A second init leaves your orket.yaml alone"
if "$ORKET" init 2>err.txt; then fail "init overwrote orket.yaml"; fi
cat err.txt

printf '\ndemo passed\n'
