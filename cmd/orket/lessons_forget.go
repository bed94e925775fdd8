package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/lessons"
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
	switch {
	case fo.id == "" && fo.tag == "" && fo.step == "":
		return orket.Errorf(orket.EUsage, "give a lesson id (orket lessons list shows them), --tag T or --step NAME", "lessons forget needs a lesson to forget")
	case fo.id != "" && (fo.tag != "" || fo.step != ""):
		return orket.Errorf(orket.EUsage, "give the id alone, or --tag/--step without an id", "lessons forget takes an id or --tag/--step, not both")
	}
	r, _, s, err := lessonStore(o)
	if err != nil {
		return err
	}
	unlock, err := lockShared(ctx, o, r, "lessons forget")
	if err != nil {
		return err
	}
	defer unlock()
	selected := func(l *lessons.Lesson) bool {
		return (fo.tag == "" || contains(l.Classification.Tags, fo.tag)) && (fo.step == "" || l.Verify.FailedStep == fo.step)
	}
	if fo.id != "" {
		id, err := uniqueLesson(s, fo.id)
		if err != nil {
			return err
		}
		selected = func(l *lessons.Lesson) bool { return l.ID == id }
	}
	n, err := s.Remove(selected)
	if err != nil {
		return readError(err)
	}
	*result = map[string]any{"code": orket.OK, "removed": n}
	if !o.json {
		fmt.Fprintf(o.stdout, "removed %d lesson(s)\n", n)
	}
	return nil
}

// uniqueLesson returns the id of the one lesson whose id starts with
// prefix, or a usage error when none or several do.
func uniqueLesson(s *lessons.Store, prefix string) (string, error) {
	var found []string
	if _, err := s.Each(func(l *lessons.Lesson) error {
		if strings.HasPrefix(l.ID, prefix) && !contains(found, l.ID) {
			found = append(found, l.ID)
		}
		return nil
	}); err != nil {
		return "", readError(err)
	}
	switch len(found) {
	case 0:
		return "", orket.Errorf(orket.EUsage, "orket lessons list shows the ids", "no lesson %q", prefix)
	case 1:
		return found[0], nil
	}
	return "", orket.Errorf(orket.EUsage, "give more of the id", "%q names %d lessons", prefix, len(found))
}
