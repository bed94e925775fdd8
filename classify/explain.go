package classify

import (
	"fmt"
	"slices"
	"strings"
)

// An Explanation says why an output was classified as it was: which rule
// matched on which line, and which rules nearly matched. For an output no
// rule tagged, Result.Unclassified names the families of failures it
// looked like and why none of their rules matched.
type Explanation struct {
	Result     *Result     `json:"result"`
	Matches    []LineMatch `json:"matches"`
	NearMisses []NearMiss  `json:"near_misses"`
}

// A LineMatch is one match of a rule that counted as evidence.
type LineMatch struct {
	Source string `json:"source"` // "regex" or "user"
	Rule   string `json:"rule"`
	Tag    string `json:"tag"`
	Line   int    `json:"line"` // 1-based number of the line where the match starts (its first non-space character)
	Text   string `json:"text"` // that line, trimmed and clipped
	Match  string `json:"match"`
}

// A NearMiss is a rule that gave no evidence although the output came
// close. Precisely, one of:
//
//   - a literal of at least 8 characters that its pattern requires (an
//     anchor, see Anchors) is in the output, but the whole pattern
//     matches nowhere: Line is the first line holding the anchor;
//   - its pattern matched, but every match was dropped by the rule's
//     Reject pattern, or the output lacks the context its Requires
//     pattern asks for, or its Unless pattern vetoed it (the reason
//     quotes the vetoing line): Line is the first match's line.
//
// A rule whose anchors are all absent or shorter than 8 characters, or
// which has none, is not a near miss by the first reason: nothing
// distinctive of it is in the output.
type NearMiss struct {
	Source string `json:"source"`
	Rule   string `json:"rule"`
	Tag    string `json:"tag"`
	Line   int    `json:"line"`
	Text   string `json:"text"`
	Anchor string `json:"anchor,omitempty"`
	Reason string `json:"reason"`
}

// Explain classifies output as Classify does and says which rule matched
// which line and which rules nearly matched. Like Classify it reads the
// output as a terminal shows it (see Plain); line numbers are the same
// either way. A rule matching one text on several lines is listed once,
// at the first, as it is one signal.
func (c *Classifier) Explain(output string) *Explanation {
	return c.ExplainCommand(output, "")
}

// ExplainCommand explains the output of a step whose command line was
// command, as ClassifyCommand classifies it.
func (c *Classifier) ExplainCommand(output, command string) *Explanation {
	output = Plain(output)
	res, hits, misses := c.classifyPlain(output, command, nil, true)
	e := &Explanation{Result: res, Matches: []LineMatch{}, NearMisses: []NearMiss{}}
	for _, h := range hits {
		first := len(e.Matches)
		for _, idx := range h.matches {
			match := clip(output[idx[0]:idx[1]])
			if slices.ContainsFunc(e.Matches[first:], func(m LineMatch) bool { return m.Match == match }) {
				continue
			}
			// The line of the match's first visible character: a pattern
			// starting with \s* may begin on the blank line before it.
			m := output[idx[0]:idx[1]]
			n, line := lineAt(output, idx[0]+len(m)-len(strings.TrimLeft(m, " \t\r\n")))
			e.Matches = append(e.Matches, LineMatch{Source: h.r.source, Rule: h.r.ID, Tag: h.r.Tag,
				Line: n, Text: clip(line), Match: match})
		}
	}
	for _, m := range misses {
		n, line := lineAt(output, m.at)
		e.NearMisses = append(e.NearMisses, NearMiss{Source: m.r.source, Rule: m.r.ID, Tag: m.r.Tag,
			Line: n, Text: clip(line), Anchor: m.anchor, Reason: m.reason})
	}
	return e
}

// String renders the explanation for people: the tags, the checks and
// the first error, then each match with the text it matched and its line,
// then the near misses with why they missed. Rules from orket.yaml are
// marked "user rule".
func (e *Explanation) String() string {
	var b strings.Builder
	if len(e.Result.Tags) == 0 {
		b.WriteString("tags: none (no rule recognises this output)\n")
	} else {
		fmt.Fprintf(&b, "tags: %s (confidence %.2f)\n", strings.Join(e.Result.Tags, ", "), e.Result.Confidence)
	}
	for _, ch := range e.Result.Checks {
		fmt.Fprintf(&b, "check: %s\n", ch)
	}
	if e.Result.FirstError != "" {
		fmt.Fprintf(&b, "first error: %s\n", e.Result.FirstError)
	}
	if len(e.Matches) > 0 {
		b.WriteString("matched:\n")
		for _, m := range e.Matches {
			fmt.Fprintf(&b, "  line %d: %s (%s%s) matched %q\n    %s\n", m.Line, m.Rule, m.Tag, userMark(m.Source), m.Match, m.Text)
		}
	}
	if u := e.Result.Unclassified; u != nil {
		if u.Cause != "" {
			if u.CauseLine > 0 {
				fmt.Fprintf(&b, "cause: line %d: %s\n", u.CauseLine, u.Cause)
			} else {
				fmt.Fprintf(&b, "cause: %s\n", u.Cause)
			}
		}
		if len(u.Families) == 0 {
			b.WriteString("looked like: no family of failures the rules know; add a rule for it in orket.yaml\n")
		} else {
			b.WriteString("looked like:\n")
			for _, f := range u.Families {
				fmt.Fprintf(&b, "  line %d: %s, but %s\n    %s\n", f.Line, f.Name, f.Why, f.Text)
			}
		}
	}
	if len(e.NearMisses) > 0 {
		b.WriteString("nearly matched:\n")
		for _, m := range e.NearMisses {
			fmt.Fprintf(&b, "  line %d: %s (%s%s): %s\n    %s\n", m.Line, m.Rule, m.Tag, userMark(m.Source), m.Reason, m.Text)
		}
	}
	return b.String()
}

func userMark(source string) string {
	if source == "user" {
		return ", user rule"
	}
	return ""
}
