package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/classify"
	"github.com/orket/orket/lessons"
)

func lessonsReclassifyCommand(o *options, result *any) *cli.Command {
	return &cli.Command{
		Name: "reclassify", Usage: "apply the current rules to every stored lesson", UsageText: "orket lessons reclassify",
		Description: "Stored lessons keep their ids; their classification and advice are recomputed from their output tails.",
		Action:      func(c *cli.Context) error { return runLessonsReclassify(c.Context, o, result) },
	}
}

func runLessonsReclassify(ctx context.Context, o *options, result *any) error {
	r, cfg, s, err := lessonStore(o)
	if err != nil {
		return err
	}
	unlock, err := lockShared(ctx, o, r, "lessons reclassify")
	if err != nil {
		return err
	}
	defer unlock()
	c := classify.New(cfg.Classify.Rules)
	n, err := s.Rewrite(func(l *lessons.Lesson) bool {
		cl := c.Classify(l.Verify.OutputTail)
		next := lessons.Classification{Tags: cl.Tags, Confidence: cl.Confidence, Signals: cl.Signals, FirstError: cl.FirstError}
		before, _ := json.Marshal(withoutBaseline(l.Classification))
		after, _ := json.Marshal(next)
		if string(before) == string(after) {
			return false
		}
		l.Classification = next
		l.Advice = classify.AdviceFor(cl, l.Verify.FailedCommand)
		return true
	})
	if err != nil {
		return readError(err)
	}
	*result = map[string]any{"code": orket.OK, "reclassified": n}
	if !o.json {
		fmt.Fprintf(o.stdout, "reclassified %d lesson(s)\n", n)
	}
	return nil
}

// withoutBaseline is c without what only a run knows: which matched lines
// the step's last passing run did not print (Signal.New). Reclassifying
// has no baseline, so that difference is not a change of rules.
func withoutBaseline(c lessons.Classification) lessons.Classification {
	c.Signals = append([]classify.Signal(nil), c.Signals...)
	for i := range c.Signals {
		c.Signals[i].New = false
	}
	return c
}
