package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket/internal/rank"
	"github.com/orket/orket/learn"
)

// feedbackCommand groups the commands that read the feedback log.
func feedbackCommand(o *options, result *any) *cli.Command {
	return group(o, "feedback", "read the reviewers' rejections: list, stats, patterns", "orket feedback list|stats|patterns [--agent A]",
		feedbackListCommand(o, result), feedbackStatsCommand(o, result), feedbackPatternsCommand(o, result))
}

// feedbackOptions filter the log.
type feedbackOptions struct {
	agent, task, category, since string
	limit                        int
}

func (fo *feedbackOptions) flags(withLimit bool) []cli.Flag {
	fl := []cli.Flag{
		&cli.StringFlag{Name: "agent", Usage: "only `AGENT`'s rejections", Destination: &fo.agent},
		&cli.StringFlag{Name: "since", Usage: "only newer than `AGE` (14d, 12h) or a date (2026-11-01)", Destination: &fo.since},
	}
	if withLimit {
		fl = append(fl,
			&cli.StringFlag{Name: "task", Usage: "only rejections of runs of `TASK`", Destination: &fo.task},
			&cli.StringFlag{Name: "category", Usage: "only `CATEGORY` (examples, specificity, clarity, completeness, relevance, other)", Destination: &fo.category},
			&cli.IntFlag{Name: "limit", Usage: "at most `N` entries", Value: 50, Destination: &fo.limit})
	}
	return fl
}

// filter is the log's filter the flags give.
func (fo *feedbackOptions) filter(o *options) (learn.FeedbackLog, learn.FeedbackFilter, error) {
	r, cfg, err := repoAndConfig(o)
	if err != nil {
		return learn.FeedbackLog{}, learn.FeedbackFilter{}, err
	}
	since, err := parseSince(fo.since, o.now())
	if err != nil {
		return learn.FeedbackLog{}, learn.FeedbackFilter{}, err
	}
	return learn.FeedbackLog{Repo: r, Config: cfg}, learn.FeedbackFilter{Agent: fo.agent, Task: fo.task, Category: fo.category, Since: since}, nil
}

func feedbackListCommand(o *options, result *any) *cli.Command {
	var fo feedbackOptions
	return &cli.Command{
		Name: "list", Usage: "list rejections, newest first", UsageText: "orket feedback list [--agent A] [--task T] [--category C] [--since D] [--limit N]",
		Flags: fo.flags(true),
		Action: noArgs(func(c *cli.Context) error {
			fl, f, err := fo.filter(o)
			if err != nil {
				return err
			}
			res, err := fl.List(f, fo.limit)
			if err != nil {
				return err
			}
			*result = res
			if o.json {
				return nil
			}
			list := res.Entries
			if len(list) == 0 {
				fmt.Fprintln(o.stdout, "no rejections recorded: orket reject records a reviewer's no")
				return nil
			}
			tw := tabwriter.NewWriter(o.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tAGENT\tITEM\tCATEGORY\tUNDO\tREASON")
			for _, e := range list {
				undo := "-"
				if e.Undo != nil {
					undo = e.Undo.Status
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format("2006-01-02 15:04"), e.Agent, e.Item, e.Category, undo, clipRunes(e.Reason, 60))
			}
			return tw.Flush()
		}),
	}
}

func feedbackStatsCommand(o *options, result *any) *cli.Command {
	var fo feedbackOptions
	return &cli.Command{
		Name: "stats", Usage: "count rejections per category, agent and item", UsageText: "orket feedback stats [--agent A] [--since D]",
		Flags: fo.flags(false),
		Action: noArgs(func(c *cli.Context) error {
			fl, f, err := fo.filter(o)
			if err != nil {
				return err
			}
			res, err := fl.Stats(f)
			if err != nil {
				return err
			}
			*result = res
			if o.json {
				return nil
			}
			fmt.Fprintf(o.stdout, "%d rejections\n", res.Total)
			for _, sec := range []struct {
				name string
				m    map[string]int
			}{{"categories", res.Categories}, {"agents", res.Agents}, {"items", res.Items}} {
				fmt.Fprintf(o.stdout, "%s:\n", sec.name)
				for _, k := range rank.ByCount(sec.m) {
					fmt.Fprintf(o.stdout, "  %5d  %s\n", sec.m[k], orNone(k))
				}
			}
			return nil
		}),
	}
}

func feedbackPatternsCommand(o *options, result *any) *cli.Command {
	var fo feedbackOptions
	return &cli.Command{
		Name: "patterns", Usage: "the categories that recur in an agent's rejections (over 30%, at least 3)",
		UsageText: "orket feedback patterns [--agent A] [--since D]",
		Flags:     fo.flags(false),
		Action: noArgs(func(c *cli.Context) error {
			fl, f, err := fo.filter(o)
			if err != nil {
				return err
			}
			res, err := fl.Patterns(f.Agent, f.Since, o.now())
			if err != nil {
				return err
			}
			*result = res.Result()
			if o.json {
				return nil
			}
			if res.None != nil {
				fmt.Fprintf(o.stdout, "no pattern in %d rejection(s) of agent %s since %s (a pattern is a category over 30%%, with at least 3)\n",
					res.Total, res.Agent, sinceText(res.Since))
				return nil
			}
			for _, p := range res.Patterns {
				fmt.Fprintf(o.stdout, "%s: %d of %d rejections (%.0f%%): %s\n", p.Category, p.OccurrenceCount, p.TotalRejections, float64(p.Percentage), p.SuggestedCorrection)
			}
			return nil
		}),
	}
}

func sinceText(t time.Time) string {
	if t.IsZero() {
		return "the start"
	}
	return t.Format("2006-01-02")
}
