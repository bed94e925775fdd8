package learn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orket/orket"
	"github.com/orket/orket/classify"
	"github.com/orket/orket/config"
)

// The classifier's use cases (orket classify): what kind of failure a
// log shows, why, and whether saved logs are classified as expected. The
// rules are orket.yaml's (rules; nil outside a repository), then the
// built-in ones.

// A Classification is orket classify's --json object: the tags, their
// evidence and checks, and the advice a lesson would carry.
type Classification struct {
	Code orket.Code `json:"code"`
	*classify.Result
	Advice classify.Advice `json:"advice"`
}

// Classify classifies a failure log that command printed ("": not
// known).
func Classify(rules []config.Rule, text, command string) *Classification {
	cl := classify.New(rules).ClassifyCommand(text, command)
	return &Classification{Code: orket.OK, Result: cl, Advice: classify.AdviceFor(cl, "the command")}
}

// An Explanation is orket classify --explain: which rule matched which
// line, and which nearly matched.
type Explanation struct {
	Code orket.Code `json:"code"`
	*classify.Explanation
}

// Explain says why a log that command printed is classified as it is.
func Explain(rules []config.Rule, text, command string) *Explanation {
	return &Explanation{Code: orket.OK, Explanation: classify.New(rules).ExplainCommand(text, command)}
}

// A ClassifyTest is orket classify --test: the report of every saved log.
type ClassifyTest struct {
	Code orket.Code `json:"code"`
	*classify.DirReport
}

// TestDir classifies every NAME.log of dir and compares it with the
// NAME.expect beside it. A log classified otherwise fails: the report
// comes back with an E_CLASSIFY_TEST_FAILED error.
func TestDir(rules []config.Rule, dir string) (*ClassifyTest, error) {
	if dir == "" {
		return nil, orket.Errorf(orket.EUsage, "pass --test DIR, a directory of NAME.log files with NAME.expect beside them", "--test needs a directory")
	}
	rep, err := classify.New(rules).TestDir(dir)
	if err != nil {
		msg := err.Error()
		var pe *os.PathError
		if errors.As(err, &pe) {
			msg = pe.Path + ": " + pe.Err.Error()
		}
		return nil, &orket.Error{Code: orket.EUsage, Err: err, Msg: "--test " + msg,
			Hint: "pass a directory of saved logs: NAME.log, with NAME.expect beside it (tags: ...)"}
	}
	res := &ClassifyTest{Code: orket.OK, DirReport: rep}
	if rep.Failed == 0 {
		return res, nil
	}
	res.Code = orket.EClassifyTestFailed
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
	return res, &orket.Error{Code: orket.EClassifyTestFailed,
		Msg:    fmt.Sprintf("%d of %d saved logs not classified as expected: %s", rep.Failed, len(rep.Files), strings.Join(failed, ", ")),
		Hint:   hint,
		Fields: map[string]any{"dir": rep.Dir, "files": rep.Files, "passed": rep.Passed, "failed": rep.Failed, "scores": rep.Scores}}
}

// Plain is a tool's output as a terminal shows it: without escape
// sequences, a line rewritten with carriage returns only as it ended.
func Plain(output string) string { return classify.Plain(output) }
