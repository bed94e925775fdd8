// Package jsonl keeps orket's append-only logs of JSON lines (evaluations,
// task events, feedback): appended under a lock, all lines of one append in
// one fsynced write, so concurrent writers (runs, CI jobs) lose no line and
// tear none; read back a line at a time, skipping (and reporting) a damaged
// line instead of failing.
package jsonl

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
	"github.com/orket/orket/internal/fsroot"
)

// MaxLine bounds one record; a longer line is skipped as damaged.
const MaxLine = 16 << 20

// A Log is one JSON-lines file.
type Log struct {
	Path string
}

// A Damaged line could not be read.
type Damaged struct {
	Line int
	Err  string
}

func (l *Log) lock(exclusive bool) (func(), error) {
	return flock.Acquire(context.Background(), l.Path+".lock", flock.Mode{Exclusive: exclusive, Wait: true})
}

// Append writes records at the end of the log: under the lock, all lines
// in one write, then fsync. A line a crash left without its end is
// finished first, so the damage stays one line.
func (l *Log) Append(records ...any) error {
	var buf bytes.Buffer
	for _, r := range records {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o755); err != nil {
		return err
	}
	unlock, err := l.lock(true)
	if err != nil {
		return fmt.Errorf("lock %s: %w", l.Path, err)
	}
	defer unlock()
	f, err := os.OpenFile(l.Path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	out := buf.Bytes()
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			out = append([]byte{'\n'}, out...)
		}
	}
	_, err = f.Write(out)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Each calls fn with every line of the log (JSON to unmarshal), in order,
// under the shared lock, and returns the damaged lines it skipped: not
// JSON, or longer than MaxLine. fn's error stops the read. A missing log
// has no lines.
func (l *Log) Each(fn func(line []byte) error) ([]Damaged, error) {
	f, err := os.Open(l.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	unlock, err := l.lock(false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return each(f, fn)
}

func each(r io.Reader, fn func(line []byte) error) ([]Damaged, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var damaged []Damaged
	for n := 1; ; n++ {
		line, long, err := readLine(br)
		switch {
		case long:
			damaged = append(damaged, Damaged{Line: n, Err: "line too long"})
		case len(bytes.TrimSpace(line)) == 0:
		case !json.Valid(line):
			damaged = append(damaged, Damaged{Line: n, Err: "not JSON"})
		default:
			if ferr := fn(line); ferr != nil {
				return damaged, ferr
			}
		}
		if err == io.EOF {
			return damaged, nil
		}
		if err != nil {
			return damaged, err
		}
	}
}

// readLine returns the next line (aliasing the reader's buffer), or
// reports it too long after skipping all of it.
func readLine(br *bufio.Reader) ([]byte, bool, error) {
	chunk, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return chunk, false, err
	}
	line := append([]byte(nil), chunk...)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			return nil, true, err
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, false, err
		}
	}
}

// Rewrite keeps the lines keep returns true for and replaces the log
// atomically (fsynced), under the exclusive lock; damaged lines are
// dropped. It returns how many lines it removed.
func (l *Log) Rewrite(keep func(line []byte) bool) (int, error) {
	unlock, err := l.lock(true)
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
	var buf bytes.Buffer
	removed := 0
	damaged, err := each(f, func(line []byte) error {
		if keep(line) {
			buf.Write(bytes.TrimRight(line, "\n"))
			buf.WriteByte('\n')
		} else {
			removed++
		}
		return nil
	})
	f.Close()
	if err != nil {
		return 0, err
	}
	if removed == 0 && len(damaged) == 0 {
		return 0, nil
	}
	root, err := fsroot.Open(filepath.Dir(l.Path))
	if err != nil {
		return 0, err
	}
	defer root.Close()
	return removed, root.WriteFile(filepath.Base(l.Path), buf.Bytes(), 0o644, fsroot.Options{Sync: true})
}
