package learn

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/verdict"
)

// TestSyncKeepsOpenTasks: a sync's retention drops old evaluations, but
// not those an open task's count rests on (as a run's own pruning keeps
// them): the count does not start over because a sync ran.
func TestSyncKeepsOpenTasks(t *testing.T) {
	repo, cfg := testRepo(t)
	remote := filepath.Join(t.TempDir(), "memory.git")
	sh(t, filepath.Dir(remote), "git init -q --bare "+remote)
	old := time.Now().Add(-200 * 24 * time.Hour) // past max_age (90 days)
	store := Verdicts(repo)
	for _, e := range []*verdict.Evaluation{
		{RunID: "closed-1", Time: old, Task: "scope:docs profile:quick", Agent: "claude", EditSource: "command", Verdict: verdict.Approve},
		{RunID: "open-1", Time: old, Task: "scope:pkg profile:quick", Agent: "claude", EditSource: "command", Verdict: verdict.Reject, Counted: true},
		{RunID: "open-2", Time: old.Add(time.Hour), Task: "scope:pkg profile:quick", Agent: "claude", EditSource: "command", Verdict: verdict.Reject, Counted: true},
	} {
		if err := store.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Sync(context.Background(), SyncRequest{Repo: repo, Config: cfg, Remote: remote, Env: orket.OSEnv()}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(store.Evaluations.Path)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if strings.Contains(log, "closed-1") {
		t.Errorf("retention did not drop the old closed evaluation:\n%s", log)
	}
	if !strings.Contains(log, "open-1") || !strings.Contains(log, "open-2") {
		t.Errorf("the sync dropped an open task's attempts:\n%s", log)
	}
	st, err := store.State("scope:pkg profile:quick", "claude")
	if err != nil || len(st.Attempts) != 2 {
		t.Errorf("attempts after the sync: %v %v", st, err)
	}
}
