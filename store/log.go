package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/orket/orket/internal/flock"
)

// MaxLine bounds one record; a longer line is skipped as damaged.
const MaxLine = 16 << 20

// A Log is one of orket's append-only logs of JSON lines (lessons,
// evaluations, task events, feedback, proposals, votes): appended under a
// lock, all lines of one append in one fsynced write, so concurrent
// writers (runs, CI jobs) lose no line and tear none; read back a line at
// a time, skipping (and reporting) a damaged line instead of failing.
type Log struct {
	Path string
}

// A Damaged line could not be read.
type Damaged struct {
	Line int
	Err  string
}

// Lock takes the log's lock file (Lock(l.Path)), waiting for it:
// exclusive for a writer, shared for a reader that must not see a prune
// half done. It returns the release. Append, Each, Edit and Prune take
// it themselves; a caller takes it to read or write the log in its own
// way (WriteLines, Replace).
func (l *Log) Lock(exclusive bool) (func(), error) {
	return flock.Acquire(context.Background(), Lock(l.Path), flock.Mode{Exclusive: exclusive, Wait: true})
}

// Append writes records at the end of the log: under the lock, all lines
// in one write, then fsync. A line a crash left without its end is
// finished first, so the damage stays one line.
func (l *Log) Append(records ...any) error {
	lines := make([][]byte, 0, len(records))
	for _, r := range records {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		lines = append(lines, b)
	}
	return l.AppendLines(lines...)
}

// AppendLines is Append for lines already encoded (without their
// newlines).
func (l *Log) AppendLines(lines ...[]byte) error {
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o755); err != nil {
		return err
	}
	unlock, err := l.Lock(true)
	if err != nil {
		return fmt.Errorf("lock %s: %w", l.Path, err)
	}
	defer unlock()
	_, err = l.WriteLines(lines...)
	return err
}

// WriteLines appends lines as AppendLines does, for a caller that holds
// the exclusive lock, and returns the offset in the file where the first
// one starts.
func (l *Log) WriteLines(lines ...[]byte) (int64, error) {
	var buf bytes.Buffer
	for _, b := range lines {
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o755); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(l.Path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	out := buf.Bytes()
	var offset int64
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		offset = fi.Size()
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, offset-1); err == nil && last[0] != '\n' {
			out = append([]byte{'\n'}, out...)
			offset++ // that newline ends the torn line
		}
	}
	_, err = f.Write(out)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return offset, err
}

// Each calls fn with every line of the log (JSON to unmarshal), in order,
// under the shared lock, and returns the damaged lines it skipped: not
// JSON, or longer than MaxLine. fn's error stops the read. A missing log
// has no lines.
func (l *Log) Each(fn func(line []byte) error) ([]Damaged, error) {
	var damaged []Damaged
	err := l.read(func(r io.Reader) (err error) {
		damaged, err = each(r, fn)
		return err
	})
	return damaged, err
}

// Scan is Each for a reader that picks a few fields of the lines it
// wants (internal/rawjson) and checks those itself: no line is checked
// whole, which was most of reading a log of a thousand lines to find
// ten. A line longer than MaxLine is skipped.
func (l *Log) Scan(fn func(line []byte) error) error {
	return l.read(func(r io.Reader) error {
		return ScanLines(r, func(ln Line) error {
			if ln.Bytes == nil {
				return nil
			}
			return fn(ln.Bytes)
		})
	})
}

// read calls fn with the log open, under its shared lock; a missing log
// is an empty one.
func (l *Log) read(fn func(io.Reader) error) error {
	f, err := os.Open(l.Path)
	if errors.Is(err, os.ErrNotExist) {
		return fn(bytes.NewReader(nil))
	}
	if err != nil {
		return err
	}
	defer f.Close()
	unlock, err := l.Lock(false)
	if err != nil {
		return err
	}
	defer unlock()
	return fn(f)
}

func each(r io.Reader, fn func(line []byte) error) ([]Damaged, error) {
	var damaged []Damaged
	err := ScanLines(r, func(ln Line) error {
		switch {
		case ln.Bytes == nil:
			damaged = append(damaged, Damaged{Line: ln.N, Err: "line too long"})
		case len(bytes.TrimSpace(ln.Bytes)) == 0:
		case !json.Valid(ln.Bytes):
			damaged = append(damaged, Damaged{Line: ln.N, Err: "not JSON"})
		default:
			return fn(ln.Bytes)
		}
		return nil
	})
	return damaged, err
}

// A Line is one line of a stream ScanLines reads.
type Line struct {
	N      int   // its number, from 1
	Offset int64 // where it starts in the stream
	Size   int64 // its length in the stream, its newline included
	// Bytes is the line with its newline, valid until the next line is
	// read; nil when it is longer than MaxLine (it is skipped).
	Bytes []byte
}

// ScanLines calls fn with every line of r, in order, until fn returns an
// error; a line longer than MaxLine is skipped whole and given with nil
// Bytes, so that the offsets after it stay right.
func ScanLines(r io.Reader, fn func(Line) error) error {
	// A line is a few hundred bytes; a longer one is put together by
	// readLine. A bigger buffer costs its clearing at every read.
	br := bufio.NewReaderSize(r, 64<<10)
	var off int64
	for n := 1; ; n++ {
		line, size, err := readLine(br)
		if size > 0 {
			if ferr := fn(Line{N: n, Offset: off, Size: size, Bytes: line}); ferr != nil {
				return ferr
			}
		}
		off += size
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine returns the next line (aliasing the reader's buffer) and its
// size, or nil after skipping all of a line too long.
func readLine(br *bufio.Reader) ([]byte, int64, error) {
	chunk, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return chunk, int64(len(chunk)), err
	}
	line := append([]byte(nil), chunk...)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			n := int64(len(line) + len(chunk))
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = br.ReadSlice('\n')
				n += int64(len(chunk))
			}
			return nil, n, err
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, int64(len(line)), err
		}
	}
}

// Rewrite keeps the lines keep returns true for and replaces the log
// atomically (fsynced), under the exclusive lock, when one goes; damaged
// lines go with it. It returns how many lines it removed.
func (l *Log) Rewrite(keep func(line []byte) bool) (int, error) {
	return l.Edit(func(line []byte) ([]byte, bool) { return line, keep(line) })
}

// Edit replaces each line by what edit returns for it (a line for which
// it returns false goes) and the log atomically (fsynced), under the
// exclusive lock, when a line changed or went (damaged lines go with
// them; a log edit leaves as it was is not written). It returns how many
// lines it changed or removed.
func (l *Log) Edit(edit func(line []byte) ([]byte, bool)) (int, error) {
	var buf bytes.Buffer
	changed := 0
	return l.rewrite(func(line []byte) error {
		line = bytes.TrimRight(line, "\n")
		out, ok := edit(line)
		switch {
		case !ok:
			changed++
			return nil
		case !bytes.Equal(out, line):
			changed++
		}
		buf.Write(out)
		buf.WriteByte('\n')
		return nil
	}, func([]Damaged) (int, []byte, bool) {
		return changed, buf.Bytes(), changed > 0
	})
}

// rewrite is the frame of Edit and Prune: under the exclusive lock, it
// gives every line of the log to read (damaged lines aside), then asks
// done, given the damaged lines, what to report, the new content and
// whether to write it; when so, the log is replaced by it. A missing log
// is left missing.
func (l *Log) rewrite(read func(line []byte) error, done func(damaged []Damaged) (n int, content []byte, write bool)) (int, error) {
	unlock, err := l.Lock(true)
	if err != nil {
		return 0, err
	}
	defer unlock()
	f, err := os.Open(l.Path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	damaged, err := each(f, read)
	f.Close()
	if err != nil {
		return 0, err
	}
	n, content, write := done(damaged)
	if !write {
		return 0, nil
	}
	return n, l.Replace(content)
}
