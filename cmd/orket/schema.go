package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/learn"
)

type checkResult struct {
	Code     orket.Code    `json:"code"`
	File     string        `json:"file"`
	Detected []string      `json:"detected,omitempty"`
	Default  string        `json:"default"`
	Profiles []profileView `json:"profiles"`
	Lessons  lessonsView   `json:"lessons"`
}

// lessonsView is the lessons section as resolved, its durations spelled as
// orket.yaml spells them (14d, 90d), never as Go's 2160h0m0s.
type lessonsView struct {
	Path      string `json:"path"`
	TopK      int    `json:"top_k"`
	HalfLife  string `json:"half_life"`
	Retention struct {
		MaxEntries int    `json:"max_entries"`
		MaxAge     string `json:"max_age"`
	} `json:"retention"`
	Tail struct {
		MaxLines int `json:"max_lines"`
		MaxBytes int `json:"max_bytes"`
	} `json:"tail"`
}

type profileView struct {
	Name     string           `json:"name"`
	FailFast bool             `json:"fail_fast"`
	Parallel bool             `json:"parallel"`
	Steps    []learn.InitStep `json:"steps"`
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
	r, c, err := repoAndDetectedConfig(o)
	if err != nil {
		return nil, err
	}
	res := &checkResult{Code: orket.OK, File: r.DisplayPath(c.File), Detected: c.Detected, Default: c.Verify.Default}
	if c.File == "" {
		res.File = ""
	}
	for _, name := range c.Verify.Order {
		p, _ := c.Profile(name)
		pv := profileView{Name: name, FailFast: p.FailFast, Parallel: p.Parallel, Steps: []learn.InitStep{}}
		for _, s := range p.Steps {
			sv := learn.InitStep{Name: s.Name, Run: s.Command(), Dir: s.Dir}
			if s.Timeout > 0 {
				sv.Timeout = config.FormatDuration(s.Timeout)
			}
			pv.Steps = append(pv.Steps, sv)
		}
		res.Profiles = append(res.Profiles, pv)
	}
	l := c.Lessons
	res.Lessons = lessonsView{Path: l.Path, TopK: l.TopK, HalfLife: config.FormatDuration(l.HalfLife)}
	res.Lessons.Retention.MaxEntries = l.Retention.MaxEntries
	res.Lessons.Retention.MaxAge = config.FormatDuration(l.Retention.MaxAge)
	res.Lessons.Tail.MaxLines, res.Lessons.Tail.MaxBytes = l.Tail.MaxLines, l.Tail.MaxBytes
	if !o.json && !o.quiet {
		printCheck(o, res)
	}
	return res, nil
}

// printCheck writes the resolved configuration for people: each profile
// with its steps, then the lessons settings, in aligned columns.
func printCheck(o *options, res *checkResult) {
	w := o.stdout
	if res.File != "" {
		fmt.Fprintf(w, "%s: valid\n", res.File)
	}
	// One set of columns for the steps of every profile, so that they
	// line up across profiles.
	var rows [][]string
	for _, p := range res.Profiles {
		for _, s := range p.Steps {
			row := []string{s.Name, s.Run}
			var notes []string
			if s.Dir != "" {
				notes = append(notes, "in "+s.Dir)
			}
			if s.Timeout != "" {
				notes = append(notes, "timeout "+s.Timeout)
			}
			if len(notes) > 0 {
				row = append(row, "("+strings.Join(notes, ", ")+")")
			}
			rows = append(rows, row)
		}
	}
	lines := alignedLines(rows)
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
		fmt.Fprintf(w, "profile %s%s\n", p.Name, suffix)
		for range p.Steps {
			fmt.Fprintf(w, "  %s\n", lines[0])
			lines = lines[1:]
		}
	}
	l := res.Lessons
	fmt.Fprintln(w, "lessons")
	for _, line := range alignedLines([][]string{
		{"path", l.Path},
		{"top_k", strconv.Itoa(l.TopK)},
		{"half_life", l.HalfLife},
		{"retention", fmt.Sprintf("max_entries %d, max_age %s", l.Retention.MaxEntries, l.Retention.MaxAge)},
		{"tail", fmt.Sprintf("max_lines %d, max_bytes %d", l.Tail.MaxLines, l.Tail.MaxBytes)},
	}) {
		fmt.Fprintf(w, "  %s\n", line)
	}
}
