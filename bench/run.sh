#!/bin/sh
# bench/run.sh: the transaction benchmarks of make bench, in one run.
#   1. orket run on a small repository: a profile of one no-op step,
#      against running the step directly (target: under 50 ms).
#   2. for each size in BENCH_SIZES (default 10,000, 100,000 and
#      1,000,000 files), a repository made by bench/gen.sh (its index
#      refreshed after the racy-git second, so git status re-hashes
#      nothing), with git's Watchman hook installed (a private Watchman,
#      installed with apt-get when missing):
#        - the Go benchmarks of the transaction's phases on it
#          (BenchmarkTransaction, BenchmarkGitStatus, BenchmarkGitStashPushPop);
#        - whole commands with hyperfine: git status, orket run with a
#          10-file edit, a failing verify step and the revert, then both
#          again with core.fsmonitor naming the hook, and git stash
#          push -u + pop of the same change (up to 100,000 files).
#      The ratios to git status are in summary.md.
# Results go to BENCH_RESULTS; bench/refresh.sh writes them into
# docs/benchmarks.md.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ORKET=${ORKET:-$ROOT/bin/orket}
SIZES=${BENCH_SIZES:-"10000 100000 1000000"}
RUNS=${BENCH_RUNS:-10}
GO=${GO:-go}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/orket-bench.XXXXXX")
RESULTS=${BENCH_RESULTS:-$WORK/results}
mkdir -p "$RESULTS"
WATCHMAN_TMP=$WORK/watchman
cleanup() {
  [ -d "$WATCHMAN_TMP" ] && TMPDIR=$WATCHMAN_TMP watchman shutdown-server >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

echo "== orket run overhead on a small repository"
mkdir "$WORK/small" && cd "$WORK/small"
git init -q && mkdir pkg && echo a > pkg/a
printf 'verify:\n  profiles:\n    quick: [{name: noop, run: ["true"]}]\n' > orket.yaml
git add -A && git commit -q -m init
echo "orket run on a small repository (one no-op step)" > "$RESULTS/1a-small.md.title"
hyperfine -N --warmup 3 --runs 30 --export-markdown "$RESULTS/1a-small.md" \
  -n 'true (the step alone)' 'true' \
  -n 'orket run (verify-only, one no-op step)' "$ORKET run -q" \
  -n 'orket run --scope pkg (edit + verify + keep)' "$ORKET run -q --yes --scope pkg -- sh -c 'date +%N > pkg/a'"
cat "$RESULTS/1a-small.md"
# The same repository once busy: as many run records as retention keeps
# (lessons.retention.max_entries, 1,000 by default) and their logs.
echo "== with 1,000 run records"
n=$(find .orket/runs -name '*.json' | wc -l)
while [ "$n" -lt 1000 ]; do "$ORKET" run -q >/dev/null; n=$((n + 1)); done
echo "orket run on the small repository with 1,000 run records" > "$RESULTS/1b-small-busy.md.title"
hyperfine -N --warmup 3 --runs 30 --export-markdown "$RESULTS/1b-small-busy.md" \
  -n 'orket run (verify-only, one no-op step)' "$ORKET run -q" \
  -n 'orket run --scope pkg (edit + verify + keep)' "$ORKET run -q --yes --scope pkg -- sh -c 'date +%N > pkg/a'"
cat "$RESULTS/1b-small-busy.md"

# Watchman, private to this run: its clients (git's hook included) find
# their server through TMPDIR.
HOOK=""
command -v watchman >/dev/null || { apt-get install -y -qq watchman >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq watchman; } || true; }
SAMPLE=/usr/share/git-core/templates/hooks/fsmonitor-watchman.sample
if command -v watchman >/dev/null && command -v perl >/dev/null && [ -f "$SAMPLE" ]; then
  mkdir -p "$WATCHMAN_TMP"
  HOOK=.git/hooks/query-watchman
else
  echo "bench: no Watchman (watchman, perl or git's fsmonitor-watchman.sample missing): the fsmonitor rows are left out" | tee "$RESULTS/no-watchman.txt"
fi

# The 10-file change: 5 tracked files modified, 5 created (as
# BenchmarkTransaction's benchEdit).
EDIT='for i in 0 1 2 3 4; do echo "// edit" >> pkg000$i/sub$i/f$((i*1100)).go; echo new > pkg000$i/new$i.go; done'
# Each measured run a task of its own (hyperfine's shell expands it).
TASK='--task "bench-$(date +%s%N)"'
printf '| files | git status | orket run | ratio | git status, fsmonitor | orket run, fsmonitor | ratio to git status |\n|---:|---:|---:|---:|---:|---:|---:|\n' > "$RESULTS/summary.md"
REPOS=""
for N in $SIZES; do
  echo "== $N files"
  BIG=$WORK/big-$N
  "$ROOT/bench/gen.sh" "$N" "$BIG"
  cd "$BIG"
  # The step fails with the change and passes without it, as an agent's
  # failing change does: a step that failed without it too would be a red
  # baseline, and two of those in a row escalate the task, after which a
  # run stops before its snapshot (and costs 8 ms). Each run is a task of
  # its own ($TASK), as an agent's runs are: three rejections of one task
  # escalate it too (verdict.escalate_after, left at its default).
  printf 'verify:\n  profiles:\n    quick: [{name: fail, run: ["sh", "-c", "! test -e pkg0000/new0.go"]}]\n' > orket.yaml
  printf 'orket.yaml\n.orket/\n' >> .git/info/exclude
  if [ -n "$HOOK" ]; then
    printf '#!/bin/sh\nTMPDIR=%s exec perl %s "$@"\n' "$WATCHMAN_TMP" "$SAMPLE" > "$HOOK"
    chmod +x "$HOOK"
    # Watchman crawls the tree once, as it does when a user starts it.
    "$HOOK" 2 0 >/dev/null
  fi
  REPOS="${REPOS:+$REPOS,}$N=$BIG"
  # The phases, in process.
  (cd "$ROOT" && ORKET_BENCH_REPOS="$N=$BIG" $GO test -run '^$' -bench . -benchtime "${RUNS}x" -timeout 2h ./txn) | tee "$RESULTS/go-txn-$N.txt"
  git checkout -q -- . && git clean -fdq -e orket.yaml && sleep 1.2 && git update-index -q --refresh
  # The run measured must be the real thing: a 10-file touch set, reverted.
  "$ORKET" run --json --yes --scope . -- sh -c "$EDIT" > "$WORK/check.json" || true
  grep -q '"code": "E_VERIFY_FAILED_REVERTED"' "$WORK/check.json" && grep -q '"touch_count": 10' "$WORK/check.json" &&
    grep -q '"revert_verified": true' "$WORK/check.json" || { echo "bench: orket run did not revert a 10-file change:"; cat "$WORK/check.json"; exit 1; }
  [ -z "$(git status --porcelain)" ] || { echo "bench: tree not clean after revert"; git status --porcelain | head; exit 1; }
  NOFSM='git config --unset core.fsmonitor || true'
  FSM="git config core.fsmonitor $HOOK"
  set -- -n 'git status' --prepare "$NOFSM" 'git status --porcelain -uall' \
    -n 'orket run (10-file edit; failing verify; revert)' --prepare "$NOFSM" "$ORKET run -q --yes $TASK --scope . -- sh -c '$EDIT'"
  if [ -n "$HOOK" ]; then
    set -- "$@" -n 'git status (fsmonitor)' --prepare "$FSM" 'git status --porcelain -uall' \
      -n 'orket run (fsmonitor)' --prepare "$FSM" "$ORKET run -q --yes $TASK --scope . -- sh -c '$EDIT'"
  fi
  if [ "$N" -le 100000 ]; then
    set -- "$@" -n 'git stash push -u + pop (10-file change)' --prepare "$NOFSM; sh -c '$EDIT'" \
      'git stash push -q -u && git stash pop -q && git checkout -q -- . && git clean -fdq -e orket.yaml'
  fi
  echo "Transaction on a $N-file repository with a 10-file change" > "$RESULTS/2-big-$N.md.title"
  hyperfine --warmup 1 --runs "$RUNS" -i --export-markdown "$RESULTS/2-big-$N.md" --export-csv "$RESULTS/2-big-$N.csv" "$@"
  git config --unset core.fsmonitor || true
  # The runs measured were what they say: the last one still fails its
  # step and reverts (not an escalated task's early stop).
  "$ORKET" run --json --yes --scope . -- sh -c "$EDIT" > "$WORK/check.json" || true
  grep -q '"code": "E_VERIFY_FAILED_REVERTED"' "$WORK/check.json" ||
    { echo "bench: after the measured runs, orket run no longer fails and reverts:"; cat "$WORK/check.json"; exit 1; }
  cat "$RESULTS/2-big-$N.md"
  # The row of the summary: means in ms and ratios to git status.
  awk -F, -v n="$N" '
    NR > 1 { mean[$1] = $2 * 1000 }
    END {
      gs = mean["git status"]; o = mean["orket run (10-file edit; failing verify; revert)"]
      gf = mean["git status (fsmonitor)"]; of = mean["orket run (fsmonitor)"]
      printf "| %d | %.0f ms | %.0f ms | **%.2f** |", n, gs, o, o / gs
      if (of > 0) printf " %.0f ms | %.0f ms | **%.2f** |\n", gf, of, of / gs; else printf " - | - | - |\n"
    }' "$RESULTS/2-big-$N.csv" >> "$RESULTS/summary.md"
  cd "$WORK"
  [ -n "$HOOK" ] && TMPDIR=$WATCHMAN_TMP watchman watch-del "$BIG" >/dev/null 2>&1 || true
  rm -rf "$BIG"
done
echo "Summary: whole orket run against git status" > "$RESULTS/0-summary.md.title"
mv "$RESULTS/summary.md" "$RESULTS/0-summary.md"
cat "$RESULTS/0-summary.md"
