package orket

import (
	"sort"
	"strings"

	"github.com/orket/orket/scope"
)

// testConventions are where each toolchain keeps its tests: an edit that
// modifies or deletes one of these, in a repository without protect:,
// gets the note "tests modified" (docs/transactions.md, Never allowed).
var testConventions = mustScope(
	"**/*_test.go", "**/testdata/**", // Go
	"**/test_*.py", "**/*_test.py", "**/tests/**", "**/conftest.py", // Python, Rust's tests/
	"**/*.test.*", "**/*.spec.*", "**/__tests__/**", // JavaScript, TypeScript
	"**/src/test/**", // Java, Kotlin
)

func mustScope(patterns ...string) scope.Scope {
	s, err := scope.Parse(patterns)
	if err != nil {
		panic(err)
	}
	return s
}

// guard is what an edit may not weaken: the protect: globs, less those
// the run allows (--allow-protected).
type guard struct {
	protect, allow scope.Scope
	on             bool // protect: is set
}

func newGuard(protect, allow []string) (guard, error) {
	p, err := scope.Parse(protect)
	if err != nil {
		return guard{}, err
	}
	a, err := scope.Parse(allow)
	if err != nil {
		return guard{}, err
	}
	return guard{protect: p, allow: a, on: len(protect) > 0}, nil
}

// check sorts the paths an edit changed that existed before it (modified
// or deleted: adding is always allowed) into those it may not change
// (refused), those --allow-protected let through (allowed), and, without
// protect:, the test files it changed (tests).
func (g guard) check(changed []string, existed func(string) bool) (refused, allowed, tests []string) {
	for _, p := range changed {
		if !existed(p) {
			continue
		}
		switch {
		case g.on && g.protect.Contains(p) && !g.allow.Empty() && g.allow.Contains(p):
			allowed = append(allowed, p)
		case g.on && g.protect.Contains(p):
			refused = append(refused, p)
		case !g.on && testConventions.Contains(p):
			tests = append(tests, p)
		}
	}
	sort.Strings(refused)
	sort.Strings(allowed)
	sort.Strings(tests)
	return refused, allowed, tests
}

// guardNotes are the verdict's notes on what the edit changed of the
// checks: test files, or protected paths a run allowed.
func guardNotes(allowed, tests []string) []string {
	var notes []string
	if len(tests) > 0 {
		notes = append(notes, "tests modified: "+abbreviateList(tests, 5))
	}
	if len(allowed) > 0 {
		notes = append(notes, "protected paths modified (--allow-protected): "+abbreviateList(allowed, 5))
	}
	return notes
}

func abbreviateList(l []string, n int) string {
	if len(l) <= n {
		return strings.Join(l, ", ")
	}
	return strings.Join(l[:n], ", ") + ", and " + itoa(len(l)-n) + " more"
}
