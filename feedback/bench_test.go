package feedback

// Benchmarks for the targets of docs/benchmarks.md: categorising a
// reason under 50 ms; patterns over 10,000 feedback entries under 200 ms.
// Run with
//
//	go test -run '^$' -bench . -benchtime 200x ./feedback

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

var benchReasons = []string{
	"The Kafka examples in the README return errors when I run them against our Docker setup, please test them first",
	"Too generic: it does not say which endpoints change or how clients should migrate",
	"Não entendi a proposta, o texto está confuso e difícil de entender",
	"Missing the configuration section and the rollback steps for the migration",
	"This refactor is out of scope for the ticket; keep the change to the handler",
	"I just don't like the naming, it reads oddly next to the rest of the package",
	"O exemplo não funciona no Windows e o script de build falha",
	"The docs are fine but the error messages changed without a note in the changelog",
}

// BenchmarkCategorize: one reason, about twenty words, against both
// keyword lists (Categorize), and with its learned action for a run that
// touched fifty files (Learn).
func BenchmarkCategorize(b *testing.B) {
	b.Run("categorize", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Categorize(benchReasons[i%len(benchReasons)])
		}
	})
	var paths []string
	for i := 0; i < 50; i++ {
		paths = append(paths, fmt.Sprintf("pkg/module%d/file_%d.go", i%7, i))
	}
	rc := RunContext{Profile: "quick", Toolchain: []string{"Go"}, Commands: []string{"go vet ./...", "go test ./...", "./scripts/check-links"}, Paths: paths}
	c, _ := NewCategorizer(map[string][]string{"relevance": {"off-topic"}, "examples": {"flaky snippet"}})
	b.Run("learn", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c.Learn(benchReasons[i%len(benchReasons)], rc)
		}
	})
}

// benchLog writes n realistic entries: five agents, forty items, three
// touched paths each, an undo.
func benchLog(b *testing.B, n int) *Log {
	b.Helper()
	l := OpenLog(b.TempDir())
	var batch []*Entry
	for i := 0; i < n; i++ {
		item := fmt.Sprintf("pkg/area%d", i%40)
		run := fmt.Sprintf("20260203T%06dZ-%06x", i%240000, i)
		e := Default().Entry(Rejection{
			Time: t0.Add(time.Duration(i) * time.Minute), RunID: run, Task: fmt.Sprint("ISSUE-", i%90),
			Agent: fmt.Sprint("agent", i%5), Reason: benchReasons[i%len(benchReasons)], By: "Ana",
			Scope:   []string{item},
			Touched: []string{item + "/handler.go", item + "/handler_test.go", item + "/README.md"},
			Undo:    &Undo{Status: UndoDone, Patch: ".orket/rejected/" + run + ".patch"},
			Run:     RunContext{Profile: "quick", Toolchain: []string{"Go"}},
		})
		e.Seal(nil)
		batch = append(batch, e)
		if len(batch) == 500 {
			if err := l.Append(batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := l.Append(batch...); err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkPatterns: an agent's patterns over a log of 10,000 entries,
// read from the file (Analyze), and every advisory for a run (Advise).
func BenchmarkPatterns(b *testing.B) {
	l := benchLog(b, 10000)
	b.Run("analyze-10000", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			a, err := l.Analyze("agent1", time.Time{})
			if err != nil || a.Total != 2000 {
				b.Fatal(a.Total, err)
			}
		}
	})
	b.Run("advise-10000", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			adv, err := l.Advise(Query{Agent: "agent1", Scope: []string{"pkg/area7"}, Touch: []string{"pkg/area7/handler.go"}})
			if err != nil || len(adv) == 0 {
				b.Fatal(len(adv), err)
			}
		}
	})
}

// BenchmarkRecord: what a rejection writes: its entry, learned, sealed
// and appended to the log (fsynced), and its row in the agent memory
// (atomic write, fsynced), on a memory already holding 300 rows.
func BenchmarkRecord(b *testing.B) {
	dir := b.TempDir()
	l, m := OpenLog(dir), OpenMemory(dir)
	var rows []Row
	for i := 0; i < 300; i++ {
		rows = append(rows, Row{Date: t0, Type: "code", Item: fmt.Sprint("pkg/area", i%40), Reason: benchReasons[i%len(benchReasons)], Category: Other, Action: "Review: x"})
	}
	if _, err := m.Append(context.Background(), nil, rows); err != nil {
		b.Fatal(err)
	}
	rc := RunContext{Profile: "quick", Toolchain: []string{"Go"}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e := Default().Entry(Rejection{Time: t0.Add(time.Duration(i) * time.Second), RunID: fmt.Sprint("run", i), Agent: "claude",
			Reason: benchReasons[i%len(benchReasons)], Scope: []string{"pkg/api"}, Touched: []string{"pkg/api/handler.go"}, Run: rc})
		if err := l.Record(e, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := m.Append(context.Background(), nil, []Row{RowOf(e)}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if p := filepath.Dir(l.Path()); p == "" {
		b.Fatal("no log")
	}
}
