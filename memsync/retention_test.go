package memsync

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/lessons"
	"github.com/orket/orket/store"
)

// TestRetentionIsTheLocalRule: on any log, as a sync leaves it, a sync's
// retention and a run's prune of the local file (store.Log.Prune, the
// meta each log's package reads) keep the same records: one rule, so that
// a sync followed by a run changes nothing and clones agree. Random logs
// of several agents, dates a year wide, records on one instant and
// undated ones, with random bounds; compared whenever the sync's
// hysteresis lets it prune.
func TestRetentionIsTheLocalRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 11))
	now := t0.Add(200 * 24 * time.Hour)
	compared := 0
	for round := 0; round < 300; round++ {
		for _, name := range []string{store.LessonsFile, store.EvaluationsFile} {
			l := logNamed(name)
			l.Retained = true
			merged := MergeLog(l, randomLog(rng, name, now))
			r := store.Retention{MaxEntries: rng.IntN(120), MaxPerAgent: rng.IntN(60)}
			if rng.IntN(2) == 0 {
				r.MaxAge = time.Duration(1+rng.IntN(180)) * 24 * time.Hour
			}
			r = r.Of(name)

			// The sync's retention, on the log's shards.
			days := byDay(parseLines(&l, merged))
			var shards []*shard
			for d, recs := range days {
				in := infoOf(recs)
				shards = append(shards, &shard{day: d, recs: recs, info: &in})
			}
			sort.Slice(shards, func(i, j int) bool { return shards[i].day < shards[j].day })
			if due, _ := pruneDue(shards, r, now, nil); !due {
				continue
			}
			kept, _, err := retain(&l, shards, Retention{Logs: r}, now, func(*shard) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			var synced []byte
			for _, s := range kept {
				synced = append(synced, encodeRecords(s.recs)...)
			}

			// A run's prune of the same file.
			local := &store.Log{Path: filepath.Join(t.TempDir(), "log.jsonl")}
			if err := os.WriteFile(local.Path, merged, 0o644); err != nil {
				t.Fatal(err)
			}
			meta := store.AgentTime
			if name == store.LessonsFile {
				meta = lessons.Meta
			}
			if _, err := local.Prune(r, now, meta); err != nil {
				t.Fatal(err)
			}
			pruned, _ := os.ReadFile(local.Path)
			if diff := cmp.Diff(lines(synced), lines(pruned)); diff != "" {
				t.Fatalf("round %d, %s, %+v: the sync keeps (-) what the local prune does not (+):\n%s", round, name, r, diff)
			}
			compared++
		}
	}
	if compared < 200 {
		t.Errorf("only %d logs were pruned by both", compared)
	}
}

// randomLog is a log of the named kind: several agents, times spread over
// the year before now, some sharing an instant, some undated.
func randomLog(rng *rand.Rand, name string, now time.Time) []byte {
	var b bytes.Buffer
	n := 1 + rng.IntN(250)
	agents := []string{"", "alice", "bob", "ci"}[:1+rng.IntN(4)]
	shared := now.Add(-time.Duration(rng.IntN(365*24)) * time.Hour)
	for i := 0; i < n; i++ {
		agent := agents[rng.IntN(len(agents))]
		at := now.Add(-time.Duration(rng.IntN(365*24*60)) * time.Minute).UTC().Format(time.RFC3339)
		switch rng.IntN(10) {
		case 0:
			at = shared.UTC().Format(time.RFC3339)
		case 1:
			at = ""
		}
		id := fmt.Sprintf("r%04d", i)
		if name == store.LessonsFile {
			created := ""
			if at != "" {
				created = `,"created_at":"` + at + `"`
			}
			fmt.Fprintf(&b, `{"schema_version":%q,"id":%q%s,"request":{"agent":%q}}`+"\n", store.LessonSchema, id, created, agent)
			continue
		}
		tm := ""
		if at != "" {
			tm = `,"time":"` + at + `"`
		}
		fmt.Fprintf(&b, `{"schema_version":%q,"id":%q,"run_id":%q,"agent":%q%s}`+"\n", store.EvaluationSchema, id, id, agent, tm)
	}
	return b.Bytes()
}

func lines(b []byte) []string {
	var out []string
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(l) > 0 {
			out = append(out, string(l))
		}
	}
	return out
}
