package guardrails

// The guardrails text, v<N>.md, is markdown a person may read and edit:
// a title, a short preamble, then one "## <scope>" section per scope
// with one bullet per constraint. A line orket wrote ends with an HTML
// comment naming its lesson ("<!-- gp-1a2b3c4d5e6f -->"), invisible when
// rendered, so votes and sources follow the line even when a person
// rewords it. A new version changes lines of the previous text (inserts,
// replaces, deletes); every other byte stays as it was.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orket/orket/internal/lazyre"
	"github.com/orket/orket/internal/textmerge"
)

// A DocLine is one line of a guardrails text.
type DocLine struct {
	Section string // the "## " heading it is under ("" before the first)
	Raw     string // the line as written
	Heading bool   // a "## " heading
	Item    bool   // a constraint: a non-blank line that is not a heading, under a section
	Text    string // an item's text: bullet and id comment removed
	ID      string // an item's lesson id, from its comment
}

var (
	idComment = lazyre.New(`\s*<!--\s*(gp-[0-9a-f]{4,64})\s*-->\s*$`)
	validID   = lazyre.New(`^gp-[0-9a-f]{4,64}$`)
)

// ParseDoc splits a guardrails text into lines. It never fails: what it
// does not recognise is prose.
func ParseDoc(text string) []DocLine {
	if text == "" {
		return nil
	}
	raw := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	out := make([]DocLine, 0, len(raw))
	section := ""
	for _, r := range raw {
		r = strings.TrimSuffix(r, "\r")
		l := DocLine{Raw: r}
		t := strings.TrimSpace(r)
		switch {
		case strings.HasPrefix(t, "## ") || t == "##":
			section = strings.TrimSpace(strings.TrimPrefix(t, "##"))
			l.Heading = true
		case t == "" || strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "#!"):
		case section != "":
			l.Item = true
			if m := idComment().FindStringSubmatchIndex(t); m != nil {
				l.ID = t[m[2]:m[3]]
				t = t[:m[0]]
			}
			l.Text = strings.TrimSpace(trimBullet(t))
		}
		l.Section = section
		out = append(out, l)
	}
	return out
}

func trimBullet(t string) string {
	for _, b := range []string{"- [ ] ", "- [x] ", "- ", "* ", "+ "} {
		if strings.HasPrefix(t, b) {
			return t[len(b):]
		}
	}
	return t
}

// Items returns the constraints of a text.
func Items(text string) []DocLine {
	var out []DocLine
	for _, l := range ParseDoc(text) {
		if l.Item && l.Text != "" {
			out = append(out, l)
		}
	}
	return out
}

// NewDoc is the text of an agent's guardrails before its first
// constraint.
func NewDoc(agent string) string {
	return "# Guardrails for " + cleanText(agent) + "\n\n" +
		"Rules a person approved from this agent's repeated failures and reviews\n" +
		"(`orket lessons review`). Read them before you start; each applies to the\n" +
		"paths its section names.\n"
}

// cleanText makes text safe for one markdown line: one line, no comment
// markers (which would hide the rest of the file).
func cleanText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "<!--", "<! --")
	return strings.ReplaceAll(s, "-->", "-- >")
}

// itemLine is the markdown of one constraint.
func itemLine(text, id string) string {
	l := "- " + cleanText(text)
	if validID().MatchString(id) {
		l += " <!-- " + id + " -->"
	}
	return l
}

// Errors of ApplyChange.
var (
	// ErrAlreadyThere: the line an addition would add is there already.
	ErrAlreadyThere = errors.New("the constraint is already in the guardrails")
	// ErrLineGone: the line a modification or removal names is not there.
	ErrLineGone = errors.New("the line is no longer in the guardrails")
)

// ApplyChange returns text with one line changed: an addition inserts
// c.NewText (marked with id) after the last constraint of section
// c.Section, which is appended when missing; a modification replaces the
// line c.Line names (else the line whose text is c.OldText) with
// c.NewText marked with id; a removal deletes that line, and its heading
// when the section is left empty. Every other line is kept byte for
// byte.
func ApplyChange(text string, c Change, id string) (string, error) {
	lines := ParseDoc(text)
	section := cleanText(c.Section)
	if section == "" {
		section = Everywhere
	}
	raws := make([]string, len(lines))
	for i, l := range lines {
		raws[i] = l.Raw
	}
	switch c.Type {
	case Addition:
		want := cleanText(c.NewText)
		if want == "" {
			return text, fmt.Errorf("an addition without text")
		}
		return addLine(text, lines, raws, section, want, id)
	case Modification:
		i := findLine(lines, c, section)
		if i < 0 {
			return text, ErrLineGone
		}
		raws[i] = leading(lines[i].Raw) + itemLine(c.NewText, id)
		return join(raws, text), nil
	case Removal:
		i := findLine(lines, c, section)
		if i < 0 {
			return text, ErrLineGone
		}
		return join(removeLine(lines, raws, i), text), nil
	}
	return text, fmt.Errorf("unknown change type %q", c.Type)
}

// findLine returns the index of the item a modification or removal names:
// the one marked c.Line, else the one whose text is c.OldText (in section,
// unless c names none); -1 when there is none.
func findLine(lines []DocLine, c Change, section string) int {
	for i, l := range lines {
		if l.Item && c.Line != "" && l.ID == c.Line {
			return i
		}
	}
	for i, l := range lines {
		if l.Item && c.OldText != "" && l.Text == cleanText(c.OldText) && (l.Section == section || c.Section == "") {
			return i
		}
	}
	return -1
}

// addLine returns text with the constraint want, marked with id, added
// after the last constraint of the first block of section: under its
// heading when it has none, in a new section at the end when there is no
// such section. A line marked id, or of the same text in section, is
// already there: ErrAlreadyThere.
func addLine(text string, lines []DocLine, raws []string, section, want, id string) (string, error) {
	item := itemLine(want, id)
	head, last := -1, -1
	for i, l := range lines {
		if l.Item && (l.ID != "" && l.ID == id || l.Section == section && l.Text == want) {
			return text, ErrAlreadyThere
		}
		if l.Heading && l.Section == section && head < 0 {
			head = i
		}
		if head >= 0 && l.Section == section && l.Item && (last < 0 || i > last) && sameBlock(lines, head, i) {
			last = i
		}
	}
	switch {
	case head < 0:
		// A new section at the end, after a blank line; the text's own
		// lines, blank ones included, stay as they are.
		out := text
		switch {
		case out == "" || strings.HasSuffix(out, "\n\n"):
		case strings.HasSuffix(out, "\n"):
			out += "\n"
		default:
			out += "\n\n"
		}
		return out + "## " + section + "\n\n" + item + "\n", nil
	case last < 0:
		// An empty section: after its heading and a blank line.
		at, ins := head+1, []string{"", item}
		if at < len(raws) && strings.TrimSpace(raws[at]) == "" {
			at, ins = at+1, ins[1:]
		}
		if at < len(raws) && strings.TrimSpace(raws[at]) != "" {
			ins = append(ins, "")
		}
		return join(insert(raws, at, ins...), text), nil
	default:
		return join(insert(raws, last+1, item), text), nil
	}
}

// removeLine returns raws without line i; a section left without a
// constraint loses its heading (and a blank line after it, or before it
// when it ends the file).
func removeLine(lines []DocLine, raws []string, i int) []string {
	sec := lines[i].Section
	raws = append(raws[:i:i], raws[i+1:]...)
	lines = append(lines[:i:i], lines[i+1:]...)
	head, items := -1, 0
	for j, l := range lines {
		if l.Section != sec {
			continue
		}
		if l.Heading && head < 0 {
			head = j
		}
		if l.Item {
			items++
		}
	}
	if head < 0 || items > 0 {
		return raws
	}
	end := head + 1
	for end < len(lines) && lines[end].Section == sec && !lines[end].Heading && strings.TrimSpace(lines[end].Raw) == "" {
		end++
	}
	if end == len(lines) && head > 0 && strings.TrimSpace(raws[head-1]) == "" {
		head-- // the blank line before a heading that ends the file
	}
	return append(raws[:head:head], raws[end:]...)
}

// sameBlock reports whether line i is in the first block of the section
// headed at head (a section named twice is added to where it first is).
func sameBlock(lines []DocLine, head, i int) bool {
	for j := head + 1; j <= i; j++ {
		if lines[j].Heading {
			return false
		}
	}
	return true
}

func leading(raw string) string { return raw[:len(raw)-len(strings.TrimLeft(raw, " \t"))] }

func insert(raws []string, at int, add ...string) []string {
	out := make([]string, 0, len(raws)+len(add))
	out = append(out, raws[:at]...)
	out = append(out, add...)
	return append(out, raws[at:]...)
}

// join rebuilds a text from lines, ending with a newline when the
// original did (or was empty).
func join(raws []string, orig string) string {
	if len(raws) == 0 {
		return ""
	}
	s := strings.Join(raws, "\n")
	if orig == "" || strings.HasSuffix(orig, "\n") {
		s += "\n"
	}
	return s
}

// Changes lists how the constraints of text b differ from those of a:
// lines are matched by lesson id, then by section and text; an unmatched
// line of a and one of b in the same section, in order, are a
// modification; the rest are additions and removals. Additions and
// modifications come in b's order, removals after them in a's.
func Changes(a, b string) []Change {
	olds, news := Items(a), Items(b)
	usedOld := make([]bool, len(olds))
	usedNew := make([]bool, len(news))
	var mods []struct {
		at int
		c  Change
	}
	for j, n := range news {
		if n.ID == "" {
			continue
		}
		for i, o := range olds {
			if !usedOld[i] && o.ID == n.ID {
				usedOld[i], usedNew[j] = true, true
				if o.Text != n.Text || o.Section != n.Section {
					mods = append(mods, struct {
						at int
						c  Change
					}{j, Change{Type: Modification, Section: n.Section, OldText: o.Text, NewText: n.Text, Line: n.ID}})
				}
				break
			}
		}
	}
	for j, n := range news {
		if usedNew[j] {
			continue
		}
		for i, o := range olds {
			if !usedOld[i] && o.Section == n.Section && o.Text == n.Text {
				usedOld[i], usedNew[j] = true, true
				break
			}
		}
	}
	for j, n := range news {
		if usedNew[j] {
			continue
		}
		for i, o := range olds {
			if !usedOld[i] && o.Section == n.Section {
				usedOld[i], usedNew[j] = true, true
				mods = append(mods, struct {
					at int
					c  Change
				}{j, Change{Type: Modification, Section: n.Section, OldText: o.Text, NewText: n.Text, Line: n.ID}})
				break
			}
		}
	}
	var out []Change
	for j, n := range news {
		for _, m := range mods {
			if m.at == j {
				out = append(out, m.c)
			}
		}
		if !usedNew[j] {
			out = append(out, Change{Type: Addition, Section: n.Section, NewText: n.Text, Line: n.ID})
		}
	}
	for i, o := range olds {
		if !usedOld[i] {
			out = append(out, Change{Type: Removal, Section: o.Section, OldText: o.Text, Line: o.ID})
		}
	}
	return out
}

// Diff is a unified diff of two texts (whole lines, three lines of
// context), labelled from and to; "" when they are equal.
func Diff(from, to, a, b string) string {
	if a == b {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, to)
	for _, h := range textmerge.Hunks(textmerge.Diff(x, y), 3) {
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(h.OldStart, h.OldLines), hunkRange(h.NewStart, h.NewLines))
		for _, o := range h.Ops {
			sb.WriteByte(o.Kind)
			if o.Kind == '+' {
				sb.WriteString(y[o.B])
			} else {
				sb.WriteString(x[o.A])
			}
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// hunkRange writes a hunk's start and count as diff -u does: the count
// left out when it is one.
func hunkRange(start, count int) string {
	if count == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

// splitLines cuts a text into lines without their newlines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
