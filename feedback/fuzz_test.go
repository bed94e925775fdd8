package feedback

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzCategorize: normalising is idempotent and yields plain words; a
// reason categorises as its normal form does; the category is the
// highest-priority one with a keyword present; a learned action is
// always there.
func FuzzCategorize(f *testing.F) {
	for _, tc := range keywordSentences {
		f.Add(tc.sentence)
	}
	for _, s := range []string{"", "Não funciona!", "doesn’t work", "Examples are vague and incomplete", "na\u0303o", "ǅ ß İ ı",
		"node.js. Go! go test", "\xff\xfe", "a\u0301\u0301b", "It's off-topic — unclear"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reason string) {
		n := Normalize(reason)
		if Normalize(n) != n {
			t.Fatalf("Normalize not idempotent: %q -> %q -> %q", reason, n, Normalize(n))
		}
		if strings.HasPrefix(n, " ") || strings.HasSuffix(n, " ") || strings.Contains(n, "  ") {
			t.Fatalf("Normalize(%q) = %q: stray spaces", reason, n)
		}
		for _, r := range n {
			if r != ' ' && !unicode.IsLetter(r) && !unicode.IsDigit(r) || r == utf8.RuneError || ('A' <= r && r <= 'Z') {
				t.Fatalf("Normalize(%q) = %q holds %q", reason, n, r)
			}
			if _, ok := fold()[r]; ok {
				t.Fatalf("Normalize(%q) = %q kept an accent %q", reason, n, r)
			}
		}
		// The category is the normal form's, or, for a reason a keyword
		// labels ("wrong: ..."), that of what follows the label's colon.
		m, subject := Categorize(reason), n
		if m2 := Categorize(n); m2 != m {
			_, rest, labelled := strings.Cut(reason, ":")
			if subject = Normalize(rest); !labelled || Categorize(subject) != m {
				t.Fatalf("Categorize(%q) = %v but its normal form %q gives %v", reason, m, n, m2)
			}
		}
		// The category is that of the keywords found in what is
		// categorised.
		padded := " " + subject + " "
		present := func(cat Category) bool {
			l := Keywords[cat]
			for i, k := range append(append([]string(nil), l.PT...), l.EN...) {
				w := Words(k)
				for _, form := range forms(w[len(w)-1], i < len(l.PT)) {
					if strings.Contains(padded, " "+strings.Join(append(w[:len(w)-1:len(w)-1], form), " ")+" ") {
						return true
					}
				}
			}
			return false
		}
		for _, cat := range Categories[:len(Categories)-1] {
			if present(cat) {
				if m.Category != cat {
					t.Fatalf("Categorize(%q) = %v; a %s keyword is present", reason, m, cat)
				}
				break
			}
			if m.Category == cat {
				t.Fatalf("Categorize(%q) = %v; no %s keyword is present", reason, m, cat)
			}
		}
		if m.Category != Other && !contains(append(Keywords[m.Category].PT, Keywords[m.Category].EN...), m.Keyword) {
			t.Fatalf("keyword %q is not one of %s's", m.Keyword, m.Category)
		}
		l := Default().Learn(reason, RunContext{Profile: "p", Toolchain: []string{"Go"}, Paths: []string{"a/" + reason, reason}, Commands: []string{reason}})
		if l.Action == "" || (l.Category == Other) != strings.HasPrefix(l.Action, "Review: ") {
			t.Fatalf("Learn(%q) = %+v", reason, l)
		}
	})
}

// FuzzInsertMemory: whatever a person made of the memory file, orket
// only inserts lines; the learning lands in a Patterns section and the
// row in a table of the Rejection log section.
func FuzzInsertMemory(f *testing.F) {
	f.Add(MemoryTemplate, "Validate all code examples", "Examples don't work | really")
	f.Add("", "x", "")
	f.Add("# T\n\n## Rejection log\n| a |\n|---|\n\n## Patterns\n- n", "learn\nthis", "a\\|b")
	f.Add("```\n## Patterns\n", "l", "r")
	f.Add("<!--\n## Rejection log\n| a |\n|---|\n", "l", "r")
	f.Add("## Patterns\r\n\r\n## Rejection log\r\n| x |\r\n", "l", "r")
	f.Add("# Rejection log\n## Patterns\n| h |\n|--|\n| r |\n", "l", "r")
	f.Add("~~~~\n~~~\n## Patterns", "l", "r")
	f.Fuzz(func(t *testing.T, doc, text, reason string) {
		l := Learning{Time: t0, Context: "Rejected run r", Text: text}
		r := Row{Date: t0, Type: "code", Item: "pkg", Reason: reason, Category: Other, Action: "Review: " + reason}
		after := InsertMemory([]byte(doc), []Learning{l}, []Row{r})
		ins, err := onlyInserted([]byte(doc), after)
		if err != nil {
			t.Fatalf("%v\nbefore %q\nafter  %q", err, doc, after)
		}
		allowed := map[string]bool{l.Line(): true, r.Line(): true, "## Patterns": true, "## Rejection log": true, "": true,
			tableHeader: true, tableDelimiter: true, "-->": true}
		for _, s := range ins {
			if !allowed[s] && strings.Trim(s, "`") != "" && strings.Trim(s, "~") != "" {
				t.Fatalf("inserted %q\nbefore %q\nafter  %q", s, doc, after)
			}
		}
		if got, was := CountLearnings(after), CountLearnings([]byte(doc)); got != was+1 {
			t.Fatalf("%d learnings after, %d before\nbefore %q\nafter  %q", got, was, doc, after)
		}
		lines := parseMemory(after)
		in := func(names []string, want string, check func(i, h int) bool) {
			h, end := section(lines, names)
			if h < 0 {
				t.Fatalf("no %s section\nafter %q", names[0], after)
			}
			for i := h + 1; i < end; i++ {
				if lines[i].text == want && !lines[i].hidden && check(i, h) {
					return
				}
			}
			t.Fatalf("%q not in the %s section\nbefore %q\nafter  %q", want, names[0], doc, after)
		}
		in(patternsHeadings, l.Line(), func(int, int) bool { return true })
		in(rejectionHeadings, r.Line(), func(i, h int) bool {
			b := i
			for b > h+1 && !lines[b-1].hidden && strings.HasPrefix(strings.TrimSpace(lines[b-1].text), "|") {
				b--
			}
			return b+1 < i+1 && delimRe().MatchString(lines[b+1].text)
		})
	})
}
