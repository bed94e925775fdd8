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

// TestLongLines: lines longer than the reader's buffer, and a line at
// MaxLine's edge, read back whole and in order; offsets stay right.
func TestLongLines(t *testing.T) {
	l := &Log{Path: filepath.Join(t.TempDir(), "x.jsonl")}
	sizes := []int{10, 70 << 10, 1 << 20, 5, 3 << 20}
	for i, n := range sizes {
		if err := l.Append(rec{N: i, Pad: strings.Repeat("y", n)}); err != nil {
			t.Fatal(err)
		}
	}
	var got []int
	damaged, err := l.Each(func(line []byte) error {
		var r rec
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		if len(r.Pad) != sizes[r.N] {
			t.Errorf("record %d: pad of %d bytes, want %d", r.N, len(r.Pad), sizes[r.N])
		}
		got = append(got, r.N)
		return nil
	})
	if err != nil || len(damaged) > 0 {
		t.Fatalf("Each: %v, damaged %v", err, damaged)
	}
	if fmt.Sprint(got) != "[0 1 2 3 4]" {
		t.Errorf("records read: %v", got)
	}
	var scanned []int
	if err := l.Scan(func(line []byte) error {
		scanned = append(scanned, len(line))
		return nil
	}); err != nil || len(scanned) != len(sizes) || scanned[4] < sizes[4] {
		t.Errorf("Scan: %v, line lengths %v", err, scanned)
	}
	if err := (&Log{Path: l.Path + ".missing"}).Scan(func([]byte) error { return fmt.Errorf("a line") }); err != nil {
		t.Errorf("Scan of a missing log: %v, want no lines", err)
	}
	f, err := os.Open(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var off int64
	if err := ScanLines(f, func(ln Line) error {
		if ln.Offset != off || int64(len(ln.Bytes)) != ln.Size {
			t.Errorf("line %d: offset %d size %d (%d bytes), want offset %d", ln.N, ln.Offset, ln.Size, len(ln.Bytes), off)
		}
		off += ln.Size
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
