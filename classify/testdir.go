package classify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/orket/orket/preflight"
)

// The files TestDir reads: a saved log NAME.log with its expectation
// NAME.expect beside it. The corpus's own NAME.txt with NAME.meta is read
// the same way, so TestDir runs on classify/testdata/outputs too.
var testDirPairs = [][2]string{{".log", ".expect"}, {".txt", ".meta"}}

// A FileResult is the outcome of one saved log in TestDir.
type FileResult struct {
	Name       string            `json:"name"` // the log's file name
	Pass       bool              `json:"pass"`
	WantTags   []string          `json:"want_tags"`
	GotTags    []string          `json:"got_tags"`
	Missing    []string          `json:"missing_tags,omitempty"` // expected, not given
	Extra      []string          `json:"extra_tags,omitempty"`   // given, not expected
	WantChecks []preflight.Check `json:"want_checks,omitempty"`
	GotChecks  []preflight.Check `json:"got_checks,omitempty"`
	// Err says why the log could not be tested (no or a bad expectation);
	// such a file fails.
	Err string `json:"error,omitempty"`
}

// A DirReport is the outcome of TestDir: every file, and the scores.
type DirReport struct {
	Dir    string       `json:"dir"`
	Files  []FileResult `json:"files"`
	Passed int          `json:"passed"`
	Failed int          `json:"failed"`
	Scores Scores       `json:"scores"`
}

// TestDir checks the classifier (the user's rules from orket.yaml and the
// built-in ones) against a directory of saved logs with expected tags.
// For every NAME.log in dir (not its subdirectories), NAME.expect holds
// the expectation (see ParseExpectation), for example
//
//	tags: missing_env_var, test_assertion_failed
//	checks: env_var_present:API_TOKEN
//
// or "tags: none" for a log that should get no tag. NAME.txt with
// NAME.meta is read the same way. A log passes when its tags are exactly
// the expected ones and, when a checks: line is given, its checks are
// exactly those. A log without an expectation fails. The error is for a
// directory that cannot be read or holds no log.
func (c *Classifier) TestDir(dir string) (*DirReport, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	rep := &DirReport{Dir: dir, Files: []FileResult{}}
	var sc Scorer
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		var expectExt string
		name := e.Name()
		for _, p := range testDirPairs {
			if strings.HasSuffix(name, p[0]) {
				expectExt = strings.TrimSuffix(name, p[0]) + p[1]
			}
		}
		if expectExt == "" {
			continue
		}
		fr := FileResult{Name: name, WantTags: []string{}, GotTags: []string{}}
		want, err := readExpectation(filepath.Join(dir, expectExt))
		if err != nil {
			fr.Err = err.Error()
			rep.Failed++
			rep.Files = append(rep.Files, fr)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		got := c.Classify(string(b))
		sc.Add(want, got)
		fr.WantTags, fr.GotTags = want.Tags, got.Tags
		fr.Missing, fr.Extra = diffTags(want.Tags, got.Tags), diffTags(got.Tags, want.Tags)
		fr.Pass = len(fr.Missing) == 0 && len(fr.Extra) == 0
		if want.HasChecks {
			fr.WantChecks, fr.GotChecks = want.Checks, got.Checks
			if !sameChecks(want.Checks, got.Checks) {
				fr.Pass = false
			}
		}
		if fr.Pass {
			rep.Passed++
		} else {
			rep.Failed++
		}
		rep.Files = append(rep.Files, fr)
	}
	if len(rep.Files) == 0 {
		return nil, fmt.Errorf("%s: no saved logs (NAME.log with NAME.expect)", dir)
	}
	sort.Slice(rep.Files, func(i, j int) bool { return rep.Files[i].Name < rep.Files[j].Name })
	rep.Scores = sc.Scores()
	return rep, nil
}

func readExpectation(path string) (Expectation, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Expectation{}, fmt.Errorf("no expectation: write %s (tags: ...)", filepath.Base(path))
	}
	if err != nil {
		return Expectation{}, err
	}
	defer f.Close()
	e, err := ParseExpectation(f)
	if err != nil {
		return e, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return e, nil
}

// diffTags returns the tags of a that b lacks.
func diffTags(a, b []string) []string {
	var d []string
	for _, t := range a {
		if !slices.Contains(b, t) {
			d = append(d, t)
		}
	}
	return d
}

func formatChecks(chs []preflight.Check) string {
	s := make([]string, len(chs))
	for i, ch := range chs {
		s[i] = FormatCheck(ch)
	}
	return strings.Join(s, ", ")
}

func sameChecks(a, b []preflight.Check) bool {
	if len(a) != len(b) {
		return false
	}
	for _, ch := range a {
		if !slices.Contains(b, ch) {
			return false
		}
	}
	return true
}

// String renders the report for people: one line per file, then the
// scores.
func (r *DirReport) String() string {
	var b strings.Builder
	for _, f := range r.Files {
		status := "ok  "
		if !f.Pass {
			status = "FAIL"
		}
		fmt.Fprintf(&b, "%s %s", status, f.Name)
		switch {
		case f.Err != "":
			fmt.Fprintf(&b, ": %s", f.Err)
		case !f.Pass:
			fmt.Fprintf(&b, ": want [%s], got [%s]", strings.Join(f.WantTags, ", "), strings.Join(f.GotTags, ", "))
			if !sameChecks(f.WantChecks, f.GotChecks) {
				fmt.Fprintf(&b, "; checks want [%s], got [%s]", formatChecks(f.WantChecks), formatChecks(f.GotChecks))
			}
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n%d passed, %d failed\n\n%s", r.Passed, r.Failed, r.Scores.Table())
	return b.String()
}
