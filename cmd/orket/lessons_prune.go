package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket/config"
)

func lessonsPruneCommand(o *options, result *any) *cli.Command {
	return &cli.Command{
		Name: "prune", Usage: "apply retention (lessons.retention) now", UsageText: "orket lessons prune",
		Action: func(c *cli.Context) error {
			ll, err := lessonLog(o)
			if err != nil {
				return err
			}
			res, err := ll.Prune(c.Context)
			if err != nil {
				return err
			}
			*result = res
			if !o.json {
				fmt.Fprintf(o.stdout, "removed %d lesson(s) (%s)\n", *res.Removed, retentionText(ll.Config.Lessons.Retention))
			}
			return nil
		},
	}
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
