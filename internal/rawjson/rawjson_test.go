package rawjson

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The reader reads what encoding/json reads.
func TestObject(t *testing.T) {
	line := []byte(`{"a":"x\"y","n":12,"b":true,"o":{"k":[1,"]",{"z":"}"}]},"t":["p","q"],"s":"é\u00e9","e":null,"k\u0065y":1}` + "\n")
	got := map[string]string{}
	if !Object(line, func(k, v []byte) { got[string(k)] = string(v) }) {
		t.Fatal("not read")
	}
	want := map[string]string{"a": `"x\"y"`, "n": "12", "b": "true", "o": `{"k":[1,"]",{"z":"}"}]}`, "t": `["p","q"]`, "s": `"é\u00e9"`, "e": "null", "key": "1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	str := func(v string) string { s, _ := String([]byte(v)); return s }
	if str(got["s"]) != "éé" || str(got["a"]) != `x"y` {
		t.Errorf("strings: %q %q", str(got["s"]), str(got["a"]))
	}
	if _, ok := String([]byte("12")); ok {
		t.Error("a number read as a string")
	}
	for _, bad := range []string{``, `[]`, `{"a":`, `{"a":"x`, `{"a" 1}`, `{"a":1,}`, `{"a":{"b":1}`} {
		if Object([]byte(bad), func(k, v []byte) {}) {
			t.Errorf("%q read as an object", bad)
		}
	}
}

// FuzzObject: on every valid JSON object, Object gives the members
// encoding/json gives (the last of a repeated key wins in both), and
// String the strings.
func FuzzObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":"x\"y","o":{"k":[1,"]"]}}`, `{"k\u0065y":"\u00e9\ud83d\ude00"}`, ` { "a" : [ ] , "b":null } `, `{"a":"\xff"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want map[string]json.RawMessage
		if json.Unmarshal(b, &want) != nil || want == nil {
			Object(b, func(k, v []byte) {}) // never panics
			return
		}
		got := map[string]json.RawMessage{}
		if !Object(b, func(k, v []byte) { got[string(k)] = v }) {
			t.Fatalf("%q: not read as an object", b)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d members, encoding/json has %d", b, len(got), len(want))
		}
		for k, w := range want {
			g, ok := got[k]
			if !ok || !bytes.Equal(bytes.TrimSpace(g), bytes.TrimSpace(w)) {
				t.Fatalf("%q: member %q is %q, encoding/json has %q", b, k, g, w)
			}
			var ws string
			if w[0] == '"' && json.Unmarshal(w, &ws) == nil {
				if gs, ok := String(g); !ok || gs != ws {
					t.Fatalf("%q: member %q reads %q, %v; encoding/json %q", b, k, gs, ok, ws)
				}
			}
		}
	})
}
