package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestDocumentedCommandsExist reads every orket command line in the
// README and docs/ (in fenced code blocks) and checks that its command
// exists and that every flag it uses is defined: the docs cannot drift
// from the binary.
func TestDocumentedCommandsExist(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md")
	recipes, _ := filepath.Glob("../../docs/integrations/*")
	files = append(files, recipes...)
	var result any
	app := newApp(&options{getenv: os.Getenv}, &result)
	flagRe := regexp.MustCompile(`^--?([a-z][a-z-]*)`)
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// In markdown, the fenced code blocks; in scripts and workflows,
		// every line.
		inBlock := !strings.HasSuffix(f, ".md")
		for n, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inBlock = !inBlock
				continue
			}
			if !inBlock {
				continue
			}
			line = strings.TrimSpace(line)
			for _, prefix := range []string{"$ ", "- run: ", "run: ", "if out=$(", "out=$(", "|| "} {
				line = strings.TrimPrefix(line, prefix)
			}
			for _, part := range strings.Split(line, "|") {
				fields := shellFields(part)
				if len(fields) == 0 || fields[0] != "orket" || len(fields) > 1 && strings.HasSuffix(fields[1], ":") {
					continue // not orket, or its output ("orket doctor: ...")
				}
				where := filepath.Base(f) + ":" + itoa(n+1)
				checkCommandLine(t, app, fields[1:], flagRe, where)
				checked++
			}
		}
	}
	if checked < 20 {
		t.Errorf("found only %d documented orket command lines", checked)
	}
}

// shellFields splits a documented command line into words as a shell
// would for the quoting the docs use: 'single' and "double" quotes.
func shellFields(line string) []string {
	var fields []string
	var word strings.Builder
	in, quote := false, rune(0)
	for _, c := range line {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				fields = append(fields, word.String())
				word.Reset()
				in = false
			}
		default:
			word.WriteRune(c)
			in = true
		}
	}
	if in {
		fields = append(fields, word.String())
	}
	return fields
}

func checkCommandLine(t *testing.T, app *cli.App, args []string, flagRe *regexp.Regexp, where string) {
	t.Helper()
	cmds := app.Commands
	var cmd *cli.Command
	flags := map[string]bool{}
	takes := map[string]bool{} // flags that take a value
	add := func(fl []cli.Flag) {
		for _, f := range fl {
			for _, n := range f.Names() {
				flags[n] = true
				if v, ok := f.(cli.DocGenerationFlag); ok && v.TakesValue() {
					takes[n] = true
				}
			}
		}
	}
	add(app.Flags)
	skip := false
	for _, a := range args {
		if a == "--" || strings.HasPrefix(a, "#") || strings.TrimLeft(a, "0123456789&") != "" && strings.ContainsAny(a[:1], "<>") ||
			strings.HasPrefix(strings.TrimLeft(a, "0123456789&"), ">") {
			break // the end of the command line: a comment or a redirection
		}
		if skip {
			skip = false
			continue
		}
		if m := flagRe.FindStringSubmatch(a); m != nil {
			name := m[1]
			if !flags[name] {
				t.Errorf("%s: orket %s: flag --%s is not defined", where, strings.Join(args, " "), name)
			}
			skip = takes[name] && !strings.Contains(a, "=")
			continue
		}
		if cmds == nil {
			continue // an argument
		}
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(a) {
				next = c
			}
		}
		if next == nil {
			if cmd == nil || len(cmd.Subcommands) > 0 {
				t.Errorf("%s: orket %s: no command %q", where, strings.Join(args, " "), a)
			}
			cmds = nil
			continue
		}
		cmd = next
		cmds = next.Subcommands
		add(next.Flags)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
