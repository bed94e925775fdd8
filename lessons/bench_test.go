package lessons

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/store"
)

// BenchmarkAdvisories scores a log of realistic lessons (output tails of
// 1-4 KB, one in fifty of 16-32 KB) against a run. The targets
// (docs/benchmarks.md): 100,000 lessons under 100 ms and 1,000,000 under
// 1 s, in constant memory.
// ORKET_BENCH_LESSONS lists the sizes (default 10000,100000).
//
//	ORKET_BENCH_LESSONS=10000,100000,1000000 go test -run '^$' -bench Advisories -benchtime 5x ./lessons
func BenchmarkAdvisories(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if v := os.Getenv("ORKET_BENCH_LESSONS"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	dir := b.TempDir()
	for _, n := range sizes {
		path := filepath.Join(dir, fmt.Sprintf("lessons-%d.jsonl", n))
		size := generate(b, path, n)
		s := &Store{Path: path}
		q := Query{Scope: []string{"pkg/api"}, TouchSet: []string{"pkg/api/server.go", "pkg/api/handler.go"},
			Commands: rootCommands("go vet ./...", "go test ./..."), Now: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
			HalfLife: 14 * 24 * time.Hour, TopK: 3}
		// The index is built once, after which appends extend it: a run
		// scores against a built index.
		if _, _, err := s.Advisories(q); err != nil {
			b.Fatal(err)
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(size)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i := 0; i < b.N; i++ {
				adv, damaged, err := s.Advisories(q)
				if err != nil || len(damaged) > 0 || len(adv) == 0 {
					b.Fatalf("advisories %d, damaged %d, %v", len(adv), len(damaged), err)
				}
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MB-alloc/op")
			b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
		})
	}
}

func peakRSS() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// generate writes n lessons and returns the file's size.
func generate(b *testing.B, path string, n int) int64 {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewSource(1))
	scopes := [][]string{{"pkg/api"}, {"pkg/db"}, {"web"}, {"cmd/server"}, {"pkg/api", "pkg/db"}, {"internal/auth"}}
	failures := []struct{ cmd, tag, first string }{
		{"go test ./...", "missing_env_var", "DATABASE_URL is not set"},
		{"go test ./...", "test_assertion_failed", "--- FAIL: TestHandler"},
		{"go vet ./...", "lint_error", "printf format %d has arg of wrong type"},
		{"npm test", "type_error", "error TS2322"},
		{"go test ./...", "db_connection_failed", "dial tcp 127.0.0.1:5432: connect: connection refused"},
	}
	line := strings.Repeat("=== RUN   TestSomething/with_a_realistic_name\n    handler_test.go:42: got 500, want 200\n", 400)
	for i := 0; i < n; i++ {
		fl := failures[rng.Intn(len(failures))]
		tail := 1024 + rng.Intn(3072)
		if i%50 == 0 {
			tail = 16384 + rng.Intn(16384)
		}
		for len(line) < tail {
			line += line
		}
		sc := scopes[rng.Intn(len(scopes))]
		l := &Lesson{SchemaVersion: store.LessonSchema, ID: fmt.Sprintf("%032x", i), CreatedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute),
			Request: Request{EditSource: "command", Argv: []string{"agent", "-p", "fix the handler"}, Scope: sc, VerifyProfile: "quick"},
			Repo:    RepoContext{HeadPre: "41eef37a0c5d3f0c4a3b2b1e0f9d8c7b6a5f4e3d", HeadPost: "41eef37a0c5d3f0c4a3b2b1e0f9d8c7b6a5f4e3d"},
			Plan:    Plan{TouchSet: []string{sc[0] + "/server.go", sc[0] + "/handler.go"}, TouchCount: 2},
			Verify:  Verify{Profile: "quick", Commands: []string{"go vet ./...", "go test ./..."}, FailedStep: "test", FailedCommand: fl.cmd, ExitCode: 1, OutputTail: line[:tail], OutputBytes: int64(tail * 3), DurationMS: 4120},
			Classification: Classification{Tags: []string{fl.tag}, Confidence: 0.9, FirstError: fl.first,
				Signals: []classify.Signal{{Source: "regex", Rule: "r." + fl.tag, Tag: fl.tag, Match: fl.first}}},
			Advice:  classify.Advice{Title: "Title for " + fl.tag, Summary: "summary", SuggestedActions: []string{"do the thing"}, PreflightChecks: []preflight.Check{{Type: preflight.EnvVarPresent, Name: "DATABASE_URL"}}},
			Outcome: Outcome{Code: "E_VERIFY_FAILED_REVERTED", RunID: "run"}}
		bs, _ := json.Marshal(l)
		w.Write(bs)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	fi, _ := f.Stat()
	f.Close()
	return fi.Size()
}
