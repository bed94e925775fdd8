package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/learn"
)

type lessonsListOptions struct {
	tag, scope, since string
	limit             int
	who               whoFilter
}

func lessonsListCommand(o *options, result *any) *cli.Command {
	var lo lessonsListOptions
	return &cli.Command{
		Name: "list", Usage: "list lessons, newest first", UsageText: "orket lessons list [--tag T] [--scope S] [--since D] [--agent A] [--task T] [--limit N]",
		Flags: append(lo.who.flags(),
			&cli.StringFlag{Name: "tag", Usage: "only lessons with `TAG`", Destination: &lo.tag},
			&cli.StringFlag{Name: "scope", Usage: "only lessons whose scope overlaps `PATH`", Destination: &lo.scope},
			&cli.StringFlag{Name: "since", Usage: "only lessons newer than `AGE` (14d, 12h) or a date (2026-11-01)", Destination: &lo.since},
			&cli.IntFlag{Name: "limit", Usage: "at most `N` lessons", Value: 50, Destination: &lo.limit},
		),
		Action: func(*cli.Context) error { return runLessonsList(o, &lo, result) },
	}
}

func runLessonsList(o *options, lo *lessonsListOptions, result *any) error {
	ll, err := lessonLog(o)
	if err != nil {
		return err
	}
	cutoff, err := parseSince(lo.since, o.now())
	if err != nil {
		return err
	}
	res, err := ll.List(learn.LessonFilter{Tag: lo.tag, Scope: lo.scope, Since: cutoff, Agent: lo.who.agent, Task: lo.who.task}, lo.limit)
	if err != nil {
		return err
	}
	*result = res
	if !o.json {
		printLessonList(o.stdout, res.Lessons)
		warnDamaged(o, res.Damaged)
	}
	return nil
}

func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := config.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Time{}, orket.Errorf(orket.EUsage, "write an age such as 14d or 12h, or a date such as 2026-11-01", "--since %q", s)
}

// printLessonList writes one lesson a line, its columns as wide as their
// widest cell; an empty cell is "-".
func printLessonList(w io.Writer, list []learn.LessonSummary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, l := range list {
		fmt.Fprintf(tw, "%.8s\t%s\t%s\t%s\t%s\n", l.ID, l.CreatedAt.Format("2006-01-02 15:04"), orDash(strings.Join(l.Tags, ",")),
			orDash(l.FailedStep), l.Title)
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
