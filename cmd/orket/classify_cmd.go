package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/config"
	"github.com/orket/orket/txn"
)

type classifyResult struct {
	Code orket.Code `json:"code"`
	*classify.Result
	Advice classify.Advice `json:"advice"`
}

// explainResult is orket classify --explain: the explanation object.
type explainResult struct {
	Code orket.Code `json:"code"`
	*classify.Explanation
}

// testDirResult is orket classify --test: the report of every saved log.
type testDirResult struct {
	Code orket.Code `json:"code"`
	*classify.DirReport
}

// eClassifyTestFailed is the outcome of orket classify --test when a saved
// log is not classified as its expectation says: exit status 1, as a test
// runner's failed tests.
const eClassifyTestFailed = orket.EClassifyTestFailed

func classifyCommand(o *options, result *any) *cli.Command {
	var explain bool
	var testDir string
	return &cli.Command{
		Name:  "classify",
		Usage: "classify a failure log: tags, evidence, preflight checks",
		UsageText: "orket classify [--explain] [FILE|-]\ngo test ./... 2>&1 | orket classify\n" +
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
With --json, the explanation object (result, matches, near_misses).

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
				res, err = runClassifyExplain(o, c.Args().First())
			default:
				res, err = runClassify(o, c.Args().First())
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

// newClassifier returns the classifier orket uses in this repository: the
// rules of its orket.yaml first (none outside a repository).
func newClassifier(o *options) (*classify.Classifier, error) {
	var rules []config.Rule
	if r, err := openRepo(o); err == nil {
		cfg, err := loadConfigQuiet(o, r)
		if err != nil {
			return nil, err
		}
		if cfg != nil {
			rules = cfg.Classify.Rules
		}
	}
	return classify.New(rules), nil
}

func runClassify(o *options, name string) (*classifyResult, error) {
	text, err := readLog(o, name)
	if err != nil {
		return nil, err
	}
	c, err := newClassifier(o)
	if err != nil {
		return nil, err
	}
	cl := c.Classify(text)
	res := &classifyResult{Code: orket.OK, Result: cl, Advice: classify.AdviceFor(cl, "the command")}
	if !o.json && !o.quiet {
		w := o.stdout
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
	return res, nil
}

// runClassifyExplain is orket classify --explain.
func runClassifyExplain(o *options, name string) (*explainResult, error) {
	text, err := readLog(o, name)
	if err != nil {
		return nil, err
	}
	c, err := newClassifier(o)
	if err != nil {
		return nil, err
	}
	res := &explainResult{Code: orket.OK, Explanation: c.Explain(text)}
	if !o.json && !o.quiet {
		fmt.Fprint(o.stdout, res.Explanation)
	}
	return res, nil
}

// runClassifyTest is orket classify --test DIR. A log classified otherwise
// than its expectation says fails the command; under --json the report
// is still the object printed (its fields beside code and error).
func runClassifyTest(o *options, dir string) (*testDirResult, error) {
	if dir == "" {
		return nil, orket.Errorf(orket.EUsage, "pass --test DIR, a directory of NAME.log files with NAME.expect beside them", "--test needs a directory")
	}
	c, err := newClassifier(o)
	if err != nil {
		return nil, err
	}
	rep, err := c.TestDir(dir)
	if err != nil {
		msg := err.Error()
		var pe *os.PathError
		if errors.As(err, &pe) {
			msg = pe.Path + ": " + pe.Err.Error()
		}
		return nil, &orket.Error{Code: orket.EUsage, Err: err, Msg: "--test " + msg,
			Hint: "pass a directory of saved logs: NAME.log, with NAME.expect beside it (tags: ...)"}
	}
	if !o.json && !o.quiet {
		fmt.Fprint(o.stdout, rep)
	}
	res := &testDirResult{Code: orket.OK, DirReport: rep}
	if rep.Failed == 0 {
		return res, nil
	}
	res.Code = eClassifyTestFailed
	var failed []string
	hint := "write NAME.expect beside each NAME.log (tags: ...)"
	mismatch := false // a log was tested and classified otherwise
	for _, f := range rep.Files {
		if f.Pass {
			continue
		}
		failed = append(failed, f.Name)
		if f.Err == "" && !mismatch {
			mismatch = true
			hint = "orket classify --explain " + filepath.Join(dir, f.Name) +
				" shows which rules matched and which nearly did; fix the rule in orket.yaml, or the expectation"
		}
	}
	if len(failed) > 5 {
		failed = append(failed[:5], fmt.Sprintf("and %d more", len(failed)-5))
	}
	return res, &orket.Error{Code: eClassifyTestFailed,
		Msg:    fmt.Sprintf("%d of %d saved logs not classified as expected: %s", rep.Failed, len(rep.Files), strings.Join(failed, ", ")),
		Hint:   hint,
		Fields: map[string]any{"dir": rep.Dir, "files": rep.Files, "passed": rep.Passed, "failed": rep.Failed, "scores": rep.Scores}}
}

// loadConfigQuiet reads orket.yaml if there is one; no file is no error
// (and no detection) for commands that only need its rules and settings.
func loadConfigQuiet(o *options, r *txn.Repo) (*config.Config, error) {
	file, explicit := configPath(o, r)
	c, err := config.Load(file)
	if errors.Is(err, os.ErrNotExist) && !explicit {
		return config.Defaults(), nil
	}
	if err != nil {
		return nil, configError(r, file, err)
	}
	orket.ConfigureRepo(r, c)
	return c, nil
}
