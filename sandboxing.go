package orket

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/orket/orket/sandbox"
)

// SandboxView is the kernel sandbox of a run's edit command, as the run
// record reports it: what was enforced, and the lines of the edit's
// output where a write was refused (the sandbox caught it; the barrier's
// measurement catches what got through).
type SandboxView struct {
	sandbox.Report
	Denied []string `json:"denied,omitempty"`
}

// checkSandbox is the plan's word on sandbox: required: a kernel without
// Landlock refuses the run before anything is written.
func (r *run) checkSandbox() error {
	if _, ok := r.req.Edit.(CommandEdit); !ok {
		return nil
	}
	mode, err := sandbox.ParseMode(r.req.Config.Sandbox.Mode)
	if err != nil {
		return &Error{Code: EConfigInvalid, Msg: err.Error(), Hint: "write auto, required or off"}
	}
	if mode != sandbox.Required {
		return nil
	}
	if abi, reason := sandbox.Available(); abi == 0 {
		return &sandboxUnavailableError{Reason: reason}
	}
	return nil
}

// sandbox makes the kernel sandbox of the run's edit command
// (docs/sandbox.md): writes only in the scope's directories, a private
// TMPDIR, sandbox.write and what a git commit needs. Under auto, a kernel
// without it runs the edit as before, and the user is told.
func (r *run) sandbox() (*sandbox.Sandbox, error) {
	cfg := r.req.Config
	mode, err := sandbox.ParseMode(cfg.Sandbox.Mode)
	if err != nil {
		return nil, &Error{Code: EConfigInvalid, Msg: err.Error(), Hint: "write auto, required or off"}
	}
	box, err := sandbox.New(sandbox.Policy{Mode: mode, Root: r.req.Repo.Root, Scope: r.scope.Patterns(), Write: cfg.Sandbox.Write,
		GitDir: r.req.Repo.GitDir, AllowGit: true, Name: r.rec.RunID})
	var unavailable *sandbox.UnavailableError
	switch {
	case errors.As(err, &unavailable):
		return nil, &sandboxUnavailableError{Reason: unavailable.Reason}
	case err != nil:
		return nil, internal("set up the kernel sandbox", "set sandbox: off in orket.yaml to run without it", err)
	}
	rep := box.Report()
	r.rec.Sandbox = &SandboxView{Report: rep}
	if !rep.Enforced && rep.Mode == sandbox.Auto {
		r.obs.Warn("the edit command runs without the kernel sandbox (" + rep.Reason + "); the barrier still measures what it writes")
	}
	return box, nil
}

// deniedPath finds the path a refused write names in a line of output, as
// the usual tools print it: sh's "cannot create X: Permission denied",
// coreutils' "cannot touch 'X'", Python's "Permission denied: 'X'", Go's
// "open X: permission denied". It returns "" when it finds none.
func deniedPath(line string) string {
	for _, re := range deniedPatterns {
		if m := re.FindStringSubmatch(line); m != nil {
			return m[1]
		}
	}
	return ""
}

var deniedPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(?:permission denied|operation not permitted): ['"]([^'"]+)['"]`),
	regexp.MustCompile(`(?i)['"\x60\x{2018}]([^'"\x60\x{2019}]+)['"\x60\x{2019}]: (?:permission denied|operation not permitted|invalid cross-device link)`),
	regexp.MustCompile(`(?i)(?:cannot create|cannot touch|cannot open|cannot remove|cannot write|open|mkdir|create|remove|unlink|rename|write|symlink|link) (\S+?): (?:permission denied|operation not permitted|invalid cross-device link)`),
}

// refusedOutside sorts the sandbox's refusals: the paths outside the
// scope the edit tried to write, as the repository names them (outside it:
// as given), and whether every refusal named a path. A refusal inside the
// scope is the file's own permissions, not the sandbox.
func (r *run) refusedOutside(lines []string) (outside []string, all bool) {
	all = true
	for _, l := range lines {
		p := deniedPath(l)
		if p == "" {
			all = false
			continue
		}
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(r.req.Repo.Root, p)
		}
		// Where the write would have landed: through the symlinks of its
		// directory (pkg/out -> /elsewhere), as the kernel saw it.
		root := r.req.Repo.Root
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			abs = filepath.Join(real, filepath.Base(abs))
		}
		rel, err := filepath.Rel(root, filepath.Clean(abs))
		switch {
		case err != nil || rel == ".." || strings.HasPrefix(rel, "../"):
			outside = append(outside, p)
		case !r.scope.Contains(filepath.ToSlash(rel)):
			outside = append(outside, filepath.ToSlash(rel))
		}
	}
	return outside, all
}

// deniedLines are the lines of an edit's output where the kernel refused
// a write: the sandbox's catches, as the command reported them.
func deniedLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if strings.Contains(l, "Permission denied") || strings.Contains(l, "Operation not permitted") ||
			strings.Contains(l, "Invalid cross-device link") || strings.Contains(l, "EACCES") || strings.Contains(l, "EPERM") {
			lines = append(lines, l)
			if len(lines) == 10 {
				break
			}
		}
	}
	return lines
}
