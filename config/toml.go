package config

import (
	"strings"
)

// A tomlValue is a TOML value as detection reads it: a string, a boolean,
// an array (of which the strings are kept), or another scalar (a number,
// a date) kept as written.
type tomlValue struct {
	Str   string
	Strs  []string
	Bool  bool
	Kind  byte // 's' string, 'b' boolean, 'a' array, 'o' other scalar
	Table bool // an inline table (its keys are recorded under its name)
}

// parseTOML reads the keys of a TOML document by their full dotted name
// ("tool.ruff.fix", "package.rust-version"), with the table headers,
// dotted and quoted keys, inline tables, arrays over several lines,
// comments and the four kinds of strings of TOML 1.0. It is not a
// validator: it reads what it can and stops at the first thing it cannot
// read, returning the keys before it (detection treats a key it did not
// find as absent).
func parseTOML(src string) map[string]tomlValue {
	p := &tomlParser{s: src, out: map[string]tomlValue{}}
	p.doc()
	return p.out
}

type tomlParser struct {
	s   string
	i   int
	out map[string]tomlValue
	bad bool
}

func (p *tomlParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// space skips blanks, and with lines also line breaks and comments.
func (p *tomlParser) space(lines bool) {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t':
			p.i++
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		case lines && (c == '\n' || c == '\r'):
			p.i++
		default:
			return
		}
	}
}

func (p *tomlParser) doc() {
	table := ""
	for !p.bad {
		p.space(true)
		if p.i >= len(p.s) {
			return
		}
		if p.peek() == '[' {
			p.i++
			array := p.peek() == '['
			if array {
				p.i++
			}
			p.space(false)
			key := p.key()
			p.space(false)
			if !p.expect(']') || array && !p.expect(']') {
				return
			}
			table = key
			p.endLine()
			continue
		}
		key := p.key()
		p.space(false)
		if p.bad || !p.expect('=') {
			return
		}
		p.space(false)
		p.value(join(table, key))
		p.endLine()
	}
}

func join(table, key string) string {
	if table == "" {
		return key
	}
	return table + "." + key
}

func (p *tomlParser) expect(c byte) bool {
	if p.peek() != c {
		p.bad = true
		return false
	}
	p.i++
	return true
}

// endLine skips a comment and requires the end of the line.
func (p *tomlParser) endLine() {
	p.space(false)
	if p.i < len(p.s) && p.s[p.i] != '\n' && p.s[p.i] != '\r' {
		p.bad = true
	}
}

// key reads a dotted key: bare or quoted parts joined with dots.
func (p *tomlParser) key() string {
	var parts []string
	for {
		p.space(false)
		switch c := p.peek(); {
		case c == '"' || c == '\'':
			s, ok := p.str()
			if !ok {
				return ""
			}
			parts = append(parts, s)
		default:
			start := p.i
			for p.i < len(p.s) && isBareKey(p.s[p.i]) {
				p.i++
			}
			if p.i == start {
				p.bad = true
				return ""
			}
			parts = append(parts, p.s[start:p.i])
		}
		p.space(false)
		if p.peek() != '.' {
			return strings.Join(parts, ".")
		}
		p.i++
	}
}

func isBareKey(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// str reads a basic, literal or multi-line string.
func (p *tomlParser) str() (string, bool) {
	q := p.peek()
	multi := strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3))
	if multi {
		p.i += 3
		if strings.HasPrefix(p.s[p.i:], "\r\n") {
			p.i += 2
		} else if p.peek() == '\n' {
			p.i++ // a line break right after the opening quotes is not part of it
		}
	} else {
		p.i++
	}
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case multi && strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3)):
			p.i += 3
			// Up to two more quotes belong to the string.
			for n := 0; n < 2 && p.peek() == q; n++ {
				b.WriteByte(q)
				p.i++
			}
			return b.String(), true
		case !multi && c == q:
			p.i++
			return b.String(), true
		case !multi && c == '\n':
			p.bad = true
			return "", false
		case q == '"' && c == '\\' && p.i+1 < len(p.s):
			p.i++
			switch e := p.s[p.i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\n', '\r', ' ', '\t': // a line-ending backslash trims the blanks after it
				for p.i+1 < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i+1]) >= 0 {
					p.i++
				}
			default: // \" \\ and the rest, kept as the character
				b.WriteByte(e)
			}
			p.i++
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	p.bad = true
	return "", false
}

// value reads the value of key and records it (an inline table's keys
// under key).
func (p *tomlParser) value(key string) {
	switch c := p.peek(); {
	case c == '"' || c == '\'':
		if s, ok := p.str(); ok {
			p.out[key] = tomlValue{Kind: 's', Str: s}
		}
	case c == '[':
		p.i++
		v := tomlValue{Kind: 'a'}
		for !p.bad {
			p.space(true)
			if p.peek() == ']' {
				p.i++
				break
			}
			if q := p.peek(); q == '"' || q == '\'' {
				if s, ok := p.str(); ok {
					v.Strs = append(v.Strs, s)
				}
			} else {
				p.value(key + "[]") // a nested array, table or scalar: read, not kept
				delete(p.out, key+"[]")
			}
			p.space(true)
			if p.peek() == ',' {
				p.i++
			} else if p.peek() != ']' {
				p.bad = true
			}
		}
		if !p.bad {
			p.out[key] = v
		}
	case c == '{':
		p.i++
		p.out[key] = tomlValue{Table: true}
		for !p.bad {
			p.space(false)
			if p.peek() == '}' {
				p.i++
				return
			}
			k := p.key()
			p.space(false)
			if p.bad || !p.expect('=') {
				return
			}
			p.space(false)
			p.value(key + "." + k)
			p.space(false)
			if p.peek() == ',' {
				p.i++
			} else if p.peek() != '}' {
				p.bad = true
			}
		}
	default:
		start := p.i
		for p.i < len(p.s) && strings.IndexByte(" \t\r\n,]}#", p.s[p.i]) < 0 {
			p.i++
		}
		tok := p.s[start:p.i]
		switch tok {
		case "":
			p.bad = true
		case "true", "false":
			p.out[key] = tomlValue{Kind: 'b', Bool: tok == "true"}
		default:
			p.out[key] = tomlValue{Kind: 'o', Str: tok}
		}
	}
}

// parseINI reads an INI file (mypy.ini, setup.cfg, tox.ini, pytest.ini)
// as "section.key" → value: "key = value" or "key: value", indented lines
// continuing the value before them, "#" and ";" lines as comments.
func parseINI(src string) map[string]string {
	out := map[string]string{}
	section, last := "", ""
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimRight(line, " \t\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';':
			continue
		case line[0] == ' ' || line[0] == '\t':
			if last != "" {
				out[last] = strings.TrimSpace(out[last] + "\n" + trimmed)
			}
		case trimmed[0] == '[' && strings.HasSuffix(trimmed, "]"):
			section, last = strings.TrimSpace(trimmed[1:len(trimmed)-1]), ""
		default:
			i := strings.IndexAny(trimmed, "=:")
			if i <= 0 {
				last = ""
				continue
			}
			last = section + "." + strings.TrimSpace(trimmed[:i])
			out[last] = strings.TrimSpace(trimmed[i+1:])
		}
	}
	return out
}
