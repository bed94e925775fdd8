#!/bin/sh
# bench/run.sh: the whole-command benchmarks of make bench, with hyperfine.
#   1. orket run overhead on a small repository: a profile of one no-op
#      step against running the step directly (SPEC 9: under 50 ms).
#   2. a failing orket run with a 10-file edit on a generated repository of
#      $BENCH_FILES files (default 100,000), against git status and
#      git stash push -u + pop on the same tree.
set -eu
ORKET=${ORKET:-$(pwd)/bin/orket}
FILES=${BENCH_FILES:-100000}
RUNS=${BENCH_RUNS:-10}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/orket-bench.XXXXXX")
RESULTS=${BENCH_RESULTS:-$WORK/results}
mkdir -p "$RESULTS"
trap 'rm -rf "$WORK"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

echo "== orket run overhead on a small repository"
mkdir "$WORK/small" && cd "$WORK/small"
git init -q && mkdir pkg && echo a > pkg/a
printf 'verify:\n  profiles:\n    quick: [{name: noop, run: ["true"]}]\n' > orket.yaml
git add -A && git commit -q -m init
echo "orket run on a small repository (one no-op step)" > "$RESULTS/1-small.md.title"
hyperfine -N --warmup 3 --runs 30 --export-markdown "$RESULTS/1-small.md" \
  -n 'true (the step alone)' 'true' \
  -n 'orket run (verify-only, one no-op step)' "$ORKET run -q" \
  -n 'orket run --scope pkg (edit + verify + keep)' "$ORKET run -q --yes --scope pkg -- sh -c 'date +%N > pkg/a'"
cat "$RESULTS/1-small.md"

echo "== transaction on a $FILES-file repository with a 10-file change"
mkdir "$WORK/big" && cd "$WORK/big"
git init -q
# Generating with awk and xargs keeps this shell portable and quick.
awk -v n="$FILES" 'BEGIN { for (i = 0; i < n; i++) printf "pkg%03d/sub%d\n", i % 1000, i % 7 }' | sort -u | xargs mkdir -p
awk -v n="$FILES" -v dir="$WORK/big" 'BEGIN { for (i = 0; i < n; i++) { f = sprintf("%s/pkg%03d/sub%d/f%d.go", dir, i % 1000, i % 7, i); printf "package p\n\nvar V%d = %d\n", i, i > f; close(f) } }'
git add -A && git commit -q -m init && git status --porcelain > /dev/null
printf 'verify:\n  profiles:\n    quick: [{name: fail, run: ["false"]}]\n' > orket.yaml
printf 'orket.yaml\n.orket/\n' >> .git/info/exclude
EDIT='for i in 0 1 2 3 4; do echo "// edit" >> pkg00$i/sub$i/f$i.go; echo new > pkg00$i/new$i.go; done'
# The run measured must be the real thing: a 10-file touch set, reverted.
"$ORKET" run --json --yes --scope . -- sh -c "$EDIT" > "$WORK/check.json" || true
grep -q '"code": "E_VERIFY_FAILED_REVERTED"' "$WORK/check.json" && grep -q '"touch_count": 10' "$WORK/check.json" &&
  grep -q '"revert_verified": true' "$WORK/check.json" || { echo "bench: orket run did not revert a 10-file change:"; cat "$WORK/check.json"; exit 1; }
[ -z "$(git status --porcelain)" ] || { echo "bench: tree not clean after revert"; exit 1; }
echo "Transaction on a $FILES-file repository with a 10-file change" > "$RESULTS/2-big.md.title"
hyperfine --warmup 1 --runs "$RUNS" -i --export-markdown "$RESULTS/2-big.md" \
  -n 'git status' 'git status --porcelain -uall' \
  -n 'git stash push -u + pop (10-file change)' --prepare "sh -c '$EDIT'" 'git stash push -q -u && git stash pop -q && git checkout -q -- . && git clean -fdq -e orket.yaml' \
  -n 'orket run, 10-file edit, failing verify, revert' "$ORKET run -q --yes --scope . -- sh -c '$EDIT'"
cat "$RESULTS/2-big.md"
