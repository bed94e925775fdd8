// Command orket makes every change to a git repository a transaction: it
// snapshots the working tree, lets an edit write only inside a scope, runs
// the verify profile, and keeps the change or restores the tree exactly.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
