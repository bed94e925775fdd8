package lessons

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStripANSI(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"\x1b[31mFAIL\x1b[0m pkg/api", "FAIL pkg/api"},
		{"\x1b[1;31merror\x1b[39;49m\x1b[22m: x", "error: x"},
		{"\x1b[2K\x1b[1Gprogress", "progress"},
		{"\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1b]0;title\x07after", "after"},
		{"\x1b(Bcharset", "charset"},
		{"keypad\x1b=on", "keypadon"},
		{"ěščř \x1b[33m›\x1b[0m", "ěščř ›"},
	} {
		if got := StripANSI(tc.in); got != tc.want {
			t.Errorf("StripANSI(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestErrorFile(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"pkg/api/x.go:12:3: undefined: Foo", "pkg/api/x.go"},
		{"./pkg/api/x.go:12: undefined: Foo", "pkg/api/x.go"},
		{"    m_test.go:10: DATABASE_URL is not set", "m_test.go"},
		{"src/app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.", "src/app.ts"},
		{"src/app.ts:3:7 - error TS2322: Type 'string'", "src/app.ts"},
		{"  --> src/main.rs:3:5", "src/main.rs"},
		{`  File "app/main.py", line 3, in <module>`, "app/main.py"},
		{"[ERROR] /work/src/Foo.java:[12,5] cannot find symbol", "/work/src/Foo.java"},
		{"/home/u/web/src/a.test.js:4:10", "/home/u/web/src/a.test.js"},
		{"DATABASE_URL is not set", ""},
		{"dial tcp 127.0.0.1:5432: connect: connection refused", ""},
		{"dial tcp: lookup db.internal:5432: no such host", ""},
		{"listen tcp :8080: bind: address already in use", ""},
		{"Type error", ""},
	} {
		if got := ErrorFile(tc.line); got != tc.want {
			t.Errorf("ErrorFile(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

// TestANSIIsNeverStored checks that colour codes are stripped when a lesson
// is sealed, and when a lesson written before (by an older orket, another
// tool) is read back or advised.
func TestANSIIsNeverStored(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
	red := func(x string) string { return "\x1b[1;31m" + x + "\x1b[0m" }
	l := stepLesson("test", "go test ./...", "")
	l.Classification.FirstError = red("pkg/a.go:3: undefined: X")
	l.Verify.OutputTail = red("FAIL") + " pkg\n"
	l.Seal(NewRedactor(nil))
	// Written as an older orket wrote it: escapes and all.
	old := stepLesson("lint", "go vet ./...", "")
	old.Classification.FirstError = red("pkg/b.go:9: vet: bad")
	old.Advice.Title = red("Lint error")
	old.Classification.Tags, old.Advice.PreflightChecks = []string{"lint_error"}, nil
	old.Plan.TouchSet = []string{"pkg/b.go"}
	if err := s.Append(l, old); err != nil {
		t.Fatal(err)
	}
	var got []string
	s.Each(func(l *Lesson) error {
		got = append(got, l.Classification.FirstError, l.Advice.Title, l.Verify.OutputTail)
		return nil
	})
	want := []string{"pkg/a.go:3: undefined: X", "Missing environment variable DATABASE_URL", "FAIL pkg\n",
		"pkg/b.go:9: vet: bad", "Lint error", ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	adv, _, _ := s.Advisories(Query{Scope: []string{"pkg"}, Commands: rootCommands("go test ./...", "go vet ./..."), Now: now, TopK: 3})
	for _, a := range adv {
		for _, f := range []string{a.Title, a.FirstError, a.File} {
			if strings.ContainsRune(f, 0x1b) {
				t.Errorf("advisory keeps an escape: %q", f)
			}
		}
	}
	if len(adv) != 2 || adv[0].File == "" {
		t.Errorf("advisories %+v", adv)
	}
}

func TestFileNear(t *testing.T) {
	out := "=== RUN   TestCleanPath\n--- FAIL: TestCleanPath (0.00s)\n    clean_test.go:14: CleanPath(\"\") = \".\", want \"/\"\nFAIL\n"
	if got := fileNear(out, "--- FAIL: TestCleanPath (0.00s)"); got != "clean_test.go" {
		t.Errorf("fileNear = %q, want clean_test.go", got)
	}
	if got := fileNear("error: boom\n\n\n\n\n\n\nx.go:1: far\n", "error: boom"); got != "" {
		t.Errorf("fileNear = %q, want nothing past %d lines", got, nearLines)
	}
}
