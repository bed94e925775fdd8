package lessons

import (
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/orket/orket/internal/lazyre"
)

// Lessons fold into one advisory when they describe one hazard, wherever
// it was met: the same tags and the same cause once what varies from
// place to place is masked (paths, names, numbers, quoted values). An
// environment failure is the same hazard when its checks are the same
// (the variable, the port, the address), whatever the output said.

// CauseOf is the line a lesson is about: its cause, else (a lesson
// recorded before causes were) the unclassified cause or the first error.
func CauseOf(l *Lesson) string {
	c := &l.Classification
	switch {
	case c.Cause != "":
		return c.Cause
	case c.Unclassified != nil && c.Unclassified.Cause != "":
		return c.Unclassified.Cause
	}
	return c.FirstError
}

// FoldKey is the key lessons of one hazard share: their tags and
// FoldCause.
func FoldKey(l *Lesson) string {
	tags := append([]string{}, l.Classification.Tags...)
	sort.Strings(tags)
	return strings.Join(tags, ",") + "\x00" + FoldCause(l)
}

// FoldCause is what a lesson's hazard is, apart from its tags: the
// checks of a lesson that has some ("environment variable X is set"): its
// failure is the environment's,
// else its cause masked (see Mask), with where it was when the masked
// cause says too little to name a hazard by itself.
func FoldCause(l *Lesson) string {
	if len(l.Advice.PreflightChecks) > 0 {
		checks := make([]string, len(l.Advice.PreflightChecks))
		for i, c := range l.Advice.PreflightChecks {
			checks[i] = c.String()
		}
		sort.Strings(checks)
		return strings.Join(checks, "; ")
	}
	if BrokeCallers(l) {
		// Whatever the compiler or runtime said (too few arguments, an
		// export gone, not a function), the hazard is one: a change to
		// what other code calls, made without that code.
		return brokeCallers
	}
	if tags := l.Classification.Tags; len(tags) == 1 && tags[0] == lintTag {
		// A linter's findings differ by rule and place; the hazard is
		// the linter rejecting a change: one fold per linter.
		return "the linter " + l.Verify.FailedCommand + " in " + path.Join(".", l.Verify.FailedDir)
	}
	masked := Mask(StripANSI(CauseOf(l)))
	if literalWords(masked) < minLiteralWords {
		// "got <n>, want <n>" says too little to be one hazard across
		// places: such a cause folds only with itself, where it was.
		// Where: its file (a test's name, TestOne, may be every
		// package's), else its test.
		if loc := l.Classification.Location; loc != nil && len(loc.Files) > 0 {
			masked += " (in " + loc.Files[0] + ")"
		} else if loc != nil && loc.Test != "" {
			masked += " (in " + loc.Test + ")"
		} else {
			masked += " (in " + path.Join(".", l.Verify.FailedDir) + ")"
		}
	}
	return masked
}

// lintTag is classify's tag for a linter's findings.
const lintTag = "lint_error"

// brokeCallers is the fold cause of BrokeCallers's lessons.
const brokeCallers = "a change broke code it did not touch: the code that calls what it changed"

// BrokeCallers reports whether a lesson's failure is a type error (a
// call with the wrong arguments, a name or an export that is gone) in a
// file its change did not touch: the change altered what other code
// calls, and left that code as it was.
func BrokeCallers(l *Lesson) bool {
	c := &l.Classification
	if len(c.Tags) != 1 || c.Tags[0] != typeTag || c.Location == nil || len(c.Location.Files) == 0 || len(l.Plan.TouchSet) == 0 {
		return false
	}
	f := c.Location.Files[0]
	return !slices.Contains(l.Plan.TouchSet, f) && !dependencyPath(f)
}

// dependencyPath reports whether p is in a directory of installed
// dependencies: a library misused is not code that calls the change.
func dependencyPath(p string) bool {
	for _, d := range strings.Split(path.Dir(p), "/") {
		switch d {
		case "node_modules", "vendor", "site-packages", ".venv", "venv":
			return true
		}
	}
	return false
}

// typeTag is classify's tag for code that does not type-check.
const typeTag = "type_error"

// minLiteralWords is how many words a masked cause keeps for it to name
// a hazard by itself (see FoldKey).
const minLiteralWords = 4

// maskers turn what varies between two places of one hazard into
// placeholders, in order: quoted values, paths and file names (with
// their line and column), qualified names, calls, other numbers, and
// compound identifiers.
var (
	maskQuoted    = lazyre.New("'[^']*'|\"[^\"]*\"|`[^`]*`")
	maskPath      = lazyre.New(`(?:[\w.@~+-]*/)+[\w.@~+-]*(?::\d+)*|\b[\w-]+\.[A-Za-z]\w{0,5}(?::\d+)+|\b[\w-]+_[\w-]*\.[A-Za-z]\w{0,5}\b|\b[\w-]+\.(?:go|py|js|mjs|cjs|ts|tsx|jsx|rs|java|kt|c|h|cc|cpp|hpp|rb|sql|yaml|yml|json|toml|txt|md)\b`)
	maskQualified = lazyre.New(`\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b`)
	maskCall      = lazyre.New(`\b[A-Za-z_]\w*\(\)`)
	maskNumber    = lazyre.New(`\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)*\b`)
	maskCompound  = lazyre.New(`\b[A-Za-z]*[a-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b`)
	spaces        = lazyre.New(`\s+`)
)

// Mask returns a cause line with what varies between places of one
// hazard replaced: "pkg/api/routes_gen.go is out of date: run go generate
// ./pkg/api" and the same of pkg/models are both "<path> is out of date:
// run go generate <path>". Exception names (TypeError, urllib's URLError)
// and codes (E501, TS2322) stay: they name the hazard.
func Mask(cause string) string {
	s := maskQuoted().ReplaceAllString(cause, "<q>")
	s = maskPath().ReplaceAllString(s, "<path>")
	s = maskQualified().ReplaceAllStringFunc(s, func(q string) string {
		if last := q[strings.LastIndexByte(q, '.')+1:]; isExceptionName(last) {
			return last
		}
		return "<id>"
	})
	s = maskCall().ReplaceAllString(s, "<fn>()")
	s = maskNumber().ReplaceAllString(s, "<n>")
	s = maskCompound().ReplaceAllStringFunc(s, func(w string) string {
		if isExceptionName(w) {
			return w
		}
		return "<id>"
	})
	return strings.TrimSpace(spaces().ReplaceAllString(s, " "))
}

func isExceptionName(w string) bool {
	return w != "" && w[0] >= 'A' && w[0] <= 'Z' &&
		(strings.HasSuffix(w, "Error") || strings.HasSuffix(w, "Exception") || strings.HasSuffix(w, "Warning"))
}

// literalWords counts the words of a masked cause that are not
// placeholders: two letters or more.
func literalWords(masked string) int {
	n := 0
	for _, f := range strings.FieldsFunc(masked, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '<' || r == '>')
	}) {
		if len(f) >= 2 && f[0] != '<' {
			n++
		}
	}
	return n
}

// Kind is a file's kind, what a hazard may be about whatever the file's
// place: its inner suffix with its extension ("routes_gen.go" is
// "_gen.go", "api.test.js" ".test.js"), Python's test_ prefix
// ("test_billing.py" is "test_.py"), else its extension (".sql"), else
// its name ("Makefile").
func Kind(p string) string {
	base := path.Base(p)
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 {
		return base
	}
	stem, ext := base[:dot], base[dot:]
	switch {
	case strings.HasPrefix(stem, "test_"):
		return "test_" + ext
	case strings.LastIndexByte(stem, '.') > 0:
		return stem[strings.LastIndexByte(stem, '.'):] + ext
	case strings.LastIndexByte(stem, '_') > 0:
		return stem[strings.LastIndexByte(stem, '_'):] + ext
	}
	return ext
}
