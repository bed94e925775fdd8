package guardrails

import "testing"

// TestUIDAddress: a user id stands for an address when it is valid and
// the address is its own (in its last angle brackets), not one it quotes.
func TestUIDAddress(t *testing.T) {
	for _, tt := range []struct {
		validity, uid string
		want          bool
	}{
		{"u", "Alice <alice@x.com>", true},
		{"-", "Alice <ALICE@x.com>", true},
		{"u", "Eve (see <alice@x.com>) <eve@z.com>", false},
		{"r", "Alice <alice@x.com>", false},
		{"e", "Alice <alice@x.com>", false},
		{"u", "alice@x.com", false},
		{"u", "Alice <alice@x.com> trailing", false},
	} {
		if got := uidAddress(tt.validity, tt.uid, "alice@x.com"); got != tt.want {
			t.Errorf("uidAddress(%q, %q) = %v, want %v", tt.validity, tt.uid, got, tt.want)
		}
	}
}
