package lessons

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
	"sort"
	"time"

	"github.com/orket/orket/internal/flock"
	"github.com/orket/orket/internal/fsroot"
)

// A Store is the lesson log: a JSON-lines file, appended under a lock.
type Store struct {
	Path string
	// MaxPerAgent makes Prune keep at most this many lessons of each agent
	// (the newest; 0: no such limit).
	MaxPerAgent int
}

// lock takes the log's lock file (beside the log, so that a prune can
// replace the log itself), waiting for it: exclusive for writers, shared
// for readers that must not see a prune half done.
func (s *Store) lock(exclusive bool) (func(), error) {
	return flock.Acquire(context.Background(), s.Path+".lock", flock.Mode{Exclusive: exclusive, Wait: true})
}

// Append writes lessons at the end of the log: under the lock, all lines
// in one write, then fsync. Concurrent writers (other runs, CI jobs) lose
// no line and tear none.
func (s *Store) Append(ls ...*Lesson) error {
	var buf bytes.Buffer
	lines := make([][]byte, 0, len(ls))
	for _, l := range ls {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		b = append(b, '\n')
		lines = append(lines, b)
		buf.Write(b)
	}
	unlock, err := s.lock(true)
	if err != nil {
		return fmt.Errorf("lock lesson log: %w", err)
	}
	defer unlock()
	fresh := s.indexFresh()
	f, err := os.OpenFile(s.Path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	out := buf.Bytes()
	var offset int64
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		offset = fi.Size()
		// A crash in an earlier write may have left a line without its
		// end: finish it, so the damage stays one line and ours start on
		// their own.
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, offset-1); err == nil && last[0] != '\n' {
			out = append([]byte{'\n'}, out...)
			offset++ // that newline belongs to the torn line
		}
	}
	_, err = f.Write(out)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
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
type Damaged struct {
	Line int
	Err  string
}

// Each streams the log, calling fn for every lesson in order, and returns
// the damaged lines it skipped. A missing log has no lessons.
func (s *Store) Each(fn func(l *Lesson) error) ([]Damaged, error) {
	f, err := os.Open(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, fn)
}

// maxLine bounds one record; a longer line is reported damaged.
const maxLine = 16 << 20

// Read reads lessons from a JSON-lines stream.
func Read(r io.Reader, fn func(l *Lesson) error) ([]Damaged, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var damaged []Damaged
	for n := 1; ; n++ {
		line, _, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			l, perr := parseLine(line)
			if perr != nil {
				damaged = append(damaged, Damaged{Line: n, Err: perr.Error()})
			} else if ferr := fn(l); ferr != nil {
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

var errTooLong = errors.New("line too long")

// readLine returns the next line and how many bytes of the stream it
// took (an overlong line is returned as a marker, but its whole length is
// counted, so offsets after it stay right); the slice may alias the
// reader's buffer and is valid until the next call.
func readLine(br *bufio.Reader) ([]byte, int64, error) {
	chunk, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return chunk, int64(len(chunk)), err
	}
	line := append([]byte(nil), chunk...)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			// Skip the rest of an overlong line, counting it.
			n := int64(len(line) + len(chunk))
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = br.ReadSlice('\n')
				n += int64(len(chunk))
			}
			return []byte("\x00" + errTooLong.Error()), n, err
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, int64(len(line)), err
	}
}

func parseLine(line []byte) (*Lesson, error) {
	if bytes.HasPrefix(line, []byte("\x00")) {
		return nil, errTooLong
	}
	var l Lesson
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, fmt.Errorf("not JSON: %v", shortErr(err))
	}
	switch l.SchemaVersion {
	case SchemaVersion, originSchema:
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

// Prune applies retention: keeps at most maxEntries lessons, none older
// than maxAge (0: no age limit), dropping damaged lines, and rewrites the
// log atomically under the lock. It returns how many lessons it removed.
func (s *Store) Prune(maxEntries int, maxAge time.Duration, now time.Time) (int, error) {
	unlock, err := s.lock(true)
	if err != nil {
		return 0, err
	}
	defer unlock()
	type kept struct {
		created time.Time
		line    []byte
	}
	var all []kept
	total := 0
	_, err = s.Each(func(l *Lesson) error {
		total++
		if maxAge > 0 && now.Sub(l.CreatedAt) > maxAge {
			return nil
		}
		b, err := json.Marshal(l)
		if err == nil {
			all = append(all, kept{l.CreatedAt, b})
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].created.Before(all[j].created) })
	if s.MaxPerAgent > 0 {
		all = newestPerAgent(all, s.MaxPerAgent, func(k kept) string { return agentOf(k.line) })
	}
	if maxEntries > 0 && len(all) > maxEntries {
		all = all[len(all)-maxEntries:]
	}
	if len(all) == total {
		return 0, nil
	}
	var buf bytes.Buffer
	for _, k := range all {
		buf.Write(k.line)
		buf.WriteByte('\n')
	}
	if err := s.replace(buf.Bytes()); err != nil {
		return 0, err
	}
	return total - len(all), nil
}

// replace swaps the log for new content atomically (temporary file,
// fsync, rename); the index goes stale and is rebuilt on its next use.
// The caller holds the exclusive lock.
func (s *Store) replace(content []byte) error {
	root, err := fsroot.Open(filepath.Dir(s.Path))
	if err != nil {
		return err
	}
	defer root.Close()
	return root.WriteFile(filepath.Base(s.Path), content, 0o644, fsroot.Options{Sync: true})
}

// Rewrite applies fn to every lesson and replaces the log atomically, under
// the lock; damaged lines are dropped. It returns how many lessons fn
// changed.
func (s *Store) Rewrite(fn func(l *Lesson) bool) (int, error) {
	unlock, err := s.lock(true)
	if err != nil {
		return 0, err
	}
	defer unlock()
	var buf bytes.Buffer
	changed := 0
	_, err = s.Each(func(l *Lesson) error {
		if fn(l) {
			changed++
		}
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
		return nil
	})
	if err != nil || changed == 0 {
		return 0, err
	}
	if err := s.replace(buf.Bytes()); err != nil {
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
	unlock, err := s.lock(true)
	if err != nil {
		return 0, err
	}
	defer unlock()
	f, err := os.Open(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var buf bytes.Buffer
	removed := 0
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		line, _, rerr := readLine(br)
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if l, err := parseLine(t); err == nil {
				if fn(l) {
					removed++
				} else {
					buf.Write(t)
					buf.WriteByte('\n')
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return 0, rerr
		}
	}
	if removed == 0 {
		return 0, nil
	}
	if err := s.replace(buf.Bytes()); err != nil {
		return 0, err
	}
	return removed, nil
}

// newestPerAgent keeps, of items sorted oldest first, the newest n of each
// agent, in order.
func newestPerAgent[T any](items []T, n int, agent func(T) string) []T {
	count := map[string]int{}
	keep := make([]bool, len(items))
	for i := len(items) - 1; i >= 0; i-- {
		a := agent(items[i])
		if count[a] < n {
			count[a]++
			keep[i] = true
		}
	}
	out := items[:0]
	for i, it := range items {
		if keep[i] {
			out = append(out, it)
		}
	}
	return out
}

// agentOf reads a lesson line's agent ("default" when it names none).
func agentOf(line []byte) string {
	var l struct {
		Request struct {
			Agent string `json:"agent"`
		} `json:"request"`
	}
	if json.Unmarshal(line, &l) != nil || l.Request.Agent == "" {
		return "default"
	}
	return l.Request.Agent
}
