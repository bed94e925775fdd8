// Command orket makes every change to a git repository a transaction: it
// snapshots the working tree, lets an edit write only inside a scope, runs
// the verify profile, and keeps the change or restores the tree exactly.
//
// This package is the command line only: flags and their combinations,
// prompts, progress and rendering. Package orket runs the transaction.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/orket/orket"
)

func main() { os.Exit(mainWithSignals()) }

// mainWithSignals runs orket as a process: with its real streams and
// signal handling.
func mainWithSignals() int {
	// The first SIGINT, SIGTERM, SIGHUP (the terminal went away) or
	// SIGQUIT cancels the context: running children are stopped and the
	// transaction reverts. Later ones are swallowed so the revert is never
	// cut short.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		s := <-sigs
		cancel(&orket.InterruptedError{Sig: s})
		for range sigs {
		}
	}()
	defer signal.Stop(sigs)
	// A reader that goes away (orket run ... | head) must not kill a
	// transaction half way: with SIGPIPE caught, writes to the closed
	// pipe fail instead, and the run goes on to its end. (Caught, not
	// ignored: steps still get the default SIGPIPE.)
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	return Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
}
