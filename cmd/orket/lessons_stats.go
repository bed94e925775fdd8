package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket/internal/rank"
	"github.com/orket/orket/learn"
)

func lessonsStatsCommand(o *options, result *any) *cli.Command {
	var who whoFilter
	return &cli.Command{
		Name: "stats", Usage: "count lessons per tag, scope and failed command", UsageText: "orket lessons stats [--agent A] [--task T]",
		Flags: who.flags(),
		Action: func(*cli.Context) error {
			ll, err := lessonLog(o)
			if err != nil {
				return err
			}
			res, err := ll.Stats(learn.LessonFilter{Agent: who.agent, Task: who.task})
			if err != nil {
				return err
			}
			*result = res
			if !o.json {
				printLessonStats(o, res)
			}
			return nil
		},
	}
}

func printLessonStats(o *options, res *learn.LessonStats) {
	fmt.Fprintf(o.stdout, "%d lessons\n", res.Total)
	for _, sec := range []struct {
		name string
		m    map[string]int
	}{{"tags", res.Tags}, {"scopes", res.Scopes}, {"failed commands", res.FailedCommands}} {
		fmt.Fprintf(o.stdout, "%s:\n", sec.name)
		for _, k := range rank.ByCount(sec.m) {
			fmt.Fprintf(o.stdout, "  %5d  %s\n", sec.m[k], k)
		}
	}
	warnDamaged(o, res.Damaged)
}
