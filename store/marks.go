package store

import (
	"fmt"
	"os"
	"time"
)

// Runs apply retention to the logs they append to, but a run should not
// read (and rewrite, and fsync) a whole log every time it adds a line: a
// log is pruned once it is at least floor bytes and has grown by an
// eighth since it was last pruned, so a busy log is rewritten every few
// dozen runs, and holds at most an eighth more than its bound between.
// It is pruned too when the retention settings changed since, and, with
// an age bound, at least once a day whatever its size, so max_age holds
// within a day. What the last prune saw is kept beside the log
// (<log>.pruned: its size, the bound, the age and the time).

// A pruneMark is what a log's last prune saw.
type pruneMark struct {
	size   int64
	bound  int
	maxAge time.Duration
	at     time.Time
}

func (m pruneMark) String() string {
	return fmt.Sprintf("%d %d %d %d\n", m.size, m.bound, int64(m.maxAge/time.Second), m.at.Unix())
}

func readMark(path string) (pruneMark, bool) {
	b, err := os.ReadFile(path + ".pruned")
	if err != nil {
		return pruneMark{}, false
	}
	var m pruneMark
	var age, at int64
	if n, err := fmt.Sscanf(string(b), "%d %d %d %d", &m.size, &m.bound, &age, &at); err != nil || n != 4 {
		return pruneMark{}, false
	}
	m.maxAge, m.at = time.Duration(age)*time.Second, time.Unix(at, 0)
	return m, true
}

// DueForPrune reports whether the log at path should be pruned now, to
// bound entries and maxAge.
func DueForPrune(path string, floor int64, bound int, maxAge time.Duration, now time.Time) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	m, ok := readMark(path)
	if fi.Size() < floor {
		// Within its bound: only its age bound, at most daily.
		return maxAge > 0 && (!ok || now.Sub(m.at) >= 24*time.Hour)
	}
	switch {
	case !ok, m.bound != bound, m.maxAge != maxAge.Truncate(time.Second):
		return true
	case maxAge > 0 && now.Sub(m.at) >= 24*time.Hour:
		return true
	}
	return fi.Size() >= m.size+m.size/8 || fi.Size() < m.size
}

// PruneIfDue runs prune on the log at path when DueForPrune says so (a
// log past bound lines of some lineBytes each, grown or re-bounded since
// its last prune), and notes the prune.
func PruneIfDue(path string, lineBytes int64, bound int, maxAge time.Duration, now time.Time, prune func() error) error {
	if !DueForPrune(path, int64(bound)*lineBytes, bound, maxAge, now) {
		return nil
	}
	if err := prune(); err != nil {
		return err
	}
	PrunedAt(path, bound, maxAge, now)
	return nil
}

// PrunedAt notes what a prune (or a count that found nothing to prune)
// saw. It is a hint: losing it costs one early prune, never a record, so
// it is not fsynced.
func PrunedAt(path string, bound int, maxAge time.Duration, now time.Time) {
	if fi, err := os.Stat(path); err == nil {
		m := pruneMark{size: fi.Size(), bound: bound, maxAge: maxAge.Truncate(time.Second), at: now}
		os.WriteFile(path+".pruned", []byte(m.String()), 0o644)
	}
}
