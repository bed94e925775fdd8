package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTracesEqualGo: the YAML traces are the Go-built ones, exactly.
func TestTracesEqualGo(t *testing.T) {
	loaded, err := loadTraces()
	if err != nil {
		t.Fatal(err)
	}
	built := traces()
	if len(loaded) != len(built) {
		t.Errorf("%d YAML traces, %d Go traces", len(loaded), len(built))
	}
	for name, want := range built {
		got, ok := loaded[name]
		if !ok {
			t.Errorf("no YAML trace %s", name)
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("trace %s: YAML differs from Go (-go +yaml):\n%s", name, d)
		}
	}
}
