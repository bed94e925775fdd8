package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/orket/orket/config"
	"github.com/orket/orket/verify"
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
	w := o.stderr
	if o.quiet {
		w = io.Discard
	}
	tty := o.stderrTTY && o.getenv("CI") == "" && o.getenv("TERM") != "dumb"
	return &runPrinter{o: o, w: w,
		live: tty && !o.verbose && !o.quiet, color: tty && !o.noColor,
		running: map[string]time.Time{}, now: time.Now, every: 100 * time.Millisecond}
}

const (
	green  = "\033[32m"
	red    = "\033[1;31m"
	yellow = "\033[33m"
	dim    = "\033[2m"
	reset  = "\033[0m"
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

func (p *runPrinter) clearLive() {
	if p.drawn {
		io.WriteString(p.w, "\r\033[K")
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

func (p *runPrinter) plan(res *runResult) {
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

func abbreviate(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return strings.Join(list[:n], ", ") + fmt.Sprintf(", and %d more", len(list)-n)
}

func (p *runPrinter) editStart(res *runResult) {
	p.line("  edit: running %s", res.Request.Instruction)
	p.started("edit")
}

func (p *runPrinter) editDone(r *verify.StepResult) {
	p.finished("edit")
	if r.Status == verify.Passed {
		p.line("  edit: done (%s)", dur(r.DurationMS))
		return
	}
	p.line("  edit: %s, %s (%s)", p.paint(red, "FAILED"), exitText(r), dur(r.DurationMS))
	p.tail(r)
}

func (p *runPrinter) touched(res *runResult) {
	p.line("  touched (%d): %s", len(res.Plan.TouchSet), abbreviate(res.Plan.TouchSet, 8))
}

func (p *runPrinter) liveStep(name string) io.Writer {
	if p.o.verbose && !p.o.quiet {
		return &prefixWriter{w: p.w, mu: &p.mu, prefix: "  | "}
	}
	return nil
}

func (p *runPrinter) stepStart(s config.Step) {
	if p.o.verbose {
		p.line("  %s: running %s", s.Name, s.Command())
	}
	p.started(s.Name)
}

func (p *runPrinter) stepDone(r *verify.StepResult) {
	p.finished(r.Name)
	switch {
	case r.Status == verify.Skipped:
		p.line("  %-12s %s", r.Name, p.paint(yellow, "skipped ("+skipText(r.SkipReason)+")"))
	case r.Status == verify.Passed:
		p.line("  %-12s %s (%s)", r.Name, p.paint(green, "ok"), dur(r.DurationMS))
	case !r.Required:
		p.line("  %-12s %s, %s (%s); optional, not failing the run", r.Name, p.paint(yellow, "failed"), exitText(r), dur(r.DurationMS))
		p.tail(r)
	default:
		p.line("  %-12s %s, %s (%s)", r.Name, p.paint(red, "FAILED"), exitText(r), dur(r.DurationMS))
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

func (p *runPrinter) tail(r *verify.StepResult) {
	if p.o.verbose || r.OutputTail == "" {
		return // already streamed, or nothing to show
	}
	lines := strings.Split(strings.TrimRight(r.OutputTail, "\n"), "\n")
	if len(lines) > 20 {
		p.line("    ... (%d earlier lines in the run record)", len(lines)-20)
		lines = lines[len(lines)-20:]
	}
	for _, l := range lines {
		p.line("    | %s", l)
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
	_, err := pw.w.Write(out)
	return len(b), err
}

// stderrIsTerminal reports whether w is a terminal.
func stderrIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}
