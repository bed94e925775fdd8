package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/learn"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/scope"
)

type preflightResult struct {
	Code       orket.Code         `json:"code"`
	Scope      []string           `json:"scope"`
	Profile    string             `json:"verify_profile"`
	TouchSet   []string           `json:"touch_set"`
	Advisories []lessons.Advisory `json:"advisories"`
	Preflight  []preflight.Result `json:"preflight"`
}

func preflightCommand(o *options, result *any) *cli.Command {
	var strict bool
	var profile, base string
	return &cli.Command{
		Name:      "preflight",
		Usage:     "show the advisories for a scope and run their preflight checks, changing nothing",
		UsageText: "orket preflight [--scope S]... [--profile P] [--base REV] [--strict]",
		Description: `preflight computes what orket run would warn about for this scope and
profile (the touch set is the uncommitted change, or the diff from --base)
and runs the advisories' preflight checks and the ones declared in
orket.yaml. With --strict (or preflight.strict, or ORKET_STRICT_PREFLIGHT=1)
a failed check is E_PREFLIGHT_FAILED, exit 4: for release jobs that must
refuse to start when a known precondition is missing.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "scope", Usage: "the scope to score lessons against (`PATH`, repeatable)"},
			&cli.StringFlag{Name: "profile", Usage: "verify `PROFILE` whose commands lessons are matched with", Destination: &profile},
			&cli.StringFlag{Name: "base", Usage: "take the touch set as the diff from `REV`", Destination: &base},
			&cli.BoolFlag{Name: "strict", Usage: "a failed check fails the command (E_PREFLIGHT_FAILED)", Destination: &strict, DisableDefaultText: true},
		},
		Action: func(c *cli.Context) error {
			res, err := runPreflight(o, c.StringSlice("scope"), profile, base, strict)
			if res != nil {
				*result = res
			}
			return err
		},
	}
}

func runPreflight(o *options, scopes []string, profile, base string, strict bool) (*preflightResult, error) {
	r, err := openRepo(o)
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(o, r)
	if err != nil {
		return nil, err
	}
	prof, err := cfg.Profile(profile)
	if err != nil {
		return nil, err
	}
	if len(scopes) == 0 {
		scopes = cfg.Scope
	}
	sc, err := scope.Parse(scopes)
	if err != nil {
		return nil, &orket.Error{Code: orket.EUsage, Err: err, Msg: err.Error(), Hint: "scopes are repository-relative directories or globs"}
	}
	touch, _, err := r.ChangedSince(base)
	if err != nil {
		return nil, err
	}
	strict = strict || cfg.Preflight.Strict || o.getenv("ORKET_STRICT_PREFLIGHT") == "1"
	a := learn.Advise(learn.AdviceQuery{Repo: r, Config: cfg, Profile: prof, Scope: sc.Patterns(), TouchSet: touch,
		Getenv: o.getenv, Now: o.now(), Strict: strict})
	if a.Err != nil {
		return nil, &orket.Error{Code: orket.EInternal, Err: a.Err, Msg: "read lessons: " + a.Err.Error(), Hint: "check " + cfg.Lessons.Path}
	}
	res := &preflightResult{Code: orket.OK, Scope: append([]string{}, sc.Patterns()...), Profile: prof.Name, TouchSet: touch,
		Advisories: a.Advisories, Preflight: a.Preflight}
	if res.TouchSet == nil {
		res.TouchSet = []string{}
	}
	if !o.json && !o.quiet {
		p := newRunPrinter(o)
		p.w = o.stdout
		if len(a.Advisories) == 0 {
			fmt.Fprintln(o.stdout, "no past failures are relevant")
		}
		p.advisories(a.Advisories, a.Preflight)
		if len(res.Preflight) == 0 {
			fmt.Fprintln(o.stdout, "no preflight checks")
		}
	}
	if failed := a.Failed(); strict && len(failed) > 0 {
		return res, &orket.PreflightFailedError{Failed: failed}
	}
	return res, nil
}
