package lessons

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/orket/orket/internal/rawjson"
	"github.com/orket/orket/store"
)

// A Store is the lesson log: a JSON-lines log of the state directory
// (store.LessonsFile unless lessons.path says otherwise), with an index
// beside it that retrieval reads.
type Store struct {
	Path string
	// MaxPerAgent makes Prune keep at most this many lessons of each agent
	// (the newest; 0: no such limit).
	MaxPerAgent int
}

func (s *Store) log() *store.Log { return &store.Log{Path: s.Path} }

// lock takes the log's lock, waiting for it: exclusive for writers,
// shared for readers that must not see a prune half done.
func (s *Store) lock(exclusive bool) (func(), error) { return s.log().Lock(exclusive) }

// Append writes lessons at the end of the log: under the lock, all lines
// in one write, then fsync. Concurrent writers (other runs, CI jobs) lose
// no line and tear none.
func (s *Store) Append(ls ...*Lesson) error {
	lines := make([][]byte, 0, len(ls))
	for _, l := range ls {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		lines = append(lines, b)
	}
	log := s.log()
	unlock, err := log.Lock(true)
	if err != nil {
		return fmt.Errorf("lock lesson log: %w", err)
	}
	defer unlock()
	fresh := s.indexFresh()
	offset, err := log.WriteLines(lines...)
	if err != nil {
		return err
	}
	if fresh || offset == 0 {
		if offset == 0 {
			os.Remove(s.indexPath())
		}
		// The index follows the log; if this fails, it is stale and the
		// next reader rebuilds it.
		s.appendIndex(ls, lines, offset)
	}
	return nil
}

// A Damaged line could not be read as a lesson.
type Damaged = store.Damaged

// Each streams the log, calling fn for every lesson in order, and returns
// the damaged lines it skipped. A missing log has no lessons.
func (s *Store) Each(fn func(l *Lesson) error) ([]Damaged, error) {
	return s.each(nil, fn)
}

// EachBrief is Each for a reader that never reads a lesson's output
// tail (its largest field by far, up to lessons.tail.max_bytes): every
// lesson comes with Verify.OutputTail empty, and the tail is never
// decoded. Proposals read every lesson at each failing run.
func (s *Store) EachBrief(fn func(l *Lesson) error) ([]Damaged, error) {
	return s.each(withoutTail, fn)
}

func (s *Store) each(trim func([]byte) []byte, fn func(l *Lesson) error) ([]Damaged, error) {
	f, err := os.Open(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, trim, fn)
}

// Read reads lessons from a JSON-lines stream.
func Read(r io.Reader, fn func(l *Lesson) error) ([]Damaged, error) {
	return read(r, nil, fn)
}

// read reads lessons from a JSON-lines stream, each line first passed
// through trim (nil: none).
func read(r io.Reader, trim func([]byte) []byte, fn func(l *Lesson) error) ([]Damaged, error) {
	var damaged []Damaged
	err := store.ScanLines(r, func(ln store.Line) error {
		if ln.Bytes != nil && len(bytes.TrimSpace(ln.Bytes)) == 0 {
			return nil
		}
		line := ln.Bytes
		if trim != nil && line != nil {
			line = trim(line)
		}
		l, err := parseLine(line)
		if err != nil {
			damaged = append(damaged, Damaged{Line: ln.N, Err: err.Error()})
			return nil
		}
		return fn(l)
	})
	return damaged, err
}

var errTooLong = errors.New("line too long")

// withoutTail returns a lesson's line with its verify.output_tail
// replaced by "", found in place (internal/rawjson) without decoding the
// line; the line itself when it has no tail to leave out.
func withoutTail(line []byte) []byte {
	var verify, tail []byte
	rawjson.Object(line, func(k, v []byte) {
		if string(k) == "verify" {
			verify = v
		}
	})
	rawjson.Object(verify, func(k, v []byte) {
		if string(k) == "output_tail" {
			tail = v
		}
	})
	if len(tail) <= len(`""`) {
		return line
	}
	// tail is a slice of line: where it starts is told by their
	// capacities (checked: a line read otherwise is decoded whole).
	start := cap(line) - cap(tail)
	if start < 0 || start+len(tail) > len(line) || &line[start] != &tail[0] {
		return line
	}
	out := make([]byte, 0, len(line)-len(tail)+2)
	out = append(append(append(out, line[:start]...), `""`...), line[start+len(tail):]...)
	return out
}

// parseLine reads a lesson's line (nil: a line too long to read).
func parseLine(line []byte) (*Lesson, error) {
	if line == nil {
		return nil, errTooLong
	}
	var l Lesson
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, fmt.Errorf("not JSON: %v", shortErr(err))
	}
	switch l.SchemaVersion {
	case store.LessonSchema, store.OriginLessonSchema:
	default:
		return nil, fmt.Errorf("unknown schema_version %q", l.SchemaVersion)
	}
	if l.ID == "" {
		return nil, errors.New("no id")
	}
	l.stripANSI()
	return &l, nil
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// Prune applies retention (store.Retention, with MaxPerAgent): at most
// maxEntries lessons, none older than maxAge (0: no age limit); damaged
// lines go. The log is rewritten atomically under the lock, the lessons
// kept byte for byte. It returns how many lessons it removed.
func (s *Store) Prune(maxEntries int, maxAge time.Duration, now time.Time) (int, error) {
	keep := store.Retention{MaxEntries: maxEntries, MaxPerAgent: s.MaxPerAgent, MaxAge: maxAge}
	return s.log().Prune(keep, now, Meta)
}

// Meta is what retention reads of a lesson's line (false: not a lesson).
func Meta(line []byte) (store.Meta, bool) {
	l, err := parseLine(line)
	if err != nil {
		return store.Meta{}, false
	}
	return store.Meta{Agent: l.Request.Agent, Time: l.CreatedAt}, true
}

// Rewrite applies fn to every lesson and replaces the log atomically, under
// the lock; damaged lines are dropped, and lessons fn leaves as they were
// are kept byte for byte. It returns how many lessons fn changed.
func (s *Store) Rewrite(fn func(l *Lesson) bool) (int, error) {
	changed := 0
	_, err := s.log().Edit(func(line []byte) ([]byte, bool) {
		l, err := parseLine(line)
		if err != nil {
			return nil, false
		}
		if !fn(l) {
			return line, true
		}
		b, err := json.Marshal(l)
		if err != nil {
			return line, true
		}
		changed++
		return b, true
	})
	if err != nil {
		return 0, err
	}
	return changed, nil
}

// Remove deletes the lessons fn selects and replaces the log atomically,
// under the lock, as Prune does; damaged lines go with them. The lessons
// kept are kept byte for byte (keys this orket does not know included).
// When fn selects nothing the log is left as it is. It returns how many
// lessons it removed.
func (s *Store) Remove(fn func(l *Lesson) bool) (int, error) {
	removed := 0
	_, err := s.log().Rewrite(func(line []byte) bool {
		l, err := parseLine(line)
		if err != nil {
			return false
		}
		if fn(l) {
			removed++
			return false
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	return removed, nil
}
