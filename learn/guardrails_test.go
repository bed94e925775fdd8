package learn

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/orket/orket"
)

// TestGuardrailLogsKeepRetention: what each run was told is one line of
// advised.jsonl; lessons.retention bounds it per agent as it bounds the
// other logs, so a busy agent's exposures do not grow without end.
func TestGuardrailLogsKeepRetention(t *testing.T) {
	repo, cfg := testRepo(t)
	cfg.Sandbox.Mode = "off"
	cfg.Lessons.Retention.MaxEntriesPerAgent = 2
	ctx := context.Background()
	file := filepath.Join(OrketDir(repo), "memory", "advised.jsonl")
	most := 0
	for i := 0; i < 12; i++ {
		_, err := orket.Execute(ctx, orket.Request{Learner: Loop{}, Repo: repo, Config: cfg, Scope: []string{"pkg"}, AutoConfirm: true, Env: orket.OSEnv(), Agent: "claude",
			Edit: orket.CommandEdit{Argv: []string{"sh", "-c", "echo " + strconv.Itoa(i) + " > pkg/a.txt"}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, bytes.Count(b, []byte("\n")))
	}
	// Pruned down to 2 once the file passes 2*256 bytes (its floor) and
	// again as it grows by an eighth, and daily by age: a few lines at
	// most, never the runs' number.
	if most > 5 || most < 2 {
		t.Errorf("advised.jsonl held up to %d lines with max_entries_per_agent 2", most)
	}
}
