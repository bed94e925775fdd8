package learn

import (
	"context"
	"strconv"
	"testing"

	"github.com/orket/orket"
)

// BenchmarkReject measures a whole orket reject of a kept one-file change:
// the lock, the change kept as a patch, the undo as a transaction with its
// proof, and the feedback log and the agent memory written (docs/benchmarks.md: under
// 500 ms). The kept run before each reject is not timed.
func BenchmarkReject(b *testing.B) {
	repo, cfg := testRepo(b)
	cfg.Sandbox.Mode = "off"
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, err := orket.Execute(ctx, orket.Request{Learner: Loop{}, Repo: repo, Config: cfg, Scope: []string{"pkg"}, AutoConfirm: true, Env: orket.OSEnv(),
			Edit: orket.CommandEdit{Argv: []string{"sh", "-c", "echo " + strconv.Itoa(i) + " > pkg/a.txt"}}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := Reject(ctx, RejectRequest{Repo: repo, Config: cfg, Reason: "the examples are wrong", Env: orket.OSEnv()})
		if err != nil {
			b.Fatal(err)
		}
		if res.Undo == nil || res.Undo.Status != "undone" {
			b.Fatalf("the reject did not undo: %+v", res.Undo)
		}
	}
}
