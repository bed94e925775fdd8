package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/inert"
)

// options carries what every command needs: the streams, the environment
// and the global flags. Tests build their own.
type options struct {
	stdin io.Reader
	// stdout and stderr are inert (package inert): a control character
	// that came from an edit, a tool or a remote is shown, never acted on.
	// Only orket's own colours are let through, by the run's printer.
	stdout, stderr *inert.Writer
	// rawStdout and rawStderr are the process's streams: for terminal
	// checks, a review's Backspace, and a step's output streamed under -v
	// as the tool wrote it.
	rawStdout, rawStderr io.Writer
	getenv               func(string) string
	environ              func() []string
	now                  func() time.Time

	json, quiet, verbose, noColor bool
	repoDir, configFile           string
	stderrTTY                     bool // human output may use a live line and colour
}

// Main runs orket with args (args[0] is the program name) and returns the
// exit status. It never calls os.Exit, so deferred cleanups always run.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o := &options{stdin: stdin, stdout: inert.NewWriter(stdout), stderr: inert.NewWriter(stderr), rawStdout: stdout, rawStderr: stderr,
		getenv: os.Getenv, environ: os.Environ, now: time.Now, stderrTTY: stderrIsTerminal(stderr)}
	defer o.stdout.Flush()
	defer o.stderr.Flush()
	// Usage errors happen before flags are resolved; they still owe a
	// --json caller its one JSON object.
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if a == "--json" || a == "-json" || a == "--json=true" {
			o.json = true
		}
	}
	var result any
	app := newApp(o, &result)
	err := app.RunContext(ctx, flagsFirst(app, args))
	if isNil(result) {
		result = nil
	}
	return render(o, result, err)
}

// flagsFirst moves the flags a command line gives after a command's
// arguments in front of them (orket task resolve T --reason R), as git
// and most tools accept; the flag parser stops at the first argument.
// Nothing after "--" moves, and orket run's arguments are the edit
// command: they are left as they are.
func flagsFirst(app *cli.App, args []string) []string {
	cmds, flags := app.Commands, app.Flags
	i := 1
	var leaf *cli.Command
	for i < len(args) {
		a := args[i]
		if a == "--" {
			return args
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			i += 1 + flagValueArgs(flags, a, args[i+1:])
			continue
		}
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(a) {
				next = c
			}
		}
		if next == nil {
			break
		}
		leaf, cmds, flags = next, next.Subcommands, next.Flags
		i++
		if len(cmds) == 0 {
			break
		}
	}
	if leaf == nil || leaf.Name == "run" || len(leaf.Subcommands) > 0 {
		return args
	}
	out := append([]string{}, args[:i]...)
	var positional []string
	for j := i; j < len(args); j++ {
		a := args[j]
		if a == "--" {
			positional = append(positional, args[j:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		n := flagValueArgs(flags, a, args[j+1:])
		out = append(out, args[j:j+1+n]...)
		j += n
	}
	return append(out, positional...)
}

// flagValueArgs is how many of the arguments after the flag arg are its
// value: one for a known flag that takes a value not given with "=".
func flagValueArgs(flags []cli.Flag, arg string, rest []string) int {
	name, _, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	if hasValue || len(rest) == 0 {
		return 0
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				if tv, ok := f.(cli.DocGenerationFlag); ok && tv.TakesValue() {
					return 1
				}
				return 0
			}
		}
	}
	return 0
}

// globalFlags are accepted before and after the command name.
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "repo", Usage: "operate on the git work tree enclosing `DIR` (default: the current directory's)"},
		&cli.StringFlag{Name: "config", Usage: "read configuration from `FILE` (default: orket.yaml at the repository root)"},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON result object on stdout; human text goes to stderr", DisableDefaultText: true},
		&cli.BoolFlag{Name: "no-color", Usage: "never colour output (also NO_COLOR)", DisableDefaultText: true},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors and the outcome", DisableDefaultText: true},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print step output and scoring details", DisableDefaultText: true},
	}
}

// group makes a command of subcommands (orket lessons, task, feedback):
// each takes the global flags; the group itself names an unknown one and
// shows its help.
func group(o *options, name, usage, usageText string, sub ...*cli.Command) *cli.Command {
	names := make([]string, len(sub))
	for i, c := range sub {
		c.Flags = append(c.Flags, globalFlags()...)
		wrap(o, c)
		names[i] = c.Name
	}
	return &cli.Command{
		Name:            name,
		Usage:           usage,
		UsageText:       usageText,
		Subcommands:     sub,
		HideHelpCommand: true,
		Flags:           globalFlags(),
		OnUsageError:    usageError,
		Action: func(c *cli.Context) error {
			resolveGlobals(o, c)
			if c.Args().Present() {
				return orket.Errorf(orket.EUsage, name+" commands: "+strings.Join(names, ", "), "unknown command %q for orket %s", c.Args().First(), name)
			}
			return cli.ShowSubcommandHelp(c)
		},
	}
}

// A command is registered only once it works.
func newApp(o *options, result *any) *cli.App {
	cmds := []*cli.Command{
		runCommand(o, result),
		recoverCommand(o, result),
		classifyCommand(o, result),
		preflightCommand(o, result),
		lessonsCommand(o, result),
		taskCommand(o, result),
		escalateCommand(o, result),
		overrideCommand(o, result),
		rejectCommand(o, result),
		correctCommand(o, result),
		feedbackCommand(o, result),
		memoryCommand(o, result),
		guardrailsCommand(o, result),
		statsCommand(o, result),
		syncCommand(o, result),
		mcpCommand(o, result),
		initCommand(o, result),
		doctorCommand(o, result),
		schemaCommand(o, result),
		versionCommand(o, result),
		completionCommand(o, result),
	}
	for _, c := range cmds {
		if len(c.Subcommands) > 0 {
			continue // the subcommands carry the flags
		}
		c.Flags = append(c.Flags, globalFlags()...)
		wrap(o, c)
	}
	app := &cli.App{
		Name:                 "orket",
		Usage:                "make every change to a git repository a transaction",
		UsageText:            "orket [global flags] COMMAND [flags]",
		Flags:                globalFlags(),
		Commands:             cmds,
		Reader:               o.stdin,
		Writer:               o.stdout,
		ErrWriter:            o.stderr,
		HideVersion:          true,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {}, // Main maps errors to exit codes
		OnUsageError:         usageError,
		CommandNotFound:      func(*cli.Context, string) {},
		Action: func(c *cli.Context) error {
			resolveGlobals(o, c)
			if c.Args().Present() {
				return orket.Errorf(orket.EUsage, "run orket --help for the list of commands", "unknown command %q", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
	}
	return app
}

func usageError(c *cli.Context, err error, _ bool) error {
	msg := strings.TrimSpace(err.Error())
	hint := "run orket COMMAND --help for its flags"
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok && c != nil {
		name = strings.TrimLeft(name, "-")
		var known []string
		flags := c.App.Flags
		if c.Command != nil && c.Command.Name != "" {
			flags = c.Command.Flags
			hint = "run orket " + commandPath(c) + " --help for its flags"
		}
		for _, f := range flags {
			known = append(known, f.Names()...)
		}
		if near := config.Suggest(name, known); near != "" {
			hint = "did you mean --" + near + "? " + hint
		}
		msg = "unknown flag --" + name
	}
	return &orket.Error{Code: orket.EUsage, Msg: msg, Err: err, Hint: hint}
}

// commandPath names the command a context runs, with its parents
// ("lessons list").
func commandPath(c *cli.Context) string {
	var names []string
	for _, cc := range c.Lineage() {
		if cc.Command != nil && cc.Command.Name != "" && cc.Command.Name != c.App.Name {
			if len(names) == 0 || names[0] != cc.Command.Name {
				names = append([]string{cc.Command.Name}, names...)
			}
		}
	}
	return strings.Join(names, " ")
}

// isNil reports whether a command's result is absent (a nil pointer in an
// interface included).
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// wrap resolves the global flags (given before or after the command) into o
// before the command's action runs.
func wrap(o *options, c *cli.Command) {
	c.OnUsageError = usageError
	action := c.Action
	c.Action = func(cc *cli.Context) error {
		resolveGlobals(o, cc)
		return action(cc)
	}
}

func resolveGlobals(o *options, c *cli.Context) {
	o.json = flagBool(c, "json")
	o.quiet = flagBool(c, "quiet")
	o.verbose = flagBool(c, "verbose")
	o.noColor = flagBool(c, "no-color") || o.getenv("NO_COLOR") != ""
	o.repoDir = flagString(c, "repo")
	o.configFile = flagString(c, "config")
}

// flagBool reports whether a flag was set at any level of the command line.
func flagBool(c *cli.Context, name string) bool {
	for _, cc := range c.Lineage() {
		if isSetLocally(cc, name) && cc.Bool(name) {
			return true
		}
	}
	return false
}

// flagString returns the innermost value given for a string flag.
func flagString(c *cli.Context, name string) string {
	for _, cc := range c.Lineage() {
		if isSetLocally(cc, name) {
			return cc.String(name)
		}
	}
	return ""
}

func isSetLocally(c *cli.Context, name string) bool {
	for _, n := range c.LocalFlagNames() {
		if n == name {
			return true
		}
	}
	return false
}

// openRepo finds the repository for --repo (or the working directory).
func openRepo(o *options) (*orket.Repo, error) {
	dir := o.repoDir
	if dir == "" {
		dir = "."
	}
	r, err := orket.Open(dir)
	if err != nil {
		return nil, err
	}
	r.Options.NoWatch = o.getenv("ORKET_NO_INOTIFY") != ""
	return r, nil
}

// configPath returns the configuration file orket reads and whether the
// user named it explicitly.
func configPath(o *options, r *orket.Repo) (string, bool) {
	if o.configFile != "" {
		return o.configFile, true
	}
	return filepath.Join(r.Root, config.FileName), false
}

// loadConfig reads orket.yaml, or detects profiles when there is none (and
// says so on stderr).
func loadConfig(o *options, r *orket.Repo) (*config.Config, error) {
	file, explicit := configPath(o, r)
	c, err := config.Load(file)
	if errors.Is(err, os.ErrNotExist) && !explicit {
		c, err = config.Detected(r.Root)
		if err == nil && !o.quiet {
			fmt.Fprintf(o.stderr, "orket: no %s; using detected profile from %s (orket init writes one)\n",
				config.FileName, strings.Join(c.Detected, ", "))
		}
	}
	if err != nil {
		return nil, configError(r, file, err)
	}
	r.UseFSMonitor(c.Snapshot.FSMonitor)
	return c, nil
}

func configError(r *orket.Repo, file string, err error) error {
	var ce *config.Error
	if errors.As(err, &ce) {
		ce.File = r.DisplayPath(ce.File)
		return err
	}
	if errors.Is(err, os.ErrNotExist) {
		return &orket.Error{Code: orket.EConfigInvalid, Err: err, Msg: file + ": no such file",
			Hint: "pass an existing --config FILE, or run orket init", Fields: map[string]any{"file": file}}
	}
	return &orket.Error{Code: orket.EConfigInvalid, Err: err, Msg: err.Error(), Hint: "check the file's permissions",
		Fields: map[string]any{"file": file}}
}
