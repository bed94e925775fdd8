package store

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"sort"
	"time"

	"github.com/orket/orket/internal/fsroot"
)

// Retention bounds a log (lessons.retention in orket.yaml). It is one
// rule, applied by Keep: a run's prune of a log and a sync of the shared
// memory keep the same records of the same log. Each zero value is no
// bound.
type Retention struct {
	MaxEntries  int           // the newest records of all agents
	MaxPerAgent int           // the newest records of each agent
	MaxAge      time.Duration // no record older than this
}

// Of is the retention of the log rel of the state directory: each log
// keeps each agent's newest MaxPerAgent records within MaxAge, and the
// lesson log, besides, its newest MaxEntries of all. Runs and syncs both
// ask it.
func (r Retention) Of(rel string) Retention {
	if rel != LessonsFile {
		r.MaxEntries = 0
	}
	return r
}

// Meta is what retention reads of a record.
type Meta struct {
	Agent string    // "" counts as DefaultAgent
	Time  time.Time // zero: undated, never aged, older than any dated record
	// Pinned records are kept whatever the bounds (the evaluations an
	// open task's count rests on); they still take their place among
	// their agent's newest.
	Pinned bool
}

// DefaultAgent is the agent of a record that names none.
const DefaultAgent = "default"

// Keep applies the rule to the records of a log, given in the log's
// order, and reports which stay: none older than MaxAge; of the rest, by
// time (the later of two records with one time is the one further in the
// log), each agent's newest MaxPerAgent, then the newest MaxEntries of
// what is left; pinned records whatever.
func (r Retention) Keep(recs []Meta, now time.Time) []bool {
	keep := make([]bool, len(recs))
	order := make([]int, 0, len(recs))
	for i, m := range recs {
		keep[i] = true
		if r.MaxAge > 0 && !m.Time.IsZero() && now.Sub(m.Time) > r.MaxAge && !m.Pinned {
			keep[i] = false
			continue
		}
		order = append(order, i)
	}
	// Newest first.
	sort.SliceStable(order, func(a, b int) bool {
		ta, tb := recs[order[a]].Time, recs[order[b]].Time
		if !ta.Equal(tb) {
			return ta.After(tb)
		}
		return order[a] > order[b]
	})
	if r.MaxPerAgent > 0 {
		seen := map[string]int{}
		kept := order[:0]
		for _, i := range order {
			a := recs[i].Agent
			if a == "" {
				a = DefaultAgent
			}
			if seen[a]++; seen[a] > r.MaxPerAgent && !recs[i].Pinned {
				keep[i] = false
				continue
			}
			kept = append(kept, i)
		}
		order = kept
	}
	if r.MaxEntries > 0 {
		for n, i := range order {
			if n >= r.MaxEntries && !recs[i].Pinned {
				keep[i] = false
			}
		}
	}
	return keep
}

// Prune applies the retention rule to the log under its exclusive lock
// and replaces it atomically (fsynced) when a line goes: meta reads a
// line's record (false: a line that is not one of this log's records,
// which goes, as damaged lines do). The lines kept are kept byte for
// byte, oldest first, as a sync writes them. It returns how many lines
// it removed.
func (l *Log) Prune(r Retention, now time.Time, meta func(line []byte) (Meta, bool)) (int, error) {
	var lines [][]byte
	var metas []Meta
	dropped := 0
	return l.rewrite(func(line []byte) error {
		m, ok := meta(line)
		if !ok {
			dropped++
			return nil
		}
		// (line is the reader's buffer: copied.)
		lines = append(lines, append(append([]byte(nil), bytes.TrimRight(line, "\n")...), '\n'))
		metas = append(metas, m)
		return nil
	}, func(damaged []Damaged) (int, []byte, bool) {
		keep := r.Keep(metas, now)
		var kept []int
		for i, k := range keep {
			if k {
				kept = append(kept, i)
			} else {
				dropped++
			}
		}
		if dropped == 0 && len(damaged) == 0 {
			return 0, nil, false
		}
		sort.SliceStable(kept, func(a, b int) bool { return metas[kept[a]].Time.Before(metas[kept[b]].Time) })
		var buf bytes.Buffer
		for _, i := range kept {
			buf.Write(lines[i])
		}
		return dropped, buf.Bytes(), true
	})
}

// Replace swaps the log's content atomically (temporary file, fsync,
// rename), for a caller that holds the exclusive lock.
func (l *Log) Replace(content []byte) error {
	root, err := fsroot.Open(filepath.Dir(l.Path))
	if err != nil {
		return err
	}
	defer root.Close()
	return root.WriteFile(filepath.Base(l.Path), content, 0o644, fsroot.Options{Sync: true})
}

// AgentTime is the Meta of a line whose record has "agent" and "time" at
// its top (evaluations, feedback, votes, what runs were told).
func AgentTime(line []byte) (Meta, bool) {
	var h struct {
		Agent string    `json:"agent"`
		Time  time.Time `json:"time"`
	}
	if json.Unmarshal(line, &h) != nil {
		return Meta{}, false
	}
	return Meta{Agent: h.Agent, Time: h.Time}, true
}
