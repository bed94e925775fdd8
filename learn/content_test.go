package learn

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orket/orket"
	"github.com/orket/orket/internal/testhook"
)

// TestContentKeyReadsNoBlob: a run names the content it verified from
// the snapshot's trees, never its blobs. Every run record and log under
// .orket is a blob of the snapshot; reading them all made each mutating
// run slower with every record kept (74 ms instead of 49 with 500). The
// key of a run whose snapshot blobs are taken out of the store as soon
// as it is published is the key of the same run with them.
func TestContentKeyReadsNoBlob(t *testing.T) {
	treeContent := func(dropBlobs bool) string {
		repo, cfg := testRepo(t)
		if dropBlobs {
			testhook.Set(func(point string) {
				if point != "snapshot-published" {
					return
				}
				commit := strings.TrimSpace(gitOutput(t, repo.Root, "for-each-ref", "--format=%(objectname)", "refs/orket/snapshots/"))
				n := 0
				for _, line := range strings.Split(gitOutput(t, repo.Root, "ls-tree", "-r", commit+":worktree"), "\n") {
					if f := strings.Fields(line); len(f) == 4 && f[1] == "blob" {
						if err := os.Remove(filepath.Join(repo.CommonDir, "objects", f[2][:2], f[2][2:])); err != nil {
							t.Errorf("take %s (%s) out: %v", f[2], f[3], err)
						}
						n++
					}
				}
				if n < 2 {
					t.Errorf("the snapshot's worktree entry holds %d blobs, want the untracked and the modified file", n)
				}
			})
			defer testhook.Set(nil)
		}
		req := orket.Request{Learner: Loop{}, Repo: repo, Config: cfg, Edit: orket.CommandEdit{Argv: []string{"sh", "-c", "echo two > pkg/a.txt"}},
			Scope: []string{"pkg"}, AutoConfirm: true, Env: orket.OSEnv()}
		if _, err := orket.Execute(context.Background(), req, &recorder{}); err != nil {
			t.Fatalf("the run: %v", err)
		}
		f, err := os.Open(filepath.Join(repo.Root, ".orket", "memory", "evaluations.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var ev struct {
			TreeContent string `json:"tree_content"`
		}
		for sc := bufio.NewScanner(f); sc.Scan(); {
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatal(err)
			}
		}
		return ev.TreeContent
	}
	want := treeContent(false)
	if want == "" {
		t.Fatal("the run has no content key")
	}
	if got := treeContent(true); got != want {
		t.Errorf("without the snapshot's blobs the content key is %q, want %q", got, want)
	}
}

func gitOutput(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}
