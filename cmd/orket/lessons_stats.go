package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/lessons"
)

func lessonsStatsCommand(o *options, result *any) *cli.Command {
	var who whoFilter
	return &cli.Command{
		Name: "stats", Usage: "count lessons per tag, scope and failed command", UsageText: "orket lessons stats [--agent A] [--task T]",
		Flags:  who.flags(),
		Action: func(*cli.Context) error { return runLessonsStats(o, who, result) },
	}
}

func runLessonsStats(o *options, who whoFilter, result *any) error {
	_, _, s, err := lessonStore(o)
	if err != nil {
		return err
	}
	tags, scopes, cmds := map[string]int{}, map[string]int{}, map[string]int{}
	total := 0
	damaged, err := s.Each(func(l *lessons.Lesson) error {
		if !who.match(l) {
			return nil
		}
		total++
		if len(l.Classification.Tags) == 0 {
			tags["(none)"]++
		}
		for _, t := range l.Classification.Tags {
			tags[t]++
		}
		scopes[orNone(strings.Join(l.Request.Scope, ","))]++
		cmds[orNone(l.Verify.FailedCommand)]++
		return nil
	})
	if err != nil {
		return readError(err)
	}
	*result = map[string]any{"code": orket.OK, "total": total, "damaged_lines": len(damaged), "tags": tags, "scopes": scopes, "failed_commands": cmds}
	if o.json {
		return nil
	}
	fmt.Fprintf(o.stdout, "%d lessons\n", total)
	for _, sec := range []struct {
		name string
		m    map[string]int
	}{{"tags", tags}, {"scopes", scopes}, {"failed commands", cmds}} {
		fmt.Fprintf(o.stdout, "%s:\n", sec.name)
		for _, k := range byCount(sec.m) {
			fmt.Fprintf(o.stdout, "  %5d  %s\n", sec.m[k], k)
		}
	}
	warnDamaged(o, damaged)
	return nil
}

// orNone names an empty key, so that no line of the stats is blank.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
