package txn

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A watcher is an inotify change journal: it watches every directory the
// snapshot scan read, so that measuring and reverting rescan only the
// directories where something happened. Whenever it cannot vouch for
// having seen everything (the kernel queue overflowed, a watch could not be
// added, a sync timed out), it says so and orket scans the whole tree
// instead. (An ignore file that changes needs no full scan: a transaction
// judges the tree by the rules from before the edit.) Writes that inotify cannot see (through a
// hard link from outside the repository, or into a shared memory mapping
// after its file was closed) are outside what a scan-free measurement can
// observe; docs/transactions.md says so.
type watcher struct {
	f      *os.File
	fd     int
	syncWd int
	syncD  string

	mu     sync.Mutex
	wds    map[int]string  // watch descriptor -> repository-relative directory
	dirty  map[string]bool // directories whose entries changed
	fresh  map[string]bool // directories created (or moved in) since: rescan whole
	broken string          // why the journal cannot be trusted, if it cannot
	marks  map[string]chan struct{}
}

const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR

// newWatcher starts a journal; syncDir is a directory outside the work tree
// where it creates marker files to know it has read every event so far.
func newWatcher(syncDir string) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	w := &watcher{fd: fd, f: os.NewFile(uintptr(fd), "inotify"), wds: map[int]string{}, dirty: map[string]bool{},
		fresh: map[string]bool{}, marks: map[string]chan struct{}{}, syncD: syncDir}
	wd, err := unix.InotifyAddWatch(fd, syncDir, unix.IN_CREATE|unix.IN_ONLYDIR)
	if err != nil {
		w.f.Close()
		return nil, err
	}
	w.syncWd = wd
	go w.read()
	return w, nil
}

// add watches a directory (abs) of the tree (rel).
func (w *watcher) add(abs, rel string) {
	wd, err := unix.InotifyAddWatch(w.fd, abs, watchMask)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.broken == "" && !errors.Is(err, unix.ENOENT) {
			w.broken = "inotify_add_watch: " + err.Error() // usually fs.inotify.max_user_watches
		}
		return
	}
	w.wds[wd] = rel
}

func (w *watcher) read() {
	buf := make([]byte, 64*1024)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			w.mu.Lock()
			if w.broken == "" && !errors.Is(err, os.ErrClosed) {
				w.broken = "read inotify: " + err.Error()
			}
			w.mu.Unlock()
			return
		}
		w.mu.Lock()
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := ""
			if ev.Len > 0 {
				raw := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				name = strings.TrimRight(string(raw), "\x00")
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
			w.event(int(ev.Wd), ev.Mask, name)
		}
		w.mu.Unlock()
	}
}

// event records one event; w.mu is held.
func (w *watcher) event(wd int, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		w.broken = "inotify queue overflow"
		return
	}
	if wd == w.syncWd {
		if ch, ok := w.marks[name]; ok {
			close(ch)
			delete(w.marks, name)
		}
		return
	}
	dir, ok := w.wds[wd]
	if !ok || mask&unix.IN_IGNORED != 0 {
		return
	}
	if name == "" {
		// The directory itself was deleted or moved: its parent saw it.
		return
	}
	w.dirty[dir] = true
	if mask&unix.IN_ISDIR != 0 && mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
		child := name
		if dir != "" {
			child = dir + "/" + name
		}
		w.fresh[child] = true
	}
}

// sync waits until every event up to now has been read, by creating a
// marker file and waiting for its own event. It reports whether the
// journal can be trusted.
func (w *watcher) sync() (dirty, fresh map[string]bool, ok bool) {
	name := "sync-" + randHex(6)
	ch := make(chan struct{})
	w.mu.Lock()
	w.marks[name] = ch
	w.mu.Unlock()
	p := filepath.Join(w.syncD, name)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return nil, nil, false
	}
	os.Remove(p)
	select {
	case <-ch:
	case <-time.After(2 * time.Second):
		w.mu.Lock()
		if w.broken == "" {
			w.broken = "inotify sync timed out"
		}
		w.mu.Unlock()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != "" {
		return nil, nil, false
	}
	dirty, fresh = make(map[string]bool, len(w.dirty)), make(map[string]bool, len(w.fresh))
	for d := range w.dirty {
		dirty[d] = true
	}
	for d := range w.fresh {
		fresh[d] = true
	}
	return dirty, fresh, true
}

// close ends the journal.
//
// Closing an inotify descriptor waits for the kernel to retire its
// watches (a grace period: 5 to 10 ms on a 2-core machine, whatever the
// number of watches), so it happens in the background while the run goes
// on; nothing reads the journal after close.
func (w *watcher) close() {
	if w != nil {
		go w.f.Close()
	}
}
