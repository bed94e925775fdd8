package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
)

func lessonsPruneCommand(o *options, result *any) *cli.Command {
	return &cli.Command{
		Name: "prune", Usage: "apply retention (lessons.retention) now", UsageText: "orket lessons prune",
		Action: func(c *cli.Context) error { return runLessonsPrune(c.Context, o, result) },
	}
}

func runLessonsPrune(ctx context.Context, o *options, result *any) error {
	r, cfg, s, err := lessonStore(o)
	if err != nil {
		return err
	}
	unlock, err := lockShared(ctx, o, r, "lessons prune")
	if err != nil {
		return err
	}
	defer unlock()
	keep := cfg.Lessons.Retention
	n, err := s.Prune(keep.MaxEntries, keep.MaxAge, o.now())
	if err != nil {
		return readError(err)
	}
	*result = map[string]any{"code": orket.OK, "removed": n}
	if !o.json {
		fmt.Fprintf(o.stdout, "removed %d lesson(s) (%s)\n", n, retentionText(keep))
	}
	return nil
}

// retentionText says what retention keeps, durations as orket.yaml
// spells them (90d, not 2160h0m0s).
func retentionText(keep config.Retention) string {
	count, age := "any number", "of any age"
	if keep.MaxEntries > 0 {
		count = fmt.Sprintf("at most %d", keep.MaxEntries)
	}
	if keep.MaxAge > 0 {
		age = "none older than " + config.FormatDuration(keep.MaxAge)
	}
	return "keeping " + count + ", " + age
}
