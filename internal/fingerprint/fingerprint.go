// Package fingerprint describes a git repository's whole state as text, with
// the git CLI as the oracle, so tests can compare before and after: every
// tracked and untracked (not ignored) file's path, mode and content, empty
// directories, HEAD, the current branch, every ref, and git ls-files -s.
// It is for tests only; product code never runs git.
package fingerprint

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Of returns the fingerprint of the work tree at dir. Files under extra
// (relative directories such as ".orket") are included even if ignored.
func Of(dir string, extra ...string) (string, error) {
	paths, err := listFiles(dir, extra)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := writeFiles(&b, dir, paths); err != nil {
		return "", err
	}
	writeEmptyDirs(&b, dir)
	for _, c := range [][]string{
		{"symbolic-ref", "-q", "HEAD"},
		{"rev-parse", "-q", "--verify", "HEAD"},
		{"for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/tags"},
		{"ls-files", "-s"},
		{"status", "--porcelain=v1", "-uall"},
	} {
		out, _ := git(dir, c...) // an unborn HEAD has no rev; that is part of the state
		fmt.Fprintf(&b, "== git %s\n%s", strings.Join(c, " "), out)
	}
	return b.String(), nil
}

// git runs git in dir and returns its output.
func git(dir string, args ...string) (string, error) {
	// The oracle reads the disk, never the watcher under test (a
	// repository's core.fsmonitor hook; asking it costs a hook
	// process per command, too).
	cmd := exec.Command("git", append([]string{"-c", "core.fsmonitor=false"}, args...)...)
	cmd.Dir = dir
	// git status would otherwise refresh (rewrite) the index.
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		return "", err
	}
	return string(out), nil
}

// listFiles returns, sorted, the files git lists (tracked, and untracked
// but not ignored) and every file under the extra directories.
func listFiles(dir string, extra []string) ([]string, error) {
	files, err := git(dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var paths []string
	for _, p := range strings.Split(files, "\x00") {
		if p != "" && !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for _, x := range extra {
		filepath.WalkDir(filepath.Join(dir, x), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				if !seen[rel] {
					seen[rel] = true
					paths = append(paths, filepath.ToSlash(rel))
				}
			}
			return nil
		})
	}
	sort.Strings(paths)
	return paths, nil
}

// writeFiles writes a line for each path: its mode and the hash of its
// content (of its target, for a symbolic link).
func writeFiles(b *strings.Builder, dir string, paths []string) error {
	b.WriteString("== files\n")
	for _, p := range paths {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		fi, err := os.Lstat(abs)
		if err != nil {
			fmt.Fprintf(b, "%q absent (listed by git)\n", p)
			continue
		}
		var content []byte
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(abs)
			content = []byte("-> " + t)
		case fi.Mode().IsRegular():
			content, err = os.ReadFile(abs)
			if err != nil {
				return err
			}
		}
		fmt.Fprintf(b, "%q %v %x\n", p, fi.Mode(), sha256.Sum256(content))
	}
	return nil
}

// writeEmptyDirs writes a line for each empty directory outside .git.
func writeEmptyDirs(b *strings.Builder, dir string) {
	b.WriteString("== empty directories\n")
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		entries, _ := os.ReadDir(p)
		if len(entries) == 0 {
			rel, _ := filepath.Rel(dir, p)
			fmt.Fprintf(b, "%q\n", filepath.ToSlash(rel))
		}
		return nil
	})
}
