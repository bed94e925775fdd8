package learn

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/verdict"
)

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
		if _, err := orket.Execute(context.Background(), orket.Request{Learner: Loop{}, Repo: repo, Config: cfg, Env: orket.OSEnv()}, nil); err != nil {
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
	if _, err := orket.Execute(context.Background(), orket.Request{Learner: Loop{}, Repo: repo, Config: cfg, Env: orket.OSEnv()}, nil); err != nil {
		t.Fatal(err)
	}
	if e, err := store.Find("ancient"); err != nil || e != nil {
		t.Errorf("an evaluation past max_age (%s) is still there: %v %v", cfg.Lessons.Retention.MaxAge, e, err)
	}
}
