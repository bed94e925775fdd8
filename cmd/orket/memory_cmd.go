package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/learn"
)

// memoryCommand prints what an agent should read before it plans, and
// reviews the rejected folder on demand.
func memoryCommand(o *options, result *any) *cli.Command {
	var agent string
	return &cli.Command{
		Name:  "memory",
		Usage: "print what an agent should read before it plans: guardrails, agent memory, patterns, advisories",
		UsageText: `orket memory [--agent A] [--scope S]...
   orket memory review`,
		Description: `memory prints, as Markdown (or one JSON object with --json), the agent's
approved guardrails for the scope (lines whose evidence is gone marked
demoted), the agent memory (.orket/memory/AGENT_MEMORY.md), the patterns of
the agent's rejections, earlier reviews of the scope, and the top
advisories and failed preflight checks for it. Hooks feed it to agents
(docs/integrations).`,
		Subcommands:     []*cli.Command{memoryReviewCommand(o, result)},
		HideHelpCommand: true,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "agent", Usage: "whose patterns (default: ORKET_AGENT, else default)", Destination: &agent},
			&cli.StringSliceFlag{Name: "scope", Usage: "the area the agent will work in (repeatable)"},
		}, globalFlags()...),
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			resolveGlobals(o, c)
			if c.Args().Present() {
				return orket.Errorf(orket.EUsage, "memory commands: review", "unknown command %q for orket memory", c.Args().First())
			}
			return runMemory(o, result, agent, c.StringSlice("scope"))
		},
	}
}

// runMemory prints what agent should read before it works in scopes.
func runMemory(o *options, result *any, agent string, scopes []string) error {
	r, cfg, err := repoAndConfig(o)
	if err != nil {
		return err
	}
	resolved, err := resolveScopes(r, scopes)
	if err != nil {
		return err
	}
	v, err := learn.Memory(learn.MemoryQuery{Repo: r, Config: cfg, Agent: orDefault(agent, o.getenv("ORKET_AGENT")), Scope: resolved,
		Env: orket.Env{Environ: o.environ(), Getenv: o.getenv, Now: o.now}})
	if err != nil {
		return err
	}
	*result = v
	for _, w := range v.Warnings {
		fmt.Fprintln(o.stderr, "orket: warning: "+w)
	}
	if !o.json {
		fmt.Fprint(o.stdout, v.Markdown())
	}
	return nil
}

// memoryReviewCommand is orket memory review.
func memoryReviewCommand(o *options, result *any) *cli.Command {
	review := &cli.Command{
		Name: "review", Usage: "review the files dropped in .orket/rejected into the agent memory now",
		UsageText: "orket memory review",
		Action: noArgs(func(c *cli.Context) error {
			return runMemoryReview(c.Context, o, result)
		}),
	}
	review.Flags = append(review.Flags, globalFlags()...)
	wrap(o, review)
	return review
}

// runMemoryReview reviews the files dropped in .orket/rejected and says
// what became of each.
func runMemoryReview(ctx context.Context, o *options, result *any) error {
	r, cfg, err := repoAndConfig(o)
	if err != nil {
		return err
	}
	done, st, err := learn.ReviewRejected(ctx, r, cfg, o.environ(), o.now)
	if err != nil {
		return memoryError(err)
	}
	if st.WantsPruning {
		fmt.Fprintf(o.stderr, "orket: warning: the agent memory holds %d learnings: it wants pruning by a person\n", st.Learnings)
	}
	*result = map[string]any{"code": orket.OK, "reviewed": done}
	if o.json {
		return nil
	}
	if len(done) == 0 {
		fmt.Fprintln(o.stdout, "nothing new in .orket/rejected")
	}
	for _, d := range done {
		fmt.Fprintf(o.stdout, "%s: %s -> .orket/%s", d.File, d.Status, d.MovedTo)
		if d.Learning != "" {
			fmt.Fprintf(o.stdout, ": %s", d.Learning)
		}
		if d.Error != "" {
			fmt.Fprintf(o.stdout, " (%s)", d.Error)
		}
		fmt.Fprintln(o.stdout)
	}
	return nil
}
