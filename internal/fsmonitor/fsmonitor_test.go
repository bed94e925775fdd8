package fsmonitor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      *Result
		err       bool
	}{
		{"changes", "c:1:2\x00a.txt\x00dir/b\x00", &Result{Token: "c:1:2", Paths: []string{"a.txt", "dir/b"}}, false},
		{"no-trailing-nul", "tok\x00a\x00b", &Result{Token: "tok", Paths: []string{"a", "b"}}, false},
		{"nothing-changed", "tok\x00", &Result{Token: "tok"}, false},
		{"directory-with-slash", "tok\x00dir/\x00", &Result{Token: "tok", Paths: []string{"dir"}}, false},
		{"trivial", "tok\x00/\x00", &Result{Token: "tok", All: true}, false},
		{"trivial-then-more", "tok\x00/c:2\x00x\x00", &Result{Token: "tok", All: true}, false},
		{"no-token", "\x00a\x00", nil, true},
		{"empty", "", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.out))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestFromConfig(t *testing.T) {
	for _, tc := range []struct {
		value, version string
		hook           bool
		noHook         bool // errors.Is(err, ErrNoHook)
	}{
		{"", "", false, true},
		{"false", "", false, true},
		{"true", "", false, true}, // git's daemon: another protocol
		{".git/hooks/query-watchman", "", true, false},
		{".git/hooks/query-watchman", "2", true, false},
		{".git/hooks/query-watchman", "1", false, true},
	} {
		h, err := FromConfig(tc.value, tc.version, "/repo")
		if (h != nil) != tc.hook || errors.Is(err, ErrNoHook) != tc.noHook {
			t.Errorf("FromConfig(%q, %q) = %v, %v", tc.value, tc.version, h, err)
		}
	}
}

// TestQuery runs hooks as git does: in the work tree, with "2" and the
// token, a path directly and a command with shell syntax through sh.
func TestQuery(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("echo-hook", "#!/bin/sh\nprintf 'new:%s:%s\\0%s\\0' \"$1\" \"$2\" \"$(basename \"$PWD\")\"\n")
	write("failing-hook", "#!/bin/sh\necho 'watchman is not running' >&2\nexit 1\n")
	write("slow-hook", "#!/bin/sh\nsleep 5\n")
	ctx := context.Background()

	res, err := (&Hook{Command: "./echo-hook", Dir: dir}).Query(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	want := &Result{Token: "new:2:old", Paths: []string{filepath.Base(dir)}}
	if d := cmp.Diff(want, res); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}

	res, err = (&Hook{Command: "FOO=1 ./echo-hook", Dir: dir}).Query(ctx, "t 2")
	if err != nil {
		t.Fatal(err)
	}
	if res.Token != "new:2:t 2" {
		t.Errorf("through sh: token %q", res.Token)
	}

	_, err = (&Hook{Command: "./failing-hook", Dir: dir}).Query(ctx, "x")
	if err == nil || !strings.Contains(err.Error(), "watchman is not running") {
		t.Errorf("failing hook: %v", err)
	}

	start := time.Now()
	_, err = (&Hook{Command: "./slow-hook", Dir: dir, Timeout: 100 * time.Millisecond}).Query(ctx, "x")
	if err == nil || !strings.Contains(err.Error(), "timed out") || time.Since(start) > 3*time.Second {
		t.Errorf("slow hook: %v after %v", err, time.Since(start))
	}
}
