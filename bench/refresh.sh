#!/bin/sh
# bench/refresh.sh RESULTS_DIR: replace the section of docs/benchmarks.md
# between the "latest make bench" markers with the machine, the commands
# and the numbers of this run.
set -eu
R=$1
DOC=${DOC:-docs/benchmarks.md}
OUT=$(mktemp)
{
  echo "<!-- bench:begin (written by make bench; do not edit by hand) -->"
  echo "## Latest \`make bench\`"
  echo
  echo "Run on $(date -u +%Y-%m-%dT%H:%MZ): $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo),"
  echo "$(go version | cut -d' ' -f3-), $(uname -sr), $(git --version), $(hyperfine --version 2>/dev/null || echo hyperfine),"
  echo "$(watchman --version 2>/dev/null | sed 's/^/watchman /' || echo 'no watchman')."
  echo
  echo '```'
  echo "$ make bench     # bench/defaults.sh, bench/run.sh, then the Go benchmarks below"
  echo "$ BENCH_ROUNDS=3 ./bench/defaults.sh"
  echo "$ BENCH_SIZES='10000 100000 1000000' BENCH_RUNS=10 ./bench/run.sh"
  echo '```'
  for f in "$R"/*.md; do
    [ -e "$f" ] || continue
    echo
    echo "### $(head -n 1 "$f.title" 2>/dev/null || basename "$f" .md)"
    echo
    cat "$f"
  done
  [ -e "$R/no-watchman.txt" ] && { echo; cat "$R/no-watchman.txt"; }
  for f in "$R"/learning/*.md; do
    [ -e "$f" ] || continue
    echo
    cat "$f"
  done
  echo
  echo "### Go benchmarks"
  echo
  echo '```'
  echo "$ ORKET_BENCH_REPOS=N=DIR go test -run '^\$' -bench . -benchtime 10x ./txn   # per size, on bench/run.sh's repositories"
  echo "$ go test -run '^\$' -bench HugeOutput -benchtime 3x ./verify"
  echo "$ ORKET_BENCH_LESSONS=10000,100000,1000000 go test -run '^\$' -bench Advisories -benchtime 5x ./lessons"
  echo "$ go test -run '^\$' -bench . -benchtime 200x ./feedback"
  echo "$ go test -run '^\$' -bench 'Reject|Memory|TreeEvidence' -benchtime 20x ./learn"
  echo "$ go test -run '^\$' -bench BaselineCached -benchtime 5x ."
  echo "$ go test -run '^\$' -bench Sync -benchtime 5x ./memsync"
  echo "$ go test -run '^\$' -bench . -benchtime 20x ./guardrails"
  echo "$ go test -run '^\$' -bench State -benchtime 200x ./verdict"
  echo "$ go test -run '^\$' -bench 'Each\$' -benchtime 10x ./lessons"
  grep -h '^Benchmark' "$R"/go-*.txt || true
  echo '```'
  echo "<!-- bench:end -->"
} > "$OUT"
if grep -q '<!-- bench:begin' "$DOC"; then
  awk -v new="$OUT" '
    /<!-- bench:begin/ { while ((getline line < new) > 0) print line; skip = 1; next }
    /<!-- bench:end -->/ { skip = 0; next }
    !skip { print }' "$DOC" > "$DOC.tmp" && mv "$DOC.tmp" "$DOC"
else
  { echo; cat "$OUT"; } >> "$DOC"
fi
rm -f "$OUT"
echo "refreshed $DOC"
