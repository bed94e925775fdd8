# make demo: orket end to end on testdata/example.  make test: the checks
# a change must pass, in minutes.  make test-long: the exhaustive suites.
# CI (.ci/run) runs all three.
GO      ?= go
BIN     := bin/orket
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# urfave/cli's man-page and markdown writers (and the markdown libraries
# they pull in) are never used: left out, they cost nothing at start.
TAGS    := urfave_cli_no_docs
FUZZTIME ?= 5s

.PHONY: all build install test test-long test-deps fmt-check vet race unit long scores fuzz demo bench bench-learning clean

all: build

build:
	$(GO) build -tags $(TAGS) -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/orket

install:
	$(GO) install -tags $(TAGS) -ldflags "$(LDFLAGS)" ./cmd/orket

# make test runs every test in -short mode: the exhaustive suites (the
# barrier matrix, the crash points, the transaction's edit tables in every
# watcher mode, eight clones over ssh, 16 appending processes, 200 MB
# streams) run a representative slice of themselves there, and whole
# under make test-long (LONG_TESTS; TestLongTests keeps that list equal to
# the tests that read testing.Short). The packages that run goroutines of
# their own are race-checked (RACE_PKGS, and txn's tests of its scans,
# hook queries and journals, TXN_RACE); the rest, and the end-to-end
# scripts (whose orket is the test binary), run without the race
# detector's cost. Both passes vet what they test with every analyzer
# (-vet=all, what go vet ./... runs), side by side: much of the tests'
# time is spent waiting on git and the processes they start. Each go test
# has a -timeout sized for a loaded machine. The fuzz targets run their
# seed corpora in every go test, and fuzz under make test-long.
test: test-deps fmt-check
	@$(MAKE) --no-print-directory -j2 --output-sync=target race unit
	@$(MAKE) --no-print-directory scores

RACE_PKGS    := ./verify ./guardrails ./memsync ./internal/helpercmd ./internal/fsmonitor/... ./internal/contain
TXN_RACE     := TestScanCacheTrust|TestFSMonitorTrust|TestJournalSeesLaterWrites|TestSnapshotSurvivesGC
race_pkgs     = $(shell $(GO) list $(RACE_PKGS))
plain_pkgs    = $(filter-out $(race_pkgs),$(shell $(GO) list ./...))
TEST_TIMEOUT ?= 15m
LONG_TIMEOUT ?= 60m
LONG_TESTS   := TestBarrierSuite|TestRevertRestoresEverything|TestRecoverFromRef|TestHostileEdits|TestPlainGitRestore|TestSSH|TestEightClones|TestHugeOutputKeepsATail|TestCrashPoints|TestAttemptCountSurvivesKills|TestRejectSurvivesKills|TestSyncPullSurvivesKills|TestRejectAsksOnATerminal|TestConcurrentAppenders|TestLongLineCuts|TestWriter200MB
LONG_FUZZTIME ?= 20s

race:
	$(GO) test -race -short -count=1 -vet=all -timeout $(TEST_TIMEOUT) $(RACE_PKGS)
	$(GO) test -race -short -count=1 -vet=off -timeout $(TEST_TIMEOUT) -run '^($(TXN_RACE))$$' ./txn

unit:
	$(GO) test -short -count=1 -vet=all -timeout $(TEST_TIMEOUT) $(plain_pkgs)

# The exhaustive suites whole, then every fuzz target for LONG_FUZZTIME;
# it prints how long it took.
test-long:
	@start=$$(date +%s); $(MAKE) --no-print-directory long fuzz FUZZTIME=$(LONG_FUZZTIME); rc=$$?; \
	echo "make test-long: $$(( $$(date +%s) - start )) s"; exit $$rc

# The whole suites of the transaction and the barrier run under the race
# detector here, as every test did before make test was cut to minutes.
long:
	$(GO) test -race -count=1 -timeout $(LONG_TIMEOUT) -run '^($(LONG_TESTS))$$' . ./txn/... $(RACE_PKGS)
	$(GO) test -count=1 -timeout $(LONG_TIMEOUT) -run '^($(LONG_TESTS))$$' $(filter-out $(shell $(GO) list . ./txn/...),$(plain_pkgs))

# The tools the end-to-end scripts drive besides go and git (node and npm
# for the Node fixtures, make, ssh-keygen for signed commits, python3, pytest
# and flake8 for the Python lessons): installed
# from Debian's packages when missing and apt-get can; otherwise the
# scripts that need them skip, saying why.
TEST_TOOLS := cc:gcc node:nodejs npm:npm make:make ssh-keygen:openssh-client python3:python3 pytest-3:python3-pytest flake8:flake8
test-deps:
	@missing=""; for t in $(TEST_TOOLS); do command -v $${t%%:*} >/dev/null || missing="$$missing $${t#*:}"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
		echo "installing$$missing for the end-to-end scripts"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else echo "missing$$missing (no root apt-get): the scripts that need them will skip"; fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# The classifier's scores on its corpus of real output: per tag precision,
# recall and F1, exact match and no-tag false positives of the train and
# held-out sets and of each batch (classify/scores_test.go, which fails
# when the held-out set misses its targets).
scores:
	@out=$$($(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run '^TestScores$$' -v ./classify 2>&1); rc=$$?; \
	printf '%s\n' "$$out" | grep -E '^ +(scores_test\.go:[0-9]+: (train|held-out|batch)|\||macro-F1)' | \
		sed -E 's/^ +//; s/^scores_test\.go:[0-9]+: //'; \
	if [ $$rc -ne 0 ]; then printf '%s\n' "$$out"; fi; exit $$rc

# Each fuzz target runs for FUZZTIME on top of its seed corpus (make
# test-long runs it with LONG_FUZZTIME). Go 1.26's fuzzing coordinator can
# fail a target at the end of its time with a bare "context deadline
# exceeded" when a worker is still busy (golang/go#75804, fixed in Go
# 1.27): such a run found no failing input (a failure writes one), and the
# target's seed corpus is replayed as a test to make sure.
FUZZ_TARGETS := config:FuzzParse verify:FuzzTail classify:FuzzClassify lessons:FuzzRead \
	sandbox:FuzzBases feedback:FuzzCategorize feedback:FuzzInsertMemory memsync:FuzzMerge \
	guardrails:FuzzGuardrailsDoc guardrails:FuzzParseVersion txn:FuzzApplyDelta txn:FuzzPackEntry \
	internal/rawjson:FuzzObject internal/gitignore:FuzzMatch internal/inert:FuzzText \
	patch:FuzzParse redact:FuzzWriter

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=./$${t%%:*}; name=$${t#*:}; \
		echo "$(GO) test -run='^$$' -fuzz='^$$name\$$' -fuzztime=$(FUZZTIME) $$pkg"; \
		out=$$($(GO) test -timeout $(TEST_TIMEOUT) -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) $$pkg 2>&1); rc=$$?; \
		printf '%s\n' "$$out"; \
		[ $$rc -eq 0 ] && continue; \
		if printf '%s\n' "$$out" | grep -qx '    context deadline exceeded' && \
			! printf '%s\n' "$$out" | grep -q 'Failing input written'; then \
			echo "$$name: the coordinator's deadline race (golang/go#75804), no failing input: replaying the corpus"; \
			$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run="^$$name\$$" $$pkg || exit 1; \
		else exit 1; fi; \
	done

demo: build
	ORKET=$(CURDIR)/$(BIN) ./testdata/demo.sh

# The transaction at 10,000, 100,000 and 1,000,000 files against git status,
# with and without Watchman as fsmonitor (bench/run.sh: whole commands with
# hyperfine and the Go benchmarks of the phases, on repositories whose index
# is refreshed as a user's is), then the other Go benchmarks; the results
# go into docs/benchmarks.md. BENCH_SIZES and BENCH_RUNS choose less.
BENCH_SIZES ?= 10000 100000 1000000
BENCH_RUNS  ?= 10
bench: build
	@command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }
	@command -v watchman >/dev/null || apt-get install -y -qq watchman || { apt-get update -qq && apt-get install -y -qq watchman; } || true
	rm -rf bin/bench && mkdir -p bin/bench
	BENCH_RESULTS=$(CURDIR)/bin/bench ORKET=$(CURDIR)/$(BIN) ./bench/defaults.sh
	BENCH_SIZES="$(BENCH_SIZES)" BENCH_RUNS=$(BENCH_RUNS) BENCH_RESULTS=$(CURDIR)/bin/bench ORKET=$(CURDIR)/$(BIN) GO=$(GO) ./bench/run.sh
	$(GO) test -timeout 30m -run '^$$' -bench HugeOutput -benchtime 3x ./verify | tee bin/bench/go-verify.txt
	ORKET_BENCH_LESSONS=10000,100000,1000000 $(GO) test -timeout 30m -run '^$$' -bench Advisories -benchtime 5x ./lessons | tee bin/bench/go-lessons.txt
	$(GO) test -timeout 30m -run '^$$' -bench . -benchtime 200x ./feedback | tee bin/bench/go-feedback.txt
	$(GO) test -timeout 30m -run '^$$' -bench 'Reject|Memory|TreeEvidence' -benchtime 20x ./learn | tee bin/bench/go-learn.txt
	$(GO) test -timeout 30m -run '^$$' -bench BaselineCached -benchtime 5x . | tee bin/bench/go-root.txt
	$(GO) test -timeout 30m -run '^$$' -bench Sync -benchtime 5x ./memsync | tee bin/bench/go-memsync.txt
	$(GO) test -timeout 30m -run '^$$' -bench . -benchtime 20x ./guardrails | tee bin/bench/go-guardrails.txt
	$(GO) test -timeout 30m -run '^$$' -bench State -benchtime 200x ./verdict | tee bin/bench/go-verdict.txt
	$(GO) test -timeout 30m -run '^$$' -bench 'Each$$' -benchtime 10x ./lessons | tee bin/bench/go-lessons-read.txt
	$(MAKE) --no-print-directory bench-learning
	./bench/refresh.sh bin/bench

# The learning benchmark: each trace's agent tasks played through the real
# orket with its memory kept and wiped (bench/learning); a trace's report
# and per-task table go to bin/bench/learning.
bench-learning: build
	$(GO) run ./bench/learning -orket $(CURDIR)/$(BIN) -trace go,python,node -out bin/bench/learning

clean:
	rm -rf bin
