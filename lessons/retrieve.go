package lessons

import (
	"bytes"
	"math"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/scope"
)

// A Query describes the run about to start.
type Query struct {
	Scope []string // the run's scope patterns
	// TouchSet is what the run changes, or declares it will (orket run
	// --touch); may be empty.
	TouchSet []string
	Commands []StepCommand // the verify profile's commands, each with its dir
	Now      time.Time
	HalfLife time.Duration
	TopK     int
	// Distinctive reports whether the files of a kind (see Kind) are rare
	// enough in the repository that touching one is evidence; nil: no
	// kind is.
	Distinctive func(kind string) bool
	// Covers returns the repository files a test file imports (see
	// internal/imports): a flaky test lives where what it imports does.
	// nil: only a test's directory and name say what it covers.
	Covers func(testFile string) []string
	// EnvFails reports whether an environment lesson's checks fail now
	// (one fails, or they could not all be made in time); nil: they are
	// taken to fail.
	EnvFails func(checks []preflight.Check) bool
	// Passing, if set, receives the environment advisories not shown
	// because their checks pass now, best first: their checks were made,
	// and a caller reports them.
	Passing *[]Advisory
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
// describe the same hazard folded into one (see FoldKey).
type Advisory struct {
	ID            string   `json:"id"` // the latest lesson's
	Title         string   `json:"title"`
	Tags          []string `json:"tags"`
	FailedStep    string   `json:"failed_step,omitempty"`
	FailedCommand string   `json:"failed_command"`
	FailedDir     string   `json:"failed_dir,omitempty"`
	// Cause is the line that says why (the latest lesson's); Location
	// where the failure lived.
	Cause    string    `json:"cause,omitempty"`
	Location *Location `json:"location,omitempty"`
	// FirstError is the first line that looked like an error, and File
	// the file it (or a line just after it) names.
	FirstError string `json:"first_error,omitempty"`
	File       string `json:"file,omitempty"`
	// Stale: the failed command (in its dir) is not in the run's profile
	// (its step was removed or changed): the advisory weighs less and its
	// preflight checks never fail a strict preflight.
	Stale bool `json:"stale,omitempty"`
	// Flaky: the lessons are tagged flaky (the step failed, then passed on
	// the same tree): its checks never fail a strict preflight.
	Flaky bool `json:"flaky,omitempty"`
	// PreExisting: the latest lesson's step failed without its change
	// too (baseline fails_too): the failure was already there.
	PreExisting bool `json:"pre_existing,omitempty"`
	// Places is how many directories the changes that met it were in.
	Places           int               `json:"places,omitempty"`
	Count            int               `json:"count"`
	FirstSeen        time.Time         `json:"first_seen"`
	LastSeen         time.Time         `json:"last_seen"`
	Score            float64           `json:"score"`
	Why              Explain           `json:"why"`
	SuggestedActions []string          `json:"suggested_actions"`
	PreflightChecks  []preflight.Check `json:"preflight_checks"`
}

// Explain is why an advisory was shown: the evidence it rests on, what
// it names, and the score's parts.
type Explain struct {
	Evidence    string  `json:"evidence"`         // one of the Evidence constants
	Detail      string  `json:"detail,omitempty"` // the file, kind, check or place it rests on
	Relevance   float64 `json:"relevance"`
	Recency     float64 `json:"recency"`
	StaleWeight float64 `json:"stale_weight"`
	Formula     string  `json:"formula"`
}

// The evidence an advisory rests on, strongest first. Sharing the failed
// command is none: one test step covers the whole repository.
const (
	// EvidenceEnvironment: an environment lesson whose check fails now.
	EvidenceEnvironment = "environment_check_fails"
	// EvidenceUnchecked: an environment lesson with no check to make.
	EvidenceUnchecked = "environment_unchecked"
	// EvidenceTouchedFile: the run touches a file of a rare kind that a
	// failing run touched or that the failure names.
	EvidenceTouchedFile = "touched_file"
	// EvidenceTouchedKind: the run touches a file of a kind rare in the
	// repository that failing runs touched.
	EvidenceTouchedKind = "touched_kind"
	// EvidenceLocation: a flaky or pre-existing failure lives in the
	// run's scope or beside what it touches, or its test imports what the
	// run touches.
	EvidenceLocation = "location"
	// EvidenceScope: the run declares no touch set, and its scope holds
	// what failing runs changed or where the failure lives.
	EvidenceScope = "scope"
	// EvidenceRed: a step of the run's profile failed without any change
	// (baseline fails_too), at no known place: the repository was red.
	EvidenceRed = "step_red_without_change"
)

// relevance is the weight of each kind of evidence.
var relevance = map[string]float64{EvidenceEnvironment: 1, EvidenceUnchecked: 0.8, EvidenceTouchedFile: 1,
	EvidenceTouchedKind: 0.7, EvidenceLocation: 0.6, EvidenceRed: 0.6, EvidenceScope: 0.5}

// Formula is the documented scoring formula.
const Formula = "score = recency * stale_weight * relevance; relevance = 1 (environment_check_fails: an environment lesson whose check fails now), " +
	"0.8 (environment_unchecked: an environment lesson with no check), 1 (touched_file: the run touches a file of a rare kind that a failing run touched or the failure names), " +
	"0.7 (touched_kind: the run touches a file of a kind rare in the repository that failing runs touched), " +
	"0.6 (location: a flaky or pre-existing failure lives in the run's scope or beside what it touches, or its test imports what the run touches), " +
	"0.6 (step_red_without_change: a step of the profile failed without any change, at no known place), " +
	"0.5 (scope: no touch set declared, and the run's scope holds what failing runs changed or where the failure lives), else 0 (not shown); " +
	"a change-caused failure met in two places or more with no rare kind is a convention, not advised; " +
	"recency = 0.5^(age/half_life); stale_weight = 0.5 when the failed command (in its dir) is not in the profile, else 1"

// StaleWeight is the factor of a stale lesson's score: its failed command
// (in its dir) is not in the run's profile any more.
const StaleWeight = 0.5

// FlakyTag marks the lesson of a step that failed and then passed on the
// same tree.
const FlakyTag = "flaky"

// MinScore is the least score an advisory needs to be shown.
const MinScore = 0.15

// envTags recur whatever the edit: the environment, not the code, failed.
var envTags = map[string]bool{"missing_env_var": true, "missing_dependency": true, "port_in_use": true,
	"db_connection_failed": true, "build_config_error": true}

// IsEnvTag reports whether a tag says the environment failed, not the
// code: its lessons are checks first.
func IsEnvTag(tag string) bool { return envTags[tag] }

// maxFoldPaths bounds the paths a fold remembers of its lessons.
const maxFoldPaths = 32

// fold is an advisory being built: what its lessons share and where
// they were met.
type fold struct {
	Advisory
	offset, length int64 // the latest lesson's record
	latest         int64 // its created_at, unix ns
	touch, files   []string
	checks         []preflight.Check
	env            bool
	passing        bool     // an environment fold whose checks pass now
	places         []string // the directories its lessons were met in
	// The latest lesson's fields, as the index holds them (escaped).
	rawStep, rawCommand, rawDir, rawFirst string
}

// Advisories scores the log against q and returns the top K advisories,
// best first, in a deterministic order. It reads the derived index (see
// index.go), never the output tails, and only the top K full records;
// memory grows with the number of distinct hazards, not with the log.
func (s *Store) Advisories(q Query) ([]Advisory, []Damaged, error) {
	sc := newScorer(q)
	damaged, unlock, err := s.eachEntry(sc.add)
	if err != nil {
		return nil, damaged, err
	}
	defer unlock()
	out := make([]*fold, 0, len(sc.folds))
	var passing []*fold
	for _, f := range sc.folds {
		switch {
		case sc.rank(f) >= MinScore:
			out = append(out, f)
		case f.passing:
			passing = append(passing, f)
		}
	}
	sortFolds(out)
	if q.TopK >= 0 && len(out) > q.TopK {
		out = out[:q.TopK]
	}
	adv := make([]Advisory, 0, len(out))
	for _, f := range out {
		adv = append(adv, s.complete(f))
	}
	if q.Passing != nil {
		sortFolds(passing)
		for _, f := range passing {
			*q.Passing = append(*q.Passing, s.complete(f))
		}
	}
	return adv, damaged, nil
}

// sortFolds orders folds best first, deterministically.
func sortFolds(fs []*fold) {
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
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
}

// complete fills an advisory from its latest lesson's record.
func (s *Store) complete(f *fold) Advisory {
	a := f.Advisory
	a.SuggestedActions, a.PreflightChecks = []string{}, []preflight.Check{}
	l, err := s.readAt(f.offset, f.length)
	if err != nil {
		return a
	}
	a.ID, a.Title, a.PreExisting = l.ID, l.Advice.Title, l.Verify.Baseline == "fails_too"
	a.Cause, a.Location = CauseOf(l), l.Classification.Location
	if a.Title == "" {
		a.Title = a.Cause
	}
	// The first error as the step printed it, and the file it, or a line
	// just after it, names.
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
	return a
}

// scorer holds what scoring needs across entries, to spare allocations.
type scorer struct {
	q        Query
	scope    scope.Scope // the run's scope
	prefixes []string    // its patterns' static prefixes
	commands map[string]bool
	touch    map[string]bool
	kinds    map[string]bool // the distinctive kinds of the run's touch set
	folds    map[string]*fold
	cmd      []byte
}

func newScorer(q Query) *scorer {
	sc := &scorer{q: q, prefixes: prefixes(q.Scope), commands: map[string]bool{}, touch: map[string]bool{},
		kinds: map[string]bool{}, folds: map[string]*fold{}}
	// A scope that does not parse takes in nothing: its prefixes still
	// count.
	sc.scope, _ = scope.Parse(q.Scope)
	for _, c := range q.Commands {
		sc.commands[c.Dir+"\x00"+c.Command] = true
	}
	for _, p := range q.TouchSet {
		sc.touch[p] = true
		if k := Kind(p); q.Distinctive != nil && q.Distinctive(k) {
			sc.kinds[k] = true
		}
	}
	return sc
}

// add folds one index entry in. What the fold key holds (the tags, an
// environment lesson's checks) is read once, when the fold is made; of
// the rest, the latest lesson's is kept, still escaped, copied only when
// it changes: most entries allocate nothing.
func (sc *scorer) add(l *rawEntry) {
	f := sc.folds[string(l.fold)]
	created := l.created
	if f == nil {
		f = &fold{latest: math.MinInt64}
		f.Tags = []string{}
		eachItem(l.tags, func(t []byte) {
			tag := item(t)
			f.Tags = append(f.Tags, tag)
			f.Flaky = f.Flaky || tag == FlakyTag
			f.env = f.env || envTags[tag]
		})
		sort.Strings(f.Tags)
		// A lesson with checks is the environment's whatever its tags:
		// its checks are what it is about (see FoldCause).
		eachItem(l.checks, func(b []byte) {
			if c, err := classify.ParseCheck(item(b)); err == nil {
				f.checks = append(f.checks, c)
			}
		})
		f.env = f.env || len(f.checks) > 0
		f.Stale = true
		f.FirstSeen = time.Unix(0, created).UTC()
		sc.folds[string(l.fold)] = f
	}
	f.Count++
	if t := time.Unix(0, created).UTC(); t.Before(f.FirstSeen) {
		f.FirstSeen = t
	}
	// A lesson about a command this profile no longer runs (there) is
	// stale; the fold is while all its lessons are. One about the edit
	// command is about the agent, never stale.
	if f.Stale {
		sc.cmd = appendUnesc(append(appendUnesc(sc.cmd[:0], l.failedDir), 0), l.failedCommand)
		if sc.commands[string(sc.cmd)] || len(l.failedCommand) == 0 || string(l.failedStep) == EditStep {
			f.Stale = false
		}
	}
	eachItem(l.touch, func(p []byte) { f.touch = addPath(f.touch, p) })
	eachItem(l.files, func(p []byte) { f.files = addPath(f.files, p) })
	// Where this lesson was met: the directory of the first file its
	// failure names, else of the first path its change touched.
	place := firstItem(l.files)
	if place == nil {
		place = firstItem(l.touch)
	}
	if place != nil {
		if i := bytes.LastIndexByte(place, '/'); i >= 0 {
			place = place[:i]
		} else {
			place = nil
		}
		f.places = addPath(f.places, place)
	}
	// The latest lesson speaks for the fold.
	if created < f.latest {
		return
	}
	f.latest, f.offset, f.length = created, l.offset, l.length
	f.PreExisting = string(l.baseline) == "fails_too"
	for _, field := range []struct {
		dst *string
		src []byte
	}{{&f.rawStep, l.failedStep}, {&f.rawCommand, l.failedCommand}, {&f.rawDir, l.failedDir}, {&f.rawFirst, l.firstError}} {
		if *field.dst != string(field.src) {
			*field.dst = string(field.src)
		}
	}
}

// addPath adds an (escaped) path to a bounded set.
func addPath(set []string, p []byte) []string {
	if len(set) >= maxFoldPaths {
		return set
	}
	for _, s := range set {
		if s == string(p) {
			return set
		}
	}
	return append(set, item(p))
}

// rank scores a fold: its evidence, its age and whether it is stale.
func (sc *scorer) rank(f *fold) float64 {
	f.LastSeen = time.Unix(0, f.latest).UTC()
	f.FailedStep, f.FailedCommand, f.FailedDir = unesc(f.rawStep), unesc(f.rawCommand), unesc(f.rawDir)
	f.FirstError = unesc(f.rawFirst)
	evidence, detail := sc.evidence(f)
	f.Places = len(f.places)
	if evidence == "" {
		return 0
	}
	e := Explain{Evidence: evidence, Detail: detail, Relevance: relevance[evidence], Recency: 1, StaleWeight: 1, Formula: Formula}
	if f.Stale {
		e.StaleWeight = StaleWeight
	}
	if sc.q.HalfLife > 0 {
		age := sc.q.Now.Sub(f.LastSeen)
		if age < 0 {
			age = 0
		}
		e.Recency = round3(math.Pow(0.5, float64(age)/float64(sc.q.HalfLife)))
	}
	f.Score, f.Why = round3(e.Recency*e.StaleWeight*e.Relevance), e
	return f.Score
}

// evidence is what makes a fold relevant to the run, and what it names;
// "" when nothing does.
func (sc *scorer) evidence(f *fold) (string, string) {
	switch {
	case f.env:
		// Environments are repository-wide: no scope, only the check.
		if len(f.checks) == 0 {
			return EvidenceUnchecked, ""
		}
		if sc.q.EnvFails == nil || sc.q.EnvFails(f.checks) {
			return EvidenceEnvironment, f.checks[0].String()
		}
		f.passing = true
		return "", ""
	case f.Flaky || f.PreExisting:
		// Not caused by a change: only where it lives counts; a step red
		// at no known place is red for every run of it.
		if ev, p := sc.located(f.files); ev != "" {
			return ev, p
		}
		if f.PreExisting && !f.Flaky && !f.Stale && len(f.files) == 0 {
			return EvidenceRed, f.FailedCommand
		}
		return "", ""
	}
	// The same file again counts when it is of a rare kind (a schema, a
	// generator's input): a common source file is changed for every
	// reason, and most changes to it meet none of its past failures.
	for _, group := range [][]string{f.files, f.touch} {
		for _, p := range group {
			if sc.touch[p] && sc.kinds[Kind(p)] {
				return EvidenceTouchedFile, p
			}
		}
	}
	distinct := ""
	for _, p := range f.touch {
		if k := Kind(p); sc.kinds[k] {
			distinct = k
			break
		}
	}
	switch {
	case distinct != "":
		return EvidenceTouchedKind, distinct
	case len(f.places) >= 2 && !sc.anyDistinctive(f.touch):
		// A convention: met in several places, about no kind of file.
		return "", ""
	case len(sc.q.TouchSet) == 0:
		if ev, p := sc.located(f.files); ev != "" {
			return EvidenceScope, p
		}
		if ev, p := sc.located(f.touch); ev != "" {
			return EvidenceScope, p
		}
	}
	return "", ""
}

// anyDistinctive reports whether one of paths is of a distinctive kind.
func (sc *scorer) anyDistinctive(paths []string) bool {
	if sc.q.Distinctive == nil {
		return false
	}
	for _, p := range paths {
		if sc.q.Distinctive(Kind(p)) {
			return true
		}
	}
	return false
}

// located returns EvidenceLocation and the first of paths that lies in
// the run's scope or in a directory the run touches, or that is a test
// of what the run's scope or touch set names (tests/test_models.py and
// invoice/models).
func (sc *scorer) located(paths []string) (string, string) {
	for _, p := range paths {
		dir := path.Dir(p)
		subject := testSubject(p)
		// A directory of tests (tests/, test/, __tests__/) holds the tests
		// of everything: being beside one there says nothing.
		beside := !testDirs[path.Base(dir)]
		for t := range sc.touch {
			if beside && path.Dir(t) == dir || subject != "" && hasSegment(t, subject) {
				return EvidenceLocation, p
			}
		}
		for _, pa := range sc.prefixes {
			if subject != "" && hasSegment(pa, subject) {
				return EvidenceLocation, p
			}
		}
		if sc.scope.Contains(p) {
			return EvidenceLocation, p
		}
		for _, pa := range sc.prefixes {
			// A scope inside the failure's directory (pkg/models/sub of
			// pkg/models/x_test.go) works where it lives.
			if pa != "" && dir != "." && strings.HasPrefix(pa, dir+"/") {
				return EvidenceLocation, p
			}
		}
		if sc.q.Covers != nil && len(sc.touch) > 0 {
			// A test is about what it imports (test/infra.test.js and
			// src/notify/mailer.js).
			for _, c := range sc.q.Covers(p) {
				if sc.touch[c] {
					return EvidenceLocation, p
				}
			}
		}
	}
	return "", ""
}

// firstItem is the first element of an escaped index list, nil if none.
func firstItem(list []byte) []byte {
	if len(list) == 0 {
		return nil
	}
	if i := bytes.IndexByte(list, 0x1f); i >= 0 {
		return list[:i]
	}
	return list
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

// testDirs are the names of directories that hold a project's tests.
var testDirs = map[string]bool{"tests": true, "test": true, "__tests__": true, "spec": true, "testing": true}

// testSubject is what a test file is named after: "models" for
// tests/test_models.py, models_test.go, test/models.test.js or
// models.spec.ts; "" for a file that is not a test.
func testSubject(p string) string {
	base := path.Base(p)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base, p = base[:i], base[i:] // p: what follows the stem
	} else {
		p = ""
	}
	switch {
	case strings.HasPrefix(base, "test_"):
		return strings.TrimPrefix(base, "test_")
	case strings.HasSuffix(base, "_test"):
		return strings.TrimSuffix(base, "_test")
	case strings.HasPrefix(p, ".test.") || strings.HasPrefix(p, ".spec."):
		return base
	}
	return ""
}

// hasSegment reports whether a slash-separated path has name as one of
// its segments (or a segment's stem: models.py).
func hasSegment(p, name string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == name || strings.TrimSuffix(seg, path.Ext(seg)) == name {
			return true
		}
	}
	return false
}
