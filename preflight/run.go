package preflight

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A Result is a check's outcome.
type Result struct {
	Check
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Source string `json:"source"` // "orket.yaml" or "lesson <id>"
	// AdvisoryOnly: the check comes only from stale lessons (their failed
	// command is no longer in the profile). It is reported, and never
	// fails a strict preflight.
	AdvisoryOnly bool `json:"advisory_only,omitempty"`
	// Stops: the check failed, strict mode is on and the check is not
	// advisory only nor NotRequired, so it stops the run
	// (E_PREFLIGHT_FAILED).
	Stops bool `json:"stops_run,omitempty"`
	// RequiredBy is the evidence that the tree needs a failed check:
	// "orket.yaml" for a declared check (a person asked for it), or the
	// first tracked file that names what the check is about.
	RequiredBy string `json:"required_by,omitempty"`
	// NotRequired says why a failed check of a lesson is not required by
	// the tree ("no tracked file reads WALKDIR_FIXTURES"): it is reported,
	// and never fails a strict preflight.
	NotRequired string `json:"not_required,omitempty"`
}

// Env is what checks look at: the environment, the repository root that
// relative file paths are taken from, and where the steps' runners find
// commands besides PATH.
type Env struct {
	Getenv func(string) string // for env_var_present; nil: the process's environment
	Root   string
	// Dirs are absolute directories a command_exists check searches after
	// PATH, as the steps would find commands there: node_modules/.bin of
	// the root and of each step's dir, the PATH entries a step's env sets.
	Dirs []string
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return os.Getenv(k)
	}
	return e.Getenv(k)
}

// dialTimeout bounds a tcp_reachable check.
var dialTimeout = time.Second

// Run makes one check. It never changes anything: a port_free check binds
// and closes at once; a tcp_reachable check connects and closes.
func Run(c Check, env Env) Result {
	r := Result{Check: c}
	switch c.Type {
	case EnvVarPresent:
		r.OK = env.getenv(c.Name) != ""
		r.Detail = c.Name + " is set"
		if !r.OK {
			r.Detail = c.Name + " is not set (or empty)"
		}
	case CommandExists:
		p := lookPath(c.Command, env)
		r.OK = p != ""
		r.Detail = c.Command + " is " + p
		if !r.OK {
			r.Detail = c.Command + " is not on PATH"
			if len(env.Dirs) > 0 {
				r.Detail += " nor where the steps find commands (node_modules/.bin, a step's PATH)"
			}
		}
	case FileExists:
		p := c.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.Root, p)
		}
		_, err := os.Stat(p)
		r.OK = err == nil
		r.Detail = c.Path + " exists"
		if !r.OK {
			r.Detail = c.Path + " does not exist"
		}
	case PortFree:
		l, err := net.Listen("tcp", ":"+strconv.Itoa(c.Port))
		r.OK = err == nil
		if l != nil {
			l.Close()
		}
		r.Detail = "port " + strconv.Itoa(c.Port) + " is free"
		if !r.OK {
			r.Detail = "port " + strconv.Itoa(c.Port) + " is in use"
		}
	case TCPReachable:
		conn, err := net.DialTimeout("tcp", c.Address, dialTimeout)
		r.OK = err == nil
		if conn != nil {
			conn.Close()
		}
		r.Detail = c.Address + " accepts connections"
		if !r.OK {
			r.Detail = c.Address + " does not accept connections"
		}
	default:
		r.Detail = "unknown check type " + c.Type
	}
	return r
}

// LookPath finds a command as the steps would (see lookPath): its
// executable's path, or "".
func LookPath(command string, env Env) string { return lookPath(command, env) }

// lookPath finds a command as a step's runner would: a name with a slash
// relative to the repository root; a bare name in the process's PATH (the
// one steps inherit), then in env.Dirs.
// It returns the executable's path, or "" when there is none.
func lookPath(command string, env Env) string {
	if strings.ContainsRune(command, '/') {
		p := command
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.Root, p)
		}
		if executable(p) {
			return p
		}
		return ""
	}
	dirs := filepath.SplitList(os.Getenv("PATH"))
	dirs = append(dirs, env.Dirs...)
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue // relative entries depend on a directory a check does not have
		}
		if p := filepath.Join(d, command); executable(p) {
			return p
		}
	}
	return ""
}

// Identify names the executable at path (as LookPath found it) with its
// size and modification time: a tool upgraded in place is another
// program. "path size mtime", or the path alone when it cannot be read.
func Identify(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return path
	}
	return path + " " + strconv.FormatInt(fi.Size(), 10) + " " + strconv.FormatInt(fi.ModTime().Unix(), 10)
}

// CommandName is the program a command line runs first: its first word
// that is not a variable assignment, a negation or exec, unquoted; ""
// when the command starts with shell syntax.
func CommandName(command string) string {
	for _, w := range strings.Fields(command) {
		w = strings.Trim(w, `"'`)
		switch {
		case w == "" || w == "!" || w == "exec" || strings.Contains(w, "=") && !strings.Contains(w, "/"):
			continue
		case strings.ContainsAny(w, "$`(){};&|<>*?[]\\"):
			return ""
		}
		return w
	}
	return ""
}

// executable reports whether p is a file (or a link to one) someone may
// execute.
func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0
}

// Failed describes the failed checks that fail a strict preflight:
// not those that are advisory only, nor those the tree does not require.
func Failed(rs []Result) []string {
	var out []string
	for _, r := range rs {
		if !r.OK && !r.AdvisoryOnly && r.NotRequired == "" {
			out = append(out, r.Detail)
		}
	}
	return out
}
