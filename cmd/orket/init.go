package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket/learn"
)

func initCommand(o *options, result *any) *cli.Command {
	var force bool
	return &cli.Command{
		Name:      "init",
		Usage:     "write orket.yaml with verify profiles detected from the repository",
		UsageText: "orket init [--force]",
		Description: `init looks for go.mod, package.json scripts, Cargo.toml, Python
configuration (pyproject.toml, pytest.ini, setup.cfg, mypy.ini, ruff.toml),
Maven (pom.xml), Gradle (build.gradle, settings.gradle) and a Makefile's
lint, check and test targets (at the root and two levels below) and writes
orket.yaml with a "quick" profile of the steps they imply, plus
.orket/.gitignore so orket's local state stays out of commits.
Steps follow the project's own tool configuration (plain mypy when it
names its files, ruff check --no-fix when it sets fix = true, ./mvnw and
./gradlew when the project has them) and never rewrite files: a script or
target that runs a fixer or formatter in its writing mode is skipped.
An ecosystem's own test command (go test ./..., npm run test, cargo test,
pytest, mvn verify, gradle check) wins over a Makefile test target in the
same directory; manifests in example, sample and demo directories are left
out. init lists what it left out and why ("skipped" under --json), which
programs the steps run are missing ("missing"), the runtime versions the
project asks for (engines.node, requires-python, rust-version, go.mod's go
line) against those installed ("runtimes"), and proposes, as a comment,
protect: globs for the tests, lint configs and CI of what it found.
An existing orket.yaml is left alone unless --force is given.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing orket.yaml", Destination: &force, DisableDefaultText: true},
		},
		Action: func(c *cli.Context) error {
			r, err := openRepo(o)
			if err != nil {
				return err
			}
			file, _ := configPath(o, r)
			res, err := learn.Init(r, file, force)
			if err != nil {
				return err
			}
			*result = res
			if !o.json && !o.quiet {
				printInit(o, res)
			}
			return nil
		},
	}
}

func printInit(o *options, res *learn.InitResult) {
	w := o.stdout
	if len(res.Steps) == 0 {
		fmt.Fprintf(w, "wrote %s with a placeholder step: nothing to run was detected\n", res.Config)
	} else {
		fmt.Fprintf(w, "wrote %s: profile %s, detected from %s\n", res.Config, res.Profile, strings.Join(res.Detected, ", "))
		var rows [][]string
		for _, s := range res.Steps {
			row := []string{s.Name, s.Run}
			if s.Dir != "" {
				row = append(row, "(in "+s.Dir+")")
			}
			rows = append(rows, row)
		}
		for _, line := range alignedLines(rows) {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	printRows(w, "notes:", notesRows(res.Steps))
	if len(res.Skipped) > 0 {
		fmt.Fprintln(w, "skipped:")
		var rows [][]string
		for _, s := range res.Skipped {
			rows = append(rows, []string{s.Path, s.Reason})
		}
		for _, line := range alignedLines(rows) {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	if len(res.Steps) == 0 {
		fmt.Fprintf(w, "next: edit verify.profiles.quick in %s (orket schema lists every key)\n", res.Config)
	}
	var missing [][]string
	for _, m := range res.Missing {
		missing = append(missing, []string{m.Tool, m.Why + ", run by " + strings.Join(m.Steps, ", ")})
	}
	printRows(w, "missing:", missing)
	// The runtimes that do not do what the project asks (--json lists
	// the satisfied ones too).
	heading := false
	for _, r := range res.Runtimes {
		if !r.OK {
			if !heading {
				fmt.Fprintln(w, "runtimes:")
				heading = true
			}
			fmt.Fprintf(w, "  %s\n", r.Line())
		}
	}
	for _, f := range res.Wrote[1:] {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
}

// notesRows returns the steps' notes as rows: what in the project's own
// configuration chose a command.
func notesRows(steps []learn.InitStep) [][]string {
	var rows [][]string
	for _, s := range steps {
		if s.Note != "" {
			rows = append(rows, []string{s.Name, s.Note})
		}
	}
	return rows
}

// printRows prints a heading and its rows in aligned columns, or nothing
// when there are no rows.
func printRows(w io.Writer, heading string, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, heading)
	for _, line := range alignedLines(rows) {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// alignedLines lays rows out as columns two spaces apart, each column as
// wide as its widest cell (in runes), without trailing blanks; a row may
// have fewer cells than others.
func alignedLines(rows [][]string) []string {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	lines := make([]string, len(rows))
	for r, row := range rows {
		var b strings.Builder
		for i, cell := range row {
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
			}
		}
		lines[r] = b.String()
	}
	return lines
}

func unwrapPathError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
