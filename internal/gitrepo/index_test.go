package gitrepo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitEnv(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
	} {
		t.Setenv(k, v)
	}
}

func sh(t *testing.T, dir, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// TestDecodeIndex: the entries of every index version git writes are
// what git ls-files --stage lists, and the cache tree names the tree git
// write-tree writes.
func TestDecodeIndex(t *testing.T) {
	gitEnv(t)
	for _, version := range []int{2, 3, 4} {
		t.Run(fmt.Sprint("v", version), func(t *testing.T) {
			dir := t.TempDir()
			sh(t, dir, `
git init -q
mkdir -p a/b/c a/bb
echo x > a/b/c/deep.txt; echo y > a/bb/y; echo z > top
printf '#!/bin/sh\n' > run.sh; chmod +x run.sh
ln -s top link
git add -A
git update-index --index-version `+fmt.Sprint(version))
			tree := strings.TrimSpace(sh(t, dir, "git write-tree"))
			if version >= 3 {
				sh(t, dir, "echo new > added; git add -N added")
			}
			entries, err := ReadIndex(filepath.Join(dir, ".git"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, fmt.Sprintf("%06o %s %d\t%s", uint32(e.Mode), e.Hash, e.Stage, e.Name))
				if e.IntentToAdd != (e.Name == "added") {
					t.Errorf("%s: intent to add %v", e.Name, e.IntentToAdd)
				}
			}
			want := strings.TrimSpace(sh(t, dir, "git ls-files --stage"))
			if strings.Join(got, "\n") != want {
				t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
			}
			b, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
			if _, ct, err := DecodeIndex(b); version < 3 && (err != nil || ct == nil || ct.ID.String() != tree) {
				t.Errorf("cache tree %+v, %v; git write-tree: %s", ct, err, tree)
			}
		})
	}
}

// TestDecodeIndexRefuses: damaged and unsupported indexes are errors.
func TestDecodeIndexRefuses(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("DIRC"), append([]byte("DIRC\x00\x00\x00\x05\x00\x00\x00\x00"), make([]byte, 20)...),
		append([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x09"), make([]byte, 20)...),
		append([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00link\x00\x00\x00\x00"), make([]byte, 20)...)} {
		if _, _, err := DecodeIndex(b); err == nil {
			t.Errorf("%q decoded", b)
		}
	}
}
