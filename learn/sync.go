package learn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/rawjson"
	"github.com/orket/orket/memsync"
	"github.com/orket/orket/redact"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
)

// A SyncRequest asks to share the repository's memory with a remote
// (docs/sync.md).
type SyncRequest struct {
	Repo   *txn.Repo
	Config *config.Config
	// Remote is a remote's name, a URL or a path; "" is memory.remote
	// (origin by default).
	Remote string
	// Pull fetches and merges into .orket only; otherwise the merge is
	// pushed too.
	Pull bool
	Env  orket.Env
}

// A SyncResult is what a sync did.
type SyncResult struct {
	Code orket.Code `json:"code"`
	*memsync.Result
}

// Sync fetches the remote's refs/orket/memory, merges it with this
// clone's memory by record, writes the merge back and, unless Pull,
// commits and pushes it (retrying with backoff when another clone pushed
// first). A remote that cannot be reached changes nothing.
func Sync(ctx context.Context, req SyncRequest) (_ *SyncResult, err error) {
	defer func() { err = coded(err) }()
	o := syncOptions(req.Repo, req.Config, req.Env)
	if req.Remote != "" {
		o.Remote = req.Remote
	}
	o.Pull = req.Pull
	if err := ensureOrketState(req.Repo); err != nil {
		return nil, err
	}
	res, err := memsync.Sync(ctx, o)
	if err != nil {
		return nil, err
	}
	return &SyncResult{Code: orket.OK, Result: res}, nil
}

// syncOptions are a sync of the repository's memory as orket.yaml says:
// memory.remote, lessons.path, retention, and redaction of whatever
// leaves the clone with the environment's secrets and orket.yaml's step
// values.
func syncOptions(repo *txn.Repo, cfg *config.Config, env orket.Env) memsync.Options {
	dir := OrketDir(repo)
	logs := memsync.DefaultLogs()
	for i := range logs {
		if logs[i].Name == store.LessonsFile {
			logs[i].Path = LessonPath(repo, cfg)
		}
	}
	var values []string
	for _, name := range cfg.Verify.Order {
		for _, s := range cfg.Verify.Profiles[name].Steps {
			for _, v := range s.Env {
				values = append(values, v)
			}
		}
	}
	red := redact.New(redact.Options{Environ: env.Environ}).WithValues(values...)
	now := env.Now
	if now == nil {
		now = time.Now
	}
	return memsync.Options{Repo: repo.Git, OrketDir: dir, WorkTree: filepath.Dir(dir), Remote: cfg.Memory.Remote,
		Logs: logs, Redact: red.Redact, Now: now,
		Retention: memsync.Retention{Logs: cfg.Lessons.Retention.Rule(), MaxVersions: cfg.Guardrails.MaxVersions, Keep: keepOpenRuns(repo)}}
}

// keepOpenRuns protects from a sync's retention the evaluations an open
// task rests on (its attempts, its escalation), as the run's own pruning
// does: dropping them would start the count over. Read before the sync
// takes the log's lock; a log that cannot be read protects nothing more.
func keepOpenRuns(repo *txn.Repo) func(log string, record []byte) bool {
	open, err := Verdicts(repo).OpenRuns()
	if err != nil || len(open) == 0 {
		return nil
	}
	return func(log string, record []byte) bool {
		if log != store.EvaluationsFile {
			return false
		}
		var id string
		rawjson.Object(record, func(k, v []byte) {
			if string(k) == "run_id" {
				id, _ = rawjson.String(v)
			}
		})
		return open[id]
	}
}

// autoSync is memory.sync: auto: a pull before the run reads the
// memory, a sync (with the push) once it has written its own. A sync
// that fails is a warning: the run verifies and reverts as it would
// without it. Dry runs share nothing.
func (r *run) autoSync(ctx context.Context, when string) {
	if r.Config.Memory.Sync != "auto" || r.DryRun {
		return
	}
	o := syncOptions(r.Repo, r.Config, r.Env)
	o.Pull = when == "start"
	v := orket.SyncView{When: when, Remote: o.Remote}
	err := ensureOrketState(r.Repo)
	var res *memsync.Result
	if err == nil {
		res, err = memsync.Sync(ctx, o)
	}
	if err != nil {
		p := orket.Describe(coded(err))
		v.Error, v.Code = p.Msg, p.Code
		if when == "start" {
			r.Warn(fmt.Sprintf("memory.sync: %s: %s; the run goes on without it", p.Code, p.Msg))
		} else {
			r.Warn(fmt.Sprintf("memory.sync: %s: %s; this run's records stay in .orket until the next orket sync", p.Code, p.Msg))
		}
	} else {
		v.Remote, v.Received, v.Sent, v.Pushed = res.Remote, res.Received, res.Sent, res.Pushed
	}
	r.Record.Sync = append(r.Record.Sync, v)
}

// syncProblem is how Describe tells a sync's failures.
func syncProblem(err error) (orket.Problem, bool) {
	var (
		ue *memsync.UnreachableError
		ae *memsync.AuthError
		ce *memsync.ContentionError
		re *memsync.RefusedError
		ne *memsync.NoRemoteError
		fe *memsync.FormatError
		pe *memsync.ProtocolError
		de *memsync.DamagedError
	)
	switch {
	case errors.As(err, &de):
		name := de.Remote
		if name == "" {
			name = de.URL
		}
		hint := "from a clone whose memory is good, put the remote's ref back: git push " + name + " +refs/orket/memory:refs/orket/memory; this clone's memory is untouched"
		if de.Remote == "" && de.URL == "" {
			hint = "drop this clone's copy of the shared memory (git update-ref -d refs/orket/memory; the files in .orket stay) and run orket sync again"
		}
		return orket.Problem{Code: orket.ESyncDamaged, Msg: de.Error(), Hint: hint,
			Fields: map[string]any{"remote": de.Remote, "commit": de.Commit, "entry": de.What}}, true
	case errors.As(err, &ue):
		return orket.Problem{Code: orket.ESyncUnreachable, Msg: ue.Error(), Hint: "nothing changed on either side; check the remote's address and the network, then run orket sync again",
			Fields: map[string]any{"remote": ue.Remote, "url": ue.URL}}, true
	case errors.As(err, &ae):
		hint := ae.Hint
		if hint == "" {
			hint = "orket uses the credentials git would (ssh agent and keys, credential helpers): check that git fetch works with this remote"
		}
		return orket.Problem{Code: orket.ESyncAuth, Msg: ae.Error(), Hint: hint, Fields: map[string]any{"remote": ae.Remote, "url": ae.URL}}, true
	case errors.As(err, &re):
		return orket.Problem{Code: orket.ESyncRefused, Msg: re.Error(), Hint: "the local memory holds the merge; let this clone push refs/orket/memory to that remote (its hooks, protected or hidden refs), then run orket sync again",
			Fields: map[string]any{"remote": re.Remote, "url": re.URL}}, true
	case errors.As(err, &ce):
		return orket.Problem{Code: orket.ESyncContention, Msg: ce.Error(), Hint: "the local memory holds the merge; the next orket sync publishes it"}, true
	case errors.As(err, &ne):
		known := "none; add one with git remote add"
		if len(ne.Known) > 0 {
			known = strings.Join(ne.Known, ", ")
		}
		return orket.Problem{Code: orket.EUsage, Msg: ne.Error(), Hint: "name a remote (" + known + "), a URL or a path; memory.remote sets the default"}, true
	case errors.As(err, &pe):
		return orket.Problem{Code: orket.EUsage, Msg: pe.Error(), Hint: "name the remote by an ssh, https, git or file URL, a path, or a remote's name"}, true
	case errors.As(err, &fe):
		return orket.Problem{Code: orket.ERepoUnsupported, Msg: fe.Error(), Hint: "a newer orket wrote the shared memory: upgrade orket to sync with it"}, true
	}
	return orket.Problem{}, false
}

// An ImportRequest asks to merge JSON-lines files from elsewhere (a CI
// artifact, the origin project's lesson files) into the memory.
type ImportRequest struct {
	Repo   *txn.Repo
	Config *config.Config
	Files  []string
	Env    orket.Env
}

// An ImportResult is what an import added.
type ImportResult struct {
	Code orket.Code `json:"code"`
	*memsync.ImportResult
}

// Import appends to the local logs the records of files they do not
// hold yet, each to the log its schema names; the next sync shares them.
func Import(ctx context.Context, req ImportRequest) (_ *ImportResult, err error) {
	defer func() { err = coded(err) }()
	for _, f := range req.Files {
		if fi, err := os.Stat(f); err != nil || fi.IsDir() {
			return nil, orket.Errorf(orket.EUsage, "name JSON-lines files: a CI artifact's .orket/memory/*.jsonl, or the origin project's lesson files", "cannot import %s: not a readable file", f)
		}
	}
	o := syncOptions(req.Repo, req.Config, req.Env)
	if err := ensureOrketState(req.Repo); err != nil {
		return nil, err
	}
	res, err := memsync.Import(ctx, memsync.ImportOptions{OrketDir: o.OrketDir, Logs: o.Logs, Redact: o.Redact}, req.Files...)
	if err != nil {
		return nil, err
	}
	return &ImportResult{Code: orket.OK, ImportResult: res}, nil
}

// ensureOrketState makes the main work tree's .orket (and its
// .gitignore) when it is missing.
func ensureOrketState(repo *txn.Repo) error {
	if err := ensureLessonDir(repo); err != nil {
		return internal("create "+store.Dir, "check that the repository is writable", err)
	}
	return nil
}
