package memsync

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/store"
)

func logNamed(name string) Log {
	for _, l := range DefaultLogs() {
		if l.Name == name {
			return l
		}
	}
	panic(name)
}

func TestParseRecord(t *testing.T) {
	l := logNamed("memory/failure_lessons.jsonl")
	tests := []struct {
		name, line string
		ok         bool
		id, agent  string
		day        string
	}{
		{"lesson", `{"schema_version":"orket.failure_lesson/v1","id":"abc","created_at":"2026-07-14T10:00:00.5+02:00","request":{"scope":["x"],"agent":"claude"}}`, true, "abc", "claude", "2026-07-14"},
		{"no agent", `{"id":"abc","created_at":"2026-07-14T23:30:00-02:00"}`, true, "abc", "default", "2026-07-15"},
		{"no time", `{"id":"abc"}`, true, "abc", "default", undatedDay},
		{"bad time", `{"id":"abc","created_at":"yesterday"}`, true, "abc", "default", undatedDay},
		{"spaces", `  { "id" : "a\"b" , "request" : { "agent" : "x" } }  `, true, `a"b`, "x", undatedDay},
		{"escaped key", `{"\u0069d":"k"}`, true, "k", "default", undatedDay},
		{"last id wins", `{"id":1,"id":"two"}`, true, "two", "default", undatedDay},
		{"no id", `{"created_at":"2026-07-14T10:00:00Z"}`, false, "", "", ""},
		{"numeric id", `{"id":12}`, false, "", "", ""},
		{"empty id", `{"id":""}`, false, "", "", ""},
		{"array", `[{"id":"a"}]`, false, "", "", ""},
		{"damaged", `{"id":"a"`, false, "", "", ""},
		{"not json", `hello`, false, "", "", ""},
	}
	var buf bytes.Buffer
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := parseRecord(&l, []byte(tt.line), &buf)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if r.id != tt.id || r.agent != tt.agent || r.day() != tt.day {
				t.Errorf("id %q agent %q day %q, want %q %q %q", r.id, r.agent, r.day(), tt.id, tt.agent, tt.day)
			}
			if !json.Valid(r.raw) || bytes.ContainsAny(r.raw, "\n") {
				t.Errorf("raw %q", r.raw)
			}
		})
	}
}

// TestMergeLogOrder: the same records in any order, split any way between
// inputs, duplicated or not, merge to the same bytes.
func TestMergeLogOrder(t *testing.T) {
	for _, name := range []string{"memory/evaluations.jsonl", "memory/tasks.jsonl"} {
		l := logNamed(name)
		var lines []string
		base := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; i < 200; i++ {
			// A record's time goes with its id (ids are derived from
			// content); a task event's status changes come later.
			ts := base.Add(time.Duration(i%150%37) * 7 * time.Hour)
			if l.Kind == Events {
				ts = base.Add(time.Duration(i%37) * 7 * time.Hour)
			}
			lines = append(lines, fmt.Sprintf(`{"schema_version":"x","id":"r%d","time":%q,"agent":"a%d","n":%d}`, i%150, ts.Format(time.RFC3339Nano), i%3, i))
		}
		want := MergeLog(l, []byte(strings.Join(lines, "\n")))
		for trial := 0; trial < 20; trial++ {
			rng := rand.New(rand.NewPCG(uint64(trial), 1))
			perm := rng.Perm(len(lines))
			parts := make([][]string, 1+rng.IntN(4))
			for _, i := range perm {
				k := rng.IntN(len(parts))
				parts[k] = append(parts[k], lines[i])
				if rng.IntN(5) == 0 { // a duplicate in another input
					k2 := rng.IntN(len(parts))
					parts[k2] = append(parts[k2], lines[i])
				}
			}
			var texts [][]byte
			for _, p := range parts {
				texts = append(texts, []byte(strings.Join(p, "\n")+"\n"))
			}
			got := MergeLog(l, texts...)
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Fatalf("%s trial %d (-want +got):\n%s", name, trial, diff)
			}
			if again := MergeLog(l, got, want); !bytes.Equal(again, want) {
				t.Fatalf("%s: merging the merge again changed it", name)
			}
		}
		n := bytes.Count(want, []byte("\n"))
		if name == "memory/evaluations.jsonl" && n != 150 {
			t.Errorf("%s: %d records, want 150 (one per id)", name, n)
		}
		if name == "memory/tasks.jsonl" && n != 200 {
			t.Errorf("%s: %d records, want 200 (one per id and time)", name, n)
		}
	}
}

// TestRedactedWins: of two versions of a record, the redacted one is the
// one that is kept, whatever the order.
func TestRedactedWins(t *testing.T) {
	l := logNamed("memory/feedback.jsonl")
	clear := `{"id":"fb-1","time":"2026-07-14T10:00:00Z","reason":"token ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa leaked"}`
	red := `{"id":"fb-1","time":"2026-07-14T10:00:00Z","reason":"token [REDACTED] leaked"}`
	for _, in := range [][2]string{{clear, red}, {red, clear}} {
		got := string(MergeLog(l, []byte(in[0]), []byte(in[1])))
		if got != red+"\n" {
			t.Errorf("got %s", got)
		}
	}
}

// TestEventsOfOneInstant: a proposal and a status line of one id at one
// time are two records; the same status line redacted or not is one.
func TestEventsOfOneInstant(t *testing.T) {
	l := logNamed(store.ProposalsFile)
	prop := `{"schema_version":"orket.proposal/v1","record":"proposal","id":"p1","created_at":"2026-07-14T10:00:00Z","status":"proposed"}`
	st := `{"schema_version":"orket.proposal/v1","record":"status","id":"p1","time":"2026-07-14T10:00:00Z","status":"approved","reason":"ok hunter2"}`
	red := `{"schema_version":"orket.proposal/v1","record":"status","id":"p1","time":"2026-07-14T10:00:00Z","status":"approved","reason":"ok [REDACTED]"}`
	got := string(MergeLog(l, []byte(prop+"\n"+st), []byte(red)))
	if strings.Count(got, "\n") != 2 || strings.Contains(got, "hunter2") {
		t.Errorf("got:\n%s", got)
	}
}

func TestRedactRecord(t *testing.T) {
	fn := func(s string) string { return strings.ReplaceAll(s, "SECRET", "[REDACTED]") }
	in := `{"id":"SECRET-id","schema_version":"SECRET","a":"x SECRET y","n":[1,"SECRET",{"k":"SECRET\n<b>"}],"SECRET":true}`
	got := string(redactRecord([]byte(in), fn))
	want := `{"id":"SECRET-id","schema_version":"SECRET","a":"x [REDACTED] y","n":[1,"[REDACTED]",{"k":"[REDACTED]\n<b>"}],"SECRET":true}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	same := []byte(`{"id":"a","b":"nothing here"}`)
	if r := redactRecord(same, fn); &r[0] != &same[0] {
		t.Errorf("an unchanged record was copied")
	}
}

func TestMerge3(t *testing.T) {
	const base = "# Agent Memory\n\nintro\n\n## Patterns\n- **2026-07-01T00:00:00Z** — a\n\n## Rejection log\n\n| Date | x |\n|---|---|\n| 2026-07-01 | one |\n"
	tests := []struct {
		name    string
		base    string
		a, b    string
		want    string
		noBase  bool
		symmetr bool
	}{
		{name: "both append rows", base: base,
			a:    base + "| 2026-07-02 | two |\n",
			b:    base + "| 2026-07-03 | three |\n",
			want: base + "| 2026-07-02 | two |\n| 2026-07-03 | three |\n"},
		{name: "person edits, other appends",
			base: base,
			a:    strings.Replace(strings.Replace(base, "intro", "intro, edited by a person", 1), "- **2026-07-01T00:00:00Z** — a\n", "", 1),
			b:    base + "| 2026-07-02 | two |\n",
			want: strings.Replace(strings.Replace(base, "intro", "intro, edited by a person", 1), "- **2026-07-01T00:00:00Z** — a\n", "", 1) + "| 2026-07-02 | two |\n"},
		{name: "both edit one line differently", base: "a\nb\nc\n", a: "a\nB1\nc\n", b: "a\nB2\nc\n", want: "a\nB1\nB2\nc\n"},
		{name: "edit against delete keeps the edit", base: "a\nb\nc\n", a: "a\nB1\nc\n", b: "a\nc\n", want: "a\nB1\nc\n"},
		{name: "same change once", base: "a\nb\n", a: "a\nb\nc\n", b: "a\nb\nc\n", want: "a\nb\nc\n"},
		{name: "learnings at the end of patterns", base: "## P\n- x\n\n## R\n", a: "## P\n- x\n- ya\n\n## R\n", b: "## P\n- x\n- yb\n\n## R\n| r |\n",
			want: "## P\n- x\n- ya\n- yb\n\n## R\n| r |\n"},
		{name: "no base keeps both sides", noBase: true, a: "# M\n\n- a\n", b: "# M\n\n- b\n", want: "# M\n\n- a\n- b\n"},
		{name: "missing final newline", base: "a\nb", a: "a\nb\nc\n", b: "a\nb", want: "a\nb\nc\n"},
		{name: "crlf", base: "a\r\nb\r\n", a: "a\r\nb\r\nc\r\n", b: "z\r\na\r\nb\r\n", want: "z\r\na\r\nb\r\nc\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b []byte
			if !tt.noBase {
				b = []byte(tt.base)
			}
			got := string(Merge3(b, []byte(tt.a), []byte(tt.b)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if rev := string(Merge3(b, []byte(tt.b), []byte(tt.a))); rev != got {
				t.Errorf("not symmetric:\n%s", cmp.Diff(got, rev))
			}
		})
	}
}

// TestMerge3KeepsLines: on random edits of both sides, every line either
// side added is in the merge.
func TestMerge3KeepsLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 300; trial++ {
		var base []string
		for i := 0; i < rng.IntN(30); i++ {
			base = append(base, fmt.Sprintf("line %d", rng.IntN(40)))
		}
		edit := func(side string) ([]string, []string) {
			out := append([]string(nil), base...)
			var added []string
			for e := 0; e < rng.IntN(6); e++ {
				switch op := rng.IntN(3); {
				case op == 0 && len(out) > 0:
					i := rng.IntN(len(out))
					out = append(out[:i], out[i+1:]...)
				default:
					i := rng.IntN(len(out) + 1)
					l := fmt.Sprintf("%s added %d.%d", side, trial, e)
					out = append(out[:i], append([]string{l}, out[i:]...)...)
					added = append(added, l)
				}
			}
			return out, added
		}
		a, addA := edit("a")
		b, addB := edit("b")
		join := func(ls []string) []byte {
			if len(ls) == 0 {
				return []byte{}
			}
			return []byte(strings.Join(ls, "\n") + "\n")
		}
		got := string(Merge3(join(base), join(a), join(b)))
		kept := func(side []string, added []string) (out []string) {
			for _, l := range added {
				for _, x := range side {
					if x == l {
						out = append(out, l)
					}
				}
			}
			return out
		}
		for _, l := range append(kept(a, addA), kept(b, addB)...) {
			if !strings.Contains(got, l+"\n") {
				t.Fatalf("trial %d: lost %q\nbase %q\na %q\nb %q\ngot %q", trial, l, base, a, b, got)
			}
		}
		if rev := string(Merge3(join(base), join(b), join(a))); rev != got {
			t.Fatalf("trial %d: not symmetric", trial)
		}
	}
}

func TestMergeVersions(t *testing.T) {
	v := func(md, created string) *version {
		return &version{md: []byte(md), js: []byte(`{"version":1,"created_at":"` + created + `"}`)}
	}
	k := versionKey{"claude", 1}
	early, late := v("rule A\n", "2026-07-01T00:00:00Z"), v("rule B\n", "2026-07-02T00:00:00Z")
	for _, order := range [][2]*version{{early, late}, {late, early}} {
		merged, clashes, recs := mergeVersions(nil, map[versionKey]*version{k: order[0]}, map[versionKey]*version{k: order[1]})
		if !merged[k].equal(early) {
			t.Errorf("the later version kept the number")
		}
		if len(clashes) != 1 || len(recs) != 1 {
			t.Fatalf("clashes %v", clashes)
		}
		if !bytes.Contains(recs[0], []byte(`"clashing":{"md":"rule B\n"`)) || !bytes.Contains(recs[0], []byte(`"type":"version_clash"`)) {
			t.Errorf("record %s", recs[0])
		}
	}
	// One side changed since the base: no clash.
	merged, clashes, _ := mergeVersions(map[versionKey]*version{k: early}, map[versionKey]*version{k: early}, map[versionKey]*version{k: late})
	if len(clashes) != 0 || !merged[k].equal(late) {
		t.Errorf("a change on one side is a clash")
	}
}
