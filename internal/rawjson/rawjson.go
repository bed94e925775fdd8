// Package rawjson reads JSON in place, without decoding it: the members
// of an object as keys and raw values, where a value ends, what a string
// holds. orket's logs hold thousands of lines of which a reader needs a
// few fields; decoding every line whole was most of their reading.
package rawjson

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Object calls fn with the key (unescaped) and the raw value (aliasing b)
// of every member of the JSON object b holds, in order. It reports
// whether b is an object, well formed as far as Object read: the members'
// values are skipped, not checked.
func Object(b []byte, fn func(key, val []byte)) bool {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		end := skipString(b, i)
		if end < 0 {
			return false
		}
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			s, ok := String(b[i:end])
			if !ok {
				return false
			}
			key = []byte(s)
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = SkipSpace(b, i+1)
		vend := SkipValue(b, i)
		if vend < 0 {
			return false
		}
		fn(key, b[i:vend])
		i = SkipSpace(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

// SkipSpace returns the index of the first byte at or after i that is
// not JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipValue returns the index just after the JSON value starting at b[i],
// or -1 when it does not end in b.
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'),
// or -1.
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		// Escaped when an odd number of backslashes precede it.
		k := i - 1
		for k >= 0 && b[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i + 1
		}
		i++
	}
}

// String returns the string a raw JSON value holds, and whether it holds
// one.
func String(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}
