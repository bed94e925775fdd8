package memsync

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/store"
)

// An sshServer is an OpenSSH sshd on 127.0.0.1 at a random port, with a
// throwaway host key and a throwaway user key, serving git over ssh as a
// real server does (git-upload-pack, git-receive-pack).
type sshServer struct {
	port       int
	user       string
	key        string // the user's private key
	knownHosts string
}

var sshdSetup struct {
	once sync.Once
	path string
	why  string
}

// sshd finds sshd, installing openssh-server from Debian's packages when
// it is missing and apt-get can (as root), or says why it cannot.
func sshd() (string, string) {
	sshdSetup.once.Do(func() {
		find := func() string {
			for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
				if _, err := os.Stat(p); err == nil {
					return p
				}
			}
			p, _ := exec.LookPath("sshd")
			return p
		}
		if p := find(); p != "" {
			sshdSetup.path = p
			return
		}
		if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
			sshdSetup.why = "sshd is not installed, and apt-get cannot install openssh-server here (not root, or no apt-get)"
			return
		}
		fmt.Fprintln(os.Stderr, "memsync tests: installing openssh-server for the ssh remote tests")
		cmd := exec.Command("sh", "-c", "apt-get update -qq && apt-get install -y -qq --no-install-recommends openssh-server >/dev/null")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			sshdSetup.why = fmt.Sprintf("installing openssh-server failed: %v: %s", err, strings.TrimSpace(string(out)))
			return
		}
		if p := find(); p != "" {
			sshdSetup.path = p
			return
		}
		sshdSetup.why = "openssh-server installed, but no sshd found"
	})
	return sshdSetup.path, sshdSetup.why
}

// startSSH starts an sshd for the test (skipping, with the reason, only
// when it truly cannot run).
func startSSH(t testing.TB) *sshServer {
	t.Helper()
	bin, why := sshd()
	if bin == "" {
		t.Skip("ssh remote tests skipped: " + why)
	}
	for _, tool := range []string{"ssh-keygen", "git-upload-pack", "git"} {
		if _, err := exec.LookPath(tool); err != nil && tool != "git-upload-pack" {
			t.Skipf("ssh remote tests skipped: %s is not installed", tool)
		}
	}
	dir := t.TempDir()
	keygen := func(name string) {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "orket-test", "-f", filepath.Join(dir, name)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
	}
	keygen("host_key")
	keygen("user_key")
	pub, _ := os.ReadFile(filepath.Join(dir, "user_key.pub"))
	os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600)
	os.MkdirAll("/run/sshd", 0o755) // privilege separation directory
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile %s
AuthorizedKeysFile %s
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
MaxStartups 64
MaxSessions 64
LogLevel ERROR
`, port, filepath.Join(dir, "host_key"), filepath.Join(dir, "sshd.pid"), filepath.Join(dir, "authorized_keys"))
	cfgPath := filepath.Join(dir, "sshd_config")
	os.WriteFile(cfgPath, []byte(cfg), 0o600)
	cmd := exec.Command(bin, "-D", "-e", "-f", cfgPath)
	var logs strings.Builder
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Skipf("ssh remote tests skipped: sshd does not start: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not listen: %s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	hostPub, _ := os.ReadFile(filepath.Join(dir, "host_key.pub"))
	fields := strings.Fields(string(hostPub))
	known := filepath.Join(dir, "known_hosts")
	os.WriteFile(known, []byte(fmt.Sprintf("[127.0.0.1]:%d %s %s\n", port, fields[0], fields[1])), 0o600)
	u, _ := user.Current()
	return &sshServer{port: port, user: u.Username, key: filepath.Join(dir, "user_key"), knownHosts: known}
}

func (s *sshServer) url(repo string) string {
	return fmt.Sprintf("ssh://%s@127.0.0.1:%d%s", s.user, s.port, repo)
}

// auth is the credentials a user of this server has: the key in a home
// of its own, the server in known_hosts.
func (s *sshServer) auth() Auth {
	return Auth{Home: filepath.Dir(s.key), IdentityFiles: []string{s.key}, KnownHosts: []string{s.knownHosts}, NoAgent: true,
		Credential: noCredential}
}

func sshClone(t testing.TB, s *sshServer, remote string) *clone {
	c := newClone(t, s.url(remote))
	c.opts.Auth = s.auth()
	return c
}

// TestSSH: two clones, then eight at once, over ssh (three under -short:
// TestEightClones has eight at once over file://, where the contention
// is the same and costs no ssh handshakes).
func TestSSH(t *testing.T) {
	srv := startSSH(t)
	remote := newBare(t)
	a, b := sshClone(t, srv, remote), sshClone(t, srv, remote)
	idsA := addRecords(a, "alice", 20, t0)
	a.write(store.MemoryFile, "# Agent Memory\n\n- from a\n")
	if res := a.sync(); !res.Pushed || res.Sent != 20 {
		t.Fatalf("%+v", res)
	}
	idsB := addRecords(b, "bob", 20, t0)
	b.write(store.MemoryFile, "# Agent Memory\n\n- from b\n")
	if res := b.sync(); res.Received != 20 || !res.Pushed {
		t.Fatalf("%+v", res)
	}
	a.sync()
	want := append(idsA, idsB...)
	sort.Strings(want)
	got := allIDs(a)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if m := a.read(store.MemoryFile); !strings.Contains(m, "from a") || !strings.Contains(m, "from b") {
		t.Errorf("memory:\n%s", m)
	}
	sameFiles(t, a, b)

	n := 8
	if testing.Short() {
		n = 3
	}
	t.Run(fmt.Sprintf("%d at once", n), func(t *testing.T) {
		remote := newBare(t)
		clones := make([]*clone, n)
		var want []string
		for i := range clones {
			clones[i] = sshClone(t, srv, remote)
			clones[i].opts.MaxAttempts = 40
			want = append(want, addRecords(clones[i], fmt.Sprintf("agent%d", i), 100, t0.Add(time.Duration(i)*time.Minute))...)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(clones))
		for i, c := range clones {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var res *Result
				res, errs[i] = c.trySync()
				if res != nil {
					t.Logf("clone %d: %d attempts, fetch %.0f ms, merge %.0f ms, push %.0f ms", i, res.Attempts, res.Timings.Fetch, res.Timings.Merge, res.Timings.Push)
				}
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("clone %d: %v", i, err)
			}
		}
		for _, c := range clones {
			c.sync()
		}
		sort.Strings(want)
		for i, c := range clones {
			got := allIDs(c)
			if d := countDup(got); len(d) > 0 {
				t.Errorf("clone %d holds records twice: %v", i, d[:1])
			}
			sort.Strings(got)
			if !cmp.Equal(want, got) {
				t.Errorf("clone %d holds %d records, want %d", i, len(got), len(want))
			}
		}
		sameFiles(t, clones...)
	})
}

// TestSSHRefused: a key the server does not know, a host key known_hosts
// does not vouch for, and a port nobody listens on, each a typed error on
// one line.
func TestSSHRefused(t *testing.T) {
	srv := startSSH(t)
	remote := newBare(t)
	other := filepath.Join(t.TempDir(), "other_key")
	exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other).Run()
	emptyKnown := filepath.Join(t.TempDir(), "known_hosts")
	os.WriteFile(emptyKnown, nil, 0o600)
	tests := []struct {
		name string
		auth func(*Auth)
		url  string
		want any
	}{
		{"unknown key", func(a *Auth) { a.IdentityFiles = []string{other} }, srv.url(remote), &AuthError{}},
		{"unknown host", func(a *Auth) { a.KnownHosts = []string{emptyKnown} }, srv.url(remote), &AuthError{}},
		{"no known_hosts", func(a *Auth) { a.KnownHosts = []string{"/nonexistent/known_hosts"} }, srv.url(remote), &AuthError{}},
		{"nobody listens", func(*Auth) {}, fmt.Sprintf("ssh://%s@127.0.0.1:%d%s", srv.user, freePort(t), remote), &UnreachableError{}},
		{"no repository", func(*Auth) {}, srv.url("/nonexistent/repo.git"), &UnreachableError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClone(t, tt.url)
			c.opts.Auth = srv.auth()
			tt.auth(&c.opts.Auth)
			addRecords(c, "alice", 2, t0)
			_, err := c.trySync()
			var ae *AuthError
			var ue *UnreachableError
			switch tt.want.(type) {
			case *AuthError:
				if !errors.As(err, &ae) {
					t.Fatalf("%T %v, want an AuthError", err, err)
				}
			case *UnreachableError:
				if !errors.As(err, &ue) {
					t.Fatalf("%T %v, want an UnreachableError", err, err)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("message on two lines: %q", err)
			}
			t.Log(err)
		})
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestSSHHookDeclines: a remote whose pre-receive hook declines the update
// is reported as a refusal, at once, not retried as a lost race; the local
// memory keeps what it had.
func TestSSHHookDeclines(t *testing.T) {
	srv := startSSH(t)
	remote := newBare(t)
	hook := filepath.Join(remote, "hooks", "pre-receive")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'refs/orket/* are not allowed here' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := sshClone(t, srv, remote)
	ids := addRecords(a, "alice", 5, t0)
	res, err := a.trySync()
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("err %v (%T), want a RefusedError", err, err)
	}
	if !strings.Contains(re.Error(), "declined") || re.Remote == "" {
		t.Errorf("refusal: %v (remote %q)", re, re.Remote)
	}
	if res != nil && res.Attempts > 1 {
		t.Errorf("%d attempts: a refusal was retried", res.Attempts)
	}
	got := allIDs(a)
	sort.Strings(got)
	sort.Strings(ids)
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("local records (-want +got):\n%s", diff)
	}
}
