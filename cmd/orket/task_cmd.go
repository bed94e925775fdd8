package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/learn"
)

// taskCommand groups what people do with tasks (docs/verdicts.md, What
// people do): list them, reset a count, resolve an escalation.
func taskCommand(o *options, result *any) *cli.Command {
	return group(o, "task", "list tasks and their attempts; reset a count; resolve an escalation",
		"orket task list|reset TASK|resolve TASK --reason R",
		taskListCommand(o, result), taskResetCommand(o, result), taskResolveCommand(o, result))
}

func taskListCommand(o *options, result *any) *cli.Command {
	var task, agent string
	return &cli.Command{
		Name: "list", Usage: "list tasks per agent: consecutive rejections, escalation, last verdict",
		UsageText: "orket task list [--task T] [--agent A]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "only `TASK`", Destination: &task},
			&cli.StringFlag{Name: "agent", Usage: "only `AGENT`'s attempts", Destination: &agent},
		},
		Action: noArgs(func(c *cli.Context) error {
			r, cfg, err := repoAndConfig(o)
			if err != nil {
				return err
			}
			res, err := learn.Tasks(r, cfg, task, agent)
			if err != nil {
				return err
			}
			*result = res
			if !o.json {
				printTasks(o, res.Tasks)
			}
			return nil
		}),
	}
}

func printTasks(o *options, list []learn.TaskStatus) {
	if len(list) == 0 {
		fmt.Fprintln(o.stdout, "no tasks yet: runs that verify are judged and counted here")
		return
	}
	tw := tabwriter.NewWriter(o.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tAGENT\tREJECTIONS\tSTATE\tLAST")
	for _, t := range list {
		state := "open"
		if t.Escalated {
			state = "ESCALATED (" + t.Escalation.Report + ")"
		}
		last := "-"
		if t.LastRunID != "" {
			last = t.LastVerdict + " " + t.LastRunID
		}
		agent := t.Agent
		if agent == "" {
			agent = "(every agent)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\n", t.Task, agent, t.Rejections, t.Maximum, state, last)
	}
	tw.Flush()
}

func taskResetCommand(o *options, result *any) *cli.Command {
	var agent, reason string
	return &cli.Command{
		Name: "reset", Usage: "start a task's count of rejections over (an escalation stays until resolved)",
		UsageText: "orket task reset TASK [--agent A] [--reason R]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "agent", Usage: "only `AGENT`'s count (default: every agent's)", Destination: &agent},
			&cli.StringFlag{Name: "reason", Usage: "why, kept in the task log", Destination: &reason},
		},
		Action: func(c *cli.Context) error {
			a, err := taskAction(o, c, "TASK")
			if err != nil {
				return err
			}
			a.Task, a.Agent, a.Reason = c.Args().First(), agent, reason
			res, err := learn.ResetTask(a)
			return taskDone(o, result, res, err, fmt.Sprintf("reset task %s: %%d rejection(s) cleared", quoteName(a.Task)))
		},
	}
}

func taskResolveCommand(o *options, result *any) *cli.Command {
	var reason string
	return &cli.Command{
		Name: "resolve", Usage: "end a task's escalation: its runs go on, every count starts over",
		UsageText: "orket task resolve TASK --reason R",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "reason", Usage: "what a person did about it (required)", Destination: &reason},
		},
		Action: func(c *cli.Context) error {
			a, err := taskAction(o, c, "TASK")
			if err != nil {
				return err
			}
			a.Task, a.Reason = c.Args().First(), reason
			res, err := learn.ResolveTask(a)
			return taskDone(o, result, res, err, fmt.Sprintf("resolved task %s: runs of it go on (%%d rejection(s) cleared)", quoteName(a.Task)))
		},
	}
}

func escalateCommand(o *options, result *any) *cli.Command {
	var agent, reason string
	return &cli.Command{
		Name: "escalate", Usage: "escalate a task to a person by hand: its runs stop until it is resolved",
		UsageText: "orket escalate TASK --reason R [--agent A]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "reason", Usage: "why (required)", Destination: &reason},
			&cli.StringFlag{Name: "agent", Usage: "report only `AGENT`'s attempts (runs of every agent stop)", Destination: &agent},
		},
		Action: func(c *cli.Context) error {
			a, err := taskAction(o, c, "TASK")
			if err != nil {
				return err
			}
			a.Task, a.Agent, a.Reason = c.Args().First(), agent, reason
			res, err := learn.EscalateTask(c.Context, a)
			if res != nil && res.Escalation != nil && !o.json {
				fmt.Fprintf(o.stdout, "escalated task %s: report %s\n", quoteName(a.Task), res.Escalation.Report)
			}
			if res != nil {
				*result = res
			}
			var ne *learn.NotifyError
			if errors.As(err, &ne) {
				fmt.Fprintln(o.stderr, "orket: warning: "+ne.Error())
				return nil
			}
			if err != nil {
				return memoryError(err)
			}
			return nil
		},
	}
}

func overrideCommand(o *options, result *any) *cli.Command {
	var reason string
	var apply bool
	return &cli.Command{
		Name: "override", Usage: "accept a rejected run anyway; --apply puts its change back",
		UsageText: "orket override RUN --reason R [--apply]",
		Description: `override logs a person's acceptance of a rejected run with the reason,
starts the count of its agent on its task over and ends the task's
escalation. With --apply the run's kept change is put back in the tree
(under the repository lock; a change that no longer applies writes
nothing).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "reason", Usage: "why the run is accepted (required)", Destination: &reason},
			&cli.BoolFlag{Name: "apply", Usage: "put the run's kept change back in the tree", Destination: &apply, DisableDefaultText: true},
		},
		Action: func(c *cli.Context) error {
			a, err := taskAction(o, c, "RUN")
			if err != nil {
				return err
			}
			a.RunID, a.Reason = c.Args().First(), reason
			res, err := learn.Override(c.Context, a, apply)
			if err != nil {
				return err
			}
			*result = res
			if !o.json {
				fmt.Fprintf(o.stdout, "overrode run %s of task %s (agent %s): %d rejection(s) cleared\n", res.RunID, quoteName(res.Task), res.Agent, res.Cleared)
				if res.Escalation != nil {
					fmt.Fprintf(o.stdout, "the task's escalation is over (report %s)\n", res.Escalation.Report)
				}
				if len(res.Applied) > 0 {
					fmt.Fprintf(o.stdout, "applied its change: %s\n", strings.Join(res.Applied, ", "))
				}
			}
			return nil
		},
	}
}

// taskAction opens the repository for a person's action on a task and
// checks its one argument, named what.
func taskAction(o *options, c *cli.Context, what string) (learn.TaskAction, error) {
	if c.NArg() != 1 {
		return learn.TaskAction{}, orket.Errorf(orket.EUsage, "usage: "+c.Command.UsageText, "orket %s takes one %s, not %d argument(s)", commandPath(c), what, c.NArg())
	}
	r, cfg, err := repoAndConfig(o)
	if err != nil {
		return learn.TaskAction{}, err
	}
	return learn.TaskAction{Repo: r, Config: cfg, By: person(o, r), Now: o.now(), Env: o.environ()}, nil
}

func taskDone(o *options, result *any, res *learn.TaskResult, err error, format string) error {
	if err != nil {
		return memoryError(err)
	}
	*result = res
	if !o.json {
		fmt.Fprintf(o.stdout, format+"\n", res.Cleared)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(o.stderr, "orket: warning: "+w)
	}
	return nil
}

// noArgs is action for a command that takes no arguments: given some,
// the command fails with E_USAGE before action runs.
func noArgs(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() > 0 {
			return orket.Errorf(orket.EUsage, "usage: "+c.Command.UsageText, "orket %s takes no arguments (%s)", commandPath(c), strings.Join(c.Args().Slice(), " "))
		}
		return action(c)
	}
}

// repoAndConfig opens the repository and its configuration (the
// defaults, quietly, when there is no orket.yaml).
func repoAndConfig(o *options) (*orket.Repo, *config.Config, error) {
	r, err := openRepo(o)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := loadConfigQuiet(o, r)
	return r, cfg, err
}

// repoAndDetectedConfig opens the repository and its configuration,
// detected from the project (and said so) when there is no orket.yaml:
// for the commands that verify.
func repoAndDetectedConfig(o *options) (*orket.Repo, *config.Config, error) {
	r, err := openRepo(o)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := loadConfig(o, r)
	return r, cfg, err
}

func memoryError(err error) error { return learn.MemoryError(err) }

// person names who acts: ORKET_USER, git's user.name, or the login.
func person(o *options, r *orket.Repo) string { return learn.Person(r, o.getenv) }
