package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/internal/inert"
	"github.com/orket/orket/learn"
)

// doctorCommand is orket doctor: is this repository ready for agents?
func doctorCommand(o *options, result *any) *cli.Command {
	var profile string
	return &cli.Command{
		Name:      "doctor",
		Usage:     "check that the repository is ready for agents: the profile on HEAD, tools, sandbox, memory",
		UsageText: "orket doctor [--profile P] [--json]",
		Description: `doctor runs the verify profile once on a clean copy of HEAD's committed
tree (linking the work tree's installed dependencies: node_modules, .venv,
venv) and reports, in one table, each step's result and time, with the
cause line of a failure; the programs the steps start that are missing; the
kernel sandbox and what it opens; the fsmonitor; the memory's size and how
it is shared. It exits 0 when the repository is ready for agents, and with
E_NOT_READY when a required step fails on HEAD (a red baseline: every
agent's runs would fail) or a tool is missing. Its result is kept as the
baseline of a clean tree, so a first failing run on it reuses it.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Usage: "verify `PROFILE` (default: verify.default)", Destination: &profile},
		},
		Action: noArgs(func(c *cli.Context) error {
			r, cfg, err := repoAndConfig(o)
			if err != nil {
				return err
			}
			rep, err := learn.Doctor(c.Context, learn.DoctorRequest{Repo: r, Config: cfg, Profile: profile,
				Env: orket.Env{Environ: o.environ(), Getenv: o.getenv, Now: o.now}})
			if rep != nil {
				*result = rep
				if !o.json {
					printDoctor(o, rep)
				}
			}
			return err
		}),
	}
}

func printDoctor(o *options, rep *learn.DoctorReport) {
	w := o.stdout
	head := rep.Head
	if len(head) > 12 {
		head = head[:12]
	}
	fmt.Fprintf(w, "orket doctor: profile %s on a clean copy of HEAD %s\n\n", rep.Profile, head)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tRESULT\tTIME\tCAUSE")
	for _, s := range rep.Steps {
		res := "ok"
		switch {
		case s.Status == "skipped":
			res = "skipped"
		case s.Status == "failed" && !s.Required:
			res = "failed (optional), " + s.Exit
		case s.Status == "failed":
			res = "FAILED, " + s.Exit
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", inert.Text(s.Name), res, dur(s.DurationMS), inert.Text(s.Cause))
	}
	tw.Flush()
	fmt.Fprintln(w)
	missing := "none"
	if len(rep.Missing) > 0 {
		missing = strings.Join(rep.Missing, ", ")
	}
	fmt.Fprintf(w, "missing tools: %s\n", missing)
	sb := rep.Sandbox
	switch {
	case sb.Mode == "off":
		fmt.Fprintln(w, "sandbox: off (edit commands may write anywhere the user may; the barrier still reverts writes outside the scope)")
	case sb.Available:
		fmt.Fprintf(w, "sandbox: %s, enforced by the kernel (Landlock): edit commands write the scope%s\n", sb.Mode, beside(sb.Write))
	default:
		fmt.Fprintf(w, "sandbox: %s, unavailable here (%s): the barrier alone reverts writes outside the scope\n", sb.Mode, sb.Reason)
	}
	mon := rep.FSMonitor
	if mon == "" {
		mon = "none"
	}
	watchman := "watchman not installed"
	if rep.Watchman {
		watchman = "watchman installed"
	}
	fmt.Fprintf(w, "fsmonitor: %s (%s)\n", mon, watchman)
	m := rep.Memory
	shared := "shared by hand (orket sync)"
	if m.Sync == "auto" {
		shared = "shared at every run with " + m.Remote
	}
	last := "never synced"
	if m.LastSync != nil {
		last = "last synced " + m.LastSync.Format("2006-01-02 15:04")
	}
	fmt.Fprintf(w, "memory: %d lessons (%d bytes), %s, %s\n", m.Lessons, m.Bytes, shared, last)
	for _, warn := range rep.Warnings {
		fmt.Fprintln(o.stderr, "orket: warning: "+warn)
	}
	if rep.Ready {
		fmt.Fprintln(w, "\nready for agents")
		return
	}
	fmt.Fprintln(w, "\nnot ready for agents:")
	for _, p := range rep.Problems {
		fmt.Fprintln(w, "  - "+inert.Text(p))
	}
}

func beside(write []string) string {
	if len(write) == 0 {
		return ""
	}
	return " and " + strings.Join(write, ", ")
}
