// Package watchmantest runs a real Watchman for tests, private to the test
// process, and points repositories at it through git's own Watchman hook
// (fsmonitor-watchman.sample), as a user of git's Watchman integration
// configures core.fsmonitor.
//
// Watchman's clients, git's hook included, find their server through
// TMPDIR: the hook this package installs sets it, so the machine's own
// Watchman is never touched and a test may shut this one down (the next
// question to the hook starts it again, with no history: a fresh
// instance).
package watchmantest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var wm struct {
	mu      sync.Mutex
	checked bool
	tmp     string // the TMPDIR of the private Watchman
	why     string // why there is none
}

// Need makes sure Watchman can be used, installing it from the
// distribution's packages when it is missing (as make bench does). It
// skips the test, saying why, only when there is no way to have one.
func Need(t testing.TB) {
	t.Helper()
	wm.mu.Lock()
	if !wm.checked {
		wm.checked = true
		wm.tmp, wm.why = start()
	}
	why := wm.why
	wm.mu.Unlock()
	if why != "" {
		t.Skip("no Watchman: " + why)
	}
}

func start() (tmp, why string) {
	if _, err := exec.LookPath("watchman"); err != nil {
		if _, aerr := exec.LookPath("apt-get"); aerr != nil || os.Geteuid() != 0 {
			return "", "watchman is not installed, and apt-get is not available to root here to install it"
		}
		// Test processes of other packages may be installing it too:
		// wait for dpkg's lock rather than fail on it.
		const get = "apt-get -o DPkg::Lock::Timeout=120 install -y -qq watchman"
		out, err := exec.Command("sh", "-c", get+" >/dev/null 2>&1 || { apt-get -o DPkg::Lock::Timeout=120 update -qq && "+get+"; }").CombinedOutput()
		if _, lerr := exec.LookPath("watchman"); lerr != nil {
			return "", fmt.Sprintf("watchman is not installed and apt-get install watchman failed: %v: %s", err, lastLine(string(out)))
		}
	}
	if _, err := exec.LookPath("perl"); err != nil {
		return "", "perl, which git's Watchman hook is written in, is not installed"
	}
	if HookSample() == "" {
		return "", "git's fsmonitor-watchman.sample hook is not installed"
	}
	dir, err := os.MkdirTemp("", "orket-watchman-")
	if err != nil {
		return "", err.Error()
	}
	cmd := exec.Command("watchman", "version")
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Sprintf("watchman does not start: %v: %s", err, lastLine(string(out)))
	}
	return dir, ""
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// Command runs the watchman client against the private server (Need
// first); without one, it runs true, so that it never reaches the
// machine's own Watchman.
func Command(args ...string) *exec.Cmd {
	wm.mu.Lock()
	tmp := wm.tmp
	wm.mu.Unlock()
	if tmp == "" {
		return exec.Command("true")
	}
	cmd := exec.Command("watchman", args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	return cmd
}

// Stop shuts the private server down; the next question to it starts it
// again, without the history of what it watched.
func Stop() {
	wm.mu.Lock()
	tmp := wm.tmp
	wm.mu.Unlock()
	if tmp != "" {
		Command("shutdown-server").Run()
	}
}

// Done shuts the private server down and removes its directory: the end
// of the tests that needed it (a later Need starts another).
func Done() {
	Stop()
	wm.mu.Lock()
	defer wm.mu.Unlock()
	if wm.tmp != "" {
		os.RemoveAll(wm.tmp)
	}
	wm.checked, wm.tmp, wm.why = false, "", ""
}

// HookSample returns git's Watchman hook, as git init installs it, or "".
func HookSample() string {
	if p := "/usr/share/git-core/templates/hooks/fsmonitor-watchman.sample"; exists(p) {
		return p
	}
	out, err := exec.Command("git", "--exec-path").Output()
	if err == nil {
		p := filepath.Join(filepath.Dir(filepath.Dir(strings.TrimSpace(string(out)))), "share", "git-core", "templates", "hooks", "fsmonitor-watchman.sample")
		if exists(p) {
			return p
		}
	}
	return ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// HookPath is where Use installs the hook, relative to the work tree.
const HookPath = ".git/hooks/query-watchman"

// Use configures the repository whose work tree is dir as a user of
// git's Watchman integration would: core.fsmonitor names git's own hook,
// run against the private Watchman (Need first). Watchman stops watching
// dir at the end of the test.
func Use(t testing.TB, dir string) {
	t.Helper()
	wm.mu.Lock()
	tmp := wm.tmp
	wm.mu.Unlock()
	if tmp == "" {
		t.Fatal("watchmantest.Use without a Watchman (call Need first)")
	}
	hook := "#!/bin/sh\nTMPDIR='" + tmp + "' exec perl '" + HookSample() + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(HookPath)), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "config", "core.fsmonitor", HookPath)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git config core.fsmonitor: %v\n%s", err, out)
	}
	t.Cleanup(func() { Command("watch-del", dir).Run() })
}
