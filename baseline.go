package orket

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/config"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/store"
	"github.com/orket/orket/verdict"
	"github.com/orket/orket/verify"
)

// baselineMaxDefault is how long the steps a baseline runs may have taken
// and still be run again on the tree without the change
// (verify.baseline_max).
const baselineMaxDefault = 2 * time.Minute

// A BaselineRun is how the tree without the change was verified after a
// failure (docs/verdicts.md, The baseline).
type BaselineRun struct {
	// Steps are the profile's steps run again, in order: every step up to
	// the last failing one, so that a step reads what its earlier steps
	// build from the tree without the change, never the change's.
	Steps      []string `json:"steps"`
	DurationMS int64    `json:"duration_ms"`
	// CachedFrom is the run whose baseline of the same tree, steps and
	// environment this run reused instead of running the steps.
	CachedFrom string `json:"cached_from,omitempty"`
	// Red: every failing step fails without the change too.
	Red bool `json:"red"`
}

// baseline verifies the tree without the change after verification
// failed, to learn whether the failure is the change's: on the reverted
// tree, every step of the profile up to the last failed one, in order and
// as the profile runs them. The earlier steps build again from the
// reverted sources (the revert wrote every file the change touched, so
// incremental tools see them change); ignored dependencies such as
// node_modules stay usable, which a fresh work tree would not have. A
// result of the same tree, steps and environment is reused from the
// baseline cache. Whatever the steps write is reverted again. A
// --worktree candidate's tree without the change is HEAD's, which the
// revert does not give: no baseline there.
func (r *run) baseline(ctx context.Context, cause error, saved string) error {
	var vf *verifyFailedError
	if !errors.As(cause, &vf) || r.baselineOff || ctx.Err() != nil {
		return nil
	}
	if _, ok := r.req.Edit.(WorktreeEdit); ok {
		return nil
	}
	steps := r.baselineSteps(vf.Failed)
	if len(steps) == 0 {
		return nil
	}
	t := r.req.Env.Now()
	b := &BaselineRun{}
	for _, s := range steps {
		b.Steps = append(b.Steps, s.Name)
	}
	cache := r.baselineCache()
	key := r.baselineKey(steps)
	hit := cache.find(key, t)
	// Slow steps are run again only within verify.baseline_max; a cached
	// result of them is reused whatever they took.
	var took int64
	for _, s := range r.rec.Steps {
		for _, c := range steps {
			if s.Name == c.Name {
				took += s.DurationMS
			}
		}
	}
	if hit == nil && time.Duration(took)*time.Millisecond > r.baselineMax {
		for _, s := range vf.Failed {
			s.Baseline = "not run again: its steps took longer than verify.baseline_max (" + r.baselineMax.String() + ")"
		}
		return nil
	}
	r.rec.Baseline = b
	if hit != nil {
		b.CachedFrom = hit.RunID
		r.judgeBaseline(vf.Failed, hit.results(), false)
		b.Red = verdict.FailsWithoutChange(vf.Failed)
		r.phaseTime("baseline", t)
		b.DurationMS = r.rec.Timings["baseline_ms"]
		r.obs.Phase(PhaseBaseline, r.rec)
		r.obs.Baselined(r.rec)
		return nil
	}
	r.obs.Phase(PhaseBaseline, r.rec)
	if err := r.tx.Baseline(); err != nil {
		return internal("write the transaction journal", "check that .git is writable", err)
	}
	prof := &config.Resolved{Name: r.prof.Name, Steps: steps, FailFast: r.prof.FailFast, Parallel: r.prof.Parallel}
	results := verify.Run(ctx, prof, r.verifyOptions())
	r.judgeBaseline(vf.Failed, results, true)
	b.Red = verdict.FailsWithoutChange(vf.Failed)
	r.phaseTime("baseline", t)
	b.DurationMS = r.rec.Timings["baseline_ms"]
	if key != "" && ctx.Err() == nil && !anyInterrupted(results) {
		// Kept once the transaction is over: .orket is part of it, and
		// the revert below puts it back as it was.
		r.newBaseline = newBaselineEntry(key, r.rec.RunID, r.req.Env.Now(), results)
	}
	r.obs.Baselined(r.rec)
	if _, err := r.tx.Revert(); err != nil {
		// The record must not say the tree is as it was: this revert,
		// not the first one, is the last word.
		if r.rec.Revert != nil {
			r.rec.Revert.Verified = false
		}
		return &revertError{Err: err, Ref: r.tx.Ref(), Saved: saved}
	}
	return nil
}

// baselineSteps are the profile's steps up to the last failed one.
func (r *run) baselineSteps(failed []*verify.StepResult) []config.Step {
	last := -1
	for i, s := range r.prof.Steps {
		for _, f := range failed {
			if f.Name == s.Name {
				last = i
			}
		}
	}
	return r.prof.Steps[:last+1]
}

// judgeBaseline sets each failed step's Baseline from how the steps did
// without the change. raw says whether results hold the output as the
// steps printed it (a run's own) or redacted (the cache's): the failed
// step's output is compared in the same form.
func (r *run) judgeBaseline(failed, results []*verify.StepResult, raw bool) {
	byName := map[string]*verify.StepResult{}
	var broke string // the first required step that fails without the change
	for _, res := range results {
		byName[res.Name] = res
		if broke == "" && res.FailedRequired() {
			broke = res.Name
		}
	}
	for _, s := range failed {
		res := byName[s.Name]
		switch {
		case res == nil && broke == "":
			s.Baseline = "not run again: interrupted"
		case res == nil:
			s.Baseline = "not reached: step " + broke + " fails without the change"
		case res.Interrupted:
			s.Baseline = "not run again: interrupted"
		case res.Status == verify.Passed:
			s.Baseline = verify.Passes
		case res.Status == verify.Skipped:
			s.Baseline = "not run again: skipped"
		default:
			s.Baseline = verify.FailsToo
			// Red without the change is no licence to add failures: an
			// error line the tree without it did not print is the
			// change's.
			mine := s.OutputTail
			if raw {
				mine = rawTail(s)
			}
			if added := classify.NewErrors(mine, rawTail(res)); len(added) > 0 {
				s.Baseline, s.BaselineNew = verify.NewFailures, r.red.Redact(added[0])
			}
		}
	}
}

func anyInterrupted(results []*verify.StepResult) bool {
	for _, res := range results {
		if res.Interrupted {
			return true
		}
	}
	return false
}

// rawTail is a step's output as it printed it (in memory only).
func rawTail(s *verify.StepResult) string {
	if s.RawTail != "" {
		return s.RawTail
	}
	return s.OutputTail
}

// baselineKey names what a baseline's result depends on: the tree
// without the change (HEAD with the tree's uncommitted state before the
// run), the steps as configured and which of them run, the environment
// they run in (orket's own variables aside) and the programs their
// commands start. "" when the tree cannot be named.
func (r *run) baselineKey(steps []config.Step) string {
	tree := r.snapshotContent(r.tx.Snapshot().Commit)
	if tree.IsZero() {
		return ""
	}
	return baselineKeyOf(tree, r.prof, steps, r.verifyOptions(), r.req.Repo.Root)
}

// baselineKeyOf is the key of a baseline of steps, a prefix of prof, on
// the tree content names, run with o, in the repository at root.
func baselineKeyOf(tree plumbing.Hash, prof *config.Resolved, steps []config.Step, o verify.Options, root string) string {
	h := sha256.New()
	// The tail's bounds too: a cached tail cut shorter would make every
	// line of a longer one look new.
	fmt.Fprintf(h, "tree %s\nfail_fast %v parallel %v\ntail %+v\n", tree, prof.FailFast, prof.Parallel, o.Tail)
	for _, s := range steps {
		def, _ := json.Marshal(s)
		fmt.Fprintf(h, "step %s %v\n", def, o.Skip[s.Name] || !verify.WhenMatches(s, o.TouchSet))
		fmt.Fprintf(h, "program %s\n", program(s, root))
	}
	env := make([]string, 0, len(o.Env))
	for _, kv := range o.Env {
		if name, _, _ := strings.Cut(kv, "="); !volatileEnv(name) {
			env = append(env, kv)
		}
	}
	sort.Strings(env)
	for _, kv := range env {
		io.WriteString(h, "env "+kv+"\x00")
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// volatileEnv reports the variables that change from run to run without
// changing what a step does: orket's own (the run's id, its files), and
// the shell's bookkeeping.
func volatileEnv(name string) bool {
	switch name {
	case "_", "PWD", "OLDPWD", "SHLVL":
		return true
	}
	return strings.HasPrefix(name, "ORKET_")
}

// program names the program a step's command starts, as a step's runner
// finds it, with its size and modification time: a tool upgraded in place
// is a new environment. A program in the repository (a relative path, or
// one PATH finds there) is part of the tree or built from it: "-".
func program(s config.Step, repo string) string {
	name := preflight.CommandName(s.Command())
	if name == "" || strings.Contains(name, "/") && !filepath.IsAbs(name) {
		return "-"
	}
	p := preflight.LookPath(name, preflight.Env{Root: filepath.Join(repo, filepath.FromSlash(s.Dir))})
	if p == "" {
		return name + " missing"
	}
	if rel, err := filepath.Rel(repo, p); err == nil && filepath.IsLocal(rel) {
		return "-"
	}
	return preflight.Identify(p)
}

// baselineCacheSize bounds the baseline cache: its newest entries stay.
const baselineCacheSize = 200

// baselineTTL is how long a cached baseline is reused: what its key
// cannot see (a service started, a dependency installed in an ignored
// directory) changes a result too, and the cache is for the failures of
// one stretch of work. orket task resolve empties the cache.
const baselineTTL = time.Hour

// A baselineCache keeps the baselines of a work tree's runs
// (.orket/cache/baselines.jsonl), each under its key: a failure of the
// same steps on the same tree in the same environment reuses one.
type baselineCache struct {
	log *store.Log
}

// A baselineEntry is a line of the cache: how each step did without the
// change, with the output (redacted) of the failed ones.
type baselineEntry struct {
	Schema string          `json:"schema_version"`
	Time   time.Time       `json:"time"`
	Key    string          `json:"key"`
	RunID  string          `json:"run_id"`
	Steps  []baselineTaken `json:"steps"`
}

type baselineTaken struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
	Status   string `json:"status"`
	Tail     string `json:"output_tail,omitempty"`
}

func (r *run) baselineCache() *baselineCache {
	return &baselineCache{log: &store.Log{Path: store.BaselinesPath(r.req.Repo.Root)}}
}

// find returns the newest entry under key younger than baselineTTL at
// now; nil when there is none (or the cache cannot be read: the steps
// then run).
func (c *baselineCache) find(key string, now time.Time) *baselineEntry {
	if key == "" {
		return nil
	}
	var hit *baselineEntry
	c.log.Each(func(line []byte) error {
		if !bytes.Contains(line, []byte(key)) {
			return nil
		}
		var e baselineEntry
		if json.Unmarshal(line, &e) == nil && e.Key == key && e.Schema == store.BaselineSchema && now.Sub(e.Time) < baselineTTL {
			hit = &e
		}
		return nil
	})
	return hit
}

// SeedBaseline keeps in the baseline cache what verifying HEAD's
// committed tree gave (orket doctor's run of the profile on a clean copy
// of it), so that a failure on a clean tree reuses it: one entry for each
// prefix of the profile the results cover. results are verify.Run's, in
// the profile's order; o is how they ran (its Root aside).
func SeedBaseline(repo *Repo, prof *config.Resolved, o verify.Options, results []*verify.StepResult, runID string, now time.Time) error {
	head, err := repo.Git.Head()
	if err != nil {
		return err
	}
	c, err := object.GetCommit(repo.Git.Storer, head.Hash())
	if err != nil {
		return err
	}
	tree := cleanTreeContent(c.TreeHash)
	cache := &baselineCache{log: &store.Log{Path: store.BaselinesPath(repo.Root)}}
	root, err := repo.FS()
	if err == nil {
		err = ensureOrketDir(root)
	}
	for i := 0; err == nil && i < len(results) && i < len(prof.Steps); i++ {
		if prof.Parallel && i < len(prof.Steps)-1 {
			// Run in parallel, a later step's failure may have cut an
			// earlier one short: only the whole profile's result is kept.
			continue
		}
		key := baselineKeyOf(tree, prof, prof.Steps[:i+1], o, repo.Root)
		err = cache.add(newBaselineEntry(key, runID, now, results[:i+1]), now)
	}
	return err
}

func newBaselineEntry(key, runID string, now time.Time, results []*verify.StepResult) *baselineEntry {
	e := &baselineEntry{Schema: store.BaselineSchema, Time: now.UTC(), Key: key, RunID: runID}
	for _, res := range results {
		t := baselineTaken{Name: res.Name, Required: res.Required, Status: res.Status}
		if res.Status == verify.Failed {
			t.Tail = res.OutputTail
		}
		e.Steps = append(e.Steps, t)
	}
	return e
}

// keepBaseline adds the run's new baseline to the cache, after the
// transaction ended.
func (r *run) keepBaseline() {
	if r.newBaseline == nil {
		return
	}
	root, err := r.req.Repo.FS()
	if err == nil {
		err = ensureOrketDir(root)
	}
	if err == nil {
		err = r.baselineCache().add(r.newBaseline, r.req.Env.Now())
	}
	if err != nil {
		r.obs.Warn("could not keep the baseline for the next run: " + err.Error())
	}
}

// add appends an entry and keeps the cache to its bound.
func (c *baselineCache) add(e *baselineEntry, now time.Time) error {
	if err := os.MkdirAll(filepath.Dir(c.log.Path), 0o755); err != nil {
		return err
	}
	if err := c.log.Append(e); err != nil {
		return err
	}
	return store.PruneIfDue(c.log.Path, 1024, baselineCacheSize, 0, now, func() error {
		_, err := c.log.Prune(store.Retention{MaxEntries: baselineCacheSize}, now, store.AgentTime)
		return err
	})
}

// results are the entry's steps as results, their output redacted.
func (e *baselineEntry) results() []*verify.StepResult {
	out := make([]*verify.StepResult, len(e.Steps))
	for i, t := range e.Steps {
		out[i] = &verify.StepResult{Name: t.Name, Required: t.Required, Status: t.Status, OutputTail: t.Tail}
	}
	return out
}
