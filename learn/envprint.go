package learn

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orket/orket/internal/lazyre"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/preflight"
)

// A step that failed and passes on the same content is flaky only when
// its environment did not change in between (docs/verdicts.md, Flaky
// steps). A lesson keeps a fingerprint of its step's environment
// (lessons.Verify.Environment): each variable it names, each port,
// address, file and command its checks name, and its command's
// executable (path, size and modification time: a cheap proxy for the
// tool's version). The fingerprint is kept on the lesson, not on the
// run's evaluation, because it is a lesson's: its checks and its step say
// what to look at, a run fails several steps, and the lesson is what is
// marked flaky or resolved.
//
// A variable's value is never kept: only "unset", or "set" with a hash of
// the value keyed by a random key kept in the repository's git directory
// (envKeyFile). Lessons are shared through git (memory.sync), and a plain
// hash of a short secret could be reversed by trying values; a keyed one
// cannot without the key, which never leaves the machine.

// maxEnvNames bounds the variables a lesson's fingerprint names.
const maxEnvNames = 16

// envRead is a variable read as source code in output shows it (a
// traceback's line, a compiler's): os.environ["X"], os.getenv("X"),
// os.Getenv("X"), env!("X"), env::var("X"), process.env.X, ENV["X"],
// System.getenv("X"), ${X}. Names that output merely prints (an
// environment dumped in a traceback's locals) are not reads.
var envRead = lazyre.New(`(?:\benviron(?:\.get)?\s*[\[(]|\b(?:os\.)?[gG]etenv\(|\benv!\(|\benv::var(?:_os)?\(|\bprocess\.env\.|\bprocess\.env\[|\bENV(?:\[|\.fetch\()|\$\{)\s*["']?([A-Za-z_][A-Za-z0-9_]*)`)

// envFingerprint is the environment of a failed step: the variables its
// checks name and its (redacted) output shows read, the checks' ports, addresses,
// files and commands, and the executable of its command.
func (r *run) envFingerprint(step string, command, dir string, checks []preflight.Check, output string) []lessons.EnvState {
	var out []lessons.EnvState
	seen := map[[2]string]bool{}
	add := func(kind, name string) {
		k := [2]string{kind, name}
		if name == "" || seen[k] {
			return
		}
		seen[k] = true
		out = append(out, lessons.EnvState{Kind: kind, Name: name})
	}
	if exe := preflight.CommandName(command); exe != "" {
		add("command", exe)
	}
	for _, c := range checks {
		switch c.Type {
		case preflight.EnvVarPresent:
			add("env", c.Name)
		case preflight.PortFree:
			add("port", strconv.Itoa(c.Port))
		case preflight.TCPReachable:
			add("tcp", c.Address)
		case preflight.FileExists:
			add("file", c.Path)
		case preflight.CommandExists:
			add("command", c.Command)
		}
	}
	names := 0
	for _, st := range out {
		if st.Kind == "env" {
			names++
		}
	}
	for _, m := range envRead().FindAllStringSubmatch(output, -1) {
		n := m[1]
		if names >= maxEnvNames {
			break
		}
		if strings.HasPrefix(n, "ORKET_") || seen[[2]string{"env", n}] {
			continue // orket's own variables differ from run to run
		}
		add("env", n)
		names++
	}
	return r.envStates(step, dir, out)
}

// envStates returns states with each one's state as it is now, for the
// step named (its orket.yaml env overrides the process's).
func (r *run) envStates(step, dir string, states []lessons.EnvState) []lessons.EnvState {
	getenv := r.Env.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var stepEnv map[string]string
	for _, s := range r.Profile.Steps {
		if s.Name == step {
			stepEnv = s.Env
		}
	}
	lookup := func(k string) string {
		if v, ok := stepEnv[k]; ok {
			return v
		}
		return getenv(k)
	}
	stepDir := filepath.Join(r.Repo.Root, filepath.FromSlash(dir))
	pf := preflight.Env{Getenv: lookup, Root: stepDir, Dirs: commandDirs(r.Repo.Root, r.Profile.Steps)}
	key := envKey(r.Repo.CommonDir, r.Repo.GitDir)
	out := make([]lessons.EnvState, 0, len(states))
	for _, st := range states {
		st.State = ""
		switch st.Kind {
		case "env":
			st.State = "unset"
			if v := lookup(st.Name); v != "" {
				st.State = "set"
				if key != nil {
					m := hmac.New(sha256.New, key)
					m.Write([]byte(st.Name + "=" + v))
					st.State += " " + hex.EncodeToString(m.Sum(nil))[:16]
				}
			}
		case "port":
			p, _ := strconv.Atoi(st.Name)
			st.State = ternary(preflight.Run(preflight.Check{Type: preflight.PortFree, Port: p}, pf).OK, "free", "in use")
		case "tcp":
			st.State = ternary(preflight.Run(preflight.Check{Type: preflight.TCPReachable, Address: st.Name}, pf).OK, "accepts", "refuses")
		case "file":
			p := st.Name
			if !filepath.IsAbs(p) {
				p = filepath.Join(r.Repo.Root, p)
			}
			_, err := os.Stat(p)
			st.State = ternary(err == nil, "exists", "missing")
		case "command":
			st.State = "missing"
			if p := preflight.LookPath(st.Name, pf); p != "" {
				st.State = preflight.Identify(p)
			}
		}
		out = append(out, st)
	}
	return out
}

// envChanges says what differs between the environment a lesson was
// recorded in and now, one phrase per change ("CLICK_TEST_DSN is set").
func envChanges(then, now []lessons.EnvState) []string {
	var out []string
	for i, a := range then {
		b := now[i]
		if a.State == b.State {
			continue
		}
		switch a.Kind {
		case "env":
			switch {
			case b.State == "unset":
				out = append(out, a.Name+" is unset")
			case a.State == "unset":
				out = append(out, a.Name+" is set")
			default:
				out = append(out, a.Name+" changed")
			}
		case "port":
			out = append(out, "port "+a.Name+" is "+b.State)
		case "tcp":
			out = append(out, a.Name+" "+b.State+" connections")
		case "file":
			out = append(out, a.Name+" "+b.State)
		case "command":
			switch path, _, _ := strings.Cut(b.State, " "); {
			case b.State == "missing":
				out = append(out, a.Name+" is missing")
			case a.State == "missing":
				out = append(out, a.Name+" is installed ("+path+")")
			default:
				out = append(out, a.Name+" changed ("+path+")")
			}
		default:
			out = append(out, a.Kind+" "+a.Name+" changed")
		}
	}
	return out
}

// envKeyFile is the random key that variables' values are hashed with,
// in the repository's common git directory: never in the work tree, never
// shared.
const envKeyFile = "orket/env-key"

// envKey returns the repository's key, made on first use (32 random
// bytes, readable by its owner only), or nil when it cannot be had: a
// fingerprint then says only whether a variable is set.
func envKey(commonDir, gitDir string) []byte {
	dir := commonDir
	if dir == "" {
		dir = gitDir
	}
	if dir == "" {
		return nil
	}
	p := filepath.Join(dir, filepath.FromSlash(envKeyFile))
	if b, err := os.ReadFile(p); err == nil {
		if len(b) == 32 {
			return b
		}
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil
	}
	// Written whole beside it, then linked in: a run that reads the key
	// never sees it half written, and of two runs that make one, the
	// first link wins.
	f, err := os.CreateTemp(filepath.Dir(p), "env-key-*")
	if err != nil {
		return nil
	}
	defer os.Remove(f.Name())
	_, err = f.Write(key)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		return nil
	}
	if err := os.Link(f.Name(), p); errors.Is(err, fs.ErrExist) {
		if b, err := os.ReadFile(p); err == nil && len(b) == 32 {
			return b
		}
		return nil
	} else if err != nil {
		return nil
	}
	return key
}

func ternary(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}
