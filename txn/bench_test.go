package txn

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/orket/orket/internal/fsmonitor/watchmantest"
	"github.com/orket/orket/internal/gittest"
)

// The transaction benchmarks run on repositories that bench/gen.sh makes
// (N/1000 x 10 x 100 small files, one commit, the index refreshed after
// the racy-git second so that git status re-hashes nothing): the sizes in
// ORKET_BENCH_FILES (a comma list, default 100000), or the repositories
// ORKET_BENCH_REPOS names ("10000=/dir,100000=/dir", as bench/run.sh
// passes the ones it made). Each size runs with the inotify journal (the
// snapshot reads every directory and stats every file, as git status
// does) and, when the repository has .git/hooks/query-watchman (bench/run.sh
// installs git's Watchman hook there), with that hook as fsmonitor; next to
// git status on the same tree, with and without the hook.
//
//	go test -run '^$' -bench . -benchtime 10x ./txn
//
// Each phase is reported as its own metric, and the snapshot's parts too.

var benchRepos struct {
	once  sync.Once
	repos map[int]string
	made  []string
	err   error
}

func benchSizes(b *testing.B) map[int]string {
	b.Helper()
	benchRepos.once.Do(func() {
		benchRepos.repos = map[int]string{}
		if v := os.Getenv("ORKET_BENCH_REPOS"); v != "" {
			for _, kv := range strings.Split(v, ",") {
				n, dir, ok := strings.Cut(kv, "=")
				size, err := strconv.Atoi(n)
				if !ok || err != nil {
					benchRepos.err = fmt.Errorf("ORKET_BENCH_REPOS: %q is not N=DIR", kv)
					return
				}
				benchRepos.repos[size] = dir
			}
			return
		}
		sizes := os.Getenv("ORKET_BENCH_FILES")
		if sizes == "" {
			sizes = "100000"
		}
		for _, s := range strings.Split(sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 5000 {
				benchRepos.err = fmt.Errorf("ORKET_BENCH_FILES: %q is not a number of files (at least 5000)", s)
				return
			}
			dir, err := os.MkdirTemp("", "orket-bench-")
			if err != nil {
				benchRepos.err = err
				return
			}
			benchRepos.made = append(benchRepos.made, dir)
			cmd := exec.Command("sh", filepath.Join("..", "bench", "gen.sh"), strconv.Itoa(n), dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				benchRepos.err = fmt.Errorf("bench/gen.sh %d: %v: %s", n, err, out)
				return
			}
			benchRepos.repos[n] = dir
		}
	})
	if benchRepos.err != nil {
		b.Fatal(benchRepos.err)
	}
	return benchRepos.repos
}

func sortedSizes(m map[int]string) []int {
	var sizes []int
	for n := range m {
		sizes = append(sizes, n)
	}
	sort.Ints(sizes)
	return sizes
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range benchRepos.made {
		os.RemoveAll(dir)
	}
	watchmantest.Done()
	gittest.RemoveAll()
	os.Exit(code)
}

// benchEdit is the 10-file change: 5 tracked files modified, 5 files
// created (bench/run.sh's EDIT is the same).
func benchEdit(b *testing.B, dir string, i int) {
	b.Helper()
	for k := 0; k < 5; k++ {
		top := filepath.Join(dir, fmt.Sprintf("pkg%04d", k))
		p := filepath.Join(top, fmt.Sprintf("sub%d", k), fmt.Sprintf("f%d.go", k*1100))
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(f, "// edit %d\n", i)
		f.Close()
		if err := os.WriteFile(filepath.Join(top, fmt.Sprintf("new%d.go", k)), []byte("package p\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// queryWatchman is where bench/run.sh installs git's Watchman hook.
const queryWatchman = ".git/hooks/query-watchman"

// BenchmarkTransaction is one transaction's overhead: snapshot, the
// 10-file change, touch-set measurement, revert (with its proof).
func BenchmarkTransaction(b *testing.B) {
	repos := benchSizes(b)
	for _, n := range sortedSizes(repos) {
		dir := repos[n]
		for _, watch := range []string{"inotify", "fsmonitor"} {
			b.Run(fmt.Sprintf("files=%d/watch=%s", n, watch), func(b *testing.B) {
				r, err := Discover(dir)
				if err != nil {
					b.Fatal(err)
				}
				r.Options.FSMonitor = FSMonitorOff
				if watch == "fsmonitor" {
					if _, err := os.Stat(filepath.Join(dir, queryWatchman)); err != nil {
						b.Skip("no " + queryWatchman + " (bench/run.sh installs git's Watchman hook there)")
					}
					r.Options.FSMonitor = queryWatchman
				}
				benchTransaction(b, r, dir)
			})
		}
	}
}

func benchTransaction(b *testing.B, r *Repo, dir string) {
	var snapT, measureT, revertT time.Duration
	parts := map[string]time.Duration{}
	how := map[string]int{}
	one := func(i int, timed bool) {
		t0 := time.Now()
		tx, err := r.Begin(Start{RunID: fmt.Sprintf("bench-%d", i), Command: "bench", Time: t0})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		b.StopTimer()
		benchEdit(b, dir, i)
		b.StartTimer()
		t2 := time.Now()
		ch, err := tx.Measure()
		if err != nil {
			b.Fatal(err)
		}
		if len(ch.Paths) != 10 {
			b.Fatalf("touch set %d paths, want 10: %v", len(ch.Paths), ch.Paths)
		}
		t3 := time.Now()
		if _, err := tx.Revert(); err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		b.StopTimer()
		if err := tx.End(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if !timed {
			return
		}
		snapT += t1.Sub(t0)
		measureT += t3.Sub(t2)
		revertT += t4.Sub(t3)
		for _, p := range tx.Snapshot().Timings {
			parts[p.Part] += p.Time
		}
		how[tx.Snapshot().Scan.How+"/"+ch.Scan.How]++
	}
	// One untimed transaction first: with a hook, the first snapshot of
	// a repository is a whole scan that starts the hook's cache.
	one(-1, false)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		one(i, true)
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(snapT), "snapshot-ms")
	b.ReportMetric(ms(measureT), "measure-ms")
	b.ReportMetric(ms(revertT), "revert-ms")
	b.ReportMetric(ms(snapT+measureT+revertT), "txn-ms")
	b.ReportMetric(ms(parts["index"]+parts["git-state"]), "snap.index-ms")
	b.ReportMetric(ms(parts["scan"]), "snap.scan-ms")
	b.ReportMetric(ms(parts["hash"]), "snap.hash-ms")
	b.ReportMetric(ms(parts["blobs"]+parts["commit"]), "snap.objects-ms")
	b.ReportMetric(ms(parts["sync"]+parts["cache"]), "snap.sync-ms")
	if len(how) > 1 {
		b.Logf("how the snapshot/measurement looked: %v", how)
	}
}

// BenchmarkGitStatus is git status on the same trees, without and (when
// the repository has the hook) with git's Watchman hook.
func BenchmarkGitStatus(b *testing.B) {
	repos := benchSizes(b)
	for _, n := range sortedSizes(repos) {
		dir := repos[n]
		for _, watch := range []string{"none", "fsmonitor"} {
			b.Run(fmt.Sprintf("files=%d/watch=%s", n, watch), func(b *testing.B) {
				args := []string{"-c", "core.fsmonitor=false", "status", "--porcelain", "-uall"}
				if watch == "fsmonitor" {
					if _, err := os.Stat(filepath.Join(dir, queryWatchman)); err != nil {
						b.Skip("no " + queryWatchman)
					}
					args[1] = "core.fsmonitor=" + queryWatchman
				}
				run := func() {
					cmd := exec.Command("git", args...)
					cmd.Dir = dir
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("git status: %v: %s", err, out)
					}
				}
				run()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					run()
				}
			})
		}
	}
}

// BenchmarkGitStashPushPop is the alternative a user has: git stash push
// -u and pop of the same 10-file change (up to 100,000 files: beyond,
// it takes minutes).
func BenchmarkGitStashPushPop(b *testing.B) {
	repos := benchSizes(b)
	ran := false
	for _, n := range sortedSizes(repos) {
		if n > 100_000 {
			continue
		}
		ran = true
		dir := repos[n]
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				benchEdit(b, dir, i)
				b.StartTimer()
				cmd := exec.Command("sh", "-c", "git -c core.fsmonitor=false -c user.name=b -c user.email=b@b stash push -q -u && git -c core.fsmonitor=false stash pop -q")
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
			b.StopTimer()
			exec.Command("sh", "-c", "cd '"+dir+"' && git checkout -q -- . && git clean -fdq -e orket.yaml -e .orket").Run()
		})
	}
	if !ran {
		// Without a sub-benchmark, the benchmark itself would report a
		// meaningless time.
		b.Skip("no repository of 100,000 files or fewer")
	}
}

// BenchmarkPackedBlobs is what a run reads from the pack of a large
// repository: the size and content of the 5 blobs benchEdit modifies (the
// saved patch's pre-images, the revert's), by a process that has read
// nothing yet. go-git loads the pack's whole index to find them; orket
// reads their index bucket, offset and pack entries (packread.go).
func BenchmarkPackedBlobs(b *testing.B) {
	repos := benchSizes(b)
	for _, n := range sortedSizes(repos) {
		dir := repos[n]
		r, err := Discover(dir)
		if err != nil {
			b.Fatal(err)
		}
		var ids []plumbing.Hash
		for k := 0; k < 5; k++ {
			p := fmt.Sprintf("pkg%04d/sub%d/f%d.go", k, k, k*1100)
			out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD:"+p).Output()
			if err != nil {
				b.Fatalf("%s: %v", p, err)
			}
			id := plumbing.NewHash(strings.TrimSpace(string(out)))
			if _, err := os.Stat(r.loosePath(id)); err == nil {
				b.Fatalf("%s: %s is loose, not packed", p, id)
			}
			ids = append(ids, id)
		}
		for _, how := range []string{"go-git", "orket"} {
			b.Run(fmt.Sprintf("files=%d/read=%s", n, how), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					// A new process's go-git: nothing loaded.
					if err := r.reopen(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					for _, id := range ids {
						if how == "go-git" {
							obj, err := r.Git.Storer.EncodedObject(plumbing.BlobObject, id)
							if err != nil {
								b.Fatal(err)
							}
							if _, err := readAll(obj); err != nil {
								b.Fatal(err)
							}
							continue
						}
						if _, err := r.BlobSize(id); err != nil {
							b.Fatal(err)
						}
						if _, err := r.ReadBlob(id); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
