package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCodesDocumented checks the code table against docs/codes.md: every
// code is documented with its exit status and meaning, and nothing else is.
func TestCodesDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/codes.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\| (\\d+) \\| ([^|]+) \\|")
	type entry struct {
		Exit    int
		Meaning string
	}
	doc := map[Code]entry{}
	for _, m := range row.FindAllSubmatch(data, -1) {
		exit, _ := strconv.Atoi(string(m[2]))
		if _, dup := doc[Code(m[1])]; dup {
			t.Errorf("%s documented twice", m[1])
		}
		doc[Code(m[1])] = entry{exit, string(bytes.TrimSpace(m[3]))}
	}
	table := map[Code]entry{}
	for c, e := range codes {
		table[c] = entry{e.Exit, e.Meaning}
	}
	// The docs write flags in backquotes; the table is plain text.
	for c, e := range doc {
		e.Meaning = string(bytes.ReplaceAll([]byte(e.Meaning), []byte("`"), nil))
		doc[c] = e
	}
	if diff := cmp.Diff(table, doc); diff != "" {
		t.Errorf("docs/codes.md and the code table differ (-table +docs):\n%s", diff)
	}
}

func TestRender(t *testing.T) {
	cause := errors.New("boom")
	for _, tc := range []struct {
		name       string
		err        error
		wantExit   int
		wantStderr string
	}{
		{"ok", nil, 0, ""},
		{"usage", errorf(EUsage, "see --help", "bad flag"), 2, "orket: E_USAGE: bad flag; see --help\n"},
		{"sigterm", &Error{Code: EInterrupted, Msg: "interrupted", Exit: 143}, 143, "orket: E_INTERRUPTED: interrupted\n"},
		{"wrapped", fmt.Errorf("context: %w", errorf(ELocked, "wait", "locked by pid 1")), 5, "orket: E_LOCKED: locked by pid 1; wait\n"},
		{"foreign", cause, 70, "orket: E_INTERNAL: boom; this is a bug in orket; please report it with the command you ran\n"},
		{"multiline", errorf(EPatchInvalid, "regenerate it", "line one\nline two"), 2, "orket: E_PATCH_INVALID: line one line two; regenerate it\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := render(&options{stdout: &stdout, stderr: &stderr}, nil, tc.err)
			if got != tc.wantExit || stderr.String() != tc.wantStderr || stdout.Len() != 0 {
				t.Errorf("render = %d, stderr %q, stdout %q; want %d, %q", got, stderr.String(), stdout.String(), tc.wantExit, tc.wantStderr)
			}
		})
	}
}
