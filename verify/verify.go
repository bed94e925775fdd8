// Package verify runs verify profiles: each step in its own process group
// (and its own contain.Group, which also holds descendants that leave the
// process group), its output streamed and kept as a bounded tail, and
// every process it started stopped when the step ends, times out or is
// interrupted.
package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/contain"
	"github.com/orket/orket/redact"
)

// DefaultGrace is how long a stopped step's process group has between
// SIGTERM and SIGKILL.
const DefaultGrace = 5 * time.Second

// Step statuses.
const (
	Passed  = "passed"
	Failed  = "failed"
	Skipped = "skipped"
)

// A StepResult is what running (or skipping) one step gave.
type StepResult struct {
	Name        string `json:"name"`
	Command     string `json:"command"`
	Dir         string `json:"dir,omitempty"`
	Required    bool   `json:"required"`
	Status      string `json:"status"`
	SkipReason  string `json:"skip_reason,omitempty"` // "when" or "skip"
	ExitCode    int    `json:"exit_code"`
	Signal      string `json:"signal,omitempty"`
	TimedOut    bool   `json:"timed_out"`
	Interrupted bool   `json:"interrupted,omitempty"`
	DurationMS  int64  `json:"duration_ms"`
	OutputTail  string `json:"output_tail"` // redacted, when Options.Redactor is set
	OutputBytes int64  `json:"output_bytes"`
	// RawTail is the same tail as the step printed it, secrets included:
	// for classifying in memory, never stored.
	RawTail string `json:"-"`
	// Retries is how many times the step ran again after failing (retry:
	// in orket.yaml); a passed step with retries is flaky.
	Retries int `json:"retries,omitempty"`
	// FirstFailure is the output tail of the first failing attempt of a
	// step that then passed (redacted like OutputTail).
	FirstFailure string `json:"first_failure,omitempty"`
	// Baseline says how the step did when run again on the tree without
	// the change, after it failed with it: "fails_too" (the failure is
	// not the change's), "passes", or why it was not run again.
	Baseline string `json:"baseline,omitempty"`
	// BaselineNew is, for a step that fails without the change too, the
	// first error line the change adds (its failure is then the change's
	// as well: Baseline is NewFailures).
	BaselineNew string `json:"baseline_new_failure,omitempty"`
}

// Baseline outcomes.
const (
	FailsToo    = "fails_too"
	Passes      = "passes"
	NewFailures = "new_failures" // fails without the change too, but the change adds failures
)

// FailedRequired reports whether a step failed and its failure fails the run.
func (r *StepResult) FailedRequired() bool { return r.Status == Failed && r.Required }

// ExitText says how a step ended: exit 1, timed out after 5s, killed by
// SIGKILL.
func (r *StepResult) ExitText() string {
	switch {
	case r.TimedOut:
		return fmt.Sprintf("timed out after %s", time.Duration(r.DurationMS)*time.Millisecond)
	case r.Signal != "":
		return "killed by " + r.Signal
	}
	return fmt.Sprintf("exit %d", r.ExitCode)
}

// Options say how to run a profile.
type Options struct {
	Root     string                      // repository root
	Env      []string                    // the whole environment of a step, before its own env
	TouchSet []string                    // for when globs
	Skip     map[string]bool             // step names to skip
	Tail     config.Tail                 // output caps
	Output   func(name string) io.Writer // live output of a step (nil: none)
	Start    func(s config.Step)         // called as a step starts
	Done     func(r *StepResult)         // called as a step ends, in declared order
	Grace    time.Duration               // SIGTERM to SIGKILL; 0 is DefaultGrace
	// Group, if set, holds every process of every step: each step runs in
	// a group of its own inside it, stopped when the step ends.
	Group *contain.Group
	// Prepare, if set, is applied to each command before it starts (the
	// kernel sandbox of an edit command); its error fails the step
	// without running it.
	Prepare func(*exec.Cmd) error
	// Redactor, if set, redacts a step's output as it streams, before the
	// tail keeps the end of it (so a cut never lets a secret through), with
	// the values of the step's own env: on top.
	Redactor *redact.Redactor
}

var stepSeq atomic.Int64

// Run runs a resolved profile and returns one result per step, in declared
// order. It stops at the first failing required step unless the profile
// says fail_fast: false; steps not reached are not reported. A cancelled
// ctx stops the running steps (their results say interrupted).
func Run(ctx context.Context, p *config.Resolved, o Options) []*StepResult {
	results := make([]*StepResult, len(p.Steps))
	for i, s := range p.Steps {
		if reason := skipReason(s, o); reason != "" {
			results[i] = &StepResult{Name: s.Name, Command: s.Command(), Dir: s.Dir, Required: s.Required, Status: Skipped, SkipReason: reason}
		}
	}
	if p.Parallel {
		return runParallel(ctx, p, o, results)
	}
	var out []*StepResult
	for i, s := range p.Steps {
		r := results[i]
		if r == nil {
			if ctx.Err() != nil {
				break
			}
			if o.Start != nil {
				o.Start(s)
			}
			var live io.Writer
			if o.Output != nil {
				live = o.Output(s.Name)
			}
			r = RunStep(ctx, s, o, live)
		}
		out = append(out, r)
		if o.Done != nil {
			o.Done(r)
		}
		if r.FailedRequired() && (p.FailFast || r.Interrupted) {
			break
		}
	}
	return out
}

func runParallel(parent context.Context, p *config.Resolved, o Options, results []*StepResult) []*StepResult {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var wg sync.WaitGroup
	done := make([]chan struct{}, len(p.Steps))
	spools := make([]*os.File, len(p.Steps))
	for i, s := range p.Steps {
		done[i] = make(chan struct{})
		if results[i] != nil {
			close(done[i])
			continue
		}
		if o.Start != nil {
			o.Start(s)
		}
		// Live output would interleave: each step's output is spooled to
		// a file (never held in memory) and printed as one block.
		var spool *os.File
		if o.Output != nil {
			spool, _ = os.CreateTemp("", "orket-step-*")
			spools[i] = spool
		}
		wg.Add(1)
		go func(i int, s config.Step, spool *os.File) {
			defer wg.Done()
			defer close(done[i])
			var live io.Writer
			if spool != nil {
				live = spool
			}
			results[i] = RunStep(ctx, s, o, live)
			if results[i].FailedRequired() && p.FailFast {
				cancel()
			}
		}(i, s, spool)
	}
	// Report in declared order, each as soon as it and those before it end.
	var out []*StepResult
	for i := range p.Steps {
		<-done[i]
		r := results[i]
		if f := spools[i]; f != nil {
			if w := o.Output(r.Name); w != nil {
				f.Seek(0, io.SeekStart)
				io.Copy(w, f)
			}
			f.Close()
			os.Remove(f.Name())
		}
		if r.Interrupted && parent.Err() == nil {
			// Stopped because another step failed first (fail_fast).
			r.Status, r.Interrupted, r.SkipReason = Skipped, false, "fail_fast"
		}
		out = append(out, r)
		if o.Done != nil {
			o.Done(r)
		}
	}
	wg.Wait()
	return out
}

func skipReason(s config.Step, o Options) string {
	if o.Skip[s.Name] {
		return "skip"
	}
	if !WhenMatches(s, o.TouchSet) {
		return "when"
	}
	return ""
}

// WhenMatches reports whether a step's when globs let it run for a touch
// set: always when it has none or the touch set is empty.
func WhenMatches(s config.Step, touch []string) bool {
	if len(s.When) == 0 || len(touch) == 0 {
		return true
	}
	for _, pat := range s.When {
		for _, p := range touch {
			if ok, _ := doublestar.Match(pat, p); ok {
				return true
			}
		}
	}
	return false
}

// RunStep runs one step, and again on failure as often as its retry:
// allows; a step that passes on a retry says so (Retries, FirstFailure).
// live, if not nil, receives its output as it comes.
func RunStep(ctx context.Context, s config.Step, o Options, live io.Writer) *StepResult {
	r := runOnce(ctx, s, o, live)
	first, total := r, r.DurationMS
	for i := 1; i <= s.Retry && r.Status == Failed && !r.Interrupted && ctx.Err() == nil; i++ {
		r = runOnce(ctx, s, o, live)
		r.Retries = i
		total += r.DurationMS
		r.DurationMS = total
	}
	if r.Retries > 0 && r.Status == Passed {
		r.FirstFailure = first.OutputTail
	}
	return r
}

// runOnce runs a step one time.
func runOnce(ctx context.Context, s config.Step, o Options, live io.Writer) *StepResult {
	r := &StepResult{Name: s.Name, Command: s.Command(), Dir: s.Dir, Required: s.Required}
	var argv []string
	if s.Argv != nil {
		argv = s.Argv
	} else {
		argv = []string{"/bin/sh", "-c", s.Shell}
	}
	env := append([]string{}, o.Env...)
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	raw := NewTail(o.Tail.MaxLines, o.Tail.MaxBytes)
	stored, rw := raw, io.WriteCloser(nopCloser{raw})
	if o.Redactor != nil {
		values := make([]string, 0, len(s.Env))
		for _, v := range s.Env {
			values = append(values, v)
		}
		stored = NewTail(o.Tail.MaxLines, o.Tail.MaxBytes)
		rw = o.Redactor.WithValues(values...).NewWriter(stored)
	}
	writers := []io.Writer{raw}
	if stored != raw {
		writers = append(writers, rw)
	}
	if live != nil {
		writers = append(writers, lenient{live})
	}
	w := io.MultiWriter(writers...)
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, s.Timeout, errTimeout)
		defer cancel()
	}
	var box *contain.Group
	if o.Group != nil {
		box = o.Group.Sub(strconv.FormatInt(stepSeq.Add(1), 10) + "-" + s.Name)
	}
	res := runGroup(ctx, argv, filepath.Join(o.Root, filepath.FromSlash(s.Dir)), env, w, o.Grace, box, o.Prepare)
	r.ExitCode, r.Signal, r.DurationMS = res.ExitCode, res.Signal, res.Duration.Milliseconds()
	r.TimedOut = res.Stopped && errors.Is(context.Cause(ctx), errTimeout)
	r.Interrupted = res.Stopped && !r.TimedOut
	if res.Err != nil {
		r.ExitCode = 127
		fmt.Fprintf(w, "orket: cannot start %s: %v\n", argv[0], res.Err)
	}
	rw.Close()
	r.OutputTail, r.RawTail, r.OutputBytes = stored.String(), raw.String(), raw.Total()
	r.Status = Passed
	if r.ExitCode != 0 || r.Signal != "" || res.Stopped || res.Err != nil {
		r.Status = Failed
	}
	return r
}

var errTimeout = errors.New("step timed out")

// A groupResult is how a process ended.
type groupResult struct {
	ExitCode int    // -1 when killed by a signal
	Signal   string // the signal that ended it, if one did
	Stopped  bool   // orket stopped it (ctx ended)
	Duration time.Duration
	Err      error // it could not be started
}

// runGroup runs argv in dir in its own process group (and in box, when
// there is one), with stdout and stderr both written to out. When the
// process exits, the rest of its group is killed; when ctx ends first, the
// group gets SIGTERM and, after the grace, SIGKILL (grace 0 is
// DefaultGrace). No process of the group, nor of box, outlives runGroup.
func runGroup(ctx context.Context, argv []string, dir string, env []string, out io.Writer, grace time.Duration, box *contain.Group, prepare func(*exec.Cmd) error) groupResult {
	if grace <= 0 {
		grace = DefaultGrace
	}
	start := time.Now()
	pr, pw, err := os.Pipe()
	if err != nil {
		return groupResult{Err: err}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil
	cmd.Stdout = pw
	cmd.Stderr = pw
	// Its own group, so orket can stop everything it started; and if orket
	// itself is killed outright, the kernel kills the child too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if box != nil {
		box.Apply(cmd)
		defer box.Close()
	}
	if err := startCmd(cmd, prepare); err != nil {
		pr.Close()
		pw.Close()
		return groupResult{Err: err, ExitCode: 127, Duration: time.Since(start)}
	}
	pw.Close()
	pgid := cmd.Process.Pid
	copied := make(chan struct{})
	go func() {
		io.Copy(out, pr)
		close(copied)
	}()
	exited := make(chan struct{})
	stopped := stopOnDone(ctx, pgid, grace, box, exited)
	werr := cmd.Wait()
	close(exited)
	// The leader is gone; nothing else of its group may stay behind, nor
	// anything that left the group.
	syscall.Kill(-pgid, syscall.SIGKILL)
	if box != nil {
		box.Kill()
	}
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
		// A process that left the group (setsid) still holds the pipe:
		// stop reading rather than wait for it.
		pr.Close()
		<-copied
	}
	pr.Close()
	res := groupResult{Duration: time.Since(start), Stopped: stopped()}
	res.ExitCode, res.Signal, res.Err = exitStatus(werr)
	return res
}

// startCmd prepares cmd (when prepare is set) and starts it.
func startCmd(cmd *exec.Cmd, prepare func(*exec.Cmd) error) error {
	if prepare != nil {
		if err := prepare(cmd); err != nil {
			return err
		}
	}
	return cmd.Start()
}

// stopOnDone stops the process group pgid (and box) when ctx ends before
// exited is closed: SIGTERM, then SIGKILL after the grace or once the
// leader has exited. It returns whether it stopped it (final once the
// leader has exited).
func stopOnDone(ctx context.Context, pgid int, grace time.Duration, box *contain.Group, exited <-chan struct{}) (stopped func() bool) {
	var mu sync.Mutex
	done := false
	go func() {
		select {
		case <-ctx.Done():
			mu.Lock()
			done = true
			mu.Unlock()
			syscall.Kill(-pgid, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(grace):
			}
			syscall.Kill(-pgid, syscall.SIGKILL)
			if box != nil {
				box.Kill()
			}
		case <-exited:
		}
	}()
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		return done
	}
}

// exitStatus reads how a process ended from its Wait's error: its exit
// code, or -1 and the signal that ended it; err when it did not run.
func exitStatus(werr error) (code int, signal string, err error) {
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			if name := signame(ws.Signal()); name != "" {
				return -1, name, nil
			}
			return -1, ws.Signal().String(), nil
		}
		return ee.ExitCode(), "", nil
	}
	return 0, "", werr
}

func signame(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return ""
}

// lenient passes writes on and never fails: whatever happens to a live
// view of a step's output, the step's pipe is drained to the end.
type lenient struct{ w io.Writer }

func (l lenient) Write(p []byte) (int, error) {
	l.w.Write(p)
	return len(p), nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
