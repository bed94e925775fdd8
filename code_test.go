package orket

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCodesDocumented checks the code table against docs/codes.md: every
// code is documented with its exit status and meaning, and nothing else is.
func TestCodesDocumented(t *testing.T) {
	data, err := os.ReadFile("docs/codes.md")
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
	for _, c := range codes {
		table[c.Code] = entry{c.Exit, c.Meaning}
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
