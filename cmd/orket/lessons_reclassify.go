package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"
)

func lessonsReclassifyCommand(o *options, result *any) *cli.Command {
	return &cli.Command{
		Name: "reclassify", Usage: "apply the current rules to every stored lesson", UsageText: "orket lessons reclassify",
		Description: "Stored lessons keep their ids; their classification and advice are recomputed from their output tails.",
		Action:      func(c *cli.Context) error { return runLessonsReclassify(c.Context, o, result) },
	}
}

func runLessonsReclassify(ctx context.Context, o *options, result *any) error {
	ll, err := lessonLog(o)
	if err != nil {
		return err
	}
	res, err := ll.Reclassify(ctx)
	if err != nil {
		return err
	}
	*result = res
	if !o.json {
		fmt.Fprintf(o.stdout, "reclassified %d lesson(s)\n", *res.Reclassified)
	}
	return nil
}
