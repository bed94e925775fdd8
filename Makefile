# make demo: orket end to end on testdata/example.  make test: what CI runs.
GO      ?= go
BIN     := bin/orket
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# urfave/cli's man-page and markdown writers (and the markdown libraries
# they pull in) are never used: left out, they cost nothing at start.
TAGS    := urfave_cli_no_docs
FUZZTIME ?= 5s

.PHONY: all build install test test-deps fmt-check vet race scores fuzz demo bench clean

all: build

build:
	$(GO) build -tags $(TAGS) -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/orket

install:
	$(GO) install -tags $(TAGS) -ldflags "$(LDFLAGS)" ./cmd/orket

test: test-deps fmt-check vet race scores fuzz

# The tools the end-to-end scripts drive besides go and git (node and npm
# for the Node fixtures, make, ssh-keygen for signed commits): installed
# from Debian's packages when missing and apt-get can; otherwise the
# scripts that need them skip, saying why.
TEST_TOOLS := node:nodejs npm:npm make:make ssh-keygen:openssh-client
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

race:
	$(GO) test -race -count=1 ./...

# The classifier's scores on its corpus of real output: per tag precision,
# recall and F1, exact match and no-tag false positives of the train and
# held-out sets and of each batch (classify/scores_test.go, which fails
# when the held-out set misses its targets).
scores:
	@out=$$($(GO) test -count=1 -run '^TestScores$$' -v ./classify 2>&1); rc=$$?; \
	printf '%s\n' "$$out" | grep -E '^ +(scores_test\.go:[0-9]+: (train|held-out|batch)|\||macro-F1)' | \
		sed -E 's/^ +//; s/^scores_test\.go:[0-9]+: //'; \
	if [ $$rc -ne 0 ]; then printf '%s\n' "$$out"; fi; exit $$rc

# Each fuzz target runs for FUZZTIME on top of its seed corpus.
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./config
	$(GO) test -run='^$$' -fuzz='^FuzzTail$$' -fuzztime=$(FUZZTIME) ./verify
	$(GO) test -run='^$$' -fuzz='^FuzzClassify$$' -fuzztime=$(FUZZTIME) ./classify
	$(GO) test -run='^$$' -fuzz='^FuzzRead$$' -fuzztime=$(FUZZTIME) ./lessons
	$(GO) test -run='^$$' -fuzz='^FuzzBases$$' -fuzztime=$(FUZZTIME) ./sandbox
	$(GO) test -run='^$$' -fuzz='^FuzzCategorize$$' -fuzztime=$(FUZZTIME) ./feedback
	$(GO) test -run='^$$' -fuzz='^FuzzInsertMemory$$' -fuzztime=$(FUZZTIME) ./feedback
	$(GO) test -run='^$$' -fuzz='^FuzzMerge$$' -fuzztime=$(FUZZTIME) ./memsync
	$(GO) test -run='^$$' -fuzz='^FuzzGuardrailsDoc$$' -fuzztime=$(FUZZTIME) ./guardrails
	$(GO) test -run='^$$' -fuzz='^FuzzParseVersion$$' -fuzztime=$(FUZZTIME) ./guardrails
	$(GO) test -run='^$$' -fuzz='^FuzzApplyDelta$$' -fuzztime=$(FUZZTIME) ./txn
	$(GO) test -run='^$$' -fuzz='^FuzzPackEntry$$' -fuzztime=$(FUZZTIME) ./txn
	$(GO) test -run='^$$' -fuzz='^FuzzObject$$' -fuzztime=$(FUZZTIME) ./internal/rawjson

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
	BENCH_SIZES="$(BENCH_SIZES)" BENCH_RUNS=$(BENCH_RUNS) BENCH_RESULTS=$(CURDIR)/bin/bench ORKET=$(CURDIR)/$(BIN) GO=$(GO) ./bench/run.sh
	$(GO) test -run '^$$' -bench HugeOutput -benchtime 3x ./verify | tee bin/bench/go-verify.txt
	ORKET_BENCH_LESSONS=10000,100000,1000000 $(GO) test -run '^$$' -bench Advisories -benchtime 5x -timeout 30m ./lessons | tee bin/bench/go-lessons.txt
	$(GO) test -run '^$$' -bench . -benchtime 200x ./feedback | tee bin/bench/go-feedback.txt
	$(GO) test -run '^$$' -bench 'Reject|Memory' -benchtime 20x . | tee bin/bench/go-root.txt
	$(GO) test -run '^$$' -bench Sync -benchtime 5x -timeout 30m ./memsync | tee bin/bench/go-memsync.txt
	$(GO) test -run '^$$' -bench . -benchtime 20x ./guardrails | tee bin/bench/go-guardrails.txt
	./bench/refresh.sh bin/bench

clean:
	rm -rf bin
