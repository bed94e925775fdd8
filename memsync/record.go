package memsync

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/orket/orket/internal/rawjson"
)

// A record is one line of a log, as the merge sees it: its bytes (compact
// JSON, no newline) and the few fields the merge reads.
type record struct {
	raw     []byte
	id      string
	nanos   int64  // its time (UTC unix nanoseconds); 0 when it has none
	timeRaw string // its time as written, when it did not parse
	agent   string
	schema  string
	// kind is what an event says happened (its record, type and status
	// fields): two events of one id at one time are one only if they say
	// the same.
	kind string
}

// maxLine bounds one record, as internal/jsonl does; a longer line is
// dropped as damaged.
const maxLine = 16 << 20

// parseRecord reads one line of log l: compact JSON object with a string
// id. It reports false for anything else (damaged, not an object, no id),
// which the merge drops.
func parseRecord(l *Log, line []byte, buf *bytes.Buffer) (record, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || len(line) > maxLine || line[0] != '{' {
		return record{}, false
	}
	buf.Reset()
	if err := json.Compact(buf, line); err != nil {
		return record{}, false
	}
	raw := line
	if !bytes.Equal(buf.Bytes(), line) {
		raw = append([]byte(nil), buf.Bytes()...)
	}
	r := record{raw: raw}
	var timeVals [4][]byte // by the index of l.TimeFields; the first found wins
	var agentVal, idVal []byte
	var kinds [3][]byte
	rawjson.Object(raw, func(key, val []byte) {
		switch {
		case string(key) == "record":
			kinds[0] = val
		case string(key) == "type":
			kinds[1] = val
		case string(key) == "status":
			kinds[2] = val
		case string(key) == "id":
			idVal = val
		case string(key) == "schema_version":
			r.schema, _ = rawjson.String(val)
		case len(l.AgentField) > 0 && string(key) == l.AgentField[0]:
			agentVal = val
		}
		for i, f := range l.TimeFields {
			if i < len(timeVals) && string(key) == f {
				timeVals[i] = val
			}
		}
	})
	r.id, _ = rawjson.String(idVal)
	if r.id == "" {
		return record{}, false
	}
	if l.Kind == Events {
		for _, k := range kinds {
			v, _ := rawjson.String(k)
			r.kind += "\x00" + v
		}
	}
	for _, v := range timeVals {
		if v == nil {
			continue
		}
		s, isStr := rawjson.String(v)
		if !isStr || s == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil && t.Year() >= 1 && t.Year() <= 9999 {
			r.nanos = t.UTC().UnixNano()
			if r.nanos == 0 {
				r.nanos = 1 // 1970-01-01T00:00:00Z is a time, not its absence
			}
		} else {
			r.timeRaw = s
		}
		break
	}
	if agentVal != nil {
		r.agent = fieldAt(agentVal, l.AgentField[1:])
	}
	if r.agent == "" {
		r.agent = "default"
	}
	return r, true
}

// fieldAt follows path through nested objects from val and returns the
// string found there ("" for anything else).
func fieldAt(val []byte, path []string) string {
	for _, k := range path {
		var next []byte
		if len(val) == 0 || val[0] != '{' {
			return ""
		}
		rawjson.Object(val, func(key, v []byte) {
			if string(key) == k {
				next = v
			}
		})
		if next == nil {
			return ""
		}
		val = next
	}
	s, _ := rawjson.String(val)
	return s
}

// day is the shard a record belongs to: the UTC day of its time, or
// undatedDay.
func (r *record) day() string {
	if r.nanos == 0 {
		return undatedDay
	}
	return time.Unix(0, r.nanos).UTC().Format("2006-01-02")
}

// identity is what makes two lines the same record: the id for a log of
// Records; for a log of Events, the id, the time and what the event says
// (its record, type and status fields): a status change is a new line
// with the same id and a later time, and a proposal and its first status
// at one instant stay two.
func (r *record) identity(k Kind) string {
	if k == Records {
		return r.id
	}
	if r.nanos != 0 || r.timeRaw == "" {
		return r.id + "\x00" + strconv.FormatInt(r.nanos, 10) + r.kind
	}
	return r.id + "\x00raw:" + r.timeRaw + r.kind
}

// less is the canonical order of a shard: by time, then id, then bytes.
func less(a, b *record) bool {
	if a.nanos != b.nanos {
		return a.nanos < b.nanos
	}
	if a.id != b.id {
		return a.id < b.id
	}
	return bytes.Compare(a.raw, b.raw) < 0
}

var redactedMarker = []byte("[REDACTED]")

// beats reports whether a wins over b when both are versions of one
// record: the more redacted version first (a record redacted anywhere
// never travels unredacted), then the longer (a tag or field added), then
// the greater bytes. It is a total order on distinct lines, so the winner
// does not depend on the order the versions are met.
func beats(a, b *record) bool {
	ma, mb := bytes.Count(a.raw, redactedMarker), bytes.Count(b.raw, redactedMarker)
	if ma != mb {
		return ma > mb
	}
	if len(a.raw) != len(b.raw) {
		return len(a.raw) > len(b.raw)
	}
	return bytes.Compare(a.raw, b.raw) > 0
}
