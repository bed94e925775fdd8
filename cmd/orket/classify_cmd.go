package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"

	"github.com/orket/orket/config"
	"github.com/orket/orket/learn"
)

func classifyCommand(o *options, result *any) *cli.Command {
	var explain bool
	var testDir, command string
	return &cli.Command{
		Name:  "classify",
		Usage: "classify a failure log: tags, evidence, preflight checks",
		UsageText: "orket classify [--explain] [--command CMD] [FILE|-]\ngo test ./... 2>&1 | orket classify\n" +
			"orket classify --test DIR",
		Description: `classify reads a failure's output (a file, or stdin) and says what kind of
failure it is, as orket does for a failed verify step: the tags, the rules
that matched and what they matched, a confidence, and the preflight checks
the evidence implies. Output no rule recognises gets no tag. Colours and
other terminal escape sequences are ignored. Inside a repository the rules
of its orket.yaml come first.

--explain says why: which rule matched on which line (its number and
text), and which rules nearly matched and why they did not (the pattern
missed although a distinctive part of it is on a line, every match was
rejected, the context it requires is absent, or a line vetoed it).
With --json, the explanation object (result, matches, near_misses). For
output no rule tags, it says what its cause line is and which families
of tools it looked like, and why each did not match: where to write a
rule in orket.yaml.

--command CMD names the command that printed the log, as a verify step's
is known: a port taken that the output does not name is read from it,
and rules for one command's output (terraform fmt -check) apply.

--test DIR checks the rules against a directory of saved logs: every
NAME.log with a NAME.expect beside it that says what it should get, as
"tags: missing_env_var" (comma-separated; "tags: none" for a log no rule
should tag) and optionally "checks: env_var_present:API_TOKEN". It prints
each log as ok or FAIL, then the precision, recall and F1 of each tag.
It exits 0 when every log is classified as expected, and 1 otherwise
(a log without an expectation fails too).`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "explain", Usage: "say which rule matched which line, and which nearly matched", Destination: &explain, DisableDefaultText: true},
			&cli.StringFlag{Name: "test", Usage: "check the rules against the saved logs (NAME.log, NAME.expect) in `DIR`", Destination: &testDir},
			&cli.StringFlag{Name: "command", Usage: "the command line `CMD` that printed the log", Destination: &command},
		},
		Action: func(c *cli.Context) error {
			var res any
			var err error
			switch {
			case c.IsSet("test") && (explain || c.NArg() > 0):
				return orket.Errorf(orket.EUsage, "--test reads its logs from DIR: run it alone, and --explain on one log", "--test takes no log and no --explain")
			case c.IsSet("test"):
				res, err = runClassifyTest(o, testDir)
			case c.NArg() > 1:
				return orket.Errorf(orket.EUsage, "give one file, or - for stdin", "too many arguments")
			case explain:
				res, err = runClassifyExplain(o, c.Args().First(), command)
			default:
				res, err = runClassify(o, c.Args().First(), command)
			}
			if !isNil(res) {
				*result = res
			}
			return err
		},
	}
}

// maxClassifyInput bounds what classify reads; the tail is what matters.
const maxClassifyInput = 64 << 20

// readLog reads the log to classify: a file, or stdin for "" and "-".
func readLog(o *options, name string) (string, error) {
	var rd io.Reader = o.stdin
	if name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", orket.Errorf(orket.EUsage, "pass an existing log file, or - for stdin", "%s: %s", name, unwrapPathError(err))
		}
		defer f.Close()
		rd = f
	}
	b, err := io.ReadAll(io.LimitReader(rd, maxClassifyInput))
	if err != nil {
		return "", &orket.Error{Code: orket.EUsage, Err: err, Msg: "read the log: " + err.Error(), Hint: "pass a readable file"}
	}
	return string(b), nil
}

// logAndRules reads the log to classify (readLog) and the rules to
// classify it by (rules).
func logAndRules(o *options, name string) (string, []config.Rule, error) {
	text, err := readLog(o, name)
	if err != nil {
		return "", nil, err
	}
	rs, err := rules(o)
	return text, rs, err
}

// rules are the classify rules of this repository's orket.yaml (none
// outside a repository).
func rules(o *options) ([]config.Rule, error) {
	r, err := openRepo(o)
	if err != nil {
		return nil, nil
	}
	cfg, err := loadConfigQuiet(o, r)
	if err != nil || cfg == nil {
		return nil, err
	}
	return cfg.Classify.Rules, nil
}

func runClassify(o *options, name, command string) (*learn.Classification, error) {
	text, rs, err := logAndRules(o, name)
	if err != nil {
		return nil, err
	}
	res := learn.Classify(rs, text, command)
	if !o.json && !o.quiet {
		printClassification(o.stdout, res)
	}
	return res, nil
}

func printClassification(w io.Writer, res *learn.Classification) {
	cl := res.Result
	if len(cl.Tags) == 0 {
		fmt.Fprintln(w, "no rule recognises this failure (no tag)")
	} else {
		fmt.Fprintf(w, "tags: %s (confidence %.2f)\n", strings.Join(cl.Tags, ", "), cl.Confidence)
	}
	for _, s := range cl.Signals {
		fmt.Fprintf(w, "  %s [%s, %s]: %s\n", s.Rule, s.Tag, s.Source, s.Match)
	}
	for _, ch := range cl.Checks {
		fmt.Fprintf(w, "preflight: %s\n", ch)
	}
	if cl.FirstError != "" {
		fmt.Fprintf(w, "first error: %s\n", cl.FirstError)
	}
	if len(cl.Tags) > 0 {
		fmt.Fprintf(w, "advice: %s\n", res.Advice.Title)
		for _, a := range res.Advice.SuggestedActions {
			fmt.Fprintf(w, "  - %s\n", a)
		}
	}
}

// runClassifyExplain is orket classify --explain.
func runClassifyExplain(o *options, name, command string) (*learn.Explanation, error) {
	text, rs, err := logAndRules(o, name)
	if err != nil {
		return nil, err
	}
	res := learn.Explain(rs, text, command)
	if !o.json && !o.quiet {
		fmt.Fprint(o.stdout, res.Explanation)
	}
	return res, nil
}

// runClassifyTest is orket classify --test DIR. A log classified otherwise
// than its expectation says fails the command; under --json the report
// is still the object printed (its fields beside code and error).
func runClassifyTest(o *options, dir string) (*learn.ClassifyTest, error) {
	rs, err := rules(o)
	if err != nil {
		return nil, err
	}
	res, err := learn.TestDir(rs, dir)
	if res != nil && !o.json && !o.quiet {
		fmt.Fprint(o.stdout, res.DirReport)
	}
	return res, err
}

// loadConfigQuiet reads orket.yaml if there is one; no file is no error
// (and no detection) for commands that only need its rules and settings.
func loadConfigQuiet(o *options, r *orket.Repo) (*config.Config, error) {
	file, explicit := configPath(o, r)
	c, err := config.Load(file)
	if errors.Is(err, os.ErrNotExist) && !explicit {
		return config.Defaults(), nil
	}
	if err != nil {
		return nil, configError(r, file, err)
	}
	r.UseFSMonitor(c.Snapshot.FSMonitor)
	return c, nil
}
