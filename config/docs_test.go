package config

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReferenceMatchesSchema checks docs/config.md against the JSON
// Schema: every key the schema defines is documented (in backquotes), and
// the example in the reference loads.
func TestReferenceMatchesSchema(t *testing.T) {
	doc, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(Schema, &schema); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if props, ok := x["properties"].(map[string]any); ok {
				for k, p := range props {
					keys[k] = true
					walk(p)
				}
			}
			for k, sub := range x {
				if k != "properties" {
					walk(sub)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(schema)
	var missing []string
	for k := range keys {
		if !strings.Contains(string(doc), "`"+k+"`") && !strings.Contains(string(doc), k+": ") && !strings.Contains(string(doc), "{"+k) {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("keys of the schema not in docs/config.md (-want +got):\n%s", diff)
	}
	// The example loads.
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("no yaml example in docs/config.md")
	}
	if _, err := Parse(m[1], "docs/config.md"); err != nil {
		t.Errorf("the reference's example does not load: %v", err)
	}
}
