package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/config"
	"github.com/orket/orket/txn"
)

type classifyResult struct {
	Code orket.Code `json:"code"`
	*classify.Result
	Advice classify.Advice `json:"advice"`
}

func classifyCommand(o *options, result *any) *cli.Command {
	return &cli.Command{
		Name:      "classify",
		Usage:     "classify a failure log: tags, evidence, preflight checks",
		UsageText: "orket classify [FILE|-]\ngo test ./... 2>&1 | orket classify",
		Description: `classify reads a failure's output (a file, or stdin) and says what kind of
failure it is, as orket does for a failed verify step: the tags, the rules
that matched and what they matched, a confidence, and the preflight checks
the evidence implies. Output no rule recognises gets no tag. Inside a
repository the rules of its orket.yaml come first.`,
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return orket.Errorf(orket.EUsage, "give one file, or - for stdin", "too many arguments")
			}
			res, err := runClassify(o, c.Args().First())
			if res != nil {
				*result = res
			}
			return err
		},
	}
}

// maxClassifyInput bounds what classify reads; the tail is what matters.
const maxClassifyInput = 64 << 20

func runClassify(o *options, name string) (*classifyResult, error) {
	var rd io.Reader = o.stdin
	if name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, orket.Errorf(orket.EUsage, "pass an existing log file, or - for stdin", "%s: %s", name, unwrapPathError(err))
		}
		defer f.Close()
		rd = f
	}
	b, err := io.ReadAll(io.LimitReader(rd, maxClassifyInput))
	if err != nil {
		return nil, &orket.Error{Code: orket.EUsage, Err: err, Msg: "read the log: " + err.Error(), Hint: "pass a readable file"}
	}
	var rules []config.Rule
	if r, err := openRepo(o); err == nil {
		cfg, err := loadConfigQuiet(o, r)
		if err != nil {
			return nil, err
		}
		if cfg != nil {
			rules = cfg.Classify.Rules
		}
	}
	cl := classify.New(rules).Classify(string(b))
	res := &classifyResult{Code: orket.OK, Result: cl, Advice: classify.AdviceFor(cl, "the command")}
	if !o.json && !o.quiet {
		w := o.stdout
		if len(cl.Tags) == 0 {
			fmt.Fprintln(w, "no rule recognises this failure (no tag)")
		} else {
			fmt.Fprintf(w, "tags: %s (confidence %.2f)\n", strings.Join(cl.Tags, ", "), cl.Confidence)
		}
		for _, s := range cl.Signals {
			fmt.Fprintf(w, "  %s [%s, %s]: %s\n", s.Rule, s.Tag, s.Source, s.Match)
		}
		for _, ch := range cl.Checks {
			fmt.Fprintf(w, "preflight: %s\n", ch)
		}
		if cl.FirstError != "" {
			fmt.Fprintf(w, "first error: %s\n", cl.FirstError)
		}
		if len(cl.Tags) > 0 {
			fmt.Fprintf(w, "advice: %s\n", res.Advice.Title)
			for _, a := range res.Advice.SuggestedActions {
				fmt.Fprintf(w, "  - %s\n", a)
			}
		}
	}
	return res, nil
}

// loadConfigQuiet reads orket.yaml if there is one; no file is no error
// (and no detection) for commands that only need its rules and settings.
func loadConfigQuiet(o *options, r *txn.Repo) (*config.Config, error) {
	file, explicit := configPath(o, r)
	c, err := config.Load(file)
	if errors.Is(err, os.ErrNotExist) && !explicit {
		return config.Defaults(), nil
	}
	if err != nil {
		return nil, configError(r, file, err)
	}
	return c, nil
}
