// Package fsmonitor asks a file-system monitor what changed in a work tree
// since a token, through git's fsmonitor hook interface (version 2, the
// one git's Watchman hook speaks): the hook is run with the arguments "2"
// and the last token, in the work tree's top directory, and writes the
// new token, a NUL, then the changed paths, each ended by a NUL,
// relative to the top directory.
//
// It trusts the hook as git does: an answer whose first path starts with
// "/" means the hook could not tell (it just started watching, or lost
// its history), and every path may have changed; so does a failed hook.
// What the caller does then is a whole scan.
package fsmonitor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// A Hook is an fsmonitor hook command, as core.fsmonitor names it.
type Hook struct {
	Command string // a path (relative to Dir, or found in $PATH), or a shell command
	Dir     string // the work tree's top directory, where the hook runs
	// Timeout bounds one query; 0 means DefaultTimeout.
	Timeout time.Duration
	// Env, if set, is the hook's environment (default: orket's).
	Env []string
}

// DefaultTimeout bounds a query: a hook that hangs costs a whole scan,
// not the run.
const DefaultTimeout = 30 * time.Second

// A Result is a hook's answer.
type Result struct {
	Token string   // the token to ask with next time
	Paths []string // what changed since the token asked with, slash paths
	// All reports that the hook could not say what changed: every path
	// may have.
	All bool
}

// ErrNoHook reports a core.fsmonitor setting that names no hook.
var ErrNoHook = errors.New("no fsmonitor hook")

// FromConfig returns the hook that git's core.fsmonitor (and
// core.fsmonitorHookVersion) name, or ErrNoHook: unset, false, or true
// (git's own daemon, which speaks another protocol) name none, and so
// does a hook that speaks only version 1.
func FromConfig(fsmonitor, hookVersion, dir string) (*Hook, error) {
	v := strings.TrimSpace(fsmonitor)
	if v == "" {
		return nil, ErrNoHook
	}
	if b, ok := parseBool(v); ok {
		if b {
			return nil, fmt.Errorf("%w: core.fsmonitor=%s is git's built-in daemon, whose protocol orket does not speak", ErrNoHook, v)
		}
		return nil, ErrNoHook
	}
	if hv := strings.TrimSpace(hookVersion); hv != "" && hv != "2" {
		return nil, fmt.Errorf("%w: core.fsmonitorHookVersion=%s; orket speaks version 2 only", ErrNoHook, hv)
	}
	return &Hook{Command: v, Dir: dir}, nil
}

// parseBool reads a git boolean.
func parseBool(v string) (value, ok bool) {
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}

// InitialToken is the token to ask with when there is none yet: the time
// now, in nanoseconds, as git asks the first time. A hook answers with a
// token of its own, and whatever it says changed.
func InitialToken() string { return strconv.FormatInt(time.Now().UnixNano(), 10) }

// shellChars are the characters that make git run a hook command with
// sh -c (run-command.c's prepare_shell_cmd).
const shellChars = "|&;<>()$`\\\"' \t\n*?[#~=%"

// Query asks the hook what changed since token.
func (h *Hook) Query(ctx context.Context, token string) (*Result, error) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var cmd *exec.Cmd
	if strings.ContainsAny(h.Command, shellChars) {
		cmd = exec.CommandContext(ctx, "sh", "-c", h.Command+` "$@"`, h.Command, "2", token)
	} else {
		cmd = exec.CommandContext(ctx, h.Command, "2", token)
	}
	cmd.Dir = h.Dir
	cmd.Env = h.Env
	cmd.Stdin = nil
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &limited{w: &errb, n: 4096}
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %s", timeout)
		}
		if msg != "" {
			return nil, fmt.Errorf("fsmonitor hook %s: %w: %s", h.Command, err, firstLine(msg))
		}
		return nil, fmt.Errorf("fsmonitor hook %s: %w", h.Command, err)
	}
	return Parse(out.Bytes())
}

// Parse reads a version 2 answer.
func Parse(b []byte) (*Result, error) {
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return nil, errors.New("fsmonitor hook: no token in its answer")
	}
	r := &Result{Token: string(b[:i])}
	rest := b[i+1:]
	if len(rest) > 0 && rest[0] == '/' {
		r.All = true // git's "trivial response": everything may have changed
		return r, nil
	}
	for len(rest) > 0 {
		j := bytes.IndexByte(rest, 0)
		if j < 0 {
			j = len(rest)
		}
		if p := string(rest[:j]); p != "" {
			r.Paths = append(r.Paths, strings.TrimSuffix(p, "/"))
		}
		if j == len(rest) {
			break
		}
		rest = rest[j+1:]
	}
	return r, nil
}

// limited writes at most n bytes to w and drops the rest.
type limited struct {
	w *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if k := min(len(p), l.n-l.w.Len()); k > 0 {
		l.w.Write(p[:k])
	}
	return len(p), nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
