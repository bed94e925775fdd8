package memsync

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The benchmarks of make bench (docs/sync.md, docs/benchmarks.md): a year of a
// busy team's records (ORKET_BENCH_SYNC_RECORDS, default 100,000: 40%
// evaluations, 30% lessons, 20% feedback, 10% task events, eight agents)
// synced into a clone that has none, and 100 new records synced from a
// clone that has them all, against a bare repository over file://.

func benchRecords() int {
	if n, err := strconv.Atoi(os.Getenv("ORKET_BENCH_SYNC_RECORDS")); err == nil && n > 0 {
		return n
	}
	return 100000
}

// yearOf appends n records spread over a year to a clone's logs.
func yearOf(c *clone, n int, salt string) {
	start := time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)
	step := 365 * 24 * time.Hour / time.Duration(n)
	byLog := map[string][][]byte{}
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * step)
		agent := fmt.Sprintf("agent%d", i%8)
		switch k := i % 10; {
		case k < 4:
			byLog["memory/evaluations.jsonl"] = append(byLog["memory/evaluations.jsonl"],
				evaluationLine(agent, fmt.Sprintf("%s-%s%06x", at.Format("20060102T150405Z"), salt, i), at, "REJECT"))
		case k < 7:
			byLog["memory/failure_lessons.jsonl"] = append(byLog["memory/failure_lessons.jsonl"], lessonLine(agent+salt, at, i))
		case k < 9:
			byLog["memory/feedback.jsonl"] = append(byLog["memory/feedback.jsonl"], feedbackLine(agent, at, fmt.Sprintf("example %s%d does not compile", salt, i)))
		default:
			byLog["memory/tasks.jsonl"] = append(byLog["memory/tasks.jsonl"], taskLine(agent, at.Add(time.Duration(i)), "reset"))
		}
	}
	for l, lines := range byLog {
		c.appendLines(l, lines...)
	}
}

var benchRemote struct {
	once sync.Once
	dir  string
	full *clone
}

// seeded returns a remote holding a year of records, and a clone that
// has them all.
func seeded(b *testing.B) (string, *clone) {
	benchRemote.once.Do(func() {
		dir, err := os.MkdirTemp("", "orket-bench-remote-")
		if err != nil {
			b.Fatal(err)
		}
		benchRemote.dir = dir + "/remote.git"
		tb := &keepTB{TB: b, dir: dir}
		if _, err := gitPlainInitBare(benchRemote.dir); err != nil {
			b.Fatal(err)
		}
		seed := newClone(tb, "file://"+benchRemote.dir)
		yearOf(seed, benchRecords(), "s")
		seed.sync()
		benchRemote.full = seed
	})
	return "file://" + benchRemote.dir, benchRemote.full
}

// BenchmarkSyncInto syncs the year into a clone that has none.
func BenchmarkSyncInto(b *testing.B) {
	remote, _ := seeded(b)
	var last *Result
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := newClone(b, remote)
		b.StartTimer()
		last = c.sync()
		b.StopTimer()
		if last.Received != benchRecords() {
			b.Fatalf("received %d", last.Received)
		}
		b.StartTimer()
	}
	b.ReportMetric(last.Timings.Fetch, "fetch-ms")
	b.ReportMetric(last.Timings.Merge, "merge-ms")
}

// BenchmarkSyncNew100 syncs 100 new records from a clone that has the
// whole year (pushed each time), and BenchmarkFetch the fetch alone.
func BenchmarkSyncNew100(b *testing.B) {
	_, c := seeded(b)
	c.sync()
	var fetch, merge, push float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		addRecords(c, fmt.Sprintf("new%d-%d", i, time.Now().UnixNano()), 100, time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC))
		b.StartTimer()
		res := c.sync()
		if res.Sent != 100 || !res.Pushed {
			b.Fatalf("%+v", res)
		}
		fetch, merge, push = fetch+res.Timings.Fetch, merge+res.Timings.Merge, push+res.Timings.Push
	}
	b.ReportMetric(fetch/float64(b.N), "fetch-ms")
	b.ReportMetric(merge/float64(b.N), "merge-ms")
	b.ReportMetric(push/float64(b.N), "push-ms")
}

// BenchmarkSyncIdle syncs with nothing new on either side.
func BenchmarkSyncIdle(b *testing.B) {
	_, c := seeded(b)
	c.sync()
	for i := 0; i < b.N; i++ {
		if res := c.sync(); res.Pushed || res.Received != 0 {
			b.Fatalf("%+v", res)
		}
	}
}

// keepTB gives temporary directories that outlive one benchmark (the
// seeded remote serves them all); TestMain removes them.
type keepTB struct {
	testing.TB
	dir string
	n   int
}

func (k *keepTB) TempDir() string {
	k.n++
	d := fmt.Sprintf("%s/%d", k.dir, k.n)
	if err := os.MkdirAll(d, 0o755); err != nil {
		k.Fatal(err)
	}
	return d
}

func gitPlainInitBare(dir string) (any, error) {
	return gitInit(dir, true)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchRemote.dir != "" {
		os.RemoveAll(benchRemote.dir[:len(benchRemote.dir)-len("/remote.git")])
	}
	os.Exit(code)
}

// BenchmarkSyncSSH is the common case over ssh (OpenSSH's sshd on
// 127.0.0.1): an idle sync, which is the fetch alone, against a sync of
// 100 new records, which adds the merge and a push.
func BenchmarkSyncSSH(b *testing.B) {
	remoteURL, _ := seeded(b)
	srv := startSSH(b)
	c := sshClone(b, srv, remoteURL[len("file://"):])
	c.sync()
	b.Run("fetch", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if res := c.sync(); res.Pushed || res.Received != 0 {
				b.Fatalf("%+v", res)
			}
		}
	})
	b.Run("new100", func(b *testing.B) {
		var fetch, merge, push float64
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			addRecords(c, fmt.Sprintf("ssh%d-%d", i, time.Now().UnixNano()), 100, time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC))
			b.StartTimer()
			res := c.sync()
			if res.Sent != 100 || !res.Pushed {
				b.Fatalf("%+v", res)
			}
			fetch, merge, push = fetch+res.Timings.Fetch, merge+res.Timings.Merge, push+res.Timings.Push
		}
		b.ReportMetric(fetch/float64(b.N), "fetch-ms")
		b.ReportMetric(merge/float64(b.N), "merge-ms")
		b.ReportMetric(push/float64(b.N), "push-ms")
	})
}
