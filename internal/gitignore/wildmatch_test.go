package gitignore

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestWildmatchGitSuite runs the cases of git's own wildmatch test
// (t/t3070-wildmatch.sh of v2.39.5), with and without WM_PATHNAME.
func TestWildmatchGitSuite(t *testing.T) {
	f, err := os.Open("testdata/wildmatch.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for line := 1; sc.Scan(); line++ {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fields := strings.SplitN(sc.Text(), "\t", 3)
		if len(fields) != 3 || len(fields[0]) != 3 {
			t.Fatalf("testdata/wildmatch.txt:%d: malformed line %q", line, sc.Text())
		}
		text, pat := fields[1], fields[2]
		for _, c := range []struct {
			want     byte
			pathname bool
		}{{fields[0][0], true}, {fields[0][2], false}} {
			if got := wildmatch(pat, text, c.pathname); got != (c.want == '1') {
				t.Errorf("testdata/wildmatch.txt:%d: wildmatch(%q, %q, pathname=%v) = %v, want %v",
					line, pat, text, c.pathname, got, !got)
			}
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 300 {
		t.Fatalf("only %d cases read", n)
	}
}

// refWildmatch is an independent reading of wildmatch's documented rules,
// for the fuzz target: the glob is translated into a regular expression
// over bytes (each byte of pattern and text becomes the rune of the same
// value). It shares no code with dowild.
func refWildmatch(pat, text string, pathname bool) bool {
	re, ok := refRegexp(pat, pathname)
	if !ok {
		return false // malformed patterns match nothing
	}
	return re.MatchString(latin1(text))
}

func latin1(s string) string {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

func quoteByte(b byte) string { return fmt.Sprintf(`\x{%02X}`, b) }

func refRegexp(pat string, pathname bool) (*regexp.Regexp, bool) {
	star, any := `[^/]*`, `[^/]`
	if !pathname {
		star, any = `[\x00-\x{FF}]*`, `[\x00-\x{FF}]`
	}
	var b strings.Builder
	b.WriteString(`^`)
	for i := 0; i < len(pat); {
		c := pat[i]
		switch c {
		case '\\':
			if i+1 >= len(pat) {
				return nil, false // a trailing backslash matches nothing
			}
			b.WriteString(quoteByte(pat[i+1]))
			i += 2
		case '?':
			b.WriteString(any)
			i++
		case '*':
			j := i
			for j < len(pat) && pat[j] == '*' {
				j++
			}
			if j-i == 1 || !pathname {
				b.WriteString(star)
				i = j
				break
			}
			// Two or more stars: special only between slashes.
			atStart := i == 0 || pat[i-1] == '/'
			switch {
			case atStart && j == len(pat):
				b.WriteString(`[\x00-\x{FF}]*`)
				i = j
			case atStart && pat[j] == '/':
				b.WriteString(`(?:[\x00-\x{FF}]*/)?`) // zero or more directories
				i = j + 1
			case atStart && strings.HasPrefix(pat[j:], `\/`):
				b.WriteString(`[\x00-\x{FF}]*/`) // an escaped slash: one or more
				i = j + 2
			default:
				b.WriteString(star)
				i = j
			}
		case '[':
			set, n, ok := refClass(pat[i+1:])
			if !ok {
				return nil, false
			}
			b.WriteString(`[`)
			for v := 0; v < 256; v++ {
				if set[v] && !(pathname && v == '/') {
					b.WriteString(quoteByte(byte(v)))
				}
			}
			b.WriteString(`\x{100}]`) // never empty; no text holds U+0100
			i += 1 + n
		default:
			b.WriteString(quoteByte(c))
			i++
		}
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		panic(err)
	}
	return re, true
}

// refClass reads a bracket expression after its '[' and returns its set
// of bytes and the length it used, including the closing ']'.
func refClass(s string) (set [256]bool, n int, ok bool) {
	negate := strings.HasPrefix(s, "!") || strings.HasPrefix(s, "^")
	i := 0
	if negate {
		i = 1
	}
	type item struct {
		lo, hi  byte
		isRange bool // a plain member or range end; classes are not
	}
	var items []item
	first := true
	for {
		if i >= len(s) {
			return set, 0, false
		}
		c := s[i]
		if c == ']' && !first {
			i++
			break
		}
		first = false
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return set, 0, false
			}
			items = append(items, item{s[i+1], s[i+1], true})
			i += 2
		case c == '-' && len(items) > 0 && items[len(items)-1].isRange && items[len(items)-1].lo == items[len(items)-1].hi &&
			i+1 < len(s) && s[i+1] != ']':
			lo := items[len(items)-1].lo
			hi := s[i+1]
			i += 2
			if hi == '\\' {
				if i >= len(s) {
					return set, 0, false
				}
				hi = s[i]
				i++
			}
			// The start stays a member of its own even when the
			// range is empty ("[0- ]" matches "0").
			items = append(items, item{lo, hi, false})
		case strings.HasPrefix(s[i:], "[:"):
			end := strings.IndexByte(s[i+2:], ']')
			if end < 0 {
				return set, 0, false
			}
			body := s[i+2 : i+2+end]
			if !strings.HasSuffix(body, ":") {
				items = append(items, item{'[', '[', true})
				i++
				break
			}
			name := strings.TrimSuffix(body, ":")
			members, known := posixClass(name)
			if !known {
				return set, 0, false
			}
			for _, m := range members {
				items = append(items, item{m, m, false})
			}
			if len(members) == 0 {
				items = append(items, item{1, 0, false}) // empty, but not a range start
			}
			i += 2 + end + 1
		default:
			items = append(items, item{c, c, true})
			i++
		}
	}
	for _, it := range items {
		for v := int(it.lo); v <= int(it.hi); v++ {
			set[v] = true
		}
	}
	if negate {
		for v := range set {
			set[v] = !set[v]
		}
	}
	return set, i, true
}

func posixClass(name string) ([]byte, bool) {
	var pred func(c byte) bool
	switch name {
	case "alnum":
		pred = func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	case "alpha":
		pred = func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	case "blank":
		pred = func(c byte) bool { return c == ' ' || c == '\t' }
	case "cntrl":
		pred = func(c byte) bool { return c < 32 || c == 127 }
	case "digit":
		pred = func(c byte) bool { return c >= '0' && c <= '9' }
	case "graph":
		pred = func(c byte) bool { return c >= 33 && c <= 126 }
	case "lower":
		pred = func(c byte) bool { return c >= 'a' && c <= 'z' }
	case "print":
		pred = func(c byte) bool { return c >= 32 && c <= 126 }
	case "punct":
		pred = func(c byte) bool { return strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) >= 0 }
	case "space":
		pred = func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	case "upper":
		pred = func(c byte) bool { return c >= 'A' && c <= 'Z' }
	case "xdigit":
		pred = func(c byte) bool { return strings.IndexByte("0123456789abcdefABCDEF", c) >= 0 }
	default:
		return nil, false
	}
	var out []byte
	for v := 0; v < 256; v++ {
		if pred(byte(v)) {
			out = append(out, byte(v))
		}
	}
	return out, true
}

// TestRefWildmatch checks the fuzz target's reference against git's own
// cases, so that a disagreement in FuzzMatch points at dowild.
func TestRefWildmatch(t *testing.T) {
	f, err := os.Open("testdata/wildmatch.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fields := strings.SplitN(sc.Text(), "\t", 3)
		text, pat := fields[1], fields[2]
		for _, c := range []struct {
			want     byte
			pathname bool
		}{{fields[0][0], true}, {fields[0][2], false}} {
			if got := refWildmatch(pat, text, c.pathname); got != (c.want == '1') {
				t.Errorf("testdata/wildmatch.txt:%d: refWildmatch(%q, %q, pathname=%v) = %v, want %v",
					line, pat, text, c.pathname, got, !got)
			}
		}
	}
}

// FuzzMatch compares dowild with the regular-expression reference, and
// checks that parsing and matching arbitrary ignore files never panics.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"*.[!o]", "b.c"}, {"data/**", "data/keep.txt"}, {"**/foo", "a/b/foo"},
		{"a/**/b", "a/b"}, {"[[:alpha:]]*", "x1"}, {"[]-a]", "^"}, {`\#x`, "#x"},
		{"foo**/bar", "foo/x/bar"}, {"**\\/b", "x/b"}, {"[a-", "a"}, {"*/*/*", "a/b/c"}, {"[0- ]", "0"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, text string) {
		if strings.IndexByte(pat, 0) >= 0 || strings.IndexByte(text, 0) >= 0 || len(pat) > 64 || len(text) > 64 {
			return // NUL never reaches the matcher; long inputs only slow the reference
		}
		for _, pathname := range []bool{true, false} {
			got, want := wildmatch(pat, text, pathname), refWildmatch(pat, text, pathname)
			if got != want {
				t.Errorf("wildmatch(%q, %q, pathname=%v) = %v, reference says %v", pat, text, pathname, got, want)
			}
			w := wmState{pathname: pathname, textLen: len(text), memo: map[int]int8{}}
			if memo := w.dowild(pat, text) == wmMatch; memo != got {
				t.Errorf("wildmatch(%q, %q, pathname=%v) = %v, memoized %v", pat, text, pathname, got, memo)
			}
		}
		// Whole lines: parse the pattern as an ignore file and match.
		for _, p := range ParsePatterns([]byte(pat), "b") {
			p.Match(text, true)
			p.Match("b/"+text, false)
		}
	})
}

// TestWildmatchHostile checks that patterns that make git's wildmatch
// backtrack for minutes give git's answer quickly, through the memoized
// second pass, and the same answer as the plain one.
func TestWildmatchHostile(t *testing.T) {
	cases := []struct {
		pat, text string
		want      bool
	}{
		{strings.Repeat("a/**/", 8) + "b", strings.Repeat("a/", 60) + "c", false},
		{strings.Repeat("a/**/", 8) + "c", strings.Repeat("a/", 60) + "c", true},
		{strings.Repeat("**/a", 8) + "/b", strings.Repeat("a/", 60) + "c", false},
		{strings.Repeat("*a", 12) + "b", strings.Repeat("a", 200), false},
		{strings.Repeat("a/**/", 3) + "b", "a/a/a/b", true},
	}
	for _, c := range cases {
		t.Run(c.pat, func(t *testing.T) {
			if got := wildmatch(c.pat, c.text, true); got != c.want {
				t.Errorf("wildmatch(%q, %q) = %v, want %v", c.pat, c.text, got, c.want)
			}
			// The memoized pass alone gives the same answer.
			w := wmState{pathname: true, textLen: len(c.text), memo: map[int]int8{}}
			if got := w.dowild(c.pat, c.text) == wmMatch; got != c.want {
				t.Errorf("memoized wildmatch(%q, %q) = %v, want %v", c.pat, c.text, got, c.want)
			}
		})
	}
}
