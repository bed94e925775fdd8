package gitdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirsAgreesWithGit: in a main work tree and in a linked worktree,
// Dirs names the directories git rev-parse names.
func TestDirsAgreesWithGit(t *testing.T) {
	base := t.TempDir()
	main := filepath.Join(base, "main")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+base, "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(base, "init", "-q", "main")
	git(main, "commit", "-q", "--allow-empty", "-m", "init")
	git(main, "worktree", "add", "-q", "../linked")
	for _, top := range []string{main, filepath.Join(base, "linked")} {
		fi, err := os.Lstat(filepath.Join(top, ".git"))
		if err != nil {
			t.Fatal(err)
		}
		gitDir, common, err := Dirs(top, filepath.Join(top, ".git"), fi.IsDir())
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Fields(git(top, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"))
		if gitDir != want[0] || common != want[1] {
			t.Errorf("%s: Dirs = %s, %s; git says %s, %s", top, gitDir, common, want[0], want[1])
		}
	}
	if err := os.WriteFile(filepath.Join(base, "bad.git"), []byte("not a gitdir line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Dirs(base, filepath.Join(base, "bad.git"), false); err != ErrNoGitdirLine {
		t.Errorf("a .git file without a gitdir: line: %v, want ErrNoGitdirLine", err)
	}
}
