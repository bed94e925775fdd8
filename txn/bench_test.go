package txn

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The transaction benchmarks run on a generated repository of
// ORKET_BENCH_FILES files (default 100,000) in 1,000 directories, with a
// 10-file change, next to git status and git stash on the same tree.
//
//	go test -run '^$' -bench Transaction -benchtime 20x ./txn

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

func benchRepo(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		n := 100_000
		if v, err := strconv.Atoi(os.Getenv("ORKET_BENCH_FILES")); err == nil && v > 0 {
			n = v
		}
		dir, err := os.MkdirTemp("", "orket-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchDir = dir
		for i := 0; i < n; i++ {
			d := filepath.Join(dir, fmt.Sprintf("pkg%03d", i%1000), fmt.Sprintf("sub%d", i%7))
			if i < 7000 {
				os.MkdirAll(d, 0o755)
			}
			body := fmt.Sprintf("package p\n\n// file %d\nvar V%d = %d\n", i, i, i*i)
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", i)), []byte(body), 0o644); err != nil {
				benchErr = err
				return
			}
		}
		os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.o\nbuild/\n"), 0o644)
		cmd := exec.Command("sh", "-c", `git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -q -m init && git status --porcelain >/dev/null`)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			benchErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	stopWatchman()
	if wm.tmp != "" {
		os.RemoveAll(wm.tmp)
	}
	os.Exit(code)
}

// change10 modifies 5 tracked files and creates 5 untracked ones.
func change10(b *testing.B, dir string, i int) {
	for k := 0; k < 5; k++ {
		p := filepath.Join(dir, fmt.Sprintf("pkg%03d", k), fmt.Sprintf("sub%d", k%7), fmt.Sprintf("f%d.go", k))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("package p // edit %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("pkg%03d", k), fmt.Sprintf("new%d.go", k)), []byte("package p\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTransaction is one transaction's overhead: snapshot, the
// 10-file change, touch-set measurement, revert (with its proof). Each
// phase is also reported as its own metric.
func BenchmarkTransaction(b *testing.B) {
	dir := benchRepo(b)
	r, err := Discover(dir)
	if err != nil {
		b.Fatal(err)
	}
	var snapT, measureT, revertT time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		s, err := r.Begin(Start{RunID: fmt.Sprintf("bench-%d", i), Command: "bench", Time: t0})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		change10(b, dir, i)
		t2 := time.Now()
		ch, err := s.Measure()
		if err != nil {
			b.Fatal(err)
		}
		if len(ch.Paths) != 10 {
			b.Fatalf("touch set %d paths, want 10: %v", len(ch.Paths), ch.Paths)
		}
		t3 := time.Now()
		if _, err := s.Revert(); err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		snapT += t1.Sub(t0)
		measureT += t3.Sub(t2)
		revertT += t4.Sub(t3)
		b.StopTimer()
		if err := s.End(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(snapT.Milliseconds())/n, "snapshot-ms")
	b.ReportMetric(float64(measureT.Milliseconds())/n, "measure-ms")
	b.ReportMetric(float64(revertT.Milliseconds())/n, "revert-ms")
}

func BenchmarkGitStatus(b *testing.B) {
	dir := benchRepo(b)
	change10(b, dir, 0)
	defer exec.Command("sh", "-c", "cd "+dir+" && git checkout -q -- . && git clean -fdq").Run()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("git", "status", "--porcelain", "-uall")
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGitStashPushPop(b *testing.B) {
	dir := benchRepo(b)
	defer exec.Command("sh", "-c", "cd "+dir+" && git checkout -q -- . && git clean -fdq").Run()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		change10(b, dir, i)
		b.StartTimer()
		cmd := exec.Command("sh", "-c", "git -c user.name=b -c user.email=b@b stash push -q -u && git stash pop -q")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}
