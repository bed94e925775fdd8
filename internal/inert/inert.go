// Package inert makes text that came from outside orket (a file name an
// edit created, a tool's output, a remote's records, a reason someone
// typed) safe to print: every character a terminal would act on instead
// of show is written out visibly, Go-style, so it reads as what it is and
// is never interpreted.
//
// What is escaped: the C0 controls (ESC as \x1b, BEL as \x07, CR as \r),
// DEL and the C1 controls (U+0080-U+009F, where U+009B is a one-character
// CSI to some terminals) as \u007f and \u009b, the bidirectional
// overrides and isolates that reorder what a reader sees (U+202A-U+202E,
// U+2066-U+2069) as \u202e, and bytes that are not UTF-8 as \xff. Text
// escapes line ends and tabs too (one field, one line); Block keeps them.
// A backslash is left as it is: text that spells "\x1b" is harmless.
//
// The \u escapes are valid JSON string escapes of the same character, so
// JSON passed through a Writer still decodes to the same value.
package inert

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// escapes reports whether r is shown escaped by Block (and by Text, which
// also escapes '\n' and '\t').
func escapes(r rune) bool {
	switch {
	case r < 0x20 && r != '\n' && r != '\t':
		return true
	case r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

func escape(b *strings.Builder, r rune) {
	switch {
	case r == '\r':
		b.WriteString(`\r`)
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\t':
		b.WriteString(`\t`)
	case r < 0x20:
		fmt.Fprintf(b, `\x%02x`, r)
	default:
		fmt.Fprintf(b, `\u%04x`, r)
	}
}

// Text returns s as one inert line: every control character, line end
// and tab included, is escaped. Text without any is returned as it is.
func Text(s string) string { return clean(s, true) }

// Block returns s with its lines: like Text, but a line end ("\n", or
// "\r\n", which becomes "\n") and a tab are kept.
func Block(s string) string { return clean(s, false) }

func clean(s string, line bool) string {
	if safe(s, line) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !line && r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			// a CRLF line end is a line end
		case escapes(r), line && (r == '\n' || r == '\t'):
			escape(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// safe reports whether s has nothing to escape.
func safe(s string, line bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && (line || c != '\n' && c != '\t') || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			// Past ASCII: decode to see C1 controls, overrides and
			// invalid bytes.
			for _, r := range s[i:] {
				if r == utf8.RuneError || escapes(r) || line && (r == '\n' || r == '\t') {
					return false
				}
			}
			return utf8.ValidString(s[i:])
		}
	}
	return true
}

// A Writer passes everything written to it through Block, except the
// exact sequences Allow names (orket's own colours, written whole in one
// Write). A multi-byte character split between two writes is kept back
// until the next write completes it; Flush writes what is left.
type Writer struct {
	w       io.Writer
	allowed []string
	pending []byte
}

// NewWriter returns a Writer that writes inert text to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Allow lets the sequences through as they are, from now on: only
// orket's own decoration, never text that came from outside.
func (w *Writer) Allow(seqs ...string) { w.allowed = append(w.allowed, seqs...) }

// Write writes p inert. It reports len(p) written when the underlying
// writer took all of it.
func (w *Writer) Write(p []byte) (int, error) {
	buf := p
	if len(w.pending) > 0 {
		buf = append(w.pending, p...)
		w.pending = nil
	}
	// Keep back an incomplete last character.
	if cut := incompleteTail(buf); cut > 0 {
		w.pending = append([]byte(nil), buf[len(buf)-cut:]...)
		buf = buf[:len(buf)-cut]
	}
	if _, err := io.WriteString(w.w, w.clean(buf)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a character kept back (incomplete, so escaped).
func (w *Writer) Flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	s := Block(string(w.pending))
	w.pending = nil
	_, err := io.WriteString(w.w, s)
	return err
}

func (w *Writer) clean(buf []byte) string {
	if len(w.allowed) == 0 || bytes.IndexAny(buf, "\x1b\r\b") < 0 {
		return Block(string(buf))
	}
	var b strings.Builder
	s := string(buf)
	for len(s) > 0 {
		i := strings.IndexAny(s, "\x1b\r\b")
		if i < 0 {
			b.WriteString(Block(s))
			break
		}
		b.WriteString(Block(s[:i]))
		s = s[i:]
		n := 0
		for _, a := range w.allowed {
			if strings.HasPrefix(s, a) && len(a) > n {
				n = len(a)
			}
		}
		switch {
		case n == 0 && strings.HasPrefix(s, "\r\n"):
			n = 2
			b.WriteByte('\n')
		case n == 0:
			n = 1
			b.WriteString(Block(s[:1]))
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// incompleteTail is how many bytes at the end of b start a UTF-8
// character that the next write may complete (0 when none).
func incompleteTail(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a leading byte
			need := 2
			switch {
			case c >= 0xf0:
				need = 4
			case c >= 0xe0:
				need = 3
			}
			if need > k && !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}
