package main

import (
	"fmt"
	"time"

	"github.com/orket/orket/config"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/txn"
)

// advise scores past lessons against the run about to start (SPEC 5.3),
// runs the preflight checks they suggest and the declared ones, and prints
// both. Memory is advisory: nothing here changes the scope, the steps or
// the revert; only strict mode, in the caller, stops on a failed check.
func advise(o *options, r *txn.Repo, cfg *config.Config, prof *config.Resolved, res *runResult, out *runPrinter) error {
	var commands []string
	for _, s := range prof.Steps {
		commands = append(commands, s.Command())
	}
	store := &lessons.Store{Path: lessonPath(r, cfg)}
	adv, damaged, err := store.Advisories(lessons.Query{Command: "run", Scope: res.Request.Scope, TouchSet: res.Plan.TouchSet,
		Commands: commands, Now: time.Now(), HalfLife: cfg.Lessons.HalfLife, TopK: cfg.Lessons.TopK})
	if err != nil {
		// An unreadable memory never stops a run.
		fmt.Fprintf(o.stderr, "orket: warning: cannot read lessons: %v\n", err)
	}
	if len(damaged) > 0 && !o.quiet {
		fmt.Fprintf(o.stderr, "orket: warning: %s: skipped %d damaged line(s) (first: line %d)\n", cfg.Lessons.Path, len(damaged), damaged[0].Line)
	}
	if adv != nil {
		res.Advisories = adv
	}
	res.Preflight = runChecks(r, cfg, res.Advisories, o.getenv)
	out.advisories(res)
	return nil
}

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
			add(c, "lesson "+short(a.ID))
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

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func (p *runPrinter) advisories(res *runResult) {
	if len(res.Advisories) > 0 {
		p.line("  advisories (past failures like this run):")
	}
	for _, a := range res.Advisories {
		times := "once"
		if a.Count > 1 {
			times = fmt.Sprintf("%d times", a.Count)
		}
		p.line("    %s %s: seen %s, last %s (lesson %s, score %.2f)", p.paint(yellow, "!"), a.Title, times, a.LastSeen.Format("2006-01-02"), short(a.ID), a.Score)
		if p.o.verbose {
			w := a.Why
			p.line("      why: same command %.0f, scope overlap %.2f, touch overlap %.2f, same failed command %.0f, tag relevance %.2f, recency %.2f",
				w.SameCommand, w.ScopeOverlap, w.TouchIntersection, w.SameFailedCommand, w.TagRelevance, w.Recency)
			for _, s := range a.SuggestedActions {
				p.line("      - %s", s)
			}
		}
	}
	if len(res.Preflight) == 0 {
		return
	}
	var failed []string
	for _, c := range res.Preflight {
		state := p.paint(green, "ok")
		if !c.OK {
			state = p.paint(red, "FAILED")
			failed = append(failed, c.Detail)
		}
		p.line("    preflight %s: %s (%s)", state, c.Detail, c.Source)
	}
	if len(failed) > 0 {
		p.line("    %d preflight check(s) failed: advisory only; --strict-preflight stops the run", len(failed))
	}
}
