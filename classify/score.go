package classify

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/orket/orket/preflight"
)

// An Expectation is what an output shows, written by a person: the tags
// that apply and the preflight checks its evidence names.
type Expectation struct {
	Tags   []string          `json:"tags"`
	Checks []preflight.Check `json:"preflight_checks"`
	// HasChecks reports whether the checks were stated at all (a
	// "checks:" line); when not, checks are not compared.
	HasChecks bool `json:"-"`
}

// ParseExpectation reads an expectation: lines "key: value", of which
// "tags:" (comma-separated tag names; empty or "none" for no tag) and
// "checks:" (comma-separated type:value, e.g.
// "env_var_present:API_TOKEN, tcp_reachable:127.0.0.1:5432") count; other
// keys, blank lines and lines starting with # are ignored. A missing
// "tags:" line is an error.
func ParseExpectation(r io.Reader) (Expectation, error) {
	var e Expectation
	hasTags := false
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			return e, fmt.Errorf("line %d: want key: value, not %q", n, line)
		}
		val = strings.TrimSpace(val)
		switch strings.TrimSpace(key) {
		case "tags":
			hasTags = true
			e.Tags = []string{}
			if val == "none" {
				break
			}
			for _, t := range splitList(val) {
				e.Tags = append(e.Tags, t)
			}
		case "checks":
			e.HasChecks = true
			e.Checks = []preflight.Check{}
			for _, item := range splitList(val) {
				ch, err := ParseCheck(item)
				if err != nil {
					return e, fmt.Errorf("line %d: %w", n, err)
				}
				e.Checks = append(e.Checks, ch)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return e, err
	}
	if !hasTags {
		return e, fmt.Errorf("no tags: line (write tags: none for an output that should get no tag)")
	}
	return e, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ParseCheck reads a check written type:value, the value being the one
// field its type needs: "port_free:8080", "file_exists:config/app.yaml".
func ParseCheck(s string) (preflight.Check, error) {
	typ, val, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || val == "" {
		return preflight.Check{}, fmt.Errorf("check %q: want type:value", s)
	}
	ch := preflight.Check{Type: typ}
	switch typ {
	case preflight.EnvVarPresent:
		ch.Name = val
	case preflight.CommandExists:
		ch.Command = val
	case preflight.FileExists:
		ch.Path = val
	case preflight.PortFree:
		p, err := strconv.Atoi(val)
		if err != nil {
			return ch, fmt.Errorf("check %q: port %q is not a number", s, val)
		}
		ch.Port = p
	case preflight.TCPReachable:
		ch.Address = val
	}
	if err := ch.Validate(); err != nil {
		return ch, fmt.Errorf("check %q: %w", s, err)
	}
	return ch, nil
}

// FormatCheck writes a check as ParseCheck reads it: "port_free:8080".
func FormatCheck(ch preflight.Check) string {
	val := ""
	switch ch.Type {
	case preflight.EnvVarPresent:
		val = ch.Name
	case preflight.CommandExists:
		val = ch.Command
	case preflight.FileExists:
		val = ch.Path
	case preflight.PortFree:
		val = strconv.Itoa(ch.Port)
	case preflight.TCPReachable:
		val = ch.Address
	}
	return ch.Type + ":" + val
}

// A TagScore is how well one tag was recognised over a set of outputs.
type TagScore struct {
	Tag       string  `json:"tag"`
	Support   int     `json:"support"` // outputs expected to have the tag
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
	Precision float64 `json:"precision"` // 1 when the tag was never given
	Recall    float64 `json:"recall"`    // 1 when no output expects it
	F1        float64 `json:"f1"`
}

// Scores measure a classifier over a set of outputs with expectations.
type Scores struct {
	Outputs int        `json:"outputs"`
	Tags    []TagScore `json:"tags"` // every tag expected or given, by name
	// MacroF1 is the mean F1 over Tags.
	MacroF1 float64 `json:"macro_f1"`
	// ExactMatch is the share of outputs whose tag set is exactly the
	// expected one.
	ExactMatch float64 `json:"exact_match"`
	// Untagged counts the outputs expected to get no tag, and
	// NoTagFalsePositiveRate is the share of those that got one.
	Untagged               int     `json:"untagged"`
	NoTagFalsePositiveRate float64 `json:"no_tag_false_positive_rate"`
	// ChecksExpected counts the expected checks, ChecksFound those of
	// them extracted, ChecksExtracted every check extracted (from the
	// outputs whose checks were stated); CheckRecall and CheckPrecision
	// follow from them (1 when there is nothing to divide).
	ChecksExpected  int     `json:"checks_expected"`
	ChecksFound     int     `json:"checks_found"`
	ChecksExtracted int     `json:"checks_extracted"`
	CheckRecall     float64 `json:"check_recall"`
	CheckPrecision  float64 `json:"check_precision"`
}

// A Scorer accumulates expectations and results into Scores.
type Scorer struct {
	tags                       map[string]*TagScore
	outputs, exact             int
	untagged, untaggedTagged   int
	expected, found, extracted int
}

// Add records one output: what it should get and what it got.
func (s *Scorer) Add(want Expectation, got *Result) {
	if s.tags == nil {
		s.tags = map[string]*TagScore{}
	}
	ts := func(tag string) *TagScore {
		if s.tags[tag] == nil {
			s.tags[tag] = &TagScore{Tag: tag}
		}
		return s.tags[tag]
	}
	s.outputs++
	w, g := set(want.Tags), set(got.Tags)
	for t := range w {
		ts(t).Support++
		if g[t] {
			ts(t).TP++
		} else {
			ts(t).FN++
		}
	}
	for t := range g {
		if !w[t] {
			ts(t).FP++
		}
	}
	if sameSet(w, g) {
		s.exact++
	}
	if len(w) == 0 {
		s.untagged++
		if len(g) > 0 {
			s.untaggedTagged++
		}
	}
	if want.HasChecks {
		s.expected += len(want.Checks)
		s.extracted += len(got.Checks)
		for _, ch := range want.Checks {
			if slices.Contains(got.Checks, ch) {
				s.found++
			}
		}
	}
}

// Scores returns the scores of everything added so far.
func (s *Scorer) Scores() Scores {
	sc := Scores{Outputs: s.outputs, Tags: []TagScore{}, Untagged: s.untagged,
		ChecksExpected: s.expected, ChecksFound: s.found, ChecksExtracted: s.extracted}
	names := make([]string, 0, len(s.tags))
	for t := range s.tags {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		ts := *s.tags[t]
		ts.Precision = ratio(ts.TP, ts.TP+ts.FP)
		ts.Recall = ratio(ts.TP, ts.TP+ts.FN)
		if ts.Precision+ts.Recall > 0 {
			ts.F1 = 2 * ts.Precision * ts.Recall / (ts.Precision + ts.Recall)
		}
		sc.Tags = append(sc.Tags, ts)
		sc.MacroF1 += ts.F1
	}
	if len(sc.Tags) > 0 {
		sc.MacroF1 /= float64(len(sc.Tags))
	} else {
		sc.MacroF1 = 1
	}
	sc.ExactMatch = ratio(s.exact, s.outputs)
	if s.untagged > 0 {
		sc.NoTagFalsePositiveRate = float64(s.untaggedTagged) / float64(s.untagged)
	}
	sc.CheckRecall = ratio(s.found, s.expected)
	sc.CheckPrecision = ratio(s.found, s.extracted)
	return sc
}

// ratio is a/b, or 1 when b is 0 (nothing to get wrong).
func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func set(tags []string) map[string]bool {
	m := map[string]bool{}
	for _, t := range tags {
		m[t] = true
	}
	return m
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for t := range a {
		if !b[t] {
			return false
		}
	}
	return true
}

// Table renders the scores as a Markdown table, one row per tag, then
// the summary lines.
func (s Scores) Table() string {
	var b strings.Builder
	b.WriteString("| tag | support | precision | recall | F1 |\n|---|---:|---:|---:|---:|\n")
	for _, t := range s.Tags {
		fmt.Fprintf(&b, "| `%s` | %d | %.2f | %.2f | %.2f |\n", t.Tag, t.Support, t.Precision, t.Recall, t.F1)
	}
	fmt.Fprintf(&b, "\n%s\n", s.Summary())
	return b.String()
}

// Summary is the one line of the scores that is not per tag.
func (s Scores) Summary() string {
	return fmt.Sprintf("macro-F1 %.3f, exact match %.3f (%d outputs), no-tag false positives %.3f (of %d), checks extracted %d/%d (precision %.2f)",
		s.MacroF1, s.ExactMatch, s.Outputs, s.NoTagFalsePositiveRate, s.Untagged, s.ChecksFound, s.ChecksExpected, s.CheckPrecision)
}
