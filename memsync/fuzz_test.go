package memsync

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzMerge: the merge parses logs from other machines. Whatever the
// bytes, it does not panic; its output is canonical (merging it again,
// alone or with any of its inputs, gives it back), the same whatever the
// order of the inputs, holds only JSON objects with a string id, one line
// per record, and keeps every record of the inputs (or a version of it
// that beats it).
func FuzzMerge(f *testing.F) {
	f.Add([]byte(`{"id":"a","time":"2026-07-14T10:00:00Z","agent":"x"}`+"\n"), []byte(`{"id":"b","time":"2026-07-13T10:00:00Z"}`), byte(0))
	f.Add([]byte(`{"id":"a","time":"2026-07-14T10:00:00Z","r":"[REDACTED]"}`), []byte(`{"id":"a","time":"2026-07-14T10:00:00Z","r":"secret value"}`), byte(1))
	f.Add([]byte("{\"id\":\"a\"}\n{\"id\":\"a\",\"x\":1}\n\n  {\"id\" : \"c\"}  \r\n"), []byte(`not json`+"\n"+`{"id":"\u00e9","created_at":"2026-07-14T10:00:00+02:00","request":{"agent":"y"}}`), byte(2))
	f.Add([]byte(`{"id":"t","time":"2026-07-14T10:00:00Z","status":"proposed"}`+"\n"+`{"id":"t","time":"2026-07-15T10:00:00Z","status":"approved"}`), []byte(`{"id":"t","time":"bad","status":"x"}`), byte(4))
	logs := DefaultLogs()
	f.Fuzz(func(t *testing.T, a, b []byte, which byte) {
		l := logs[int(which)%len(logs)]
		ab := MergeLog(l, a, b)
		if ba := MergeLog(l, b, a); !bytes.Equal(ab, ba) {
			t.Fatalf("order matters:\n%q\n%q", ab, ba)
		}
		if again := MergeLog(l, ab); !bytes.Equal(again, ab) {
			t.Fatalf("not canonical:\n%q\n%q", ab, again)
		}
		if again := MergeLog(l, ab, a); !bytes.Equal(again, ab) {
			t.Fatalf("merging an input again changed it:\n%q\n%q", ab, again)
		}
		seen := map[string]bool{}
		var buf bytes.Buffer
		for _, line := range bytes.Split(bytes.TrimSuffix(ab, []byte("\n")), []byte("\n")) {
			if len(ab) == 0 {
				break
			}
			var obj map[string]any
			if json.Unmarshal(line, &obj) != nil {
				t.Fatalf("not a JSON object: %q", line)
			}
			if id, ok := obj["id"].(string); !ok || id == "" {
				t.Fatalf("no string id: %q", line)
			}
			r, ok := parseRecord(&l, line, &buf)
			if !ok {
				t.Fatalf("does not parse back: %q", line)
			}
			// The fields memsync reads agree with encoding/json's.
			if r.id != obj["id"].(string) {
				t.Fatalf("id %q, encoding/json reads %q", r.id, obj["id"])
			}
			key := r.day() + "\x00" + r.identity(l.Kind)
			if seen[key] {
				t.Fatalf("one record twice: %q", line)
			}
			seen[key] = true
		}
		for _, in := range [][]byte{a, b} {
			for _, r := range parseLines(&l, in) {
				if !seen[r.day()+"\x00"+r.identity(l.Kind)] {
					t.Fatalf("lost %q", r.raw)
				}
			}
		}
	})
}
