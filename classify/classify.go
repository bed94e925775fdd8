// Package classify recognises failures in tool output with deterministic
// regular-expression rules: which baseline tags apply, on what evidence,
// how confident that evidence is, and which preflight checks it implies.
// No model is involved; output no rule recognises gets no tag.
package classify

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/orket/orket/config"
	"github.com/orket/orket/preflight"
)

// A Signal is one piece of evidence: which rule matched what.
type Signal struct {
	Source string `json:"source"` // "regex" (built in) or "user" (orket.yaml)
	Rule   string `json:"rule"`
	Tag    string `json:"tag"`
	Match  string `json:"match"`
}

// A Result is the classification of one failure's output.
type Result struct {
	Tags       []string          `json:"tags"`
	Confidence float64           `json:"confidence"`
	Signals    []Signal          `json:"signals"`
	Checks     []preflight.Check `json:"preflight_checks"`
	// Subject is what the leading signal is about (a variable, a module),
	// and FirstError the first line that looks like an error.
	Subject    string `json:"subject,omitempty"`
	FirstError string `json:"first_error,omitempty"`
}

// A Classifier holds the rules: the user's first, then the built-in ones.
type Classifier struct {
	rules []Rule
	user  int // how many of rules are the user's
}

// New returns a classifier with the user's rules (from orket.yaml) ahead
// of the built-in catalogue.
func New(user []config.Rule) *Classifier {
	c := &Classifier{}
	for _, r := range user {
		checks := r.Preflight
		c.rules = append(c.rules, Rule{ID: r.ID, Tag: r.Tag, Tool: "orket.yaml", Pattern: r.Re, Confidence: 0.95,
			Check: func([]string) *preflight.Check { return nil }, userChecks: checks})
	}
	c.user = len(c.rules)
	c.rules = append(c.rules, Builtin...)
	return c
}

// maxMatchesPerRule bounds the signals one rule contributes.
const maxMatchesPerRule = 3

// maxMatch bounds the text a signal quotes.
const maxMatch = 240

// Classify reads a failure's output.
func (c *Classifier) Classify(output string) *Result {
	res := &Result{Tags: []string{}, Signals: []Signal{}, Checks: []preflight.Check{}}
	seenTag := map[string]bool{}
	seenCheck := map[preflight.Check]bool{}
	for i, r := range c.rules {
		ms := r.Pattern.FindAllStringSubmatch(output, maxMatchesPerRule)
		if len(ms) == 0 {
			continue
		}
		source := "regex"
		if i < c.user {
			source = "user"
		}
		for _, m := range ms {
			res.Signals = append(res.Signals, Signal{Source: source, Rule: r.ID, Tag: r.Tag, Match: clip(m[0])})
			var checks []preflight.Check
			if r.Check != nil {
				if ch := r.Check(m); ch != nil {
					checks = append(checks, *ch)
				}
			}
			checks = append(checks, r.userChecks...)
			for _, ch := range checks {
				if ch.Validate() == nil && !seenCheck[ch] {
					seenCheck[ch] = true
					res.Checks = append(res.Checks, ch)
				}
			}
			if res.Subject == "" && r.Subject != nil {
				res.Subject = r.Subject(m)
			}
		}
		if !seenTag[r.Tag] {
			seenTag[r.Tag] = true
			res.Tags = append(res.Tags, r.Tag)
		}
		if r.Confidence > res.Confidence {
			res.Confidence = r.Confidence
		}
	}
	// Agreeing evidence from several rules raises confidence a little.
	if rules := distinctRules(res.Signals); rules > 1 && res.Confidence > 0 {
		res.Confidence = min(1, res.Confidence+0.03*float64(rules-1))
	}
	res.Confidence = float64(int(res.Confidence*100+0.5)) / 100
	res.FirstError = FirstError(output)
	return res
}

func distinctRules(sigs []Signal) int {
	seen := map[string]bool{}
	for _, s := range sigs {
		seen[s.Rule] = true
	}
	return len(seen)
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxMatch {
		cut := maxMatch
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

var errorLine = regexp.MustCompile(`(?i)\b(?:error|fail(?:ed|ure)?|panic|exception|cannot|undefined|refused|not found|no such|missing|denied|invalid)\b`)

// FirstError returns the first line of output that looks like an error,
// normalised: paths' line numbers, hex addresses, durations and temporary
// directories are replaced so the same failure reads the same every time.
func FirstError(output string) string {
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || !errorLine.MatchString(line) {
			continue
		}
		return Normalize(line)
	}
	return ""
}

var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)? `), ""}, // log timestamps
	{regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?`), "<time>"},
	{regexp.MustCompile(`(?:/tmp|/var/folders)/[\w./-]+`), "<tmp>"},
	{regexp.MustCompile(`0x[0-9a-fA-F]+`), "0x…"},
	{regexp.MustCompile(`\b\d+(?:\.\d+)?(?:ns|µs|us|ms|s)\b`), "<dur>"},
	{regexp.MustCompile(`\(\d+\)`), "(…)"},
}

// Normalize makes an error line comparable across runs.
func Normalize(line string) string {
	for _, n := range normalizers {
		line = n.re.ReplaceAllString(line, n.with)
	}
	if len(line) > 200 {
		line = line[:200]
	}
	return line
}

// Advice turns a result into the advice of a lesson.
type Advice struct {
	Title            string            `json:"title"`
	Summary          string            `json:"summary"`
	SuggestedActions []string          `json:"suggested_actions"`
	PreflightChecks  []preflight.Check `json:"preflight_checks"`
}

// AdviceFor writes the advice for a classified failure of a command.
func AdviceFor(res *Result, failedCommand string) Advice {
	a := Advice{SuggestedActions: []string{}, PreflightChecks: res.Checks}
	subject := res.Subject
	lead := ""
	if len(res.Tags) > 0 {
		lead = res.Tags[0]
	}
	switch lead {
	case MissingEnvVar:
		a.Title = "Missing environment variable " + subject
		a.Summary = fmt.Sprintf("%s failed because %s was not set.", failedCommand, orThe(subject, "a variable"))
		a.SuggestedActions = append(a.SuggestedActions, "export "+orThe(subject, "the variable")+" before the run (or set it in the step's env)")
	case MissingDependency:
		a.Title = "Missing dependency " + subject
		a.Summary = fmt.Sprintf("%s failed because %s could not be found.", failedCommand, orThe(subject, "a dependency"))
		a.SuggestedActions = append(a.SuggestedActions, "install or declare "+orThe(subject, "the dependency")+" (go get, npm install, pip install, cargo add...)")
	case TypeError:
		a.Title = "Type error"
		a.Summary = failedCommand + " reported a type error."
		a.SuggestedActions = append(a.SuggestedActions, "check the types at the reported location before editing callers")
	case LintError:
		a.Title = "Lint error"
		a.Summary = failedCommand + " reported lint findings."
		a.SuggestedActions = append(a.SuggestedActions, "run the linter (and the formatter) locally on the touched files")
	case TestAssertionFailed:
		a.Title = "Test assertion failed"
		if subject != "" {
			a.Title += ": " + subject
		}
		a.Summary = failedCommand + " had failing tests."
		a.SuggestedActions = append(a.SuggestedActions, "run the failing test alone and read its expectation before changing the code it covers")
	case BuildConfigError:
		a.Title = "Build configuration error"
		if subject != "" {
			a.Title += ": " + subject
		}
		a.Summary = failedCommand + " could not find what its build or configuration needs."
		a.SuggestedActions = append(a.SuggestedActions, "check the build configuration and the files it refers to")
	case PortInUse:
		a.Title = "Port already in use"
		if subject != "" {
			a.Title += ": " + subject
		}
		a.Summary = failedCommand + " could not listen because the port was taken."
		a.SuggestedActions = append(a.SuggestedActions, "stop what holds the port, or run the step on another port")
	case DBConnectionFailed:
		a.Title = "Database connection failed"
		if subject != "" {
			a.Title += ": " + subject
		}
		a.Summary = failedCommand + " could not reach its database."
		a.SuggestedActions = append(a.SuggestedActions, "start the database (or point the tests at one) before the run")
	case "":
		a.Title = "Unclassified failure of " + failedCommand
		a.Summary = "No rule recognised this failure; its first error line is kept."
	default:
		a.Title = "Failure tagged " + lead
		a.Summary = failedCommand + " failed (" + lead + ")."
	}
	for _, ch := range res.Checks {
		a.SuggestedActions = append(a.SuggestedActions, "check before running: "+ch.String())
	}
	return a
}

func orThe(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
