package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/orket/orket"
	"github.com/orket/orket/guardrails"
	"github.com/orket/orket/internal/inert"
	"github.com/orket/orket/learn"
)

func TestRender(t *testing.T) {
	cause := errors.New("boom")
	for _, tc := range []struct {
		name       string
		err        error
		wantExit   int
		wantStderr string
	}{
		{"ok", nil, 0, ""},
		{"usage", orket.Errorf(orket.EUsage, "see --help", "bad flag"), 2, "orket: E_USAGE: bad flag; see --help\n"},
		{"sigterm", &orket.InterruptedError{Sig: syscall.SIGTERM, During: "during the edit"}, 143, "orket: E_INTERRUPTED: interrupted by SIGTERM during the edit; run again when ready\n"},
		{"wrapped", fmt.Errorf("context: %w", orket.Errorf(orket.ELocked, "wait", "locked by pid 1")), 5, "orket: E_LOCKED: locked by pid 1; wait\n"},
		{"foreign", cause, 70, "orket: E_INTERNAL: boom; this is a bug in orket; please report it with the command you ran\n"},
		{"canceled", fmt.Errorf("lock claude's guardrails: %w", context.Canceled), 130, "orket: E_INTERRUPTED: interrupted by SIGINT while it waited; run again when ready\n"},
		{"stale proposal", learn.StoreError(fmt.Errorf("approve: %w", guardrails.ErrAlreadyThere)), 2,
			"orket: E_USAGE: the proposal no longer applies: approve: the constraint is already in the guardrails; nothing was written; orket guardrails show has the current text; orket lessons reject ID --reason \"...\" closes the proposal\n"},
		{"multiline", orket.Errorf(orket.EPatchInvalid, "regenerate it", "line one\nline two"), 2, "orket: E_PATCH_INVALID: line one line two; regenerate it\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := render(&options{stdout: inert.NewWriter(&stdout), stderr: inert.NewWriter(&stderr)}, nil, tc.err)
			if got != tc.wantExit || stderr.String() != tc.wantStderr || stdout.Len() != 0 {
				t.Errorf("render = %d, stderr %q, stdout %q; want %d, %q", got, stderr.String(), stdout.String(), tc.wantExit, tc.wantStderr)
			}
		})
	}
}
