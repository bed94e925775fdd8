package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/learn"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/txn"
)

// lessonsCommand groups the commands that read and maintain the lesson log,
// one file each.
func lessonsCommand(o *options, result *any) *cli.Command {
	return group(o, "lessons", "read and maintain the lesson log; propose, review and decide guardrails",
		"orket lessons list|show ID|stats|prune|forget ID|reclassify|propose|review|approve ID|reject ID|import FILE...",
		lessonsListCommand(o, result), lessonsShowCommand(o, result), lessonsStatsCommand(o, result),
		lessonsPruneCommand(o, result), lessonsForgetCommand(o, result), lessonsReclassifyCommand(o, result),
		lessonsProposeCommand(o, result), lessonsReviewCommand(o, result), lessonsApproveCommand(o, result), lessonsRejectCommand(o, result),
		lessonsImportCommand(o, result))
}

// lessonStore opens the repository, its configuration (if any) and its
// lesson log.
func lessonStore(o *options) (*txn.Repo, *config.Config, *lessons.Store, error) {
	r, err := openRepo(o)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, err := loadConfigQuiet(o, r)
	if err != nil {
		return nil, nil, nil, err
	}
	return r, cfg, &lessons.Store{Path: learn.LessonPath(r, cfg), MaxPerAgent: cfg.Lessons.Retention.MaxEntriesPerAgent}, nil
}

// lockShared takes the repository lock (shared, waiting) for a command
// that rewrites the log, so that a mutating run never sees .orket change
// under it.
func lockShared(ctx context.Context, o *options, r *txn.Repo, name string) (func(), error) {
	unlock, err := r.Lock(ctx, false, true, txn.Holder{RunID: name, PID: os.Getpid(), Started: o.now(), Command: "orket " + name})
	if err != nil {
		return nil, &orket.Error{Code: orket.EInternal, Err: err, Msg: "take the repository lock: " + err.Error(), Hint: "check that .git is writable"}
	}
	return unlock, nil
}

type lessonSummary struct {
	ID            string    `json:"id"`
	CreatedAt     time.Time `json:"created_at"`
	Tags          []string  `json:"tags"`
	FailedStep    string    `json:"failed_step"`
	FailedCommand string    `json:"failed_command"`
	Title         string    `json:"title"`
	Scope         []string  `json:"scope"`
	RunID         string    `json:"run_id"`
	Agent         string    `json:"agent,omitempty"`
	Task          string    `json:"task,omitempty"`
}

func summarize(l *lessons.Lesson) lessonSummary {
	return lessonSummary{ID: l.ID, CreatedAt: l.CreatedAt, Tags: l.Classification.Tags, FailedStep: l.Verify.FailedStep,
		FailedCommand: l.Verify.FailedCommand, Title: l.Advice.Title, Scope: l.Request.Scope, RunID: l.Outcome.RunID,
		Agent: l.Request.Agent, Task: l.Request.Task}
}

// whoFilter selects lessons by --agent and --task (SPEC 8.1). Lessons
// recorded before agents were named are the default agent's.
type whoFilter struct{ agent, task string }

func (f *whoFilter) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "agent", Usage: "only lessons of runs by `AGENT`", Destination: &f.agent},
		&cli.StringFlag{Name: "task", Usage: "only lessons of runs of `TASK`", Destination: &f.task},
	}
}

func (f whoFilter) match(l *lessons.Lesson) bool {
	agent := l.Request.Agent
	if agent == "" {
		agent = orket.DefaultAgent
	}
	return (f.agent == "" || agent == f.agent) && (f.task == "" || l.Request.Task == f.task)
}

func byCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

func warnDamaged(o *options, d []lessons.Damaged) {
	if len(d) > 0 {
		fmt.Fprintf(o.stderr, "orket: warning: skipped %d damaged line(s) of the lesson log (first: line %d: %s)\n", len(d), d[0].Line, d[0].Err)
	}
}

func readError(err error) error {
	return &orket.Error{Code: orket.EInternal, Err: err, Msg: "lesson log: " + err.Error(), Hint: "check the file's permissions"}
}

// clipRunes shortens s to at most n runes, marking the cut.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
