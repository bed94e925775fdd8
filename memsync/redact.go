package memsync

import (
	"bytes"
	"encoding/json"

	"github.com/orket/orket/internal/rawjson"
	"github.com/orket/orket/redact"
)

// redactor returns the redaction Options asks for: its Redact, or the
// known secret shapes when none is given. Nothing travels unredacted.
func (o *Options) redactor() func(string) string {
	if o.Redact != nil {
		return o.Redact
	}
	var r *redact.Redactor
	return r.Redact
}

// redactRecord applies fn to every string value of a JSON object (at any
// depth; the top-level id and schema_version aside, which name the record)
// and returns the record, the same slice when nothing changed.
func redactRecord(raw []byte, fn func(string) string) []byte {
	var out []byte
	last := 0
	var walk func(i int, top bool) int
	replace := func(start, end int) {
		s, ok := rawjson.String(raw[start:end])
		if !ok {
			return
		}
		r := fn(s)
		if r == s {
			return
		}
		if out == nil {
			out = make([]byte, 0, len(raw)+16)
		}
		out = append(out, raw[last:start]...)
		out = appendJSONString(out, r)
		last = end
	}
	walk = func(i int, top bool) int {
		i = rawjson.SkipSpace(raw, i)
		if i >= len(raw) {
			return i
		}
		switch raw[i] {
		case '"':
			end := rawjson.SkipValue(raw, i)
			replace(i, end)
			return end
		case '{':
			i++
			for {
				i = rawjson.SkipSpace(raw, i)
				if i >= len(raw) || raw[i] == '}' {
					return i + 1
				}
				if raw[i] == ',' {
					i++
					continue
				}
				kend := rawjson.SkipValue(raw, i)
				key := raw[i:kend]
				i = rawjson.SkipSpace(raw, kend)
				if i < len(raw) && raw[i] == ':' {
					i++
				}
				if top && (string(key) == `"id"` || string(key) == `"schema_version"`) {
					i = rawjson.SkipValue(raw, rawjson.SkipSpace(raw, i))
					continue
				}
				i = walk(i, false)
			}
		case '[':
			i++
			for {
				i = rawjson.SkipSpace(raw, i)
				if i >= len(raw) || raw[i] == ']' {
					return i + 1
				}
				if raw[i] == ',' {
					i++
					continue
				}
				i = walk(i, false)
			}
		default:
			return rawjson.SkipValue(raw, i)
		}
	}
	walk(0, true)
	if out == nil {
		return raw
	}
	return append(out, raw[last:]...)
}

// appendJSONString appends s as a JSON string, without HTML escaping (as
// json.Marshal would escape it otherwise, the records' other strings are
// left as they were written).
func appendJSONString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
}

// redactText applies fn to a text that travels (a markdown file) as a
// whole, so that a secret spanning lines (a private key block) goes too.
func redactText(b []byte, fn func(string) string) []byte {
	r := fn(string(b))
	if r == string(b) {
		return b
	}
	return []byte(r)
}
