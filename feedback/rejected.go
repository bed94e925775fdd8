package feedback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/lazyre"
	"github.com/orket/orket/redact"
	"github.com/orket/orket/store"
)

// The rejected folder (.orket/rejected/) takes files a person or a tool
// drops there: a plan, a patch, notes. orket keeps its own undo patches
// there too, named <run-id>.patch (UndoPatchName); those are not
// reviewed. Each other file is reviewed once: a learning is appended to
// the agent memory, and the file moves to rejected/done/ beside a
// "<name>.review.json" note that marks it reviewed and says how.
//
// Nothing there is followed: a symlink, a FIFO, a device or a directory
// is moved to done/ as it is (a rename of the entry itself, within
// .orket), unread, with a note saying why; a hard link is read, never
// written. Names starting with "." (editors' swap files, orket's
// temporary files and lock) are left alone.

// Review note statuses.
const (
	StatusReviewed   = "rejected_reviewed"   // a learning was appended
	StatusUnreviewed = "rejected_unreviewed" // not readable as a file: moved, no learning
)

// maxRejectedRead bounds what is read of a dropped file for the review.
const maxRejectedRead = 256 << 10

var runPatchRe = lazyre.New(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}\.patch$`)

// UndoPatchName returns the name of the patch orket keeps in the
// rejected folder for a run whose change a rejection took out.
func UndoPatchName(runID string) string { return runID + ".patch" }

// IsUndoPatch reports whether name is one of orket's own undo patches:
// "<run-id>.patch", with a run id as orket makes them
// (20260203T164500Z-a1b2c3).
func IsUndoPatch(name string) bool { return runPatchRe().MatchString(name) }

// A Reviewer reviews the files dropped in the rejected folder.
type Reviewer struct {
	OrketDir    string      // the repository's .orket directory
	Summarizer  *Summarizer // nil: the deterministic learning only
	Categorizer *Categorizer
	Run         RunContext // {environment} of the deterministic learning
	Redactor    *redact.Redactor
	Now         func() time.Time
	// Own reports the names orket keeps in the folder itself (nil:
	// IsUndoPatch).
	Own func(name string) bool
}

// A Reviewed file: where it went and what was learned.
type Reviewed struct {
	File     string `json:"file"`     // its name in rejected/
	MovedTo  string `json:"moved_to"` // relative to .orket ("" if it could not be moved)
	Note     string `json:"note,omitempty"`
	Status   string `json:"status"`
	Learning string `json:"learning,omitempty"`
	Source   string `json:"source,omitempty"` // SourceSummarizer or SourceFallback
	// Error says why the review fell back, failed or could not move
	// the file.
	Error string `json:"error,omitempty"`
}

// A ReviewNote is the note beside a reviewed file in done/.
type ReviewNote struct {
	Schema     string    `json:"schema_version"`
	File       string    `json:"file"`
	Status     string    `json:"status"`
	ReviewedAt time.Time `json:"reviewed_at"`
	Kind       string    `json:"kind"` // file, symlink, directory, fifo, device, socket
	Size       int64     `json:"size,omitempty"`
	Reason     string    `json:"reason,omitempty"` // the reason the file stated, if any
	Learning   string    `json:"learning,omitempty"`
	Source     string    `json:"source,omitempty"`
	Error      string    `json:"error,omitempty"`
}

// ErrReviewBusy reports that another orket is reviewing the folder.
var ErrReviewBusy = errors.New("the rejected folder is being reviewed by another orket")

func (r *Reviewer) own(name string) bool {
	if r.Own != nil {
		return r.Own(name)
	}
	return IsUndoPatch(name)
}

func (r *Reviewer) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Pending lists the names waiting in the rejected folder, sorted: not
// done/, not a dotfile, not orket's own. A missing folder has none, nor
// does a missing .orket (a repository's first run).
func (r *Reviewer) Pending() ([]string, error) {
	root, err := fsroot.Open(r.OrketDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return r.pending(root)
}

func (r *Reviewer) pending(root *fsroot.Root) ([]string, error) {
	names, err := root.ReadDirNames(store.RejectedDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if n == "done" || strings.HasPrefix(n, ".") || r.own(n) {
			continue
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// ReviewAll reviews every pending file (see Pending), in name order: the
// summariser's learning, or the deterministic one when it fails (the
// failure is in Reviewed.Error), appended to the agent memory; then the
// file moves to done/ with its note. A file that cannot be read still
// moves, and its note says why. The learning is appended before the file
// moves: a crash between the two reviews the file again rather than lose
// it. Only one orket reviews at a time; another gets ErrReviewBusy and
// reviews nothing.
func (r *Reviewer) ReviewAll(ctx context.Context) ([]Reviewed, MemoryStatus, error) {
	var status MemoryStatus
	root, err := fsroot.Open(r.OrketDir)
	if err != nil {
		return nil, status, err
	}
	defer root.Close()
	names, err := r.pending(root)
	if err != nil || len(names) == 0 {
		return nil, status, err
	}
	unlock, err := store.LockAt(ctx, root, store.ReviewLock, false)
	if errors.Is(err, store.ErrBusy) {
		return nil, status, ErrReviewBusy
	}
	if err != nil {
		return nil, status, err
	}
	defer unlock()
	// Listed again under the lock: another orket may have just moved them.
	if names, err = r.pending(root); err != nil {
		return nil, status, err
	}
	// done/ first: a file that could not move there would be reviewed
	// again by every run.
	if err := root.MkdirAll(store.RejectedDone, 0o755); err != nil {
		return nil, status, fmt.Errorf("create %s: %w", store.RejectedDone, err)
	}
	mem := OpenMemory(r.OrketDir)
	var out []Reviewed
	for _, name := range names {
		if ctx.Err() != nil {
			return out, status, ctx.Err()
		}
		rv, st, err := r.review(ctx, root, mem, name)
		if err != nil {
			return out, status, err
		}
		if st.Learnings > 0 {
			status = st
		}
		out = append(out, rv)
	}
	return out, status, nil
}

// review reviews one entry. Its error is one that stops the whole review
// (the memory cannot be written); anything else is in Reviewed.Error.
func (r *Reviewer) review(ctx context.Context, root *fsroot.Root, mem *Memory, name string) (Reviewed, MemoryStatus, error) {
	rv := Reviewed{File: name}
	now := r.now()
	note := ReviewNote{Schema: store.ReviewSchema, File: name, ReviewedAt: now.UTC()}
	var status MemoryStatus

	d, err := root.OpenDir(store.RejectedDir)
	if err != nil {
		return rv, status, err
	}
	content, more, st, rerr := store.ReadRegularAt(int(d.Fd()), name, store.RejectedDir+"/"+name, maxRejectedRead)
	d.Close()
	if errors.Is(rerr, fs.ErrNotExist) {
		rv.Status, rv.Error = StatusUnreviewed, "gone before it was reviewed"
		return rv, status, nil
	}
	note.Kind = kindOf(root, name, st, rerr)
	if rerr != nil {
		note.Status, note.Error = StatusUnreviewed, notReviewable(note.Kind, rerr)
	} else {
		note.Size = st.Size
		reason := statedReason(content)
		note.Reason = r.Redactor.Redact(stripControl(reason))
		cat := r.Categorizer
		if cat == nil {
			cat = Default()
		}
		fallback := cat.Learn(reason, r.Run).Action
		text := string(content)
		if !utf8.Valid(content) || bytes.IndexByte(content, 0) >= 0 {
			text = fmt.Sprintf("(a binary file of %d bytes)", st.Size)
		} else if more {
			text += fmt.Sprintf("\n[... the file goes on: %d bytes in all ...]", st.Size)
		}
		memText, _ := mem.Read()
		learning, source, serr := r.Summarizer.Learn(ctx, Review{
			Subject: fmt.Sprintf("the file %q, moved to .orket/rejected/ by a person or a tool", name),
			Content: text, Reason: reason, Memory: string(memText),
		}, fallback)
		note.Status, note.Learning, note.Source = StatusReviewed, learning, source
		if serr != nil {
			note.Error = "summarizer failed, learned action used: " + serr.Error()
		}
		status, err = mem.Append(ctx, []Learning{{Time: now, Context: fmt.Sprintf("Rejected file %q", name), Text: learning}}, nil)
		if err != nil {
			return rv, status, fmt.Errorf("review %s: %w", name, err)
		}
	}
	rv.Status, rv.Learning, rv.Source, rv.Error = note.Status, note.Learning, note.Source, note.Error
	moved, notePath, err := moveToDone(root, name, &note)
	rv.MovedTo, rv.Note = moved, notePath
	if err != nil {
		rv.Error = strings.TrimPrefix(rv.Error+"; ", "; ") + "not moved to done/: " + err.Error()
	}
	return rv, status, nil
}

// kindOf names what an entry is, from the stat of an open that worked
// or from an lstat.
func kindOf(root *fsroot.Root, name string, st unix.Stat_t, err error) string {
	if err != nil {
		lst, lerr := root.Lstat(store.RejectedDir + "/" + name)
		if lerr != nil {
			return "unknown"
		}
		st = lst
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "file"
	case unix.S_IFLNK:
		return "symlink"
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFIFO:
		return "fifo"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "device"
	}
	return "unknown"
}

func notReviewable(kind string, err error) string {
	switch kind {
	case "symlink":
		return "a symlink: not followed, not reviewed"
	case "directory":
		return "a directory: not reviewed (drop files, not folders)"
	case "fifo", "socket", "device", "unknown":
		return "a " + kind + ", not a regular file: not reviewed"
	}
	return "not reviewed: " + err.Error()
}

// statedReasonRe finds a reason a dropped file states for itself, on a
// line of its own near the top: "Reason: ...", "Why: ...", "Rejected
// because ...", "Motivo: ...".
var statedReasonRe = lazyre.New(`(?i)^\s*(?:[-*>#]\s*)*(?:\*\*)?(?:(?:reason|why|rejection reason|motivo)(?:\*\*)?\s*[:\-—]|rejected because\b)\s*(?:\*\*)?\s*(.+)$`)

// statedReason returns the reason a file states in its first 50 lines,
// or "".
func statedReason(content []byte) string {
	lines := strings.SplitN(string(content), "\n", 51)
	if len(lines) > 50 {
		lines = lines[:50]
	}
	for _, l := range lines {
		if m := statedReasonRe().FindStringSubmatch(strings.TrimRight(l, "\r")); m != nil {
			if s := strings.TrimSpace(strings.Trim(m[1], "*")); s != "" {
				return s
			}
		}
	}
	return ""
}

// moveToDone renames the entry into done/ (never over another: a taken
// name gets "-2", "-3" before its extension) and writes its note beside
// it. The note goes first: once the entry has moved, it is marked.
func moveToDone(root *fsroot.Root, name string, note *ReviewNote) (string, string, error) {
	if err := root.MkdirAll(store.RejectedDone, 0o755); err != nil {
		return "", "", err
	}
	src, err := root.OpenDir(store.RejectedDir)
	if err != nil {
		return "", "", err
	}
	defer src.Close()
	dst, err := root.OpenDir(store.RejectedDone)
	if err != nil {
		return "", "", err
	}
	defer dst.Close()
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	if stem == "" || len(ext) > 16 {
		stem, ext = name, ""
	}
	// Room for "-NNNN" and ".review.json" within a name's 255 bytes.
	if len(stem)+len(ext) > 200 {
		cut := 200 - len(ext)
		for cut > 0 && !utf8.RuneStart(stem[cut]) {
			cut--
		}
		stem = stem[:cut]
	}
	for n := 1; n < 10000; n++ {
		target := stem + ext
		if n > 1 {
			target = stem + "-" + strconv.Itoa(n) + ext
		}
		noteName := target + ".review.json"
		if exists(int(dst.Fd()), target) || exists(int(dst.Fd()), noteName) {
			continue
		}
		b, _ := json.MarshalIndent(note, "", "  ")
		if err := root.WriteFile(store.RejectedDone+"/"+noteName, append(b, '\n'), 0o644, fsroot.Options{Sync: true}); err != nil {
			return "", "", err
		}
		err := unix.Renameat2(int(src.Fd()), name, int(dst.Fd()), target, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
			// A file system without RENAME_NOREPLACE: the name was
			// free a moment ago, and the review holds the folder's lock.
			err = unix.Renameat(int(src.Fd()), name, int(dst.Fd()), target)
		}
		if errors.Is(err, unix.EEXIST) {
			root.Remove(store.RejectedDone + "/" + noteName)
			continue
		}
		if err != nil {
			root.Remove(store.RejectedDone + "/" + noteName)
			return "", "", &os.PathError{Op: "rename", Path: store.RejectedDir + "/" + name, Err: err}
		}
		unix.Fsync(int(dst.Fd()))
		unix.Fsync(int(src.Fd()))
		return store.RejectedDone + "/" + target, store.RejectedDone + "/" + noteName, nil
	}
	return "", "", fmt.Errorf("no free name in %s for %s", store.RejectedDone, name)
}

func exists(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}
