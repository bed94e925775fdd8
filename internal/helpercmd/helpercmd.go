// Package helpercmd runs a helper command orket does not control (a
// model's command line: memory.summarizer, lessons.extractor) once, with
// its input on stdin, bounded in time and output, and leaves nothing of
// it running:
//
//   - it runs in its own process group, and is killed if orket dies
//     (Pdeathsig);
//   - at most Cmd.MaxStdout bytes of its stdout are read: once that much
//     has arrived its group is killed and what was read is kept;
//   - the end of its stderr is kept (at least the last StderrTail bytes);
//   - on the timeout, or when ctx ends, its group gets SIGTERM and, after
//     the grace, SIGKILL;
//   - when it exits, whatever it left running in its group is killed; a
//     process that left the group (setsid) and keeps its output open is
//     let go of after the grace instead of holding the caller.
//
// Run reports what happened (timed out, stopped for its output, its exit
// status); what that means, and what of its output is kept, is the
// caller's to decide.
package helpercmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// DefaultGrace is how long a SIGTERM'd group has before SIGKILL when
// Cmd.Grace is 0.
const DefaultGrace = 2 * time.Second

// StderrTail is how much of the end of its stderr Run keeps, at least.
const StderrTail = 4 << 10

// ErrNoCommand is Run's error for a Cmd without Argv.
var ErrNoCommand = errors.New("no command")

// A Cmd is a helper command and its bounds.
type Cmd struct {
	Argv      []string      // the command and its arguments (not empty)
	Dir       string        // where it runs ("": orket's directory)
	Env       []string      // its environment (nil: orket's)
	Stdin     io.Reader     // its input (nil: none)
	Timeout   time.Duration // 0: only ctx bounds it
	Grace     time.Duration // between SIGTERM and SIGKILL of its group (0: DefaultGrace)
	MaxStdout int           // stdout read at most; reaching it stops the command (0: no cap)
}

// A Result is how a helper command ended and what it printed.
type Result struct {
	Stdout string // at most Cmd.MaxStdout bytes
	// Stderr is the end of what it wrote on stderr: all of it up to
	// StderrTail bytes, else at least its last StderrTail bytes.
	Stderr string
	// TimedOut reports whether it was stopped on the timeout or ctx's end.
	TimedOut bool
	// Overflow reports whether it was killed because its stdout reached
	// Cmd.MaxStdout (Err is then its Wait's error, of no interest).
	Overflow bool
	// ExitCode is its exit code, -1 when a signal ended it.
	ExitCode int
	// Err is exec.Cmd.Wait's error: nil when it exited 0, an
	// *exec.ExitError when it exited non-zero or a signal ended it,
	// exec.ErrWaitDelay when its stdin could not be fully written within
	// the grace after it exited.
	Err error
}

// Run starts c.Argv with c.Stdin on its stdin, waits for it within the
// bounds of the package comment and returns how it ended. The error is
// non-nil only when it could not be started (as exec.Cmd.Start reports
// it, so errors.Is(err, fs.ErrNotExist) holds for a missing command);
// its failures once started are in the Result. An empty c.Argv is
// ErrNoCommand.
func Run(ctx context.Context, c Cmd) (*Result, error) {
	if len(c.Argv) == 0 {
		return nil, ErrNoCommand
	}
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	p, err := start(c, grace)
	if err != nil {
		return nil, err
	}
	p.read(c.MaxStdout)
	var res Result
	p.wait(ctx, grace, &res)
	// The leader is gone: nothing of its group stays behind.
	syscall.Kill(-p.pgid, syscall.SIGKILL)
	p.drain(grace)

	res.Stdout, res.Stderr = p.stdout.String(), p.stderr.String()
	res.ExitCode = -1
	if p.cmd.ProcessState != nil {
		res.ExitCode = p.cmd.ProcessState.ExitCode()
	}
	return &res, nil
}

// A process is a started helper command, the read ends of its stdout and
// stderr and what was read of them.
type process struct {
	cmd            *exec.Cmd
	pgid           int
	outR, errR     *os.File
	stdout, stderr bytes.Buffer
	readers        sync.WaitGroup
	full           chan struct{} // closed when stdout reaches Cmd.MaxStdout
}

// start starts c in its own process group, its stdout and stderr on
// pipes.
func start(c Cmd, grace time.Duration) (*process, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdin = c.Stdin
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Wait waits for the copy of stdin; a child that keeps stdin open
	// without reading must not hold the caller past the group's end.
	cmd.WaitDelay = grace
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return nil, err
	}
	outW.Close()
	errW.Close()
	return &process{cmd: cmd, pgid: cmd.Process.Pid, outR: outR, errR: errR, full: make(chan struct{})}, nil
}

// read starts reading the process's stdout (at most maxStdout bytes) and
// the end of its stderr.
func (p *process) read(maxStdout int) {
	p.readers.Add(2)
	go func() {
		defer p.readers.Done()
		readCapped(&p.stdout, p.outR, maxStdout, p.full)
	}()
	go func() {
		defer p.readers.Done()
		io.Copy(&tail{buf: &p.stderr, max: StderrTail}, p.errR)
	}()
}

// wait waits for the process's leader to exit, killing its group when its
// stdout is full, and stopping it (SIGTERM, then SIGKILL after the grace)
// when ctx ends; it records which happened, and Wait's error, in res.
func (p *process) wait(ctx context.Context, grace time.Duration, res *Result) {
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case res.Err = <-exited:
	case <-p.full:
		res.Overflow = true
		syscall.Kill(-p.pgid, syscall.SIGKILL)
		res.Err = <-exited
	case <-ctx.Done():
		res.TimedOut = true
		syscall.Kill(-p.pgid, syscall.SIGTERM)
		select {
		case res.Err = <-exited:
		case <-time.After(grace):
			syscall.Kill(-p.pgid, syscall.SIGKILL)
			res.Err = <-exited
		}
	}
}

// drain waits for the readers to reach the end of the output, for the
// grace at most: a process that left the group (setsid) holds the pipes,
// and they are closed under it.
func (p *process) drain(grace time.Duration) {
	done := make(chan struct{})
	go func() { p.readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		p.outR.Close()
		p.errR.Close()
		<-done
	}
	p.outR.Close()
	p.errR.Close()
}

// readCapped reads r into buf until r ends, keeping at most max bytes
// (max <= 0: all); full is closed when buf reaches max.
func readCapped(buf *bytes.Buffer, r io.Reader, max int, full chan<- struct{}) {
	p := make([]byte, 32<<10)
	for {
		n, err := r.Read(p)
		if n > 0 {
			switch {
			case max <= 0:
				buf.Write(p[:n])
			case buf.Len() < max:
				buf.Write(p[:min(n, max-buf.Len())])
				if buf.Len() >= max {
					close(full)
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// tail keeps the last max bytes written to it (between max and 2*max of
// them, so that it copies rarely).
type tail struct {
	buf *bytes.Buffer
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if t.buf.Len() > 2*t.max {
		b := append([]byte(nil), t.buf.Bytes()[t.buf.Len()-t.max:]...)
		t.buf.Reset()
		t.buf.Write(b)
	}
	return len(p), nil
}
