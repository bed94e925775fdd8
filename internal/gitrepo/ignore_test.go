package gitrepo

import (
	"os"
	"path/filepath"
	"testing"

	git "github.com/go-git/go-git/v5"
)

// TestExcludes: core.excludesFile (relative to the top) first, then
// info/exclude; a missing file has no patterns.
func TestExcludes(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	top := t.TempDir()
	r, err := git.PlainInit(top, false)
	if err != nil {
		t.Fatal(err)
	}
	common := filepath.Join(top, ".git")
	ps, err := Excludes(r, top, common)
	if err != nil || len(ps) != 0 {
		t.Fatalf("no ignore files: %v %v", ps, err)
	}
	cfg := filepath.Join(common, "config")
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, append(b, "[core]\n\texcludesFile = my-ignore\n"...), 0o644)
	os.WriteFile(filepath.Join(top, "my-ignore"), []byte("*.log\n"), 0o644)
	os.MkdirAll(filepath.Join(common, "info"), 0o755)
	os.WriteFile(filepath.Join(common, "info", "exclude"), []byte("# comment\n/build\n"), 0o644)
	r, _ = git.PlainOpen(top)
	ps, err = Excludes(r, top, common)
	if err != nil || len(ps) != 2 || ps[0].String() != "*.log" || ps[1].String() != "/build" {
		t.Fatalf("patterns %v, %v", ps, err)
	}
	own, err := ReadIgnoreFile(filepath.Join(top, "my-ignore"), "sub")
	if err != nil || len(own) != 1 || own[0].Base() != "sub" {
		t.Fatalf("base: %v %v", own, err)
	}
}
