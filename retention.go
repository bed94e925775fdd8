package orket

import (
	"os"
	"strconv"
	"strings"
)

// Runs apply retention to the logs they append to, but a run should not
// read (and rewrite, and fsync) a whole log every time it adds a line: a
// log is pruned once it is at least floor bytes and has grown by an
// eighth since it was last pruned, so a busy log is rewritten every few
// dozen runs, and holds at most an eighth more than its bound between.
// The size after the last prune is kept beside the log (<log>.pruned);
// without it, the floor alone decides.

// dueForPrune reports whether the log at path should be pruned now.
func dueForPrune(path string, floor int64) bool {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() < floor {
		return false
	}
	b, err := os.ReadFile(path + ".pruned")
	if err != nil {
		return true
	}
	last, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return err != nil || fi.Size() >= last+last/8 || fi.Size() < last
}

// prunedAt notes the log's size after a prune. It is a hint: losing it
// costs one early prune, never a record, so it is not fsynced.
func prunedAt(path string) {
	if fi, err := os.Stat(path); err == nil {
		os.WriteFile(path+".pruned", []byte(strconv.FormatInt(fi.Size(), 10)+"\n"), 0o644)
	}
}
