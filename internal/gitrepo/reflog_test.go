package gitrepo

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestRefLogLikeGit: a ref moved by UpdateRef leaves the logs that git
// update-ref leaves for the same move, in the same configuration (git is
// the oracle): the branch's and HEAD's, created or only appended to as
// core.logAllRefUpdates says, with git's identity and date.
func TestRefLogLikeGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tests := []struct {
		name   string
		config []string // git config KEY VALUE pairs set before the move
		env    bool     // the identity from GIT_COMMITTER_*, not user.*
		ref    string
	}{
		{name: "branch", ref: "refs/heads/main"},
		{name: "branch, identity from env", ref: "refs/heads/main", env: true},
		{name: "committer.name wins", config: []string{"committer.name", "Com Mitter"}, ref: "refs/heads/main"},
		{name: "other branch", ref: "refs/heads/other"},
		{name: "orket ref", ref: "refs/orket/memory"},
		{name: "always", config: []string{"core.logAllRefUpdates", "always"}, ref: "refs/orket/memory"},
		{name: "off, log exists", config: []string{"core.logAllRefUpdates", "false"}, ref: "refs/heads/main"},
		{name: "off, no log", config: []string{"core.logAllRefUpdates", "false"}, ref: "refs/heads/other"},
		{name: "bare", config: []string{"core.bare", "true"}, ref: "refs/heads/other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", "")
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			t.Setenv("GIT_CONFIG_GLOBAL", "")
			t.Setenv("GIT_COMMITTER_DATE", "2026-01-02T03:04:05+02:00")
			t.Setenv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
			t.Setenv("GIT_AUTHOR_NAME", "A")
			t.Setenv("GIT_AUTHOR_EMAIL", "a@example.com")
			t.Setenv("GIT_COMMITTER_NAME", "C")
			t.Setenv("GIT_COMMITTER_EMAIL", "c@example.com")
			top := t.TempDir()
			git := func(dir string, args ...string) string {
				t.Helper()
				out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
				if err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
				return strings.TrimSpace(string(out))
			}
			a := filepath.Join(top, "a")
			git(top, "init", "-q", "-b", "main", a)
			git(a, "commit", "-q", "--allow-empty", "-m", "one")
			git(a, "commit", "-q", "--allow-empty", "-m", "two")
			git(a, "branch", "other", "HEAD~1")
			git(a, "config", "user.name", "User Name")
			git(a, "config", "user.email", "user@example.com")
			for i := 0; i < len(tt.config); i += 2 {
				git(a, "config", tt.config[i], tt.config[i+1])
			}
			if !tt.env {
				os.Unsetenv("GIT_COMMITTER_NAME")
				os.Unsetenv("GIT_COMMITTER_EMAIL")
			}
			old, next := plumbing.ZeroHash.String(), git(a, "rev-parse", "HEAD~1")
			if strings.HasPrefix(tt.ref, "refs/heads/") {
				old = git(a, "rev-parse", tt.ref)
			}
			if tt.ref == "refs/heads/other" {
				next = git(a, "rev-parse", "HEAD")
			}
			b := filepath.Join(top, "b")
			if out, err := exec.Command("cp", "-a", a, b).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			args := []string{"update-ref", "-m", "orket  reject:\n run-1", tt.ref, next}
			if old != plumbing.ZeroHash.String() {
				args = append(args, old)
			}
			git(a, args...)
			gitDir := filepath.Join(b, ".git")
			if err := UpdateRef(context.Background(), gitDir, tt.ref, plumbing.NewHash(old), plumbing.NewHash(next),
				RefLog{Msg: "orket  reject:\n run-1"}); err != nil {
				t.Fatal(err)
			}
			want, got := logs(t, filepath.Join(a, ".git")), logs(t, gitDir)
			if want != got {
				t.Errorf("logs differ\ngit:\n%s\norket:\n%s", want, got)
			}
		})
	}
}

// logs is every reflog of a git directory: each file's name and content.
func logs(t *testing.T, gitDir string) string {
	var b strings.Builder
	root := filepath.Join(gitDir, "logs")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		b.WriteString("== " + rel + "\n" + string(data))
		return nil
	})
	return b.String()
}
