package lessons

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/store"

	"golang.org/x/sys/unix"
)

// The index is derived from the log and never the other way round: one
// short line per lesson with what scoring reads, and where the record is.
// A small meta file records the log's size and modification time when the
// index last matched it; an index whose meta does not match the log is
// stale and is rebuilt from the log before it is used.
//
// Index line (tab-separated, escaped): offset, length, created_at (unix
// ns), command, scope, touch set, failed command, tags, first error,
// failed dir, failed step, fold key, location files, location test,
// baseline, preflight checks (type:value, classify.FormatCheck); lists joined by \x1f. The meta file's first
// word is the index format's version: an index of another version is
// stale like one that does not match the log.

func (s *Store) indexPath() string { return store.Index(s.Path) }
func (s *Store) metaPath() string  { return store.IndexMeta(s.Path) }

var escaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\x1f", `\u`)
var unescaper = strings.NewReplacer(`\\`, `\`, `\t`, "\t", `\n`, "\n", `\u`, "\x1f")

func esc(s string) string { return escaper.Replace(s) }

func escList(l []string) string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = esc(s)
	}
	return strings.Join(out, "\x1f")
}

func unesc(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	return unescaper.Replace(s)
}

func indexLine(l *Lesson, offset, length int64) string {
	var loc Location
	if l.Classification.Location != nil {
		loc = *l.Classification.Location
	}
	checks := make([]string, len(l.Advice.PreflightChecks))
	for i, c := range l.Advice.PreflightChecks {
		checks[i] = classify.FormatCheck(c)
	}
	return strings.Join([]string{strconv.FormatInt(offset, 10), strconv.FormatInt(length, 10),
		strconv.FormatInt(l.CreatedAt.UnixNano(), 10), esc(l.Command), escList(l.Request.Scope), escList(l.Plan.TouchSet),
		esc(l.Verify.FailedCommand), escList(l.Classification.Tags), esc(classify.Normalize(StripANSI(l.Classification.FirstError))),
		esc(l.Verify.FailedDir), esc(l.Verify.FailedStep), esc(FoldKey(l)), escList(loc.Files), esc(loc.Test),
		esc(l.Verify.Baseline), escList(checks)}, "\t") + "\n"
}

// rawEntry is an index line split in place: its fields alias the line.
type rawEntry struct {
	offset, length, created int64
	command, scope, touch   []byte
	failedCommand, tags     []byte
	firstError              []byte
	failedDir, failedStep   []byte
	fold, files, test       []byte
	baseline, checks        []byte
}

// indexFields is how many fields an index line has.
const indexFields = 16

func (r *rawEntry) parse(line []byte) bool {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	var f [indexFields][]byte
	for i := 0; i < indexFields-1; i++ {
		j := bytes.IndexByte(line, '\t')
		if j < 0 {
			return false
		}
		f[i], line = line[:j], line[j+1:]
	}
	f[indexFields-1] = line
	var ok1, ok2, ok3 bool
	r.offset, ok1 = atoi(f[0])
	r.length, ok2 = atoi(f[1])
	r.created, ok3 = atoi(f[2])
	r.command, r.scope, r.touch, r.failedCommand, r.tags, r.firstError = f[3], f[4], f[5], f[6], f[7], f[8]
	r.failedDir, r.failedStep = f[9], f[10]
	r.fold, r.files, r.test, r.baseline, r.checks = f[11], f[12], f[13], f[14], f[15]
	return ok1 && ok2 && ok3
}

func atoi(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n int64
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// eachItem calls fn for each element of an escaped \x1f-joined list, as
// it is in the index (still escaped; aliasing the line).
func eachItem(list []byte, fn func(item []byte)) {
	for len(list) > 0 {
		i := bytes.IndexByte(list, 0x1f)
		if i < 0 {
			fn(list)
			return
		}
		fn(list[:i])
		list = list[i+1:]
	}
}

// item returns an index list element as a string, unescaped.
func item(b []byte) string {
	if bytes.IndexByte(b, '\\') >= 0 {
		return unesc(string(b))
	}
	return string(b)
}

// indexVersion names the index line's format (v2 added the failed dir
// and step, v5 the fold key, location, baseline and checks; v6 folds a
// change's broken callers into one key, so an index of v5 is rebuilt).
const indexVersion = "v6"

// stamp identifies the log's state.
func stamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, _ := fi.Sys().(*unix.Stat_t)
	ino := uint64(0)
	if st != nil {
		ino = st.Ino
	}
	return fmt.Sprintf("%s %d %d %d\n", indexVersion, fi.Size(), fi.ModTime().UnixNano(), ino)
}

func (s *Store) indexFresh() bool {
	b, err := os.ReadFile(s.metaPath())
	return err == nil && string(b) == s.meta() && stamp(s.Path) != ""
}

// meta is what the meta file holds when the index matches the log: the
// log's stamp and the index's size.
func (s *Store) meta() string {
	fi, err := os.Stat(s.indexPath())
	if err != nil {
		return ""
	}
	return stamp(s.Path) + "idx " + strconv.FormatInt(fi.Size(), 10) + "\n"
}

// rebuildIndex reads the whole log and writes the index anew. The caller
// holds the exclusive lock.
func (s *Store) rebuildIndex() ([]Damaged, error) {
	f, err := os.Open(s.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Stream the index to a temporary file: memory stays flat whatever
	// the size of the log.
	tmp, err := os.CreateTemp(filepathDir(s.indexPath()), ".idx-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	idx := bufio.NewWriterSize(tmp, 1<<20)
	var damaged []Damaged
	err = store.ScanLines(f, func(ln store.Line) error {
		if ln.Bytes != nil && len(bytes.TrimSpace(ln.Bytes)) == 0 {
			return nil
		}
		if l, err := parseLine(ln.Bytes); err != nil {
			damaged = append(damaged, Damaged{Line: ln.N, Err: err.Error()})
		} else {
			idx.WriteString(indexLine(l, ln.Offset, ln.Size))
		}
		return nil
	})
	if err != nil {
		return damaged, err
	}
	if err := idx.Flush(); err != nil {
		tmp.Close()
		return damaged, err
	}
	if err := tmp.Close(); err != nil {
		return damaged, err
	}
	if err := os.Rename(tmp.Name(), s.indexPath()); err != nil {
		return damaged, err
	}
	return damaged, os.WriteFile(s.metaPath(), []byte(s.meta()), 0o644)
}

// appendIndex extends a fresh index with records just appended at
// offset (the caller holds the exclusive lock and checked freshness
// before writing the log); lines are their lines without the newline.
func (s *Store) appendIndex(ls []*Lesson, lines [][]byte, offset int64) error {
	f, err := os.OpenFile(s.indexPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	var buf strings.Builder
	for i, l := range ls {
		buf.WriteString(indexLine(l, offset, int64(len(lines[i])+1)))
		offset += int64(len(lines[i]) + 1)
	}
	_, err = f.WriteString(buf.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.WriteFile(s.metaPath(), []byte(s.meta()), 0o644)
}

// eachEntry streams the index (rebuilding it first if it is stale) under
// the lock, so that no append or prune changes the log meanwhile. The
// entry passed to fn aliases a buffer: fn must copy what it keeps.
func (s *Store) eachEntry(fn func(e *rawEntry)) ([]Damaged, func(), error) {
	if _, err := os.Stat(s.Path); errors.Is(err, os.ErrNotExist) {
		return nil, func() {}, nil
	}
	unlock, err := s.lock(false)
	if err != nil {
		return nil, nil, err
	}
	var damaged []Damaged
	if !s.indexFresh() {
		unlock()
		if unlock, err = s.lock(true); err != nil {
			return nil, nil, err
		}
		if !s.indexFresh() {
			if damaged, err = s.rebuildIndex(); err != nil {
				unlock()
				return damaged, nil, err
			}
		}
	}
	f, err := os.Open(s.indexPath())
	if err != nil {
		unlock()
		return damaged, nil, err
	}
	defer f.Close()
	var e rawEntry
	if err := store.ScanLines(f, func(ln store.Line) error {
		if len(ln.Bytes) > 0 && e.parse(ln.Bytes) {
			fn(&e)
		}
		return nil
	}); err != nil {
		unlock()
		return damaged, nil, err
	}
	return damaged, unlock, nil
}

// readAt reads one record of the log.
func (s *Store) readAt(offset, length int64) (*Lesson, error) {
	f, err := os.Open(s.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, length)
	if _, err := f.ReadAt(b, offset); err != nil {
		return nil, err
	}
	var l Lesson
	if err := json.Unmarshal(bytes.TrimSpace(b), &l); err != nil {
		return nil, err
	}
	l.stripANSI()
	return &l, nil
}

func filepathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}
