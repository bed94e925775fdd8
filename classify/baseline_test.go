package classify

import "testing"

// TestNewErrors: the error lines a change adds to a step that fails
// without it too; the same failure in other numbers is not new.
func TestNewErrors(t *testing.T) {
	base := "ok   parse\nFAIL  bump patch: got \"1.5.1\", want \"1.5.0\" (0.01s)\n"
	with := "ok   parse\nFAIL  bump patch: got \"1.5.1\", want \"1.5.0\" (0.03s)\nFAIL  bump minor: got \"1.6.0\", want \"1.5.0\"\nsome new chatter\n"
	got := NewErrors(with, base)
	if len(got) != 1 || got[0] != `FAIL  bump minor: got "1.6.0", want "1.5.0"` {
		t.Errorf("NewErrors = %q", got)
	}
	if got := NewErrors(base, base); len(got) != 0 {
		t.Errorf("the same output adds %q", got)
	}
}
