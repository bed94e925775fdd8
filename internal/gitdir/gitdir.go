// Package gitdir finds a work tree's git directories as git does: its
// .git is the git directory, or a file whose "gitdir:" line names it (a
// linked worktree, a submodule); the common directory (objects, refs,
// config) is the one the git directory's commondir file names, or the git
// directory itself.
package gitdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoGitdirLine is a .git file that does not name a git directory.
var ErrNoGitdirLine = errors.New("a .git file without a gitdir: line")

// Dirs returns the git directory and the common directory of the work
// tree at top, whose .git is dotgit (a directory when isDir).
func Dirs(top, dotgit string, isDir bool) (gitDir, common string, err error) {
	gitDir = dotgit
	if !isDir {
		b, err := os.ReadFile(dotgit)
		if err != nil {
			return "", "", err
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return "", "", ErrNoGitdirLine
		}
		if target = strings.TrimSpace(target); !filepath.IsAbs(target) {
			target = filepath.Join(top, target)
		}
		gitDir = filepath.Clean(target)
	}
	return gitDir, Common(gitDir), nil
}

// Common returns the common directory of the git directory gitDir.
func Common(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	c := strings.TrimSpace(string(b))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return filepath.Clean(c)
}
