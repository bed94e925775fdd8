package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orket/orket"
	"github.com/orket/orket/internal/lazyre"
	"github.com/orket/orket/learn"
)

// locations in tool output: Go and most compilers (file:line:col: msg),
// TypeScript (file(line,col): msg).
var (
	colonLoc = lazyre.New(`^\s*(?:--> )?([\w@./+-]+\.[A-Za-z0-9]+):(\d+)(?::(\d+))?:? (.+)$`)
	parenLoc = lazyre.New(`^\s*([\w@./+-]+\.[A-Za-z0-9]+)\((\d+),(\d+)\): (.+)$`)
)

type annotation struct {
	level           string // error, warning
	file, line, col string
	title, message  string
}

func (a annotation) String() string {
	var props []string
	if a.file != "" {
		props = append(props, "file="+escapeProperty(a.file))
		if a.line != "" {
			props = append(props, "line="+a.line)
		}
		if a.col != "" {
			props = append(props, "col="+a.col)
		}
	}
	if a.title != "" {
		props = append(props, "title="+escapeProperty(a.title))
	}
	head := "::" + a.level
	if len(props) > 0 {
		head += " " + strings.Join(props, ",")
	}
	return head + "::" + escapeData(a.message)
}

func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// Go test's output, read line by line (see goAnnotations).
var (
	// a test's log line: "    greet_test.go:8: message" (a path with
	// -fullpath), indented under its test
	goTestLog = lazyre.New(`^(\s+)(\S+\.go):(\d+): (.*)$`)
	// the test the log lines that follow belong to (-v)
	goTestRun = lazyre.New(`^=== (?:RUN|CONT|PAUSE|NAME)\s+(\S+)`)
	// a test's result; the log lines of a failed test follow it (no -v)
	goTestDone = lazyre.New(`^\s*--- (FAIL|PASS|SKIP): (\S+)`)
	// a package's result: "FAIL\texample.com/greeter/api\t0.012s",
	// "ok  \texample.com/m\t0.003s", "FAIL\texample.com/m [build failed]"
	goPkgResult = lazyre.New(`^(FAIL|ok)\s+(\S+)`)
	// a panic, and the frames of its goroutine's stack
	goPanic = lazyre.New(`^panic: (.+?)(?: \[recovered[^\]]*\])?$`)
	goFrame = lazyre.New(`^\t(\S+\.go):(\d+)(?: \+0x[0-9a-f]+)?$`)
	// "vet: ./x.go:12:5: undefined: Foo": go vet's report of a compile error
	vetPrefix = lazyre.New(`^vet: `)
	// a stack frame's offset, which is no message
	frameOffset = lazyre.New(`^\+0x[0-9a-f]+$`)
)

// maxStepAnnotations bounds the annotations of one step (GitHub shows ten
// of a kind per step).
const maxStepAnnotations = 10

// stepAnnotations turns a failed step into annotations: one per location
// its output names (at most maxStepAnnotations), or one for the step. A
// failed Go test is annotated at its assertion (the test file, found
// through the package go test names, the step's dir and the touch set),
// with the assertion's message; a location printed twice (the build and
// vet report one compile error) is annotated once.
func stepAnnotations(root string, touch []string, r *orket.StepResult) []annotation {
	level := "error"
	if !r.Required {
		level = "warning"
	}
	title := "orket: step " + r.Name + " failed (" + r.ExitText() + ")"
	lines := strings.Split(learn.Plain(r.OutputTail), "\n")
	res := &goResolver{root: root, dir: r.Dir, touch: touch}
	var set annotationSet
	used := goAnnotations(lines, res, func(file, line, msg string) {
		set.add(annotation{level: level, file: file, line: line, title: title, message: msg})
	})
	for i, line := range lines {
		if used[i] {
			continue
		}
		line = vetPrefix().ReplaceAllLiteralString(line, "")
		m := colonLoc().FindStringSubmatch(line)
		if m == nil {
			m = parenLoc().FindStringSubmatch(line)
		}
		if m == nil || frameOffset().MatchString(m[4]) {
			continue
		}
		file := res.path(m[1])
		if file == "" {
			continue
		}
		set.add(annotation{level: level, file: file, line: m[2], col: m[3], title: title, message: strings.TrimSpace(m[4])})
	}
	out := set.list
	if len(out) > maxStepAnnotations {
		out = out[:maxStepAnnotations]
	}
	if len(out) == 0 {
		msg := lastLines(strings.Join(lines, "\n"), 5)
		if msg == "" {
			msg = r.Command
		}
		out = append(out, annotation{level: level, title: title, message: msg})
	}
	return out
}

// goAnnotations reads go test's output: the log lines of each failed test
// (in verbose output too, where passing tests log as well) and the first
// frame in the repository of a panic. It calls add with the file, the
// line and the message of each (no file nor line when the file cannot be
// found: the message then starts with the name and line go test printed),
// and returns the indexes of the lines it used.
func goAnnotations(lines []string, res *goResolver, add func(file, line, msg string)) map[int]bool {
	g := &goTestOutput{res: res, add: add, used: map[int]bool{}}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := goTestRun().FindStringSubmatch(line); m != nil {
			g.current = m[1]
			continue
		}
		if m := goTestDone().FindStringSubmatch(line); m != nil {
			g.testDone(m[1], m[2])
			continue
		}
		if m := goPkgResult().FindStringSubmatch(line); m != nil {
			if m[1] == "ok" {
				g.pending = nil // a passing package's tests logged (-v)
			}
			g.flush(m[2])
			g.current, g.panicMsg, g.panicked = "", "", false
			continue
		}
		if m := goPanic().FindStringSubmatch(line); m != nil && !g.panicked {
			g.panicMsg, g.panicked = "panic: "+m[1], true
			continue
		}
		if m := goFrame().FindStringSubmatch(line); m != nil {
			if file := res.path(m[1]); file != "" && g.panicMsg != "" {
				g.used[i] = true
				add(file, m[2], g.panicMsg)
				g.panicMsg = ""
			}
			continue
		}
		if m := goTestLog().FindStringSubmatch(line); m != nil && g.current != "" {
			i = g.logLine(lines, i, m)
		}
	}
	g.flush("")
	return g.used
}

// goTestOutput is what goAnnotations knows as it reads go test's output.
type goTestOutput struct {
	res  *goResolver
	add  func(file, line, msg string)
	used map[int]bool // the indexes of the lines used

	pending []goTestLogged // log lines of the package being tested
	current string         // the test the next log lines belong to
	// A panic is annotated once, at the first frame of its stack that is
	// in the repository; then, until the package's result, no other.
	panicMsg string
	panicked bool
}

// A goTestLogged is a log line of a test: where it was logged, and what.
type goTestLogged struct {
	test, file, line, msg string
}

// testDone reads a test's result line: the log lines that follow a FAIL
// line are its own; a test that passed or was skipped logged nothing
// that failed, and its (and its subtests') log lines are dropped.
func (g *goTestOutput) testDone(result, test string) {
	if result == "FAIL" {
		g.current = test
		return
	}
	g.current = ""
	kept := g.pending[:0]
	for _, l := range g.pending {
		if l.test != test && !strings.HasPrefix(l.test, test+"/") {
			kept = append(kept, l)
		}
	}
	g.pending = kept
}

// flush annotates the pending log lines of package pkg.
func (g *goTestOutput) flush(pkg string) {
	for _, l := range g.pending {
		if file := g.res.goTestFile(pkg, l.file); file != "" {
			g.add(file, l.line, l.msg)
		} else {
			g.add("", "", l.file+":"+l.line+": "+l.msg) // where, in words
		}
	}
	g.pending = nil
}

// logLine keeps the log line lines[i] (m its goTestLog match), with the
// lines of a multi-line message, which go on indented deeper, and
// returns the index of its last line.
func (g *goTestOutput) logLine(lines []string, i int, m []string) int {
	g.used[i] = true
	msg := []string{m[4]}
	deeper := m[1] + "    "
	for i+1 < len(lines) && strings.HasPrefix(lines[i+1], deeper) && !goTestLog().MatchString(lines[i+1]) && !goTestDone().MatchString(lines[i+1]) {
		i++
		g.used[i] = true
		if len(msg) < 10 {
			msg = append(msg, strings.TrimPrefix(lines[i], deeper))
		}
	}
	g.pending = append(g.pending, goTestLogged{test: g.current, file: m[2], line: m[3], msg: strings.TrimSpace(strings.Join(msg, "\n"))})
	return i
}

// A goResolver makes the paths in a step's output repository-relative.
type goResolver struct {
	root, dir string
	touch     []string
	// the Go module of the step's dir: its path and its directory
	// (repository-relative), read once
	modRead        bool
	modPath, modAt string
}

// path resolves a path as a tool printed it: absolute, relative to the
// step's dir or the root, a Go module path (-trimpath), or the end of a
// touched path.
func (g *goResolver) path(p string) string {
	if f := resolveFile(g.root, g.dir, g.touch, p); f != "" {
		return f
	}
	if mod, at := g.module(); mod != "" && strings.HasPrefix(p, mod+"/") {
		f := path.Join(at, strings.TrimPrefix(p, mod+"/"))
		if g.exists(f) {
			return f
		}
	}
	return ""
}

// goTestFile finds the file of a test's log line: go test prints its base
// name only ("greet_test.go"), and the package on the package's result
// line ("FAIL\texample.com/greeter/api"). With the module's path (go.mod
// in the step's dir or above it, up to the root), the package names the
// directory; without it, a touched file of that name in a directory whose
// path ends like the package's, or the step's dir. "" when none is found.
func (g *goResolver) goTestFile(pkg, name string) string {
	if strings.Contains(name, "/") { // -fullpath
		return g.path(name)
	}
	var fallback string
	if mod, at := g.module(); mod != "" && (pkg == mod || strings.HasPrefix(pkg, mod+"/")) {
		f := path.Join(at, strings.TrimPrefix(strings.TrimPrefix(pkg, mod), "/"), name)
		if g.exists(f) || slices.Contains(g.touch, f) {
			return f
		}
		fallback = f // a test file the change added and the revert took away
	}
	if pkg != "" {
		best, bestScore, tie := "", 0, false
		for _, t := range g.touch {
			if path.Base(t) != name {
				continue
			}
			switch score := commonTail(path.Dir(t), pkg); {
			case score > bestScore:
				best, bestScore, tie = t, score, false
			case score == bestScore:
				tie = true
			}
		}
		if best != "" && !tie {
			return best
		}
	}
	if f := resolveFile(g.root, g.dir, g.touch, name); f != "" {
		return f
	}
	return fallback
}

// commonTail counts the trailing path elements a directory and a package
// path share: "api/v2" and "example.com/greeter/api/v2" share two.
func commonTail(dir, pkg string) int {
	d, p := strings.Split(dir, "/"), strings.Split(pkg, "/")
	n := 0
	for n < len(d) && n < len(p) && d[len(d)-1-n] == p[len(p)-1-n] && d[len(d)-1-n] != "." {
		n++
	}
	return n
}

// module returns the path of the Go module the step runs in and its
// directory, from the nearest go.mod at or above the step's dir, up to
// the root; "" when there is none.
func (g *goResolver) module() (modPath, dir string) {
	if g.modRead {
		return g.modPath, g.modAt
	}
	g.modRead = true
	for d := path.Clean(filepath.ToSlash(g.dir)); ; d = path.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(g.root, filepath.FromSlash(d), "go.mod")); err == nil {
			if m := goModule().FindSubmatch(b); m != nil {
				g.modPath, g.modAt = strings.Trim(string(m[1]), `"`+"`"), d
			}
			return g.modPath, g.modAt
		}
		if d == "." || d == "/" || strings.HasPrefix(d, "..") {
			return "", ""
		}
	}
}

var goModule = lazyre.New(`(?m)^module\s+(\S+)`)

func (g *goResolver) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(g.root, filepath.FromSlash(rel)))
	return err == nil
}

// An annotationSet holds annotations in order, one per location: an
// annotation at a location already held adds its message to the first's,
// unless that message is there already (a compile error that the build
// and vet both print, one step's failure reported by another).
// Annotations without a location are kept as they are.
type annotationSet struct {
	list []annotation
	at   map[string]int // location: index in list
}

// maxMessages bounds the messages one location gathers (the failures of
// a table-driven test all point at one line).
const maxMessages = 5

func (s *annotationSet) add(a annotation) {
	if a.file == "" {
		s.list = append(s.list, a)
		return
	}
	key := a.file + ":" + a.line + ":" + a.col
	i, ok := s.at[key]
	if !ok {
		if s.at == nil {
			s.at = map[string]int{}
		}
		s.at[key] = len(s.list)
		s.list = append(s.list, a)
		return
	}
	held := &s.list[i]
	msgs := strings.Split(held.message, "\n\n")
	if slices.Contains(msgs, a.message) || len(msgs) >= maxMessages {
		return
	}
	held.message += "\n\n" + a.message
}

// resolveFile makes a path from tool output repository-relative: as
// written (from the root or the step's dir), or the one touched path that
// ends with it (go test prints paths relative to the package).
func resolveFile(root, dir string, touch []string, p string) string {
	if filepath.IsAbs(p) {
		if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
		return ""
	}
	for _, cand := range []string{filepath.Join(dir, p), p} {
		if _, err := os.Stat(filepath.Join(root, cand)); err == nil {
			return filepath.ToSlash(filepath.Clean(cand))
		}
	}
	var match string
	for _, t := range touch {
		if t == p {
			return t
		}
		if strings.HasSuffix(t, "/"+p) {
			if match != "" {
				return ""
			}
			match = t
		}
	}
	return match
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// githubReport writes workflow annotations (on stderr, which the runner
// reads as it reads stdout, so --json stays one object) and appends a
// summary to $GITHUB_STEP_SUMMARY, when running under GitHub Actions.
func githubReport(o *options, root string, res *orket.Record) {
	if o.getenv("GITHUB_ACTIONS") != "true" {
		return
	}
	writeAnnotations(o.stderr, root, res)
	if f := o.getenv("GITHUB_STEP_SUMMARY"); f != "" && !res.Request.DryRun {
		out, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			writeSummary(out, res)
			err = out.Close()
		}
		if err != nil {
			fmt.Fprintf(o.stderr, "orket: warning: cannot write the step summary: %v\n", err)
		}
	}
}

// writeAnnotations writes the run's workflow commands: advisories, failed
// preflight checks, the failed edit and steps, writes outside the scope.
// One location is annotated once, even when two steps report it.
func writeAnnotations(w io.Writer, root string, res *orket.Record) {
	var all annotationSet
	for _, a := range res.Advisories {
		msg := fmt.Sprintf("%s (seen %d time(s), last %s; step %s)", a.Title, a.Count, a.LastSeen.Format("2006-01-02"), a.FailedCommand)
		all.add(annotation{level: "warning", title: "orket advisory", message: msg})
	}
	for _, c := range res.Preflight {
		if !c.OK {
			all.add(annotation{level: "warning", title: "orket preflight", message: c.Detail + " (" + c.Source + ")"})
		}
	}
	var failed []*orket.StepResult
	if res.Edit != nil && res.Edit.Status == orket.StepFailed {
		failed = append(failed, res.Edit)
	}
	for _, s := range res.Steps {
		if s.Status == orket.StepFailed {
			failed = append(failed, s)
		}
	}
	for _, s := range failed {
		for _, a := range stepAnnotations(root, res.Plan.TouchSet, s) {
			all.add(a)
		}
	}
	if res.Barrier != nil {
		for _, p := range append(append([]string{}, res.Barrier.Outside...), res.Barrier.Guarded...) {
			all.add(annotation{level: "error", title: "orket: write outside the scope", message: p + " is outside --scope " + strings.Join(res.Request.Scope, ", ")})
		}
	}
	if (res.Code == orket.EEscalated || res.Code == orket.EBaselineRed) && res.Escalation != nil {
		all.add(annotation{level: "error", title: "orket: task escalated", message: res.Error})
	}
	for _, a := range all.list {
		fmt.Fprintln(w, a)
	}
}

func writeSummary(w io.Writer, res *orket.Record) {
	fmt.Fprintf(w, "### orket run %s: `%s`\n\n", res.RunID, res.Code)
	if res.Error != "" {
		fmt.Fprintf(w, "%s\n\n", res.Error)
	}
	fmt.Fprintf(w, "Profile `%s`, %s, touch set of %d path(s).\n\n", res.Request.Profile, scopeText(res.Request.Scope), res.Plan.TouchCount)
	if res.Verdict != "" {
		fmt.Fprintf(w, "**%s**\n\n", verdictLine(res, func(_, s string) string { return s }))
	}
	fmt.Fprintln(w, "| step | result | time |")
	fmt.Fprintln(w, "|---|---|---:|")
	for _, s := range res.Steps {
		result := s.Status
		switch {
		case s.Status == orket.StepFailed:
			result = "failed, " + s.ExitText()
			if !s.Required {
				result += " (optional)"
			}
		case s.Status == orket.StepSkipped:
			result = "skipped (" + skipText(s.SkipReason) + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", s.Name, result, dur(s.DurationMS))
	}
	for _, s := range res.Steps {
		if s.Status == orket.StepFailed && s.OutputTail != "" {
			fmt.Fprintf(w, "\n<details><summary>%s output (tail)</summary>\n\n```\n%s\n```\n</details>\n", s.Name, strings.TrimRight(lastLines(s.OutputTail, 60), "\n"))
		}
	}
	fmt.Fprintln(w)
}

func scopeText(scope []string) string {
	if len(scope) == 0 {
		return "no scope"
	}
	return "scope " + strings.Join(scope, ", ")
}
