package fsmonitor

import "sync/atomic"

// eager is set by tests only: the shipped binary never calls SetEager.
var eager atomic.Bool

// SetEager makes the transactions of this process go through their
// fsmonitor hook wherever one is configured, as they do on a large tree:
// the hook is asked however small the tree is (a small tree is otherwise
// scanned whole, which is cheaper than asking), and measurements ask it
// rather than an inotify journal. Tests set it so that their small
// repositories exercise what a large repository with a watcher does; the
// shipped binary never calls it.
func SetEager(on bool) { eager.Store(on) }

// Eager reports whether SetEager is on.
func Eager() bool { return eager.Load() }
