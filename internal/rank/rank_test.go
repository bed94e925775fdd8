package rank

import (
	"slices"
	"testing"
)

func TestByCount(t *testing.T) {
	got := ByCount(map[string]int{"b": 2, "a": 2, "c": 5, "d": 1})
	if want := []string{"c", "a", "b", "d"}; !slices.Equal(got, want) {
		t.Errorf("ByCount = %v, want %v", got, want)
	}
	if got := ByCount(nil); len(got) != 0 {
		t.Errorf("ByCount(nil) = %v, want none", got)
	}
}
