package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/inert"
	"github.com/orket/orket/learn"
)

// runPrinter writes orket run's human output on stderr: short lines a
// person can scan, and under -v the output of the edit and every step. On
// a terminal (not under CI) a live line shows the running steps with their
// elapsed time, and outcomes are coloured unless NO_COLOR or --no-color.
type runPrinter struct {
	o     *options
	w     io.Writer
	mu    sync.Mutex
	live  bool // draw the live elapsed-time line
	color bool

	running map[string]time.Time
	drawn   bool // the live line is on screen
	stop    chan struct{}
	now     func() time.Time
	every   time.Duration // how often the live line is redrawn
}

func newRunPrinter(o *options) *runPrinter {
	var w io.Writer = o.stderr
	if o.quiet {
		w = io.Discard
	}
	tty := o.stderrTTY && o.getenv("CI") == "" && o.getenv("TERM") != "dumb"
	p := &runPrinter{o: o, w: w,
		live: tty && !o.verbose && !o.quiet, color: tty && !o.noColor,
		running: map[string]time.Time{}, now: time.Now, every: 100 * time.Millisecond}
	// stderr is inert: only these sequences, orket's own, pass as they
	// are, and only when they are drawn at all (never under NO_COLOR or
	// off a terminal).
	if p.color {
		o.stderr.Allow(green, red, yellow, dim, reset)
	}
	if p.live {
		o.stderr.Allow(clearLine)
	}
	return p
}

const (
	green  = "\033[32m"
	red    = "\033[1;31m"
	yellow = "\033[33m"
	dim    = "\033[2m"
	reset  = "\033[0m"

	clearLine = "\r\033[K" // takes the live line away
)

func (p *runPrinter) paint(c, s string) string {
	if !p.color {
		return s
	}
	return c + s + reset
}

// line prints one line, keeping the live line below it.
func (p *runPrinter) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLive()
	fmt.Fprintf(p.w, format+"\n", args...)
	p.drawLive()
}

// failure prints a line about a failure: under -q too, where it is all a
// person (or a pre-push hook) gets to see of why.
func (p *runPrinter) failure(format string, args ...any) {
	if !p.o.quiet {
		p.line(format, args...)
		return
	}
	fmt.Fprintf(p.o.stderr, format+"\n", args...)
}

// outcome prints the run's outcome line: under -q too.
func (p *runPrinter) outcome(format string, args ...any) { p.failure(format, args...) }

func (p *runPrinter) clearLive() {
	if p.drawn {
		io.WriteString(p.w, clearLine)
		p.drawn = false
	}
}

func (p *runPrinter) drawLive() {
	if !p.live || len(p.running) == 0 {
		return
	}
	names := make([]string, 0, len(p.running))
	for n := range p.running {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %s", n, p.now().Sub(p.running[n]).Round(100*time.Millisecond)))
	}
	fmt.Fprintf(p.w, "  %s", p.paint(dim, "running: "+strings.Join(parts, ", ")))
	p.drawn = true
}

// started and finished keep the live line; a ticker redraws it.
func (p *runPrinter) started(name string) {
	if !p.live {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[name] = p.now()
	if p.stop == nil {
		p.stop = make(chan struct{})
		go p.tick(p.stop)
	}
	p.clearLive()
	p.drawLive()
}

func (p *runPrinter) finished(name string) {
	if !p.live {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, name)
	p.clearLive()
	if len(p.running) == 0 && p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
}

func (p *runPrinter) tick(stop chan struct{}) {
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.clearLive()
			p.drawLive()
			p.mu.Unlock()
		}
	}
}

// Phase is part of orket.Observer; the printer draws at the events, and
// says at the edit which files of the tree are orket's own output.
func (p *runPrinter) Phase(ph orket.Phase, rec *orket.Record) {
	switch {
	case ph == orket.PhaseEdit && len(rec.OwnOutput) > 0:
		p.line("  orket's own output, not part of the transaction: %s", abbreviate(rec.OwnOutput, 8))
	case ph == orket.PhaseBaseline && rec.Baseline.CachedFrom == "":
		p.line("  baseline: verifying the tree without the change (%s)", inert.Text(strings.Join(rec.Baseline.Steps, ", ")))
		p.started("baseline")
	}
}

// Baselined is part of orket.Observer: what the tree without the change
// said of each failed step, and what it cost.
func (p *runPrinter) Baselined(rec *orket.Record) {
	b := rec.Baseline
	p.finished("baseline")
	var said []string
	for _, s := range rec.FailedSteps() {
		switch s.Baseline {
		case "":
		case orket.BaselinePasses:
			said = append(said, s.Name+" passes without the change")
		case orket.BaselineFailsToo, orket.BaselineNewFailures:
			said = append(said, s.Name+" fails without the change too")
		default:
			said = append(said, s.Name+": "+s.Baseline)
		}
	}
	how := dur(b.DurationMS)
	if b.CachedFrom != "" {
		how = "cached from " + b.CachedFrom
	}
	p.line("  baseline: %s (%s)", inert.Text(strings.Join(said, "; ")), how)
}

// Planned prints the plan: the edit, the scope, the touch set and the
// steps (with their commands on a dry run, which runs none of them).
func (p *runPrinter) Planned(res *orket.Record) {
	req := res.Request
	what := "verify only"
	switch req.EditSource {
	case "command":
		what = "edit: " + req.Instruction
	case "patch":
		what = "edit: patch " + req.Patch
	case "worktree":
		what = "edit: the uncommitted changes"
	}
	scope := "scope: " + strings.Join(req.Scope, ", ")
	if len(req.Scope) == 0 {
		scope = "no scope"
	}
	p.line("orket run: %s; %s; profile %s", what, scope, req.Profile)
	if len(res.Plan.TouchSet) > 0 {
		label := "planned touch set"
		if req.EditSource == "none" {
			label = "changed"
			if req.Base != "" {
				label = "changed since " + req.Base
			}
		} else if req.EditSource == "worktree" {
			label = "uncommitted"
		}
		p.line("  %s (%d): %s", label, len(res.Plan.TouchSet), abbreviate(res.Plan.TouchSet, 8))
	}
	if len(res.Plan.Protect) > 0 && req.EditSource != "none" {
		allowed := ""
		if len(req.AllowProtected) > 0 {
			allowed = "; allowed this run: " + strings.Join(req.AllowProtected, ", ")
		}
		p.line("  protected (may be added to, not changed): %s%s", abbreviate(res.Plan.Protect, 8), allowed)
	}
	if req.DryRun {
		p.line("  steps it would run:")
		for _, s := range res.Plan.Steps {
			skip := ""
			if s.Skip != "" {
				skip = "  (skipped: " + skipText(s.Skip) + ")"
			}
			if s.Name == s.Command {
				p.line("    %s%s", s.Command, skip)
			} else {
				p.line("    %-12s %s%s", s.Name, s.Command, skip)
			}
		}
		return
	}
	var steps []string
	for _, s := range res.Plan.Steps {
		if s.Skip != "" {
			steps = append(steps, s.Name+" (skipped: "+s.Skip+")")
		} else {
			steps = append(steps, s.Name)
		}
	}
	p.line("  steps: %s", strings.Join(steps, ", "))
}

// abbreviate lists the first n names (file names an edit chose, so each
// one inert: a name holding an escape sequence or a line end is shown,
// never acted on).
func abbreviate(list []string, n int) string {
	more := ""
	if len(list) > n {
		list, more = list[:n], fmt.Sprintf(", and %d more", len(list)-n)
	}
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = inert.Text(s)
	}
	return strings.Join(names, ", ") + more
}

// EditStarted is part of orket.Observer.
func (p *runPrinter) EditStarted(res *orket.Record) {
	if sb := res.Sandbox; sb != nil && sb.Enforced && p.o.verbose {
		p.line("  %s", sb.Report.String())
	}
	p.line("  edit: running %s", res.Request.Instruction)
	p.started("edit")
}

// EditDone is part of orket.Observer.
func (p *runPrinter) EditDone(r *orket.StepResult) {
	p.finished("edit")
	if r.Status == orket.StepPassed {
		p.line("  edit: done (%s)", dur(r.DurationMS))
		return
	}
	if r.Interrupted {
		p.line("  edit: %s (%s)", p.paint(yellow, "interrupted"), dur(r.DurationMS))
		return
	}
	p.failure("  edit: %s, %s (%s)", p.paint(red, "FAILED"), r.ExitText(), dur(r.DurationMS))
	p.tail(r)
}

// Touched is part of orket.Observer.
func (p *runPrinter) Touched(res *orket.Record) {
	p.line("  touched (%d): %s", len(res.Plan.TouchSet), abbreviate(res.Plan.TouchSet, 8))
}

// StepOutput is part of orket.Observer: under -v, output streams.
func (p *runPrinter) StepOutput(name string) io.Writer {
	if p.o.verbose && !p.o.quiet {
		// Streamed as the tool wrote it, colours and all: -v asks for the
		// output a person would see running the step.
		return &prefixWriter{w: p.o.rawStderr, mu: &p.mu, prefix: "  | "}
	}
	return nil
}

// StepStarted is part of orket.Observer.
func (p *runPrinter) StepStarted(s config.Step) {
	if p.o.verbose {
		if s.Name == s.Command() {
			p.line("  running %s", s.Command()) // an unnamed step is named after its command
		} else {
			p.line("  %s: running %s", s.Name, s.Command())
		}
	}
	p.started(s.Name)
}

// Recorded is part of orket.Observer: the lessons the run recorded.
func (p *runPrinter) Recorded(res *orket.Record) {
	for _, l := range res.Lessons {
		tags := "[no tag]"
		if len(l.Tags) > 0 {
			tags = fmt.Sprint(l.Tags)
		}
		p.line("  lesson %.8s recorded for %s: %s %s", l.ID, inert.Text(l.Step), inert.Text(l.Title), inert.Text(tags))
	}
	for _, id := range res.FlakyLessons {
		p.line("  lesson %.8s is flaky: its step passed here on the tree content it failed on", id)
	}
	for _, l := range res.ResolvedLessons {
		p.line("  lesson %.8s: passes now that %s", l.ID, inert.Text(strings.Join(l.Changed, " and ")))
	}
	if res.Verdict != "" {
		p.line("  %s", verdictLine(res, p.paint))
	}
	proposalLines(res.Proposals, p.line)
}

// verdictLine is the run's verdict in one line: the verdict and score,
// its notes, and where the agent stands on the task.
func verdictLine(res *orket.Record, paint func(c, s string) string) string {
	colour := green
	switch res.Verdict {
	case "CONDITIONAL":
		colour = yellow
	case "REJECT", "ESCALATE":
		colour = red
	}
	s := fmt.Sprintf("verdict %s, score %d", paint(colour, res.Verdict), *res.Score)
	if len(res.VerdictNotes) > 0 {
		s += ": " + strings.Join(res.VerdictNotes, "; ")
	}
	if a := res.Attempt; a != nil && a.Rejections != nil {
		switch n := *a.Rejections; {
		case res.Verdict == "ESCALATE" && res.Escalation.Trigger == "red_baseline":
			s += fmt.Sprintf("; task %s fails without any change, run after run: escalated (%s)", quoteName(a.Task), res.Escalation.Report)
		case res.Verdict == "ESCALATE" && res.Escalation.Trigger == "sandbox_write":
			s += fmt.Sprintf("; task %s's edits write where the sandbox is closed, run after run: escalated (%s)", quoteName(a.Task), res.Escalation.Report)
		case res.Verdict == "ESCALATE":
			s += fmt.Sprintf("; %d rejections in a row at task %s: escalated (%s)", n, quoteName(a.Task), res.Escalation.Report)
		case n > 0 && a.Maximum > 0:
			s += fmt.Sprintf("; rejection %d of %d at task %s before escalation", n, a.Maximum, quoteName(a.Task))
		case n > 0:
			s += fmt.Sprintf("; rejection %d in a row at task %s", n, quoteName(a.Task))
		}
	}
	return s
}

// Warn is part of orket.Observer. Warnings are printed under -q too.
func (p *runPrinter) Warn(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLive()
	fmt.Fprintln(p.o.stderr, "orket: warning: "+msg)
	p.drawLive()
}

// StepDone is part of orket.Observer.
func (p *runPrinter) StepDone(r *orket.StepResult) {
	p.finished(r.Name)
	switch {
	case r.Status == orket.StepSkipped:
		p.line("  %-12s %s", r.Name, p.paint(yellow, "skipped ("+skipText(r.SkipReason)+")"))
	case r.Status == orket.StepPassed && r.Retries > 0:
		p.line("  %-12s %s (%s), on retry %d: flaky", r.Name, p.paint(yellow, "ok"), dur(r.DurationMS), r.Retries)
	case r.Status == orket.StepPassed:
		p.line("  %-12s %s (%s)", r.Name, p.paint(green, "ok"), dur(r.DurationMS))
	case !r.Required:
		p.line("  %-12s %s, %s (%s); optional, not failing the run", r.Name, p.paint(yellow, "failed"), r.ExitText(), dur(r.DurationMS))
		p.tail(r)
	case r.Interrupted:
		p.line("  %-12s %s (%s)", r.Name, p.paint(yellow, "interrupted"), dur(r.DurationMS))
	default:
		p.failure("  %-12s %s, %s (%s)", r.Name, p.paint(red, "FAILED"), r.ExitText(), dur(r.DurationMS))
		p.tail(r)
	}
}

func skipText(reason string) string {
	switch reason {
	case "when":
		return "when: no touched path matches"
	case "skip":
		return "--skip"
	case "fail_fast":
		return "stopped: another step failed"
	}
	return reason
}

// tail shows the end of a failing step's output (under -q too, for a
// required step).
func (p *runPrinter) tail(r *orket.StepResult) {
	if p.o.verbose && !p.o.quiet || r.OutputTail == "" {
		return // already streamed, or nothing to show
	}
	show := p.line
	if r.Required {
		show = p.failure
	}
	lines := strings.Split(strings.TrimRight(r.OutputTail, "\n"), "\n")
	if len(lines) > 20 {
		show("    ... (%d earlier lines in the run record)", len(lines)-20)
		lines = lines[len(lines)-20:]
	}
	for _, l := range lines {
		show("    | %s", inert.Block(strings.TrimSuffix(l, "\r"))) // one line: tabs kept
	}
}

func dur(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(10 * time.Millisecond).String()
}

// prefixWriter indents streamed output line by line.
type prefixWriter struct {
	w      io.Writer
	mu     *sync.Mutex
	prefix string
	mid    bool
}

func (pw *prefixWriter) Write(b []byte) (int, error) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	var out []byte
	for _, c := range b {
		if !pw.mid {
			out = append(out, pw.prefix...)
			pw.mid = true
		}
		out = append(out, c)
		if c == '\n' {
			pw.mid = false
		}
	}
	// A reader that went away (orket run -v | head) must not stop the
	// step's output from being drained: write errors are dropped.
	pw.w.Write(out)
	return len(b), nil
}

// stderrIsTerminal reports whether w is a terminal.
func stderrIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// Advised is part of orket.Observer: the advisories, why each is relevant
// under -v, and the preflight results.
func (p *runPrinter) Advised(res *orket.Record) {
	for _, r := range res.Reviewed {
		p.line("  reviewed %s from .orket/rejected into the agent memory: %s", inert.Text(r.File), clipRunes(r.Learning, 100))
	}
	p.advisories(res.Advisories, res.Preflight)
	if len(res.Feedback) > 0 {
		p.line("  earlier reviews:")
		for _, f := range res.Feedback {
			p.line("    %s %s", p.paint(yellow, "!"), clipRunes(f.Text, 160))
		}
	}
	if g := res.Guardrails; g != nil {
		if g.Version > 0 {
			s := fmt.Sprintf("  guardrails v%d of agent %s: %d rule(s), given as ORKET_GUARDRAILS (%s)", g.Version, g.Agent, g.Rules, g.File)
			if g.Synced {
				s += fmt.Sprintf("; approved by %s on %s", inert.Text(g.ApprovedBy), inert.Text(orDefault(g.Clone, "an unknown clone")))
			}
			if len(g.Demoted) > 0 {
				s += fmt.Sprintf("; %d demoted: %s", len(g.Demoted), inert.Text(strings.Join(g.Demoted, "; ")))
			}
			p.line("%s", s)
		}
		for _, u := range g.Unapproved {
			p.line("  %s guardrails v%d of agent %s is not approved, not given: %s (orket guardrails show %d)", p.paint(yellow, "!"), u.Version, g.Agent, inert.Text(u.Why), u.Version)
		}
	}
	if a := res.Attempt; a != nil && len(a.Previous) > 0 {
		last := a.Previous[len(a.Previous)-1]
		p.line("  attempt %s at task %s; the last one: %s, score %d: %s", attemptOf(a), quoteName(a.Task), last.Verdict, last.Score, clipRunes(last.Summary, 120))
	}
}

// attemptOf is "2 of 3", or "2" when escalation is off.
func attemptOf(a *orket.Attempt) string {
	if a.Maximum == 0 {
		return strconv.Itoa(a.Number)
	}
	return fmt.Sprintf("%d of %d", a.Number, a.Maximum)
}

// quoteName quotes a task or agent name when it has spaces or quotes.
func quoteName(s string) string {
	if strings.ContainsAny(s, " \t\"'") || s == "" {
		return strconv.Quote(s)
	}
	return inert.Text(s)
}

// advisories prints each advisory in one or two short lines (its title,
// the file its first error names; the first error itself), the preflight
// results, and one sentence saying what the failed checks do: stop the run
// (strict mode, preflight.Result.Stops), or nothing (advisory only).
func (p *runPrinter) advisories(adv []learn.Advisory, checks []learn.CheckResult) {
	if len(adv) > 0 {
		p.line("  advisories (past failures like this run):")
	}
	for _, a := range adv {
		times := "once"
		if a.Count > 1 {
			times = fmt.Sprintf("%d times", a.Count)
		}
		title := inert.Text(a.Title)
		if file := inert.Text(a.File); file != "" && !strings.Contains(title, file) {
			title += " in " + file
		}
		stale := ""
		if a.Stale {
			stale = "; stale: its step is not in this profile"
		}
		if a.Flaky {
			stale += "; flaky"
		}
		if a.PreExisting {
			stale += "; red without that change too"
		}
		p.line("    %s %s: seen %s, last %s (lesson %s, score %.2f%s)", p.paint(yellow, "!"), title, times, a.LastSeen.Format("2006-01-02"), learn.ShortID(a.ID), a.Score, stale)
		if first := inert.Text(a.FirstError); first != "" && first != inert.Text(a.Title) {
			p.line("      %s", clipRunes(first, 100))
		}
		if p.o.verbose {
			w := a.Why
			p.line("      why: %s %s, relevance %.2f, recency %.2f, stale weight %.1f", w.Evidence, learn.Inert(w.Detail), w.Relevance, w.Recency, w.StaleWeight)
			for _, s := range a.SuggestedActions {
				p.line("      - %s", inert.Text(s))
			}
		}
	}
	failed, stops, advisoryOnly, notRequired := 0, 0, 0, 0
	for _, c := range checks {
		state, note := p.paint(green, "ok"), ""
		if !c.OK {
			state = p.paint(red, "FAILED")
			failed++
		}
		switch {
		case c.Stops:
			stops++
		case !c.OK && c.AdvisoryOnly:
			advisoryOnly++
		case !c.OK && c.NotRequired != "":
			notRequired++
		}
		if c.AdvisoryOnly && !c.OK {
			note = "; advisory only: a stale or flaky lesson"
		}
		if c.NotRequired != "" {
			note = "; not required by this tree: " + inert.Text(c.NotRequired)
		}
		p.line("    preflight %s: %s (%s%s)", state, inert.Text(c.Detail), inert.Text(c.Source), note)
	}
	// Checks the tree does not require never stop a run either; they are
	// said apart, after the rest.
	failed -= notRequired
	switch {
	case stops > 0 && advisoryOnly > 0:
		p.line("    %d preflight check(s) failed; strict mode stops the run before anything is written (%d more, from stale or flaky lessons, advisory only)", stops, advisoryOnly)
	case stops > 0:
		p.line("    %d preflight check(s) failed; strict mode stops the run before anything is written", stops)
	case failed > 0 && failed == advisoryOnly:
		p.line("    %d preflight check(s) failed: advisory only, from stale or flaky lessons; they never stop a run", failed)
	case failed > 0:
		p.line("    %d preflight check(s) failed: advisory only; strict mode would stop the run", failed)
	}
	if notRequired > 0 {
		p.line("    %d preflight check(s) failed: not required by this tree; they do not stop a run", notRequired)
	}
}
