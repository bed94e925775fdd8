package verify

import (
	"bytes"
	"unicode/utf8"
)

// A Tail keeps the last bytes written to it, never more than its byte cap,
// and counts everything written. It is an io.Writer safe for one writer.
type Tail struct {
	maxBytes, maxLines int
	buf                []byte // ring buffer of maxBytes
	start, n           int    // ring start and fill
	total              int64
}

// NewTail returns a Tail keeping at most maxBytes bytes and maxLines lines.
func NewTail(maxLines, maxBytes int) *Tail {
	return &Tail{maxBytes: maxBytes, maxLines: maxLines, buf: make([]byte, maxBytes)}
}

func (t *Tail) Write(p []byte) (int, error) {
	t.total += int64(len(p))
	if t.maxBytes == 0 {
		return len(p), nil
	}
	q := p
	if len(q) > t.maxBytes {
		q = q[len(q)-t.maxBytes:]
	}
	for len(q) > 0 {
		end := (t.start + t.n) % t.maxBytes
		if t.n == t.maxBytes {
			end = t.start
		}
		c := copy(t.buf[end:], q)
		q = q[c:]
		if t.n+c > t.maxBytes {
			over := t.n + c - t.maxBytes
			t.start = (t.start + over) % t.maxBytes
			t.n = t.maxBytes
		} else {
			t.n += c
		}
	}
	return len(p), nil
}

// Total returns how many bytes were written.
func (t *Tail) Total() int64 { return t.total }

// String returns the tail: at most maxLines lines and maxBytes bytes, never
// starting inside a line or a UTF-8 character when anything was cut.
func (t *Tail) String() string {
	b := make([]byte, 0, t.n)
	if t.start+t.n <= t.maxBytes {
		b = append(b, t.buf[t.start:t.start+t.n]...)
	} else {
		b = append(b, t.buf[t.start:]...)
		b = append(b, t.buf[:t.n-(t.maxBytes-t.start)]...)
	}
	cut := t.total > int64(t.n)
	if cut {
		// Drop the partial first line; if there is only one line, at
		// least drop a partial character.
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i+1 < len(b) {
			b = b[i+1:]
		} else {
			for len(b) > 0 && !utf8.RuneStart(b[0]) {
				b = b[1:]
			}
		}
	}
	// Keep the last maxLines lines (a final newline ends a line, it does
	// not start one).
	lines := 0
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' && i != len(b)-1 {
			lines++
			if lines == t.maxLines {
				b = b[i+1:]
				break
			}
		}
	}
	return string(b)
}
