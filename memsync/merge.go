package memsync

// The merge of a log is a union: a function of the set of lines it is
// given, never of their order or of which clone gives them. Each shard
// (one UTC day of a log) is merged on its own: one line per identity (the
// winner, see beats), sorted by (time, id, bytes), one line each, every
// line ending in a newline. A shard the merge produced is therefore
// canonical, and merging it again with itself or with any subset of what
// went into it gives it back unchanged.

import (
	"bytes"
	"sort"
	"time"

	"github.com/orket/orket/store"
)

// parseLines reads the records of a JSON-lines text; lines that are not a
// JSON object with a string id are dropped.
func parseLines(l *Log, data []byte) []record {
	var out []record
	var buf bytes.Buffer
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if r, ok := parseRecord(l, line, &buf); ok {
			out = append(out, r)
		}
	}
	return out
}

// mergeRecords returns the canonical union of sets of records of one
// shard.
func mergeRecords(k Kind, sets ...[]record) []record {
	n := 0
	for _, s := range sets {
		n += len(s)
	}
	out := make([]record, 0, n)
	at := make(map[string]int, n)
	for _, s := range sets {
		for _, r := range s {
			id := r.identity(k)
			if i, ok := at[id]; ok {
				if beats(&r, &out[i]) {
					out[i] = r
				}
				continue
			}
			at[id] = len(out)
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return less(&out[i], &out[j]) })
	return out
}

// encodeRecords writes records one per line.
func encodeRecords(recs []record) []byte {
	n := 0
	for i := range recs {
		n += len(recs[i].raw) + 1
	}
	b := make([]byte, 0, n)
	for i := range recs {
		b = append(b, recs[i].raw...)
		b = append(b, '\n')
	}
	return b
}

// byDay groups records by their shard.
func byDay(recs []record) map[string][]record {
	m := map[string][]record{}
	for _, r := range recs {
		d := r.day()
		m[d] = append(m[d], r)
	}
	return m
}

// MergeLog is the whole merge of one log, as a reference: the canonical
// union of the given JSON-lines texts, shard after shard. Sync computes
// the same result shard by shard, touching only the shards that changed.
func MergeLog(l Log, texts ...[]byte) []byte {
	var all []record
	for _, t := range texts {
		all = append(all, parseLines(&l, t)...)
	}
	days := byDay(all)
	names := make([]string, 0, len(days))
	for d := range days {
		names = append(names, d)
	}
	sort.Strings(names)
	var out []byte
	for _, d := range names {
		out = append(out, encodeRecords(mergeRecords(l.Kind, days[d]))...)
	}
	return out
}

// Retention bounds what is shared. Its zero value keeps everything.
type Retention struct {
	// Logs bounds the records of a retained log by the one rule of
	// package store (store.Retention.Keep, which a run's prune of the
	// local log applies too): each log's bounds are Logs.Of(its name).
	// To keep a sync cheap, a log is pruned only once it holds more than
	// an eighth over a bound (or a day past its age bound), and then down
	// to it.
	Logs store.Retention
	// MaxVersions keeps each agent's newest guardrail versions. 0: all.
	MaxVersions int
	// Keep, when set, protects records retention would drop (the
	// evaluations an open task's count rests on, say): it is given the
	// log's Name and the record.
	Keep func(log string, record []byte) bool
}

// shardInfo is what retention needs of a shard without reading it again:
// how many records it holds per agent.
type shardInfo struct {
	Lines  int            `json:"lines"`
	Agents map[string]int `json:"agents,omitempty"`
}

func infoOf(recs []record) shardInfo {
	in := shardInfo{Lines: len(recs), Agents: map[string]int{}}
	for i := range recs {
		in.Agents[recs[i].agent]++
	}
	return in
}

// A shard is one day of a log, as the merge holds it.
type shard struct {
	day  string
	recs []record // nil until loaded
	info *shardInfo
	// dirty: recs is the content (changed by the merge or retention);
	// otherwise the content is the blob the caller knows the shard by.
	dirty bool
}

// retain applies r to the shards of log l (sorted by day), loading a
// shard's records with load when it needs them, and returns how many
// records it dropped. Shards left empty are removed from the result.
// When a prune is due (pruneDue), every shard is read and the rule is
// applied to all of the log's records in their order, as a local prune
// applies it to the file: the two keep the same records.
func retain(l *Log, shards []*shard, r Retention, now time.Time, load func(*shard) error) ([]*shard, int, error) {
	keep := r.Logs.Of(l.Name)
	if !l.Retained || keep == (store.Retention{}) {
		return shards, 0, nil
	}
	due, err := pruneDue(shards, keep, now, load)
	if err != nil || !due {
		return shards, 0, err
	}
	var metas []store.Meta
	for _, s := range shards {
		if err := load(s); err != nil {
			return nil, 0, err
		}
		for i := range s.recs {
			rec := &s.recs[i]
			m := store.Meta{Agent: rec.agent, Pinned: r.Keep != nil && r.Keep(l.Name, rec.raw)}
			if rec.nanos != 0 {
				m.Time = time.Unix(0, rec.nanos).UTC()
			}
			metas = append(metas, m)
		}
	}
	kept, dropped, n := keep.Keep(metas, now), 0, 0
	out := shards[:0]
	for _, s := range shards {
		recs := s.recs[:0:0]
		for i := range s.recs {
			if kept[n] {
				recs = append(recs, s.recs[i])
			} else {
				dropped++
			}
			n++
		}
		if len(recs) != len(s.recs) {
			s.recs, s.dirty = recs, true
			in := infoOf(recs)
			s.info = &in
		}
		if len(s.recs) > 0 {
			out = append(out, s)
		}
	}
	return out, dropped, nil
}

// pruneDue reports whether a log's shards hold more than an eighth over
// a bound (of one agent, or of all), or a day older than the age bound:
// what they hold is read from their infos, loading a shard without one.
func pruneDue(shards []*shard, r store.Retention, now time.Time, load func(*shard) error) (bool, error) {
	if r.MaxAge > 0 {
		cutoff := now.Add(-r.MaxAge).UTC().Format("2006-01-02")
		for _, s := range shards {
			if s.day != undatedDay && s.day < cutoff {
				return true, nil
			}
		}
	}
	perAgent, all := map[string]int{}, 0
	for _, s := range shards {
		if s.info == nil {
			if err := load(s); err != nil {
				return false, err
			}
		}
		for a, c := range s.info.Agents {
			perAgent[a] += c
			all += c
		}
	}
	over := func(n, bound int) bool { return bound > 0 && n > bound+bound/8 }
	for _, c := range perAgent {
		if over(c, r.MaxPerAgent) {
			return true, nil
		}
	}
	return over(all, r.MaxEntries), nil
}
