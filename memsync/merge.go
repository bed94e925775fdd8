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
	// MaxEntriesPerAgent keeps each agent's newest records of a
	// retained log. To keep a sync cheap, a log is pruned only once an
	// agent holds more than an eighth over the bound, and then down to
	// it. 0: no bound.
	MaxEntriesPerAgent int
	// MaxAge drops the days of a retained log older than Now-MaxAge
	// (whole days, UTC: a record lives at most a day past MaxAge).
	// Records without a time are not aged. 0: no bound.
	MaxAge time.Duration
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
func retain(l *Log, shards []*shard, r Retention, now time.Time, load func(*shard) error) ([]*shard, int, error) {
	if !l.Retained || (r.MaxAge <= 0 && r.MaxEntriesPerAgent <= 0) {
		return shards, 0, nil
	}
	dropped := 0
	keep := func(rec *record) bool { return r.Keep != nil && r.Keep(l.Name, rec.raw) }
	filter := func(s *shard, drop func(*record) bool) error {
		if err := load(s); err != nil {
			return err
		}
		kept := s.recs[:0:0]
		for i := range s.recs {
			if drop(&s.recs[i]) && !keep(&s.recs[i]) {
				dropped++
				continue
			}
			kept = append(kept, s.recs[i])
		}
		if len(kept) != len(s.recs) {
			s.recs, s.dirty = kept, true
			in := infoOf(kept)
			s.info = &in
		}
		return nil
	}
	if r.MaxAge > 0 {
		cutoff := now.Add(-r.MaxAge).UTC().Format("2006-01-02")
		for _, s := range shards {
			if s.day != undatedDay && s.day < cutoff {
				if err := filter(s, func(*record) bool { return true }); err != nil {
					return nil, 0, err
				}
			}
		}
	}
	if n := r.MaxEntriesPerAgent; n > 0 {
		total := map[string]int{}
		for _, s := range shards {
			if s.info == nil {
				if err := load(s); err != nil {
					return nil, 0, err
				}
			}
			for a, c := range s.info.Agents {
				total[a] += c
			}
		}
		over := map[string]bool{}
		for a, c := range total {
			if c > n+n/8 {
				over[a] = true
			}
		}
		if len(over) > 0 {
			// Newest first: each agent keeps its first n records met.
			seen := map[string]int{}
			for i := len(shards) - 1; i >= 0; i-- {
				s := shards[i]
				hit := false
				for a := range over {
					if s.info.Agents[a] > 0 && seen[a]+s.info.Agents[a] > n {
						hit = true
					}
				}
				if !hit {
					for a := range over {
						seen[a] += s.info.Agents[a]
					}
					continue
				}
				if err := load(s); err != nil {
					return nil, 0, err
				}
				// Within a shard, newest last: count from the end.
				drop := make([]bool, len(s.recs))
				for j := len(s.recs) - 1; j >= 0; j-- {
					a := s.recs[j].agent
					if !over[a] {
						continue
					}
					seen[a]++
					drop[j] = seen[a] > n
				}
				k := 0
				if err := filter(s, func(rec *record) bool { d := drop[k]; k++; return d }); err != nil {
					return nil, 0, err
				}
			}
		}
	}
	out := shards[:0]
	for _, s := range shards {
		if s.info != nil && s.info.Lines == 0 {
			continue
		}
		out = append(out, s)
	}
	return out, dropped, nil
}
