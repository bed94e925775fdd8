package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket/internal/inert"
	"github.com/orket/orket/learn"
)

// lessonsCommand groups the commands that read and maintain the lesson log,
// one file each.
func lessonsCommand(o *options, result *any) *cli.Command {
	return group(o, "lessons", "read and maintain the lesson log; propose, review and decide guardrails",
		"orket lessons list|show ID|stats|prune|forget ID|reclassify|propose|review|approve ID|reject ID|import FILE...",
		lessonsListCommand(o, result), lessonsShowCommand(o, result), lessonsStatsCommand(o, result),
		lessonsPruneCommand(o, result), lessonsForgetCommand(o, result), lessonsReclassifyCommand(o, result),
		lessonsProposeCommand(o, result), lessonsReviewCommand(o, result), lessonsApproveCommand(o, result), lessonsRejectCommand(o, result),
		lessonsImportCommand(o, result))
}

// lessonLog opens the repository, its configuration (if any) and its
// lesson log.
func lessonLog(o *options) (learn.LessonLog, error) {
	r, cfg, err := repoAndConfig(o)
	if err != nil {
		return learn.LessonLog{}, err
	}
	return learn.LessonLog{Repo: r, Config: cfg, Now: o.now}, nil
}

// whoFilter selects lessons by --agent and --task (docs/verdicts.md,
// Naming the agent and the task).
type whoFilter struct{ agent, task string }

func (f *whoFilter) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "agent", Usage: "only lessons of runs by `AGENT`", Destination: &f.agent},
		&cli.StringFlag{Name: "task", Usage: "only lessons of runs of `TASK`", Destination: &f.task},
	}
}

func warnDamaged(o *options, d []learn.Damaged) {
	if len(d) > 0 {
		fmt.Fprintf(o.stderr, "orket: warning: skipped %d damaged line(s) of the lesson log (first: line %d: %s)\n", len(d), d[0].Line, d[0].Err)
	}
}

// clipRunes shortens s, text from outside orket, to at most n runes
// (marking the cut) and makes it one inert line (package inert).
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return inert.Text(s)
	}
	return inert.Text(string(r[:n-1])) + "…"
}

// orNone names an empty key, so that no line of the stats is blank.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
