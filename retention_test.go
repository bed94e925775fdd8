package orket

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDueForPrune: a log is pruned once past its floor, then again only
// after it grew by an eighth.
func TestDueForPrune(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log.jsonl")
	write := func(n int) {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(strings.Repeat("x", n))
		f.Close()
	}
	if dueForPrune(p, 500) {
		t.Error("a missing log is due")
	}
	write(400)
	if dueForPrune(p, 500) {
		t.Error("a log under its floor is due")
	}
	write(600) // 1000
	if !dueForPrune(p, 500) {
		t.Error("a log past its floor, never pruned, is not due")
	}
	prunedAt(p)
	write(100) // 1100: not an eighth more
	if dueForPrune(p, 500) {
		t.Error("due again after growing by a tenth")
	}
	write(30) // 1130
	if !dueForPrune(p, 500) {
		t.Error("not due after growing by an eighth")
	}
}

// TestEvaluationLogNotRewrittenEachRun: at its bound, the evaluation log
// is rewritten every few runs, not by every run.
func TestEvaluationLogNotRewrittenEachRun(t *testing.T) {
	repo, cfg := testRepo(t)
	cfg.Lessons.Retention.MaxEntriesPerAgent = 32
	file := filepath.Join(OrketDir(repo), "memory", "evaluations.jsonl")
	inode := func() uint64 {
		fi, err := os.Stat(file)
		if err != nil {
			return 0
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	rewrites, last := 0, uint64(0)
	for i := 0; i < 80; i++ {
		if _, err := Execute(context.Background(), Request{Repo: repo, Config: cfg, Env: OSEnv()}, nil); err != nil {
			t.Fatal(err)
		}
		if n := inode(); last != 0 && n != last {
			rewrites++
		}
		last = inode()
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// At most an eighth over the bound; rewritten about every fourth run
	// once there (an eighth of 32 evaluations), not every run.
	if lines := strings.Count(string(b), "\n"); lines > 32+32/8+1 {
		t.Errorf("the log holds %d evaluations; the bound is 32", lines)
	}
	if rewrites == 0 || rewrites > 80/3 {
		t.Errorf("the log was rewritten %d times in 80 runs", rewrites)
	}
}
