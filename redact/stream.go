package redact

// Streaming. Output is redacted a line at a time, so memory is bounded by
// the longest line kept, not by the output:
//
//   - A line is redacted once it is complete. A line longer than maxLine
//     (64 KiB) is redacted in pieces: each piece is matched with hold
//     (4 KiB) bytes of the line before it and after it in view, so a
//     secret that straddles a cut is seen whole; a secret that runs past
//     what is in view is redacted on through the next piece, up to the
//     next space.
//   - A private key block is replaced as it arrives: from its BEGIN line
//     nothing is passed on until its END line, or until a line that
//     cannot belong to a key (see bodyLine).
//
// Redact runs the same machine over its whole input, so a Writer's output
// is byte for byte what Redact returns for everything written, however
// the writes cut it.

import (
	"bytes"
	"errors"
	"io"
	"slices"
)

const (
	maxLine = 64 << 10 // a longer line is redacted in pieces
	hold    = 4 << 10  // context kept on each side of a cut in a long line
	flushAt = 32 << 10 // a Writer passes on redacted output in pieces of about this size
)

// The states of a private key block.
const (
	pemNone  = iota
	pemLine  // inside a block that began (or went on) on the current line
	pemBlock // inside a block, at the start of a line
)

// stream is the redaction machine shared by Redact and Writer.
type stream struct {
	r             *Redactor
	pf            *prefilter
	maxLine, hold int

	dst  []byte             // redacted output not yet passed on
	sink func([]byte) error // passes output on; nil keeps it all in dst
	err  error              // the sink's first error

	line []byte // the current line when it is not complete in one write: line[:ctx] was already emitted
	ctx  int

	carry     int  // bytes at the start of the next piece of a long line that a secret covers
	carryOpen bool // and the secret ran past what was in view: go on to the next space
	inSpan    bool // the output so far ends with a marker (another one right after is not repeated)
	pem       int
	nlOwed    bool // the newline of a BEGIN line, swallowed with the block; owed if the block ends without END

	spans []span
}

func newStream(r *Redactor, maxLine, hold int) *stream {
	return &stream{r: r, pf: r.prefilter(), maxLine: maxLine, hold: hold}
}

// write redacts p, keeping an incomplete line (at most maxLine bytes plus
// hold bytes of context) for the next write.
func (s *stream) write(p []byte) {
	for len(p) > 0 {
		if len(s.line) == 0 {
			// Complete lines straight from p.
			if i := bytes.IndexByte(p[:min(len(p), s.maxLine)], '\n'); i >= 0 {
				s.segment(p[:i+1], 0, i+1, true)
				p = p[i+1:]
				continue
			}
		}
		if len(s.line)-s.ctx == s.maxLine {
			s.cut()
		}
		room := s.maxLine - (len(s.line) - s.ctx)
		if i := bytes.IndexByte(p[:min(len(p), room)], '\n'); i >= 0 {
			s.line = append(s.line, p[:i+1]...)
			p = p[i+1:]
			s.segment(s.line, s.ctx, len(s.line), true)
			s.line, s.ctx = s.line[:0], 0
			continue
		}
		n := min(room, len(p))
		s.line = append(s.line, p[:n]...)
		p = p[n:]
	}
}

// cut redacts and emits all but the last hold bytes of a line that
// reached maxLine without ending, and keeps hold bytes of what it emitted
// as context for the next piece.
func (s *stream) cut() {
	end := len(s.line) - s.hold
	s.segment(s.line, s.ctx, end, false)
	keep := max(0, end-s.hold)
	n := copy(s.line, s.line[keep:])
	s.line = s.line[:n]
	s.ctx = end - keep
}

// close redacts what is left of the last line.
func (s *stream) close() {
	if len(s.line) > s.ctx {
		s.segment(s.line, s.ctx, len(s.line), true)
	}
	s.line, s.ctx = s.line[:0], 0
	s.flush()
}

func (s *stream) flush() {
	if s.sink == nil || len(s.dst) == 0 {
		return
	}
	if err := s.sink(s.dst); err != nil && s.err == nil {
		s.err = err
	}
	s.dst = s.dst[:0]
}

// segment redacts win[start:end] and appends it to dst. win[:start] is
// context already emitted and win[end:] is the rest of the line, not yet
// emitted, seen only to recognise a secret that crosses end. final
// reports whether win[:end] ends the line.
func (s *stream) segment(win []byte, start, end int, final bool) {
	spans, from := s.inBlock(win, start, end, final, s.spans[:0])
	spans = s.carried(win, start, spans)
	set := s.pf.scan(win)
	if from >= 0 && set.has(pemRule) {
		spans = s.blocks(win, from, end, spans)
	}
	if !set.empty() {
		spans = s.r.spans(win, set, spans)
	}
	s.emit(win, start, end, final, spans)
	s.spans = spans[:0]

	if final {
		s.carry, s.carryOpen = 0, false
		if s.pem == pemLine {
			s.pem = pemBlock
			s.nlOwed = end > 0 && win[end-1] == '\n'
		}
	}
	if s.sink != nil && len(s.dst) >= flushAt {
		s.flush()
	}
}

// inBlock goes on with a private key block the lines before opened: it
// adds the span the block covers in win and returns where a BEGIN marker
// may begin (-1: not to be looked for, the block runs to the end of win).
// A line that cannot belong to the block (see bodyLine) ends it.
func (s *stream) inBlock(win []byte, start, end int, final bool, spans []span) ([]span, int) {
	from := start
	if start == 0 && s.pem == pemBlock {
		if final && !bodyLine(win[:end]) && !pemEnd().Match(win) {
			// The block ended without its END line (cut short).
			s.pem = pemNone
			if s.nlOwed {
				s.dst = append(s.dst, '\n')
			}
			s.nlOwed, s.inSpan = false, false
		} else {
			s.pem = pemLine
		}
	}
	if s.pem == pemLine {
		if loc := pemEnd().FindIndex(win[start:]); loc != nil {
			e := start + loc[1]
			spans = append(spans, span{start, e})
			from = e
			s.pem, s.nlOwed = pemNone, false
		} else {
			spans = append(spans, span{start, len(win)})
			from = -1
		}
	}
	return spans, from
}

// carried adds the span of a secret that ran past the previous piece of a
// long line: the carried bytes, and on to the next space when the secret
// ran past what was in view.
func (s *stream) carried(win []byte, start int, spans []span) []span {
	if s.carry <= 0 && !s.carryOpen {
		return spans
	}
	e := min(start+s.carry, len(win))
	if s.carryOpen {
		for e < len(win) && !isSpace(win[e]) {
			e++
		}
	}
	if e > start {
		spans = append(spans, span{start, e})
	}
	s.carry, s.carryOpen = 0, false
	return spans
}

// blocks adds the spans of the private key blocks that begin in
// win[from:end]: each to its END marker, or, for one that does not end
// in win, to the end of win, leaving the block open.
func (s *stream) blocks(win []byte, from, end int, spans []span) []span {
	for from < end {
		loc := pemBegin().FindIndex(win[from:])
		if loc == nil || from+loc[0] >= end {
			break
		}
		a := from + loc[0]
		if eloc := pemEnd().FindIndex(win[from+loc[1]:]); eloc != nil {
			from += loc[1] + eloc[1]
			spans = append(spans, span{a, from})
			continue
		}
		spans = append(spans, span{a, len(win)})
		s.pem = pemLine
		break
	}
	return spans
}

// emit appends win[start:end] to dst with the spans (in any order, perhaps
// overlapping, perhaps reaching outside [start, end)) replaced by a
// marker: one marker for spans that touch, and none at start when the
// output already ends with one. A span that runs past end of a piece that
// is not final is carried to the next piece.
func (s *stream) emit(win []byte, start, end int, final bool, spans []span) {
	if len(spans) == 0 {
		s.dst = append(s.dst, win[start:end]...)
		s.inSpan = false
		return
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	pos := start
	last := -1 // clipped end of the last span emitted
	for i := 0; i < len(spans); {
		a, b := spans[i].start, spans[i].end
		for i++; i < len(spans) && spans[i].start <= b; i++ {
			b = max(b, spans[i].end)
		}
		if b <= start || a >= end {
			continue
		}
		a, cb := max(a, start), min(b, end)
		s.dst = append(s.dst, win[pos:a]...)
		if a > start || !s.inSpan {
			s.dst = append(s.dst, Redacted...)
		}
		pos, last = cb, cb
		if b > end && !final {
			s.carry = b - end
			s.carryOpen = b >= len(win)
		}
	}
	s.dst = append(s.dst, win[pos:end]...)
	s.inSpan = last == end
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

var pemHeaders = [][]byte{[]byte("Proc-Type:"), []byte("DEK-Info:"), []byte("Version:"), []byte("Comment:"), []byte("Hash:"), []byte("Charset:")}

// bodyLine reports whether a line can belong to a private key block that
// is still open: blank, an armour header (Proc-Type:, DEK-Info:,
// Comment:, ...), a line of base64 alone (the short last line and the
// =XXXX checksum included), or a line ending in a run of at least 16
// base64 bytes after some prefix (an indentation, a log prefix).
func bodyLine(line []byte) bool {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return true
	}
	for _, h := range pemHeaders {
		if bytes.HasPrefix(t, h) {
			return true
		}
	}
	last := t
	if i := bytes.LastIndexAny(t, " \t"); i >= 0 {
		last = t[i+1:]
	}
	for _, c := range last {
		if !isAlnum(c) && c != '+' && c != '/' && c != '=' {
			return false
		}
	}
	return len(last) == len(t) || len(last) >= 16
}

// A Writer redacts everything written to it and passes the result on. It
// holds back at most one incomplete line (bounded: see the package
// documentation), so memory stays flat whatever the size of the output;
// Close redacts and passes on what it holds. Secrets never reach the
// underlying writer in clear, wherever the writes cut the output, so a
// bounded tail behind a Writer keeps only redacted text.
type Writer struct {
	st      *stream
	written int64
	closed  bool
}

var errClosed = errors.New("redact: write to a closed writer")

// NewWriter returns a Writer that passes the redacted output on to w.
func (r *Redactor) NewWriter(w io.Writer) *Writer {
	st := newStream(r, maxLine, hold)
	st.sink = func(b []byte) error {
		_, err := w.Write(b)
		return err
	}
	return &Writer{st: st}
}

// Write redacts p. It accepts all of p and returns len(p), or the first
// error of the underlying writer (after which it accepts nothing more).
func (w *Writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, errClosed
	}
	if w.st.err != nil {
		return 0, w.st.err
	}
	w.written += int64(len(p))
	w.st.write(p)
	w.st.flush()
	return len(p), w.st.err
}

// Close redacts and passes on the incomplete last line, if any. It does
// not close the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.st.err
	}
	w.closed = true
	w.st.close()
	return w.st.err
}

// Written returns how many bytes were written to w before redaction: the
// size of the output, which the redacted bytes passed on do not tell.
func (w *Writer) Written() int64 { return w.written }
