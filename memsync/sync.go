package memsync

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage"

	"github.com/orket/orket/internal/flock"
	"github.com/orket/orket/internal/fsroot"
)

// Options of a sync.
type Options struct {
	// Repo is the local repository: the memory ref and its objects live
	// in its object store.
	Repo *git.Repository
	// OrketDir is the main work tree's .orket directory.
	OrketDir string
	// WorkTree is the directory relative remote paths and git's
	// credential helpers are resolved in; "" is OrketDir's parent.
	WorkTree string
	// Remote is a remote's name, a URL or a path; "" is "origin".
	Remote string
	// Pull fetches and merges into the local files only; otherwise the
	// merge is also pushed.
	Pull bool
	// Logs are the logs that travel; nil is DefaultLogs().
	Logs []Log
	// Redact is applied to every string of every record this clone sends
	// (and to the markdown that travels): orket's redactor's Redact, built
	// with the environment and orket.yaml's values. nil redacts the known
	// shapes of secrets only; nothing travels unredacted.
	Redact func(string) string
	// Retention bounds what is shared (and, as a prune would, the logs
	// the sync writes back).
	Retention Retention
	// MaxAttempts bounds the pushes tried when other clones push first
	// (default 8), with a randomised backoff between them.
	MaxAttempts int
	// Now is the clock (retention, commit times); nil is time.Now.
	Now func() time.Time
	// Auth says where credentials come from.
	Auth Auth
}

func (o *Options) workTree() string {
	if o.WorkTree != "" {
		return o.WorkTree
	}
	return filepath.Dir(filepath.Clean(o.OrketDir))
}

func (o *Options) logs() []Log {
	ls := o.Logs
	if ls == nil {
		ls = DefaultLogs()
	}
	out := make([]Log, len(ls))
	for i, l := range ls {
		if l.Path == "" {
			l.Path = filepath.Join(o.OrketDir, filepath.FromSlash(l.Name))
		}
		out[i] = l
	}
	return out
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// A Result says what a sync did.
type Result struct {
	Remote string `json:"remote"`
	URL    string `json:"url"`
	// Pushed: this sync pushed a commit. Published: the remote holds
	// everything this clone holds (false after a --pull that merged
	// local records the remote lacks).
	Pushed    bool `json:"pushed"`
	Published bool `json:"published"`
	// Commit is the memory commit the local files hold.
	Commit   string `json:"commit,omitempty"`
	Attempts int    `json:"attempts"`
	// Received counts records new to this clone; Sent, records new to
	// the remote (pushed, or to be pushed by a later sync after --pull).
	Received int                   `json:"received"`
	Sent     int                   `json:"sent"`
	Pruned   int                   `json:"pruned,omitempty"`
	Logs     map[string]*LogCounts `json:"logs"`
	// Memory is what happened to AGENT_MEMORY.md: "" (nothing new),
	// "received", "sent" or "merged".
	Memory string `json:"agent_memory,omitempty"`
	// Versions counts guardrail versions new to this clone.
	Versions int     `json:"guardrail_versions_received,omitempty"`
	Clashes  []Clash `json:"clashes,omitempty"`
	// Timings are where the time went, over every attempt.
	Timings Timings `json:"timings"`
}

// Timings of a sync, in milliseconds.
type Timings struct {
	Fetch float64 `json:"fetch_ms"`
	Merge float64 `json:"merge_ms"` // reading, merging, writing back
	Push  float64 `json:"push_ms"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// LogCounts are one log's counts.
type LogCounts struct {
	Received int `json:"received"`
	Sent     int `json:"sent"`
	Pruned   int `json:"pruned,omitempty"`
}

// Sync shares the memory with a remote: fetch its memory ref, merge it
// with the local files and the last synced memory, write the merge back
// into .orket, commit it on top of both, and (unless Pull) push it with a
// lease, fetching and merging again when another clone pushed first.
func Sync(ctx context.Context, o Options) (*Result, error) {
	if o.Repo == nil || o.OrketDir == "" {
		return nil, errors.New("memsync: Options.Repo and Options.OrketDir are required")
	}
	root, err := openOrketDir(o.OrketDir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", o.OrketDir, err)
	}
	defer root.Close()
	unlock, err := flock.Acquire(ctx, filepath.Join(o.OrketDir, filepath.FromSlash(lockFile)), flock.Mode{Exclusive: true, Wait: true})
	if err != nil {
		return nil, fmt.Errorf("wait for another sync of this clone: %w", err)
	}
	defer unlock()
	from, to, ep, err := openRemote(&o)
	if err != nil {
		return nil, err
	}
	s := &syncer{o: &o, logs: o.logs(), store: o.Repo.Storer, root: root, red: o.redactor(),
		res: &Result{Remote: ep.name, URL: displayURL(ep.fetchURL), Logs: map[string]*LogCounts{}}}
	max := o.MaxAttempts
	if max <= 0 {
		max = 8
	}
	for attempt := 1; ; attempt++ {
		s.res.Attempts = attempt
		local := s.localRef()
		t := time.Now()
		remoteHash, err := from.fetch(ctx, s.store, func() []plumbing.Hash { return s.haves(local) })
		s.res.Timings.Fetch += ms(time.Since(t))
		if err != nil {
			if !transient(err) {
				return s.res, err
			}
			if again, err := retryAfter(ctx, err, attempt, max, ep.name); !again {
				return s.res, err
			}
			continue
		}
		t = time.Now()
		next, err := s.merge(ctx, remoteHash)
		s.res.Timings.Merge += ms(time.Since(t))
		if err != nil {
			return s.res, err
		}
		s.res.Commit = next.String()
		if o.Pull || next == remoteHash {
			s.res.Published = next == remoteHash
			return s.res, nil
		}
		t = time.Now()
		err = to.push(ctx, s.store, remoteHash, next)
		s.res.Timings.Push += ms(time.Since(t))
		if err == nil {
			s.res.Pushed, s.res.Published = true, true
			return s.res, nil
		}
		if !errors.Is(err, errStale) && !transient(err) {
			return s.res, err
		}
		// The race lost, or the server hung up: fetch, merge, try again.
		if again, err := retryAfter(ctx, err, attempt, max, ep.name); !again {
			return s.res, err
		}
	}
}

// retryAfter decides whether a sync whose attempt (of maxAttempts)
// failed with err tries again. It waits a random backoff first and
// reports true; after the last attempt it reports false with the error
// to return, a ContentionError when the pushes kept losing the race to
// remote.
func retryAfter(ctx context.Context, err error, attempt, maxAttempts int, remote string) (bool, error) {
	if attempt >= maxAttempts {
		if errors.Is(err, errStale) {
			return false, &ContentionError{Remote: remote, Attempts: attempt}
		}
		return false, err
	}
	// Full jitter: clones that lost together do not retry together.
	d := time.Duration(rand.Int64N(int64(20*time.Millisecond) << min(attempt, 6)))
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-time.After(d):
	}
	return true, nil
}

// transient reports an error of a session cut short after it connected
// (the server hung up mid-protocol, as a busy server does): worth a new
// fetch and merge, unlike a remote that cannot be reached or refuses.
func transient(err error) bool {
	var ue *UnreachableError
	var ae *AuthError
	if errors.As(err, &ue) || errors.As(err, &ae) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	msg := err.Error()
	for _, s := range []string{"closing input", "EOF", "broken pipe", "connection reset", "sending upload-req", "sending haves", "sending done"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// syncer is one sync's state.
type syncer struct {
	o     *Options
	logs  []Log
	store storage.Storer
	objs  *objectLog // what a merge writes through (mergeOnce)
	root  *fsroot.Root
	red   func(string) string
	res   *Result
}

func (s *syncer) localRef() plumbing.Hash {
	ref, err := s.store.Reference(plumbing.ReferenceName(RefName))
	if err != nil || ref.Type() != plumbing.HashReference {
		return plumbing.ZeroHash
	}
	return ref.Hash()
}

// haves are the memory commits a fetch tells the remote this clone has:
// the local memory commit and its first parents (the remote's earlier
// states).
func (s *syncer) haves(c plumbing.Hash) []plumbing.Hash {
	var out []plumbing.Hash
	for i := 0; i < 32 && !c.IsZero(); i++ {
		out = append(out, c)
		ps, err := parentsOf(s.store, c)
		if err != nil || len(ps) == 0 {
			break
		}
		c = ps[0]
	}
	return out
}

func (s *syncer) counts(name string) *LogCounts {
	c := s.res.Logs[name]
	if c == nil {
		c = &LogCounts{}
		s.res.Logs[name] = c
	}
	return c
}
