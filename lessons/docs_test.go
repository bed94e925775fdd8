package lessons

import (
	"os"
	"strings"
	"testing"
)

// TestDocumentedFormula keeps the score formula in docs/lessons.md equal
// to the one the code applies.
func TestDocumentedFormula(t *testing.T) {
	b, err := os.ReadFile("../docs/lessons.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- score-formula:begin -->")
	doc, _, ok2 := strings.Cut(rest, "<!-- score-formula:end -->")
	if !ok || !ok2 {
		t.Fatal("docs/lessons.md has no score-formula block")
	}
	doc = strings.TrimSpace(strings.Trim(strings.TrimSpace(doc), "`"))
	if doc != Formula {
		t.Errorf("docs/lessons.md's formula:\n%s\nthe code's:\n%s", doc, Formula)
	}
}
