package contain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// escaper starts a shell that leaves a grandchild behind: in a new
// session, ignoring SIGTERM and SIGHUP, writing its pid to a file and
// then a heartbeat file forever.
func escaper(t *testing.T, g *Group, dir string) {
	t.Helper()
	script := `(trap '' TERM HUP; setsid sh -c 'echo $$ > ` + dir + `/pid; while :; do date +%s%N > ` + dir + `/beat; sleep 0.05; done' &) ; exit 0`
	cmd := exec.Command("sh", "-c", script)
	g.Apply(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "beat")); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the escaper did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func alive(t *testing.T, dir string) (int, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if ppid, zombie := parent(pid); ppid == 0 || zombie {
		return pid, false
	}
	return pid, syscall.Kill(pid, 0) == nil
}

// TestKillStopsEscapedDescendants: a grandchild that calls setsid and
// ignores SIGTERM is stopped by Kill, with a cgroup and with the marker.
func TestKillStopsEscapedDescendants(t *testing.T) {
	for _, mode := range []string{"cgroup", "marker"} {
		t.Run(mode, func(t *testing.T) {
			g := newGroup("test-"+mode+"-"+strconv.Itoa(os.Getpid()), mode == "cgroup")
			if mode == "cgroup" && !g.Cgroup() {
				t.Skip("no writable cgroup v2 hierarchy here (the marker mode below covers this machine)")
			}
			defer g.Close()
			dir := t.TempDir()
			escaper(t, g, dir)
			pid, ok := alive(t, dir)
			if !ok {
				t.Fatalf("the escaper %d is not running", pid)
			}
			if err := g.Kill(); err != nil {
				t.Fatal(err)
			}
			if _, ok := alive(t, dir); ok {
				t.Fatalf("process %d survived Kill", pid)
			}
		})
	}
}

// TestKillLeftovers: recovery knows a group only by its ID.
func TestKillLeftovers(t *testing.T) {
	for _, mode := range []string{"cgroup", "marker"} {
		t.Run(mode, func(t *testing.T) {
			g := newGroup("left-"+mode+"-"+strconv.Itoa(os.Getpid()), mode == "cgroup")
			if mode == "cgroup" && !g.Cgroup() {
				t.Skip("no writable cgroup v2 hierarchy here")
			}
			dir := t.TempDir()
			escaper(t, g, dir)
			if err := KillLeftovers(g.ID()); err != nil {
				t.Fatal(err)
			}
			if pid, ok := alive(t, dir); ok {
				t.Fatalf("process %d survived KillLeftovers", pid)
			}
			if g.Cgroup() {
				if _, err := os.Stat(g.cgroup); !os.IsNotExist(err) {
					t.Errorf("cgroup %s left behind", g.cgroup)
				}
			}
		})
	}
}

// TestSubGroupsStopAlone: stopping one step's group leaves another's.
func TestSubGroupsStopAlone(t *testing.T) {
	g := New("subs-" + strconv.Itoa(os.Getpid()))
	defer g.Close()
	a, b := g.Sub("a"), g.Sub("b")
	da, db := t.TempDir(), t.TempDir()
	escaper(t, a, da)
	escaper(t, b, db)
	if err := a.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, ok := alive(t, da); ok {
		t.Error("a survived its group's Kill")
	}
	if _, ok := alive(t, db); !ok {
		t.Error("b was stopped with a")
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, ok := alive(t, db); ok {
		t.Error("b survived the parent group's Kill")
	}
}

// TestNewCollectsDeadOwnersGroups: a group whose orket died without
// closing it (kill -9) is stopped and removed by the next New.
func TestNewCollectsDeadOwnersGroups(t *testing.T) {
	base, ok := cgroupBase()
	if !ok {
		t.Skip("no writable cgroup v2 hierarchy here")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(base, "orket-"+strconv.Itoa(dead.Process.Pid)+"-stale")
	if err := os.MkdirAll(filepath.Join(stale, "1-edit"), 0o755); err != nil {
		t.Fatal(err)
	}
	g := New("fresh")
	defer g.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead run's group %s is still there", stale)
	}
}
