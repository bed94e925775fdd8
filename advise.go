package orket

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/orket/orket/config"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/preflight"
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
}

// Advice is what past lessons say about a run about to start.
type Advice struct {
	Advisories []lessons.Advisory
	Preflight  []preflight.Result
	Damaged    []lessons.Damaged // lines of the log that could not be read
	Err        error             // the log could not be read at all
}

// Advise scores past lessons against a run about to start (SPEC 5.3) and
// makes the preflight checks they suggest and the declared ones. Memory
// is advisory: nothing here changes the scope, the steps or the revert;
// an unreadable memory never stops a run (Err says why it was skipped).
func Advise(q AdviceQuery) Advice {
	var commands []string
	for _, s := range q.Profile.Steps {
		commands = append(commands, s.Command())
	}
	store := &lessons.Store{Path: LessonPath(q.Repo, q.Config)}
	adv, damaged, err := store.Advisories(lessons.Query{Command: "run", Scope: q.Scope, TouchSet: q.TouchSet,
		Commands: commands, Now: q.Now, HalfLife: q.Config.Lessons.HalfLife, TopK: q.Config.Lessons.TopK})
	if adv == nil {
		adv = []lessons.Advisory{}
	}
	return Advice{Advisories: adv, Damaged: damaged, Err: err,
		Preflight: runChecks(q.Repo, q.Config, adv, q.Getenv)}
}

// Failed returns the failed preflight checks, described.
func (a Advice) Failed() []string { return failedChecks(a.Preflight) }

// runChecks makes the declared checks and those of the advisories, each
// once.
func runChecks(r *txn.Repo, cfg *config.Config, adv []lessons.Advisory, getenv func(string) string) []preflight.Result {
	env := preflight.Env{Getenv: getenv, Root: r.Root}
	seen := map[preflight.Check]bool{}
	results := []preflight.Result{}
	add := func(c preflight.Check, source string) {
		if seen[c] || c.Validate() != nil {
			return
		}
		seen[c] = true
		res := preflight.Run(c, env)
		res.Source = source
		results = append(results, res)
	}
	for _, c := range cfg.Preflight.Checks {
		add(c, "orket.yaml")
	}
	for _, a := range adv {
		for _, c := range a.PreflightChecks {
			add(c, "lesson "+ShortID(a.ID))
		}
	}
	return results
}

func failedChecks(rs []preflight.Result) []string {
	var out []string
	for _, r := range rs {
		if !r.OK {
			out = append(out, r.Detail)
		}
	}
	return out
}

// ShortID is the first eight characters of an id, as people read it.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// LessonPath is the lesson log's absolute path.
func LessonPath(r *txn.Repo, cfg *config.Config) string {
	p := cfg.Lessons.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.Root, filepath.FromSlash(p))
	}
	return p
}

// AdvisoriesMarkdown is the file an edit command finds through
// ORKET_ADVISORIES: the run's advisories and preflight results.
func AdvisoriesMarkdown(rec *Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# orket advisories for run %s\n\nScope: %s. Verify profile: %s.\n\n", rec.RunID, strings.Join(rec.Request.Scope, ", "), rec.Request.Profile)
	if len(rec.Advisories) == 0 {
		b.WriteString("No past failures are relevant to this run.\n")
	}
	for i, a := range rec.Advisories {
		fmt.Fprintf(&b, "## %d. %s\n\n", i+1, a.Title)
		fmt.Fprintf(&b, "Seen %d time(s), last %s; the step `%s` failed", a.Count, a.LastSeen.Format("2006-01-02"), a.FailedCommand)
		if len(a.Tags) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(a.Tags, ", "))
		}
		b.WriteString(".\n")
		if a.FirstError != "" {
			fmt.Fprintf(&b, "First error: `%s`\n", a.FirstError)
		}
		for _, s := range a.SuggestedActions {
			fmt.Fprintf(&b, "- %s\n", s)
		}
		b.WriteString("\n")
	}
	for _, c := range rec.Preflight {
		state := "ok"
		if !c.OK {
			state = "FAILED"
		}
		fmt.Fprintf(&b, "- preflight %s: %s (%s)\n", state, c.Detail, c.Source)
	}
	return b.String()
}
