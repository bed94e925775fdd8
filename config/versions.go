package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/orket/orket/internal/lazyre"
)

// A Runtime is a runtime version a manifest asks for: package.json's
// engines.node, pyproject.toml's requires-python, Cargo.toml's
// rust-version, go.mod's go line.
type Runtime struct {
	Name  string `json:"runtime"` // node, python, rust, go
	Needs string `json:"needs"`   // as the manifest writes it: ">=22", ">=3.10,<4", "1.74"
	File  string `json:"file"`    // repository-relative manifest
	Key   string `json:"key"`     // engines.node, requires-python, rust-version, go
	Dir   string `json:"-"`       // the manifest's directory, where the runtime is asked its version
}

// Probe is the command that prints the installed version of the runtime.
func (r Runtime) Probe() []string {
	switch r.Name {
	case "node":
		return []string{"node", "--version"}
	case "python":
		return []string{"python3", "--version"}
	case "rust":
		return []string{"rustc", "--version"}
	case "go":
		return []string{"go", "version"}
	}
	return nil
}

var versionToken = lazyre.New(`(?:^|\s)((?:v|go)?\d+(?:\.\d+){0,2})`)

// InstalledVersion picks the version out of what Probe printed ("v20.11.1",
// "Python 3.11.7", "rustc 1.80.0 (…)", "go version go1.26.8 linux/amd64"),
// as the tool writes it ("v20.11.1", "3.11.7", "1.80.0", "go1.26.8"), or ""
// when it holds none.
func InstalledVersion(output string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(output), "\n")
	if line == "go version" || strings.HasPrefix(line, "go version ") {
		line = strings.TrimPrefix(line, "go version")
	}
	m := versionToken().FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	return m[1]
}

// Satisfied reports whether an installed version (as InstalledVersion
// returns it) satisfies the requirement, or an error when the requirement
// cannot be read. Node ranges follow npm's semver (||, hyphen ranges, ^,
// ~, x); Python's follow PEP 440 (comma-separated, ==X.*, ~=); Rust's
// rust-version and Go's go line are minimums.
func (r Runtime) Satisfied(installed string) (bool, error) {
	v, ok := parseVersion(strings.TrimPrefix(strings.TrimPrefix(installed, "go"), "v"))
	if !ok || len(v) == 0 {
		return false, fmt.Errorf("cannot read the installed version %q", installed)
	}
	switch r.Name {
	case "node":
		return nodeRange(r.Needs, v)
	case "python":
		return pep440(r.Needs, v)
	case "rust", "go":
		min, ok := parseVersion(strings.TrimPrefix(r.Needs, "go"))
		if !ok || len(min) == 0 {
			return false, fmt.Errorf("cannot read %s %q", r.Key, r.Needs)
		}
		return compare(v, min) >= 0, nil
	}
	return false, fmt.Errorf("unknown runtime %s", r.Name)
}

// parseVersion reads dotted numbers, stopping at the first part that is
// not one ("1.22rc1" is 1.22, "3.11.*" is 3.11); ok is false when a part
// holds no digits at all and is not a wildcard.
func parseVersion(s string) ([]int, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, true
	}
	var out []int
	for _, part := range strings.Split(s, ".") {
		if part == "*" || part == "x" || part == "X" {
			return out, true
		}
		n := 0
		for n < len(part) && part[n] >= '0' && part[n] <= '9' {
			n++
		}
		if n == 0 {
			return out, len(out) > 0
		}
		x, err := strconv.Atoi(part[:n])
		if err != nil {
			return nil, false
		}
		out = append(out, x)
		if n < len(part) {
			return out, true // a prerelease or build suffix: the numbers before it
		}
	}
	return out, true
}

// compare compares versions part by part, missing parts being zero.
func compare(a, b []int) int {
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// bump returns the version after every one that starts with p's parts:
// 20.1 → 20.2, 20 → 21 (p has at least one part).
func bump(p []int) []int {
	out := slices3(p)
	out[len(p)-1]++
	return out[:len(p)]
}

// slices3 returns p with at least three parts, missing ones zero.
func slices3(p []int) []int { return pad(p, max(len(p), 3)) }

// pad returns p's first n parts, missing ones zero.
func pad(p []int, n int) []int {
	out := make([]int, n)
	copy(out, p)
	return out
}

var (
	nodeOpSpace = lazyre.New(`(>=|<=|>|<|=|\^|~)\s+`)
	nodeHyphen  = lazyre.New(`^(\S+)\s+-\s+(\S+)$`)
)

// nodeRange reports whether v satisfies an npm semver range.
func nodeRange(rng string, v []int) (bool, error) {
	for _, alt := range strings.Split(rng, "||") {
		alt = strings.TrimSpace(nodeOpSpace().ReplaceAllString(strings.TrimSpace(alt), "$1"))
		if m := nodeHyphen().FindStringSubmatch(alt); m != nil {
			lo, ok1 := parseVersion(strings.TrimPrefix(m[1], "v"))
			hi, ok2 := parseVersion(strings.TrimPrefix(m[2], "v"))
			if !ok1 || !ok2 {
				return false, fmt.Errorf("cannot read the range %q", rng)
			}
			if compare(v, lo) >= 0 && (len(hi) == 0 || len(hi) == 3 && compare(v, hi) <= 0 || len(hi) < 3 && compare(v, bump(hi)) < 0) {
				return true, nil
			}
			continue
		}
		all := true
		for _, c := range strings.Fields(alt) {
			ok, err := nodeComparator(c, v)
			if err != nil {
				return false, fmt.Errorf("cannot read the range %q", rng)
			}
			all = all && ok
		}
		if all {
			return true, nil
		}
	}
	return false, nil
}

func nodeComparator(c string, v []int) (bool, error) {
	op := ""
	for _, o := range []string{">=", "<=", ">", "<", "=", "^", "~"} {
		if strings.HasPrefix(c, o) {
			op, c = o, c[len(o):]
			break
		}
	}
	p, ok := parseVersion(strings.TrimPrefix(c, "v"))
	if !ok {
		return false, fmt.Errorf("bad version %q", c)
	}
	if len(p) == 0 { // *, x, or an operator on a wildcard
		return op != "<" && op != ">", nil
	}
	if len(p) > 3 {
		p = p[:3]
	}
	lo := slices3(p)
	switch op {
	case "", "=":
		return compare(v, lo) >= 0 && compare(v, bump(p)) < 0, nil
	case ">=":
		return compare(v, lo) >= 0, nil
	case ">":
		if len(p) == 3 {
			return compare(v, lo) > 0, nil
		}
		return compare(v, bump(p)) >= 0, nil
	case "<":
		return compare(v, lo) < 0, nil
	case "<=":
		if len(p) == 3 {
			return compare(v, lo) <= 0, nil
		}
		return compare(v, bump(p)) < 0, nil
	case "~":
		hi := bump(p[:min(len(p), 2)])
		return compare(v, lo) >= 0 && compare(v, hi) < 0, nil
	default: // ^: below the next change of the leftmost non-zero part
		var hi []int
		switch {
		case lo[0] > 0 || len(p) == 1:
			hi = bump(p[:1])
		case lo[1] > 0 || len(p) == 2:
			hi = bump(p[:2])
		default:
			hi = bump(p[:3])
		}
		return compare(v, lo) >= 0 && compare(v, hi) < 0, nil
	}
}

// pep440 reports whether v satisfies a PEP 440 version specifier set
// (release numbers only: pre-, post- and dev-releases are not compared).
func pep440(spec string, v []int) (bool, error) {
	if strings.TrimSpace(spec) == "" {
		return false, fmt.Errorf("empty requirement")
	}
	for _, c := range strings.Split(spec, ",") {
		c = strings.TrimSpace(c)
		op := ""
		for _, o := range []string{"===", "~=", "==", "!=", ">=", "<=", ">", "<"} {
			if strings.HasPrefix(c, o) {
				op, c = o, strings.TrimSpace(c[len(o):])
				break
			}
		}
		wild := strings.HasSuffix(c, ".*")
		p, ok := parseVersion(strings.TrimSuffix(c, ".*"))
		if op == "" || !ok || len(p) == 0 {
			return false, fmt.Errorf("cannot read the specifier %q", spec)
		}
		var sat bool
		switch op {
		case "==", "===":
			if wild {
				sat = compare(pad(v, len(p)), p) == 0
			} else {
				sat = compare(v, p) == 0
			}
		case "!=":
			if wild {
				sat = compare(pad(v, len(p)), p) != 0
			} else {
				sat = compare(v, p) != 0
			}
		case "~=":
			if len(p) < 2 {
				return false, fmt.Errorf("cannot read the specifier %q", spec)
			}
			sat = compare(v, p) >= 0 && compare(pad(v, len(p)-1), p[:len(p)-1]) == 0
		case ">=":
			sat = compare(v, p) >= 0
		case "<=":
			sat = compare(v, p) <= 0
		case ">":
			sat = compare(v, p) > 0
		case "<":
			sat = compare(v, p) < 0
		}
		if !sat {
			return false, nil
		}
	}
	return true, nil
}
