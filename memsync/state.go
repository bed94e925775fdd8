package memsync

// What a clone remembers of its last sync, in .orket/sync/ (never
// shipped):
//
//   - state.json: the memory commit the working files were last written
//     from and, for each log, the file's identity (device, inode), the size
//     of what the sync wrote, a hash of that content's last bytes, and the
//     shards it was made of. When all of it still holds, the file is that
//     content plus lines appended since, and a sync reads only those lines
//     (the fast path); anything else (a prune, a forget, an edit, no state)
//     and it reads the whole file (the slow path). Nothing is trusted that
//     a check did not confirm: a wrong state costs time, never a record.
//   - journal.json: written (fsynced) before a sync rewrites any working
//     file, removed once the new state is saved. A sync that finds one
//     was interrupted: it reads every file whole and merges the journal's
//     commit in too, so the lines an interrupted in-place rewrite was
//     writing are found again.
//   - sync.lock: one sync at a time per clone.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/store"
)

const (
	stateFile   = store.SyncState
	journalFile = store.SyncJournal
	lockFile    = store.SyncLock
	tailWindow  = 4096
)

type state struct {
	Version int                  `json:"version"`
	Commit  string               `json:"commit"`
	Logs    map[string]*logState `json:"logs"`
	// Infos caches what retention needs of each shard, by blob.
	Infos map[string]shardInfo `json:"infos,omitempty"`
}

type logState struct {
	Dev    uint64       `json:"dev"`
	Ino    uint64       `json:"ino"`
	Size   int64        `json:"size"`
	Tail   string       `json:"tail"`
	Shards []shardState `json:"shards"`
}

type shardState struct {
	Day  string `json:"day"`
	Blob string `json:"blob"`
	Size int64  `json:"size"`
}

type journal struct {
	Commit string `json:"commit"`
}

const stateVersion = 1

func loadJSON(root *fsroot.Root, rel string, v any) bool {
	b, err := root.ReadFile(rel)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

func saveJSON(root *fsroot.Root, rel string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return root.WriteFile(rel, b, 0o644, fsroot.Options{Sync: true})
}

func removeFile(root *fsroot.Root, rel string) error {
	err := root.RemoveAll(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// saveState writes the state atomically, not fsynced (see mergeOnce).
func saveState(root *fsroot.Root, st *state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return root.WriteFile(stateFile, b, 0o644, fsroot.Options{})
}

func tailHash(b []byte) string {
	if len(b) > tailWindow {
		b = b[len(b)-tailWindow:]
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// openOrketDir opens the .orket directory, creating it.
func openOrketDir(dir string) (*fsroot.Root, error) {
	if err := os.MkdirAll(filepath.Dir(store.Path(dir, stateFile)), 0o755); err != nil {
		return nil, err
	}
	return fsroot.Open(dir)
}
