package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/orket/orket"
	"github.com/orket/orket/learn"
)

// runOptions are orket run's flags.
type runOptions struct {
	scopes          []string
	profile         string
	yes, dryRun     bool
	wait            bool
	strictPreflight bool
	commitMsg       string
	keepOnFail      bool
	base            string
	patch           string
	worktree        bool
	skip            []string
	agent, task     string
	allowProtected  []string
	touch           []string
	argv            []string
}

func runCommand(o *options, result *any) *cli.Command {
	var ro runOptions
	return &cli.Command{
		Name:      "run",
		Usage:     "make an edit a transaction: snapshot, edit within scope, verify, keep or revert",
		UsageText: "orket run [--scope S]... [--profile P] [flags] [--patch FILE|- | --worktree | -- EDIT-COMMAND [ARGS...]]",
		Description: `run snapshots the working tree, applies one edit (a patch, an edit
command, or the uncommitted changes with --worktree), checks that it wrote
only inside --scope, runs the verify profile, and keeps the change if every
required step passes or puts the tree back exactly as it was.

Without an edit source it is a verify-only run: the profile runs on the tree
as it is and nothing is written or reverted.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "scope", Usage: "allow the edit to write `PATH` (a directory or doublestar glob; repeatable)"},
			&cli.StringFlag{Name: "profile", Usage: "verify `PROFILE` from orket.yaml (default: verify.default)", Destination: &ro.profile},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation", Destination: &ro.yes, DisableDefaultText: true},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan and advisories; write nothing", Destination: &ro.dryRun, DisableDefaultText: true},
			&cli.BoolFlag{Name: "wait", Usage: "wait for another run's lock instead of failing with E_LOCKED", Destination: &ro.wait, DisableDefaultText: true},
			&cli.BoolFlag{Name: "strict-preflight", Usage: "stop before the snapshot when a preflight check fails", Destination: &ro.strictPreflight, DisableDefaultText: true},
			&cli.StringFlag{Name: "commit", Usage: "on success, commit exactly the touch set with `MESSAGE`", Destination: &ro.commitMsg},
			&cli.BoolFlag{Name: "keep-on-fail", Usage: "keep a change that fails verification (the lesson is still recorded)", Destination: &ro.keepOnFail, DisableDefaultText: true},
			&cli.StringFlag{Name: "base", Usage: "verify-only: take the touch set as the diff from `REV` to the working tree", Destination: &ro.base},
			&cli.StringFlag{Name: "patch", Usage: "apply the unified diff in `FILE` (- for stdin)", Destination: &ro.patch},
			&cli.BoolFlag{Name: "worktree", Usage: "the uncommitted changes in the working tree are the edit", Destination: &ro.worktree, DisableDefaultText: true},
			&cli.StringSliceFlag{Name: "skip", Usage: "skip the verify step `NAME` (repeatable; also ORKET_SKIP=a,b)"},
			&cli.StringSliceFlag{Name: "allow-protected", Usage: "let the edit change paths under the protect: `GLOB` this time (repeatable; a person's decision)"},
			&cli.StringSliceFlag{Name: "touch", Usage: "declare a `PATH` the edit means to change, for the advisories (repeatable; it widens nothing)"},
			&cli.StringFlag{Name: "agent", Usage: "name who makes the edit (default: ORKET_AGENT, else default)", Destination: &ro.agent},
			&cli.StringFlag{Name: "task", Usage: "name the piece of work across attempts, e.g. an issue id (default: ORKET_TASK, else the scope and profile)", Destination: &ro.task},
		},
		Action: func(c *cli.Context) error {
			ro.scopes = c.StringSlice("scope")
			ro.skip = c.StringSlice("skip")
			ro.allowProtected = c.StringSlice("allow-protected")
			ro.touch = c.StringSlice("touch")
			ro.argv = c.Args().Slice()
			rec, err := runRun(c.Context, o, &ro)
			if rec != nil {
				*result = rec
			}
			return err
		},
	}
}

// runRun is orket run: the flags become a request, the printer listens,
// and the record is rendered.
func runRun(ctx context.Context, o *options, ro *runOptions) (*orket.Record, error) {
	edit, err := editOf(o, ro)
	if err != nil {
		return nil, err
	}
	r, cfg, err := repoAndDetectedConfig(o)
	if err != nil {
		return nil, err
	}
	scopes, err := resolveScopes(r, ro.scopes)
	if err != nil {
		return nil, err
	}
	touch, err := resolveScopes(r, ro.touch)
	if err != nil {
		return nil, err
	}
	out := newRunPrinter(o)
	req := orket.Request{Touch: touch, Repo: r, Config: cfg, Edit: edit, Scope: scopes, Profile: ro.profile, Skip: skips(o, ro),
		AllowProtected: ro.allowProtected,
		Agent:          orDefault(ro.agent, o.getenv("ORKET_AGENT")), Task: orDefault(ro.task, o.getenv("ORKET_TASK")),
		DryRun: ro.dryRun, AutoConfirm: ro.yes, Wait: ro.wait, KeepOnFail: ro.keepOnFail, Commit: ro.commitMsg,
		StrictPreflight: ro.strictPreflight || o.getenv("ORKET_STRICT_PREFLIGHT") == "1",
		Confirm:         func(rec *orket.Record) error { return confirm(o, rec) },
		Env:             orket.Env{Environ: o.environ(), Getenv: o.getenv, Now: o.now},
		Learner:         learn.Loop{}, Output: osFiles(o.rawStdout, o.rawStderr)}
	rec, err := orket.Execute(ctx, req, out)
	if rec == nil {
		return nil, err
	}
	githubReport(o, r.Root, rec)
	// The outcome line: under -q too (as a failure's is), the one line
	// a quiet success prints.
	switch {
	case ro.dryRun && err == nil:
		out.outcome("dry run: nothing was written")
	case err == nil:
		fmt.Fprintln(o.stderr, okText(rec))
	}
	return rec, err
}

// resolveScopes makes --scope values, given relative to the current
// directory as git pathspecs are, repository-relative.
func resolveScopes(r *orket.Repo, given []string) ([]string, error) {
	wd, _ := os.Getwd()
	return learn.ResolveScopes(r, wd, given)
}

// editOf is the edit source the flags name: at most one.
func editOf(o *options, ro *runOptions) (orket.Edit, error) {
	sources := 0
	for _, on := range []bool{ro.patch != "", ro.worktree, len(ro.argv) > 0} {
		if on {
			sources++
		}
	}
	switch {
	case sources > 1:
		return nil, orket.Errorf(orket.EUsage, "give one of --patch, --worktree or -- EDIT-COMMAND", "more than one edit source")
	case ro.base != "" && sources == 1:
		return nil, orket.Errorf(orket.EUsage, "use --base only without an edit source (a verify-only run)", "--base with an edit")
	case ro.patch != "":
		return readPatch(o, ro.patch)
	case ro.worktree:
		return orket.WorktreeEdit{}, nil
	case len(ro.argv) > 0:
		return orket.CommandEdit{Argv: ro.argv}, nil
	}
	return orket.VerifyOnly{Base: ro.base}, nil
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// skips gathers --skip and ORKET_SKIP.
func skips(o *options, ro *runOptions) []string {
	names := append([]string{}, ro.skip...)
	for _, n := range strings.Split(o.getenv("ORKET_SKIP"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// readPatch reads --patch FILE, or stdin for -; stdin is never read
// otherwise.
func readPatch(o *options, name string) (orket.Edit, error) {
	var rd io.Reader
	if name == "-" {
		rd = o.stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, orket.Errorf(orket.EUsage, "pass an existing patch file, or - for stdin", "--patch %s: %v", name, unwrapPathError(err))
		}
		defer f.Close()
		rd = f
	}
	return orket.ReadPatch(name, rd)
}

// confirm asks on a terminal whether to go on.
func confirm(o *options, rec *orket.Record) error {
	f, ok := o.stdin.(*os.File)
	if !ok || !isTerminal(f) || o.getenv("CI") != "" {
		return &orket.ConfirmationError{NoTerminal: true}
	}
	fmt.Fprintf(o.stderr, "Apply the edit to scope %s and verify with %s? [y/N] ", strings.Join(rec.Request.Scope, ", "), rec.Request.Profile)
	line, _ := bufio.NewReader(o.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return &orket.ConfirmationError{}
}

func okText(rec *orket.Record) string {
	switch {
	case rec.Request.EditSource == "none":
		return fmt.Sprintf("orket: OK: profile %s passed", rec.Request.Profile)
	case rec.Commit != "":
		return fmt.Sprintf("orket: OK: profile %s passed; committed %d file(s) as %.12s", rec.Request.Profile, rec.Plan.TouchCount, rec.Commit)
	}
	return fmt.Sprintf("orket: OK: profile %s passed; the change to %d file(s) is kept", rec.Request.Profile, rec.Plan.TouchCount)
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// osFiles returns the writers that are files of the process (its real
// stdout and stderr, not a test's buffer).
func osFiles(ws ...io.Writer) []*os.File {
	var out []*os.File
	for _, w := range ws {
		if f, ok := w.(*os.File); ok {
			out = append(out, f)
		}
	}
	return out
}
