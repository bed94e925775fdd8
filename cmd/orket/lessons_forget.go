package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
)

// lessonsForgetOptions select the lessons to forget: one id (or a unique
// prefix), or every lesson with a tag and/or of a failed step.
type lessonsForgetOptions struct {
	id, tag, step string
}

func lessonsForgetCommand(o *options, result *any) *cli.Command {
	var fo lessonsForgetOptions
	return &cli.Command{
		Name: "forget", Usage: "remove lessons: one by id, or all with a tag or of a step",
		UsageText: "orket lessons forget ID | --tag T | --step NAME",
		Description: `forget removes lessons from the log, rewriting it under the lock as prune
does: one lesson by its id (or a unique prefix, as lessons show takes), or
every lesson with --tag T, of the failed step --step NAME, or both.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tag", Usage: "forget the lessons with `TAG`", Destination: &fo.tag},
			&cli.StringFlag{Name: "step", Usage: "forget the lessons about the failed step `NAME`", Destination: &fo.step},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return orket.Errorf(orket.EUsage, "give one id, or --tag/--step",
					"lessons forget takes one lesson id, not %d arguments (%s)", c.NArg(), strings.Join(c.Args().Slice(), " "))
			}
			fo.id = c.Args().First()
			return runLessonsForget(c.Context, o, &fo, result)
		},
	}
}

func runLessonsForget(ctx context.Context, o *options, fo *lessonsForgetOptions, result *any) error {
	ll, err := lessonLog(o)
	if err != nil {
		return err
	}
	res, err := ll.Forget(ctx, fo.id, fo.tag, fo.step)
	if err != nil {
		return err
	}
	*result = res
	if !o.json {
		fmt.Fprintf(o.stdout, "removed %d lesson(s)\n", *res.Removed)
	}
	return nil
}
