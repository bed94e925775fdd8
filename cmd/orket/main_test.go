package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/orket/orket/internal/fingerprint"
	"github.com/orket/orket/internal/testhook"
)

// cmdFingerprint writes the fingerprint of the repository in the current
// directory (every file with content and mode, empty directories, HEAD,
// branch, refs, git ls-files -s, .orket) to a file, for cmp.
//
//	fingerprint before.txt
func cmdFingerprint(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fingerprint FILE")
	}
	fp, err := fingerprint.Of(ts.MkAbs("."))
	if err != nil {
		ts.Fatalf("fingerprint: %v", err)
	}
	if err := os.WriteFile(ts.MkAbs(args[0]), []byte(fp), 0o644); err != nil {
		ts.Fatalf("%v", err)
	}
}

// cmdJSONSave writes the string at KEY of the last stdout's JSON object to
// FILE, for later commands: jsonsave lessons.0.id id.txt
func cmdJSONSave(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonsave KEY FILE")
	}
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &v); err != nil {
		ts.Fatalf("stdout is not JSON: %v", err)
	}
	for _, k := range strings.Split(args[0], ".") {
		switch c := v.(type) {
		case map[string]any:
			v = c[k]
		case []any:
			i, _ := strconv.Atoi(k)
			if i >= len(c) {
				ts.Fatalf("jsonsave: no %s", args[0])
			}
			v = c[i]
		}
	}
	s, ok := v.(string)
	if !ok {
		ts.Fatalf("jsonsave: %s is not a string", args[0])
	}
	if err := os.WriteFile(ts.MkAbs(args[1]), []byte(s), 0o644); err != nil {
		ts.Fatalf("%v", err)
	}
}

// cmdWaitFile waits (up to 30s) until a file exists.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("waitfile %s: timed out", args[0])
}

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"orket": func() {
			// Crash tests: the test binary (never the shipped one) kills
			// itself with SIGKILL at the named point of a transaction
			// (NAME, or NAME#N for its N-th time).
			if at := os.Getenv("ORKET_TEST_CRASH_AT"); at != "" {
				name, nth, _ := strings.Cut(at, "#")
				want, _ := strconv.Atoi(nth)
				seen := 0
				testhook.Set(func(point string) {
					if point != name {
						return
					}
					if seen++; seen >= want {
						syscall.Kill(os.Getpid(), syscall.SIGKILL)
						select {} // never go on past a crash point
					}
				})
			}
			// The terminal tests under -short wait for a reason this long
			// instead of 30 s.
			if d, err := time.ParseDuration(os.Getenv("ORKET_TEST_REASON_WAIT")); err == nil {
				reasonWait = d
			}
			os.Exit(mainWithSignals())
		},
	})
}

// TestScripts runs every testdata/script/*.txtar end to end: the real orket
// main against throwaway git repositories, with the git CLI as the oracle.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:   "testdata/script",
		Setup: setupGit,
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"json": cmdJSON, "fingerprint": cmdFingerprint, "waitfile": cmdWaitFile, "jsonsave": cmdJSONSave,
		},
		RequireExplicitExec: true,
		Condition:           scriptCondition,
	})
}

// scriptCondition adds [mounts]: the script can mount a small tmpfs in a
// mount namespace of its own (unshare -rm), to fill a real disk; and
// [lfs]: git lfs runs (see haveLFS).
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "mounts":
		mountsOnce.Do(func() {
			mountsOK = exec.Command("unshare", "-rm", "sh", "-c", "d=$(mktemp -d); mount -t tmpfs -o size=64k tmpfs \"$d\" && umount \"$d\"; r=$?; rmdir \"$d\"; exit $r").Run() == nil
		})
		return mountsOK, nil
	case "lfs":
		lfsOnce.Do(func() { lfsOK = haveLFS() })
		return lfsOK, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// haveLFS reports whether git lfs runs, installing git-lfs from the
// distribution's packages when it is missing and this is root on a system
// with apt-get ([lfs]: scripts skip, saying so, only when it cannot).
func haveLFS() bool {
	if exec.Command("git", "lfs", "version").Run() == nil {
		return true
	}
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		return false
	}
	cmd := exec.Command("sh", "-c", "apt-get install -y -qq git-lfs >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq git-lfs; }")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	return cmd.Run() == nil && exec.Command("git", "lfs", "version").Run() == nil
}

var (
	mountsOnce sync.Once
	mountsOK   bool
	lfsOnce    sync.Once
	lfsOK      bool
)

// setupGit gives each script a private HOME and git identity, so the
// machine's git configuration never leaks in.
func setupGit(e *testscript.Env) error {
	home, err := os.MkdirTemp("", "orket-home")
	if err != nil {
		return err
	}
	e.Defer(func() { os.RemoveAll(home) })
	gitconfig := "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n[advice]\n\tdetachedHead = false\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644); err != nil {
		return err
	}
	// The integration recipes of docs/integrations, for the scripts that
	// try them.
	recipes, _ := filepath.Glob("../../docs/integrations/*")
	if len(recipes) > 0 {
		dst := filepath.Join(e.WorkDir, "integrations")
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		for _, r := range recipes {
			b, err := os.ReadFile(r)
			if err != nil {
				return err
			}
			fi, _ := os.Stat(r)
			if err := os.WriteFile(filepath.Join(dst, filepath.Base(r)), b, fi.Mode().Perm()); err != nil {
				return err
			}
		}
	}
	// The fixture generator of testdata/fixtures, for the fixture_*
	// scripts: sh $WORK/fixtures/make.sh KIND DIR.
	fixtures, _ := filepath.Glob("../../testdata/fixtures/*.sh")
	for _, f := range fixtures {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(e.WorkDir, "fixtures"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(e.WorkDir, "fixtures", filepath.Base(f)), b, 0o755); err != nil {
			return err
		}
	}
	for k, v := range map[string]string{
		"HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
		"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
		"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
	} {
		e.Setenv(k, v)
	}
	// rustup's cargo finds its toolchains in the real home's .rustup; the
	// private HOME would hide them (sandbox_build_dirs_rust).
	if os.Getenv("RUSTUP_HOME") == "" {
		if h, err := os.UserHomeDir(); err == nil {
			if fi, err := os.Stat(filepath.Join(h, ".rustup")); err == nil && fi.IsDir() {
				e.Setenv("RUSTUP_HOME", filepath.Join(h, ".rustup"))
			}
		}
	}
	return nil
}

// cmdJSON checks that the last command's stdout is exactly one JSON object
// and that each key=value holds (value compared with the JSON rendering of
// the field, strings unquoted; a dotted key walks into objects; key=*
// only asserts presence).
//
//	json code=E_CONFIG_INVALID line=7
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("json does not support !")
	}
	data := ts.ReadFile("stdout")
	if len(args) > 1 && args[0] == "-line1" {
		// The first line of a JSON-lines file instead of stdout.
		data = strings.SplitN(ts.ReadFile(args[1]), "\n", 2)[0]
		args = args[2:]
	}
	dec := json.NewDecoder(strings.NewReader(data))
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		ts.Fatalf("stdout is not a JSON object: %v\n%s", err, data)
	}
	if dec.More() {
		ts.Fatalf("stdout holds more than one JSON value:\n%s", data)
	}
	for _, a := range args {
		key, want, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("json: %q is not key=value", a)
		}
		var v any = obj
		for _, k := range strings.Split(key, ".") {
			switch c := v.(type) {
			case map[string]any:
				if v, ok = c[k]; !ok {
					ts.Fatalf("json: no key %s in\n%s", key, data)
				}
			case []any:
				i, err := strconv.Atoi(k)
				if err != nil || i < 0 || i >= len(c) {
					ts.Fatalf("json: %s: no element %q in\n%s", key, k, data)
				}
				v = c[i]
			default:
				ts.Fatalf("json: %s: not an object or list at %q", key, k)
			}
		}
		if want == "*" {
			continue
		}
		got := fmt.Sprint(v)
		if s, ok := v.(string); ok {
			got = s
		} else if b, err := json.Marshal(v); err == nil {
			got = string(bytes.TrimSpace(b))
		}
		if got != want {
			ts.Fatalf("json: %s = %s, want %s", key, got, want)
		}
	}
}
