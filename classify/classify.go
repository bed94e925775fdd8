// Package classify recognises failures in tool output with deterministic
// regular-expression rules: which baseline tags apply, on what evidence,
// how confident that evidence is, and which preflight checks it implies.
// No model is involved; output no rule recognises gets no tag.
package classify

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/lazyre"
	"github.com/orket/orket/preflight"
)

// A Signal is one piece of evidence: which rule matched what.
type Signal struct {
	Source string `json:"source"` // "regex" (built in) or "user" (orket.yaml)
	Rule   string `json:"rule"`
	Tag    string `json:"tag"`
	Match  string `json:"match"`
	// New reports whether the matched line is one the last passing run of
	// the same step did not print (set by ClassifyWithBaseline only).
	New bool `json:"new,omitempty"`
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
	// Unclassified is set when no rule tagged the output: the line that
	// most likely says why the step failed, and the families of failures
	// the output resembled with why none of their rules matched. A lesson
	// records it so that a user knows which rule to add.
	Unclassified *Unclassified `json:"unclassified,omitempty"`
	// Cause is the line that says why the step failed, with the failing
	// test and the files it names (see CauseOf); when no extractor reads
	// the output, the line of the first signal of a tagged output.
	Cause *Cause `json:"cause,omitempty"`
}

// A Classifier holds the rules: the user's first, then the built-in ones.
// It is safe for concurrent use.
type Classifier struct {
	rules []compiled
	// noAnchors runs every pattern, anchors or not (tests compare).
	noAnchors bool
}

// compiled is a rule ready to run: where it comes from, the literals one
// of which every match of its pattern contains (lower case), and its
// pattern split into its top-level alternatives (see splitAlternatives).
type compiled struct {
	*Rule
	source  string
	anchors []string
	alts    []alternative
}

// New returns a classifier with the user's rules (from orket.yaml) ahead
// of the built-in catalogue.
func New(user []config.Rule) *Classifier {
	c := &Classifier{}
	for _, r := range user {
		if r.Re == nil {
			continue
		}
		ur := &Rule{ID: r.ID, Tag: r.Tag, Tool: "orket.yaml", Pattern: compiledExpr(r.Re), Confidence: 0.95, userChecks: r.Preflight}
		pre := prepare(r.Re.String())
		c.rules = append(c.rules, compiled{Rule: ur, source: "user", anchors: pre.anchors, alts: pre.alts})
	}
	builtin, pre := Builtin(), builtinPrepared()
	for i := range builtin {
		c.rules = append(c.rules, compiled{Rule: &builtin[i], source: "regex", anchors: pre[i].anchors, alts: pre[i].alts})
	}
	return c
}

// maxMatchesPerRule bounds the signals one rule contributes.
const maxMatchesPerRule = 3

// maxMatch bounds the text a signal quotes.
const maxMatch = 240

// Classify reads a failure's output as a terminal shows it (see Plain):
// colours and other escape sequences are stripped first, so the rules,
// the signals' Match and FirstError see the text a person reads.
func (c *Classifier) Classify(output string) *Result {
	return c.ClassifyCommand(output, "")
}

// ClassifyCommand classifies the output of a step whose command line was
// command, as Classify does. The command line adds what the output may
// not say: the port a server was told to listen on, when the output says
// only that the address is in use (see PortFromContext). An empty
// command is Classify.
func (c *Classifier) ClassifyCommand(output, command string) *Result {
	res, _, _ := c.classifyPlain(Plain(output), command, nil, false)
	return res
}

// classifyPlain classifies the whole of output, already made plain (see
// Plain): isNew marks the matches that start on a new line (nil: none),
// and with explain the rules that nearly matched are returned too.
func (c *Classifier) classifyPlain(output, command string, isNew func(offset int) bool, explain bool) (*Result, []hit, []miss) {
	hits, misses := c.runCommand(output, output, command, explain)
	res := assemble(hits, output, isNew)
	res.FirstError = FirstError(output)
	finish(res, output, command)
	return res, hits, misses
}

// finish adds to a result what the whole output and the command line say
// beyond the rules' matches: the checks of the context, when no rule
// tagged it, why (Unclassified), and its cause.
func finish(res *Result, output, command string) {
	addContextChecks(res, output, command)
	if len(res.Tags) == 0 {
		res.Unclassified = unclassified(output, res.FirstError)
	}
	// The line of the first signal: where its match's first line is (a
	// match read in the new lines of ClassifyStep may span lines that
	// are not together in output).
	tagged := 0
	if len(res.Signals) > 0 {
		first := strings.TrimSuffix(res.Signals[0].Match, "…")
		if i := strings.IndexByte(first, '\n'); i >= 0 {
			first = first[:i]
		}
		if first = strings.TrimSpace(first); first != "" {
			if i := strings.Index(output, first); i >= 0 {
				tagged, _ = lineAt(output, i)
			}
		}
	}
	c := causeOf(output, command, tagged, res.Unclassified)
	res.Cause = &c
}

// A hit is what one rule found: the submatch indexes of its matches in
// the evidence (at most maxMatchesPerRule distinct texts; a text found
// again, as when a compiler error is printed by the build and again by
// vet, is kept beside its first occurrence and becomes one signal).
type hit struct {
	r       *compiled
	matches [][]int
}

// A miss is a rule that found nothing it could keep, with why (see
// NearMiss); only collected when asked for.
type miss struct {
	r      *compiled
	at     int // offset in the evidence the reason points at
	anchor string
	reason string
}

// runCommand is run for a step whose command line is command: rules with
// a Command pattern apply only when it matches command.
func (c *Classifier) runCommand(evidence, context, command string, wantMisses bool) ([]hit, []miss) {
	lower := strings.ToLower(evidence)
	idx := newLineIndex(evidence, lower)
	var hits []hit
	var misses []miss
	for i := range c.rules {
		r := &c.rules[i]
		if r.Command != nil && (command == "" || !r.Command.Regexp().MatchString(command)) {
			continue
		}
		// anchor is the earliest of the rule's anchors in the output that
		// is distinctive enough to call a near miss (see NearMiss).
		anchor, anchorAt := "", -1
		if len(r.anchors) > 0 && !c.noAnchors {
			found := false
			for _, a := range r.anchors {
				j := strings.Index(lower, a)
				if j < 0 {
					continue
				}
				found = true
				// An anchor across lines names no one line to point at.
				if len(a) >= minNearMiss && !strings.Contains(a, "\n") && (anchorAt < 0 || j < anchorAt) {
					anchor, anchorAt = a, j
				}
			}
			if !found {
				continue
			}
		}
		all := c.findAll(r, evidence, lower, idx)
		if len(all) == 0 {
			if wantMisses && anchor != "" {
				misses = append(misses, miss{r: r, at: anchorAt, anchor: anchor,
					reason: fmt.Sprintf("the pattern did not match, though this line holds %q", anchor)})
			}
			continue
		}
		kept := all[:0:0]
		var texts []string // the distinct texts of kept
		for _, m := range all {
			if r.Reject != nil && r.Reject.Regexp().MatchString(evidence[m[0]:m[1]]) {
				continue
			}
			switch t := clip(evidence[m[0]:m[1]]); {
			case slices.Contains(texts, t):
				kept = append(kept, m)
			case len(texts) < maxMatchesPerRule:
				texts = append(texts, t)
				kept = append(kept, m)
			}
		}
		if len(kept) == 0 {
			if wantMisses {
				// The anchor may stand on another line than the match: the
				// reason is the rejection, not the anchor.
				misses = append(misses, miss{r: r, at: all[0][0], reason: "every match was rejected by " + r.Reject.String()})
			}
			continue
		}
		if r.Requires != nil && !r.Requires.Regexp().MatchString(context) {
			if wantMisses {
				misses = append(misses, miss{r: r, at: kept[0][0], anchor: anchor, reason: "the output lacks the context it requires: " + r.Requires.String()})
			}
			continue
		}
		if r.Unless != nil {
			if loc := r.Unless.Regexp().FindStringIndex(context); loc != nil {
				if wantMisses {
					n, line := lineAt(context, loc[0])
					misses = append(misses, miss{r: r, at: kept[0][0], anchor: anchor,
						reason: fmt.Sprintf("vetoed by line %d: %s", n, clip(line))})
				}
				continue
			}
		}
		hits = append(hits, hit{r: r, matches: kept})
	}
	return hits, misses
}

// submatches turns the indexes of one match into its strings.
func submatches(s string, idx []int) []string {
	m := make([]string, len(idx)/2)
	for i := range m {
		if idx[2*i] >= 0 {
			m[i] = s[idx[2*i]:idx[2*i+1]]
		}
	}
	return m
}

// assemble builds a result from the hits on evidence; isNew, when not
// nil, says whether the line at an offset of evidence is new. One rule
// matching one text several times is one signal (new when any of its
// occurrences is).
func assemble(hits []hit, evidence string, isNew func(offset int) bool) *Result {
	res := &Result{Tags: []string{}, Signals: []Signal{}, Checks: []preflight.Check{}}
	seenTag := map[string]bool{}
	seenCheck := map[preflight.Check]bool{}
	for _, h := range hits {
		r := h.r
		first := len(res.Signals) // this rule's signals start here
		for _, idx := range h.matches {
			m := submatches(evidence, idx)
			sig := Signal{Source: r.source, Rule: r.ID, Tag: r.Tag, Match: clip(m[0])}
			if isNew != nil {
				sig.New = isNew(idx[0])
			}
			if i := slices.IndexFunc(res.Signals[first:], func(s Signal) bool { return s.Match == sig.Match }); i >= 0 {
				res.Signals[first+i].New = res.Signals[first+i].New || sig.New
				continue
			}
			res.Signals = append(res.Signals, sig)
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
	return res
}

// lineAt returns the 1-based number and the text of the line of s that
// holds offset.
func lineAt(s string, offset int) (int, string) {
	offset = min(max(offset, 0), len(s))
	start := strings.LastIndexByte(s[:offset], '\n') + 1
	end := strings.IndexByte(s[offset:], '\n')
	if end < 0 {
		end = len(s)
	} else {
		end += offset
	}
	return strings.Count(s[:start], "\n") + 1, strings.TrimRight(s[start:end], "\r")
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

var errorLine = lazyre.New(`(?i)\b(?:error|fail(?:ed|ure)?|panic|exception|cannot|undefined|refused|not found|no such|missing|denied|invalid)\b`)

// FirstError returns the first line of output that looks like an error,
// as a person reads it (see Plain), without a log timestamp in front,
// trimmed and cut to 200 bytes. Compare first errors through Normalize:
// the same failure prints other durations, addresses and temporary paths
// every time.
func FirstError(output string) string {
	for _, line := range strings.Split(Plain(output), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || !errorLine().MatchString(line) {
			continue
		}
		return clipAt(logStamp().ReplaceAllString(line, ""), 200)
	}
	return ""
}

// clipAt cuts s to at most n bytes, at a rune boundary.
func clipAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// logStamp is the timestamp Go's log package (and others) put in front of
// a line.
var logStamp = lazyre.New(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)? `)

type normalizer struct {
	re   *regexp.Regexp
	with string
}

// normalizers are Normalize's replacements, compiled on first use.
var normalizers = sync.OnceValue(func() []normalizer {
	return []normalizer{
		{logStamp(), ""},
		{regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?`), "<time>"},
		{regexp.MustCompile(`(?:/tmp|/var/folders)/[\w./-]+`), "<tmp>"},
		{regexp.MustCompile(`0x[0-9a-fA-F]+`), "0x…"},
		{regexp.MustCompile(`\b\d+(?:\.\d+)?(?:ns|µs|us|ms|s)\b`), "<dur>"},
		{regexp.MustCompile(`\(\d+\)`), "(…)"},
	}
})

// Normalize makes an error line comparable across runs.
func Normalize(line string) string {
	for _, n := range normalizers() {
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
		a.Title = withSubject("Test assertion failed", subject)
		a.Summary = failedCommand + " had failing tests."
		a.SuggestedActions = append(a.SuggestedActions, "run the failing test alone and read its expectation before changing the code it covers")
	case BuildConfigError:
		a.Title = withSubject("Build configuration error", subject)
		a.Summary = failedCommand + " could not find what its build or configuration needs."
		a.SuggestedActions = append(a.SuggestedActions, "check the build configuration and the files it refers to")
	case PortInUse:
		a.Title = withSubject("Port already in use", subject)
		a.Summary = failedCommand + " could not listen because the port was taken."
		a.SuggestedActions = append(a.SuggestedActions, "stop what holds the port, or run the step on another port")
	case DBConnectionFailed:
		a.Title = withSubject("Database connection failed", subject)
		a.Summary = failedCommand + " could not reach its database."
		a.SuggestedActions = append(a.SuggestedActions, "start the database (or point the tests at one) before the run")
	case "":
		a.Title = "Unclassified failure of " + failedCommand
		a.Summary = "No rule recognised this failure; its first error line is kept."
		if u := res.Unclassified; u != nil {
			if u.Cause != "" {
				a.Summary = "No rule recognised this failure; its cause: " + u.Cause
			}
			if len(u.Families) > 0 {
				f := u.Families[0]
				a.Summary += fmt.Sprintf(" (it looked like %s, but %s)", f.Name, f.Why)
			}
			// For a person, not an action for the agent to take.
			a.Summary += ". Teach orket this failure with a rule in orket.yaml: orket classify --explain shows what it looked like, orket classify --test checks the rule"
		}
	default:
		a.Title = "Failure tagged " + lead
		a.Summary = failedCommand + " failed (" + lead + ")."
	}
	for _, ch := range res.Checks {
		a.SuggestedActions = append(a.SuggestedActions, "check before running: "+ch.String())
	}
	return a
}

// withSubject is a title naming what it is about, when that is known.
func withSubject(title, subject string) string {
	if subject == "" {
		return title
	}
	return title + ": " + subject
}

func orThe(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
