// Package gittest makes git repositories for tests with the git CLI:
// each Template is built once per test process, from a shell script, and
// copied for every test that asks for one. A copy is a fresh repository
// of its own (cp -a keeps modes, symlinks, empty directories and git's
// relative links), with its index refreshed as git status would, so a
// test starts from the same state as if it had run the script itself,
// without paying for git init, commits and submodules each time.
//
// It is for tests only; product code never runs git.
package gittest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A Template is a repository that Script, run by sh -e, makes in an
// empty directory, with git isolated from the machine (see Environ). The
// script may make other directories beside the repository's, in .. (a
// submodule's origin, say): they live as long as the template.
type Template struct {
	Script string

	once sync.Once
	dir  string // the built repository
	home string // the HOME it was built with
	err  error
}

var (
	mu    sync.Mutex
	roots []string // every template's directory, for RemoveAll
)

// Environ is the environment templates are built in: git reads no
// configuration of the machine's or the user's, commits have a fixed
// author, and file:// submodules are allowed.
func Environ(home string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "HOME" || k == "XDG_CONFIG_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_ALLOW_PROTOCOL=file")
}

func (tp *Template) build() {
	root, err := os.MkdirTemp("", "orket-template-")
	if err != nil {
		tp.err = err
		return
	}
	mu.Lock()
	roots = append(roots, root)
	mu.Unlock()
	home := filepath.Join(root, "home")
	tp.dir, tp.home = filepath.Join(root, "repo"), home
	for _, d := range []string{home, tp.dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tp.err = err
			return
		}
	}
	gitconfig := "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644); err != nil {
		tp.err = err
		return
	}
	cmd := exec.Command("sh", "-ec", tp.Script)
	cmd.Dir = tp.dir
	cmd.Env = Environ(home)
	if out, err := cmd.CombinedOutput(); err != nil {
		tp.err = fmt.Errorf("build the template: %v\n%s", err, out)
	}
}

// Copy returns a new copy of the template's repository in a temporary
// directory of t's, building the template on first use.
func (tp *Template) Copy(t testing.TB) string {
	t.Helper()
	tp.once.Do(tp.build)
	if tp.err != nil {
		t.Fatal(tp.err)
	}
	dst := filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command("cp", "-a", tp.dir, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy the template: %v\n%s", err, out)
	}
	// The copy's files have new inodes and change times: refresh the
	// index's stat data, as a user's git status would have. (It exits 1
	// when the tree has unstaged changes, which a template may.)
	cmd := exec.Command("git", "update-index", "-q", "--refresh")
	cmd.Dir = dst
	cmd.Env = Environ(tp.home)
	cmd.Run()
	return dst
}

// RemoveAll removes every template built in this process; TestMain calls
// it after the tests.
func RemoveAll() {
	mu.Lock()
	defer mu.Unlock()
	for _, r := range roots {
		os.RemoveAll(r)
	}
	roots = nil
}
