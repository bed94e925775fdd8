package main

import (
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
)

func lessonsShowCommand(o *options, result *any) *cli.Command {
	return &cli.Command{
		Name: "show", Usage: "print one lesson whole", UsageText: "orket lessons show ID",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return orket.Errorf(orket.EUsage, "orket lessons list shows the ids", "lessons show needs one lesson id (or a unique prefix)")
			}
			ll, err := lessonLog(o)
			if err != nil {
				return err
			}
			res, err := ll.Show(c.Args().First())
			if err != nil {
				return err
			}
			*result = res
			if !o.json {
				b, err := json.MarshalIndent(res.Lesson, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(o.stdout, string(b))
			}
			return nil
		},
	}
}
