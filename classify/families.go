package classify

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/orket/orket/internal/lazyre"
)

// An Unclassified says why no rule tagged an output, so that a lesson can
// record "unclassified" with the line that caused the failure and a user
// knows which rule to add (in orket.yaml, checked with orket classify
// --test).
type Unclassified struct {
	// Cause is the line most likely to say why the step failed: the line
	// of the first family the output resembled, else its first error line
	// (see FirstError); trimmed and clipped. CauseLine is its 1-based
	// number, 0 when the output has no such line.
	Cause     string `json:"cause"`
	CauseLine int    `json:"cause_line,omitempty"`
	// Families are the families of failures the output resembled, most
	// specific first, each with why none of its rules tagged the output.
	Families []FamilyMatch `json:"families,omitempty"`
}

// A FamilyMatch is a family of failures an untagged output resembled.
type FamilyMatch struct {
	Family string `json:"family"` // the family's id: "c-compiler"
	Name   string `json:"name"`   // what its shape is, for people
	Line   int    `json:"line"`   // 1-based number of the line that has the shape
	Text   string `json:"text"`   // that line, trimmed and clipped
	Why    string `json:"why"`    // why no rule of the family tagged the output
}

// A family is a shape of failure output that several tools share (a
// compiler's file:line:col: error: line, a package manager's error code),
// read by several rules. Families are not rules: they tag nothing. They
// say, of an output no rule tagged, what it looked like and why the rules
// that read that shape did not match.
type family struct {
	id, name string
	shape    *regexp.Regexp
	// keywords are lower-case literals one of which a line of the shape
	// holds: only such lines are matched against shape, one at a time,
	// so that a long output costs a scan for the keywords, not a run of
	// every shape over all of it.
	keywords []string
	// requires, when set, must match somewhere in the output too.
	requires *regexp.Regexp
	// why says why the family's rules did not tag a line of its shape,
	// given the shape's submatches.
	why func(m []string) string
}

// maxFamilies bounds the families an explanation lists.
const maxFamilies = 3

var syntaxMessage = lazyre.New(`(?i)^(?:expected |stray |missing terminating|unterminated |syntax error|parse error|unexpected (?:token|end|eof|indent)|invalid syntax|'.' was never closed|extra tokens)|was never closed|^Expecting `)

// families are the families, most specific first; compiled on first use.
var families = sync.OnceValue(func() []family {
	quote := func(s string) string { return fmt.Sprintf("%q", clipAt(strings.TrimSpace(s), 120)) }
	return []family{
		{id: "c-compiler", name: "a C or C++ compiler's file:line:col: error: line",
			keywords: []string{"error:"},
			shape:    regexp.MustCompile(`(?m)^\S*\.` + cExt + `:\d+(?::\d+)?: (?:fatal )?error: (.+)$`),
			why: func(m []string) string {
				if syntaxMessage().MatchString(m[1]) {
					return "its message " + quote(m[1]) + " is a syntax error, which no tag fits (type_error is for code that parses)"
				}
				return "no rule of the C and C++ family reads its message " + quote(m[1]) + " (they read missing headers, linker errors, warnings made errors, and other compile errors)"
			}},
		{id: "linker", name: "a linker's error",
			keywords: []string{"ld:", "ld.", "lld:", "collect2:"},
			shape:    regexp.MustCompile(`(?m)^\S*\b(?:ld(?:\.\w+)?|lld|collect2): (?:error: )?(.+)$`),
			why: func(m []string) string {
				return "no rule reads its message " + quote(m[1]) + " (they read a library not found, an undefined or doubly defined symbol)"
			}},
		{id: "syntax", name: "a syntax error",
			keywords: []string{"syntaxerror", "indentationerror", "taberror", "parseerror", "syntax error", "parse error", "unexpected token", "was never closed"},
			shape:    regexp.MustCompile(`(?m)^.*(?:\b(?:SyntaxError|IndentationError|TabError|ParseError)\b|[Ss]yntax error|Parse error|unexpected token|was never closed).*$`),
			why: func([]string) string {
				return "no tag fits a syntax error: the code at that line does not parse (type_error is for code that parses but does not check)"
			}},
		{id: "package-manager", name: "a package manager's error",
			keywords: []string{"err_pnpm_", "npm err! code", "npm error code", "error command failed with exit code", "elifecycle", "yn0", "error an unexpected error occurred"},
			shape:    regexp.MustCompile(`(?m)^.*(?:\bERR_PNPM_(\w+)|^npm (?:ERR!|error) code (\w+)|^error Command failed with exit code|\bELIFECYCLE\b|\bYN\d{4}: |^error An unexpected error occurred).*$`),
			why: func(m []string) string {
				code := pick(m, 1, 2)
				if code == "" || strings.Contains(code, "RUN") || strings.Contains(code, "EXEC") || code == "ELIFECYCLE" {
					return "it only says that a script it ran failed: the script's own output decides the tag, and no rule read it"
				}
				return "its code " + code + " is none the rules read (no matching version, an unreachable registry, an unsolvable tree; an outdated lockfile, a missing script, an engine mismatch)"
			}},
		{id: "build-system", name: "a build system's error",
			keywords: []string{"cmake error", "meson.build:", "configure: error:", "make", "ninja: build stopped", "errors while running ctest"},
			shape:    regexp.MustCompile(`(?m)^(?:CMake Error.*|\S*meson\.build:\d+:\d+: ERROR: .*|configure: error: .*|g?make(?:\[\d+\])?: \*\*\* .*|ninja: build stopped: .*|Errors while running CTest)$`),
			why: func(m []string) string {
				if strings.Contains(m[0], "***") || strings.Contains(m[0], "ninja:") || strings.Contains(m[0], "CTest") {
					return "it only says that a command it ran failed, and that command's own output shows nothing a rule reads"
				}
				return "no rule reads this error of the tool"
			}},
		{id: "exception", name: "an uncaught exception",
			keywords: []string{"error", "exception", "panic", "terminate called"},
			shape:    regexp.MustCompile(`(?m)^(?:E\s+|Uncaught |Exception in thread "[^"]+" )?((?:[a-z]\w*\.)*[A-Z]\w*(?:Error|Exception))(?: \[\w+\])?(?:: (.*))?$|^panic: (.*)$|^terminate called after throwing an instance of '([^']+)'$|^thread '[^']*'(?: \(\d+\))? panicked at (.*)$`),
			why: func(m []string) string {
				name := pick(m, 1)
				switch {
				case name != "":
				case m[3] != "":
					name = "a Go panic"
				case m[4] != "":
					name = "a C++ exception (" + m[4] + ")"
				default:
					name = "a Rust panic"
				}
				return name + " is none of the exceptions the rules read (missing modules, files and variables, type errors, refused connections): the code under it failed in a way no tag names"
			}},
		{id: "test-runner", name: "a test runner's failure report",
			keywords: []string{"fail", "not ok", "✘", "✖", "tests run:"},
			shape:    regexp.MustCompile(`(?m)^(?:--- FAIL: .*|FAIL\b.*|FAILED\b.*|not ok \d+.*|\s*✘ .*|\s*✖ .*|.*\b\d+ (?:tests? )?failed\b.*|The following tests FAILED:|Tests run: \d+,\s+Failures: \d+.*)$`),
			why: func([]string) string {
				return "no assertion shows: a crash, a timeout or an error thrown by the code under test is not a failed assertion, and no other rule read it"
			}},
		{id: "terraform", name: "a Terraform error",
			keywords: []string{"error: "},
			shape:    regexp.MustCompile(`(?m)^(?:│ )?Error: (.+)$`),
			requires: regexp.MustCompile(`\.tf\b|[Tt]erraform|\btofu\b`),
			why: func(m []string) string {
				return "its error " + quote(m[1]) + " is neither located in a .tf file nor one of init's provider and module errors"
			}},
		{id: "connection", name: "a failed connection",
			keywords: []string{"connection refused", "econnrefused", "could not connect", "timed out", "no route to host"},
			shape:    regexp.MustCompile(`(?m)^.*(?i:connection refused|ECONNREFUSED|could not connect|connect(?:ion)? timed out|no route to host).*$`),
			why: func([]string) string {
				return "nothing says it was to a database or cache: no client library, no database word on the line, no well-known database port"
			}},
		{id: "environment", name: "a mention of the environment",
			keywords: []string{"env"},
			shape:    regexp.MustCompile(`(?m)^.*(?:\b(?i:env(?:ironment)? var(?:iable)?s?)\b|process\.env|os\.environ|getenv).*$`),
			why: func([]string) string {
				return "it names no variable a rule could read (an upper-case name with an underscore or a digit, beside not set, missing or required)"
			}},
	}
})

// resemble returns the families output resembles, most specific first,
// at most maxFamilies. Each family's shape is tried on the lines that hold
// one of its keywords, first line first.
func resemble(output string) []FamilyMatch {
	lines := strings.Split(output, "\n")
	lower := strings.Split(strings.ToLower(output), "\n")
	if len(lower) != len(lines) {
		// Lower-casing changed the text's line structure (it cannot for
		// '\n', but be safe): read the original lines instead.
		lower = lines
	}
	var out []FamilyMatch
	for _, f := range families() {
		if len(out) == maxFamilies {
			break
		}
		for i, l := range lower {
			if !containsAny(l, f.keywords) {
				continue
			}
			loc := f.shape.FindStringSubmatchIndex(lines[i])
			if loc == nil {
				continue
			}
			if f.requires != nil && !f.requires.MatchString(output) {
				break
			}
			m := submatches(lines[i], loc)
			out = append(out, FamilyMatch{Family: f.id, Name: f.name, Line: i + 1, Text: clip(strings.TrimRight(lines[i], "\r")), Why: f.why(m)})
			break
		}
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// unclassified says why no rule tagged output: the families it resembled
// and its cause line.
func unclassified(output, firstError string) *Unclassified {
	u := &Unclassified{Families: resemble(output)}
	// make's own line says only that a recipe failed: a later family's
	// line says why.
	lead := 0
	for lead < len(u.Families)-1 && makeError(u.Families[lead].Text) {
		lead++
	}
	switch {
	case len(u.Families) > 0:
		u.Cause, u.CauseLine = u.Families[lead].Text, u.Families[lead].Line
	case firstError != "":
		u.Cause = firstError
		for i, line := range strings.Split(output, "\n") {
			if strings.Contains(line, firstError) {
				u.CauseLine = i + 1
				break
			}
		}
	default:
		// No line looks like an error: a failure's last words are the
		// likeliest to say why ("Segmentation fault", "Killed").
		lines := strings.Split(strings.TrimRight(output, "\n"), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if t := strings.TrimSpace(lines[i]); t != "" {
				u.Cause, u.CauseLine = clip(t), i+1
				break
			}
		}
	}
	return u
}
