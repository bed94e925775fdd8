package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
)

func recoverCommand(o *options, result *any) *cli.Command {
	var discard, wait bool
	return &cli.Command{
		Name:      "recover",
		Usage:     "restore the repository from an interrupted transaction",
		UsageText: "orket recover [--discard]",
		Description: `When an orket run was killed (kill -9, power loss, a crash), its snapshot
and journal are left behind and later runs refuse with E_RECOVERY_NEEDED.
recover keeps what the run left in the tree as a patch under .orket/runs,
then puts the tree back exactly as it was before that run and forgets the
snapshot. --discard forgets the snapshot and keeps the tree as it is.
With nothing to recover it says so and exits 0.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "discard", Usage: "forget the snapshot; keep the tree as it is", Destination: &discard, DisableDefaultText: true},
			&cli.BoolFlag{Name: "wait", Usage: "wait for a running orket to finish first", Destination: &wait, DisableDefaultText: true},
		},
		Action: func(c *cli.Context) error {
			res, err := runRecover(c.Context, o, discard, wait)
			if res != nil {
				*result = res
			}
			return err
		},
	}
}

func runRecover(ctx context.Context, o *options, discard, wait bool) (*orket.Recovery, error) {
	r, err := openRepo(o)
	if err != nil {
		return nil, err
	}
	res, err := orket.Recover(ctx, r, orket.RecoverOptions{Discard: discard, Wait: wait, Now: o.now,
		Warn: func(msg string) { fmt.Fprintln(o.stderr, "orket: warning: "+msg) }})
	if err != nil || o.quiet || o.json {
		return res, err
	}
	switch res.Action {
	case "nothing":
		fmt.Fprintln(o.stdout, "nothing to recover")
	case "discarded":
		if discard {
			fmt.Fprintf(o.stdout, "discarded the snapshot of run %s; the tree is left as it is\n", res.RunID)
		} else {
			fmt.Fprintf(o.stdout, "run %s stopped before it wrote anything; nothing to restore\n", res.RunID)
		}
	case "restored":
		fmt.Fprintf(o.stdout, "restored the tree as it was before run %s (%d path(s) put back, verified)\n", res.RunID, len(res.Paths))
		if res.PatchFile != "" {
			fmt.Fprintf(o.stdout, "what the interrupted run had changed is kept in %s (git apply %s brings it back)\n", res.PatchFile, res.PatchFile)
		}
	}
	return res, nil
}
