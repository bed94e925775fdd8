package learn

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/gitrepo"
	"github.com/orket/orket/internal/imports"
	"github.com/orket/orket/internal/inert"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/scope"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
)

// An AdviceQuery is what advisories are computed for: a scope, a touch
// set and a profile.
type AdviceQuery struct {
	Repo     *txn.Repo
	Config   *config.Config
	Profile  *config.Resolved
	Scope    []string
	TouchSet []string
	Getenv   func(string) string
	Now      time.Time
	// Strict: a failed preflight check stops the run (--strict-preflight,
	// ORKET_STRICT_PREFLIGHT=1); preflight.strict counts too. It only marks
	// the results that stop it (preflight.Result.Stops): the caller stops.
	Strict bool
}

// Advice is what past lessons say about a run about to start.
type Advice struct {
	Advisories []lessons.Advisory
	Preflight  []preflight.Result
	Damaged    []lessons.Damaged // lines of the log that could not be read
	Err        error             // the log could not be read at all
}

// Advise scores past lessons against a run about to start and makes the
// preflight checks they suggest and the declared ones. Memory is
// advisory: nothing here changes the scope, the steps or the revert; an
// unreadable memory never stops a run (Err says why it was skipped).
//
// Environment lessons are checks first: the checks of every current one
// are made (within CheckBudget), and only those whose checks fail, or
// that have none, are shown.
func Advise(q AdviceQuery) Advice {
	var commands []lessons.StepCommand
	for _, s := range q.Profile.Steps {
		commands = append(commands, lessons.StepCommand{Command: s.Command(), Dir: s.Dir})
	}
	env := preflight.Env{Getenv: q.Getenv, Root: q.Repo.Root, Dirs: commandDirs(q.Repo.Root, q.Profile.Steps)}
	ck := newChecker(env, CheckBudget)
	store := &lessons.Store{Path: LessonPath(q.Repo, q.Config)}
	var passing []lessons.Advisory
	adv, damaged, err := store.Advisories(lessons.Query{Scope: q.Scope, TouchSet: q.TouchSet,
		Commands: commands, Now: q.Now, HalfLife: q.Config.Lessons.HalfLife, TopK: q.Config.Lessons.TopK,
		Distinctive: distinctiveKinds(q.Repo), Covers: testImports(q.Repo), EnvFails: ck.fails, Passing: &passing})
	if adv == nil {
		adv = []lessons.Advisory{}
	}
	for i := range adv {
		adv[i].File = adviceFile(q.Repo.Root, adv[i])
	}
	return Advice{Advisories: adv, Damaged: damaged, Err: err,
		Preflight: runChecks(q.Config, append(adv, passing...), ck, q.Strict || q.Config.Preflight.Strict,
			func(needles []string) map[string]string { return treeEvidence(q.Repo, needles) })}
}

// adviceFile is the file an advisory is shown with: where its failure
// lives, else the file its first error names, relative to the root.
func adviceFile(root string, a lessons.Advisory) string {
	if a.Location != nil && len(a.Location.Files) > 0 {
		return a.Location.Files[0]
	}
	if filepath.IsAbs(a.File) {
		if rel, err := filepath.Rel(root, a.File); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return a.File
}

// CheckBudget bounds the time the checks of environment lessons take
// before a run: past it, a lesson whose checks were not made is taken to
// fail them (it is shown, and its checks are made with the shown
// advisories', at most lessons.top_k of them). The checks that pass are
// reported with the preflight results; their lessons are not shown.
const CheckBudget = 2 * time.Second

// A checker makes each preflight check once.
type checker struct {
	env      preflight.Env
	deadline time.Time
	made     map[preflight.Check]preflight.Result
}

func newChecker(env preflight.Env, budget time.Duration) *checker {
	return &checker{env: env, deadline: time.Now().Add(budget), made: map[preflight.Check]preflight.Result{}}
}

// run makes a check, or returns its result if it was made.
func (c *checker) run(ch preflight.Check) preflight.Result {
	if r, ok := c.made[ch]; ok {
		return r
	}
	r := preflight.Run(ch, c.env)
	c.made[ch] = r
	return r
}

// fails reports whether one of checks fails now, or the budget ran out
// before they could all be made.
func (c *checker) fails(checks []preflight.Check) bool {
	for _, ch := range checks {
		if _, ok := c.made[ch]; !ok && time.Now().After(c.deadline) {
			return true
		}
		if ch.Validate() == nil && !c.run(ch).OK {
			return true
		}
	}
	return false
}

// distinctiveKinds returns whether a kind of file (lessons.Kind) is in at
// most a quarter of the repository's directories that hold tracked files:
// touching one is evidence that a past failure about that kind is near.
// The index is read on the first question.
func distinctiveKinds(r *txn.Repo) func(kind string) bool {
	share := sync.OnceValue(func() map[string]float64 {
		entries, err := gitrepo.ReadIndex(r.GitDir)
		if err != nil {
			return nil
		}
		dirs := map[string]bool{}
		kinds := map[string]map[string]bool{}
		for _, e := range entries {
			dir, kind := path.Dir(e.Name), lessons.Kind(e.Name)
			dirs[dir] = true
			if kinds[kind] == nil {
				kinds[kind] = map[string]bool{}
			}
			kinds[kind][dir] = true
		}
		out := make(map[string]float64, len(kinds))
		for k, in := range kinds {
			out[k] = float64(len(in)) / float64(len(dirs))
		}
		return out
	})
	return func(kind string) bool {
		s, ok := share()[kind]
		return ok && s <= maxDistinctiveShare
	}
}

// testImports returns what a test file of the repository imports as the
// file is now (internal/imports), each file read once; a file that is not
// a regular one of at most maxImportRead bytes imports nothing, and past
// maxImportFiles files read, no further one is (scoring stays bounded
// whatever the memory holds).
func testImports(r *txn.Repo) func(file string) []string {
	read := map[string][]string{}
	return func(file string) []string {
		if got, ok := read[file]; ok || len(read) >= maxImportFiles {
			return got
		}
		read[file] = nil
		root, err := r.FS()
		if err != nil || !regularFile(root, file, maxImportRead) {
			return nil
		}
		src, err := root.ReadFile(file)
		if err != nil {
			return nil
		}
		read[file] = imports.Of(file, src, func(p string) bool { return regularFile(root, p, -1) })
		return read[file]
	}
}

// maxImportRead bounds a test file read for its imports, maxImportFiles
// how many are read for one run.
const (
	maxImportRead  = 1 << 20
	maxImportFiles = 64
)

// regularFile reports whether rel is a regular file of the tree, of at
// most max bytes (-1: any size).
func regularFile(root *fsroot.Root, rel string, max int64) bool {
	st, err := root.Lstat(rel)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && (max < 0 || st.Size <= max)
}

// maxDistinctiveShare is the largest share of directories a distinctive
// kind of file is found in.
const maxDistinctiveShare = 0.25

// Failed returns the failed preflight checks that fail a strict
// preflight, described; checks only stale or flaky lessons suggest, and
// those the tree does not require (no tracked file names what they are
// about), are not among them. It is the one rule of strict mode: orket run and orket preflight
// both stop on it.
func (a Advice) Failed() []string { return preflight.Failed(a.Preflight) }

// runChecks makes the declared checks and those of the advisories, each
// once: declared first, then those of current lessons, then those only
// stale lessons suggest (advisory only). A failed check of a current
// lesson is required only when the tree gives evidence for it (a tracked
// file names what it is about, found by evidence in one pass over the
// tree); a declared one always is. Under strict, a failed check that is
// neither advisory only nor not required is marked as stopping the run.
func runChecks(cfg *config.Config, adv []lessons.Advisory, ck *checker, strict bool, evidence func(needles []string) map[string]string) []preflight.Result {
	seen := map[preflight.Check]bool{}
	results := []preflight.Result{}
	add := func(c preflight.Check, source string, stale bool) {
		if seen[c] || c.Validate() != nil {
			return
		}
		seen[c] = true
		res := ck.run(c)
		res.Source, res.AdvisoryOnly = source, stale
		results = append(results, res)
	}
	for _, c := range cfg.Preflight.Checks {
		add(c, "orket.yaml", false)
	}
	declared := len(results)
	// Checks only stale or flaky lessons suggest come last, advisory
	// only: they never fail a strict preflight.
	for _, weak := range []bool{false, true} {
		for _, a := range adv {
			if (a.Stale || a.Flaky) != weak {
				continue
			}
			for _, c := range a.PreflightChecks {
				add(c, "lesson "+ShortID(a.ID), weak)
			}
		}
	}
	var needles []string
	for i := range results {
		if res := &results[i]; !res.OK && !res.AdvisoryOnly && i >= declared {
			if n, _ := evidenceNeedle(res.Check); n != "" {
				needles = append(needles, n)
			}
		}
	}
	var found map[string]string
	if len(needles) > 0 {
		found = evidence(needles)
	}
	for i := range results {
		res := &results[i]
		if res.OK || res.AdvisoryOnly {
			continue
		}
		if i < declared {
			res.RequiredBy = "orket.yaml"
		} else if n, absent := evidenceNeedle(res.Check); n != "" {
			if f, ok := found[n]; ok {
				res.RequiredBy = f
			} else {
				res.NotRequired = absent
			}
		}
		res.Stops = strict && res.NotRequired == ""
	}
	return results
}

// commandDirs are the directories besides PATH where a profile's steps
// find commands, as their runners do: node_modules/.bin of the root and of
// every step's dir (npm, npx and yarn put them on a script's PATH), and
// the entries of a PATH a step's env sets (relative to the step's dir;
// entries naming a variable, such as $PATH, are the inherited PATH).
func commandDirs(root string, steps []config.Step) []string {
	seen := map[string]bool{}
	var dirs []string
	add := func(d string) {
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	add(filepath.Join(root, "node_modules", ".bin"))
	for _, s := range steps {
		dir := filepath.Join(root, filepath.FromSlash(s.Dir))
		add(filepath.Join(dir, "node_modules", ".bin"))
		for _, e := range filepath.SplitList(s.Env["PATH"]) {
			if e == "" || strings.Contains(e, "$") {
				continue
			}
			if !filepath.IsAbs(e) {
				e = filepath.Join(dir, e)
			}
			add(filepath.Clean(e))
		}
	}
	return dirs
}

// ShortID is the first eight characters of an id, as people read it.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// LessonPath is the lesson log's absolute path: lessons.path, relative
// to the main work tree's root. Linked work trees of one repository (git
// worktree add, as parallel agents use) share the main tree's lesson log,
// so each starts with the repository's memory.
func LessonPath(r *txn.Repo, cfg *config.Config) string {
	p := cfg.Lessons.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(mainRoot(r), filepath.FromSlash(p))
	}
	return p
}

// ensureLessonDir makes sure the state directory of the work tree that
// holds the lesson log hides itself from git status (see ensureOrketDir):
// in a linked work tree the log is the main tree's, whose .orket may not
// exist yet. Call it before appending from a run.
func ensureLessonDir(r *txn.Repo) error {
	root := mainRoot(r)
	if root == r.Root {
		fs, err := r.FS()
		if err != nil {
			return err
		}
		return ensureOrketDir(fs)
	}
	fs, err := fsroot.Open(root)
	if err != nil {
		return err
	}
	defer fs.Close()
	return ensureOrketDir(fs)
}

// mainRoot is the root of the repository's main work tree: r.Root, unless
// r is a linked work tree of a repository whose common git directory is
// its main tree's .git (a bare repository's work trees have no main tree,
// and keep their own root).
func mainRoot(r *txn.Repo) string {
	if r.CommonDir == "" || r.GitDir == "" || filepath.Clean(r.CommonDir) == filepath.Clean(r.GitDir) ||
		filepath.Base(r.CommonDir) != ".git" {
		return r.Root
	}
	main := filepath.Dir(filepath.Clean(r.CommonDir))
	if fi, err := os.Stat(main); err != nil || !fi.IsDir() {
		return r.Root
	}
	return main
}

// AdvisoriesMarkdown is the file an edit command finds through
// ORKET_ADVISORIES: where the task stands, the run's advisories and
// preflight results, what earlier reviews said, the agent's guardrails
// for the scope and the agent memory.
func AdvisoriesMarkdown(rec *orket.Record, memory, guardrailsText string) string {
	var b strings.Builder
	// Every field is one inert line (a line end in a remote record never
	// starts a heading of its own); the guardrails and the memory are
	// inert blocks.
	clean := inert.Text
	fmt.Fprintf(&b, "# orket advisories for run %s\n\nScope: %s. Verify profile: %s.\n\n", rec.RunID, clean(strings.Join(rec.Request.Scope, ", ")), clean(rec.Request.Profile))
	if a := rec.Attempt; a != nil {
		writeAttempt(&b, a)
	}
	// What was refused or rejected over exactly what this run touches
	// comes first: it is the most specific.
	var exact, other []feedback.Advisory
	for _, f := range rec.Feedback {
		if f.Kind == feedback.AdvisoryRefusal || f.Kind == feedback.AdvisoryPath {
			exact = append(exact, f)
		} else {
			other = append(other, f)
		}
	}
	if len(exact) > 0 {
		b.WriteString("## Refused or rejected before\n\n")
		for _, f := range exact {
			fmt.Fprintf(&b, "- %s\n", clean(f.Text))
		}
		b.WriteString("\n")
	}
	if len(rec.Advisories) == 0 {
		b.WriteString("No past failures are relevant to this run.\n")
	}
	for i, a := range rec.Advisories {
		writeAdvisory(&b, i+1, a)
	}
	for _, c := range rec.Preflight {
		writePreflight(&b, c)
	}
	if len(other) > 0 {
		b.WriteString("\n## Earlier reviews\n\n")
		for _, f := range other {
			fmt.Fprintf(&b, "- %s\n", clean(f.Text))
		}
	}
	if g := rec.Guardrails; g != nil && g.Version > 0 && guardrailsText != "" {
		fmt.Fprintf(&b, "\n## Guardrails v%d of agent %s (%s), %s\n\n", g.Version, clean(g.Agent), clean(g.File), approvedBy(g))
		b.WriteString(guardrailsMarkdown(sectionsFor(inert.Block(guardrailsText), rec.Request.Scope)))
	}
	if memory != "" {
		b.WriteString("\n## Agent memory (" + store.RepoPath(store.MemoryFile) + ")\n\n")
		b.WriteString(strings.TrimRight(inert.Block(memory), "\n") + "\n")
	}
	return b.String()
}

// writeAttempt writes where the task stands: which attempt this is and
// the earlier attempts that were rejected.
func writeAttempt(b *strings.Builder, a *orket.Attempt) {
	clean := inert.Text
	fmt.Fprintf(b, "## Attempt %d at task %s (agent %s)\n\n", a.Number, clean(a.Task), clean(a.Agent))
	switch {
	case len(a.Previous) == 0:
		b.WriteString("No earlier attempt of this task was rejected.\n\n")
	case a.Maximum > 0:
		fmt.Fprintf(b, "The attempts below were rejected, in a row. At %d rejections the task goes to a person: this is attempt %d of %d.\n\n", a.Maximum, a.Number, a.Maximum)
	default:
		b.WriteString("The attempts below were rejected, in a row.\n\n")
	}
	for i, p := range a.Previous {
		fmt.Fprintf(b, "%d. run %s: %s, score %d", i+1, p.RunID, p.Verdict, p.Score)
		if p.FailedStep != "" {
			fmt.Fprintf(b, "; step `%s` failed", clean(p.FailedStep))
		}
		if len(p.Tags) > 0 {
			fmt.Fprintf(b, " (%s)", clean(strings.Join(p.Tags, ", ")))
		}
		fmt.Fprintf(b, ": %s\n", clean(p.Summary))
	}
	if len(a.Previous) > 0 {
		b.WriteString("\n")
	}
}

// writeAdvisory writes advisory number n: the failure, where and how
// often it was seen, its first error and file, and the suggested actions.
func writeAdvisory(b *strings.Builder, n int, a lessons.Advisory) {
	clean := inert.Text
	fmt.Fprintf(b, "## %d. %s\n\n", n, clean(a.Title))
	fmt.Fprintf(b, "Seen %d time(s), last %s; the step `%s` failed", a.Count, a.LastSeen.Format("2006-01-02"), clean(a.FailedCommand))
	if a.FailedDir != "" {
		fmt.Fprintf(b, " in `%s`", clean(a.FailedDir))
	}
	if len(a.Tags) > 0 {
		fmt.Fprintf(b, " (%s)", clean(strings.Join(a.Tags, ", ")))
	}
	b.WriteString(".\n")
	if a.Stale {
		b.WriteString("Stale: that command is not in this profile any more; its checks are advisory only.\n")
	}
	if a.PreExisting {
		b.WriteString("It failed without that run's change too: the failure was already there.\n")
	}
	if a.FirstError != "" {
		fmt.Fprintf(b, "First error: `%s`\n", clean(a.FirstError))
	}
	if a.File != "" {
		fmt.Fprintf(b, "File: `%s`\n", clean(a.File))
	}
	for _, s := range a.SuggestedActions {
		fmt.Fprintf(b, "- %s\n", clean(s))
	}
	b.WriteString("\n")
}

// writePreflight writes one preflight check's result.
func writePreflight(b *strings.Builder, c preflight.Result) {
	clean := inert.Text
	state := "ok"
	if !c.OK {
		state = "FAILED"
	}
	note := ""
	if c.AdvisoryOnly {
		note = "; advisory only"
	}
	if c.NotRequired != "" {
		note = "; not required by this tree: " + c.NotRequired
	}
	fmt.Fprintf(b, "- preflight %s: %s (%s%s)\n", state, clean(c.Detail), clean(c.Source), clean(note))
}

// approvedBy says who approved a guardrails version: the person, and
// the clone when it came by sync; signed when its signature was checked.
func approvedBy(g *orket.GuardrailsView) string {
	s := "approved by " + inert.Text(g.ApprovedBy)
	if g.Synced {
		s += " on " + inert.Text(orDefault(g.Clone, "an unknown clone")) + " (it came by orket sync)"
	}
	if g.Signed {
		s += ", signed"
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// A PreflightRequest asks what orket run would warn about, changing
// nothing (orket preflight).
type PreflightRequest struct {
	Repo    *txn.Repo
	Config  *config.Config
	Scope   []string // repository-relative; empty takes orket.yaml's
	Profile string   // "" is verify.default
	Base    string   // the touch set is the diff from it; "" the uncommitted change
	Touch   []string // paths the next edit declares it will change, added to the touch set
	Strict  bool     // a failed check is E_PREFLIGHT_FAILED (preflight.strict counts too)
	Env     orket.Env
}

// A PreflightResult is orket preflight's --json object.
type PreflightResult struct {
	Code       orket.Code    `json:"code"`
	Scope      []string      `json:"scope"`
	Profile    string        `json:"verify_profile"`
	TouchSet   []string      `json:"touch_set"`
	Advisories []Advisory    `json:"advisories"`
	Preflight  []CheckResult `json:"preflight"`
}

// Preflight computes the advisories for a scope and profile and runs
// their preflight checks and the declared ones. Under strict, a failed
// check is an *orket.PreflightFailedError, returned with the result.
func Preflight(req PreflightRequest) (*PreflightResult, error) {
	cfg := req.Config
	prof, err := cfg.Profile(req.Profile)
	if err != nil {
		return nil, err
	}
	scopes := req.Scope
	if len(scopes) == 0 {
		scopes = cfg.Scope
	}
	sc, err := scope.Parse(scopes)
	if err != nil {
		return nil, &orket.Error{Code: orket.EUsage, Err: err, Msg: err.Error(), Hint: "scopes are repository-relative directories or globs"}
	}
	touch, _, err := req.Repo.ChangedSince(req.Base)
	if err != nil {
		return nil, err
	}
	touch = union(touch, req.Touch)
	strict := req.Strict || cfg.Preflight.Strict
	a := Advise(AdviceQuery{Repo: req.Repo, Config: cfg, Profile: prof, Scope: sc.Patterns(), TouchSet: touch,
		Getenv: req.Env.Getenv, Now: req.Env.Now(), Strict: strict})
	if a.Err != nil {
		return nil, &orket.Error{Code: orket.EInternal, Err: a.Err, Msg: "read lessons: " + a.Err.Error(), Hint: "check " + cfg.Lessons.Path}
	}
	res := &PreflightResult{Code: orket.OK, Scope: append([]string{}, sc.Patterns()...), Profile: prof.Name, TouchSet: nonNil(touch),
		Advisories: a.Advisories, Preflight: a.Preflight}
	if failed := a.Failed(); strict && len(failed) > 0 {
		return res, &orket.PreflightFailedError{Failed: failed}
	}
	return res, nil
}

// union is a and the elements of b not in a, in order.
func union(a, b []string) []string {
	seen := map[string]bool{}
	for _, p := range a {
		seen[p] = true
	}
	for _, p := range b {
		if !seen[p] {
			seen[p] = true
			a = append(a, p)
		}
	}
	return a
}
