package redact

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// streamed runs in through a stream with the given limits, cutting the
// writes after each offset of cuts (ascending), and returns the output.
func streamed(r *Redactor, maxLine, hold int, in []byte, cuts []int) string {
	st := newStream(r, maxLine, hold)
	var out bytes.Buffer
	st.sink = func(b []byte) error { out.Write(b); return nil }
	prev := 0
	for _, c := range cuts {
		st.write(in[prev:c])
		st.flush()
		prev = c
	}
	st.write(in[prev:])
	st.close()
	return out.String()
}

// through writes chunks to a Writer and returns what came out.
func through(r *Redactor, chunks ...[]byte) string {
	var out bytes.Buffer
	w := r.NewWriter(&out)
	for _, c := range chunks {
		w.Write(c)
	}
	w.Close()
	return out.String()
}

// lastBytes keeps the last n bytes written to it, as orket's output tail
// does.
type lastBytes struct {
	n   int
	buf []byte
}

func (l *lastBytes) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	if len(l.buf) > 2*l.n {
		l.buf = append(l.buf[:0], l.buf[len(l.buf)-l.n:]...)
	}
	return len(p), nil
}

func (l *lastBytes) String() string {
	if len(l.buf) > l.n {
		return string(l.buf[len(l.buf)-l.n:])
	}
	return string(l.buf)
}

// Every shape, in some output, cut into two writes at every byte and
// written a byte at a time, comes out as Redact makes it.
func TestWriterEveryCut(t *testing.T) {
	r := New(Options{Values: []string{"step-env-value"}})
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			in := []byte("=== RUN TestDeploy\n" + sh.line + "\nstep-env-value\n--- FAIL: TestDeploy (0.01s)\n")
			want := r.Redact(string(in))
			for k := 0; k <= len(in); k++ {
				if got := through(r, in[:k], in[k:]); got != want {
					t.Fatalf("cut at %d (-want +got):\n%s", k, cmp.Diff(want, got))
				}
			}
			var bytewise [][]byte
			for i := range in {
				bytewise = append(bytewise, in[i:i+1])
			}
			if got := through(r, bytewise...); got != want {
				t.Fatalf("a byte at a time (-want +got):\n%s", cmp.Diff(want, got))
			}
		})
	}
}

// A secret in a line too long to hold is redacted wherever the line is
// cut into pieces: each single-line shape is moved across the first cut
// of a long line one byte at a time (with small limits, so that the test
// covers every offset).
func TestLongLineCuts(t *testing.T) {
	const maxLine, hold = 600, 256
	r := New(Options{})
	filler := strings.Repeat("lorem ipsum ", 100)
	for _, sh := range shapes {
		if strings.Contains(sh.line, "\n") || len(sh.line) > hold {
			continue
		}
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			// Every offset at which the line crosses the end of the first
			// piece or the end of what the first window sees; a few in
			// between. Under the race detector, every sixth.
			end := maxLine - hold
			step := 1
			if raceEnabled || testing.Short() {
				step = 6
			}
			for p := end - len(sh.line) - 2; p <= maxLine+2; p += step {
				if p > end+2 && p < maxLine-len(sh.line)-2 && p%16 != 0 {
					continue
				}
				in := []byte(filler[:p] + " " + sh.line + " " + filler + "\n")
				got := streamed(r, maxLine, hold, in, nil)
				if strings.Contains(got, sh.secret) {
					t.Fatalf("secret survived a cut with the line at %d:\n%s", p, got[max(0, p-40):min(len(got), p+len(sh.line)+60)])
				}
				if p%5 != 0 {
					continue
				}
				if cut := streamed(r, maxLine, hold, in, []int{p, p + 7}); cut != got {
					t.Fatalf("writes cut at %d change the output (-one write +cut):\n%s", p, cmp.Diff(got, cut))
				}
			}
		})
	}
}

// A line longer than the limit is passed on in pieces: memory stays
// bounded even for one line of megabytes without a newline.
func TestLongLineIsNotHeld(t *testing.T) {
	var out bytes.Buffer
	w := New(Options{}).NewWriter(&out)
	line := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, no newline
	w.Write(line)
	if out.Len() < len(line)-maxLine-hold {
		t.Errorf("after 1 MiB without a newline only %d bytes came out", out.Len())
	}
	w.Close()
	if diff := cmp.Diff(string(line), out.String()); diff != "" {
		t.Errorf("a clean long line is changed")
	}
}

// A private key block followed by thousands of lines: behind the Writer,
// a 32 KiB tail (which starts in the middle of the block when the key is
// long enough, and well after it otherwise) holds no part of the key.
func TestPEMThenManyLines(t *testing.T) {
	body := strings.Repeat(strings.Split(rsaBody, "\n")[0]+"\n", 600) // ~39 KB of key
	var b strings.Builder
	b.WriteString("$ ./deploy.sh\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "line %d of the deploy log\n", i)
	}
	in := b.String()
	for _, cut := range []int{1, 7, 4096, 1 << 20} {
		tail := &lastBytes{n: 32 << 10}
		w := New(Options{}).NewWriter(tail)
		for i := 0; i < len(in); i += cut {
			w.Write([]byte(in[i:min(i+cut, len(in))]))
		}
		w.Close()
		if w.Written() != int64(len(in)) {
			t.Errorf("Written = %d, want %d", w.Written(), len(in))
		}
		got := tail.String()
		if strings.Contains(got, "MIIEowIBAAKCAQEA") || !strings.HasSuffix(got, "line 4999 of the deploy log\n") {
			t.Errorf("writes of %d: tail starts %q, ends %q", cut, got[:80], got[len(got)-40:])
		}
	}
	// The tail of a key cut off from its BEGIN line, as the tail would
	// have kept it without redaction first.
	tail := &lastBytes{n: 32 << 10}
	w := New(Options{}).NewWriter(tail)
	w.Write([]byte("-----BEGIN RSA PRIVATE KEY-----\n" + body))
	w.Close()
	if got := tail.String(); got != Redacted {
		t.Errorf("unterminated key: tail %q", got[:min(80, len(got))])
	}
}

// A password= line where a 32 KiB tail begins, at every offset: the tail
// holds no part of the secret.
func TestPasswordAtTailBoundary(t *testing.T) {
	const secret = "hunter2-value-xyz"
	line := "db: password=" + secret + " user=app\n"
	after := strings.Repeat("ok\n", (32<<10)/3)
	r := New(Options{})
	for shift := -len(line); shift <= len(line); shift++ {
		tail := &lastBytes{n: len(after) + len(line) - shift}
		w := r.NewWriter(tail)
		w.Write([]byte(strings.Repeat("lorem ipsum\n", 100) + line + after))
		w.Close()
		got := tail.String()
		for i := 0; i+4 <= len(secret); i++ {
			if strings.Contains(got, secret[i:i+4]+"") && strings.Contains(got, secret[i:]) {
				t.Fatalf("shift %d: part of the secret in the tail %q", shift, got[:60])
			}
		}
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	if f.n > 1 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriterErrors(t *testing.T) {
	w := New(Options{}).NewWriter(&failWriter{})
	if _, err := w.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("two\n")); err == nil || err.Error() != "disk full" {
		t.Errorf("second write: %v, want disk full", err)
	}
	if n, err := w.Write([]byte("three\n")); n != 0 || err == nil {
		t.Errorf("write after an error: %d, %v", n, err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close hides the error")
	}
	w2 := New(Options{}).NewWriter(&bytes.Buffer{})
	w2.Close()
	if _, err := w2.Write([]byte("x")); err == nil {
		t.Error("write after Close accepted")
	}
	if err := w2.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// FuzzWriter checks the streaming contract: whatever the input and
// however it is cut into writes, the Writer's output is exactly Redact's
// output for the whole input (so never less redacted). It runs with the
// real limits and with small ones (a line of 64 bytes, 16 of context), so
// that the pieces of long lines and their carried secrets are exercised
// by short inputs.
func FuzzWriter(f *testing.F) {
	for _, sh := range shapes {
		f.Add([]byte(sh.line+"\n"+sh.line), uint64(len(sh.line)))
	}
	f.Add([]byte("-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\nnot key-ish line!\nx"), uint64(3))
	f.Add([]byte(strings.Repeat("password=", 20)+strings.Repeat("a", 100)), uint64(99))
	r := New(Options{Values: []string{"fuzz-secret", "b3ta"}, Environ: []string{"API_TOKEN=env-secret"}})
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var cuts []int
		for c := 0; c < len(in); {
			c += 1 + rng.IntN(max(1, len(in)/3+1))
			if c < len(in) {
				cuts = append(cuts, c)
			}
		}
		want := r.Redact(string(in))
		if got := streamed(r, maxLine, hold, in, cuts); got != want {
			t.Fatalf("writes cut at %v (-Redact +Writer):\n%s", cuts, cmp.Diff(want, got))
		}
		small := streamed(r, 64, 16, in, nil)
		if got := streamed(r, 64, 16, in, cuts); got != small {
			t.Fatalf("small limits, writes cut at %v (-one write +cut):\n%s", cuts, cmp.Diff(small, got))
		}
	})
}

// 200 MB of output through a Writer, in writes of 32 KiB: the live heap
// stays flat (the writer holds at most one line) and clean output costs
// no allocation.
func TestWriter200MB(t *testing.T) {
	total := 200 << 20
	if raceEnabled || testing.Short() {
		total = 20 << 20 // the race detector makes each byte ten times dearer
	}
	var chunk bytes.Buffer
	for i := 0; chunk.Len() < 32<<10; i++ {
		switch {
		case i%500 == 0:
			fmt.Fprintf(&chunk, "    auth_test.go:%d: login with password=hunter2-%d failed\n", i, i)
		case i%97 == 0:
			chunk.WriteString(strings.Repeat("progress ", 1000) + "\n") // 9 KB lines
		default:
			fmt.Fprintf(&chunk, "=== RUN   TestHandler/case_%d\n--- PASS: TestHandler/case_%d (0.00s)\n", i, i)
		}
	}
	p := chunk.Bytes()
	tail := &lastBytes{n: 32 << 10}
	w := New(Options{Environ: []string{"GITHUB_TOKEN=ghp_notreallyatokenbutlongenough"}}).NewWriter(tail)

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	for n := 0; n < total; n += len(p) {
		w.Write(p)
		if n%(16<<20) < len(p) {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	w.Close()
	if w.Written() < int64(total) {
		t.Fatalf("Written = %d", w.Written())
	}
	if grown := int64(peak) - int64(base); grown > 8<<20 {
		t.Errorf("live heap grew by %d bytes over %d MB of output", grown, total>>20)
	}
	if strings.Contains(tail.String(), "hunter2") {
		t.Error("a password in the tail")
	}

	clean := bytes.Repeat([]byte("--- PASS: TestHandler/case_1 (0.00s)\n"), 1000)
	if n := testing.AllocsPerRun(20, func() { w.Write(clean) }); n != 0 {
		t.Errorf("writing clean output: %v allocations per write, want 0", n)
	}
}
