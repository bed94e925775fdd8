package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/learn"
)

func syncCommand(o *options, result *any) *cli.Command {
	var pull, push bool
	return &cli.Command{
		Name:      "sync",
		Usage:     "share the memory (lessons, verdicts, feedback, guardrails) with a remote through git",
		UsageText: "orket sync [REMOTE] [--pull|--push]",
		Description: `sync fetches refs/orket/memory from REMOTE (a remote's name, a URL or a
path; default memory.remote, else origin), merges it with this clone's
memory by record, writes the merge into .orket, commits it and pushes it,
retrying with backoff when another clone pushed first. --pull fetches and
merges only; --push (the default) also publishes. Only redacted records
within retention leave the clone. It uses the credentials git would: the
ssh agent and keys, git's credential helpers. See docs/sync.md.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "pull", Usage: "fetch and merge into .orket only; publish nothing", Destination: &pull, DisableDefaultText: true},
			&cli.BoolFlag{Name: "push", Usage: "fetch, merge and publish (the default)", Destination: &push, DisableDefaultText: true},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Len() > 1 {
				return orket.Errorf(orket.EUsage, "orket sync [REMOTE] [--pull|--push]", "name at most one remote")
			}
			if pull && push {
				return orket.Errorf(orket.EUsage, "--pull only fetches and merges; --push (the default) also publishes", "--pull and --push exclude each other")
			}
			r, cfg, err := repoAndConfig(o)
			if err != nil {
				return err
			}
			res, err := learn.Sync(c.Context, learn.SyncRequest{Repo: r, Config: cfg, Remote: c.Args().First(), Pull: pull,
				Env: orket.Env{Environ: o.environ(), Getenv: o.getenv, Now: o.now}})
			if err != nil {
				return err
			}
			*result = res
			if o.json {
				return nil
			}
			w := o.stdout
			verb := "synced with"
			if pull {
				verb = "pulled from"
			}
			fmt.Fprintf(w, "%s %s (%s): %d record(s) received, %d sent", verb, res.Remote, res.URL, res.Received, res.Sent)
			switch {
			case res.Pushed:
				fmt.Fprint(w, "; pushed")
			case pull && res.Sent > 0:
				fmt.Fprint(w, " on the next orket sync")
			case res.Published:
				fmt.Fprint(w, "; nothing new to push")
			}
			fmt.Fprintln(w)
			names := make([]string, 0, len(res.Logs))
			for name := range res.Logs {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				if n := res.Logs[name]; n.Received+n.Sent+n.Pruned > 0 {
					fmt.Fprintf(w, "  %s: %d received, %d sent", name, n.Received, n.Sent)
					if n.Pruned > 0 {
						fmt.Fprintf(w, ", %d pruned (retention)", n.Pruned)
					}
					fmt.Fprintln(w)
				}
			}
			if res.Memory != "" {
				fmt.Fprintf(w, "  memory/AGENT_MEMORY.md: %s\n", res.Memory)
			}
			if res.Versions > 0 {
				fmt.Fprintf(w, "  %d guardrails version(s) received\n", res.Versions)
			}
			for _, cl := range res.Clashes {
				fmt.Fprintf(w, "  guardrails %s v%d was written differently on two clones: kept as a proposal (orket lessons review)\n", cl.Agent, cl.Version)
			}
			return nil
		},
	}
}

func lessonsImportCommand(o *options, result *any) *cli.Command {
	return &cli.Command{
		Name: "import", Usage: "merge JSON-lines files from elsewhere (a CI artifact, the origin project's lessons) into the memory",
		UsageText: "orket lessons import FILE...",
		Description: `import appends to .orket's logs the records of the files that they do not
hold yet, each to the log its schema_version names (lessons, including
the origin project's core_pillars/failure_lesson/v1; evaluations;
feedback; task events; proposals). Known ids are skipped; other schemas
and damaged lines are counted, not imported. Records are redacted.`,
		Action: func(c *cli.Context) error {
			if !c.Args().Present() {
				return orket.Errorf(orket.EUsage, "orket lessons import artifact/failure_lessons.jsonl ...", "name the files to import")
			}
			r, cfg, err := repoAndConfig(o)
			if err != nil {
				return err
			}
			res, err := learn.Import(c.Context, learn.ImportRequest{Repo: r, Config: cfg, Files: c.Args().Slice(),
				Env: orket.Env{Environ: o.environ(), Getenv: o.getenv, Now: o.now}})
			if err != nil {
				return err
			}
			*result = res
			if o.json {
				return nil
			}
			for _, f := range res.Files {
				var added []string
				for log, n := range f.Added {
					added = append(added, fmt.Sprintf("%d to %s", n, log))
				}
				sort.Strings(added)
				fmt.Fprintf(o.stdout, "%s: %d record(s): added %s; %d known", f.Path, f.Records, orNone(strings.Join(added, ", ")), f.Known)
				if f.Unknown > 0 {
					fmt.Fprintf(o.stdout, "; %d of an unknown schema", f.Unknown)
				}
				if f.Damaged > 0 {
					fmt.Fprintf(o.stdout, "; %d damaged line(s)", f.Damaged)
				}
				fmt.Fprintln(o.stdout)
			}
			return nil
		},
	}
}
