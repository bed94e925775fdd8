package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/lessons"
)

func lessonsShowCommand(o *options, result *any) *cli.Command {
	return &cli.Command{
		Name: "show", Usage: "print one lesson whole", UsageText: "orket lessons show ID",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return orket.Errorf(orket.EUsage, "orket lessons list shows the ids", "lessons show needs one lesson id (or a unique prefix)")
			}
			return runLessonsShow(o, c.Args().First(), result)
		},
	}
}

func runLessonsShow(o *options, want string, result *any) error {
	_, _, s, err := lessonStore(o)
	if err != nil {
		return err
	}
	var found []*lessons.Lesson
	if _, err := s.Each(func(l *lessons.Lesson) error {
		if strings.HasPrefix(l.ID, want) {
			found = append(found, l)
		}
		return nil
	}); err != nil {
		return readError(err)
	}
	switch len(found) {
	case 0:
		return orket.Errorf(orket.EUsage, "orket lessons list shows the ids", "no lesson %q", want)
	case 1:
	default:
		return orket.Errorf(orket.EUsage, "give more of the id", "%q names %d lessons", want, len(found))
	}
	*result = map[string]any{"code": orket.OK, "lesson": found[0]}
	if !o.json {
		b, err := json.MarshalIndent(found[0], "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(o.stdout, string(b))
	}
	return nil
}
