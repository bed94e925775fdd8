package scope

import (
	"testing"
)

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		dir, pattern, want string
		err                bool
	}{
		{"", "pkg/api", "pkg/api", false},
		{"middleware", ".", "middleware", false},
		{"middleware", "./", "middleware", false},
		{"middleware", "auth", "middleware/auth", false},
		{"middleware", "../docs", "docs", false},
		{"middleware", "..", ".", false},
		{"middleware", "../..", "", true},
		{"a/b", "../../x", "x", false},
		{"middleware", ":/pkg", "pkg", false},
		{"middleware", ":/", ".", false},
		{"middleware", "**/*.go", "middleware/**/*.go", false},
		{"middleware", "./*.go", "middleware/*.go", false},
		{"", "**/*.go", "**/*.go", false},
	} {
		got, err := Resolve(tc.dir, tc.pattern)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q (error %v)", tc.dir, tc.pattern, got, err, tc.want, tc.err)
		}
	}
}

func TestContains(t *testing.T) {
	s, err := Parse([]string{"pkg/api", "docs/**/*.md", "."})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Patterns(); got[2] != "**" {
		t.Errorf("Parse(.) = %q, want **", got[2])
	}
	narrow, _ := Parse([]string{"pkg/api", "docs/**/*.md"})
	for p, want := range map[string]bool{
		"pkg/api/x.go": true, "pkg/api": true, "pkg/apix/y.go": false, "docs/a/b.md": true, "docs/a/b.txt": false,
		".git/config": false, ".orket/memory/x": false, "README.md": false,
	} {
		if got := narrow.Contains(p); got != want {
			t.Errorf("Contains(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestHolds: a pattern lies inside a scope when the scope holds its whole
// directory, or names it; a glob holds only itself.
func TestHolds(t *testing.T) {
	for _, c := range []struct {
		scope []string
		p     string
		want  bool
	}{
		{[]string{"pkg"}, "pkg", true},
		{[]string{"pkg"}, "pkg/api", true},
		{[]string{"pkg"}, "pkg/**/*.go", true},
		{[]string{"pkg"}, "pkgx", false},
		{[]string{"pkg"}, "docs", false},
		{[]string{"pkg"}, "**", false},
		{[]string{"pkg"}, "pkg/../docs", false},
		{[]string{"pkg/**"}, "pkg/api/x.go", true},
		{[]string{"pkg/*"}, "pkg/*", true},
		{[]string{"pkg/*"}, "pkg/sub", false},
		{[]string{"pkg/*"}, "pkg/**", false},
		{[]string{"docs", "pkg/api"}, "pkg/api/v2", true},
		{[]string{"docs", "pkg/api"}, "pkg", false},
	} {
		s, err := Parse(c.scope)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Holds(c.p); got != c.want {
			t.Errorf("%v holds %q = %v, want %v", c.scope, c.p, got, c.want)
		}
	}
}
