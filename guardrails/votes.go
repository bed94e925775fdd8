package guardrails

// Votes are the counters of the ExpeL paper: a guardrail line gains one
// each time a run that was given it avoids its failure, and loses one
// each time the failure recurs anyway. What a run was given is an
// Exposure, recorded when the run starts; what happened is an Outcome,
// known when its verdict is (and again when a reviewer rejects the
// run). A run votes at most once per line: each vote is a line of
// .orket/memory/votes.jsonl keyed by run and line, and the latest vote
// for a key (by time; a down vote on a tie) is the one that counts, so a
// run first counted as avoiding a review problem and then rejected for
// it counts as a recurrence. Logs of several clones merge as a union by
// record id.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orket/orket/store"
	"github.com/orket/orket/verdict"
)

// An Exposure is what a run was told before it started: the guardrails
// version it was given, the lines of it that apply to its scope, and the
// failures (folds) it was warned about, by lesson advisories or by those
// lines.
type Exposure struct {
	Schema  string    `json:"schema_version"`
	ID      string    `json:"id"` // "gx-" + run id
	RunID   string    `json:"run_id"`
	Agent   string    `json:"agent"`
	Time    time.Time `json:"time"`
	Version int       `json:"guardrails_version"` // 0: none
	Lines   []string  `json:"lines,omitempty"`    // ids of the guardrail lines that apply
	// Folds are the advised failures' keys without directory
	// (Fold.KeyNoDir), comparable with a failure known from an
	// evaluation alone.
	Folds []string `json:"folds,omitempty"`
}

// NewExposure builds a run's exposure: v is the guardrails version it is
// given (nil: none); a line applies when its section is Everywhere or
// overlaps the run's scope (one is a directory prefix of the other, up to
// the first glob character); advised are the folds of its lesson
// advisories (AdvisoryFold).
func NewExposure(runID, agent string, now time.Time, v *Version, scope []string, advised []Fold) *Exposure {
	x := &Exposure{Schema: store.ExposureSchema, ID: "gx-" + runID, RunID: runID, Agent: agent, Time: now.UTC()}
	seen := map[string]bool{}
	addFold := func(k string) {
		if k != "" && !seen[k] {
			seen[k] = true
			x.Folds = append(x.Folds, k)
		}
	}
	if v != nil {
		x.Version = v.Version
		for _, l := range v.ActiveLines() {
			if SectionApplies(l.Section, scope) {
				x.Lines = append(x.Lines, l.ID)
				addFold(l.FoldNoDir)
			}
		}
	}
	for _, f := range advised {
		addFold(f.KeyNoDir())
	}
	return x
}

// SectionApplies reports whether a guardrails section (a scope, or
// several joined by ", ") applies to a run's scope: Everywhere always; a
// run without a scope gets every section.
func SectionApplies(section string, scope []string) bool {
	if section == Everywhere || section == "" || len(scope) == 0 {
		return true
	}
	for _, a := range strings.Split(section, ", ") {
		pa := staticPrefix(a)
		for _, b := range scope {
			pb := staticPrefix(b)
			if pa == "" || pb == "" || pa == pb || strings.HasPrefix(pa, pb+"/") || strings.HasPrefix(pb, pa+"/") {
				return true
			}
		}
	}
	return false
}

// staticPrefix is a scope's leading directories before a glob character.
func staticPrefix(p string) string {
	p = strings.TrimPrefix(strings.TrimSuffix(p, "/"), "./")
	parts := strings.Split(p, "/")
	for i, c := range parts {
		if strings.ContainsAny(c, "*?[{") {
			return strings.Join(parts[:i], "/")
		}
	}
	return p
}

// An ExposureLog is .orket/memory/advised.jsonl.
type ExposureLog struct{ log *store.Log }

// OpenExposures returns the exposure log of the .orket directory.
func OpenExposures(orketDir string) *ExposureLog {
	return &ExposureLog{log: &store.Log{Path: filepath.Join(orketDir, filepath.FromSlash(store.ExposuresFile))}}
}

// Path returns the log's file.
func (l *ExposureLog) Path() string { return l.log.Path }

// Record appends an exposure.
func (l *ExposureLog) Record(x *Exposure) error {
	x.Schema = store.ExposureSchema
	if x.ID == "" {
		x.ID = "gx-" + x.RunID
	}
	return l.log.Append(x)
}

// Find returns the exposure of a run, or nil.
func (l *ExposureLog) Find(runID string) (*Exposure, error) {
	var found *Exposure
	q, _ := json.Marshal(runID)
	err := scanLog(l.log.Path, func(line []byte) {
		if found != nil || !bytes.Contains(line, q) {
			return
		}
		var x Exposure
		if json.Unmarshal(line, &x) == nil && x.RunID == runID {
			found = &x
		}
	})
	return found, err
}

// Prune applies retention to the exposure log as ProposalLog.Prune does
// (per agent, by age).
func (l *ExposureLog) Prune(maxPerAgent int, maxAge time.Duration, now time.Time) (int, error) {
	return prunePerAgent(l.log, maxPerAgent, maxAge, now)
}

// An Outcome is what happened to a run: its verdict, the failures it
// had (its lessons' signals, or its evaluation's), and the reviews of
// it (rejection and correction signals).
type Outcome struct {
	RunID   string
	Agent   string
	Time    time.Time
	Verdict string
	Signals []Signal // the run's signals: lessons, failed evaluation, rejections, corrections
}

// A Vote is one run's vote on one line.
type Vote struct {
	Schema  string    `json:"schema_version"`
	ID      string    `json:"id"`
	Key     string    `json:"key"` // run id "/" line id: one vote per run and line
	RunID   string    `json:"run_id"`
	Agent   string    `json:"agent"`
	Line    string    `json:"line"`
	Version int       `json:"guardrails_version"`
	Delta   int       `json:"delta"`  // +1 avoided, -1 recurred
	Reason  string    `json:"reason"` // avoided, recurred
	Time    time.Time `json:"time"`
}

// VoteRule documents VotesFor.
const VoteRule = `for each line the run was given (its exposure) that came from a cluster: -1 when one of the run's signals falls in the line's cluster (same fold; or the same review category in the same scope); else +1 when the verdict is APPROVE or CONDITIONAL (every required step passed, so the failure did not happen); else no vote (the run failed on something else, before the line could matter)`

// VotesFor applies VoteRule. v is the version the exposure names, or
// any version holding its lines (the lines' clusters are read from it).
func VotesFor(x *Exposure, v *Version, o Outcome) []Vote {
	if x == nil || v == nil {
		return nil
	}
	meta := map[string]Line{}
	for _, l := range v.Lines {
		meta[l.ID] = l
	}
	clusters, nodir := map[string]bool{}, map[string]bool{}
	for _, s := range o.Signals {
		for _, c := range clustersOf(s) {
			clusters[c.ID()] = true
			if c.Kind == KindFold && s.Fold.Dir == "" {
				nodir[c.FoldNoDir] = true
			}
		}
	}
	var out []Vote
	for _, id := range x.Lines {
		l, ok := meta[id]
		if !ok || l.Cluster == "" {
			continue
		}
		d, why := 0, ""
		switch {
		case clusters[l.Cluster] || l.FoldNoDir != "" && nodir[l.FoldNoDir]:
			d, why = -1, "recurred"
		case o.Verdict == verdict.Approve || o.Verdict == verdict.Conditional:
			d, why = 1, "avoided"
		default:
			continue
		}
		t := o.Time
		if t.IsZero() {
			t = time.Now()
		}
		vt := Vote{Schema: store.VoteSchema, Key: x.RunID + "/" + id, RunID: x.RunID, Agent: x.Agent, Line: id, Version: x.Version,
			Delta: d, Reason: why, Time: t.UTC()}
		vt.ID = hashKey("gv-", vt.Key+"\x00"+strconv.Itoa(d)+"\x00"+vt.Time.Format(time.RFC3339Nano))
		out = append(out, vt)
	}
	return out
}

// clustersOf names the clusters a signal belongs to (as Propose forms
// them).
func clustersOf(s Signal) []Cluster {
	var out []Cluster
	if !s.Fold.Empty() {
		out = append(out, Cluster{Kind: KindFold, Key: s.Fold.Key(), FoldNoDir: s.Fold.KeyNoDir()})
	}
	if s.Category != "" {
		out = append(out, Cluster{Kind: KindCategory, Key: hashKey("ck-", s.Category+"\x00"+scopeKey(s.Context.Scope))})
	}
	return out
}

// Vote records the votes of a run whose outcome is known (after its
// verdict; again after a rejection or correction of it, with those
// signals): the run's exposure is looked up, and the lines it was given
// vote by VoteRule. A run without an exposure votes nothing.
func (s *Store) Vote(o Outcome) ([]Vote, error) {
	x, err := OpenExposures(s.OrketDir).Find(o.RunID)
	if err != nil || x == nil || x.Version == 0 {
		return nil, err
	}
	v, err := s.Version(x.Agent, x.Version)
	if errors.Is(err, ErrNoVersion) {
		// Dropped since: the current version holds the lines' clusters
		// of those still there.
		v, err = s.Current(x.Agent)
	}
	if err != nil || v == nil {
		return nil, err
	}
	vs := VotesFor(x, v, o)
	return vs, OpenVotes(s.OrketDir).Record(vs...)
}

// A Tally is a line's votes.
type Tally struct {
	Up   int `json:"up"`
	Down int `json:"down"`
}

// Net is up votes less down votes.
func (t Tally) Net() int { return t.Up - t.Down }

// String gives the tally as "+3/-1".
func (t Tally) String() string { return fmt.Sprintf("+%d/-%d", t.Up, t.Down) }

// A VoteLog is .orket/memory/votes.jsonl.
type VoteLog struct{ log *store.Log }

// OpenVotes returns the vote log of the .orket directory.
func OpenVotes(orketDir string) *VoteLog {
	return &VoteLog{log: &store.Log{Path: filepath.Join(orketDir, filepath.FromSlash(store.VotesFile))}}
}

// Path returns the log's file.
func (l *VoteLog) Path() string { return l.log.Path }

// Record appends votes.
func (l *VoteLog) Record(vs ...Vote) error {
	if len(vs) == 0 {
		return nil
	}
	recs := make([]any, len(vs))
	for i := range vs {
		recs[i] = &vs[i]
	}
	return l.log.Append(recs...)
}

// Tally counts the votes per line (of one agent; "": all): for each run
// and line, the latest vote.
func (l *VoteLog) Tally(agent string) (map[string]Tally, error) {
	latest := map[string]Vote{}
	_, err := l.log.Each(func(line []byte) error {
		var v Vote
		if json.Unmarshal(line, &v) != nil || v.Key == "" || agent != "" && v.Agent != agent {
			return nil
		}
		cur, ok := latest[v.Key]
		if !ok || v.Time.After(cur.Time) || v.Time.Equal(cur.Time) && v.Delta < cur.Delta {
			latest[v.Key] = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]Tally{}
	keys := make([]string, 0, len(latest))
	for k := range latest {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := latest[k]
		t := out[v.Line]
		if v.Delta > 0 {
			t.Up++
		} else if v.Delta < 0 {
			t.Down++
		}
		out[v.Line] = t
	}
	return out, nil
}

// Prune applies retention to the vote log (per agent, by age). A line
// loses the votes pruned.
func (l *VoteLog) Prune(maxPerAgent int, maxAge time.Duration, now time.Time) (int, error) {
	return prunePerAgent(l.log, maxPerAgent, maxAge, now)
}

// prunePerAgent applies the retention rule (store.Retention) to a log
// whose lines have "agent" and "time": per agent and by age.
func prunePerAgent(log *store.Log, maxPerAgent int, maxAge time.Duration, now time.Time) (int, error) {
	return log.Prune(store.Retention{MaxPerAgent: maxPerAgent, MaxAge: maxAge}, now, store.AgentTime)
}
