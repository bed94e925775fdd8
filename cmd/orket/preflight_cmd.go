package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/learn"
)

func preflightCommand(o *options, result *any) *cli.Command {
	var strict bool
	var profile, base string
	return &cli.Command{
		Name:      "preflight",
		Usage:     "show the advisories for a scope and run their preflight checks, changing nothing",
		UsageText: "orket preflight [--scope S]... [--touch PATH]... [--profile P] [--base REV] [--strict]",
		Description: `preflight computes what orket run would warn about for this scope and
profile (the touch set is the uncommitted change, or the diff from --base,
and the paths --touch declares)
and runs the advisories' preflight checks and the ones declared in
orket.yaml. With --strict (or preflight.strict, or ORKET_STRICT_PREFLIGHT=1)
a failed check is E_PREFLIGHT_FAILED, exit 4: for release jobs that must
refuse to start when a known precondition is missing.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "scope", Usage: "the scope to score lessons against (`PATH`, repeatable)"},
			&cli.StringFlag{Name: "profile", Usage: "verify `PROFILE` whose commands lessons are matched with", Destination: &profile},
			&cli.StringFlag{Name: "base", Usage: "take the touch set as the diff from `REV`", Destination: &base},
			&cli.StringSliceFlag{Name: "touch", Usage: "declare a `PATH` the next edit means to change (repeatable)"},
			&cli.BoolFlag{Name: "strict", Usage: "a failed check fails the command (E_PREFLIGHT_FAILED)", Destination: &strict, DisableDefaultText: true},
		},
		Action: func(c *cli.Context) error {
			res, err := runPreflight(o, c.StringSlice("scope"), c.StringSlice("touch"), profile, base, strict)
			if res != nil {
				*result = res
			}
			return err
		},
	}
}

func runPreflight(o *options, scopes, touch []string, profile, base string, strict bool) (*learn.PreflightResult, error) {
	r, cfg, err := repoAndDetectedConfig(o)
	if err != nil {
		return nil, err
	}
	if touch, err = resolveScopes(r, touch); err != nil {
		return nil, err
	}
	res, err := learn.Preflight(learn.PreflightRequest{Repo: r, Config: cfg, Scope: scopes, Touch: touch, Profile: profile, Base: base,
		Strict: strict || o.getenv("ORKET_STRICT_PREFLIGHT") == "1", Env: orket.Env{Getenv: o.getenv, Now: o.now}})
	if res != nil && !o.json && !o.quiet {
		p := newRunPrinter(o)
		p.w = o.stdout
		if len(res.Advisories) == 0 {
			fmt.Fprintln(o.stdout, "No past failures are relevant to this run.")
		}
		p.advisories(res.Advisories, res.Preflight)
		if len(res.Preflight) == 0 {
			fmt.Fprintln(o.stdout, "no preflight checks")
		}
	}
	return res, err
}
