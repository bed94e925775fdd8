#!/bin/sh
# The demo of `make demo`: orket end to end on a throwaway copy of
# testdata/example. Every step says what it shows and fails loudly if orket
# does not behave as described.
set -eu

ORKET=${ORKET:-$(pwd)/bin/orket}
EXAMPLE=$(pwd)/testdata/example
WORK=$(mktemp -d "${TMPDIR:-/tmp}/orket-demo.XXXXXX")
TEAM=$(mktemp -d "${TMPDIR:-/tmp}/orket-demo-team.XXXXXX")
ERR=$(mktemp "${TMPDIR:-/tmp}/orket-demo-err.XXXXXX")
trap 'rm -rf "$WORK" "$TEAM" "$ERR"' EXIT

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then B=$(printf '\033[1m') N=$(printf '\033[0m'); else B= N=; fi
step() { printf '\n%s== %s%s\n' "$B" "$*" "$N"; }
fail() { printf 'demo FAILED: %s\n' "$*" >&2; exit 1; }
# run shows a command as a person would type it (quoted where the shell
# needs it), then runs it.
quote() {
  for a; do
    case $a in
      '' | *[!A-Za-z0-9_./:=@%+,-]*) printf "'%s' " "$(printf '%s' "$a" | sed "s/'/'\\\\''/g")" ;;
      *) printf '%s ' "$a" ;;
    esac
  done
}
run() {
  shown=$1; [ "$1" = "$ORKET" ] && shown=orket
  shift
  printf '$ %s%s\n' "$(quote "$shown")" "$(quote "$@")" | sed 's/ $//'
  if [ "$shown" = orket ]; then "$ORKET" "$@"; else "$shown" "$@"; fi
}

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
if "$ORKET" schema --check 2>"$ERR"; then fail "a broken orket.yaml was accepted"; fi
cat "$ERR"
grep -q 'E_CONFIG_INVALID: orket.yaml:[0-9]*: unknown key "profils" in verify; did you mean "profiles"' "$ERR" || fail "wrong error"
mv orket.yaml.good orket.yaml

step "Agents and CI read one JSON object"
run "$ORKET" schema --check --json

step "A second init leaves your orket.yaml alone"
if "$ORKET" init 2>"$ERR"; then fail "init overwrote orket.yaml"; fi
cat "$ERR"

git add orket.yaml .orket/.gitignore
git commit -q -m "orket.yaml"
before=$(git ls-files -s; git status --porcelain; cat api/greet.go | cksum)

step "An edit that breaks a test is reverted bit for bit"
run "$ORKET" run --yes --scope api -- sed -i 's/Hello, %s!/Hi %s/' api/greet.go && fail "a breaking edit passed" || true
after=$(git ls-files -s; git status --porcelain; cat api/greet.go | cksum)
[ "$before" = "$after" ] || fail "the tree changed after the revert"
ls .orket/runs/*/change.patch >/dev/null || fail "the failed change was not kept as a patch"
echo "the tree is exactly as before; the failed change is kept in $(ls .orket/runs/*/change.patch)"

step "A step that needs an environment variable fails; orket records the lesson"
cat > orket.yaml <<'Y'
version: 1
verify:
  profiles:
    quick:
      - name: go-vet
        run: go vet ./...
      - name: smoke      # needs a database URL, as real integration tests do
        run: 'test -n "$GREETER_DB_URL" || { echo "GREETER_DB_URL is not set" >&2; exit 1; }'
      - name: go-test
        run: go test ./...
Y
cat orket.yaml
grep -q 'name: smoke' orket.yaml || fail "could not add the smoke step"
git commit -q -am "smoke step"
unset GREETER_DB_URL
run "$ORKET" run --yes --scope api -- sed -i 's/Hello/Hello/; s/name == ""/len(name) == 0/' api/greet.go && fail "the smoke step passed without its variable" || true
ls .orket/memory/failure_lessons.jsonl >/dev/null || fail "no lesson was recorded"
run "$ORKET" lessons list

step "The next run is warned before anything runs, with the check the lesson suggests"
"$ORKET" run --dry-run --scope api -- true 2>"$ERR"; cat "$ERR"
grep -q '! GREETER_DB_URL is not set' "$ERR" || fail "no advisory"
grep -q 'preflight FAILED: GREETER_DB_URL is not set' "$ERR" || fail "no preflight check"

step "--strict-preflight stops before touching anything"
before=$(git ls-files -s; git status --porcelain; cksum < api/greet.go)
if "$ORKET" run --yes --strict-preflight --scope api -- sed -i 's/world/there/' api/greet.go 2>"$ERR"; then fail "strict preflight let the run start"; fi
tail -n 1 "$ERR"
grep -q 'E_PREFLIGHT_FAILED' "$ERR" || fail "wrong code"
after=$(git ls-files -s; git status --porcelain; cksum < api/greet.go)
[ "$before" = "$after" ] || fail "strict preflight wrote something"
export GREETER_DB_URL=postgres://localhost/greeter

step "An edit that writes outside its scope is refused and undone"
if "$ORKET" run --yes --scope api -- sh -c 'echo "// sneaky" >> main.go' 2>"$ERR"; then fail "an out-of-scope edit passed"; fi
cat "$ERR"
grep -q 'E_WRITE_OUT_OF_SCOPE: .*main.go' "$ERR" || fail "wrong error"
[ -z "$(git status --porcelain)" ] || fail "the out-of-scope write was left behind"

step "A good edit passes verification and is kept"
run "$ORKET" run --yes --scope api -- sed -i 's/name = "world"/name = "world" \/\/ default/' api/greet.go
grep -q '// default' api/greet.go || fail "the good edit was not kept"
git diff --stat

step "An agent rejected three times in a row on one task is stopped; a person gets a report"
export ORKET_AGENT=demo-agent ORKET_TASK=GREET-7
for greeting in 'Hi %s' 'Hey %s' 'Yo %s'; do
  code=0
  run "$ORKET" run --yes --scope api -- sed -i "s/Hello, %s!/$greeting/" api/greet.go 2>"$ERR" || code=$?
  grep -E '^  (verdict|attempt) ' "$ERR" || true
  tail -n 1 "$ERR"
done
[ "$code" = 6 ] || fail "the third rejection exited $code, not 6 (E_ESCALATED)"
report=$(ls .orket/escalations/*.md)
sed -n '1,/^## Attempts/p' "$report"
grep -c '^### Attempt' "$report" | grep -qx 3 || fail "the report does not list the three attempts"
sed -n '/^## Recommendation/,$p' "$report"

step "While it is escalated, the task's runs stop before anything is written"
before=$(git ls-files -s; git status --porcelain; cksum < api/greet.go)
if "$ORKET" run --yes --scope api -- sed -i 's/Hello/Howdy/' api/greet.go 2>"$ERR"; then fail "an escalated task ran"; fi
tail -n 1 "$ERR"
after=$(git ls-files -s; git status --porcelain; cksum < api/greet.go)
[ "$before" = "$after" ] || fail "a refused run wrote something"
run "$ORKET" task list

step "A person resolves it; the agent goes on"
run "$ORKET" task resolve GREET-7 --reason "the greeting is fixed by the spec; told the agent"
run "$ORKET" run --yes --scope api -- sed -i 's/name = "world" \/\/ default/name = "world" \/\/ the default/' api/greet.go 2>"$ERR" || { cat "$ERR"; fail "the run after resolve failed"; }
grep '^  verdict ' "$ERR"

step "A reviewer rejects that change, though it passed: it is taken out, and the agent's next runs are told"
before_reject=$(cksum < api/greet.go)
run "$ORKET" reject --reason "the examples in the comment are wrong: the default is documented elsewhere"
[ "$(cksum < api/greet.go)" != "$before_reject" ] || fail "the rejected change is still in the tree"
grep -q '// default' api/greet.go || fail "the tree is not as before the rejected run"
ls .orket/rejected/*.patch >/dev/null || fail "the rejected change was not kept as a patch"
run "$ORKET" memory --scope api | sed -n '/^## Earlier reviews/,/^- /p'
unset ORKET_AGENT ORKET_TASK

step "Five failures of one kind by one agent become a proposal for its guardrails"
export ORKET_AGENT=ci-bot
unset GREETER_DB_URL
# Five tasks (each its own: two runs of one task that are red without
# their change would go to a person, E_BASELINE_RED).
for word in one two three four five; do
  ORKET_TASK="docs-$word" "$ORKET" run --yes --scope api -- sed -i "s|^// Package api.*|// Package api greets ($word).|" api/greet.go 2>"$ERR" && fail "the smoke step passed without its variable" || true
done
grep -E '^  (proposed|a person decides)' "$ERR" || { cat "$ERR"; fail "five failures made no proposal"; }
run "$ORKET" lessons review
proposal=$("$ORKET" lessons review | awk 'NR == 1 {print $1}')

step "A person approves it: version 1 of the agent's guardrails, with its sources"
run "$ORKET" lessons approve "$proposal" --by "a reviewer"
run "$ORKET" guardrails show | sed -n '/^## /,$p'
grep -q 'GREETER_DB_URL' .orket/guardrails/ci-bot/v1.md || fail "v1 does not hold the rule"

step "The agent's next edit command is given it (ORKET_GUARDRAILS), and the run votes for it"
export GREETER_DB_URL=postgres://localhost/greeter
run "$ORKET" run --yes --scope api -- sh -c 'grep -c GREETER_DB_URL "$ORKET_GUARDRAILS" >/dev/null && sed -i "s|^// Package api.*|// Package api greets people.|" api/greet.go' 2>"$ERR" || { cat "$ERR"; fail "the run with guardrails failed"; }
grep -E '^  (guardrails|verdict) ' "$ERR"
run "$ORKET" stats --agent ci-bot
git checkout -q -- api/greet.go
unset ORKET_AGENT

step "The memory travels with the repository: another clone (a CI runner) pulls it"
git init -q --bare -b main "$TEAM/team.git"
git remote add team "$TEAM/team.git"
git push -q team main
run "$ORKET" sync team
git clone -q "$TEAM/team.git" "$TEAM/runner"
(cd "$TEAM/runner" && run "$ORKET" sync --pull && run "$ORKET" guardrails show --agent ci-bot | sed -n 2p)
[ -f "$TEAM/runner/.orket/guardrails/ci-bot/v1.md" ] || fail "the guardrails did not travel"

step "A verify-only run, as a CI job runs it, with --json for machines"
run "$ORKET" run --json --base HEAD | grep -E '"(code|touch_set|status)"' || fail "verify-only run failed"

printf '\ndemo passed\n'
