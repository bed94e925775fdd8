package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"

	"github.com/orket/orket/config"
)

type checkResult struct {
	Code     orket.Code    `json:"code"`
	File     string        `json:"file"`
	Detected []string      `json:"detected,omitempty"`
	Default  string        `json:"default"`
	Profiles []profileView `json:"profiles"`
}

type profileView struct {
	Name     string     `json:"name"`
	FailFast bool       `json:"fail_fast"`
	Parallel bool       `json:"parallel"`
	Steps    []stepView `json:"steps"`
}

func schemaCommand(o *options, result *any) *cli.Command {
	var check bool
	return &cli.Command{
		Name:      "schema",
		Usage:     "print the JSON Schema of orket.yaml, or check orket.yaml",
		UsageText: "orket schema > orket.schema.json\norket schema --check [--config FILE]",
		Description: `schema prints the JSON Schema (draft 2020-12) of orket.yaml, for editors:
with the YAML language server, put this line at the top of orket.yaml:
  # yaml-language-server: $schema=orket.schema.json

With --check it reads orket.yaml (or --config FILE) as orket run would and
prints the resolved profiles, or the first mistake with its line.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "check", Usage: "check orket.yaml and print the resolved profiles", Destination: &check, DisableDefaultText: true},
		},
		Action: func(*cli.Context) error {
			if check {
				res, err := runSchemaCheck(o)
				if res != nil {
					*result = res
				}
				return err
			}
			if o.json {
				*result = map[string]any{"code": orket.OK, "schema": json.RawMessage(config.Schema)}
				return nil
			}
			_, err := o.stdout.Write(config.Schema)
			return err
		},
	}
}

func runSchemaCheck(o *options) (*checkResult, error) {
	r, err := openRepo(o)
	if err != nil {
		return nil, err
	}
	c, err := loadConfig(o, r)
	if err != nil {
		return nil, err
	}
	res := &checkResult{Code: orket.OK, File: rel(r, c.File), Detected: c.Detected, Default: c.Verify.Default}
	if c.File == "" {
		res.File = ""
	}
	for _, name := range c.Verify.Order {
		p, _ := c.Profile(name)
		pv := profileView{Name: name, FailFast: p.FailFast, Parallel: p.Parallel, Steps: []stepView{}}
		for _, s := range p.Steps {
			pv.Steps = append(pv.Steps, stepView{Name: s.Name, Run: s.Command(), Dir: s.Dir})
		}
		res.Profiles = append(res.Profiles, pv)
	}
	if !o.json && !o.quiet {
		if res.File != "" {
			fmt.Fprintf(o.stdout, "%s: valid\n", res.File)
		}
		for _, p := range res.Profiles {
			var opts []string
			if p.Name == res.Default {
				opts = append(opts, "default")
			}
			if !p.FailFast {
				opts = append(opts, "fail_fast: false")
			}
			if p.Parallel {
				opts = append(opts, "parallel")
			}
			suffix := ""
			if len(opts) > 0 {
				suffix = " (" + strings.Join(opts, ", ") + ")"
			}
			fmt.Fprintf(o.stdout, "profile %s%s\n", p.Name, suffix)
			for _, s := range p.Steps {
				fmt.Fprintf(o.stdout, "  %-16s %s\n", s.Name, s.Run)
			}
		}
	}
	return res, nil
}
