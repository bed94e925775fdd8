package textmerge

import (
	"bytes"
	"strings"
)

// SplitLines cuts text into lines, each keeping its line ending; a last
// line without one is a line too. Empty text has no lines.
func SplitLines[T string | []byte](text T) []T {
	var out []T
	for len(text) > 0 {
		i := indexNewline(text)
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

func indexNewline[T string | []byte](text T) int {
	switch t := any(text).(type) {
	case string:
		return strings.IndexByte(t, '\n')
	case []byte:
		return bytes.IndexByte(t, '\n')
	}
	panic("unreachable")
}
