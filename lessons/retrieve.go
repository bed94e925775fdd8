package lessons

import (
	"bytes"
	"math"
	"path"
	"sort"
	"time"

	"github.com/orket/orket/preflight"
)

// A Query describes the run about to start.
type Query struct {
	Command  string        // "run"
	Scope    []string      // the run's scope patterns
	TouchSet []string      // planned or changed paths; may be empty
	Commands []StepCommand // the verify profile's commands, each with its dir
	Now      time.Time
	HalfLife time.Duration
	TopK     int
}

// A StepCommand is a verify step's command line and the directory it runs
// in (repository-relative, "" for the root, as Verify.FailedDir): the
// same command in another directory is another command.
type StepCommand struct {
	Command string
	Dir     string
}

// EditStep is the failed_step of a lesson about the edit command itself
// (E_DRAFT_FAILURE): it is about the agent, not a verify step, so it is
// never stale.
const EditStep = "edit"

// An Advisory is a past failure judged relevant to a run: lessons that
// describe the same failure folded into one.
type Advisory struct {
	ID            string   `json:"id"` // the latest lesson's
	Title         string   `json:"title"`
	Tags          []string `json:"tags"`
	FailedStep    string   `json:"failed_step,omitempty"`
	FailedCommand string   `json:"failed_command"`
	FailedDir     string   `json:"failed_dir,omitempty"`
	FirstError    string   `json:"first_error,omitempty"`
	File          string   `json:"file,omitempty"` // the file the first error names
	// Stale: the failed command (in its dir) is not in the run's profile
	// (its step was removed or changed): the advisory weighs less and its
	// preflight checks never fail a strict preflight.
	Stale bool `json:"stale,omitempty"`
	// Flaky: the lessons are tagged flaky (the step failed, then passed on
	// the same tree): it weighs less and its checks never fail a strict
	// preflight either.
	Flaky bool `json:"flaky,omitempty"`
	// PreExisting: the latest lesson's step failed without its change
	// too (baseline fails_too): the failure was already there.
	PreExisting      bool              `json:"pre_existing,omitempty"`
	Count            int               `json:"count"`
	FirstSeen        time.Time         `json:"first_seen"`
	LastSeen         time.Time         `json:"last_seen"`
	Score            float64           `json:"score"`
	Why              Explain           `json:"why"`
	SuggestedActions []string          `json:"suggested_actions"`
	PreflightChecks  []preflight.Check `json:"preflight_checks"`
}

// Explain is a score's parts: each signal in 0..1, and the formula.
type Explain struct {
	SameCommand       float64 `json:"same_command"`
	ScopeOverlap      float64 `json:"scope_overlap"`
	TouchIntersection float64 `json:"touch_intersection"`
	SameFailedCommand float64 `json:"same_failed_command"`
	TagRelevance      float64 `json:"tag_relevance"`
	Recency           float64 `json:"recency"`
	StaleWeight       float64 `json:"stale_weight"`
	FlakyWeight       float64 `json:"flaky_weight"`
	Formula           string  `json:"formula"`
}

// Formula is the documented scoring formula.
const Formula = "score = recency * stale_weight * flaky_weight * (1*same_command + 2*scope_overlap + 3*touch_intersection + 2*same_failed_command + 2*tag_relevance) / 10; recency = 0.5^(age/half_life); stale_weight = 0.5 when the failed command (in its dir) is not in the profile, else 1; flaky_weight = 0.5 for a lesson tagged flaky, else 1"

// StaleWeight is the factor of a stale lesson's score: its failed command
// (in its dir) is not in the run's profile any more.
const StaleWeight = 0.5

// FlakyTag marks the lesson of a step that failed and then passed on the
// same tree (SPEC 8.2).
const FlakyTag = "flaky"

// FlakyWeight is the factor of a flaky lesson's score.
const FlakyWeight = 0.5

// MinScore is the least score an advisory needs to be shown.
const MinScore = 0.15

// envTags recur whatever the edit: the environment, not the code, failed.
var envTags = map[string]bool{"missing_env_var": true, "missing_dependency": true, "port_in_use": true,
	"db_connection_failed": true, "build_config_error": true}

// fold is an advisory being built, with where its latest lesson is.
type fold struct {
	Advisory
	offset, length int64
}

// Advisories scores the log against q and returns the top K advisories,
// best first, in a deterministic order. It reads the derived index (see
// index.go), never the output tails, and only the top K full records;
// memory grows with the number of distinct failures, not with the log.
func (s *Store) Advisories(q Query) ([]Advisory, []Damaged, error) {
	commands := map[string]bool{}
	for _, c := range q.Commands {
		commands[c.Dir+"\x00"+c.Command] = true
	}
	touch := map[string]bool{}
	touchDirs := map[string]bool{}
	for _, p := range q.TouchSet {
		touch[p] = true
		touchDirs[path.Dir(p)] = true
	}
	sc := &scorer{q: q, prefixes: prefixes(q.Scope), commands: commands, touch: touch, touchDirs: touchDirs, folds: map[string]*fold{}}
	damaged, unlock, err := s.eachEntry(sc.score)
	folds := sc.folds
	if err != nil {
		return nil, damaged, err
	}
	defer unlock()
	out := make([]*fold, 0, len(folds))
	for _, a := range folds {
		if a.Score >= MinScore {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Score != b.Score:
			return a.Score > b.Score
		case a.Count != b.Count:
			return a.Count > b.Count
		case !a.LastSeen.Equal(b.LastSeen):
			return a.LastSeen.After(b.LastSeen)
		}
		return a.offset < b.offset
	})
	if q.TopK >= 0 && len(out) > q.TopK {
		out = out[:q.TopK]
	}
	adv := make([]Advisory, 0, len(out))
	for _, f := range out {
		a := f.Advisory
		a.SuggestedActions, a.PreflightChecks = []string{}, []preflight.Check{}
		a.File = ErrorFile(a.FirstError)
		if l, err := s.readAt(f.offset, f.length); err == nil {
			a.ID, a.Title, a.PreExisting = l.ID, l.Advice.Title, l.Verify.Baseline == "fails_too"
			// The index holds the first error normalised, to fold; a
			// person reads it as the step printed it, and the file it,
			// or a line just after it, names.
			if first := StripANSI(l.Classification.FirstError); first != "" {
				a.FirstError = first
				a.File = ErrorFile(first)
				if a.File == "" {
					a.File = fileNear(StripANSI(l.Verify.OutputTail), first)
				}
			}
			if l.Advice.SuggestedActions != nil {
				a.SuggestedActions = l.Advice.SuggestedActions
			}
			if l.Advice.PreflightChecks != nil {
				a.PreflightChecks = l.Advice.PreflightChecks
			}
		}
		adv = append(adv, a)
	}
	return adv, damaged, nil
}

// scorer holds what scoring needs across entries, to spare allocations.
type scorer struct {
	q                          Query
	prefixes                   []string // the run's scope patterns' static prefixes
	commands, touch, touchDirs map[string]bool
	folds                      map[string]*fold
	key, cmd                   []byte
}

func (sc *scorer) score(l *rawEntry) {
	var e Explain
	if string(l.command) == sc.q.Command {
		e.SameCommand = 1
	}
	e.ScopeOverlap = scopeOverlap(sc.prefixes, l.scope)
	if len(sc.touch) > 0 && len(l.touch) > 0 {
		hits, near := 0, 0
		eachItem(l.touch, func(p []byte) {
			if sc.touch[string(p)] {
				hits++
			} else if i := bytes.LastIndexByte(p, '/'); i >= 0 && sc.touchDirs[string(p[:i])] || i < 0 && sc.touchDirs["."] {
				near++
			}
		})
		e.TouchIntersection = math.Min(1, (float64(hits)+0.5*float64(near))/float64(len(sc.touch)))
	}
	sc.cmd = appendUnesc(append(appendUnesc(sc.cmd[:0], l.failedDir), 0), l.failedCommand)
	if sc.commands[string(sc.cmd)] {
		e.SameFailedCommand = 1
	}
	// Relevant only with some evidence beyond being a run at all.
	if e.ScopeOverlap == 0 && e.TouchIntersection == 0 && e.SameFailedCommand == 0 {
		return
	}
	// A lesson about a command this profile no longer runs (there) is
	// stale: it weighs less. One without a failed command, or about the
	// edit command, is not about the profile at all.
	stale := e.SameFailedCommand == 0 && len(l.failedCommand) > 0 && string(l.failedStep) != EditStep
	e.StaleWeight = 1
	if stale {
		e.StaleWeight = StaleWeight
	}
	e.TagRelevance = 0.25
	e.FlakyWeight = 1
	flaky := false
	if len(l.tags) > 0 {
		e.TagRelevance = 0.5
		eachItem(l.tags, func(t []byte) {
			if envTags[string(t)] {
				e.TagRelevance = 1
			}
			if string(t) == FlakyTag {
				flaky = true
			}
		})
	}
	if flaky {
		e.FlakyWeight = FlakyWeight
	}
	created := time.Unix(0, l.created).UTC()
	age := sc.q.Now.Sub(created)
	if age < 0 {
		age = 0
	}
	e.Recency = 1
	if sc.q.HalfLife > 0 {
		e.Recency = math.Pow(0.5, float64(age)/float64(sc.q.HalfLife))
	}
	base := (1*e.SameCommand + 2*e.ScopeOverlap + 3*e.TouchIntersection + 2*e.SameFailedCommand + 2*e.TagRelevance) / 10
	s := round3(e.Recency * e.StaleWeight * e.FlakyWeight * base)
	// Lessons of one failure share a failed command (in its dir), tags and
	// first error.
	sc.key = append(append(append(append(append(append(append(sc.key[:0], l.failedDir...), 0), l.failedCommand...), 0), l.tags...), 0), l.firstError...)
	a := sc.folds[string(sc.key)]
	if a == nil {
		var tags []string
		eachItem(l.tags, func(t []byte) { tags = append(tags, item(t)) })
		sort.Strings(tags)
		if tags == nil {
			tags = []string{}
		}
		a = &fold{Advisory: Advisory{FailedStep: item(l.failedStep), FailedCommand: item(l.failedCommand), FailedDir: item(l.failedDir),
			Tags: tags, FirstError: unesc(string(l.firstError)), Stale: stale, Flaky: flaky,
			FirstSeen: created, LastSeen: created}, offset: l.offset, length: l.length}
		sc.folds[string(sc.key)] = a
	}
	a.Count++
	if created.Before(a.FirstSeen) {
		a.FirstSeen = created
	}
	// The latest lesson speaks for the fold; the best score ranks it.
	if !created.Before(a.LastSeen) {
		a.LastSeen = created
		a.offset, a.length = l.offset, l.length
	}
	if s > a.Score {
		e.Formula = Formula
		e.ScopeOverlap, e.TouchIntersection, e.Recency = round3(e.ScopeOverlap), round3(e.TouchIntersection), round3(e.Recency)
		a.Score, a.Why = s, e
	}
}

// scopeOverlap is the fraction of the run's scope patterns (given by
// their static prefixes) that overlap one of the lesson's (an escaped index
// field): equal, or one's directory part contains the other. It does not
// allocate.
func scopeOverlap(run []string, lesson []byte) float64 {
	if len(run) == 0 || len(lesson) == 0 {
		return 0
	}
	hit := 0
	for _, pa := range run {
		found := false
		eachItem(lesson, func(b []byte) {
			if found {
				return
			}
			pb := staticPrefixBytes(b)
			if string(pb) == pa || pa == "" || len(pb) == 0 ||
				len(pa) > len(pb) && pa[len(pb)] == '/' && pa[:len(pb)] == string(pb) ||
				len(pb) > len(pa) && pb[len(pa)] == '/' && string(pb[:len(pa)]) == pa {
				found = true
			}
		})
		if found {
			hit++
		}
	}
	return float64(hit) / float64(len(run))
}

// staticPrefixBytes is staticPrefix of an (escaped) index element; glob
// and escape characters never occur before the first glob segment of a
// real scope, so escaping does not change the answer.
func staticPrefixBytes(p []byte) []byte {
	end := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if bytes.ContainsAny(p[end:i], "*?[{") {
				break
			}
			if i == len(p) {
				return p
			}
			end = i + 1
			continue
		}
	}
	if end == 0 {
		return nil
	}
	return p[:end-1]
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// staticPrefix is a pattern's leading directories before any glob
// character: pkg/**/*.go -> pkg; pkg/api -> pkg/api; ** -> "".
func staticPrefix(p string) string { return string(staticPrefixBytes([]byte(p))) }

func prefixes(scope []string) []string {
	out := make([]string, len(scope))
	for i, p := range scope {
		out[i] = staticPrefix(p)
	}
	return out
}

// appendUnesc appends an escaped index field to dst, unescaped.
func appendUnesc(dst, field []byte) []byte {
	if bytes.IndexByte(field, '\\') < 0 {
		return append(dst, field...)
	}
	return append(dst, unesc(string(field))...)
}
