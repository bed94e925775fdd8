package guardrails

// The review gate (docs/guardrails.md, The review gate): what a person
// sees of a proposal before deciding, and the decisions. The command
// layer reads the key; this file draws the box, the full sources (v), the
// listing without a terminal, and maps keys to decisions.

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// An Action is what a key in the review does.
type Action int

// The review's actions.
const (
	ActionNone    Action = iota
	ActionApprove        // a
	ActionReject         // r: asks a reason
	ActionView           // v: the full sources, then the box again
	ActionDefer          // q: decide later; the proposal stays pending
)

// KeyAction maps a key of the review to its action (case-insensitive);
// any other key is ActionNone.
func KeyAction(key rune) Action {
	switch key {
	case 'a', 'A':
		return ActionApprove
	case 'r', 'R':
		return ActionReject
	case 'v', 'V':
		return ActionView
	case 'q', 'Q':
		return ActionDefer
	}
	return ActionNone
}

// Decide carries out a person's decision on a proposal: approve (writes
// the next version), reject (reason required) or defer. ActionView and
// ActionNone change nothing. The version is set for an approval.
func (s *Store) Decide(ctx context.Context, id string, a Action, by, reason string, now time.Time) (*Version, *Proposal, error) {
	switch a {
	case ActionApprove:
		return s.Approve(ctx, id, by, now)
	case ActionReject:
		p, err := s.Reject(ctx, id, by, reason, now)
		return nil, p, err
	case ActionDefer:
		p, err := s.Defer(ctx, id, by, now)
		return nil, p, err
	}
	p, err := s.Proposals.Get(id)
	return nil, p, err
}

// A ReviewItem is what the box shows of a proposal.
type ReviewItem struct {
	Proposal *Proposal `json:"proposal"`
	Old      int       `json:"old_version"` // the current version (0: none)
	New      int       `json:"new_version"` // the version approving writes
	// Diff is the change as lines: "@@ <section>", "- <old line>",
	// "+ <new line>".
	Diff []string `json:"diff"`
	// Votes of the line a modification or removal changes (nil when
	// none, or for an addition).
	Votes *Tally `json:"votes,omitempty"`
	// Evidence of the line it would write (nil when not checked).
	Evidence *Evidence `json:"evidence,omitempty"`
	// Note says when approving would write nothing (the text already
	// says it).
	Note string `json:"note,omitempty"`
}

// ReviewItem prepares a proposal's box: the version numbers, the change
// as it would apply to the current text, the votes of the line it
// changes, and the evidence of what it cites (ck nil: not checked).
func (s *Store) ReviewItem(ctx context.Context, p *Proposal, votes map[string]Tally, ck *Checker) (*ReviewItem, error) {
	root, err := s.root()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	cur, err := s.current(root, p.Agent)
	if err != nil {
		return nil, err
	}
	next, err := s.nextNumber(root, p.Agent)
	if err != nil {
		return nil, err
	}
	it := &ReviewItem{Proposal: p, New: next}
	base := NewDoc(p.Agent)
	if cur != nil {
		it.Old, base = cur.Version, cur.Text
	}
	if p.Clash != nil {
		adds := clashAdditions(base, p.Clash)
		if len(adds) == 0 {
			it.Note, it.New = ErrAlreadyThere.Error(), it.Old
		}
		sec := ""
		for _, c := range adds {
			if c.Section != sec || sec == "" {
				sec = c.Section
				it.Diff = append(it.Diff, "@@ "+sec)
			}
			it.Diff = append(it.Diff, "+ "+c.NewText)
		}
		return it, nil
	}
	c := p.ConstraintUpdate
	if text, err := ApplyChange(base, c, p.ID); err != nil {
		it.Note = err.Error()
		it.New = it.Old
	} else if ch := Changes(base, text); len(ch) == 1 {
		c = ch[0]
	}
	it.Diff = append(it.Diff, "@@ "+c.Section)
	if c.OldText != "" {
		it.Diff = append(it.Diff, "- "+c.OldText)
	}
	if c.NewText != "" && c.Type != Removal {
		it.Diff = append(it.Diff, "+ "+cleanText(c.NewText))
	}
	if p.ConstraintUpdate.Line != "" && p.ConstraintUpdate.Type != Addition {
		if t, ok := votes[p.ConstraintUpdate.Line]; ok {
			it.Votes = &t
		} else {
			it.Votes = &Tally{}
		}
	}
	if ck != nil {
		e := ck.CheckProposal(ctx, p)
		it.Evidence = &e
	}
	return it, nil
}

// BoxWidth is the box's width in columns, as docs/guardrails.md draws it.
const BoxWidth = 59

// RenderBox draws the approval box for a proposal (width in
// columns; 0: BoxWidth; at least 40). Long lines wrap inside the box.
func RenderBox(it *ReviewItem, width int) string {
	if width <= 0 {
		width = BoxWidth
	}
	width = max(width, 40)
	inner := width - 4
	p := it.Proposal
	var b strings.Builder
	rule := func(l, r string) { b.WriteString(l + strings.Repeat("─", width-2) + r + "\n") }
	row := func(text, indent string) {
		for _, l := range wrap(text, inner, indent) {
			b.WriteString("│ " + l + strings.Repeat(" ", max(0, inner-utf8.RuneCountInString(l))) + " │\n")
		}
	}
	rule("╭", "╮")
	row("Guardrails Update Proposal  "+p.ID, "")
	row("Agent: "+p.Agent, "")
	if it.Note != "" {
		row(fmt.Sprintf("Version: v%d (no new version: %s)", it.Old, it.Note), "  ")
	} else if it.Old == 0 {
		row(fmt.Sprintf("Version: none → v%d", it.New), "")
	} else {
		row(fmt.Sprintf("Version: v%d → v%d", it.Old, it.New), "")
	}
	rule("├", "┤")
	row("Lessons Applied:", "")
	row("• "+p.ID+" ("+p.Cluster.Label+")", "  ")
	if p.ConstraintUpdate.Type == Removal || cleanText(p.LessonText) != cleanText(p.ConstraintUpdate.NewText) {
		row("  "+p.LessonText, "  ")
	}
	row("", "")
	row("Changes:", "")
	for _, d := range it.Diff {
		row(d, "  ")
	}
	row("", "")
	row(fmt.Sprintf("Source Feedback: %d entries (%d%% of %d)", p.Count, int(p.Frequency*100+0.5), p.Total), "")
	row(fmt.Sprintf("Confidence: %d%%   Impact: %s", int(p.Confidence*100+0.5), p.Impact), "")
	if it.Votes != nil {
		row("Votes: "+it.Votes.String()+" (avoided / recurred after advice)", "")
	}
	if it.Evidence != nil && it.Evidence.Demoted {
		row("Evidence: demoted: "+it.Evidence.Why(), "  ")
	}
	if p.Status == StatusDeferred {
		row("Deferred before by "+p.DecidedBy, "")
	}
	rule("├", "┤")
	row("[a] Approve  [r] Reject  [v] View Full  [q] Defer", "")
	rule("╰", "╯")
	return b.String()
}

// wrap cuts text into lines of at most width runes, at spaces where it
// can (a longer word is cut); the first line keeps text's leading
// spaces, the others start with indent.
func wrap(text string, width int, indent string) []string {
	n := utf8.RuneCountInString
	if n(text) <= width {
		return []string{text}
	}
	lead := text[:len(text)-len(strings.TrimLeft(text, " "))]
	if n(indent) > width/2 {
		indent = ""
	}
	avail := width - max(n(indent), n(lead))
	var words []string
	for _, w := range strings.Fields(text) {
		r := []rune(w)
		for len(r) > avail {
			words = append(words, string(r[:avail]))
			r = r[avail:]
		}
		words = append(words, string(r))
	}
	var out []string
	prefix, cur := lead, ""
	for _, w := range words {
		switch {
		case cur == "":
			cur = w
		case n(prefix)+n(cur)+1+n(w) <= width:
			cur += " " + w
		default:
			out = append(out, prefix+cur)
			prefix, cur = indent, w
		}
	}
	return append(out, prefix+cur)
}

// RenderSources is the full view ('v'): the proposal, then each source
// it carries, newest first.
func RenderSources(p *Proposal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Proposal %s for %s (%s)\n", p.ID, p.Agent, p.Status)
	fmt.Fprintf(&b, "  cluster: %s %s\n", p.Cluster.Kind, p.Cluster.Label)
	fmt.Fprintf(&b, "  lesson: %s\n", p.LessonText)
	if p.DeterministicText != "" {
		fmt.Fprintf(&b, "  orket's text: %s\n", p.DeterministicText)
	}
	fmt.Fprintf(&b, "  change: %s under %q\n", p.ConstraintUpdate.Type, p.ConstraintUpdate.Section)
	fmt.Fprintf(&b, "  %d of the agent's %d entries (%.1f%%), confidence %d%%, impact %s\n",
		p.Count, p.Total, p.Frequency*100, int(p.Confidence*100+0.5), p.Impact)
	if len(p.SourceFeedback) > len(p.Sources) {
		fmt.Fprintf(&b, "  the latest %d of %d sources:\n", len(p.Sources), len(p.SourceFeedback))
	}
	b.WriteString("\n")
	for i := len(p.Sources) - 1; i >= 0; i-- {
		s := p.Sources[i]
		fmt.Fprintf(&b, "%s  %s  %s  %s %s\n", s.Time.UTC().Format("2006-01-02 15:04"), s.Type, s.Severity, s.Source, s.ID)
		var ctx []string
		if s.Context.Task != "" {
			ctx = append(ctx, "task "+s.Context.Task)
		}
		if s.Context.Iteration > 0 {
			ctx = append(ctx, fmt.Sprintf("attempt %d", s.Context.Iteration))
		}
		if s.Context.RunID != "" {
			ctx = append(ctx, "run "+s.Context.RunID)
		}
		if s.Context.ArtifactPath != "" {
			ctx = append(ctx, s.Context.ArtifactPath)
		}
		if len(ctx) > 0 {
			fmt.Fprintf(&b, "    %s\n", strings.Join(ctx, ", "))
		}
		if !s.Fold.Empty() {
			where := ""
			if s.Fold.Dir != "" {
				where = " in " + s.Fold.Dir
			}
			fmt.Fprintf(&b, "    `%s`%s: %s\n", s.Fold.Command, where, strings.Join(s.Tags, ", "))
		}
		if s.Category != "" {
			fmt.Fprintf(&b, "    category: %s\n", s.Category)
		}
		d := s.Details
		for _, kv := range [][2]string{{"error", d.ErrorMessage}, {"expected", d.Expected}, {"actual", d.Actual}, {"correction", d.Correction}} {
			if kv[1] != "" && !(kv[0] == "correction" && kv[1] == d.ErrorMessage) {
				fmt.Fprintf(&b, "    %s: %s\n", kv[0], kv[1])
			}
		}
	}
	return b.String()
}

// RenderList is the review without a terminal: one line per proposal.
func RenderList(ps []*Proposal) string {
	if len(ps) == 0 {
		return "no pending proposals\n"
	}
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%s  %s  %s  %d entries  %d%%  %s\n", p.ID, p.Agent, p.Status, p.Count, int(p.Confidence*100+0.5), oneLine(p.LessonText, 120))
	}
	return b.String()
}
