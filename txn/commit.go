package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// A CommitError is a commit git refused (a hook, signing, no identity):
// what git said.
type CommitError struct {
	Output string // git's own words, trimmed
	Err    error
}

func (e *CommitError) Error() string {
	if e.Output == "" {
		return e.Err.Error()
	}
	return e.Output
}

func (e *CommitError) Unwrap() error { return e.Err }

// gitCommit commits exactly the named paths as they are in the working
// tree, with the user's own git: their identity (from every level of
// their configuration), their hooks (pre-commit, commit-msg,
// core.hooksPath) and their signing (commit.gpgsign). Other staged
// changes stay staged and are not committed (git commit --only). Only
// git gives git's behaviour here, so this is one of the few places
// product code runs git (the others: filters.go's, memsync's credential
// helper).
func (r *Repo) gitCommit(ctx context.Context, paths []string, msg string, env []string) (plumbing.Hash, error) {
	var files []string
	for _, p := range paths {
		if !strings.HasSuffix(p, "/") { // an empty directory: git does not track it
			files = append(files, p)
		}
	}
	spec := []byte(strings.Join(files, "\x00") + "\x00")
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = r.Root
		cmd.Env = append(append([]string{}, env...), "GIT_LITERAL_PATHSPECS=1")
		cmd.Stdin = bytes.NewReader(spec)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	// New files must be known to git before commit --only takes them.
	if out, err := run("add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
		return plumbing.ZeroHash, &CommitError{Output: out, Err: fmt.Errorf("git add: %w", err)}
	}
	if out, err := run("commit", "--quiet", "--only", "--message", msg, "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return plumbing.ZeroHash, &CommitError{Output: "git is not installed", Err: err}
		}
		return plumbing.ZeroHash, &CommitError{Output: out, Err: err}
	}
	if err := r.reopen(); err != nil {
		return plumbing.ZeroHash, err
	}
	head, err := r.Git.Head()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return head.Hash(), nil
}
