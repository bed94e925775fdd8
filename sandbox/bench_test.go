package sandbox

import (
	"os"
	"os/exec"
	"testing"
)

// BenchmarkExec measures what the sandbox adds to starting a command:
// /bin/true plain, then through the helper (an exec of orket, the
// Landlock ruleset, an exec of the command). With
// ORKET_SANDBOX_BENCH_HELPER set to a binary that links this package
// (a build of orket), the helper is that binary, so its start-up cost is
// the real one; otherwise it is this test binary.
func BenchmarkExec(b *testing.B) {
	requireLandlock(b)
	if h := os.Getenv("ORKET_SANDBOX_BENCH_HELPER"); h != "" {
		old := self
		self = h
		b.Cleanup(func() { self = old })
	}
	f := newFixture(b)
	s := f.sandbox(b, Policy{Mode: Required, Scope: []string{"pkg/api", "docs"}})
	for _, c := range []struct {
		name string
		s    *Sandbox
	}{{"plain", nil}, {"sandboxed", s}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				cmd.Dir, cmd.Env = f.root, f.env()
				if err := c.s.Apply(cmd); err != nil {
					b.Fatal(err)
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
			}
		})
	}
}

// BenchmarkNew measures preparing a sandbox for a run: the kernel probe,
// the scope's directories, the temporary directory (and removing it).
func BenchmarkNew(b *testing.B) {
	requireLandlock(b)
	f := newFixture(b)
	p := Policy{Mode: Required, Root: f.root, Home: f.home, Scope: []string{"pkg/**/*.go", "docs"}, AllowGit: true}
	for b.Loop() {
		s, err := New(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
