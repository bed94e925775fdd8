package feedback

import (
	"strings"
)

// NoReason is the reason recorded when a reviewer gave none.
const NoReason = "No reason provided"

// UnclearAction is the learned action of a rejection without a reason.
const UnclearAction = "Review: unclear issue"

// A RunContext is what the learned action may name of the rejected run.
type RunContext struct {
	Profile string // the verify profile's name
	// Toolchain names the tools the profile runs, as shown ("Go",
	// "npm"); Toolchain(Commands) derives it.
	Toolchain []string
	// Commands are the verify profile's commands: their programs count
	// as technologies when a reason names them.
	Commands []string
	// Paths is the run's touch set: file names count as technologies
	// when a reason names them ("the parser.go examples are wrong").
	Paths []string
}

// Environment returns what {environment} stands for in a template: the
// toolchain and the verify profile ("Go with the quick verify profile"),
// or "" when both are unknown.
func (rc RunContext) Environment() string {
	tools := join(rc.Toolchain)
	switch {
	case tools != "" && rc.Profile != "":
		return tools + " with the " + rc.Profile + " verify profile"
	case tools != "":
		return tools
	case rc.Profile != "":
		return "the " + rc.Profile + " verify profile"
	}
	return ""
}

// A Learned rejection: its reason as recorded, category, the
// technologies it names and the action to take next time.
type Learned struct {
	Reason       string   `json:"reason"`
	Category     Category `json:"category"`
	Keyword      string   `json:"keyword,omitempty"`
	Technologies []string `json:"technologies,omitempty"`
	Action       string   `json:"learned_action"`
}

// Corrections are the learned-action templates without the environment:
// the correction a pattern of the category suggests.
var Corrections = map[Category]string{
	Examples:     "Validate all code examples",
	Specificity:  "Add concrete use cases and scenarios",
	Clarity:      "Simplify language and structure",
	Completeness: "Verify all required sections are present",
	Relevance:    "Ensure artifact matches user request closely",
	Other:        "Review the reasons given",
}

// Learn categorises reason and derives its learned action
// (docs/feedback.md, Learned actions). An empty reason is recorded as
// NoReason, category Other, action "Review: unclear issue".
//
// The templates: examples "Validate all code examples in
// {environment}", specificity "Add concrete use cases and scenarios",
// clarity "Simplify language and structure", completeness "Verify all
// required sections are present", relevance "Ensure artifact matches
// user request closely", other "Review: " and the reason's first ten
// words (lower case). Tools the reason names (see RunContext) are woven
// in: "Kafka examples return errors" in a Docker run gives "Test Kafka
// commands in Docker before showing them"; files of the touch set it
// names lead: "In parser.go, validate all code examples".
func (c *Categorizer) Learn(reason string, rc RunContext) Learned {
	if strings.TrimSpace(reason) == "" || strings.TrimSpace(reason) == NoReason {
		return Learned{Reason: NoReason, Category: Other, Action: UnclearAction}
	}
	toks := tokenize(reason)
	m := c.Categorize(reason)
	l := Learned{Reason: reason, Category: m.Category, Keyword: m.Keyword}
	var tools, files []string
	if m.Category != Other {
		tools, files = runIndex(rc).find(toks)
		l.Technologies = append(append([]string(nil), tools...), files...)
	}
	l.Action = action(m.Category, tools, rc.Environment(), reason)
	if len(files) > 0 {
		l.Action = "In " + join(files) + ", " + lowerFirst(l.Action)
	}
	return l
}

// action fills the category's template.
func action(cat Category, tech []string, env, reason string) string {
	t := join(tech)
	in := ""
	if env != "" {
		in = " in " + env
	}
	switch cat {
	case Examples:
		if t != "" {
			return "Test " + t + " commands" + in + " before showing them"
		}
		return "Validate all code examples" + in
	case Specificity:
		if t != "" {
			return "Add concrete " + t + " use cases and scenarios"
		}
		return "Add concrete use cases and scenarios"
	case Clarity:
		if t != "" {
			return "Simplify language and structure around " + t
		}
		return "Simplify language and structure"
	case Completeness:
		if t != "" {
			return "Verify all required sections are present for " + t
		}
		return "Verify all required sections are present"
	case Relevance:
		if t != "" {
			return "Ensure artifact matches user request closely (" + t + " specifically)"
		}
		return "Ensure artifact matches user request closely"
	}
	return "Review: " + FirstWords(reason, 10)
}

// FirstWords returns the first n words of text, lower case, as written
// otherwise ("I just don't like it" gives "i just don't like it").
func FirstWords(text string, n int) string {
	f := strings.Fields(text)
	if len(f) > n {
		f = f[:n]
	}
	return strings.ToLower(strings.Join(f, " "))
}

// join lists names as prose: "Kafka", "Kafka and Docker", "Go, npm and
// Docker".
func join(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
