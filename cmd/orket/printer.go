package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/orket/orket/config"
	"github.com/orket/orket/verify"
)

// runPrinter writes orket run's human output on stderr: short lines a
// person can scan, and under -v the output of the edit and every step.
type runPrinter struct {
	o        *options
	w        io.Writer
	mu       sync.Mutex
	editTail *verify.Tail
}

func newRunPrinter(o *options) *runPrinter {
	w := o.stderr
	if o.quiet {
		w = io.Discard
	}
	return &runPrinter{o: o, w: w, editTail: verify.NewTail(200, 32768)}
}

func (p *runPrinter) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
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
}

// liveEdit is where the edit command's output goes: its tail always, and
// stderr under -v.
func (p *runPrinter) liveEdit() io.Writer {
	if p.o.verbose && !p.o.quiet {
		return io.MultiWriter(p.editTail, &prefixWriter{w: p.w, mu: &p.mu, prefix: "  | "})
	}
	return p.editTail
}

func (p *runPrinter) editDone(r *verify.StepResult) {
	if r.Status == verify.Passed {
		p.line("  edit: done (%s)", dur(r.DurationMS))
		return
	}
	p.line("  edit: FAILED, %s (%s)", exitText(r), dur(r.DurationMS))
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
}

func (p *runPrinter) stepDone(r *verify.StepResult) {
	switch {
	case r.Status == verify.Skipped:
		p.line("  %-12s skipped (%s)", r.Name, r.SkipReason)
	case r.Status == verify.Passed:
		p.line("  %-12s ok (%s)", r.Name, dur(r.DurationMS))
	case !r.Required:
		p.line("  %-12s failed, %s (%s); optional, not failing the run", r.Name, exitText(r), dur(r.DurationMS))
	default:
		p.line("  %-12s FAILED, %s (%s)", r.Name, exitText(r), dur(r.DurationMS))
		p.tail(r)
	}
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
