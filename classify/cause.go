package classify

import (
	"regexp"
	"slices"
	"strings"

	"github.com/orket/orket/internal/lazyre"
)

// A Cause is what a senior engineer would quote of a failure: the line
// that says why, the test that failed, and where (files as the output
// names them, the most relevant first).
type Cause struct {
	// Line says why the step failed: a line of the output, or a few of
	// its lines made one ("src/x.rs:4:9: assertion `left == right`
	// failed, left: 1, right: 2"), trimmed and clipped to 200 bytes. It is
	// never empty when the output has a non-empty line.
	Line string `json:"line"`
	// LineNo is the 1-based number in the output of the line Line was read
	// from (the first of several), 0 when it was read from none.
	LineNo int `json:"line_no,omitempty"`
	// Test is the failing test's id as its tool names it, in the most
	// stable form the output shows: "TestCharge/zero",
	// "tests/test_billing.py::test_charge",
	// "tests.test_billing.BillingTest.test_charge", "com.acme.FooTest.bar".
	Test string `json:"test,omitempty"`
	// Files are the source files named at the cause, as printed (relative
	// or absolute), the most relevant first: where the failure was raised,
	// then the test. Files of the standard library, the toolchain and
	// installed packages (site-packages, node_modules, the module cache,
	// the cargo registry) are never listed. At most 4.
	Files []string `json:"files,omitempty"`
	// Package is, for Go, the import path of the failing package (from
	// "FAIL\t<importpath>" or a build's "# <importpath>"); empty for
	// other ecosystems.
	Package string `json:"package,omitempty"`
	// Tool names the extractor that read the cause: "go-test",
	// "go-build", "go-panic", "pytest", "unittest", "python", "flake8"
	// (file:line:col: lines of Python linters and type checkers),
	// "eslint", "node-test", "jest" (Jest and Vitest), "node", "junit",
	// "java", "javac", "rust-panic", "rustc", "tsc", "cc" (C and C++
	// compilers and linkers), "lint" (another tool's file:line: lines);
	// "tagged" when it is the line of the first signal of a rule that
	// tagged the output, "fallback" when nothing read it.
	Tool string `json:"tool,omitempty"`
}

const (
	maxCauseLine  = 200
	maxCauseFiles = 4
)

// CauseOf returns the cause of a failure's output, read as a person reads
// it (see Plain). command is the step's command line ("" if unknown): the
// extractors of the tools it names are tried first. An output no
// extractor reads gets the line the families of failures point at (see
// Unclassified), else its first error line (see FirstError), else its
// last non-empty line.
func CauseOf(output, command string) Cause {
	return causeOf(Plain(output), command, 0, nil)
}

// causeOf is CauseOf on a plain output. tagged, when not 0, is the
// 1-based number of the line of the first signal of a rule that tagged
// the output: the cause when no extractor reads one. u, when not nil, is
// the output's Unclassified, whose families need not be found again.
func causeOf(output, command string, tagged int, u *Unclassified) Cause {
	lines := strings.Split(output, "\n")
	for _, x := range extractorsFor(command) {
		if !containsAny(output, x.cues) {
			continue
		}
		c, ok := x.read(lines)
		if !ok || c.Line == "" || classpathLine(c.Line) {
			continue
		}
		if c.Tool == "" {
			c.Tool = x.tool
		}
		c.Line = causeText(c.Line)
		return c
	}
	return fallbackCause(output, lines, tagged, u)
}

// An extractor reads the cause of one tool's (or toolchain's) output.
type extractor struct {
	tool string
	// cues are literals one of which an output the extractor reads
	// holds: the others are not read.
	cues []string
	// commands are the words of a command line that run the tool: a step
	// running one tries this extractor first.
	commands []string
	read     func(lines []string) (Cause, bool)
}

// extractors are tried in this order: the more distinctive a tool's
// output, the earlier.
var extractors = []extractor{
	{tool: "go-test", cues: []string{"--- FAIL", "FAIL\t", "panic: ", "fatal error: ", ".go:"}, commands: []string{"go"}, read: goCause},
	{tool: "pytest", cues: []string{"= FAILURES =", "= ERRORS ="}, commands: []string{"pytest", "py.test"}, read: pytestCause},
	{tool: "unittest", cues: []string{"FAIL: ", "ERROR: "}, commands: []string{"unittest", "manage.py"}, read: unittestCause},
	{tool: "rust-panic", cues: []string{"panicked at", "stdout ----"}, commands: []string{"cargo"}, read: rustPanicCause},
	{tool: "rustc", cues: []string{"error[E", "--> "}, commands: []string{"cargo", "rustc", "clippy-driver"}, read: rustcCause},
	{tool: "junit", cues: []string{"There w", "MethodSource [", "<<< FAILURE!", "<<< ERROR!", "FAILED", "[ERROR]   "}, commands: []string{"mvn", "mvnw", "gradle", "gradlew"}, read: junitCause},
	{tool: "javac", cues: []string{".java:"}, commands: []string{"javac", "mvn", "mvnw", "gradle", "gradlew"}, read: javacCause},
	{tool: "java", cues: []string{"Exception in thread "}, read: javaCause},
	{tool: "node-test", cues: []string{"not ok ", "✖ "}, commands: []string{"--test", "tap", "tape"}, read: nodeTestCause},
	{tool: "jest", cues: []string{"● ", "FAIL "}, commands: []string{"jest", "vitest"}, read: jestCause},
	{tool: "tsc", cues: []string{"error TS"}, commands: []string{"tsc", "vue-tsc"}, read: tscCause},
	{tool: "eslint", cues: []string{"problem", "✖", ": line "}, commands: []string{"eslint", "xo"}, read: eslintCause},
	{tool: "python", cues: []string{"Traceback (most recent call last)", "File \""}, read: pythonCause},
	{tool: "node", cues: []string{"\n    at "}, read: nodeCause},
	{tool: "lint", cues: []string{":"}, read: locatedCause},
}

// extractorsFor returns the extractors in the order they are tried for a
// step whose command line is command: those whose tool it runs first.
func extractorsFor(command string) []*extractor {
	words := commandWords(command)
	out := make([]*extractor, 0, len(extractors))
	for i := range extractors {
		if x := &extractors[i]; hasCommand(x, words) {
			out = append(out, x)
		}
	}
	for i := range extractors {
		if x := &extractors[i]; !hasCommand(x, words) {
			out = append(out, x)
		}
	}
	return out
}

func hasCommand(x *extractor, words []string) bool {
	for _, c := range x.commands {
		if slices.Contains(words, c) {
			return true
		}
	}
	return false
}

// commandWords splits a command line into its words, each reduced to its
// last path element: "/tmp/node_modules/.bin/jest --ci" is "jest", "--ci".
func commandWords(command string) []string {
	f := strings.FieldsFunc(command, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == ';' || r == '&' || r == '|' || r == '(' || r == ')' || r == '\'' || r == '"' || r == '=' || r == '\\'
	})
	for i, w := range f {
		if j := strings.LastIndexByte(w, '/'); j >= 0 && j < len(w)-1 {
			f[i] = w[j+1:]
		}
	}
	return f
}

// causeText is a line as a Cause's Line: trimmed, at most 200 bytes.
func causeText(s string) string {
	return strings.TrimSpace(clipAt(strings.TrimSpace(s), maxCauseLine))
}

// indentOf returns the number of blanks (spaces and tabs) s starts with.
func indentOf(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t"))
}

// blank reports whether s has nothing but white space.
func blank(s string) bool {
	return strings.TrimSpace(s) == ""
}

// keyValue matches a line of a message that reads "name: value" (the
// "left: 1" and "right: 2" under a failed assertion).
var keyValue = lazyre.New(`^\w[\w ]{0,24}:(?: |$)`)

// joinText makes one line of a message printed on several: each part's
// runs of white space become one space; a part that reads "name: value"
// is joined with ", " unless the text before it ends in ':', ',' or an
// opening bracket.
func joinText(parts []string) string {
	var b strings.Builder
	var last byte
	for _, p := range parts {
		p = strings.Join(strings.Fields(p), " ")
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			if last != ':' && last != ',' && last != '{' && last != '[' && last != '(' && keyValue().MatchString(p) {
				b.WriteString(", ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(p)
		last = p[len(p)-1]
		if b.Len() > 2*maxCauseLine {
			break
		}
	}
	return b.String()
}

// message returns the message that starts at lines[at], made one line:
// the line alone, or, when it ends in ':' or an opening bracket (the
// message goes on below), with the first paragraph below it, up to a
// line stop says ends the message (nil: a blank line after the paragraph
// ends it).
func message(lines []string, at int, stop func(string) bool) string {
	head := strings.TrimSpace(lines[at])
	if !strings.HasSuffix(head, ":") && !strings.HasSuffix(head, "[") && !strings.HasSuffix(head, "{") {
		return head
	}
	parts := []string{head}
	for j := at + 1; j < len(lines) && j < at+40; j++ {
		l := lines[j]
		if stop != nil && stop(l) {
			break
		}
		if blank(l) {
			if len(parts) > 1 {
				break
			}
			continue
		}
		parts = append(parts, l)
	}
	return joinText(parts)
}

// A fileList is a Cause's Files being gathered.
type fileList []string

// add appends path, when it is a file of the project, not listed yet
// (relative or absolute), and the list is not full; a file:// URL counts
// as its path.
func (f *fileList) add(path string) {
	path = strings.TrimPrefix(path, "file://")
	if path == "" || len(*f) >= maxCauseFiles || !projectFile(path) {
		return
	}
	for _, g := range *f {
		// The same file, named once relative and once absolute.
		if g == path || strings.HasSuffix(g, "/"+path) || strings.HasSuffix(path, "/"+g) {
			return
		}
	}
	*f = append(*f, path)
}

// foreignPaths are parts of the paths of files that belong to a
// toolchain, a standard library or an installed package, not to the
// project being built.
var foreignPaths = []string{
	// Go: GOROOT (wherever it is: its runtime and testing packages), the
	// module cache (and the toolchains it holds), the test harness.
	"/usr/local/go/", "/usr/lib/go", "/sdk/go1.", "/src/runtime/", "/src/testing/", "/pkg/mod/", "testing/testing.go", "_testmain.go",
	// Python: the standard library, installed packages, pyenv.
	"/lib/python2.", "/lib/python3.", "/site-packages/", "/dist-packages/", "/.pyenv/",
	// Node.
	"node_modules/",
	// Rust: the standard library's sources, the registry, rustup.
	"/rustc/", "/.cargo/registry/", "/.cargo/git/", "/.rustup/",
	// C and C++ system headers, the JDK.
	"/usr/include/", "/usr/lib/", "/usr/local/lib/", "/usr/share/",
}

// foreignPrefixes start the names of files that are not the project's:
// a Python pseudo-file ("<string>", "<frozen os>"), Node's built-in
// modules, the Rust standard library's relative paths, the JDK's modules.
var foreignPrefixes = []string{"<", "node:", "library/std/", "library/core/", "library/alloc/", "java.base/"}

// projectFile reports whether path, as a tool printed it, may be a file of
// the project rather than of a toolchain or an installed package.
func projectFile(path string) bool {
	for _, p := range foreignPrefixes {
		if strings.HasPrefix(path, p) {
			return false
		}
	}
	return !containsAny(path, foreignPaths)
}

// classpathLine reports whether line is a list of paths, not a message: a
// Java classpath or a PATH echoed by a tool, which no one quotes as a
// cause.
func classpathLine(line string) bool {
	return len(line) > 300 && strings.Count(line, ":")+strings.Count(line, ";") >= 10 && strings.Count(line, " ") < len(line)/50
}

// sourceExts are the extensions of source files, as filesIn finds them.
var sourceExts = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range strings.Fields("go py pyi js jsx mjs cjs ts tsx mts cts vue svelte rs java kt scala rb php c cc cpp cxx h hh hpp m mm cs swift sh bash tf ex exs erl lua pl pm dart groovy sql proto") {
		m[e] = true
	}
	return m
}()

// errorWords are the words errorLine reads, lower case.
var errorWords = []string{"error", "fail", "panic", "exception", "cannot", "undefined", "refused", "not found", "no such", "missing", "denied", "invalid"}

// failureWordList are words of a failure FirstError's do not read
// ("context deadline exceeded", "flag provided but not defined"), and
// failureWords matches them.
var (
	failureWordList = []string{"not defined", "exceeded", "timed out", "timeout", "killed", "aborted", "fatal", "unable to", "unknown", "unexpected", "could not", "couldn't", "can't", "not allowed", "forbidden", "unauthorized", "is required", "must be"}
	failureWords    = lazyre.New(`(?i)\b(?:` + strings.Join(failureWordList, "|") + `)\b`)
)

// exitNotice matches a line that only says that a command exited.
var exitNotice = lazyre.New(`^(?:exit status \d+|Process exited with code \d+|Command exited with non-zero status \d+)$`)

// firstLineMatching returns the 0-based number of the first line of
// lines that re matches and that is not a classpath, -1 if none. Only the
// lines that hold one of words (lower case), one of which every match of
// re holds, are matched against re.
func firstLineMatching(lines []string, re *regexp.Regexp, words []string) int {
	for i, l := range lines {
		if !containsAny(strings.ToLower(l), words) {
			continue
		}
		if t := strings.TrimSpace(l); !classpathLine(t) && re.MatchString(t) {
			return i
		}
	}
	return -1
}

// filesIn returns the project's source files a line names with a line
// number ("pkg/api.go:3:2: undefined: Foo"): each ':' before a digit ends
// a path, which starts the line or follows a space, a quote or '('.
func filesIn(line string) []string {
	var files fileList
	for i := 0; i+1 < len(line); i++ {
		if line[i] != ':' || line[i+1] < '0' || line[i+1] > '9' {
			continue
		}
		j := i
		for j > 0 && pathByte(line[j-1]) {
			j--
		}
		if j > 0 && !strings.ContainsRune(" \t('\"", rune(line[j-1])) {
			continue
		}
		path := line[j:i]
		dot := strings.LastIndexByte(path, '.')
		if dot <= 0 || path[dot-1] == '/' || path[dot-1] == '.' || !sourceExts[path[dot+1:]] {
			continue
		}
		files.add(path)
	}
	return files
}

// pathByte reports whether c may be part of a file's path as tools print
// it.
func pathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_./@~+-", c) >= 0
}

// fallbackCause is the cause of an output no extractor read: the tagged
// line when there is one, else the line of the first family of failures
// the output resembles, else its first error line, else the first line
// with words of a failure, else its last non-empty line that is not only
// an exit status. A classpath is never the cause.
func fallbackCause(output string, lines []string, tagged int, u *Unclassified) Cause {
	at, tool := -1, "fallback"
	if tagged > 0 && tagged <= len(lines) && !blank(lines[tagged-1]) && !classpathLine(lines[tagged-1]) {
		at, tool = tagged-1, "tagged"
	}
	if at < 0 {
		var families []FamilyMatch
		if u != nil {
			families = u.Families
		} else {
			families = resemble(output)
		}
		for _, f := range families {
			if f.Line > 0 && f.Line <= len(lines) && !classpathLine(lines[f.Line-1]) && !makeError(lines[f.Line-1]) {
				at = f.Line - 1
				break
			}
		}
	}
	if at < 0 {
		at = firstLineMatching(lines, errorLine(), errorWords)
	}
	if at < 0 {
		at = firstLineMatching(lines, failureWords(), failureWordList)
	}
	if at < 0 {
		for i := len(lines) - 1; i >= 0; i-- {
			if t := strings.TrimSpace(lines[i]); t != "" && !classpathLine(t) && !exitNotice().MatchString(t) {
				at = i
				break
			}
		}
	}
	if at < 0 {
		// Nothing but classpaths, or nothing at all.
		for i := len(lines) - 1; i >= 0; i-- {
			if !blank(lines[i]) {
				at = i
				break
			}
		}
	}
	if at < 0 {
		return Cause{Tool: tool}
	}
	line := causeText(logStamp().ReplaceAllString(strings.TrimSpace(lines[at]), ""))
	return Cause{Line: line, LineNo: at + 1, Files: filesIn(line), Tool: tool}
}

// Go.

var (
	goTestFail  = lazyre.New(`^(\s*)--- FAIL: (\S+) \(`)
	goTestLog   = lazyre.New(`^(\s+)([\w./@+-]+\.go):(\d+): ?(.*)$`)
	goTestRun   = lazyre.New(`^=== (?:RUN|NAME|CONT|PAUSE)\s+(\S+)`)
	goPkgFail   = lazyre.New(`^FAIL\t(\S+)`)
	goPkgHeader = lazyre.New(`^# (\S+)`)
	goFrame     = lazyre.New(`^\s+(\S+\.go):\d+(?:\s|$)`)
	goCompile   = lazyre.New(`^(?:vet: )?(\S+\.go):\d+:\d+: \S`)
	goMentioned = lazyre.New(`[\w./@+-]*\w\.go\b`)
	goExitLine  = lazyre.New(`^(?:exit status \d+|FAIL|PASS|ok  \t.*|\?   \t.*)$`)
)

// goCause reads go test, go build, go vet and go run: the message of the
// first failing test (the innermost subtest, the message its t.Errorf or
// t.Fatalf printed), a data race, a panic, the first compile error, or
// what a test binary printed before it failed without a failing test (in
// TestMain, in init), whichever the output shows first.
func goCause(lines []string) (Cause, bool) {
	g := findGoMarks(lines)
	test, msgAt := g.failingTest()
	var c Cause
	switch {
	case earliest(g.buildAt, g.failAt, g.panicAt, g.raceAt):
		c = g.buildCause()
	case msgAt >= 0 && earliest(msgAt, g.panicAt):
		line, files := goMessage(lines, msgAt)
		c = Cause{Line: line, LineNo: msgAt + 1, Test: test, Files: files, Tool: "go-test"}
	case g.raceAt >= 0:
		c = g.raceCause(test)
	case g.panicAt >= 0:
		c = g.panicCause(test)
	case g.failAt >= 0:
		// A test failed without a word (t.Fail, t.FailNow).
		c = Cause{Line: "--- FAIL: " + test, LineNo: g.failAt + 1, Test: test, Tool: "go-test"}
	case g.pkgAt >= 0:
		c = g.binaryCause()
	default:
		return Cause{}, false
	}
	if c.Package == "" {
		c.Package = goPackageAfter(lines, c.LineNo-1)
	}
	return c, true
}

// goMarks are the lines goCause chooses between: the first failing test,
// panic or fatal error, compile error, data race and failing package of
// the output, each -1 when there is none.
type goMarks struct {
	lines                                   []string
	failAt, panicAt, buildAt, raceAt, pkgAt int
}

// findGoMarks finds the first line of each kind goCause reads.
func findGoMarks(lines []string) goMarks {
	g := goMarks{lines: lines, failAt: -1, panicAt: -1, buildAt: -1, raceAt: -1, pkgAt: -1}
	for i, l := range lines {
		switch {
		case g.failAt < 0 && strings.Contains(l, "--- FAIL: ") && goTestFail().MatchString(l):
			g.failAt = i
		case g.panicAt < 0 && (strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ")) && goroutineAfter(lines, i):
			g.panicAt = i
		case g.raceAt < 0 && l == "WARNING: DATA RACE":
			g.raceAt = i
		case g.buildAt < 0 && strings.Contains(l, ".go:") && goCompile().MatchString(l):
			g.buildAt = i
		case g.pkgAt < 0 && strings.HasPrefix(l, "FAIL\t"):
			g.pkgAt = i
		}
	}
	return g
}

// earliest reports whether line i was found before every other line
// found.
func earliest(i int, others ...int) bool {
	for _, o := range others {
		if o >= 0 && o < i {
			return false
		}
	}
	return i >= 0
}

// failingTest returns the first failing test's name and the line of its
// message, or -1 for the line when it printed none (or only the testing
// package's race notice).
func (g goMarks) failingTest() (test string, msgAt int) {
	test, msgAt = "", -1
	if g.failAt >= 0 {
		test, msgAt = goFailure(g.lines, g.failAt)
		if msgAt >= 0 {
			if m := goTestLog().FindStringSubmatch(g.lines[msgAt]); m[2] == "testing.go" {
				// "testing.go:1712: race detected during execution of
				// test": the race report above is the cause.
				msgAt = -1
			}
		}
	}
	return test, msgAt
}

// buildCause is the first compile error, in the package whose header is
// above it.
func (g goMarks) buildCause() Cause {
	lines, buildAt := g.lines, g.buildAt
	m := goCompile().FindStringSubmatch(lines[buildAt])
	var files fileList
	files.add(m[1])
	c := Cause{Line: lines[buildAt], LineNo: buildAt + 1, Files: files, Tool: "go-build"}
	for j := buildAt - 1; j >= 0; j-- {
		if h := goPkgHeader().FindStringSubmatch(lines[j]); h != nil && !strings.HasPrefix(h[1], "[") {
			c.Package = h[1]
			break
		}
		if !goCompile().MatchString(lines[j]) && !strings.HasPrefix(lines[j], "# ") && !strings.HasPrefix(lines[j], "\t") {
			break
		}
	}
	return c
}

// raceCause is the data race report, with the files of its frames.
func (g goMarks) raceCause(test string) Cause {
	lines, raceAt := g.lines, g.raceAt
	c := Cause{Line: lines[raceAt], LineNo: raceAt + 1, Test: test, Tool: "go-test"}
	var files fileList
	for j := raceAt + 1; j < len(lines) && !strings.HasPrefix(lines[j], "=================="); j++ {
		if m := goFrame().FindStringSubmatch(lines[j]); m != nil {
			files.add(m[1])
		}
	}
	c.Files = files
	return c
}

// panicCause is the panic or fatal error, with the files of its trace;
// the test is the failing test above it, or the first test running when
// a test timed out.
func (g goMarks) panicCause(test string) Cause {
	lines, panicAt := g.lines, g.panicAt
	c := Cause{Line: lines[panicAt], LineNo: panicAt + 1, Tool: "go-panic"}
	if g.failAt >= 0 && g.failAt < panicAt {
		c.Test = test
	}
	var files fileList
	for j := panicAt + 1; j < len(lines) && !goPkgFail().MatchString(lines[j]) && !strings.HasPrefix(lines[j], "exit status "); j++ {
		l := lines[j]
		if c.Test == "" && j == panicAt+1 && strings.TrimSpace(l) == "running tests:" && j+1 < len(lines) {
			// A test timed out: the first test running.
			if name, _, ok := strings.Cut(strings.TrimSpace(lines[j+1]), " "); ok {
				c.Test = name
			}
		}
		if m := goFrame().FindStringSubmatch(l); m != nil {
			files.add(m[1])
		}
	}
	c.Files = files
	if g.failAt >= 0 || g.pkgAt >= 0 {
		c.Tool = "go-test"
	}
	return c
}

// binaryCause is a test binary that failed with no test failing: in
// TestMain or init, or killed. What it printed last says why.
func (g goMarks) binaryCause() Cause {
	lines, pkgAt := g.lines, g.pkgAt
	c := Cause{Line: lines[pkgAt], LineNo: pkgAt + 1, Tool: "go-test"}
	for j := pkgAt - 1; j >= 0; j-- {
		t := strings.TrimSpace(lines[j])
		if t == "" || goExitLine().MatchString(t) {
			if strings.HasPrefix(t, "ok  ") || strings.HasPrefix(t, "?   ") {
				break
			}
			continue
		}
		if strings.HasPrefix(t, "FAIL\t") || strings.HasPrefix(t, "--- ") || strings.HasPrefix(t, "=== ") {
			break
		}
		c.Line, c.LineNo, c.Files = t, j+1, filesIn(t)
		break
	}
	return c
}

// goroutineAfter reports whether a goroutine's trace follows the panic or
// fatal error at lines[at], as the Go runtime prints one.
func goroutineAfter(lines []string, at int) bool {
	for j := at + 1; j < len(lines) && j < at+60; j++ {
		if strings.HasPrefix(lines[j], "goroutine ") {
			return true
		}
	}
	return false
}

// goPackageAfter returns the package of the first "FAIL\t<importpath>"
// line at or after lines[at], or else of the first one.
func goPackageAfter(lines []string, at int) string {
	for _, from := range []int{max(at, 0), 0} {
		for j := from; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "FAIL\t") {
				if m := goPkgFail().FindStringSubmatch(lines[j]); m != nil {
					return m[1]
				}
			}
		}
	}
	return ""
}

// goFailure returns the failing test whose "--- FAIL" line is
// lines[failAt], or its first failing subtest, innermost first, and the
// line of its first message (-1 if none): below the FAIL line, or, in
// go test -v's output, after the test's "=== RUN" line.
func goFailure(lines []string, failAt int) (string, int) {
	m := goTestFail().FindStringSubmatch(lines[failAt])
	test, depth := m[2], len(m[1])
	for j := failAt + 1; j < len(lines); j++ {
		l := lines[j]
		if blank(l) || indentOf(l) <= depth {
			break
		}
		if sm := goTestFail().FindStringSubmatch(l); sm != nil {
			test, depth = sm[2], len(sm[1])
			continue
		}
		if goTestLog().MatchString(l) {
			return test, j
		}
	}
	// go test -v prints a test's messages under its "=== RUN" (or
	// "=== NAME", "=== CONT") line, before the FAIL lines.
	for name := test; name != ""; {
		for i := 0; i < failAt; i++ {
			if !strings.HasPrefix(lines[i], "=== ") {
				continue
			}
			if r := goTestRun().FindStringSubmatch(lines[i]); r == nil || r[1] != name {
				continue
			}
			for j := i + 1; j < failAt && !strings.HasPrefix(lines[j], "=== ") && !strings.HasPrefix(strings.TrimSpace(lines[j]), "--- "); j++ {
				if goTestLog().MatchString(lines[j]) {
					return test, j
				}
			}
		}
		k := strings.LastIndexByte(name, '/')
		if k < 0 {
			break
		}
		name = name[:k]
	}
	return test, -1
}

// goMessage returns the message a test printed at lines[at] ("x_test.go:12:
// got 3, want 4"), made one line when it goes on below (an empty message
// or one ending in ':', testify's Error Trace blocks), and the files it
// names: the test's file, then the Go files the message names.
func goMessage(lines []string, at int) (string, []string) {
	m := goTestLog().FindStringSubmatch(lines[at])
	indent, file, msg := len(m[1]), m[2], strings.TrimSpace(m[4])
	line := strings.TrimSpace(lines[at])
	if msg == "" || strings.HasSuffix(msg, ":") {
		var more []string
		for j := at + 1; j < len(lines) && j < at+40; j++ {
			if blank(lines[j]) || indentOf(lines[j]) <= indent {
				break
			}
			more = append(more, strings.TrimSpace(lines[j]))
		}
		if t, ok := testifyMessage(more); ok {
			msg = t
		} else {
			msg = joinText(append([]string{msg}, more...))
		}
		line = file + ":" + m[3] + ": " + msg
	}
	var files fileList
	files.add(file)
	for _, f := range goMentioned().FindAllString(msg, -1) {
		files.add(f)
	}
	return line, files
}

// testifyMessage reads the block testify's assertions print under a
// test's message ("Error Trace:", "Error:", "Test:", "Messages:"): the
// assertion's message, after the test's own when it gave one.
func testifyMessage(more []string) (string, bool) {
	var field string
	var errs, msgs []string
	trace := false
	for _, l := range more {
		if k, v, ok := strings.Cut(l, ":"); ok {
			switch k {
			case "Error Trace", "Error", "Test", "Messages", "Diff":
				field, v = k, strings.TrimSpace(v)
				trace = trace || k == "Error Trace"
				if v == "" {
					continue
				}
				l = v
			}
		}
		switch field {
		case "Error":
			// "actual  : 43", aligned under "expected: 42".
			errs = append(errs, strings.Replace(strings.Join(strings.Fields(l), " "), " : ", ": ", 1))
		case "Messages":
			msgs = append(msgs, l)
		}
	}
	if !trace || len(errs) == 0 {
		return "", false
	}
	if len(msgs) > 0 {
		return joinText(msgs) + ": " + joinText(errs), true
	}
	return joinText(errs), true
}

// Python.

var (
	pytestSection = lazyre.New(`^={3,} (?:FAILURES|ERRORS) ={3,}$`)
	pytestHeader  = lazyre.New(`^_{3,} (.+?) _{3,}$`)
	pytestSummary = lazyre.New(`^(?:FAILED|ERROR) (\S+)(?: - .*)?$`)
	pytestWhere   = lazyre.New(`^(\S+\.py):(\d+)(?:: ?(.*))?$`)
	pytestTbLine  = lazyre.New(`^(\S.*?):\d+: (\S.*)$`)
	pytestFixture = lazyre.New(`^file (\S+\.py), line \d+$`)
	pyException   = lazyre.New(`^(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning|Timeout|Iteration|Failure)|Failed)(?::|$)`)
	pyFrame       = lazyre.New(`^\s+File "([^"]+)", line \d+`)
	unittestHead  = lazyre.New(`^(?:FAIL|ERROR|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)`)
)

// pytestCause reads pytest's report: in the first failure's section, the
// exception it raised (the last one, when one was raised handling
// another) over the assertion pytest explains; the test's id from the
// short test summary; the file where the exception was raised, then the
// test's file.
func pytestCause(lines []string) (Cause, bool) {
	sec := pytestSectionAt(lines)
	if sec < 0 {
		return Cause{}, false
	}
	head, end, name := pytestFirstFailure(lines, sec)
	if head < 0 {
		return pytestLineCause(lines, sec)
	}
	for _, p := range []string{"ERROR at setup of ", "ERROR at teardown of ", "ERROR collecting "} {
		name = strings.TrimPrefix(name, p)
	}
	c := Cause{Test: pytestID(lines, end, name)}
	at, where := pytestRaised(lines, head, end)
	if at >= 0 {
		c.Line, c.LineNo = strings.TrimSpace(lines[at][1:]), at+1
	} else if exc, frames := pyTraceback(lines, head+1, end); exc >= 0 {
		// --tb=native: Python's own traceback.
		c.Line, c.LineNo = lines[exc], exc+1
		where = append(where, frames...)
	} else {
		return Cause{}, false
	}
	c.Files = pytestFiles(where, c.Test)
	return c, true
}

// pytestSectionAt returns the line of pytest's first FAILURES or ERRORS
// section, or -1.
func pytestSectionAt(lines []string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, "===") && pytestSection().MatchString(l) {
			return i
		}
	}
	return -1
}

// pytestFirstFailure finds the first failure of the section at
// lines[sec]: the line of its header (-1 when there is none), the line
// after its last, and the name the header gives.
func pytestFirstFailure(lines []string, sec int) (head, end int, name string) {
	head, end = -1, len(lines)
	for i := sec + 1; i < len(lines); i++ {
		l := lines[i]
		if m := pytestHeader().FindStringSubmatch(l); m != nil {
			if head >= 0 {
				end = i
				break
			}
			head, name = i, m[1]
			continue
		}
		if strings.HasPrefix(l, "===") {
			if head >= 0 {
				end = i
				break
			}
			if pytestSection().MatchString(l) {
				continue
			}
			break
		}
	}
	return head, end, name
}

// pytestRaised reads the failure between lines[head] and lines[end]: the
// "E" line of the exception it raised (the last one), else of its
// assertion, else its first "E" line, or -1; and the locations the
// section names, outermost first.
func pytestRaised(lines []string, head, end int) (at int, where []string) {
	excAt, assertAt, firstE := -1, -1, -1
	for j := head + 1; j < end; j++ {
		l := lines[j]
		if strings.HasPrefix(l, "E ") || strings.HasPrefix(l, "E\t") {
			t := strings.TrimSpace(l[1:])
			if t == "" {
				continue
			}
			if firstE < 0 {
				firstE = j
			}
			switch {
			case strings.HasPrefix(t, "AssertionError") || strings.HasPrefix(t, "assert "):
				if assertAt < 0 {
					assertAt = j
				}
			case pyException().MatchString(t):
				excAt = j
			}
			continue
		}
		if m := pytestWhere().FindStringSubmatch(l); m != nil {
			where = append(where, m[1])
		} else if m := pytestFixture().FindStringSubmatch(l); m != nil {
			where = append(where, m[1])
		}
	}
	at = excAt
	if at < 0 {
		at = assertAt
	}
	if at < 0 {
		at = firstE
	}
	return at, where
}

// pytestFiles orders a failure's files: where the exception was raised
// (the innermost location of the project), the test's file, then the
// locations between.
func pytestFiles(where []string, test string) []string {
	var files fileList
	for k := len(where) - 1; k >= 0 && len(files) == 0; k-- {
		files.add(where[k])
	}
	if file, _, ok := strings.Cut(test, "::"); ok {
		files.add(file)
	}
	for k := len(where) - 1; k >= 0; k-- {
		files.add(where[k])
	}
	return files
}

// pytestLineCause reads the failures section at lines[sec] as --tb=line
// prints it: a line "path:line: Exception: message" a failure.
func pytestLineCause(lines []string, sec int) (Cause, bool) {
	for i := sec + 1; i < len(lines) && !strings.HasPrefix(lines[i], "==="); i++ {
		m := pytestTbLine().FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		c := Cause{Line: m[2], LineNo: i + 1}
		for _, l := range lines[i:] {
			if sm := pytestSummary().FindStringSubmatch(l); sm != nil && (strings.HasPrefix(l, "FAILED ") || strings.HasPrefix(l, "ERROR ")) {
				c.Test = sm[1]
				break
			}
		}
		var files fileList
		files.add(m[1])
		if file, _, ok := strings.Cut(c.Test, "::"); ok {
			files.add(file)
		}
		c.Files = files
		return c, true
	}
	return Cause{}, false
}

// pytestID returns the id of the test whose section header named name, as
// the short test summary (after lines[from]) lists it
// ("tests/test_x.py::TestY::test_z"), or name when the summary does not.
func pytestID(lines []string, from int, name string) string {
	for _, l := range lines[from:] {
		if !strings.HasPrefix(l, "FAILED ") && !strings.HasPrefix(l, "ERROR ") {
			continue
		}
		m := pytestSummary().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		id := m[1]
		dotted := strings.ReplaceAll(id, "::", ".")
		if id == name || dotted == name || strings.HasSuffix(dotted, "."+name) {
			return id
		}
	}
	return name
}

// unittestCause reads unittest's report (and Django's test runner's): the
// exception of the first test that failed or raised, its dotted id, and
// the innermost frames of the project.
func unittestCause(lines []string) (Cause, bool) {
	for i, l := range lines {
		if !strings.HasPrefix(l, "FAIL: ") && !strings.HasPrefix(l, "ERROR: ") && !strings.HasPrefix(l, "UNEXPECTED SUCCESS: ") {
			continue
		}
		m := unittestHead().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		c := Cause{Test: m[2], Line: l, LineNo: i + 1}
		if !strings.HasSuffix(m[2], "."+m[1]) {
			c.Test = m[2] + "." + m[1] // Python before 3.11: "test_x (mod.Class)"
		}
		// The block runs from the dashes under the header to the next
		// line of dashes or equals signs.
		start, end := i+1, len(lines)
		for start < len(lines) && !strings.HasPrefix(lines[start], "----------") {
			start++
		}
		for j := start + 1; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "----------") || strings.HasPrefix(lines[j], "==========") {
				end = j
				break
			}
		}
		if exc, frames := pyTraceback(lines, start+1, end); exc >= 0 {
			c.Line, c.LineNo = lines[exc], exc+1
			c.Files = innermost(frames)
		}
		return c, true
	}
	return Cause{}, false
}

// pythonCause reads a Python traceback outside a test runner: the
// exception that ended the last traceback, and the project's innermost
// frames.
func pythonCause(lines []string) (Cause, bool) {
	exc, frames := pyTraceback(lines, 0, len(lines))
	if exc < 0 {
		return Cause{}, false
	}
	return Cause{Line: lines[exc], LineNo: exc + 1, Files: innermost(frames)}, true
}

// pyTraceback finds the last traceback in lines[lo:hi] and returns the
// index of its exception line (-1 if none) and the files of its frames,
// outermost first. A traceback without its header (a SyntaxError's)
// counts when an exception's name starts the line after its frames.
func pyTraceback(lines []string, lo, hi int) (int, []string) {
	start, headed, found := -1, true, false
	for i := hi - 1; i >= lo && !found; i-- {
		if strings.Contains(lines[i], "Traceback (most recent call last)") {
			start, found = i, true
		}
	}
	for i := lo; i < hi && !found; i++ {
		if strings.Contains(lines[i], "File \"") && pyFrame().MatchString(lines[i]) {
			start, headed, found = i-1, false, true
		}
	}
	if !found {
		return -1, nil
	}
	var frames []string
	for j := start + 1; j < hi; j++ {
		l := lines[j]
		if m := pyFrame().FindStringSubmatch(l); m != nil {
			frames = append(frames, m[1])
			continue
		}
		if blank(l) || l[0] == ' ' || l[0] == '\t' {
			continue
		}
		if !headed && !pyException().MatchString(l) {
			return -1, nil
		}
		return j, frames
	}
	return -1, nil
}

// innermost returns the project's files among frames (outermost first),
// innermost first.
func innermost(frames []string) []string {
	var files fileList
	for k := len(frames) - 1; k >= 0; k-- {
		files.add(frames[k])
	}
	return files
}

// Rust.

var (
	rustPanic    = lazyre.New(`^thread '([^']*)'(?: \(\d+\))? panicked at (.+)$`)
	rustOldPanic = lazyre.New(`^'(.*)', (\S+:\d+:\d+)$`)
	rustLocation = lazyre.New(`^(.+?):\d+:\d+$`)
	rustFrameAt  = lazyre.New(`^\s+at ((.+?):\d+(?::\d+)?)$`)
	rustTestOut  = lazyre.New(`^---- (\S+) stdout ----$`)
	rustAtFile   = lazyre.New(`\bat (\S+\.rs):\d+`)
	rustcError   = lazyre.New(`^error(?:\[E\d+\])?: (.+)$`)
	rustcArrow   = lazyre.New(`^\s*--> (.+?):\d+:\d+$`)
)

// rustPanicCause reads a Rust panic (of a test or a program): where it
// panicked and its message, "src/lib.rs:10:5: <message>", located in the
// project's code when the panic's own location is in the standard
// library (the backtrace's first frame of the project); the test is the
// panicking thread's name. A test that failed without panicking (a
// should_panic test that did not) is read from its stdout section.
func rustPanicCause(lines []string) (Cause, bool) {
	outAt := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "---- ") {
			if outAt < 0 && rustTestOut().MatchString(l) {
				outAt = i
			}
			continue
		}
		if !strings.HasPrefix(l, "thread '") {
			continue
		}
		m := rustPanic().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		c := Cause{LineNo: i + 1}
		if m[1] != "main" && m[1] != "<unnamed>" {
			c.Test = m[1]
		} else if outAt >= 0 {
			c.Test = rustTestOut().FindStringSubmatch(lines[outAt])[1]
		}
		loc, msg := rustPanicMessage(lines, i, m[2])
		var files fileList
		if f := rustLocation().FindStringSubmatch(loc); f != nil {
			files.add(f[1])
		}
		loc = rustBacktrace(lines, i, loc, &files)
		c.Line, c.Files = loc+": "+msg, files
		return c, true
	}
	if outAt >= 0 {
		return rustStdoutCause(lines, outAt)
	}
	return Cause{}, false
}

// rustPanicMessage returns the location and the message of the panic at
// lines[at], whose text after "panicked at " is rest.
func rustPanicMessage(lines []string, at int, rest string) (loc, msg string) {
	if o := rustOldPanic().FindStringSubmatch(rest); o != nil {
		return o[2], o[1]
	}
	if strings.HasPrefix(rest, "'") && !strings.HasSuffix(rest, ":") {
		// Before Rust 1.73, a message of several lines between quotes:
		// "panicked at 'assertion failed: ...\n  left: 1,\n right: 2', src/lib.rs:10:5".
		parts := []string{rest[1:]}
		for j := at + 1; j < len(lines) && j < at+40; j++ {
			if o := rustOldPanic().FindStringSubmatch("'" + lines[j]); o != nil {
				parts = append(parts, o[1])
				loc = o[2]
				break
			}
			parts = append(parts, lines[j])
		}
		return loc, joinText(parts)
	}
	loc = strings.TrimSuffix(rest, ":")
	var parts []string
	for j := at + 1; j < len(lines) && j < at+40; j++ {
		t := lines[j]
		if blank(t) || strings.HasPrefix(t, "note: ") || strings.HasPrefix(t, "stack backtrace:") || strings.HasPrefix(t, "---- ") || strings.HasPrefix(t, "thread '") {
			break
		}
		parts = append(parts, t)
	}
	return loc, joinText(parts)
}

// rustBacktrace adds to files the project's frames of the backtrace
// under the panic at lines[at] (printed when RUST_BACKTRACE is set), and
// returns the panic's location: loc, or the first project frame's when
// loc is not the project's.
func rustBacktrace(lines []string, at int, loc string, files *fileList) string {
	for j := at + 1; j < len(lines) && j < at+400; j++ {
		t := lines[j]
		if strings.HasPrefix(t, "note: ") || strings.HasPrefix(t, "thread '") || strings.HasPrefix(t, "---- ") || strings.HasPrefix(t, "failures:") {
			break
		}
		if !strings.Contains(t, " at ") {
			continue
		}
		if fm := rustFrameAt().FindStringSubmatch(t); fm != nil && projectFile(fm[2]) {
			if len(*files) == 0 {
				loc = fm[1] // the panic's location is not the project's
			}
			files.add(fm[2])
		}
	}
	return loc
}

// rustStdoutCause reads a test that failed without panicking from its
// stdout section at lines[outAt]: its first line that is not blank.
func rustStdoutCause(lines []string, outAt int) (Cause, bool) {
	for j := outAt + 1; j < len(lines) && !strings.HasPrefix(lines[j], "---- ") && !strings.HasPrefix(lines[j], "failures:"); j++ {
		if blank(lines[j]) {
			continue
		}
		c := Cause{Line: lines[j], LineNo: j + 1, Test: rustTestOut().FindStringSubmatch(lines[outAt])[1]}
		var files fileList
		if m := rustAtFile().FindStringSubmatch(lines[j]); m != nil {
			files.add(m[1])
		}
		c.Files = files
		return c, true
	}
	return Cause{}, false
}

// rustcCause reads rustc's (and clippy's) diagnostics: the first error
// with the file its arrow points at; else the first error with a code
// ("error[E0463]") that has none.
func rustcCause(lines []string) (Cause, bool) {
	bare := -1
	for i, l := range lines {
		if !strings.HasPrefix(l, "error") {
			continue
		}
		m := rustcError().FindStringSubmatch(l)
		if m == nil || strings.HasPrefix(m[1], "could not compile") || strings.HasPrefix(m[1], "aborting due to") || strings.HasPrefix(m[1], "test failed") {
			continue
		}
		for j := i + 1; j < len(lines) && j <= i+3; j++ {
			if a := rustcArrow().FindStringSubmatch(lines[j]); a != nil {
				var files fileList
				files.add(a[1])
				return Cause{Line: l, LineNo: i + 1, Files: files}, true
			}
		}
		if bare < 0 && strings.HasPrefix(l, "error[E") {
			bare = i
		}
	}
	if bare >= 0 {
		return Cause{Line: lines[bare], LineNo: bare + 1}, true
	}
	return Cause{}, false
}

// Java.

var (
	junit4Head      = lazyre.New(`^\d+\) (\S+)\(([\w.$]+)\)$`)
	junit5Method    = lazyre.New(`MethodSource \[className = '([^']+)', methodName = '([^']+)'`)
	surefireHead    = lazyre.New(`^\[ERROR\] (?:(\w+)\(([\w.$]+)\)|([\w.$]+)\.(\w+))\s+(?:--\s+)?Time elapsed:.*<<< (?:FAILURE|ERROR)!$`)
	surefireSummary = lazyre.New(`^\[ERROR\]\s+([\w$]+(?:\.[\w$]+)*)\.(\w+):(\d+)\s+(?:» )?(.+)$`)
	gradleHead      = lazyre.New(`^(\S+) > (.+) FAILED$`)
	javaFrame       = lazyre.New(`^\s+(?:at )?(?:[\w.$-]+(?:@[\w.-]+)?/)?([\w.$]+)\.[\w$<>]+\(([\w$]+\.(?:java|kt|scala|groovy)):\d+\)$`)
	javaAtFile      = lazyre.New(`\bat ([\w$]+\.(?:java|kt|scala|groovy)):\d+`)
	javacError      = lazyre.New(`^(?:(\S+\.java):\d+: error: |\[ERROR\] (\S+\.java):\[\d+,\d+\] )(.+)$`)
	javacSymbol     = lazyre.New(`^\s+symbol:\s+(.+)$`)
	javaThread      = lazyre.New(`^Exception in thread "[^"]*" (.+)$`)
)

// junitCause reads the reports of JUnit 4's and 5's console runners,
// Maven Surefire and Gradle: the exception of the first failing test,
// its id "com.acme.FooTest.bar", and the file of its frame in the test's
// class.
func junitCause(lines []string) (Cause, bool) {
	for i, l := range lines {
		var class, method string
		exc := -1
		switch {
		case strings.HasSuffix(l, ")") && l != "" && l[0] >= '0' && l[0] <= '9':
			m := junit4Head().FindStringSubmatch(l)
			if m == nil {
				continue
			}
			class, method, exc = m[2], m[1], i+1
		case strings.Contains(l, "MethodSource ["):
			m := junit5Method().FindStringSubmatch(l)
			if m == nil {
				continue
			}
			class, method = m[1], m[2]
			for j := i + 1; j < len(lines) && j <= i+3; j++ {
				if strings.HasPrefix(strings.TrimSpace(lines[j]), "=> ") {
					exc = j
					break
				}
			}
		case strings.HasPrefix(l, "[ERROR] ") && strings.Contains(l, "<<< "):
			m := surefireHead().FindStringSubmatch(l)
			if m == nil {
				continue
			}
			class, method, exc = m[2], m[1], i+1
			if m[3] != "" {
				class, method = m[3], m[4]
			}
		case strings.HasSuffix(l, " FAILED") && strings.Contains(l, " > "):
			m := gradleHead().FindStringSubmatch(l)
			if m == nil {
				continue
			}
			class, method = m[1], m[2]
			for j := i + 1; j < len(lines) && j <= i+3; j++ {
				if !blank(lines[j]) {
					exc = j
					break
				}
			}
		default:
			continue
		}
		if exc < 0 || exc >= len(lines) {
			continue
		}
		c := Cause{Test: class + "." + method, LineNo: exc + 1}
		c.Line = strings.TrimPrefix(message(lines, exc, func(s string) bool {
			return strings.HasPrefix(strings.TrimSpace(s), "at ") || javaFrame().MatchString(s)
		}), "=> ")
		c.Files = javaFiles(lines, exc, class)
		if m := javaAtFile().FindStringSubmatch(lines[exc]); m != nil && len(c.Files) == 0 {
			c.Files = []string{m[1]}
		}
		return c, true
	}
	// Maven's summary alone: "[ERROR]   FooTest.bar:42 expected:<1> but
	// was:<2>".
	for i, l := range lines {
		if !strings.HasPrefix(l, "[ERROR]  ") {
			continue
		}
		if m := surefireSummary().FindStringSubmatch(l); m != nil {
			return Cause{Line: m[4], LineNo: i + 1, Test: m[1] + "." + m[2]}, true
		}
	}
	return Cause{}, false
}

// jvmPackages start the names of classes that are not the project's: the
// JDK's, the test frameworks', the build tools'.
var jvmPackages = []string{"java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "scala.", "org.junit.", "junit.", "org.hamcrest.", "org.opentest4j.", "org.assertj.", "org.mockito.", "org.apache.maven.", "org.gradle.", "worker.org.gradle.", "org.springframework."}

// javaFiles returns the project's files among the stack frames below
// lines[at], innermost first. The project's classes are those of the
// package of class (the test's), or, when class is "", of the frame that
// entered the program (the last of the trace), with the packages under
// the same two first components (com.acme.billing and com.acme.api); when
// no frame is of those, every frame but the JDK's and the frameworks'.
func javaFiles(lines []string, at int, class string) []string {
	var frames []javaFrameAt
	entry := ""
	for j := at + 1; j < len(lines) && j < at+400; j++ {
		t := strings.TrimSpace(lines[j])
		if strings.HasPrefix(t, "Caused by:") || strings.HasPrefix(t, "Suppressed:") {
			if entry == "" {
				entry = javaEntry(frames)
			}
			continue
		}
		if t == "" || strings.HasPrefix(t, "...") || strings.HasPrefix(t, "[...]") {
			continue
		}
		m := javaFrame().FindStringSubmatch(lines[j])
		if m == nil {
			if strings.HasPrefix(t, "at ") || strings.HasSuffix(t, "(Native Method)") || len(frames) == 0 {
				continue // a frame without a file, or the message's next line
			}
			break
		}
		frames = append(frames, javaFrameAt{m[1], m[2]})
	}
	if entry == "" {
		entry = javaEntry(frames)
	}
	if class == "" {
		class = entry
	}
	root := javaPackageRoot(class)
	var own, other fileList
	for _, f := range frames {
		if hasAnyPrefix(f.class, jvmPackages) {
			continue
		}
		pkg := javaPackageRoot(f.class)
		if pkg == root || strings.HasPrefix(pkg, root+".") || (root != "" && strings.HasPrefix(root, pkg+".")) {
			own.add(f.file)
		} else {
			other.add(f.file)
		}
	}
	if len(own) > 0 {
		return own
	}
	return other
}

// A javaFrameAt is a stack frame's class and file.
type javaFrameAt struct{ class, file string }

// javaEntry returns the class of the outermost frame that is not the
// JDK's or a framework's: the program's entry point.
func javaEntry(frames []javaFrameAt) string {
	for k := len(frames) - 1; k >= 0; k-- {
		if !hasAnyPrefix(frames[k].class, jvmPackages) {
			return frames[k].class
		}
	}
	return ""
}

// javaPackageRoot returns the first two components of the package of a
// class ("com.acme" of "com.acme.billing.FooTest$1"), its package when it
// has fewer, "" in the default package.
func javaPackageRoot(class string) string {
	if k := strings.IndexByte(class, '$'); k >= 0 {
		class = class[:k]
	}
	k := strings.LastIndexByte(class, '.')
	if k < 0 {
		return ""
	}
	pkg := class[:k]
	if i := strings.IndexByte(pkg, '.'); i >= 0 {
		if j := strings.IndexByte(pkg[i+1:], '.'); j >= 0 {
			pkg = pkg[:i+1+j]
		}
	}
	return pkg
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// javacCause reads javac's errors (and Maven's report of them): the first,
// with the symbol it could not find.
func javacCause(lines []string) (Cause, bool) {
	for i, l := range lines {
		if !strings.Contains(l, ".java:") {
			continue
		}
		m := javacError().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		file := m[1] + m[2]
		c := Cause{Line: strings.TrimSpace(l), LineNo: i + 1, Files: []string{file}}
		for j := i + 1; j < len(lines) && j <= i+4; j++ {
			if s := javacSymbol().FindStringSubmatch(lines[j]); s != nil {
				c.Line += ": " + strings.Join(strings.Fields(s[1]), " ")
				break
			}
		}
		return c, true
	}
	return Cause{}, false
}

// javaCause reads an exception no one caught: the exception with its
// message, and the project's frames.
func javaCause(lines []string) (Cause, bool) {
	for i, l := range lines {
		if !strings.HasPrefix(l, "Exception in thread ") {
			continue
		}
		if m := javaThread().FindStringSubmatch(l); m != nil {
			return Cause{Line: m[1], LineNo: i + 1, Files: javaFiles(lines, i, "")}, true
		}
	}
	return Cause{}, false
}

// JavaScript and TypeScript.

var (
	tapNotOK      = lazyre.New(`^(\s*)not ok \d+(?: - | )?(.*?)$`)
	tapKey        = lazyre.New(`^(\w[\w-]*):(?: (.*))?$`)
	batsWhere     = lazyre.New(`^\(in test file (\S+), line \d+\)$`)
	specFail      = lazyre.New(`^(\s*)✖ (.+?) \([\d.]+m?s\)$`)
	jsFrame       = lazyre.New(`(?:\(|at |^)((?:file://)?[^\s()]+?):\d+:\d+\)?$`)
	jestCodeLine  = lazyre.New(`^\s*>?\s*\d+ \|`)
	vitestFail    = lazyre.New(`^\s*FAIL\s+(\S+) > (.+)$`)
	vitestWhere   = lazyre.New(`^\s*❯ (\S+?):\d+:\d+$`)
	jsComment     = lazyre.New(`\s+// [\w. ]*equality$`)
	jsErrorLine   = lazyre.New(`^(?:Uncaught )?(?:[A-Z][\w$]*)?(?:Error|Exception)(?: \[[\w-]+\])?(?::|$)`)
	jsHeader      = lazyre.New(`^(\S+):\d+$`)
	tscError      = lazyre.New(`^(?:(\S+?)\(\d+,\d+\): |(\S+?):\d+:\d+ - )error TS\d+: |^error TS\d+: `)
	eslintRow     = lazyre.New(`^\s+(?:[✖⚠]\s+)?(\d+):(\d+)\s+(?:(error|warning|✖|⚠)\s+)?(.+?)(?:\s{2,}(\S+))?$`)
	eslintFile    = lazyre.New(`^\s*(\S+\.\w+)(?::\d+:\d+)?$`)
	eslintCompact = lazyre.New(`^(\S.*?): line \d+, col \d+, (?:Error|Warning) - `)
)

// jsFrameFile returns the file of a JavaScript stack frame
// ("at f (/src/x.js:3:9)", "TestContext.<anonymous> (x.test.js:3:29)"),
// "" when the line is none.
func jsFrameFile(line string) string {
	if m := jsFrame().FindStringSubmatch(strings.TrimSpace(line)); m != nil {
		return m[1]
	}
	return ""
}

// nodeTestCause reads TAP (node --test when its output is not a
// terminal, tape, node-tap) and node --test's spec reporter: the error
// of the first failing test (a test failing only because its subtests
// did is not one), its name, its location and the project's frames.
func nodeTestCause(lines []string) (Cause, bool) {
	for i, l := range lines {
		if strings.Contains(l, "not ok ") {
			if c, ok := tapFailure(lines, i); ok {
				return c, true
			}
		}
	}
	for i, l := range lines {
		if !strings.Contains(l, "✖ ") {
			continue
		}
		m := specFail().FindStringSubmatch(l)
		if m == nil || i+1 >= len(lines) || indentOf(lines[i+1]) <= len(m[1]) || blank(lines[i+1]) {
			continue // a suite, or the summary
		}
		c := Cause{Test: m[2], LineNo: i + 2}
		c.Line = message(lines, i+1, func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "at ") })
		var files fileList
		for j := i + 2; j < len(lines) && j < i+100 && (blank(lines[j]) || indentOf(lines[j]) > len(m[1])); j++ {
			if t := strings.TrimSpace(lines[j]); strings.HasPrefix(t, "at ") {
				files.add(jsFrameFile(t))
			}
		}
		c.Files = files
		return c, true
	}
	return Cause{}, false
}

// tapFailure reads the TAP test point "not ok" at lines[at] and the YAML
// block under it; false for a test that failed because its subtests did,
// or one marked TODO or SKIP.
func tapFailure(lines []string, at int) (Cause, bool) {
	m := tapNotOK().FindStringSubmatch(lines[at])
	if m == nil || strings.Contains(m[2], "# TODO") || strings.Contains(m[2], "# SKIP") {
		return Cause{}, false
	}
	c := Cause{Line: strings.TrimSpace(lines[at]), LineNo: at + 1, Test: tapTestName(lines, at, len(m[1]), m[2])}
	fields := tapYAML(lines, at)
	if t := fields["failureType"]; len(t) == 1 && t[0] == "subtestsFailed" {
		return Cause{}, false
	}
	var files fileList
	if len(fields) == 0 {
		if line, ok := batsMessage(lines, at, &files); ok {
			c.Line = line
		}
	}
	if e := fields["error"]; len(e) > 0 {
		c.Line = message(e, firstNonBlank(e), nil)
	} else if exp, act := fields["expected"], fields["actual"]; len(exp) == 1 && len(act) == 1 {
		c.Line = m[2] + ": expected " + exp[0] + ", actual " + act[0]
	} else if exp, act, ok := diffPair(fields["diff"]); ok {
		c.Line = m[2] + ": expected " + exp + ", actual " + act
	}
	if loc := fields["location"]; len(loc) == 1 {
		files.add(jsFrameFile(loc[0]))
	}
	for _, l := range fields["at"] {
		if f, ok := strings.CutPrefix(l, "fileName: "); ok {
			files.add(f)
		} else {
			files.add(jsFrameFile(l))
		}
	}
	for _, l := range fields["stack"] {
		files.add(jsFrameFile(l))
	}
	c.Files = files
	return c, true
}

// tapTestName returns the name of the test whose point "not ok" is at
// lines[at], indented by indent: the comment tape prints above its
// assertions, else the point's description, test.
func tapTestName(lines []string, at, indent int, test string) string {
	for j := at - 1; j >= 0 && j >= at-50; j-- {
		t := strings.TrimSpace(lines[j])
		if strings.HasPrefix(t, "ok ") {
			continue
		}
		if name, ok := strings.CutPrefix(t, "# "); ok && !strings.HasPrefix(name, "Subtest:") && indentOf(lines[j]) == indent {
			test = name
		}
		break
	}
	return test
}

// tapYAML reads the YAML block under the test point at lines[at], "---"
// ... "...", its keys at one indentation: each key's lines, or none for
// a point without a block.
func tapYAML(lines []string, at int) map[string][]string {
	fields := map[string][]string{}
	if at+1 >= len(lines) || strings.TrimSpace(lines[at+1]) != "---" {
		return fields
	}
	keyIndent, key := -1, ""
	for j := at + 2; j < len(lines) && j < at+400; j++ {
		l := lines[j]
		if strings.TrimSpace(l) == "..." {
			break
		}
		if keyIndent < 0 {
			keyIndent = indentOf(l)
		}
		if indentOf(l) == keyIndent {
			if k := tapKey().FindStringSubmatch(strings.TrimSpace(l)); k != nil {
				key = k[1]
				switch v := k[2]; v {
				case "", "|", "|-", "|+", ">", ">-":
					fields[key] = []string{}
				default:
					fields[key] = []string{yamlScalar(v)}
					key = ""
				}
				continue
			}
		}
		if key != "" && (blank(l) || indentOf(l) > keyIndent) {
			fields[key] = append(fields[key], strings.TrimSpace(l))
		}
	}
	return fields
}

// batsMessage reads the comments bats prints under a failing test point
// at lines[at], "# (in test file x.bats, line 3)" then what failed:
// it adds the test's file to files and returns what failed, false when
// nothing did.
func batsMessage(lines []string, at int, files *fileList) (string, bool) {
	var parts []string
	for j := at + 1; j < len(lines) && strings.HasPrefix(lines[j], "# "); j++ {
		t := strings.TrimSpace(lines[j][2:])
		if m := batsWhere().FindStringSubmatch(t); m != nil {
			files.add(m[1])
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "", false
	}
	return joinText(parts), true
}

// yamlScalar returns the value of a YAML flow scalar, unquoted.
func yamlScalar(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return strings.ReplaceAll(v[1:len(v)-1], `\"`, `"`)
	}
	return v
}

func firstNonBlank(lines []string) int {
	for i, l := range lines {
		if !blank(l) {
			return i
		}
	}
	return 0
}

// diffPair reads a unified diff of one expected line against one actual
// line (as node-tap prints under a failed comparison).
func diffPair(diff []string) (expected, actual string, ok bool) {
	n := 0
	for _, l := range diff {
		switch {
		case strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "@@"):
		case strings.HasPrefix(l, "-"):
			expected, n = l[1:], n+1
		case strings.HasPrefix(l, "+"):
			actual, n = l[1:], n+1
		}
	}
	return expected, actual, n == 2 && expected != "" && actual != ""
}

// jestCause reads Jest's and Vitest's reports: the first failing test's
// error (for a failed expect, the matcher with what was expected and
// received), its name ("Suite › test"; Vitest's "file > Suite > test"),
// and the project's first frames.
func jestCause(lines []string) (Cause, bool) {
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if name, ok := strings.CutPrefix(t, "● "); ok && name != "Console" {
			return jestFailure(lines, i, name), true
		}
		if strings.Contains(l, "FAIL ") && strings.Contains(l, " > ") {
			if m := vitestFail().FindStringSubmatch(l); m != nil {
				return vitestFailure(lines, i, m[1]+" > "+m[2]), true
			}
		}
	}
	return Cause{}, false
}

func jestFailure(lines []string, at int, name string) Cause {
	c := Cause{Test: name, LineNo: at + 1}
	if name == "Test suite failed to run" || strings.HasSuffix(name, ":") {
		c.Test = "" // not a test: "Validation Error:"
	}
	end := func(l string) bool {
		t := strings.TrimSpace(l)
		return strings.HasPrefix(t, "● ") || strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "Test Suites:") || jestCodeLine().MatchString(l)
	}
	var msg []string
	first := -1
	j := at + 1
	for ; j < len(lines) && !end(lines[j]); j++ {
		if t := strings.TrimSpace(lines[j]); t != "" {
			if first < 0 {
				first = j
			}
			msg = append(msg, t)
		}
	}
	if first >= 0 {
		c.LineNo = first + 1
	}
	if len(msg) == 0 {
		c.Line = strings.TrimSpace(lines[at])
	} else if head := jsComment().ReplaceAllString(msg[0], ""); strings.HasPrefix(head, "expect(") {
		var seen []string
		for _, t := range msg[1:] {
			if strings.HasPrefix(t, "Expected") || strings.HasPrefix(t, "Received") {
				seen = append(seen, strings.Join(strings.Fields(t), " "))
			}
		}
		c.Line = head
		if len(seen) > 0 {
			c.Line += ": " + strings.Join(seen, ", ")
		}
	} else {
		c.Line = message(lines, first, end)
	}
	var files fileList
	for ; j < len(lines) && j < at+200; j++ {
		t := strings.TrimSpace(lines[j])
		if strings.HasPrefix(t, "● ") || strings.HasPrefix(t, "Test Suites:") {
			break
		}
		if strings.HasPrefix(t, "at ") {
			files.add(jsFrameFile(t))
		}
	}
	c.Files = files
	return c
}

func vitestFailure(lines []string, at int, name string) Cause {
	c := Cause{Test: name, Line: strings.TrimSpace(lines[at]), LineNo: at + 1}
	var files fileList
	found := false
	for j := at + 1; j < len(lines) && j < at+200; j++ {
		l := lines[j]
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "FAIL ") || strings.HasPrefix(t, "⎯") || strings.HasPrefix(t, "Test Files ") {
			break
		}
		if t == "" {
			continue
		}
		if m := vitestWhere().FindStringSubmatch(l); m != nil {
			files.add(m[1])
			continue
		}
		if strings.HasPrefix(t, "at ") {
			files.add(jsFrameFile(t))
			continue
		}
		if !found {
			c.Line, c.LineNo, found = jsComment().ReplaceAllString(t, ""), j+1, true
		}
	}
	c.Files = files
	return c
}

// nodeCause reads an error a Node.js program did not catch: the error
// with its message, where it was thrown (the location Node prints above
// it), and the project's frames.
func nodeCause(lines []string) (Cause, bool) {
	for i, l := range lines {
		if l == "" || l[0] == ' ' || !jsErrorLine().MatchString(l) || !framesFollow(lines, i) {
			continue
		}
		c := Cause{LineNo: i + 1}
		c.Line = message(lines, i, func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "at ") })
		var files fileList
		// Above it: "/src/x.js:3", the source line and a caret.
		for j := i - 1; j >= 0 && j >= i-6; j-- {
			if m := jsHeader().FindStringSubmatch(lines[j]); m != nil {
				files.add(m[1])
				break
			}
		}
		for j := i + 1; j < len(lines) && j < i+60; j++ {
			if t := strings.TrimSpace(lines[j]); strings.HasPrefix(t, "at ") {
				files.add(jsFrameFile(t))
			}
		}
		c.Files = files
		return c, true
	}
	return Cause{}, false
}

// framesFollow reports whether a JavaScript stack trace follows the line
// lines[at], as one does an error's message.
func framesFollow(lines []string, at int) bool {
	for j := at + 1; j < len(lines) && j < at+30; j++ {
		if strings.HasPrefix(lines[j], "    at ") {
			return true
		}
	}
	return false
}

// tscCause reads the TypeScript compiler's errors: the first one in a
// tsconfig file (a configuration the compiler cannot use explains the
// rest), else the first one.
func tscCause(lines []string) (Cause, bool) {
	var c Cause
	for i, l := range lines {
		if !strings.Contains(l, "error TS") {
			continue
		}
		m := tscError().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		file := m[1] + m[2]
		config := strings.HasPrefix(file[strings.LastIndexByte(file, '/')+1:], "tsconfig")
		if c.Line != "" && !config {
			continue
		}
		var files fileList
		files.add(file)
		c = Cause{Line: l, LineNo: i + 1, Files: files}
		if config {
			break
		}
	}
	return c, c.Line != ""
}

// eslintCause reads ESLint's stylish format (a file's path alone on a
// line, then its problems "  3:5  error  'x' is not defined  no-undef",
// as xo prints it too) and its compact format: the first error, else the
// first warning, as "path:3:5: 'x' is not defined (no-undef)".
func eslintCause(lines []string) (Cause, bool) {
	file := ""
	var warning Cause
	for i, l := range lines {
		if blank(l) {
			continue
		}
		if m := eslintCompact().FindStringSubmatch(l); m != nil {
			return Cause{Line: l, LineNo: i + 1, Files: []string{m[1]}}, true
		}
		if m := eslintRow().FindStringSubmatch(l); m != nil && file != "" {
			line := file + ":" + m[1] + ":" + m[2] + ": " + m[4]
			if m[5] != "" {
				line += " (" + m[5] + ")"
			}
			c := Cause{Line: line, LineNo: i + 1, Files: []string{file}}
			if m[3] != "warning" && m[3] != "⚠" && !strings.Contains(l, "⚠") {
				return c, true
			}
			if warning.Line == "" {
				warning = c
			}
			continue
		}
		file = ""
		if i+1 < len(lines) && eslintRow().MatchString(lines[i+1]) {
			if m := eslintFile().FindStringSubmatch(l); m != nil {
				file = m[1]
			}
		}
	}
	return warning, warning.Line != ""
}

// Compilers and linters that print "file:line:col: message".

// sourceExt is the extension of a file a compiler or a linter reports on.
const sourceExt = `(?:go|py|pyi|js|jsx|mjs|cjs|ts|tsx|mts|cts|vue|svelte|rs|java|kt|scala|rb|php|c|cc|cp|cpp|cxx|c\+\+|h|hh|hpp|hxx|ipp|tcc|inl|m|mm|cu|cuh|cs|swift|sh|bash|zsh|tf|hcl|ex|exs|erl|lua|pl|pm|dart|groovy|sql|proto|ya?ml|json|toml|css|scss|less|html|md)`

var (
	located = lazyre.New(`^\s*((?:[A-Za-z]:)?[^\s:()"'<>]*\.` + sourceExt + `):(\d+)(?::(\d+))?:? (.+)$`)
	// The message of a located line: its severity or its code.
	locatedError   = lazyre.New(`^(?:fatal error|error)\b`)
	locatedCode    = lazyre.New(`^[A-Z]{1,4}\d{2,5}\b`)
	locatedWarning = lazyre.New(`^warning\b`)
	locatedNote    = lazyre.New(`^(?:note|info|hint|remark)\b`)
	linkerObject   = lazyre.New(`^(\S+\.\w+):\(`)
	linkerRefBy    = lazyre.New(`^>>> referenced by (\S+)`)
)

// locatedCause reads the "file:line:col: message" lines of compilers and
// linters (gcc and clang, flake8, ruff, pylint, pyflakes, mypy,
// shellcheck -f gcc, ESLint's unix format, standard): the first error,
// else the first line with a code ("F401", "W0311"), else a linker's
// error, else the first warning, else, in an output that is mostly such
// lines, the first of them. The tool is named by the file's language.
func locatedCause(lines []string) (Cause, bool) {
	const (
		errs = iota
		codes
		warnings
		others
		classes
	)
	var best [classes]int
	for k := range best {
		best[k] = -1
	}
	n, nonBlank := 0, 0
	for i, l := range lines {
		if blank(l) {
			continue
		}
		nonBlank++
		if !strings.Contains(l, ": ") || makeError(l) {
			continue
		}
		m := located().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n++
		msg := m[4]
		class := others
		switch {
		case locatedError().MatchString(msg):
			class = errs
		case locatedCode().MatchString(msg):
			class = codes
		case locatedWarning().MatchString(msg):
			class = warnings
		case locatedNote().MatchString(msg):
			if best[others] < 0 {
				best[others] = i // a note counts only in a report of them
			}
			continue
		}
		if best[class] < 0 {
			best[class] = i
		}
	}
	at := best[errs]
	if at < 0 {
		at = best[codes]
	}
	if at < 0 {
		if c, ok := linkerCause(lines); ok {
			return c, true
		}
		at = best[warnings]
	}
	if at < 0 && 2*n >= nonBlank {
		at = best[others]
	}
	if at < 0 {
		return Cause{}, false
	}
	m := located().FindStringSubmatch(lines[at])
	var files fileList
	files.add(m[1])
	return Cause{Line: lines[at], LineNo: at + 1, Files: files, Tool: toolOfFile(m[1])}, true
}

// toolOfFile names the extractor's tool for a located line by the
// language of its file.
func toolOfFile(file string) string {
	ext := file[strings.LastIndexByte(file, '.')+1:]
	switch ext {
	case "py", "pyi":
		return "flake8"
	case "go":
		return "go-build"
	case "js", "jsx", "mjs", "cjs", "vue", "svelte":
		return "eslint"
	case "ts", "tsx", "mts", "cts":
		return "tsc"
	case "rs":
		return "rustc"
	case "java":
		return "javac"
	case "c", "cc", "cp", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx", "ipp", "tcc", "inl", "m", "mm", "cu", "cuh":
		return "cc"
	}
	return "lint"
}

// linkerCause reads a linker's error: an undefined or doubly defined
// symbol, a library not found; the file is the object's source when the
// linker names it.
func linkerCause(lines []string) (Cause, bool) {
	for i, l := range lines {
		if !containsAny(l, []string{"undefined reference to", "multiple definition of", "undefined symbol: ", "cannot find -l"}) {
			continue
		}
		var files fileList
		if m := linkerObject().FindStringSubmatch(l); m != nil {
			files.add(m[1])
		}
		for j := i + 1; j < len(lines) && j <= i+2; j++ {
			if m := linkerRefBy().FindStringSubmatch(lines[j]); m != nil {
				files.add(m[1])
			}
		}
		return Cause{Line: l, LineNo: i + 1, Files: files, Tool: "cc"}, true
	}
	return Cause{}, false
}

// makeError reports a line of make's own ("make: *** [Makefile:3: test]
// Error 1"): it names the recipe that failed, never why.
func makeError(l string) bool {
	l = strings.TrimSpace(l)
	return strings.HasPrefix(l, "make") && strings.Contains(l, ": *** ")
}
