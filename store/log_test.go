package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type rec struct {
	Writer int    `json:"writer"`
	N      int    `json:"n"`
	Pad    string `json:"pad"`
}

// TestConcurrentAppends: many writers appending at once lose no line and
// tear none.
func TestConcurrentAppends(t *testing.T) {
	l := &Log{Path: filepath.Join(t.TempDir(), "x.jsonl")}
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for n := 0; n < each; n++ {
				if err := l.Append(rec{w, n, strings.Repeat("x", 5000)}); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	seen := map[string]bool{}
	damaged, err := l.Each(func(line []byte) error {
		var r rec
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		seen[fmt.Sprint(r.Writer, r.N)] = true
		return nil
	})
	if err != nil || len(damaged) > 0 {
		t.Fatal(err, damaged)
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct records, want %d", len(seen), writers*each)
	}
}

// TestTornLine: a line a crash left without its end is one damaged line;
// the next append starts on a line of its own.
func TestTornLine(t *testing.T) {
	l := &Log{Path: filepath.Join(t.TempDir(), "x.jsonl")}
	l.Append(rec{N: 1})
	f, _ := os.OpenFile(l.Path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"writer":9,"n":`)
	f.Close()
	l.Append(rec{N: 2})
	var got []int
	damaged, err := l.Each(func(line []byte) error {
		var r rec
		json.Unmarshal(line, &r)
		got = append(got, r.N)
		return nil
	})
	if err != nil || len(damaged) != 1 || damaged[0].Line != 2 {
		t.Fatalf("damaged %v, err %v", damaged, err)
	}
	if fmt.Sprint(got) != "[1 2]" {
		t.Errorf("records %v, want [1 2]", got)
	}
	n, err := l.Rewrite(func(line []byte) bool { return !strings.Contains(string(line), `"n":1`) })
	if err != nil || n != 1 {
		t.Fatalf("rewrite removed %d, %v", n, err)
	}
	b, _ := os.ReadFile(l.Path)
	if strings.Count(string(b), "\n") != 1 {
		t.Errorf("after rewrite:\n%s", b)
	}
}
