package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/learn"
)

// reasonWait is how long orket reject waits for a person's reason (a
// variable only for the tests, which set it through their TestMain).
var reasonWait = 30 * time.Second

func rejectCommand(o *options, result *any) *cli.Command {
	var req learn.RejectRequest
	return &cli.Command{
		Name:      "reject",
		Usage:     "a reviewer's no: take back a kept change, and learn why",
		UsageText: "orket reject [RUN] [--reason TEXT] [--type code|test|docs|config|other] [--item NAME] [--no-undo]",
		Description: `reject records a reviewer's rejection of a change a run kept (the latest
kept run, or RUN): the reason, its category and the action learned from it
go to .orket/memory/feedback.jsonl and AGENT_MEMORY.md, and the next runs
of the agent are told. While the tree still holds the change, it is taken
out (a --commit run's branch moves back to the parent) and kept as
.orket/rejected/<run-id>.patch, which git apply restores. Without --reason,
orket asks once on a terminal (30 s, Enter to skip).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "reason", Usage: "why the change was rejected, in your words (any language)", Destination: &req.Reason},
			&cli.StringFlag{Name: "type", Usage: "what was rejected: code, test, docs, config or other (default: from the paths)", Destination: &req.Type},
			&cli.StringFlag{Name: "item", Usage: "name what was rejected (default: the run's scope)", Destination: &req.Item},
			&cli.BoolFlag{Name: "no-undo", Usage: "record only; leave the change in the tree", Destination: &req.NoUndo, DisableDefaultText: true},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return orket.Errorf(orket.EUsage, "usage: "+c.Command.UsageText, "orket reject takes one run id, not %d arguments", c.NArg())
			}
			r, cfg, err := repoAndConfig(o)
			if err != nil {
				return err
			}
			req.Repo, req.Config, req.RunID = r, cfg, c.Args().First()
			req.By = person(o, r)
			req.Env = orket.Env{Environ: o.environ(), Getenv: o.getenv, Now: o.now}
			req.AskReason = func() string { return askReason(o) }
			res, err := learn.Reject(c.Context, req)
			if err != nil {
				return err
			}
			*result = res
			printRejected(o, res)
			return nil
		},
	}
}

// askReason asks a person at a terminal why, once, and waits at most
// reasonWait; without a terminal (an agent, CI) it asks no one.
func askReason(o *options) string {
	f, ok := o.stdin.(*os.File)
	if !ok || !isTerminal(f) || o.getenv("CI") != "" || o.json {
		return ""
	}
	fmt.Fprint(o.stderr, "Why was it rejected? It helps the next run. Enter to skip: ")
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(f).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		return strings.TrimSpace(s)
	case <-time.After(reasonWait):
		fmt.Fprintf(o.stderr, "\n(no answer in %s: recorded without a reason)\n", reasonWait)
		return ""
	}
}

func printRejected(o *options, res *learn.RejectResult) {
	if o.json {
		return
	}
	w := o.stdout
	fmt.Fprintf(w, "rejected run %s: %s (category %s)\n", res.RunID, res.ArtifactName, res.Category)
	fmt.Fprintf(w, "  learned: %s\n", res.LearnedAction)
	if u := res.Undo; u != nil {
		switch u.Status {
		case "undone":
			fmt.Fprintf(w, "  undone: the change is out of the tree and kept in %s (git apply %s brings it back)\n", u.Patch, u.Patch)
			if u.Branch != "" {
				fmt.Fprintf(w, "  branch %s moved back from %.12s to %.12s\n", strings.TrimPrefix(u.Branch, "refs/heads/"), u.Commit, u.Parent)
			}
		case "diverged":
			fmt.Fprintf(w, "  not undone: the tree has moved on since the run (%s); recorded only\n", strings.Join(u.Diverged, ", "))
		default:
			fmt.Fprintf(w, "  not undone: %s\n", u.Note)
		}
	}
	pd := res.PatternsDetected
	if pd.ThresholdExceeded {
		for cat, pct := range pd.Percentages {
			if cat == res.Category {
				fmt.Fprintf(w, "  pattern: %s is %.0f%% of this agent's recent rejections; the next runs are told\n", cat, float64(pct))
			}
		}
	}
	if res.Learning != "" && res.LearningSource == learn.SourceSummarizer {
		fmt.Fprintf(w, "  memory: %s\n", res.Learning)
	}
	fmt.Fprintf(w, "  recorded in %s\n", res.Memory)
	if a := res.Attempt; a != nil {
		switch {
		case res.Escalation != nil:
			fmt.Fprintf(w, "  task %s: %d rejections in a row (this one in review): escalated (%s)\n", quoteName(a.Task), *a.Rejections, res.Escalation.Report)
		case a.Maximum > 0:
			fmt.Fprintf(w, "  task %s: rejection %d of %d before escalation (this one in review)\n", quoteName(a.Task), *a.Rejections, a.Maximum)
		default:
			fmt.Fprintf(w, "  task %s: rejection %d in a row (this one in review)\n", quoteName(a.Task), *a.Rejections)
		}
	}
	printProposals(o, res.Proposals)
	for _, warn := range res.Warnings {
		fmt.Fprintln(o.stderr, "orket: warning: "+warn)
	}
}
