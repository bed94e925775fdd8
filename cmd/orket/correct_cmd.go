package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/learn"
)

func correctCommand(o *options, result *any) *cli.Command {
	var note string
	return &cli.Command{
		Name:      "correct",
		Usage:     "record what a person changed after a run kept its change, and why",
		UsageText: "orket correct [RUN] --note TEXT",
		Description: `correct records a human correction of a kept run (the latest, or RUN):
your note, and what you changed since the run in the paths it touched, as
a patch. Corrections feed the proposals people approve as guardrails.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "note", Usage: "what you changed and why (required)", Destination: &note},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return orket.Errorf(orket.EUsage, "usage: "+c.Command.UsageText, "orket correct takes one run id, not %d arguments", c.NArg())
			}
			r, cfg, err := repoAndConfig(o)
			if err != nil {
				return err
			}
			res, err := learn.Correct(c.Context, learn.CorrectRequest{Repo: r, Config: cfg, RunID: c.Args().First(), Note: note,
				By: person(o, r), Env: orket.Env{Environ: o.environ(), Getenv: o.getenv, Now: o.now}})
			if err != nil {
				return err
			}
			*result = res
			for _, w := range res.Warnings {
				fmt.Fprintln(o.stderr, "orket: warning: "+w)
			}
			if !o.json {
				e := res.Entry
				fmt.Fprintf(o.stdout, "recorded a correction of run %s (%s): %d path(s) changed since it\n", e.RunID, e.Category, len(e.Touched))
				printProposals(o, res.Proposals)
			}
			return nil
		},
	}
}
