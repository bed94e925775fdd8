package redact

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// tail32 is a 32 KiB output tail as orket keeps one: go test output with
// a few secrets and secret-looking words in it.
func tail32() string {
	var b strings.Builder
	for i := 0; b.Len() < 32<<10; i++ {
		switch i % 40 {
		case 0:
			fmt.Fprintf(&b, "    auth_test.go:%d: login failed: password=hunter2-%d token=%x\n", i, i, i*7919)
		case 10:
			fmt.Fprintf(&b, "    client.go:%d: GET https://deploy:s3cret@api.example.com/v1/keys?page=%d: 401\n", i, i)
		case 20:
			b.WriteString("    --- FAIL: TestRefreshToken (0.00s)\n        token_test.go:31: got expired token, want a fresh one\n")
		case 30:
			b.WriteString("Error: API_KEY is not set; export API_KEY=<key> and retry\n")
		default:
			fmt.Fprintf(&b, "=== RUN   TestHandler/case_%d\n--- PASS: TestHandler/case_%d (0.00s)\n", i, i)
		}
	}
	return b.String()[:32<<10]
}

// BenchmarkRedactTail redacts a 32 KiB tail in one piece: what orket
// does to a stored output tail (it must take well under 5 ms).
func BenchmarkRedactTail(b *testing.B) {
	r := New(Options{Environ: []string{"GITHUB_TOKEN=ghp_notreallyatokenbutlongenough", "DB_PASSWORD=hunter2-db"},
		Values: []string{"step-env-value"}})
	s := tail32()
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Redact(s)
	}
}

// BenchmarkWriter streams the same output through a Writer in writes of
// 4 KiB, as a verify step's output arrives.
func BenchmarkWriter(b *testing.B) {
	r := New(Options{Environ: []string{"GITHUB_TOKEN=ghp_notreallyatokenbutlongenough"}})
	p := []byte(tail32())
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		w := r.NewWriter(io.Discard)
		for i := 0; i < len(p); i += 4096 {
			w.Write(p[i:min(i+4096, len(p))])
		}
		w.Close()
	}
}

// BenchmarkWriterClean streams output with nothing to redact: the
// prefilter's cost alone.
func BenchmarkWriterClean(b *testing.B) {
	r := New(Options{})
	var sb strings.Builder
	for i := 0; sb.Len() < 32<<10; i++ {
		fmt.Fprintf(&sb, "=== RUN   TestHandler/case_%d\n--- PASS: TestHandler/case_%d (0.00s)\n", i, i)
	}
	p := []byte(sb.String())
	w := r.NewWriter(io.Discard)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		w.Write(p)
	}
}

// BenchmarkNewPrefilter builds the automaton of the known shapes, as
// every orket run does once (redact.New).
func BenchmarkNewPrefilter(b *testing.B) {
	kws := keywords(nil)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		newPrefilter(kws)
	}
}
