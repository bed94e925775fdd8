package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/orket/orket"
	"github.com/orket/orket/verify"
)

// locations in tool output: Go and most compilers (file:line:col: msg),
// TypeScript (file(line,col): msg).
var (
	colonLoc = regexp.MustCompile(`^\s*(?:--> )?([\w@./+-]+\.[A-Za-z0-9]+):(\d+)(?::(\d+))?:? (.+)$`)
	parenLoc = regexp.MustCompile(`^\s*([\w@./+-]+\.[A-Za-z0-9]+)\((\d+),(\d+)\): (.+)$`)
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

// stepAnnotations turns a failed step into annotations: one per location
// its output names (at most 10), or one for the step.
func stepAnnotations(root string, touch []string, r *verify.StepResult) []annotation {
	level := "error"
	if !r.Required {
		level = "warning"
	}
	title := "orket: step " + r.Name + " failed (" + orket.ExitText(r) + ")"
	var out []annotation
	for _, line := range strings.Split(r.OutputTail, "\n") {
		m := colonLoc.FindStringSubmatch(line)
		if m == nil {
			m = parenLoc.FindStringSubmatch(line)
		}
		if m == nil {
			continue
		}
		file := resolveFile(root, r.Dir, touch, m[1])
		if file == "" {
			continue
		}
		out = append(out, annotation{level: level, file: file, line: m[2], col: m[3], title: title, message: strings.TrimSpace(m[4])})
		if len(out) == 10 {
			break
		}
	}
	if len(out) == 0 {
		msg := lastLines(r.OutputTail, 5)
		if msg == "" {
			msg = r.Command
		}
		out = append(out, annotation{level: level, title: title, message: msg})
	}
	return out
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

func writeAnnotations(w io.Writer, root string, res *orket.Record) {
	var all []annotation
	for _, a := range res.Advisories {
		msg := fmt.Sprintf("%s (seen %d time(s), last %s; step %s)", a.Title, a.Count, a.LastSeen.Format("2006-01-02"), a.FailedCommand)
		all = append(all, annotation{level: "warning", title: "orket advisory", message: msg})
	}
	for _, c := range res.Preflight {
		if !c.OK {
			all = append(all, annotation{level: "warning", title: "orket preflight", message: c.Detail + " (" + c.Source + ")"})
		}
	}
	if res.Edit != nil && res.Edit.Status == verify.Failed {
		all = append(all, stepAnnotations(root, res.Plan.TouchSet, res.Edit)...)
	}
	for _, s := range res.Steps {
		if s.Status == verify.Failed {
			all = append(all, stepAnnotations(root, res.Plan.TouchSet, s)...)
		}
	}
	if res.Barrier != nil {
		for _, p := range append(append([]string{}, res.Barrier.Outside...), res.Barrier.Guarded...) {
			all = append(all, annotation{level: "error", title: "orket: write outside the scope", message: p + " is outside --scope " + strings.Join(res.Request.Scope, ", ")})
		}
	}
	for _, a := range all {
		fmt.Fprintln(w, a)
	}
}

func writeSummary(w io.Writer, res *orket.Record) {
	fmt.Fprintf(w, "### orket run %s: `%s`\n\n", res.RunID, res.Code)
	if res.Error != "" {
		fmt.Fprintf(w, "%s\n\n", res.Error)
	}
	fmt.Fprintf(w, "Profile `%s`, %s, touch set of %d path(s).\n\n", res.Request.Profile, scopeText(res.Request.Scope), res.Plan.TouchCount)
	fmt.Fprintln(w, "| step | result | time |")
	fmt.Fprintln(w, "|---|---|---:|")
	for _, s := range res.Steps {
		result := s.Status
		switch {
		case s.Status == verify.Failed:
			result = "failed, " + orket.ExitText(s)
			if !s.Required {
				result += " (optional)"
			}
		case s.Status == verify.Skipped:
			result = "skipped (" + skipText(s.SkipReason) + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", s.Name, result, dur(s.DurationMS))
	}
	for _, s := range res.Steps {
		if s.Status == verify.Failed && s.OutputTail != "" {
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
