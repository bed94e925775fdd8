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
	// The first SIGINT or SIGTERM cancels the context: running children
	// are stopped and the transaction reverts. Later ones are swallowed so
	// the revert is never cut short.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		cancel(orket.Signal{Sig: s})
		for range sigs {
		}
	}()
	defer signal.Stop(sigs)
	return Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
}
