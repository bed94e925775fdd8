#!/bin/sh
# bench/defaults.sh: what a run costs with the defaults a new user gets
# (orket init's configuration: the kernel sandbox auto, process
# containment on, no file-system watcher), beside the machine's own
# reference times, three consecutive times (not the best of them). Each
# figure is a ratio to its reference measured in the same round:
#   - a kept run on a small repository / git status (hyperfine means)
#   - a verify-only run on it / git status
#   - an edit command's edit_ms with the sandbox / without it (the median
#     of 9 runs of sh -c 'echo x >> f', from --json; whole milliseconds),
#     and a whole kept run with the sandbox / without it (hyperfine)
#   - orket version / true (start-up)
#   - a `true` verify step's verify_ms / the same true run alone
#   - on 100,000 files (bench/gen.sh; BENCH_BIG=0 leaves them out): a run
#     whose 10-file edit fails its step and is reverted / git status on
#     the refreshed index, and git stash push -u + pop of the same change
#     / the same run (hyperfine means of 5 runs each)
# The sandbox-off rows are labelled so. Writes RESULTS/0-defaults.md.
set -eu
ORKET=${ORKET:?set ORKET to the orket binary}
RESULTS=${BENCH_RESULTS:?set BENCH_RESULTS}
ROUNDS=${BENCH_ROUNDS:-3}
BIG=${BENCH_BIG:-1}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/orket-defaults.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

# mean_ms CMD: hyperfine's mean of CMD, in milliseconds.
mean_ms() {
  hyperfine -N --warmup 3 --runs 20 --export-json "$WORK/h.json" "$1" >/dev/null 2>&1
  python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["results"][0]["mean"]*1000))' "$WORK/h.json"
}

# mean_big_ms PREPARE CMD: hyperfine's mean of CMD over 5 runs, each after
# PREPARE, in milliseconds (the 100,000-file rows).
mean_big_ms() {
  hyperfine --warmup 1 --runs 5 -i --prepare "$1" --export-json "$WORK/h.json" "$2" >/dev/null 2>&1
  python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["results"][0]["mean"]*1000))' "$WORK/h.json"
}

# median_json FIELD CMD: the median over 9 runs of a --json field (a path
# such as edit.duration_ms), each run's change undone by git after it.
median_json() {
  field=$1; shift
  for i in 1 2 3 4 5 6 7 8 9; do
    sh -c "$*" 2>/dev/null | python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[k]
print(v)' "$field"
    git checkout -q -- pkg
  done | sort -n | sed -n 5p
}

# settle lets the racy-git second pass and refreshes the index, so that
# git status, the reference, re-hashes nothing, as in a user's tree.
settle() { sleep 1; git update-index -q --refresh >/dev/null 2>&1 || true; }

ratio() { python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print("%.2fx" % (a / b) if b > 0 else "-")' "$1" "$2"; }

mkdir "$WORK/small" && cd "$WORK/small"
git init -q && mkdir pkg
for i in $(seq 1 100); do echo "line $i" > "pkg/f$i.txt"; done
# orket init's defaults: sandbox auto, containment on, no fsmonitor; one
# no-op step so the figures are orket's own.
printf 'verify:\n  default: quick\n  profiles:\n    quick: [{name: noop, run: "true"}]\nsandbox: {mode: auto}\n' > orket.yaml
git add -A && git commit -q -m init
"$ORKET" run -q >/dev/null 2>&1 || true # .orket made, caches warm
settle

if [ "$BIG" = 1 ]; then
  # The failing run of bench/run.sh: its step fails with the change and
  # passes without it, and each run is a task of its own (an agent's
  # runs are): three rejections of one task would escalate it, and a run
  # of an escalated task stops before its snapshot.
  "$HERE/gen.sh" 100000 "$WORK/big" >/dev/null
  (cd "$WORK/big" &&
    printf 'verify:\n  profiles:\n    quick: [{name: fail, run: ["sh", "-c", "! test -e pkg0000/new0.go"]}]\nsandbox: {mode: auto}\n' > orket.yaml &&
    printf 'orket.yaml\n.orket/\n' >> .git/info/exclude && settle)
fi
BIG_EDIT='for i in 0 1 2 3 4; do echo "// edit" >> pkg000$i/sub$i/f$((i*1100)).go; echo new > pkg000$i/new$i.go; done'
# Each measured run a task of its own (hyperfine's shell expands it).
TASK='--task "bench-$(date +%s%N)"'

out=$RESULTS/0-defaults.md
echo "orket run with the defaults orket init writes, $ROUNDS rounds in a row" > "$out.title"
head="| figure | reference | target |"
sep="|---|---|---:|"
for r in $(seq 1 "$ROUNDS"); do head="$head round $r |"; sep="$sep---:|"; done
printf '%s\n%s\n' "$head" "$sep" > "$WORK/head.md"
: > "$WORK/rows"
for r in $(seq 1 "$ROUNDS"); do
  status=$(mean_ms 'git status --porcelain')
  truth=$(mean_ms 'true')
  kept=$(mean_ms "$ORKET run -q --yes --scope pkg -- sh -c 'date +%N > pkg/f1.txt'")
  verify=$(mean_ms "$ORKET run -q")
  version=$(mean_ms "$ORKET version")
  edit_on=$(median_json edit.duration_ms "$ORKET run --yes --json --scope pkg -- sh -c 'echo x >> pkg/f2.txt'")
  sed -i 's/mode: auto/mode: off/' orket.yaml && git commit -qam off
  edit_off=$(median_json edit.duration_ms "$ORKET run --yes --json --scope pkg -- sh -c 'echo x >> pkg/f2.txt'")
  kept_off=$(mean_ms "$ORKET run -q --yes --scope pkg -- sh -c 'date +%N > pkg/f1.txt'")
  sed -i 's/mode: off/mode: auto/' orket.yaml && git commit -qam auto
  settle
  step=$(median_json timings_ms.verify_ms "$ORKET run --json")
  if [ "$BIG" = 1 ]; then
    cd "$WORK/big"
    big_status=$(mean_big_ms 'true' 'git status --porcelain -uall')
    big_run=$(mean_big_ms 'true' "$ORKET run -q --yes $TASK --scope . -- sh -c '$BIG_EDIT'")
    "$ORKET" run --json --yes --task "check-$r" --scope . -- sh -c "$BIG_EDIT" > "$WORK/check.json" 2>/dev/null || true
    grep -q '"code": "E_VERIFY_FAILED_REVERTED"' "$WORK/check.json" ||
      { echo "bench: the 100,000-file run no longer fails and reverts:"; cat "$WORK/check.json"; exit 1; }
    big_stash=$(mean_big_ms "sh -c '$BIG_EDIT'" 'git stash push -q -u && git stash pop -q && git checkout -q -- . && git clean -fdq -e orket.yaml')
    cd "$WORK/small"
  fi
  {
    echo "kept $(ratio "$kept" "$status") ($kept ms / $status ms)"
    echo "verify $(ratio "$verify" "$status") ($verify ms / $status ms)"
    echo "edit $(ratio "$edit_on" "$edit_off") ($edit_on ms / $edit_off ms, sandbox off)"
    echo "sandbox $(ratio "$kept" "$kept_off") ($kept ms / $kept_off ms, sandbox off)"
    echo "version $(ratio "$version" "$truth") ($version ms / $truth ms)"
    echo "step $(ratio "$step" "$truth") ($step ms / $truth ms)"
    if [ "$BIG" = 1 ]; then
      echo "big $(ratio "$big_run" "$big_status") ($big_run ms / $big_status ms)"
      echo "stash $(ratio "$big_run" "$big_stash") ($big_run ms / $big_stash ms)"
    fi
  } >> "$WORK/rows"
done
{
  cat "$WORK/head.md"
  for f in "kept|a kept run, small repository (100 files)|git status|<= 5x" \
           "verify|a verify-only run, small repository|git status|<= 2.5x" \
           "edit|an edit command's edit_ms, sandbox on (whole ms)|the same, sandbox off|<= 1.3x" \
           "sandbox|a kept run, sandbox on|the same run, sandbox off|-" \
           "version|orket version (start-up)|true|<= 4x" \
           "step|a true step's verify_ms (whole ms)|true alone|<= 2x" \
           "big|a failing run on 100,000 files (10-file edit, reverted)|git status (index refreshed)|<= 1.3x" \
           "stash|the same run|git stash push -u + pop of the same change|keep (0.24x)"; do
    grep -q "^${f%%|*} " "$WORK/rows" || continue
    key=${f%%|*}; rest=${f#*|}
    printf '| %s | %s | %s |' "${rest%%|*}" "$(echo "$rest" | cut -d'|' -f2)" "$(echo "$rest" | cut -d'|' -f3)"
    grep "^$key " "$WORK/rows" | cut -d' ' -f2- | while read -r v; do printf ' %s |' "$v"; done
    echo
  done
} > "$out"
cat "$out"
