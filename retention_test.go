package orket

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orket/orket/verdict"
)

// TestDueForPrune: a log is pruned once past its floor, then again only
// after it grew by an eighth, when the retention settings changed, or a
// day later when it has an age bound.
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
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	due := func(bound int, age time.Duration, at time.Time) bool { return dueForPrune(p, 500, bound, age, at) }
	if due(10, 90*day, now) {
		t.Error("a missing log is due")
	}
	write(400)
	if due(10, 0, now) {
		t.Error("a log under its floor, without an age bound, is due")
	}
	// With an age bound, a small log is pruned by age, at most daily.
	if !due(10, 90*day, now) {
		t.Error("a log under its floor, never pruned, is not due by age")
	}
	prunedAt(p, 10, 90*day, now.Add(-time.Hour))
	if due(10, 90*day, now) || !due(10, 90*day, now.Add(day)) {
		t.Error("a small log is not due by age once a day exactly")
	}
	os.Remove(p + ".pruned")
	write(600) // 1000
	if !due(10, 90*day, now) {
		t.Error("a log past its floor, never pruned, is not due")
	}
	prunedAt(p, 10, 90*day, now)
	write(100) // 1100: not an eighth more
	if due(10, 90*day, now.Add(time.Hour)) {
		t.Error("due again after growing by a tenth")
	}
	if !due(5, 90*day, now.Add(time.Hour)) || !due(10, 30*day, now.Add(time.Hour)) {
		t.Error("not due when the bound or the age changed")
	}
	if !due(10, 90*day, now.Add(day)) {
		t.Error("not due a day after the last prune, with an age bound")
	}
	if due(10, 0, now.Add(2*day)) != true {
		t.Error("not due when the age bound was removed") // a change of setting
	}
	prunedAt(p, 10, 0, now)
	if due(10, 0, now.Add(30*day)) {
		t.Error("due by time without an age bound")
	}
	write(140) // 1240: an eighth more than 1100
	if !due(10, 0, now) {
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

// TestMaxAgeOnSmallLogs: max_age holds for a log far within its size
// bound too: the next run drops an evaluation older than it.
func TestMaxAgeOnSmallLogs(t *testing.T) {
	repo, cfg := testRepo(t)
	store := Verdicts(repo)
	old := &verdict.Evaluation{RunID: "ancient", Time: time.Now().Add(-200 * 24 * time.Hour), Task: "scope:docs profile:quick",
		Agent: "claude", EditSource: "command", Verdict: verdict.Approve}
	if err := store.Record(old); err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(context.Background(), Request{Repo: repo, Config: cfg, Env: OSEnv()}, nil); err != nil {
		t.Fatal(err)
	}
	if e, err := store.Find("ancient"); err != nil || e != nil {
		t.Errorf("an evaluation past max_age (%s) is still there: %v %v", cfg.Lessons.Retention.MaxAge, e, err)
	}
}
